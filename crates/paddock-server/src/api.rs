//! The API's own request and response bodies (the host's data types are used as they are).
//! Every type here derives `ts_rs::TS` and `utoipa::ToSchema`: the TypeScript bindings and
//! the OpenAPI document are generated from them.

use std::collections::BTreeMap;

use paddock_host::SettingValue;
use protocol::{ApprovalDecision, FolderAccess, ProviderKind};
use serde::{Deserialize, Serialize};
use ts_rs::TS;
use utoipa::{IntoParams, ToSchema};

/// The server's health (and the proof that a token works).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS, ToSchema)]
pub struct Health {
    /// Always `ok` when answered.
    pub status: String,
    pub version: String,
    /// The state folder this server runs on.
    pub state_dir: String,
}

/// The user's next message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS, ToSchema)]
pub struct TurnRequest {
    pub text: String,
}

/// An op was accepted: its effects arrive as events.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS, ToSchema)]
pub struct Accepted {
    /// The submission id (events do not echo it; follow the session's events).
    pub submission_id: Option<String>,
}

/// Resuming a stored session.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS, ToSchema)]
#[serde(default)]
pub struct ResumeRequest {
    /// Another wall than the one the session ran with.
    pub provider: Option<ProviderKind>,
}

/// A folder to grant a live session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS, ToSchema)]
pub struct GrantRequest {
    /// An absolute path of an existing folder.
    pub path: String,
    pub access: FolderAccess,
}

/// A folder to take away from a live session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS, ToSchema)]
pub struct RevokeRequest {
    pub path: String,
}

/// The answer to a waiting tool call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS, ToSchema)]
pub struct DecisionRequest {
    pub decision: ApprovalDecision,
}

/// Which approvals to list or revoke.
#[derive(
    Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS, ToSchema, IntoParams,
)]
#[serde(default)]
pub struct StandingScope {
    /// A stored session's `session` approvals instead of the machine's `always` ones.
    pub session: Option<String>,
}

/// Approving or rejecting a drafted network rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS, ToSchema)]
pub struct RuleDecisionRequest {
    pub approve: bool,
    /// Why it was rejected (given to the wall's advisor).
    #[serde(default)]
    pub reason: Option<String>,
}

/// How far an allowed host reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum HostScope {
    /// The rest of this session.
    Session,
    /// Every session on this machine from now on (`sandbox.extra_hosts`), and this one.
    Machine,
}

/// A host to allow beyond the session's network profile.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS, ToSchema)]
pub struct AllowHostRequest {
    /// `name`, `name:port` or `*.name`.
    pub host: String,
    pub scope: HostScope,
}

/// A settings change: keys (`sandbox.network_profile`, …) to new values (`null` removes the
/// key from the user's file).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS, ToSchema)]
pub struct SettingsUpdate {
    pub changes: BTreeMap<String, SettingValue>,
}

/// A model API key to store.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS, ToSchema)]
pub struct KeyRequest {
    pub key: String,
    /// Test the key against the provider's API before storing it (default `true`); a key the
    /// API refuses is not stored.
    #[serde(default)]
    pub check: Option<bool>,
}

/// A connector to add or replace: its `[[connectors]]` entry, and optionally its token (stored
/// in the key store as `connector-<name>`; never written to the config).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS, ToSchema)]
pub struct ConnectorRequest {
    pub config: paddock_host::config::ConnectorConfig,
    #[serde(default)]
    pub token: Option<String>,
}

/// A secret's value to store.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS, ToSchema)]
pub struct SecretRequest {
    pub value: String,
}

/// Which wall's status.
#[derive(
    Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS, ToSchema, IntoParams,
)]
#[serde(default)]
pub struct StatusParams {
    pub provider: Option<ProviderKind>,
}

/// A folder path to check before granting it.
#[derive(
    Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS, ToSchema, IntoParams,
)]
#[serde(default)]
pub struct FolderParams {
    /// An absolute path on the server's machine.
    pub path: String,
}

/// A custom credential-share entry's fields (its name is in the path).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS, ToSchema)]
pub struct CredentialEntryRequest {
    /// A folder or file relative to the home folder (e.g. `.config/mytool`).
    pub source: String,
    /// The hosts its commands need; at least one.
    pub hosts: Vec<String>,
}

/// How a front end that embeds the server in its own process (the desktop app) reaches it:
/// the loopback address and the token made for this launch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS, ToSchema)]
pub struct Connection {
    /// `http://127.0.0.1:PORT`.
    pub base_url: String,
    pub token: String,
}

/// A ticket to open a session's event socket with (`?ticket=`): single use, 30 seconds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS, ToSchema)]
pub struct Ticket {
    pub ticket: String,
    #[ts(type = "number")]
    pub expires_in_ms: u64,
}

