//! [`ToolError`]: why a tool call failed, as the error code and message of its `error` frame.
//!
//! Messages start with the path (or field) they are about and then say why, e.g.
//! `/etc/passwd: outside the session's folders`. They never carry file contents.

use std::fmt;
use std::io;

use tool_protocol::ErrorCode;

/// A refused or failed tool call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError {
    pub code: ErrorCode,
    pub message: String,
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for ToolError {}

impl ToolError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }

    /// An argument that cannot be used; `field` is its name in the call's `args`.
    pub fn bad_args(field: &str, problem: impl fmt::Display) -> Self {
        Self::new(ErrorCode::BadArgs, format!("`args.{field}`: {problem}"))
    }

    pub fn outside(path: impl fmt::Display) -> Self {
        Self::new(
            ErrorCode::OutsideRoots,
            format!("{path}: outside the session's folders"),
        )
    }

    pub fn read_only(path: impl fmt::Display) -> Self {
        Self::new(
            ErrorCode::ReadOnly,
            format!("{path}: in a read-only folder"),
        )
    }

    pub fn not_found(path: impl fmt::Display) -> Self {
        Self::new(ErrorCode::NotFound, format!("{path}: not found"))
    }

    pub fn not_a_directory(path: impl fmt::Display) -> Self {
        Self::new(ErrorCode::NotADirectory, format!("{path}: not a folder"))
    }

    pub fn is_a_directory(path: impl fmt::Display) -> Self {
        Self::new(ErrorCode::IsADirectory, format!("{path}: is a folder"))
    }

    pub fn cancelled() -> Self {
        Self::new(ErrorCode::Cancelled, "the call was cancelled")
    }

    /// An operating-system error on `path`, with the code its kind maps to.
    pub fn io(path: impl fmt::Display, err: &io::Error) -> Self {
        use io::ErrorKind as K;
        match err.kind() {
            K::NotFound => Self::not_found(path),
            K::NotADirectory => Self::not_a_directory(path),
            K::IsADirectory => Self::is_a_directory(path),
            K::PermissionDenied => Self::new(
                ErrorCode::PermissionDenied,
                format!("{path}: permission denied by the system"),
            ),
            K::AlreadyExists => {
                Self::new(ErrorCode::AlreadyExists, format!("{path}: already exists"))
            }
            K::ReadOnlyFilesystem => Self::new(
                ErrorCode::ReadOnly,
                format!("{path}: on a read-only file system"),
            ),
            _ => Self::new(ErrorCode::Io, format!("{path}: {err}")),
        }
    }

    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Internal, message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_errors_map_to_codes_and_name_the_path() {
        let cases = [
            (
                io::ErrorKind::NotFound,
                ErrorCode::NotFound,
                "/p/a: not found",
            ),
            (
                io::ErrorKind::PermissionDenied,
                ErrorCode::PermissionDenied,
                "/p/a: permission denied by the system",
            ),
            (
                io::ErrorKind::IsADirectory,
                ErrorCode::IsADirectory,
                "/p/a: is a folder",
            ),
        ];
        for (kind, code, message) in cases {
            let err = ToolError::io("/p/a", &io::Error::from(kind));
            assert_eq!(err, ToolError::new(code, message));
        }
        let other = ToolError::io("/p/a", &io::Error::other("disk on fire"));
        assert_eq!(other.code, ErrorCode::Io);
        assert_eq!(other.message, "/p/a: disk on fire");
    }

    #[test]
    fn guard_messages_match_the_protocol_examples() {
        assert_eq!(
            ToolError::outside("/etc/passwd").message,
            "/etc/passwd: outside the session's folders"
        );
        assert_eq!(ToolError::read_only("/r/x").code, ErrorCode::ReadOnly);
    }
}
