//! The approvals inbox: every tool call of every session of this process that waits for the
//! user, in one list. Kept from the durable events (so it is current before any client sees
//! the question), and answered first-come: taking an entry is atomic, so a second answer to
//! the same call is refused instead of reaching the session.

use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};

use protocol::{Event, EventMsg};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A tool call waiting for the user's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "wire-schemas", derive(ts_rs::TS, utoipa::ToSchema))]
pub struct PendingApproval {
    pub session_id: String,
    pub call_id: String,
    pub tool: String,
    #[cfg_attr(feature = "wire-schemas", ts(type = "unknown"))]
    pub args: Value,
    /// What the call would do, in one line.
    pub summary: String,
    /// Why the user is asked.
    pub reason: String,
    /// Whether `session` and `always` answers are offered (else only `once` or a denial).
    pub lasting_allowed: bool,
    /// The `seq` of the `tool_call_awaiting_approval` event.
    #[cfg_attr(feature = "wire-schemas", ts(type = "number"))]
    pub seq: u64,
    /// When it was asked (milliseconds since the Unix epoch).
    #[cfg_attr(feature = "wire-schemas", ts(type = "number"))]
    pub asked_ms: i64,
}

#[derive(Default)]
pub(crate) struct Inbox {
    pending: Mutex<BTreeMap<(String, String), PendingApproval>>,
}

impl Inbox {
    fn pending(&self) -> std::sync::MutexGuard<'_, BTreeMap<(String, String), PendingApproval>> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Follows one durable event.
    pub(crate) fn observe(&self, event: &Event) {
        let session = &event.session_id;
        match &event.msg {
            EventMsg::ToolCallAwaitingApproval {
                call_id,
                tool,
                args,
                summary,
                reason,
                lasting_allowed,
            } => {
                self.pending().insert(
                    (session.clone(), call_id.clone()),
                    PendingApproval {
                        session_id: session.clone(),
                        call_id: call_id.clone(),
                        tool: tool.clone(),
                        args: args.clone(),
                        summary: summary.clone(),
                        reason: reason.clone(),
                        lasting_allowed: *lasting_allowed,
                        seq: event.seq,
                        asked_ms: event.time_ms,
                    },
                );
            }
            EventMsg::ToolCallApproved { call_id, .. }
            | EventMsg::ToolCallDenied { call_id, .. }
            | EventMsg::ToolCallFinished { call_id, .. } => {
                self.pending().remove(&(session.clone(), call_id.clone()));
            }
            EventMsg::TurnFinished { .. } | EventMsg::SessionClosed => {
                self.forget_session(session);
            }
            _ => {}
        }
    }

    pub(crate) fn forget_session(&self, session_id: &str) {
        self.pending().retain(|(s, _), _| s != session_id);
    }

    /// The waiting calls, oldest first; of one session when `session_id` is given.
    pub(crate) fn list(&self, session_id: Option<&str>) -> Vec<PendingApproval> {
        let mut list: Vec<PendingApproval> = self
            .pending()
            .values()
            .filter(|p| session_id.is_none_or(|id| p.session_id == id))
            .cloned()
            .collect();
        list.sort_by_key(|p| (p.asked_ms, p.seq));
        list
    }

    /// Takes the entry to answer it; `None` when another answer took it first.
    pub(crate) fn take(&self, session_id: &str, call_id: &str) -> Option<PendingApproval> {
        self.pending()
            .remove(&(session_id.to_owned(), call_id.to_owned()))
    }

    /// Puts an entry back (its answer could not be delivered).
    pub(crate) fn restore(&self, approval: PendingApproval) {
        self.pending().insert(
            (approval.session_id.clone(), approval.call_id.clone()),
            approval,
        );
    }
}
