//! Sessions: create (with folder grants), list, get, resume after a restart, close, and route
//! every `Submission` to the session it is for. A session runs in the process that holds its
//! lease; another process sees it stored (and its events in the log) but cannot drive it.

use std::sync::{Arc, PoisonError};

use agent::{Session, SessionStore, SessionSummary};
use protocol::{
    ApprovalDecision, ApprovalMode, DraftedRule, EnforcementLevel, FolderAccess, FolderGrant,
    NetworkProfileName, Op, ProviderKind, SessionSettings, Submission,
};
use serde::{Deserialize, Serialize};

use crate::config::MachineConfig;
use crate::error::HostError;
use crate::host::Host;
use crate::inbox::PendingApproval;
use crate::lease::SessionLease;
use crate::wiring;

/// What a new session asks for. Unset fields take the machine config's value.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "wire-schemas", derive(ts_rs::TS, utoipa::ToSchema))]
#[serde(default)]
pub struct NewSession {
    /// Folders to grant: absolute paths of existing folders, each read-write or read-only.
    pub folders: Vec<FolderGrant>,
    /// The working folder (inside a granted folder); default: the first folder.
    pub cwd: Option<String>,
    /// The wall; default: the machine's `sandbox.provider`.
    pub provider: Option<ProviderKind>,
    pub model: Option<String>,
    pub approval_mode: Option<ApprovalMode>,
    pub network_profile: Option<NetworkProfileName>,
    /// Hosts beyond the profile (`host`, `host:port`, `*.host`), added to the machine's.
    pub extra_hosts: Vec<String>,
    /// Credential-share entries to enable, by name, besides the machine's
    /// (`sandbox.credentials`).
    pub credentials: Vec<String>,
    /// Secrets to give the session, by name (OpenShell only).
    pub secrets: Vec<String>,
}

/// Where a session runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "wire-schemas", derive(ts_rs::TS, utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum SessionState {
    /// This process runs it: it takes turns, approvals and grants here.
    Running,
    /// Another live Paddock process runs it.
    Elsewhere,
    /// Nobody runs it; resume it to continue.
    Stored,
}

/// A session as front ends list and show it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "wire-schemas", derive(ts_rs::TS, utoipa::ToSchema))]
pub struct SessionInfo {
    pub id: String,
    /// The first line of the first user message.
    pub title: String,
    #[cfg_attr(feature = "wire-schemas", ts(type = "number"))]
    pub created_ms: i64,
    #[cfg_attr(feature = "wire-schemas", ts(type = "number"))]
    pub updated_ms: i64,
    /// Messages in the conversation (user, assistant and tool results).
    #[cfg_attr(feature = "wire-schemas", ts(type = "number"))]
    pub message_count: u64,
    pub state: SessionState,
    /// The wall its calls run in (when known).
    pub provider: Option<ProviderKind>,
    /// That wall's enforcement level; `none` means no wall at all.
    pub enforcement: Option<EnforcementLevel>,
    pub folders: Vec<FolderGrant>,
    /// The full settings, for sessions this process runs.
    pub settings: Option<SessionSettings>,
    /// Tool calls waiting for an answer.
    pub pending_approvals: u32,
    /// A warning a front end must show with the session (the `direct` provider: no wall).
    pub warning: Option<String>,
}

/// A session this process runs, with the lease that makes it ours.
pub(crate) struct Running {
    pub(crate) session: Session,
    pub(crate) _lease: SessionLease,
}

/// Checks a folder grant: an absolute path of an existing folder, made canonical. The
/// error says what is wrong with the path.
pub(crate) fn check_folder_grant(grant: &FolderGrant) -> Result<FolderGrant, String> {
    if !grant.path.starts_with('/') {
        return Err(format!("`{}` is not an absolute path", grant.path));
    }
    let canonical = std::fs::canonicalize(&grant.path)
        .map_err(|_| format!("`{}` does not exist", grant.path))?;
    if !canonical.is_dir() {
        return Err(format!("`{}` is not a folder", grant.path));
    }
    let path = canonical
        .to_str()
        .ok_or_else(|| "the path is not UTF-8".to_owned())?
        .to_owned();
    Ok(FolderGrant {
        path,
        access: grant.access,
    })
}

