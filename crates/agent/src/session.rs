//! A session: an actor that takes ops, runs one turn at a time, and emits events.

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use approvals::{StandingApproval, StandingApprovals};
use model_client::{ContentBlock, Message, ModelClient, Role};
use protocol::{
    ApprovalDecision, ErrorCode, EventMsg, FolderAccess, FolderGrant, Op, SessionSettings,
    Submission,
};
use sandbox_provider::SandboxProvider;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::config::AgentConfig;
use crate::error::AgentError;
use crate::event_bus::{EventBus, SessionEvents, now_ms};
use crate::sandbox_slot::{SandboxSlot, sandbox_request};
use crate::session_store::{SessionRecord, SessionStore};
use crate::tools::ToolRegistry;
use crate::turn;

/// What a session is built from. The composition root (the `paddock` crate) chooses each part.
#[derive(Clone)]
pub struct SessionDeps {
    pub model: Arc<dyn ModelClient>,
    pub provider: Arc<dyn SandboxProvider>,
    pub store: Arc<dyn SessionStore>,
    pub bus: EventBus,
    pub tools: ToolRegistry,
    pub config: AgentConfig,
}

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
    pub state: Mutex<SessionState>,
    /// Calls waiting for an approval op.
    pub pending: Mutex<HashMap<String, oneshot::Sender<ApprovalDecision>>>,
}

impl Shared {
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

/// A running session. Dropping it does not stop it; send [`Op::Close`] for that.
pub struct Session {
    id: String,
    ops: mpsc::UnboundedSender<Submission>,
    task: JoinHandle<()>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session").field("id", &self.id).finish()
    }
}

fn check_settings(settings: &SessionSettings) -> Result<(), AgentError> {
    for folder in &settings.folders {
        if !folder.path.starts_with('/') {
            return Err(AgentError::InvalidSettings(format!(
                "folders: `{}` is not an absolute path",
                folder.path
            )));
        }
    }
    if let Some(cwd) = &settings.cwd
        && !cwd.starts_with('/')
    {
        return Err(AgentError::InvalidSettings(format!(
            "cwd: `{cwd}` is not an absolute path"
        )));
    }
    Ok(())
}

impl Session {
    /// Starts a new session (the `start_session` op). No sandbox is built until a tool call
    /// needs one.
    pub async fn start(deps: SessionDeps, settings: SessionSettings) -> Result<Self, AgentError> {
        check_settings(&settings)?;
        let id = uuid::Uuid::new_v4().to_string();
        let now = now_ms();
        let record = SessionRecord {
            id: id.clone(),
            settings,
            messages: Vec::new(),
            session_approvals: Vec::new(),
            downloads: Vec::new(),
            provider: Some(deps.provider.kind()),
            last_seq: 0,
            created_ms: now,
            updated_ms: now,
        };
        deps.store.create(&record).await?;
        Self::launch(deps, record, false).await
    }

    /// Resumes a stored session: its conversation, grants, approvals and settings.
    pub async fn resume(deps: SessionDeps, id: &str) -> Result<Self, AgentError> {
        let record = deps
            .store
            .load(id)
            .await?
            .ok_or_else(|| crate::session_store::StoreError::NotFound(id.to_owned()))?;
        let provider = deps.provider.kind();
        if record.provider != Some(provider) {
            deps.store.save_provider(id, provider).await?;
        }
        Self::launch(deps, record, true).await
    }

