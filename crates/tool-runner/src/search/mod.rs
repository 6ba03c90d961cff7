//! `grep` and `glob`: a linear-time regular-expression engine, glob patterns, `.gitignore`
//! rules and a tree walker that never leaves the folder it was given.
//!
//! The two entry points, [`grep()`] and [`glob()`], take a `base` the caller has already
//! resolved and authorised (the tool arguments' `path` is not read here), the tool arguments,
//! and a cancel flag checked before every entry of the walk.
//!
//! | Module | What it does |
//! |---|---|
//! | [`regex`] | Parser, Thompson NFA, Pike VM, lazy DFA and literal prefilter. |
//! | [`glob_pattern`] | `*`, `**`, `?`, `[...]`, `{a,b}` against `/`-separated relative paths. |
//! | [`gitignore`] | `.gitignore` rules: negation, anchoring, folder-only, nesting. |
//! | [`walk`] | Sorted depth-first walk from folder handles; never follows links; skips `.git`. |
//! | `grep_file`, `grep_tree` | One file's matches with context; a folder's files searched by one thread per core, answered in walk order. |
//!
//! std only, like the rest of the runner.

mod error;
pub mod gitignore;
pub mod glob_pattern;
mod glob_search;
mod grep;
mod grep_file;
mod grep_tree;
pub mod regex;
pub mod walk;

pub use error::SearchError;
pub use glob_search::{DEFAULT_GLOB_LIMIT, glob};
pub use grep::{
    BINARY_PROBE_BYTES, DEFAULT_MAX_MATCHES, MAX_CONTEXT_LINES, MAX_FILE_BYTES, MAX_LINE_BYTES,
    grep,
};

#[cfg(test)]
mod test_dir;
