//! Errors at the provider boundary. Each says what failed and what diagnoses or fixes it.

use crate::runner_client::{CallError, ConnectError};

/// The command that explains why a wall cannot be built on this machine.
pub const DIAGNOSE: &str = "paddock machine sandbox status";

#[derive(Debug, thiserror::Error)]
pub enum ProviderError {
    /// The wall cannot be built on this machine; the session is refused, never run open.
    #[error("sessions on this machine are refused: {reason} (run `{DIAGNOSE}` for details)")]
    Unavailable { reason: String },
    /// The wall was built but a canary of the attestation failed.
    #[error("the sandbox failed its wall attestation: {failures} (run `{DIAGNOSE}` for details)")]
    AttestationFailed { failures: String },
    /// The session's request cannot be turned into a wall (a folder missing, a bad grant…).
    #[error("the session cannot be sandboxed: {0}")]
    InvalidRequest(String),
    /// This wall does not offer the operation (e.g. drafted network rules on the local wall).
    #[error("{0}")]
    Unsupported(String),
    /// The tool-runner could not be started or reached.
    #[error("could not reach the tool-runner: {0}")]
    Runner(#[from] ConnectError),
    /// A call through the runner failed while setting the sandbox up.
    #[error("setting up the sandbox failed: {0}")]
    Setup(#[from] CallError),
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
}

impl ProviderError {
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        ProviderError::Io {
            context: context.into(),
            source,
        }
    }
}