    async fn launch(
        deps: SessionDeps,
        record: SessionRecord,
        resumed: bool,
    ) -> Result<Self, AgentError> {
        let always_approvals = deps.store.always_approvals().await?;
        let id = record.id.clone();
        let settings = record.settings.clone();
        let shared = Arc::new(Shared {
            id: id.clone(),
            model: deps.model,
            store: deps.store,
            tools: deps.tools,
            config: deps.config,
            events: SessionEvents::new(deps.bus, id.clone(), record.last_seq),
            slot: SandboxSlot::new(deps.provider),
            state: Mutex::new(SessionState {
                settings: record.settings,
                messages: record.messages,
                dirty_from: None,
                session_approvals: record.session_approvals,
                always_approvals,
                unsaved_always: Vec::new(),
                downloads: record.downloads.into_iter().collect(),
                notes: Vec::new(),
            }),
            pending: Mutex::new(HashMap::new()),
        });
        shared
            .events
            .emit(None, EventMsg::SessionCreated { settings, resumed })
            .await?;
        let (ops, receiver) = mpsc::unbounded_channel();
        let task = tokio::spawn(Actor::new(shared).run(receiver));
        Ok(Self { id, ops, task })
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    /// Sends an op; returns the submission id it was given.
    pub fn submit(&self, op: Op) -> Result<String, AgentError> {
        let id = uuid::Uuid::new_v4().to_string();
        self.submit_with_id(Submission { id: id.clone(), op })?;
        Ok(id)
    }

    /// Sends a submission whose id the caller chose.
    pub fn submit_with_id(&self, submission: Submission) -> Result<(), AgentError> {
        self.ops
            .send(submission)
            .map_err(|_| AgentError::Closed(self.id.clone()))
    }

    /// Waits until the session has closed (after [`Op::Close`]).
    pub async fn closed(self) {
        if let Err(e) = self.task.await {
            tracing::error!(session = %self.id, "the session task failed: {e}");
        }
    }
}

struct RunningTurn {
    cancel: CancellationToken,
    task: JoinHandle<()>,
    /// Set once the turn has sent `turn_finished` (it may still be saving).
    finishing: Arc<AtomicBool>,
}

struct Actor {
    shared: Arc<Shared>,
    turn: Option<RunningTurn>,
}

impl Actor {
    fn new(shared: Arc<Shared>) -> Self {
        Self { shared, turn: None }
    }

