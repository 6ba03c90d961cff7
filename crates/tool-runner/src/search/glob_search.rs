//! The `glob` tool: the paths below a base folder that match a glob pattern.
//!
//! * The pattern is relative to the base (`Glob::path`, resolved and authorised by the caller
//!   and passed here as `base`); a pattern starting with `/` or holding a `..` component is
//!   refused. The syntax is [`GlobPattern`]'s.
//! * Files, folders and symbolic links all match (a pattern ending in `/` matches folders
//!   only); links are reported, never followed. `.gitignore` files are NOT applied, but `.git/`
//!   is skipped.
//! * Matches are absolute (base joined with the relative path) and sorted by path component
//!   (the walk's order: a folder's entries by name, each folder before its contents).
//! * At most `limit` (default 1000) are returned; `truncated` is set when more exist.
//! * Folders that cannot hold a match (`src/*.rs` never looks inside `docs/`) are not entered.

use std::fs;
use std::io;
use std::path::Path;
use std::sync::atomic::AtomicBool;

use tool_protocol::{Glob, GlobResult};

use super::SearchError;
use super::glob_pattern::GlobPattern;
use super::walk::{EntryKind, Visit, WalkOptions, walk};

/// `limit` when the caller gives none.
pub const DEFAULT_GLOB_LIMIT: u64 = 1000;

/// Lists the paths below the folder `base` that match `args.pattern` (`args.path` is not read
/// here: the caller resolved it into `base`).
pub fn glob(base: &Path, args: &Glob, cancel: &AtomicBool) -> Result<GlobResult, SearchError> {
    let pattern = GlobPattern::new(&args.pattern)?;
    let limit = args.limit.unwrap_or(DEFAULT_GLOB_LIMIT);
    let metadata = fs::metadata(base).map_err(|source| SearchError::Io {
        path: base.to_path_buf(),
        source,
    })?;
    if !metadata.is_dir() {
        return Err(SearchError::Io {
            path: base.to_path_buf(),
            source: io::Error::new(
                io::ErrorKind::NotADirectory,
                "is not a folder (glob searches below a folder)",
            ),
        });
    }
    let mut matches = Vec::new();
    let mut truncated = false;
    walk(base, WalkOptions::default(), cancel, |entry| {
        let is_dir = entry.kind == EntryKind::Dir;
        if pattern.matches_components(entry.components, is_dir) {
            if matches.len() as u64 >= limit {
                truncated = true;
                return Visit::Stop;
            }
            matches.push(entry.path.to_string_lossy().into_owned());
        }
        if is_dir && !pattern.could_match_inside(entry.components) {
            Visit::SkipDir
        } else {
            Visit::Continue
        }
    })?;
    Ok(GlobResult { matches, truncated })
}

#[cfg(test)]
#[path = "glob_search_tests.rs"]
mod tests;
