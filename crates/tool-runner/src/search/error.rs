//! The errors `grep` and `glob` return.

use std::fmt;
use std::path::PathBuf;

use tool_protocol::ErrorCode;

/// Why a search failed.
#[derive(Debug)]
pub enum SearchError {
    /// A regular expression or glob that does not parse, or a glob that would leave its base.
    InvalidPattern { pattern: String, reason: String },
    /// The base (or, for a single-file grep, the file) could not be read.
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The caller set the cancel flag.
    Cancelled,
}

impl SearchError {
    /// The wire error code for this failure. An I/O failure maps to the precise code when
    /// there is one (`not_found`, `permission_denied`, `not_a_directory`), else `io`.
    pub fn code(&self) -> ErrorCode {
        match self {
            SearchError::InvalidPattern { .. } => ErrorCode::InvalidPattern,
            SearchError::Io { source, .. } => match source.kind() {
                std::io::ErrorKind::NotFound => ErrorCode::NotFound,
                std::io::ErrorKind::PermissionDenied => ErrorCode::PermissionDenied,
                std::io::ErrorKind::NotADirectory => ErrorCode::NotADirectory,
                _ => ErrorCode::Io,
            },
            SearchError::Cancelled => ErrorCode::Cancelled,
        }
    }
}

impl fmt::Display for SearchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SearchError::InvalidPattern { pattern, reason } => {
                write!(f, "invalid pattern `{pattern}`: {reason}")
            }
            SearchError::Io { path, source } => write!(f, "{}: {source}", path.display()),
            SearchError::Cancelled => f.write_str("the search was cancelled"),
        }
    }
}

impl std::error::Error for SearchError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SearchError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl From<super::glob_pattern::GlobError> for SearchError {
    fn from(error: super::glob_pattern::GlobError) -> Self {
        SearchError::InvalidPattern {
            pattern: error.pattern,
            reason: error.reason,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_error_has_its_wire_code_and_a_message_naming_the_problem() {
        let invalid = SearchError::InvalidPattern {
            pattern: "(a".to_owned(),
            reason: "unclosed group at 0".to_owned(),
        };
        assert_eq!(invalid.code(), ErrorCode::InvalidPattern);
        assert_eq!(
            invalid.to_string(),
            "invalid pattern `(a`: unclosed group at 0"
        );
        let io = SearchError::Io {
            path: PathBuf::from("/example/missing"),
            source: std::io::Error::from(std::io::ErrorKind::NotFound),
        };
        assert_eq!(io.code(), ErrorCode::NotFound);
        assert!(io.to_string().starts_with("/example/missing: "));
        assert!(std::error::Error::source(&io).is_some());
        let other = SearchError::Io {
            path: PathBuf::from("/example/file"),
            source: std::io::Error::other("disk on fire"),
        };
        assert_eq!(other.code(), ErrorCode::Io);
        assert_eq!(other.to_string(), "/example/file: disk on fire");
        assert_eq!(SearchError::Cancelled.code(), ErrorCode::Cancelled);
        assert_eq!(
            SearchError::Cancelled.to_string(),
            "the search was cancelled"
        );
    }
}