fn check_folder(index: usize, grant: &FolderGrant) -> Result<FolderGrant, HostError> {
    check_folder_grant(grant)
        .map_err(|problem| HostError::invalid(format!("folders[{index}].path"), problem))
}

/// The warning shown with every session of the `direct` provider.
fn warning(kind: Option<ProviderKind>) -> Option<String> {
    (kind == Some(ProviderKind::Direct))
        .then(|| format!("WARNING: {}", sandbox_provider::direct::DIRECT_WARNING))
}

/// A new session's settings from the request and the machine config.
pub fn new_settings(
    request: &NewSession,
    config: &MachineConfig,
) -> Result<SessionSettings, HostError> {
    if request.folders.is_empty() {
        return Err(HostError::invalid(
            "folders",
            "grant at least one folder (an absolute path, read-write or read-only)",
        ));
    }
    let folders = request
        .folders
        .iter()
        .enumerate()
        .map(|(index, grant)| check_folder(index, grant))
        .collect::<Result<Vec<_>, _>>()?;
    for (index, host) in request.extra_hosts.iter().enumerate() {
        agent::check_host(host)
            .map_err(|p| HostError::invalid(format!("extra_hosts[{index}]"), p))?;
    }
    if let Some(cwd) = &request.cwd
        && !cwd.starts_with('/')
    {
        return Err(HostError::invalid(
            "cwd",
            format!("`{cwd}` is not an absolute path"),
        ));
    }
    check_credentials(&request.credentials, config)?;
    for name in &request.secrets {
        if !config.secrets.contains(name) {
            return Err(HostError::SecretRefused {
                name: name.clone(),
                reason: format!(
                    "this machine does not offer it to sessions (it offers: {}; add it to \
                     `sandbox.secrets` in the settings)",
                    if config.secrets.is_empty() {
                        "none".to_owned()
                    } else {
                        config.secrets.join(", ")
                    }
                ),
            });
        }
    }
    let mut credentials = config.enabled_credentials.clone();
    for name in &request.credentials {
        if !credentials.contains(name) {
            credentials.push(name.clone());
        }
    }
    let mut extra_hosts = config.extra_hosts.clone();
    for host in &request.extra_hosts {
        if !extra_hosts.contains(host) {
            extra_hosts.push(host.clone());
        }
    }
    Ok(SessionSettings {
        folders,
        cwd: request.cwd.clone(),
        network_profile: request.network_profile.unwrap_or(config.network_profile),
        extra_hosts,
        credentials,
        secrets: request.secrets.clone(),
        model: request.model.clone(),
        approval_mode: request.approval_mode.unwrap_or(config.approval_mode),
    })
}

/// Refuses credential-entry names this machine does not offer.
fn check_credentials(names: &[String], config: &MachineConfig) -> Result<(), HostError> {
    if names.is_empty() {
        return Ok(());
    }
    let data = sandbox_policy::SandboxData::builtin()
        .map_err(|e| HostError::Internal(format!("the built-in sandbox data: {e}")))?;
    let offered: Vec<String> = wiring::credential_entries(&data, config)?
        .into_iter()
        .map(|entry| entry.name)
        .collect();
    for (index, name) in names.iter().enumerate() {
        if !offered.contains(name) {
            return Err(HostError::invalid(
                format!("credentials[{index}]"),
                format!(
                    "`{name}` is not an entry this machine offers (it offers: {}; add custom \
                     ones as [[sandbox_credentials]] in the machine config)",
                    offered.join(", ")
                ),
            ));
        }
    }
    Ok(())
}

/// Tells the session's user (and the audit trail) each notice.
async fn notify(session: &Session, notices: &[(String, String)]) {
    for (source, message) in notices {
        if let Err(e) = session.notify(source, message).await {
            tracing::error!(session = %session.id(), "recording a notice: {e}");
        }
    }
}

impl Host {
    fn running(&self, id: &str) -> Option<Arc<Running>> {
        self.inner
            .running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(id)
            .cloned()
    }