/// Where a session's event socket starts, and how it authenticates.
#[derive(
    Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS, ToSchema, IntoParams,
)]
#[serde(default)]
pub struct EventsParams {
    /// Replay the logged events numbered after this one (0: from the start), then follow.
    #[ts(type = "number")]
    pub after: u64,
    /// A ticket from `POST …/events/ticket` (browsers); others may send the bearer token.
    pub ticket: Option<String>,
}

/// The audit trail's filters (every one the store has), page size and cursor.
#[derive(
    Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS, ToSchema, IntoParams,
)]
#[serde(default)]
pub struct AuditParams {
    pub session: Option<String>,
    /// `session`, `attestation`, `tool_call`, `network_denial` or `generic`.
    pub kind: Option<String>,
    pub call_id: Option<String>,
    pub tool: Option<String>,
    /// `allow` or `deny`.
    pub decision: Option<String>,
    /// `openshell`, `local`, `none` or `host`.
    pub enforcement: Option<String>,
    /// `started`, `finished`, `failed`, `cancelled` or `denied`.
    pub status: Option<String>,
    /// Inclusive, milliseconds since the Unix epoch.
    #[ts(type = "number | null")]
    pub since_ms: Option<i64>,
    /// Exclusive.
    #[ts(type = "number | null")]
    pub until_ms: Option<i64>,
    /// A case-insensitive substring of the (redacted) record.
    pub text: Option<String>,
    /// Rows per page (1 to 1000; default 50).
    #[ts(type = "number | null")]
    pub limit: Option<usize>,
    /// The `next` of the previous page.
    pub cursor: Option<String>,
    /// For exports: `jsonl` (default) or `ocsf`.
    pub format: Option<String>,
}

/// An error body's shape is [`crate::errors::ErrorBody`]; this is the list of its codes with
/// their statuses: every code the server or the host answers (`docs/api.md`'s table lists
/// each; `errors.rs`'s tests hold the three together).
pub const ERROR_CODES: &[(&str, u16, &str)] = &[
    ("unauthorized", 401, "no token, or a wrong one"),
    ("token_in_url", 400, "the token was put in the query string"),
    (
        "forbidden_host",
        403,
        "the Host header is not this server's (DNS rebinding)",
    ),
    (
        "forbidden_origin",
        403,
        "the Origin header is another site's",
    ),
    ("body_too_large", 413, "the body is over 1 MiB"),
    (
        "unsupported_media_type",
        415,
        "the body is not sent as JSON",
    ),
    (
        "invalid_json",
        400,
        "the body does not match the request type",
    ),
    ("invalid_query", 400, "a query parameter does not match"),
    (
        "invalid_path",
        400,
        "a path parameter does not parse (a row number that is not a number)",
    ),
    (
        "invalid_request",
        400,
        "a field is wrong; the message names it",
    ),
    (
        "invalid_setting",
        400,
        "a setting's key or value is wrong; nothing was written",
    ),
    (
        "secret_refused",
        400,
        "a session asked for a secret it cannot have",
    ),
    ("not_found", 404, "no such route"),
    ("method_not_allowed", 405, "the route has no such method"),
    (
        "websocket_expected",
        400,
        "the events resource was not asked for a WebSocket",
    ),
    ("session_not_found", 404, "no such session"),
    ("audit_row_not_found", 404, "no audit row with that number"),
    (
        "key_not_found",
        404,
        "the key store holds no key for that provider",
    ),
    ("connector_not_found", 404, "no such connector"),
    (
        "connector_failed",
        502,
        "the connector's server could not start or answer",
    ),
    (
        "session_not_running",
        409,
        "the session is stored but not running here: resume it",
    ),
    (
        "session_busy",
        409,
        "another Paddock process runs the session",
    ),
    (
        "approval_not_pending",
        409,
        "the call is not waiting (another answer came first)",
    ),
    (
        "model_key_missing",
        409,
        "no model key; the message says how to add one",
    ),
    (
        "unsupported",
        409,
        "the session's wall does not do this (drafted rules)",
    ),
    (
        "model_unavailable",
        502,
        "the model API could not be reached",
    ),
    (
        "sandbox_refused",
        503,
        "the wall could not be built or refused",
    ),
    (
        "store_busy",
        503,
        "another process held the stores' lock too long",
    ),
    ("invalid_config", 500, "the machine config cannot be used"),
    (
        "key_store_failed",
        409,
        "the key store cannot be used; the message names the fix",
    ),
    (
        "key_refused",
        400,
        "the provider's API refused the key; it was not stored",
    ),
    (
        "setup_changed",
        409,
        "the machine changed since the setup plan was shown: review the new one",
    ),
    ("store_failed", 500, "the session store or event log failed"),
    ("audit_failed", 500, "the audit trail failed"),
    ("io_failed", 500, "a file could not be read or written"),
    ("internal", 500, "a bug; the message says where"),
];
