//! The `grep` tool: a regular expression over the files below a base folder (or one file).
//!
//! * Files are walked in sorted order ([`walk`]), honouring `.gitignore` files below the base
//!   and skipping `.git/`; symbolic links are never followed.
//! * `include`/`exclude` are globs ([`GlobPattern`]) matched against the path relative to the
//!   base. A glob without a `/` (`*.rs`, `target`) matches the name at any depth, like a
//!   `.gitignore` line; one with a `/` (`src/**/*.rs`) is anchored at the base. An `include`
//!   matching a folder includes everything below it; an `exclude` matching a folder prunes it.
//!   For a single-file base they match the file's name.
//! * A file with a NUL byte in its first 8 KiB is binary: it is skipped and counted in
//!   `files_skipped_binary`.
//! * Each file is read in one go (at most [`MAX_FILE_BYTES`]; the rest of a larger file is not
//!   searched), the prefilter scans the whole buffer, and only candidate lines are split out.
//! * A folder is searched by several threads ([`grep_tree`](super::grep_tree)); the answer is
//!   the one a single thread gives, in walk order.
//! * Lines are reported without their newline (and without a final `\r`), cut at
//!   [`MAX_LINE_BYTES`] with a `[… N bytes cut …]` marker. Context lines are merged like
//!   `grep -C`: a line is reported once, as a match or as context, never twice.
//! * At most `max_matches` (default 500) lines are returned; `truncated` is set when more
//!   matching lines exist.

use std::fs;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use tool_protocol::{Grep, GrepResult};

use super::SearchError;
use super::glob_pattern::GlobPattern;
use super::grep_file::FileSearcher;
use super::grep_tree::{Collector, TreeSearch, search_tree};
use super::regex::{Regex, RegexOptions};
use super::walk::open_base_file;

/// `max_matches` when the caller gives none.
pub const DEFAULT_MAX_MATCHES: u64 = 500;
/// Reported lines longer than this many bytes are cut (on a character boundary).
pub const MAX_LINE_BYTES: usize = 2000;
/// A NUL byte within this many leading bytes makes a file binary.
pub const BINARY_PROBE_BYTES: usize = 8192;
/// Files are searched up to this many bytes.
pub const MAX_FILE_BYTES: usize = 256 << 20;
/// `context` is clamped to this many lines.
pub const MAX_CONTEXT_LINES: u64 = 1000;

/// Searches `base` (a folder, or one file) for lines matching `args.pattern`.
///
/// `base` is used as given: the caller has resolved and authorised it (`args.path` is not
/// read here). Result paths are `base` joined with each file's relative path.
pub fn grep(base: &Path, args: &Grep, cancel: &AtomicBool) -> Result<GrepResult, SearchError> {
    let regex = Regex::with_options(
        &args.pattern,
        RegexOptions {
            case_insensitive: args.case_insensitive.unwrap_or(false),
        },
    )
    .map_err(|error| SearchError::InvalidPattern {
        pattern: args.pattern.clone(),
        reason: error.to_string(),
    })?;
    let filter = PathFilter::new(
        args.include.as_deref().unwrap_or_default(),
        args.exclude.as_deref().unwrap_or_default(),
    )?;
    let context = usize::try_from(args.context.unwrap_or(0).min(MAX_CONTEXT_LINES)).unwrap_or(0);
    let max_matches = args.max_matches.unwrap_or(DEFAULT_MAX_MATCHES);
    let io_error = |source| SearchError::Io {
        path: base.to_path_buf(),
        source,
    };
    let metadata = fs::metadata(base).map_err(io_error)?;
    if !metadata.is_file() {
        let search = TreeSearch {
            regex: &regex,
            filter: &filter,
            context,
            max_matches,
            workers: None,
        };
        return search_tree(base, &search, cancel);
    }
    if cancel.load(Ordering::Relaxed) {
        return Err(SearchError::Cancelled);
    }
    let mut collector = Collector::new(max_matches);
    let name = base
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if filter.allows_file(&[name.as_str()]) {
        let mut searcher = FileSearcher::new(&regex, context, max_matches);
        let file = open_base_file(base).map_err(io_error)?;
        let outcome = searcher.search(base, file).map_err(io_error)?;
        collector.apply(outcome);
    }
    Ok(collector.finish())
}

/// Compiled `include` and `exclude` globs.
pub(crate) struct PathFilter {
    include: Vec<GlobPattern>,
    exclude: Vec<GlobPattern>,
}

impl PathFilter {
    pub(crate) fn new(include: &[String], exclude: &[String]) -> Result<Self, SearchError> {
        let compile = |patterns: &[String]| {
            patterns
                .iter()
                .map(|p| compile_filter_glob(p))
                .collect::<Result<Vec<_>, _>>()
        };
        Ok(Self {
            include: compile(include)?,
            exclude: compile(exclude)?,
        })
    }

    /// True when the file is included (it, or a folder above it, matches an `include`; or
    /// there is none) and does not match an `exclude`.
    pub(crate) fn allows_file(&self, components: &[&str]) -> bool {
        let included = self.include.is_empty()
            || self.include.iter().any(|glob| {
                glob.matches_components(components, false)
                    || (1..components.len())
                        .any(|depth| glob.matches_components(&components[..depth], true))
            });
        included
            && !self
                .exclude
                .iter()
                .any(|glob| glob.matches_components(components, false))
    }

    pub(crate) fn excludes_dir(&self, components: &[&str]) -> bool {
        self.exclude
            .iter()
            .any(|g| g.matches_components(components, true))
    }
}

/// A filter glob: without a `/` it matches the name at any depth (`**/` is implied).
fn compile_filter_glob(pattern: &str) -> Result<GlobPattern, SearchError> {
    let anchored = pattern.trim_end_matches('/').contains('/') || pattern.starts_with('/');
    let compiled = if anchored {
        GlobPattern::new(pattern)
    } else {
        GlobPattern::new(&format!("**/{pattern}"))
    };
    compiled.map_err(|error| SearchError::InvalidPattern {
        pattern: pattern.to_owned(),
        reason: error.reason,
    })
}

#[cfg(test)]
#[path = "grep_tests.rs"]
mod tests;