    /// The session this process runs, or why it cannot be driven from here: another
    /// process runs it, it is stored but not running, or there is no such session.
    pub(crate) async fn live_session(&self, id: &str) -> Result<Arc<Running>, HostError> {
        if let Some(running) = self.running(id) {
            return Ok(running);
        }
        if self.inner.leases.is_held(id) {
            return Err(HostError::SessionBusy { id: id.to_owned() });
        }
        if self.inner.store.load(id).await?.is_none() {
            return Err(HostError::SessionNotFound { id: id.to_owned() });
        }
        Err(HostError::SessionNotRunning { id: id.to_owned() })
    }

    /// Starts a session. The model client is built first (a missing key fails here, with how
    /// to add one); no sandbox is built until a tool call needs one.
    pub async fn create_session(&self, request: NewSession) -> Result<SessionInfo, HostError> {
        let config = self.config();
        let settings = new_settings(&request, &config)?;
        let kind = request.provider.unwrap_or(config.provider);
        let provider = self.provider_with_secrets(kind, &settings.secrets).await?;
        let model = self.model().await?;
        if let Some(warning) = warning(Some(kind)) {
            tracing::warn!("{warning}");
        }
        let (tools, notices) = self.session_tools(&settings).await;
        let session = Session::start(self.deps(model, provider, tools), settings).await?;
        notify(&session, &notices).await;
        self.adopt(session).await
    }

    /// Keeps a started session: takes its lease (closing it again if that fails).
    async fn adopt(&self, session: Session) -> Result<SessionInfo, HostError> {
        let id = session.id().to_owned();
        let lease = match self.inner.leases.acquire(&id) {
            Ok(lease) => lease,
            Err(e) => {
                let _ = session.submit(Op::Close);
                session.closed().await;
                return Err(e);
            }
        };
        self.inner
            .running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(
                id.clone(),
                Arc::new(Running {
                    session,
                    _lease: lease,
                }),
            );
        self.session(&id).await
    }

    /// Resumes a stored session in this process: its conversation, folders, settings and
    /// approvals. The wall is the one it ran with unless `provider` says otherwise.
    pub async fn resume_session(
        &self,
        id: &str,
        provider: Option<ProviderKind>,
    ) -> Result<SessionInfo, HostError> {
        if self.running(id).is_some() {
            return self.session(id).await;
        }
        let record = self
            .inner
            .store
            .load(id)
            .await?
            .ok_or_else(|| HostError::SessionNotFound { id: id.to_owned() })?;
        let lease = self.inner.leases.acquire(id)?;
        let kind = provider
            .or(record.provider)
            .unwrap_or(self.config().provider);
        let sandbox = self
            .provider_with_secrets(kind, &record.settings.secrets)
            .await?;
        let model = self.model().await?;
        if let Some(warning) = warning(Some(kind)) {
            tracing::warn!("{warning}");
        }
        let (tools, notices) = self.session_tools(&record.settings).await;
        let session = Session::resume(self.deps(model, sandbox, tools), id).await?;
        notify(&session, &notices).await;
        self.inner
            .running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(
                id.to_owned(),
                Arc::new(Running {
                    session,
                    _lease: lease,
                }),
            );
        self.session(id).await
    }

    /// Closes a session this process runs: the running turn is cancelled, the sandbox torn
    /// down; the session stays stored.
    pub async fn close_session(&self, id: &str) -> Result<SessionInfo, HostError> {
        let running = self.live_session(id).await?;
        running.session.submit(Op::Close)?;
        running.session.closed().await;
        self.inner
            .running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(id);
        self.inner.inbox.forget_session(id);
        // The last handle: its lease goes with it.
        drop(running);
        self.session(id).await
    }

    fn info(&self, summary: SessionSummary) -> SessionInfo {
        let running = self.running(&summary.id);
        let state = if running.is_some() {
            SessionState::Running
        } else if self.inner.leases.is_held(&summary.id) {
            SessionState::Elsewhere
        } else {
            SessionState::Stored
        };
        let (provider, settings) = match &running {
            Some(running) => (
                Some(running.session.provider()),
                Some(running.session.settings()),
            ),
            None => (summary.provider, None),
        };
        let folders = settings
            .as_ref()
            .map_or_else(|| summary.folders.clone(), |s| s.folders.clone());
        SessionInfo {
            pending_approvals: u32::try_from(self.inner.inbox.list(Some(&summary.id)).len())
                .unwrap_or(u32::MAX),
            id: summary.id,
            title: summary.title,
            created_ms: summary.created_ms,
            updated_ms: summary.updated_ms,
            message_count: summary.message_count,
            state,
            enforcement: provider.map(ProviderKind::enforcement),
            warning: warning(provider),
            provider,
            folders,
            settings,
        }
    }

