//! Events: what a session tells its observers (the CLI, the UI, the audit store).
//!
//! Wire shape: `{"seq":7,"session_id":"…","time_ms":…,"msg":{"type":"tool_call_started",…}}`.
//! Every tag and field is snake_case; unions are internally tagged with `type`.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use ts_rs::TS;

use crate::sandbox::{
    Attestation, CanaryResult, DraftedRule, EnforcementLevel, FolderGrant, NetworkDenial,
    ProtectedAction, ProviderKind,
};
use crate::session::{ApprovalScope, SessionSettings, StandingApproval};

/// One event of a session, numbered from 1 in the order the session emitted it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Event {
    #[ts(type = "number")]
    pub seq: u64,
    pub session_id: String,
    /// The turn the event belongs to, when it belongs to one.
    pub turn_id: Option<String>,
    /// Milliseconds since the Unix epoch.
    #[ts(type = "number")]
    pub time_ms: i64,
    pub msg: EventMsg,
}

impl Event {
    /// Whether the event must be committed by the durable sink before the session goes on.
    /// Streaming fragments (text deltas, output chunks) are live-only.
    pub fn is_durable(&self) -> bool {
        !matches!(
            self.msg,
            EventMsg::ModelTextDelta { .. } | EventMsg::ToolCallOutput { .. }
        )
    }
}

/// Which stream a chunk of tool output came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum OutputStream {
    Stdout,
    Stderr,
    /// Bytes of a file transfer.
    Data,
}

/// Who approved or denied a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum DecidedBy {
    /// The session's approval mode allows it without asking.
    Mode,
    /// A standing approval (session or always) covers it.
    StandingApproval,
    /// A rule (built-in or the machine's) decides it.
    Rule,
    /// The user answered a prompt.
    User,
    /// A safety check refuses it whatever the mode.
    SafetyCheck,
    /// The front end refuses every prompt (e.g. a non-interactive run).
    Policy,
}

/// How a tool call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum ToolCallStatus {
    /// The tool ran and produced a result (a command's non-zero exit is still `ok`).
    Ok,
    /// The tool refused or failed (bad arguments, a path outside the grants, I/O…).
    Error,
    /// The call was cancelled by an interrupt.
    Cancelled,
    /// The call was denied and never ran.
    Denied,
}

/// Why a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum TurnStopReason {
    /// The model finished its answer.
    EndTurn,
    /// The model's answer hit its token limit.
    MaxTokens,
    /// The user interrupted.
    Interrupted,
    /// The turn used its allowed number of model steps.
    StepLimit,
    /// The sandbox could not be built; the turn ended without running the call.
    SandboxRefused,
    /// An error ended the turn (see the `error` event before it).
    Error,
}

/// Stable error codes, for front ends to branch on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// The op is malformed or names something that does not exist.
    InvalidOp,
    /// A user turn arrived while another turn runs.
    TurnInProgress,
    /// An approval names a call that is not awaiting one.
    UnknownCall,
    /// The session is closed.
    SessionClosed,
    /// The model API refused the credentials or none are configured.
    ModelAuth,
    /// The model API is rate limiting or overloaded.
    ModelUnavailable,
    /// The conversation no longer fits the model's context window.
    ModelContextTooLong,
    /// Another model API failure (network, protocol, server).
    ModelFailed,
    /// The sandbox could not be built on this machine.
    SandboxRefused,
    /// The sandbox failed after it was built (the runner died, a recreate failed).
    SandboxFailed,
    /// The audit trail or the session store could not record an event; the call did not run.
    PersistenceFailed,
    /// A bug; the message says where.
    Internal,
}

impl ErrorCode {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidOp => "invalid_op",
            ErrorCode::TurnInProgress => "turn_in_progress",
            ErrorCode::UnknownCall => "unknown_call",
            ErrorCode::SessionClosed => "session_closed",
            ErrorCode::ModelAuth => "model_auth",
            ErrorCode::ModelUnavailable => "model_unavailable",
            ErrorCode::ModelContextTooLong => "model_context_too_long",
            ErrorCode::ModelFailed => "model_failed",
            ErrorCode::SandboxRefused => "sandbox_refused",
            ErrorCode::SandboxFailed => "sandbox_failed",
            ErrorCode::PersistenceFailed => "persistence_failed",
            ErrorCode::Internal => "internal",
        }
    }
}

