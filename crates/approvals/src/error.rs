//! Errors at the crate boundary.

use thiserror::Error;

#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub enum ApprovalError {
    #[error(
        "unknown approval mode `{value}`; expected one of ask, auto-edit, auto-in-sandbox, bypass"
    )]
    UnknownMode { value: String },

    #[error("folder grant `{path}` must be an absolute path")]
    RelativeGrant { path: String },

    #[error("the working folder `{cwd}` must be an absolute path")]
    RelativeCwd { cwd: String },

    #[error("rules are not valid TOML: {message}")]
    Toml { message: String },

    #[error("rule `{rule}`: {message}")]
    InvalidRule { rule: String, message: String },

    #[error("rule `{rule}` is defined twice")]
    DuplicateRule { rule: String },

    #[error("rule `{rule}`: example `{example}` does not match the rule{detail}")]
    ExampleDoesNotMatch {
        rule: String,
        example: String,
        detail: String,
    },

    #[error("rule `{rule}`: not_example `{example}` matches the rule, but must not")]
    NotExampleMatches { rule: String, example: String },

    #[error("{tool}: {message}")]
    InvalidCall { tool: String, message: String },

    #[error("a lasting approval cannot be given for this call: {reason}")]
    NoLastingApproval { reason: String },
}
