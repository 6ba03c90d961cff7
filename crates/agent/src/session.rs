//! A session: an actor that takes ops, runs one turn at a time, and emits events.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use model_client::ModelClient;
use protocol::{DraftedRule, ErrorCode, EventMsg, Op, ProviderKind, SessionSettings, Submission};
use sandbox_provider::SandboxProvider;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::config::AgentConfig;
use crate::error::AgentError;
use crate::event_bus::{EventBus, SessionEvents, now_ms};
use crate::sandbox_slot::SandboxSlot;
use crate::session_store::{SessionRecord, SessionStore};
use crate::settings_change;
use crate::shared::{SessionState, Shared};
use crate::tools::ToolRegistry;
use crate::turn;

/// What a session is built from. The composition root (the `paddock-host` crate) chooses each
/// part.
#[derive(Clone)]
pub struct SessionDeps {
    pub model: Arc<dyn ModelClient>,
    pub provider: Arc<dyn SandboxProvider>,
    pub store: Arc<dyn SessionStore>,
    pub bus: EventBus,
    pub tools: ToolRegistry,
    pub config: AgentConfig,
}

/// A running session. Dropping it does not stop it; send [`Op::Close`] for that.
pub struct Session {
    id: String,
    ops: mpsc::UnboundedSender<Submission>,
    /// Becomes true when the actor has closed (its sandbox torn down, `session_closed` sent).
    done: watch::Receiver<bool>,
    shared: Arc<Shared>,
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
            written: Vec::new(),
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
        let globs =
            sandbox_provider::protected::approval_globs().map_err(AgentError::ProtectedList)?;
        let id = record.id.clone();
        let settings = record.settings.clone();
        let provider = deps.provider.kind();
        // The sink may have committed events the store's `last_seq` has not caught up with
        // (the process was killed mid-turn): numbering continues after both.
        let committed = deps.bus.last_committed_seq(&id).await?;
        let last_seq = record.last_seq.max(committed.unwrap_or(0));
        let shared = Arc::new(Shared {
            id: id.clone(),
            model: deps.model,
            store: deps.store,
            tools: deps.tools,
            config: deps.config,
            events: SessionEvents::new(deps.bus, id.clone(), last_seq),
            slot: SandboxSlot::new(deps.provider),
            protected: approvals::ProtectedPaths::new(globs, Vec::new()),
            state: Mutex::new(SessionState {
                settings: record.settings,
                messages: record.messages,
                dirty_from: None,
                session_approvals: record.session_approvals,
                always_approvals,
                unsaved_always: Vec::new(),
                downloads: record.downloads.into_iter().collect(),
                written: record.written.into_iter().collect(),
                notes: Vec::new(),
            }),
            pending: Mutex::new(HashMap::new()),
        });
        shared
            .events
            .emit(
                None,
                EventMsg::SessionCreated {
                    settings,
                    resumed,
                    provider,
                },
            )
            .await?;
        let (ops, receiver) = mpsc::unbounded_channel();
        let (done_tx, done) = watch::channel(false);
        let actor = Actor::new(Arc::clone(&shared));
        let task = tokio::spawn(actor.run(receiver));
        let session_id = id.clone();
        tokio::spawn(async move {
            if let Err(e) = task.await {
                tracing::error!(session = %session_id, "the session task failed: {e}");
            }
            let _ = done_tx.send(true);
        });
        Ok(Self {
            id,
            ops,
            done,
            shared,
        })
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

    /// The wall this session's tool calls run in.
    pub fn provider(&self) -> ProviderKind {
        self.shared.slot.provider().kind()
    }

    /// The session's settings in force now (grants and allowed hosts included).
    pub fn settings(&self) -> SessionSettings {
        self.shared.state().settings.clone()
    }

    /// True while the actor takes ops (until it has closed).
    pub fn is_open(&self) -> bool {
        !self.ops.is_closed()
    }

    /// The network rules the live sandbox drafted from denied connections. Only OpenShell
    /// drafts rules; other walls refuse with [`AgentError::Sandbox`]. With no sandbox built
    /// yet there is nothing to draft from: an empty list.
    pub async fn drafted_rules(&self) -> Result<Vec<DraftedRule>, AgentError> {
        match self.shared.slot.current().await {
            None => Ok(Vec::new()),
            Some(sandbox) => Ok(sandbox.drafted_rules().await?),
        }
    }

    /// Approves or rejects a drafted rule, and records the decision
    /// (`network_rule_decided`) before returning it.
    pub async fn decide_drafted_rule(
        &self,
        rule_id: &str,
        approve: bool,
        reason: Option<String>,
    ) -> Result<DraftedRule, AgentError> {
        let Some(sandbox) = self.shared.slot.current().await else {
            return Err(AgentError::Sandbox(
                sandbox_provider::ProviderError::InvalidRequest(format!(
                    "no drafted rule `{rule_id}`: the session has no running sandbox"
                )),
            ));
        };
        let rule = sandbox
            .decide_drafted_rule(rule_id, approve, reason.as_deref())
            .await?;
        self.shared
            .events
            .emit(
                None,
                EventMsg::NetworkRuleDecided {
                    rule: rule.clone(),
                    approved: approve,
                    reason: if approve { None } else { reason },
                },
            )
            .await?;
        Ok(rule)
    }

    /// Tells the session's observers something that does not stop it (`notice`, durable: it
    /// is audited). The composition root uses it for connectors that could not start and
    /// project settings it ignored.
    pub async fn notify(&self, source: &str, message: &str) -> Result<(), AgentError> {
        self.shared
            .events
            .emit(
                None,
                EventMsg::Notice {
                    source: source.to_owned(),
                    message: message.to_owned(),
                },
            )
            .await?;
        Ok(())
    }

    /// Waits until the session has closed (after [`Op::Close`]): the running turn ended, the
    /// sandbox is torn down and `session_closed` was recorded.
    pub async fn closed(&self) {
        let mut done = self.done.clone();
        // An error means the actor's watcher is gone: it has closed too.
        let _ = done.wait_for(|closed| *closed).await;
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
            Op::GrantFolder { grant } => settings_change::grant(&self.shared, grant).await,
            Op::RevokeFolder { path } => settings_change::revoke(&self.shared, path).await,
            Op::AllowHost { host } => settings_change::allow_host(&self.shared, host).await,
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

    async fn close(mut self) {
        if let Some(turn) = self.turn.take() {
            turn.cancel.cancel();
            let _ = turn.task.await;
        }
        // The sandbox's processes are gone now: what the close found is recorded, and what
        // one left behind is found here.
        match self.shared.slot.close(&self.shared.events).await {
            Ok(Some(files)) => {
                if let Err(e) = self.shared.sweep_protected(None, None, files).await {
                    tracing::warn!(session = %self.shared.id, "recording the sweep at close failed: {e}");
                }
            }
            Ok(None) => {}
            Err(e) => {
                tracing::warn!(session = %self.shared.id, "recording the sandbox's close failed: {e}");
            }
        }
        self.shared
            .events
            .emit_logged(None, EventMsg::SessionClosed)
            .await;
        if let Err(e) = self.shared.persist_messages().await {
            tracing::warn!(session = %self.shared.id, "saving the session at close failed: {e}");
        }
    }
}
