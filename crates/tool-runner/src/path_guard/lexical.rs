//! The lexical side of the path guard: checking a path as text and splitting it into parts.
//! Nothing here touches the file system; `..` is kept as a part because its meaning depends
//! on the symlinks before it, which only the walk can know.

use std::collections::VecDeque;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;

use crate::error::ToolError;

/// Longest path the guard accepts, in bytes (Linux `PATH_MAX`).
pub const MAX_PATH_BYTES: usize = 4096;
/// Longest single component, in bytes (Linux `NAME_MAX`).
pub const MAX_NAME_BYTES: usize = 255;

/// One step of a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    /// `..`
    Parent,
    /// A name: never empty, `.`, `..`, and never containing `/` or NUL.
    Name(OsString),
}

/// Refuses what no file tool should ever see: an empty path, a NUL byte, over-long paths or
/// components. `field` names the argument in the error.
pub fn check(field: &str, path: &str) -> Result<(), ToolError> {
    if path.is_empty() {
        return Err(ToolError::bad_args(field, "the path is empty"));
    }
    if path.contains('\0') {
        return Err(ToolError::bad_args(field, "the path contains a NUL byte"));
    }
    if path.len() > MAX_PATH_BYTES {
        return Err(ToolError::bad_args(
            field,
            format!(
                "the path is {} bytes long; the limit is {MAX_PATH_BYTES}",
                path.len()
            ),
        ));
    }
    if let Some(long) = path.split('/').find(|c| c.len() > MAX_NAME_BYTES) {
        return Err(ToolError::bad_args(
            field,
            format!(
                "a path component is {} bytes long; the limit is {MAX_NAME_BYTES}",
                long.len()
            ),
        ));
    }
    Ok(())
}

/// Splits `path` into parts, dropping empty components and `.`.
pub fn split(path: &OsStr) -> VecDeque<Part> {
    path.as_bytes()
        .split(|&b| b == b'/')
        .filter(|c| !c.is_empty() && *c != b".")
        .map(|c| {
            if c == b".." {
                Part::Parent
            } else {
                Part::Name(OsStr::from_bytes(c).to_owned())
            }
        })
        .collect()
}

/// The names of an absolute, normalised path (a granted root).
pub fn names(path: &OsStr) -> Vec<OsString> {
    split(path)
        .into_iter()
        .filter_map(|part| match part {
            Part::Name(name) => Some(name),
            Part::Parent => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(s: &str) -> Part {
        Part::Name(s.into())
    }

    #[test]
    fn splits_keeping_parent_steps() {
        let parts: Vec<Part> = split(OsStr::new("/a//./b/../c/")).into();
        assert_eq!(parts, vec![name("a"), name("b"), Part::Parent, name("c")]);
        assert!(split(OsStr::new("/")).is_empty());
        assert_eq!(Vec::from(split(OsStr::new("..."))), vec![name("...")]);
    }

    #[test]
    fn refuses_empty_nul_and_overlong_paths() {
        assert!(check("path", "a/b").is_ok());
        for (input, problem) in [
            (String::new(), "the path is empty"),
            ("a\0b".to_owned(), "the path contains a NUL byte"),
            (
                "x".repeat(256),
                "a path component is 256 bytes long; the limit is 255",
            ),
            (
                "a/".repeat(2049),
                "the path is 4098 bytes long; the limit is 4096",
            ),
        ] {
            let err = check("path", &input).unwrap_err();
            assert_eq!(err.code, tool_protocol::ErrorCode::BadArgs);
            assert_eq!(err.message, format!("`args.path`: {problem}"));
        }
    }
}
