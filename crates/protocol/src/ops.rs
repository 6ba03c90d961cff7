//! Ops: what a front end (CLI, server, UI) asks of a session.
//!
//! Wire shape: `{"id":"…","op":{"type":"user_turn","text":"…"}}`. Every tag and field is
//! snake_case; unions are internally tagged with `type`.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::sandbox::FolderGrant;
use crate::session::{ApprovalDecision, SessionSettings};

/// One op and the id the submitter chose for it (echoed by the events it causes, where useful).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Submission {
    pub id: String,
    pub op: Op,
}

/// What a session can be asked to do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Op {
    /// Starts a new session. Answered by `session_created` (no sandbox is built yet: it is
    /// created on the first tool call that needs one).
    StartSession { settings: SessionSettings },
    /// The user's next message. Refused with `turn_in_progress` while a turn runs.
    UserTurn { text: String },
    /// Cancels the running turn: the model stream and every running tool call. The session
    /// stays usable.
    Interrupt,
    /// Answers a `tool_call_awaiting_approval` event.
    Approval {
        call_id: String,
        decision: ApprovalDecision,
    },
    /// Adds a folder to the session; a live sandbox is recreated (shell state is lost).
    GrantFolder { grant: FolderGrant },
    /// Removes a folder from the session; a live sandbox is recreated (shell state is lost).
    RevokeFolder { path: String },
    /// Allows a host (`name`, `name:port` or `*.name`) for the rest of this session, beyond
    /// its network profile. Answered by `host_allowed`; a live sandbox that cannot take it
    /// live is rebuilt (shell state is lost, the agent is told).
    AllowHost { host: String },
    /// Asks for a `standing_approvals` event listing the approvals in force.
    ListApprovals,
    /// Withdraws a standing approval (a `session` one of this session, or a machine-wide
    /// `always` one) by the id `standing_approvals` listed. Answered by `approval_revoked`
    /// and a fresh `standing_approvals`; an unknown id is an `invalid_op` error.
    RevokeApproval { approval_id: String },
    /// Ends the session: the running turn is cancelled and the sandbox torn down.
    Close,
}

impl Op {
    /// The op's wire name, for logs and errors.
    pub fn name(&self) -> &'static str {
        match self {
            Op::StartSession { .. } => "start_session",
            Op::UserTurn { .. } => "user_turn",
            Op::Interrupt => "interrupt",
            Op::Approval { .. } => "approval",
            Op::GrantFolder { .. } => "grant_folder",
            Op::RevokeFolder { .. } => "revoke_folder",
            Op::AllowHost { .. } => "allow_host",
            Op::ListApprovals => "list_approvals",
            Op::RevokeApproval { .. } => "revoke_approval",
            Op::Close => "close",
        }
    }
}
