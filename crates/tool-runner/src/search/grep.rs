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
//! * Lines are reported without their newline (and without a final `\r`), cut at
//!   [`MAX_LINE_BYTES`] with a `[… N bytes cut …]` marker. Context lines are merged like
//!   `grep -C`: a line is reported once, as a match or as context, never twice.
//! * At most `max_matches` (default 500) lines are returned; `truncated` is set when more
//!   matching lines exist.

use std::fs;
use std::io::{self, Read};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use tool_protocol::{Grep, GrepMatch, GrepResult};

use super::SearchError;
use super::glob_pattern::GlobPattern;
use super::regex::memchr::{count_byte, find_byte, rfind_byte};
use super::regex::{LineSearcher, Regex, RegexOptions};
use super::walk::{EntryKind, Visit, WalkOptions, open_base_file, open_no_follow, walk};

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
    let context = args.context.unwrap_or(0).min(MAX_CONTEXT_LINES);
    let mut run = GrepRun {
        searcher: regex.line_searcher(),
        buf: Vec::new(),
        max_matches: args.max_matches.unwrap_or(DEFAULT_MAX_MATCHES),
        context: usize::try_from(context).unwrap_or(0),
        result: GrepResult {
            matches: Vec::new(),
            files_searched: 0,
            files_skipped_binary: 0,
            truncated: false,
        },
    };
    let io_error = |source| SearchError::Io {
        path: base.to_path_buf(),
        source,
    };
    let metadata = fs::metadata(base).map_err(io_error)?;
    if metadata.is_file() {
        if cancel.load(Ordering::Relaxed) {
            return Err(SearchError::Cancelled);
        }
        let name = base
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if filter.allows_file(&[name.as_str()]) {
            let file = open_base_file(base).map_err(io_error)?;
            run.search_file(base, file).map_err(io_error)?;
        }
        return Ok(run.result);
    }
    walk(
        base,
        WalkOptions {
            respect_gitignore: true,
        },
        cancel,
        |entry| match entry.kind {
            EntryKind::Dir if filter.excludes_dir(entry.components) => Visit::SkipDir,
            EntryKind::File if filter.allows_file(entry.components) => {
                // A file that cannot be read (gone, permission denied, swapped for a link
                // since the listing) is skipped.
                match open_no_follow(entry.path).and_then(|file| run.search_file(entry.path, file))
                {
                    Ok(Progress::Stop) => Visit::Stop,
                    Ok(Progress::Continue) | Err(_) => Visit::Continue,
                }
            }
            _ => Visit::Continue,
        },
    )?;
    Ok(run.result)
}

/// Compiled `include` and `exclude` globs.
struct PathFilter {
    include: Vec<GlobPattern>,
    exclude: Vec<GlobPattern>,
}

impl PathFilter {
    fn new(include: &[String], exclude: &[String]) -> Result<Self, SearchError> {
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
    fn allows_file(&self, components: &[&str]) -> bool {
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

    fn excludes_dir(&self, components: &[&str]) -> bool {
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

/// Whether the walk should go on after a file.
enum Progress {
    Continue,
    /// `max_matches` was reached and one more match was seen: the result is complete.
    Stop,
}

struct GrepRun<'r> {
    searcher: LineSearcher<'r>,
    /// Reused for every file; grows to the largest file read.
    buf: Vec<u8>,
    max_matches: u64,
    context: usize,
    result: GrepResult,
}

/// A matching line of the file being searched.
struct LineHit {
    number: u64,
    start: usize,
    end: usize,
}

impl GrepRun<'_> {
    fn search_file(&mut self, path: &Path, file: fs::File) -> io::Result<Progress> {
        let Some(len) = self.read_text(file)? else {
            self.result.files_skipped_binary += 1;
            return Ok(Progress::Continue);
        };
        self.result.files_searched += 1;
        let data = &self.buf[..len];
        let room = self
            .max_matches
            .saturating_sub(self.result.matches.len() as u64);
        let mut hits = Vec::new();
        let mut line_number: u64 = 1;
        let mut counted_to = 0;
        for range in self.searcher.matching_lines(data) {
            if hits.len() as u64 >= room {
                self.result.truncated = true;
                break;
            }
            line_number += count_byte(&data[counted_to..range.start], b'\n') as u64;
            counted_to = range.start;
            hits.push(LineHit {
                number: line_number,
                start: range.start,
                end: range.end,
            });
        }
        if !hits.is_empty() {
            let path_text = path.to_string_lossy();
            append_matches(
                &mut self.result.matches,
                &path_text,
                data,
                &hits,
                self.context,
            );
        }
        Ok(if self.result.truncated {
            Progress::Stop
        } else {
            Progress::Continue
        })
    }

    /// Reads the file into `buf`: `None` when it is binary, else the number of bytes read.
    fn read_text(&mut self, mut file: fs::File) -> io::Result<Option<usize>> {
        let mut filled = 0;
        let mut probed = false;
        loop {
            if filled == self.buf.len() {
                if filled >= MAX_FILE_BYTES {
                    break;
                }
                let grown = (self.buf.len() * 2).clamp(64 << 10, MAX_FILE_BYTES);
                self.buf.resize(grown, 0);
            }
            match file.read(&mut self.buf[filled..]) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                // A FIFO opened without blocking has nothing to give.
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) => return Err(e),
            }
            if !probed && filled >= BINARY_PROBE_BYTES {
                probed = true;
                if self.buf[..BINARY_PROBE_BYTES].contains(&0) {
                    return Ok(None);
                }
            }
        }
        if !probed && self.buf[..filled].contains(&0) {
            return Ok(None);
        }
        Ok(Some(filled))
    }
}

/// Turns one file's hits into matches with their context, merged like `grep -C`.
fn append_matches(
    out: &mut Vec<GrepMatch>,
    path: &str,
    data: &[u8],
    hits: &[LineHit],
    context: usize,
) {
    // The last line number already reported, as a match or as context.
    let mut reported_until: u64 = 0;
    for (index, hit) in hits.iter().enumerate() {
        let mut before = Vec::new();
        let (mut start, mut number) = (hit.start, hit.number);
        while before.len() < context && number > 1 && number - 1 > reported_until {
            let end = start - 1;
            start = rfind_byte(data, end, b'\n').map_or(0, |nl| nl + 1);
            number -= 1;
            before.push(line_text(&data[start..end]));
        }
        before.reverse();

        let next_hit = hits.get(index + 1).map(|h| h.number);
        let mut after = Vec::new();
        let (mut end, mut number) = (hit.end, hit.number);
        while after.len() < context && end + 1 < data.len() && next_hit != Some(number + 1) {
            let start = end + 1;
            end = find_byte(data, start, b'\n').unwrap_or(data.len());
            number += 1;
            after.push(line_text(&data[start..end]));
        }
        reported_until = number;

        out.push(GrepMatch {
            path: path.to_owned(),
            line_number: hit.number,
            line: line_text(&data[hit.start..hit.end]),
            before,
            after,
        });
    }
}

/// A line as reported: without a final `\r`, lossily decoded, cut at [`MAX_LINE_BYTES`].
fn line_text(line: &[u8]) -> String {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let text = String::from_utf8_lossy(line);
    if text.len() <= MAX_LINE_BYTES {
        return text.into_owned();
    }
    let mut end = MAX_LINE_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}[… {} bytes cut …]", &text[..end], text.len() - end)
}

#[cfg(test)]
#[path = "grep_tests.rs"]
mod tests;