    /// Every stored session, most recently active first.
    pub async fn list_sessions(&self) -> Result<Vec<SessionInfo>, HostError> {
        let summaries = self.inner.store.list().await?;
        Ok(summaries.into_iter().map(|s| self.info(s)).collect())
    }

    /// One session.
    pub async fn session(&self, id: &str) -> Result<SessionInfo, HostError> {
        let record = self
            .inner
            .store
            .load(id)
            .await?
            .ok_or_else(|| HostError::SessionNotFound { id: id.to_owned() })?;
        let summary = SessionSummary {
            id: record.id.clone(),
            created_ms: record.created_ms,
            updated_ms: record.updated_ms,
            message_count: record.messages.len() as u64,
            title: agent::session_title(&record.messages),
            folders: record.settings.folders.clone(),
            provider: record.provider,
        };
        Ok(self.info(summary))
    }

    /// Routes a submission to its session: every op a front end sends passes here (the
    /// methods below, `send_turn`, `decide_approval`, …, build one and call this). Each op is
    /// checked first (an empty message, a folder that is not one, a host that is not a host,
    /// a folder the session does not have: refused naming the field); `approval` goes
    /// through the inbox (first answer wins); `close` closes the session here and releases
    /// its lease; `start_session` is refused (use [`Host::create_session`]). The effects
    /// arrive as the session's events.
    pub async fn submit(&self, session_id: &str, submission: Submission) -> Result<(), HostError> {
        let Submission { id, op } = submission;
        let op = match op {
            Op::StartSession { .. } => {
                return Err(HostError::invalid(
                    "op",
                    "start_session creates a session: use create_session (POST /v1/sessions)",
                ));
            }
            Op::Close => return self.close_session(session_id).await.map(|_| ()),
            Op::Approval { call_id, decision } => {
                return self
                    .answer_approval(session_id, id, call_id, decision)
                    .await;
            }
            Op::UserTurn { text } if text.trim().is_empty() => {
                return Err(HostError::invalid("text", "the message is empty"));
            }
            Op::GrantFolder { grant } => Op::GrantFolder {
                grant: check_folder(0, &grant).map_err(|e| match e {
                    HostError::InvalidRequest { problem, .. } => {
                        HostError::invalid("path", problem)
                    }
                    other => other,
                })?,
            },
            Op::AllowHost { host } => {
                agent::check_host(&host).map_err(|p| HostError::invalid("host", p))?;
                Op::AllowHost { host }
            }
            op => op,
        };
        let running = self.live_session(session_id).await?;
        if let Op::RevokeFolder { path } = &op
            && !running
                .session
                .settings()
                .folders
                .iter()
                .any(|f| &f.path == path)
        {
            return Err(HostError::invalid(
                "path",
                format!("`{path}` is not one of the session's folders"),
            ));
        }
        running.session.submit_with_id(Submission { id, op })?;
        Ok(())
    }

    /// An approval answer: only for a call the inbox holds as waiting, taken from it first
    /// (so a second answer finds nothing) and put back if the session cannot take it.
    async fn answer_approval(
        &self,
        session_id: &str,
        id: String,
        call_id: String,
        decision: ApprovalDecision,
    ) -> Result<(), HostError> {
        let running = self.live_session(session_id).await?;
        let Some(pending) = self.inner.inbox.take(session_id, &call_id) else {
            return Err(HostError::ApprovalNotPending {
                session_id: session_id.to_owned(),
                call_id,
            });
        };
        if let Err(e) = running.session.submit_with_id(Submission {
            id,
            op: Op::Approval { call_id, decision },
        }) {
            self.inner.inbox.restore(pending);
            return Err(e.into());
        }
        Ok(())
    }

