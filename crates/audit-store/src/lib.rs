//! # audit-store
//!
//! Paddock's audit trail: an append-only SQLite table whose rows are hash-chained, redacted
//! before they are stored, queryable with filters and keyset pages, and exportable as JSON
//! Lines (verifiable offline) or OCSF.
//!
//! Contract for callers: append a tool call's `started` row before the call runs and its
//! result before the model sees it; every `append` returns after its transaction committed.

mod chain;
mod error;
mod export;
mod flush;
mod migrations;
mod ocsf;
mod query;
mod record;
mod redact;
mod store;

pub use chain::{BrokenRow, ChainHead, ChainProblem, GENESIS, VerifyReport, canonical_json};
pub use error::AuditError;
pub use export::verify_jsonl;
pub use migrations::MIGRATIONS;
pub use ocsf::OCSF_VERSION;
pub use query::{MAX_PAGE, Page, Query};
pub use record::{
    AuditRecord, CallStatus, DecidedBy, DeciderKind, Decision, GenericRecord, NetworkDenialRecord,
    NewEvent, RecordKind, SessionEvent, SessionRecord, StoredEvent, ToolCallRecord,
};
pub use redact::{MIN_SECRET_LEN, REDACTED, Redactor, is_secret_key};
pub use store::{Appended, AuditStore, Durability, OpenOptions};
