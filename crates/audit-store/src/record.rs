//! The records the audit trail holds. The host maps agent events into these.

use protocol::{Attestation, EnforcementLevel, NetworkDenial};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One audit record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "wire-schemas", derive(ts_rs::TS, utoipa::ToSchema))]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AuditRecord {
    /// A session started, resumed or ended.
    Session(SessionRecord),
    /// The wall attestation of a session's sandbox (its first record when a wall is built).
    Attestation(Attestation),
    /// One state of a tool call (`started`, then `finished` / `failed` / `cancelled`; or
    /// `denied` alone).
    ToolCall(ToolCallRecord),
    /// A connection the sandbox refused, joined to the call that caused it by `call_id`.
    NetworkDenial(NetworkDenialRecord),
    /// Anything else, as JSON.
    Generic(GenericRecord),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "wire-schemas", derive(ts_rs::TS, utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum SessionEvent {
    Started,
    Resumed,
    Ended,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "wire-schemas", derive(ts_rs::TS, utoipa::ToSchema))]
pub struct SessionRecord {
    pub event: SessionEvent,
    /// `openshell`, `local` or `direct`.
    pub provider: Option<String>,
    /// `ask`, `auto-edit`, `auto-in-sandbox` or `bypass`.
    pub approval_mode: Option<String>,
    /// The folders granted, as `rw:/path` / `ro:/path`.
    #[serde(default)]
    pub folders: Vec<String>,
    pub note: Option<String>,
}

/// What was decided about a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "wire-schemas", derive(ts_rs::TS, utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    Allow,
    Deny,
}

impl Decision {
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Allow => "allow",
            Decision::Deny => "deny",
        }
    }
}

/// Who or what decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "wire-schemas", derive(ts_rs::TS, utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum DeciderKind {
    /// The user answered a prompt, now or earlier (a standing approval).
    User,
    /// An approval rule.
    Rule,
    /// The session's approval mode.
    Mode,
    /// `bypass` mode.
    Bypass,
}

impl DeciderKind {
    pub fn as_str(self) -> &'static str {
        match self {
            DeciderKind::User => "user",
            DeciderKind::Rule => "rule",
            DeciderKind::Mode => "mode",
            DeciderKind::Bypass => "bypass",
        }
    }
}

/// Who decided a call, as the audit trail records it. Exported as `AuditDecidedBy`: the
/// events' `DecidedBy` (a plain kind) has the same name and shares the generated folders.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "wire-schemas", derive(ts_rs::TS, utoipa::ToSchema))]
#[cfg_attr(
    feature = "wire-schemas",
    ts(rename = "AuditDecidedBy"),
    schema(as = AuditDecidedBy)
)]
pub struct DecidedBy {
    pub kind: DeciderKind,
    /// The rule's name, the mode, or the standing approval's id.
    pub name: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "wire-schemas", derive(ts_rs::TS, utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum CallStatus {
    Started,
    Finished,
    Failed,
    Cancelled,
    Denied,
}

impl CallStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            CallStatus::Started => "started",
            CallStatus::Finished => "finished",
            CallStatus::Failed => "failed",
            CallStatus::Cancelled => "cancelled",
            CallStatus::Denied => "denied",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "wire-schemas", derive(ts_rs::TS, utoipa::ToSchema))]
pub struct ToolCallRecord {
    pub call_id: String,
    pub tool: String,
    /// The call's arguments (canonical; redacted before storage).
    #[cfg_attr(
        feature = "wire-schemas",
        ts(type = "unknown"),
        schema(value_type = Object)
    )]
    pub args: Value,
    pub enforcement: EnforcementLevel,
    /// The connector that ran the call (`web_fetch`, or an MCP connector's name), for host
    /// calls; absent for sandbox tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connector: Option<String>,
    pub decision: Option<Decision>,
    pub decided_by: Option<DecidedBy>,
    pub status: CallStatus,
    pub exit_code: Option<i64>,
    pub duration_ms: Option<u64>,
    /// The tool's output was cut to its cap.
    #[serde(default)]
    pub truncated: bool,
    /// A short preview of the output (redacted before storage).
    pub output_preview: Option<String>,
    /// The error or denial reason, when there is one.
    pub error: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "wire-schemas", derive(ts_rs::TS, utoipa::ToSchema))]