    /// Submits `op` with a new submission id, through [`Host::submit`]; returns the id.
    pub async fn submit_op(&self, session_id: &str, op: Op) -> Result<String, HostError> {
        let submission = submission(op);
        let id = submission.id.clone();
        self.submit(session_id, submission).await?;
        Ok(id)
    }

    /// Sends the user's next message; returns the submission id.
    pub async fn send_turn(&self, session_id: &str, text: &str) -> Result<String, HostError> {
        self.submit_op(
            session_id,
            Op::UserTurn {
                text: text.to_owned(),
            },
        )
        .await
    }

    /// Cancels the running turn (model stream, running calls, pending approvals).
    pub async fn interrupt(&self, session_id: &str) -> Result<(), HostError> {
        self.submit_op(session_id, Op::Interrupt).await.map(|_| ())
    }

    /// Adds (or changes the access of) a folder of a live session; a live sandbox is rebuilt
    /// and the agent told.
    pub async fn grant_folder(
        &self,
        session_id: &str,
        grant: &FolderGrant,
    ) -> Result<(), HostError> {
        self.submit_op(
            session_id,
            Op::GrantFolder {
                grant: grant.clone(),
            },
        )
        .await
        .map(|_| ())
    }

    /// Removes a folder from a live session.
    pub async fn revoke_folder(&self, session_id: &str, path: &str) -> Result<(), HostError> {
        self.submit_op(
            session_id,
            Op::RevokeFolder {
                path: path.to_owned(),
            },
        )
        .await
        .map(|_| ())
    }

    /// Allows `host` for the rest of a live session.
    pub async fn allow_host_for_session(
        &self,
        session_id: &str,
        host: &str,
    ) -> Result<(), HostError> {
        self.submit_op(
            session_id,
            Op::AllowHost {
                host: host.to_owned(),
            },
        )
        .await
        .map(|_| ())
    }

    /// The waiting tool calls of every session this process runs (or of one), oldest first.
    pub fn pending_approvals(&self, session_id: Option<&str>) -> Vec<PendingApproval> {
        self.inner.inbox.list(session_id)
    }

    /// Answers a waiting call. The first answer wins; a later one (from another client, or
    /// for a call that never asked) is [`HostError::ApprovalNotPending`].
    pub async fn decide_approval(
        &self,
        session_id: &str,
        call_id: &str,
        decision: ApprovalDecision,
    ) -> Result<(), HostError> {
        self.submit_op(
            session_id,
            Op::Approval {
                call_id: call_id.to_owned(),
                decision,
            },
        )
        .await
        .map(|_| ())
    }

    /// The network rules a live session's sandbox drafted from denied connections.
    pub async fn drafted_rules(&self, session_id: &str) -> Result<Vec<DraftedRule>, HostError> {
        Ok(self
            .live_session(session_id)
            .await?
            .session
            .drafted_rules()
            .await?)
    }

    /// Approves or rejects a drafted rule (recorded as `network_rule_decided`).
    pub async fn decide_drafted_rule(
        &self,
        session_id: &str,
        rule_id: &str,
        approve: bool,
        reason: Option<String>,
    ) -> Result<DraftedRule, HostError> {
        Ok(self
            .live_session(session_id)
            .await?
            .session
            .decide_drafted_rule(rule_id, approve, reason)
            .await?)
    }
}

/// A submission of `op` with a new id (a UUID).
pub fn submission(op: Op) -> Submission {
    Submission {
        id: uuid::Uuid::new_v4().to_string(),
        op,
    }
}

/// A folder grant from a `PATH`, `PATH:ro` or `PATH:rw` spec (the CLI's `--folder`).
pub fn parse_folder_spec(spec: &str) -> FolderGrant {
    let (path, access) = match spec.rsplit_once(':') {
        Some((path, "ro")) => (path, FolderAccess::ReadOnly),
        Some((path, "rw")) => (path, FolderAccess::ReadWrite),
        _ => (spec, FolderAccess::ReadWrite),
    };
    let path = std::path::absolute(path)
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| path.to_owned());
    FolderGrant { path, access }
}
