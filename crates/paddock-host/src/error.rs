//! Errors at the host's boundary. Each has a stable `code()` front ends branch on (the server
//! maps them to HTTP statuses in one place); the message is for people, names what was wrong,
//! and never carries a secret (a key, a secret's value, a token).

use crate::config::ConfigError;

#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// The machine config cannot be used.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A settings update names an unknown key or a bad value; nothing was written.
    #[error("setting `{key}`: {problem}")]
    InvalidSetting { key: String, problem: String },
    /// A request field is missing or wrong; `field` names it.
    #[error("{field}: {problem}")]
    InvalidRequest { field: String, problem: String },
    #[error("no session `{id}` (list them with `paddock sessions list` or GET /v1/sessions)")]
    SessionNotFound { id: String },
    /// No audit row has this number.
    #[error("no audit row #{seq} (list them with `paddock audit list` or GET /v1/audit)")]
    AuditRowNotFound { seq: i64 },
    /// The session is stored but not running in this process (resume it first).
    #[error("session `{id}` is not running here; resume it first")]
    SessionNotRunning { id: String },
    /// Another live Paddock process runs the session.
    #[error(
        "session `{id}` is running in another Paddock process; answer it there or stop that \
         process first"
    )]
    SessionBusy { id: String },
    /// The call is not awaiting an approval (never was, or another answer came first).
    #[error(
        "tool call `{call_id}` of session `{session_id}` is not awaiting an approval (it was \
         answered already, or it never asked)"
    )]
    ApprovalNotPending { session_id: String, call_id: String },
    /// No model key is configured; the message says how to add one.
    #[error(
        "no connector `{name}` (list them with `paddock connectors list` or GET /v1/connectors)"
    )]
    ConnectorNotFound { name: String },
    #[error("connector `{name}`: {reason}")]
    ConnectorFailed { name: String, reason: String },
    #[error("no API key for the `{provider}` models: {how}")]
    ModelKeyMissing { provider: String, how: String },
    /// The model client cannot be built or reached.
    #[error("the `{provider}` model API: {message}")]
    Model { provider: String, message: String },
    /// The provider's API refused a key that was to be stored; nothing was stored.
    #[error(
        "the `{provider}` API refused the key, so it was not stored (the previous one, if any, is kept): {detail}"
    )]
    KeyRefused { provider: String, detail: String },
    /// A setup was applied to a plan that no longer matches the machine.
    #[error(
        "the machine changed since the setup plan was made ({what}); review the new plan and \
         apply that one"
    )]
    SetupChanged { what: String },
    /// The key store failed (its message names the store and the fix).
    #[error(transparent)]
    KeyStore(#[from] model_client::KeyStoreError),
    /// A session asked for a secret it cannot have.
    #[error("secret `{name}`: {reason}")]
    SecretRefused { name: String, reason: String },
    /// The wall refused an operation or could not be built.
    #[error(transparent)]
    Sandbox(#[from] sandbox_provider::ProviderError),
    /// The session store or event log failed.
    #[error(transparent)]
    Store(#[from] agent::StoreError),
    /// The audit trail failed.
    #[error(transparent)]
    Audit(#[from] audit_store::AuditError),
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
    /// A bug; the message says where.
    #[error("internal error: {0}")]
    Internal(String),
}

impl HostError {
    /// The stable code of this error (`session_not_found`, `invalid_setting`, …).
    pub fn code(&self) -> &'static str {
        match self {
            HostError::Config(_) => "invalid_config",
            HostError::InvalidSetting { .. } => "invalid_setting",
            HostError::InvalidRequest { .. } => "invalid_request",
            HostError::SessionNotFound { .. } => "session_not_found",
            HostError::AuditRowNotFound { .. } => "audit_row_not_found",
            HostError::SessionNotRunning { .. } => "session_not_running",
            HostError::SessionBusy { .. } => "session_busy",
            HostError::ApprovalNotPending { .. } => "approval_not_pending",
            HostError::ConnectorNotFound { .. } => "connector_not_found",
            HostError::ConnectorFailed { .. } => "connector_failed",
            HostError::ModelKeyMissing { .. } => "model_key_missing",
            HostError::Model { .. } => "model_unavailable",
            HostError::KeyStore(_) => "key_store_failed",
            HostError::KeyRefused { .. } => "key_refused",
            HostError::SetupChanged { .. } => "setup_changed",
            HostError::SecretRefused { .. } => "secret_refused",
            HostError::Sandbox(sandbox_provider::ProviderError::Unsupported(_)) => "unsupported",
            HostError::Sandbox(sandbox_provider::ProviderError::InvalidRequest(_)) => {
                "invalid_request"
            }
            HostError::Sandbox(_) => "sandbox_refused",
            HostError::Store(agent::StoreError::NotFound(_)) => "session_not_found",
            HostError::Store(agent::StoreError::Busy(_)) => "store_busy",
            HostError::Store(_) => "store_failed",
            HostError::Audit(audit_store::AuditError::BadQuery(_))
            | HostError::Audit(audit_store::AuditError::BadCursor(_)) => "invalid_request",
            HostError::Audit(_) => "audit_failed",
            HostError::Io { .. } => "io_failed",
            HostError::Internal(_) => "internal",
        }
    }

    pub(crate) fn invalid(field: impl Into<String>, problem: impl Into<String>) -> Self {
        HostError::InvalidRequest {
            field: field.into(),
            problem: problem.into(),
        }
    }

    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        HostError::Io {
            context: context.into(),
            source,
        }
    }
}

impl From<agent::AgentError> for HostError {
    fn from(error: agent::AgentError) -> Self {
        match error {
            agent::AgentError::Store(e) => HostError::Store(e),
            agent::AgentError::Sandbox(e) => HostError::Sandbox(e),
            agent::AgentError::InvalidSettings(message) => HostError::invalid("settings", message),
            agent::AgentError::ProtectedList(problem) => {
                HostError::Internal(format!("the built-in protected-files list: {problem}"))
            }
            agent::AgentError::Closed(id) => HostError::SessionNotRunning { id },
            agent::AgentError::Sink(e) => HostError::Internal(format!(
                "the audit trail or event log could not record: {e}"
            )),
        }
    }
}
