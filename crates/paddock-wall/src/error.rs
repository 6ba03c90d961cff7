//! The launcher's errors. Each names the step of the wall that failed.

#[derive(Debug, thiserror::Error)]
pub enum WallError {
    #[error("{0}")]
    Config(String),
    #[error("Landlock: {0}")]
    Landlock(String),
    #[error("seccomp: {0}")]
    Seccomp(String),
    #[error("{context}: {source}")]
    Os {
        context: String,
        #[source]
        source: std::io::Error,
    },
    #[error("the wall refuses to start: {0}")]
    Refused(String),
}

impl WallError {
    pub fn os(context: impl Into<String>, source: std::io::Error) -> Self {
        WallError::Os {
            context: context.into(),
            source,
        }
    }

    /// The last OS error, for the step named by `context`.
    pub fn last_os(context: impl Into<String>) -> Self {
        Self::os(context, std::io::Error::last_os_error())
    }
}
