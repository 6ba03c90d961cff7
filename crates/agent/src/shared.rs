//! The state a session's actor and its running turn share: the session's settings,
//! conversation and approvals ([`SessionState`]), and everything a turn needs to run
//! ([`Shared`]). Every other module of the turn loop reads and writes the session through
//! this one; nothing here calls back into them.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Mutex, PoisonError};

use approvals::{StandingApproval, StandingApprovals};
use model_client::{ContentBlock, Message, ModelClient, Role};
use protocol::{ApprovalDecision, SessionSettings};
use sandbox_provider::protected::ProtectedFiles;
use std::sync::Arc;
use tokio::sync::oneshot;

use crate::config::AgentConfig;
use crate::event_bus::{SessionEvents, SinkError};
use crate::sandbox_slot::SandboxSlot;
use crate::session_store::SessionStore;
use crate::tools::ToolRegistry;

/// The mutable part of a session. Never held across an `.await`.
pub(crate) struct SessionState {
    pub settings: SessionSettings,
    pub messages: Vec<Message>,
    /// The first message index not yet saved, when some are unsaved.
    pub dirty_from: Option<usize>,
    pub session_approvals: Vec<StandingApproval>,
    /// The machine's `always` approvals (re-read at each turn) and the ones this session
    /// gave but could not save.
    pub always_approvals: Vec<StandingApproval>,
    /// `always` approvals whose save failed: they hold for this session only.
    pub unsaved_always: Vec<StandingApproval>,
    /// Files the session's commands downloaded (running one always asks).
    pub downloads: BTreeSet<String>,
    /// Files the session wrote (running one cannot be checked: auto-in-sandbox asks).
    pub written: BTreeSet<String>,
    /// Notes for the model (e.g. "the sandbox was rebuilt") waiting for the next tool result or
    /// user message.
    pub notes: Vec<String>,
}

impl SessionState {
    pub(crate) fn mark_dirty(&mut self, index: usize) {
        self.dirty_from = Some(self.dirty_from.map_or(index, |d| d.min(index)));
    }

    /// The approvals in force: the machine's `always` ones and the session's.
    pub(crate) fn standing(&self) -> StandingApprovals {
        let mut standing = StandingApprovals::new();
        for approval in self.always_approvals.iter().chain(&self.session_approvals) {
            standing.add(approval.clone());
        }
        standing
    }

    /// The approvals in force, as front ends list them.
    pub(crate) fn listed(&self) -> Vec<protocol::StandingApproval> {
        self.standing()
            .list()
            .iter()
            .map(crate::approval_gate::listed_approval)
            .collect()
    }
}

/// Everything a turn needs, shared between the session actor and its running turn.
pub(crate) struct Shared {
    pub id: String,
    pub model: Arc<dyn ModelClient>,
    pub store: Arc<dyn SessionStore>,
    pub tools: ToolRegistry,
    pub config: AgentConfig,
    pub events: SessionEvents,
    pub slot: SandboxSlot,
    /// The protected list's globs (files the host runs later), for the approvals.
    pub protected: approvals::ProtectedPaths,
    pub state: Mutex<SessionState>,
    /// Calls waiting for an approval op.
    pub pending: Mutex<HashMap<String, oneshot::Sender<ApprovalDecision>>>,
}

impl Shared {
    /// Sweeps for protected paths created since the last sweep; each one found is reported
    /// (a durable event, so audited) and the model gets a note. `call_id`: the call after
    /// which the sweep runs (none at turn end and close).
    pub(crate) async fn sweep_protected(
        &self,
        turn_id: Option<&str>,
        call_id: Option<&str>,
        files: Arc<ProtectedFiles>,
    ) -> Result<(), SinkError> {
        let shown =
            crate::protected::sweep_and_report(&self.events, turn_id, call_id, files).await?;
        if !shown.is_empty() {
            self.state()
                .notes
                .push(crate::protected::undone_note(&shown));
        }
        Ok(())
    }

    pub(crate) fn state(&self) -> std::sync::MutexGuard<'_, SessionState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn pending(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<String, oneshot::Sender<ApprovalDecision>>> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Saves unsaved messages.
    pub(crate) async fn persist_messages(&self) -> Result<(), crate::session_store::StoreError> {
        let last_seq = self.events.last_seq().await;
        let (from, messages) = {
            let state = self.state();
            let from = state.dirty_from.unwrap_or(state.messages.len());
            (from, state.messages[from..].to_vec())
        };
        self.store
            .save_messages(&self.id, from, &messages, last_seq)
            .await?;
        let mut state = self.state();
        if state.dirty_from.is_some_and(|d| d >= from) {
            state.dirty_from = None;
        }
        Ok(())
    }
}

/// Appends a user message, merging it into a trailing user message (after an interrupted or
/// cut-short turn) so roles keep alternating.
pub(crate) fn push_user_blocks(state: &mut SessionState, mut blocks: Vec<ContentBlock>) {
    let index = state.messages.len();
    match state.messages.last_mut() {
        Some(last) if last.role == Role::User => {
            last.content.append(&mut blocks);
            state.mark_dirty(index - 1);
        }
        _ => {
            state.messages.push(Message {
                role: Role::User,
                content: blocks,
            });
            state.mark_dirty(index);
        }
    }
}
