//! What can go wrong with a connector. No message carries a token: values that could hold
//! one are redacted before they become an error.

/// Why a connector could not start, answer, or run a call.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConnectorError {
    #[error("no connector is named `{0}`")]
    NotFound(String),
    #[error("the connector is disabled")]
    Disabled,
    #[error(
        "the connector's configuration uses `{{secret}}` but no token is stored for it \
         (store one with `paddock connectors edit NAME --token-stdin` or the API)"
    )]
    TokenMissing,
    #[error("the key store could not be read: {0}")]
    KeyStore(String),
    #[error("the server could not be started: {0}")]
    StartFailed(String),
    #[error("the server stopped{0}")]
    Crashed(String),
    #[error("the server stopped while the call ran; it is being restarted")]
    Stopped,
    #[error("the server is restarting after it stopped (attempt {attempt}): {reason}")]
    Restarting { attempt: u32, reason: String },
    #[error("the server answered with an error ({code}): {message}")]
    ServerError { code: i32, message: String },
    #[error("MCP protocol error: {0}")]
    Protocol(String),
    #[error("the server has no tool `{0}`")]
    UnknownTool(String),
    #[error("the call took longer than {0}s and was abandoned")]
    TimedOut(u64),
    #[error("cancelled")]
    Cancelled,
    #[error("{0}")]
    Http(String),
}