/// What happened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum EventMsg {
    /// The session exists (new, or resumed from the session store).
    SessionCreated {
        settings: SessionSettings,
        resumed: bool,
        /// The wall the session's tool calls run in.
        provider: ProviderKind,
    },
    /// A folder was added to the session.
    FolderGranted { grant: FolderGrant },
    /// A folder was removed from the session.
    FolderRevoked { path: String },
    /// A host was allowed for the rest of the session (`allow_host`): it joined the session's
    /// extra hosts. `live` is true when the running sandbox took it without a rebuild (an
    /// OpenShell live policy); otherwise a live sandbox is rebuilt (`sandbox_recreated`).
    HostAllowed { host: String, live: bool },
    /// The user approved or rejected a network rule the sandbox drafted from denied
    /// connections (OpenShell).
    NetworkRuleDecided {
        rule: DraftedRule,
        approved: bool,
        /// The user's reason for a rejection.
        reason: Option<String>,
    },
    /// A step of building the sandbox, in plain words.
    SandboxProvisioning { message: String },
    /// The sandbox is built and attested; tool calls run in it.
    SandboxReady {
        sandbox_id: String,
        enforcement: EnforcementLevel,
        attestation: Attestation,
    },
    /// The sandbox was rebuilt (after a grant change): shell state (variables, background
    /// processes, the working folder of a shell) was lost.
    SandboxRecreated {
        sandbox_id: String,
        enforcement: EnforcementLevel,
        attestation: Attestation,
        reason: String,
    },
    /// A sandbox was torn down (at the session's close, or before a rebuild), with the checks
    /// the host ran on what it left: `set_id_files_stripped` names every set-uid or set-gid
    /// file found in the read-write folders and stripped (a failed check: one that could not
    /// be stripped).
    SandboxClosed {
        sandbox_id: String,
        checks: Vec<CanaryResult>,
    },
    /// The wall cannot be built; the turn ends and nothing runs unconfined.
    SandboxRefused {
        reason: String,
        /// The command that explains and fixes it.
        diagnose: String,
    },
    /// A user turn began.
    TurnStarted { text: String },
    /// More of the model's answer.
    ModelTextDelta { text: String },
    /// The model's text of one step, complete.
    AssistantMessage { text: String },
    /// The model asked for a tool call.
    ToolCallRequested {
        call_id: String,
        tool: String,
        #[ts(type = "unknown")]
        #[cfg_attr(feature = "openapi", schema(value_type = Object))]
        args: Value,
    },
    /// The call waits for an `approval` op.
    ToolCallAwaitingApproval {
        call_id: String,
        tool: String,
        #[ts(type = "unknown")]
        #[cfg_attr(feature = "openapi", schema(value_type = Object))]
        args: Value,
        /// What the call would do, in one line (the command, the path).
        summary: String,
        /// Why the user is asked.
        reason: String,
        /// Whether a `session` or `always` approval may answer it (false for calls a safety
        /// check flagged: only `once` is offered).
        lasting_allowed: bool,
    },
    ToolCallApproved {
        call_id: String,
        by: DecidedBy,
        /// The scope the user gave, when the user approved.
        scope: Option<ApprovalScope>,
    },
    ToolCallDenied {
        call_id: String,
        by: DecidedBy,
        /// Given to the model with the refusal.
        reason: String,
    },
    /// The call is about to run in the sandbox. Committed before the call runs.
    ToolCallStarted {
        call_id: String,
        tool: String,
        #[ts(type = "unknown")]
        #[cfg_attr(feature = "openapi", schema(value_type = Object))]
        args: Value,
        sandbox_id: String,
        enforcement: EnforcementLevel,
    },
    /// A chunk of a running call's output.
    ToolCallOutput {
        call_id: String,
        stream: OutputStream,
        chunk: String,
    },
    /// The call ended. Committed before the model sees the result.
    ToolCallFinished {
        call_id: String,
        tool: String,
        status: ToolCallStatus,
        /// A command's exit status.
        exit_code: Option<i64>,
        #[ts(type = "number")]
        duration_ms: u64,
        /// The result the model was given was cut to fit (the full output is in `output`, up
        /// to the audit cap).
        truncated: bool,
        timed_out: bool,
        enforcement: EnforcementLevel,
        network_denials: Vec<NetworkDenial>,
        /// The result text as recorded for the audit trail (capped, marked when cut).
        output: String,
    },
    /// A protected path (a file the host runs later) appeared or changed during the session
    /// where the wall could not make it read-only (it did not exist when the wall started):
    /// found after the call that made it, at turn end or at close, and undone.
    ProtectedPathChanged {
        /// The call after which it was found; none at turn end or close.
        call_id: Option<String>,
        /// Absolute path on the host.
        path: String,
        /// Why the path is protected (the protected list's words).
        reason: String,
        action: ProtectedAction,
        /// Where the original went, under Paddock's state folder.
        quarantined_to: Option<String>,
        /// What was found, in plain words (e.g. the settings removed from a config).
        detail: String,
    },
    /// The approvals in force, answering `list_approvals` (and after one is added or
    /// revoked).
    StandingApprovals { approvals: Vec<StandingApproval> },
    /// A standing approval was withdrawn (`revoke_approval`): calls it covered ask again.
    /// An `always` one is gone from the machine, a `session` one from this session.
    ApprovalRevoked {
        approval_id: String,
        scope: ApprovalScope,
        /// What it had let through, in one line.
        description: String,
    },
    /// The turn ended.
    TurnFinished {
        stop_reason: TurnStopReason,
        /// Model requests made in the turn.
        steps: u32,
    },
    /// Something failed; `code` is stable, `message` is for people.
    Error { code: ErrorCode, message: String },
    /// Something the user should know that does not stop the session: a connector that could
    /// not start, a project file's setting that was ignored. `source` names what it is about
    /// (`connector:<name>`, `project:<file>`).
    Notice { source: String, message: String },
    /// The session ended; no more events follow.
    SessionClosed,
}

