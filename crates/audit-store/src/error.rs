//! Errors at the crate boundary. None of them carries a stored value or a secret.

use thiserror::Error;

#[derive(Debug, Error)]
pub enum AuditError {
    #[error("audit database: {0}")]
    Sqlite(#[from] rusqlite::Error),

    #[error("audit migration {version} (`{name}`) failed: {source}")]
    Migration {
        version: i64,
        name: &'static str,
        source: rusqlite::Error,
    },

    #[error(
        "the audit database was written by a newer Paddock (schema version {found}; this build knows up to {known})"
    )]
    NewerSchema { found: i64, known: i64 },

    #[error("audit record could not be encoded or decoded: {0}")]
    Json(#[from] serde_json::Error),

    #[error("audit export: {0}")]
    Io(#[from] std::io::Error),

    #[error(
        "session `{session_id}` has no records yet, so its first record must be its wall attestation or a session start, not a `{kind}` record"
    )]
    SessionNotOpened {
        session_id: String,
        kind: &'static str,
    },

    #[error("a registered secret must be at least 8 characters long (got {len})")]
    SecretTooShort { len: usize },

    #[error("invalid query: {0}")]
    BadQuery(String),

    #[error("invalid page cursor: {0}")]
    BadCursor(String),

    #[error("export line {line}: {message}")]
    BadExport { line: u64, message: String },

    #[error("internal error: {message}")]
    Internal { message: String },
}