    async fn run(mut self, mut ops: mpsc::UnboundedReceiver<Submission>) {
        loop {
            let turn_done = async {
                match &mut self.turn {
                    Some(turn) => {
                        let _ = (&mut turn.task).await;
                    }
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                () = turn_done => self.turn = None,
                submission = ops.recv() => match submission {
                    Some(Submission { op: Op::Close, .. }) | None => break,
                    Some(submission) => self.handle(submission.op).await,
                },
            }
        }
        self.close().await;
    }

    async fn error(&self, code: ErrorCode, message: String) {
        self.shared
            .events
            .emit_logged(None, EventMsg::Error { code, message })
            .await;
    }

    async fn handle(&mut self, op: Op) {
        match op {
            Op::UserTurn { text } => {
                if let Some(turn) = self.turn.take_if(|t| t.finishing.load(Ordering::SeqCst)) {
                    // The client saw `turn_finished`; let the turn finish saving first.
                    let _ = turn.task.await;
                }
                if self.turn.is_some() {
                    self.error(
                        ErrorCode::TurnInProgress,
                        "a turn is running; interrupt it or wait for it to finish".into(),
                    )
                    .await;
                    return;
                }
                let cancel = CancellationToken::new();
                let finishing = Arc::new(AtomicBool::new(false));
                let task = tokio::spawn(turn::run_turn(
                    Arc::clone(&self.shared),
                    text,
                    cancel.clone(),
                    Arc::clone(&finishing),
                ));
                self.turn = Some(RunningTurn {
                    cancel,
                    task,
                    finishing,
                });
            }
            Op::Interrupt => match &self.turn {
                Some(turn) => turn.cancel.cancel(),
                None => {
                    self.error(ErrorCode::InvalidOp, "no turn is running".into())
                        .await;
                }
            },
            Op::Approval { call_id, decision } => {
                let waiting = self.shared.pending().remove(&call_id);
                match waiting {
                    Some(sender) => {
                        let _ = sender.send(decision);
                    }
                    None => {
                        self.error(
                            ErrorCode::UnknownCall,
                            format!("no tool call `{call_id}` is awaiting approval"),
                        )
                        .await;
                    }
                }
            }
            Op::GrantFolder { grant } => self.grant(grant).await,
            Op::RevokeFolder { path } => self.revoke(path).await,
            Op::ListApprovals => {
                let approvals = self.shared.state().listed();
                self.shared
                    .events
                    .emit_logged(None, EventMsg::StandingApprovals { approvals })
                    .await;
            }
            Op::RevokeApproval { approval_id } => {
                crate::standing::revoke(&self.shared, &approval_id).await;
            }
            Op::StartSession { .. } => {
                self.error(
                    ErrorCode::InvalidOp,
                    "start_session goes to the host, not to a running session".into(),
                )
                .await;
            }
            Op::Close => {}
        }
    }

    async fn grant(&mut self, grant: FolderGrant) {
        if !grant.path.starts_with('/') {
            self.error(
                ErrorCode::InvalidOp,
                format!("grant_folder: `{}` is not an absolute path", grant.path),
            )
            .await;
            return;
        }
        let settings = {
            let mut state = self.shared.state();
            state.settings.folders.retain(|f| f.path != grant.path);
            state.settings.folders.push(grant.clone());
            state.settings.clone()
        };
        let access = match grant.access {
            FolderAccess::ReadWrite => "read-write",
            FolderAccess::ReadOnly => "read-only",
        };
        let reason = format!("{} was granted ({access})", grant.path);
        self.settings_changed(settings, EventMsg::FolderGranted { grant }, reason)
            .await;
    }

    async fn revoke(&mut self, path: String) {
        let settings = {
            let mut state = self.shared.state();
            let before = state.settings.folders.len();
            state.settings.folders.retain(|f| f.path != path);
            if state.settings.folders.len() == before {
                None
            } else {
                if state
                    .settings
                    .cwd
                    .as_deref()
                    .is_some_and(|cwd| std::path::Path::new(cwd).starts_with(&path))
                {
                    state.settings.cwd = None;
                }
                Some(state.settings.clone())
            }
        };
        let Some(settings) = settings else {
            self.error(
                ErrorCode::InvalidOp,
                format!("revoke_folder: `{path}` is not one of the session's folders"),
            )
            .await;
            return;
        };
        let reason = format!("{path} was revoked");
        self.settings_changed(settings, EventMsg::FolderRevoked { path }, reason)
            .await;
    }

    /// Saves new settings, reports the change, and rebuilds a live sandbox in the background
    /// (it waits for running calls; the actor keeps taking ops meanwhile).
    async fn settings_changed(
        &mut self,
        settings: SessionSettings,
        event: EventMsg,
        reason: String,
    ) {
        if let Err(e) = self
            .shared
            .store
            .save_settings(&self.shared.id, &settings)
            .await
        {
            self.error(ErrorCode::PersistenceFailed, e.to_string())
                .await;
        }
        self.shared.events.emit_logged(None, event).await;
        if let Err(e) = self.shared.persist_messages().await {
            self.error(ErrorCode::PersistenceFailed, e.to_string())
                .await;
        }
        if !self.shared.slot.is_live().await {
            return;
        }
        let shared = Arc::clone(&self.shared);
        tokio::spawn(async move {
            let request = sandbox_request(&shared.id, &settings);
            let note = format!(
                "The sandbox was rebuilt because {reason}: shell state (variables, background \
                 processes, files outside the granted folders) was lost."
            );
            let rebuilt = || shared.state().notes.push(note);
            match shared
                .slot
                .recreate(&request, &reason, &shared.events, rebuilt)
                .await
            {
                Ok(()) => {}
                Err(e) => {
                    shared
                        .events
                        .emit_logged(
                            None,
                            EventMsg::Error {
                                code: ErrorCode::SandboxRefused,
                                message: e.to_string(),
                            },
                        )
                        .await;
                }
            }
        });
    }

    async fn close(mut self) {
        if let Some(turn) = self.turn.take() {
            turn.cancel.cancel();
            let _ = turn.task.await;
        }
        self.shared.slot.close().await;
        self.shared
            .events
            .emit_logged(None, EventMsg::SessionClosed)
            .await;
        if let Err(e) = self.shared.persist_messages().await {
            tracing::warn!(session = %self.shared.id, "saving the session at close failed: {e}");
        }
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