impl EventMsg {
    /// The event's wire name (`tool_call_started`, …).
    pub fn name(&self) -> &'static str {
        match self {
            EventMsg::SessionCreated { .. } => "session_created",
            EventMsg::FolderGranted { .. } => "folder_granted",
            EventMsg::FolderRevoked { .. } => "folder_revoked",
            EventMsg::HostAllowed { .. } => "host_allowed",
            EventMsg::NetworkRuleDecided { .. } => "network_rule_decided",
            EventMsg::SandboxProvisioning { .. } => "sandbox_provisioning",
            EventMsg::SandboxReady { .. } => "sandbox_ready",
            EventMsg::SandboxRecreated { .. } => "sandbox_recreated",
            EventMsg::SandboxClosed { .. } => "sandbox_closed",
            EventMsg::SandboxRefused { .. } => "sandbox_refused",
            EventMsg::TurnStarted { .. } => "turn_started",
            EventMsg::ModelTextDelta { .. } => "model_text_delta",
            EventMsg::AssistantMessage { .. } => "assistant_message",
            EventMsg::ToolCallRequested { .. } => "tool_call_requested",
            EventMsg::ToolCallAwaitingApproval { .. } => "tool_call_awaiting_approval",
            EventMsg::ToolCallApproved { .. } => "tool_call_approved",
            EventMsg::ToolCallDenied { .. } => "tool_call_denied",
            EventMsg::ToolCallStarted { .. } => "tool_call_started",
            EventMsg::ToolCallOutput { .. } => "tool_call_output",
            EventMsg::ToolCallFinished { .. } => "tool_call_finished",
            EventMsg::ProtectedPathChanged { .. } => "protected_path_changed",
            EventMsg::StandingApprovals { .. } => "standing_approvals",
            EventMsg::ApprovalRevoked { .. } => "approval_revoked",
            EventMsg::TurnFinished { .. } => "turn_finished",
            EventMsg::Error { .. } => "error",
            EventMsg::Notice { .. } => "notice",
            EventMsg::SessionClosed => "session_closed",
        }
    }
}
