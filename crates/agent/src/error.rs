//! Errors at the agent's boundary (starting, resuming and talking to sessions). Failures inside
//! a turn are not errors of this kind: they become `error` events.

use crate::event_bus::SinkError;
use crate::session_store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Sink(#[from] SinkError),
    /// The session's settings cannot be used; the message names the setting.
    #[error("invalid session settings: {0}")]
    InvalidSettings(String),
    /// The session's sandbox refused an operation on the wall itself (drafted rules).
    #[error(transparent)]
    Sandbox(#[from] sandbox_provider::ProviderError),
    /// Paddock's own protected list (files the host runs later) does not load: no session
    /// runs without it.
    #[error("{0}")]
    ProtectedList(String),
    /// The session has ended; it takes no more ops.
    #[error("session `{0}` is closed")]
    Closed(String),
}