pub struct NetworkDenialRecord {
    /// The tool call whose command made the connection.
    pub call_id: Option<String>,
    pub denial: NetworkDenial,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "wire-schemas", derive(ts_rs::TS, utoipa::ToSchema))]
pub struct GenericRecord {
    pub name: String,
    #[cfg_attr(
        feature = "wire-schemas",
        ts(type = "unknown"),
        schema(value_type = Object)
    )]
    pub data: Value,
}

/// The kind of a record, as stored in the `kind` column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "wire-schemas", derive(ts_rs::TS, utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum RecordKind {
    Session,
    Attestation,
    ToolCall,
    NetworkDenial,
    Generic,
}

impl RecordKind {
    pub fn as_str(self) -> &'static str {
        match self {
            RecordKind::Session => "session",
            RecordKind::Attestation => "attestation",
            RecordKind::ToolCall => "tool_call",
            RecordKind::NetworkDenial => "network_denial",
            RecordKind::Generic => "generic",
        }
    }
}

impl AuditRecord {
    pub fn kind(&self) -> RecordKind {
        match self {
            AuditRecord::Session(_) => RecordKind::Session,
            AuditRecord::Attestation(_) => RecordKind::Attestation,
            AuditRecord::ToolCall(_) => RecordKind::ToolCall,
            AuditRecord::NetworkDenial(_) => RecordKind::NetworkDenial,
            AuditRecord::Generic(_) => RecordKind::Generic,
        }
    }

    /// True for the records a session may begin with.
    pub fn opens_session(&self) -> bool {
        matches!(
            self,
            AuditRecord::Attestation(_)
                | AuditRecord::Session(SessionRecord {
                    event: SessionEvent::Started | SessionEvent::Resumed,
                    ..
                })
        )
    }

    /// The values of the filter columns, derived from the record.
    pub(crate) fn columns(&self) -> Columns {
        let mut columns = Columns {
            kind: self.kind().as_str(),
            ..Columns::default()
        };
        match self {
            AuditRecord::ToolCall(call) => {
                columns.call_id = Some(call.call_id.clone());
                columns.tool = Some(call.tool.clone());
                columns.enforcement = Some(call.enforcement.as_str());
                columns.decision = call.decision.map(Decision::as_str);
                columns.decided_by = call.decided_by.as_ref().map(|d| d.kind.as_str());
                columns.status = Some(call.status.as_str());
            }
            AuditRecord::NetworkDenial(denial) => columns.call_id = denial.call_id.clone(),
            AuditRecord::Attestation(attestation) => {
                columns.enforcement = Some(attestation.enforcement.as_str());
            }
            AuditRecord::Session(_) | AuditRecord::Generic(_) => {}
        }
        columns
    }
}

/// The filter columns of a row.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Columns {
    pub kind: &'static str,
    pub call_id: Option<String>,
    pub tool: Option<String>,
    pub enforcement: Option<&'static str>,
    pub decision: Option<&'static str>,
    pub decided_by: Option<&'static str>,
    pub status: Option<&'static str>,
}

/// An event to append.
#[derive(Debug, Clone, PartialEq)]
pub struct NewEvent {
    pub session_id: String,
    /// Milliseconds since the Unix epoch.
    pub time_ms: i64,
    pub record: AuditRecord,
}

impl NewEvent {
    pub fn new(session_id: impl Into<String>, time_ms: i64, record: AuditRecord) -> Self {
        NewEvent {
            session_id: session_id.into(),
            time_ms,
            record,
        }
    }

    /// An event stamped with the current time.
    pub fn now(session_id: impl Into<String>, record: AuditRecord) -> Self {
        let time_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
        Self::new(session_id, time_ms, record)
    }
}

/// An event as stored: its place in the chain and its (redacted) record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "wire-schemas", derive(ts_rs::TS, utoipa::ToSchema))]
pub struct StoredEvent {
    pub seq: i64,
    pub time_ms: i64,
    pub session_id: String,
    pub record: AuditRecord,
    pub prev_hash: String,
    pub hash: String,
}
