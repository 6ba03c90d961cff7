//! One supervised connector: started on demand, its tool list kept current (refreshed on the
//! server's `notifications/tools/list_changed`), restarted with backoff when it stops on its
//! own, stopped with the host.

use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::{Duration, Instant};

use rmcp::{Peer, RoleClient};
use serde_json::Value;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::config::ConnectorConfig;
use crate::error::ConnectorError;
use crate::mcp::{self, CallOutcome, Connection, ListedTool};
use crate::naming;
use crate::risk::{self, Risk};
use crate::secret::Secret;

/// Where a connector's token comes from (the key store, in the host). Called on a blocking
/// thread each time the server starts.
pub type TokenSource = Arc<dyn Fn(&str) -> Result<Option<Secret>, String> + Send + Sync>;

/// Timing of a connector's life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SupervisorOptions {
    /// How long a start (spawn or connect, and the MCP handshake) may take.
    pub startup_timeout: Duration,
    /// How long one tool call may take.
    pub call_timeout: Duration,
    /// The first restart's delay; each further attempt doubles it, up to `backoff_max`.
    pub backoff_base: Duration,
    pub backoff_max: Duration,
    /// Restarts tried in a row before the connector is left failed (until next needed).
    pub max_restarts: u32,
    /// A server that ran this long before stopping starts its backoff afresh.
    pub healthy_after: Duration,
}

impl Default for SupervisorOptions {
    fn default() -> Self {
        Self {
            startup_timeout: Duration::from_secs(20),
            call_timeout: Duration::from_secs(120),
            backoff_base: Duration::from_millis(500),
            backoff_max: Duration::from_secs(30),
            max_restarts: 8,
            healthy_after: Duration::from_secs(60),
        }
    }
}

/// A connector's state, for people.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// Not started (nothing has needed it yet, or it was stopped).
    Stopped,
    Starting,
    Running,
    /// It stopped on its own and is being restarted.
    Restarting {
        attempt: u32,
        reason: String,
    },
    /// It could not start; the next session that needs it tries again.
    Failed {
        reason: String,
    },
    Disabled,
}

impl Status {
    pub fn as_str(&self) -> &'static str {
        match self {
            Status::Stopped => "stopped",
            Status::Starting => "starting",
            Status::Running => "running",
            Status::Restarting { .. } => "restarting",
            Status::Failed { .. } => "failed",
            Status::Disabled => "disabled",
        }
    }

    pub fn reason(&self) -> Option<&str> {
        match self {
            Status::Restarting { reason, .. } | Status::Failed { reason } => Some(reason),
            _ => None,
        }
    }
}

/// A server tool with what Paddock makes of it.
#[derive(Debug, Clone, PartialEq)]
pub struct ConnectorTool {
    pub tool: ListedTool,
    /// The name offered to the model, or why the tool is not offered.
    pub model_name: Result<String, String>,
    /// What the server's annotations claim.
    pub claimed: Risk,
    /// The risk in force (see [`crate::risk`]).
    pub risk: Risk,
}

/// A connector's state and tools, readable without waiting.
#[derive(Debug, Clone)]
struct View {
    status: Status,
    tools: Vec<ConnectorTool>,
    pid: Option<u32>,
    restarts: u32,
}

struct Live {
    peer: Peer<RoleClient>,
}

/// One configured connector and its supervisor.
pub struct Connector {
    config: ConnectorConfig,
    tokens: TokenSource,
    options: SupervisorOptions,
    view: RwLock<View>,
    live: Mutex<Option<Live>>,
    /// Held while a start is under way, so one start serves every caller.
    starting: tokio::sync::Mutex<()>,
    /// Registered secrets see each token before use (the host's redactor).
    on_token: Arc<dyn Fn(&Secret) + Send + Sync>,
    stop: CancellationToken,
    /// Fires when a supervisor stops on purpose (tests and shutdown wait on it).
    stopped: Notify,
}

impl std::fmt::Debug for Connector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connector")
            .field("name", &self.config.name)
            .finish_non_exhaustive()
    }
}

impl Connector {
    pub fn new(
        config: ConnectorConfig,
        tokens: TokenSource,
        on_token: Arc<dyn Fn(&Secret) + Send + Sync>,
        options: SupervisorOptions,
    ) -> Arc<Self> {
        let status = if config.enabled {
            Status::Stopped
        } else {
            Status::Disabled
        };
        Arc::new(Self {
            config,
            tokens,
            options,
            view: RwLock::new(View {
                status,
                tools: Vec::new(),
                pid: None,
                restarts: 0,
            }),
            live: Mutex::new(None),
            starting: tokio::sync::Mutex::new(()),
            on_token,
            stop: CancellationToken::new(),
            stopped: Notify::new(),
        })
    }

    pub fn name(&self) -> &str {
        &self.config.name
    }

    pub fn config(&self) -> &ConnectorConfig {
        &self.config
    }

    pub fn status(&self) -> Status {
        self.read_view().status.clone()
    }

    /// The server's tools as last listed.
    pub fn tools(&self) -> Vec<ConnectorTool> {
        self.read_view().tools.clone()
    }

    /// The listed tool the model knows as `model_name`, if any.
    pub fn tool_by_model_name(&self, model_name: &str) -> Option<ConnectorTool> {
        self.read_view()
            .tools
            .iter()
            .find(|t| t.model_name.as_deref() == Ok(model_name))
            .cloned()
    }

    /// The stdio server's process id while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.read_view().pid
    }

    /// How many times the server was restarted after stopping on its own.
    pub fn restarts(&self) -> u32 {
        self.read_view().restarts
    }

    fn read_view(&self) -> std::sync::RwLockReadGuard<'_, View> {
        self.view.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn update(&self, change: impl FnOnce(&mut View)) {
        change(&mut self.view.write().unwrap_or_else(PoisonError::into_inner));
    }

    fn peer(&self) -> Option<Peer<RoleClient>> {
        self.live
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            .map(|l| l.peer.clone())
    }

    /// Starts the server unless it runs (or is being restarted). One start serves every
    /// caller; a failure is the connector's status until the next try.
    pub async fn ensure_started(self: &Arc<Self>) -> Result<(), ConnectorError> {
        if !self.config.enabled {
            return Err(ConnectorError::Disabled);
        }
        if self.stop.is_cancelled() {
            return Err(ConnectorError::Crashed(
                " (the host is shutting down)".into(),
            ));
        }
        let _guard = self.starting.lock().await;
        match self.status() {
            Status::Running => return Ok(()),
            Status::Restarting { attempt, reason } => {
                return Err(ConnectorError::Restarting { attempt, reason });
            }
            _ => {}
        }
        self.update(|v| v.status = Status::Starting);
        let tools_changed = Arc::new(Notify::new());
        match self.connect(Arc::clone(&tools_changed)).await {
            Ok(connection) => {
                tokio::spawn(Arc::clone(self).supervise(connection, tools_changed));
                Ok(())
            }
            Err(e) => {
                self.update(|v| {
                    v.status = Status::Failed {
                        reason: e.to_string(),
                    };
                });
                Err(e)
            }
        }
    }

    /// Connects and lists the tools; on success the connection is live.
    async fn connect(&self, tools_changed: Arc<Notify>) -> Result<Connection, ConnectorError> {
        let secret = if self.config.uses_secret() {
            let tokens = Arc::clone(&self.tokens);
            let name = self.config.name.clone();
            let token = tokio::task::spawn_blocking(move || tokens(&name))
                .await
                .map_err(|e| ConnectorError::KeyStore(e.to_string()))?
                .map_err(ConnectorError::KeyStore)?;
            let token = token.ok_or(ConnectorError::TokenMissing)?;
            (self.on_token)(&token);
            Some(token)
        } else {
            None
        };
        let connection = mcp::connect(
            &self.config,
            secret.as_ref(),
            tools_changed,
            self.options.startup_timeout,
        )
        .await?;
        let mut connection = connection;
        let listed = match mcp::list_tools(&connection.peer).await {
            Ok(listed) => listed,
            Err(e) => {
                connection.close().await;
                return Err(e);
            }
        };
        let tools = self.judge(listed);
        *self.live.lock().unwrap_or_else(PoisonError::into_inner) = Some(Live {
            peer: connection.peer.clone(),
        });
        self.update(|v| {
            v.status = Status::Running;
            v.tools = tools;
            v.pid = connection.pid;
        });
        Ok(connection)
    }

    fn judge(&self, listed: Vec<ListedTool>) -> Vec<ConnectorTool> {
        listed
            .into_iter()
            .map(|tool| {
                let user = self
                    .config
                    .risk
                    .get(&tool.name)
                    .or_else(|| self.config.risk.get("*"))
                    .copied();
                ConnectorTool {
                    model_name: naming::model_name(&self.config.name, &tool.name),
                    claimed: tool.hints.claimed(),
                    risk: risk::effective(tool.hints, user),
                    tool,
                }
            })
            .collect()
    }

    /// Runs while the connection lives: refreshes the tool list when the server says it
    /// changed, restarts the server with backoff when it stops on its own.
    async fn supervise(self: Arc<Self>, mut connection: Connection, mut changed: Arc<Notify>) {
        let mut attempt: u32 = 0;
        loop {
            let began = Instant::now();
            let ended = self.watch(&mut connection, &changed).await;
            *self.live.lock().unwrap_or_else(PoisonError::into_inner) = None;
            let Some(reason) = ended else {
                self.update(|v| {
                    v.status = Status::Stopped;
                    v.pid = None;
                });
                self.stopped.notify_waiters();
                return;
            };
            if began.elapsed() >= self.options.healthy_after {
                attempt = 0;
            }
            loop {
                attempt += 1;
                if attempt > self.options.max_restarts {
                    self.update(|v| {
                        v.status = Status::Failed {
                            reason: format!(
                                "it stopped and {} restarts failed: {reason}",
                                self.options.max_restarts
                            ),
                        };
                        v.pid = None;
                    });
                    return;
                }
                self.update(|v| {
                    v.status = Status::Restarting {
                        attempt,
                        reason: reason.clone(),
                    };
                    v.pid = None;
                });
                let delay = self
                    .options
                    .backoff_base
                    .saturating_mul(1 << (attempt - 1).min(16))
                    .min(self.options.backoff_max);
                tokio::select! {
                    () = self.stop.cancelled() => {
                        self.update(|v| v.status = Status::Stopped);
                        self.stopped.notify_waiters();
                        return;
                    }
                    () = tokio::time::sleep(delay) => {}
                }
                changed = Arc::new(Notify::new());
                match self.connect(Arc::clone(&changed)).await {
                    Ok(next) => {
                        connection = next;
                        self.update(|v| v.restarts += 1);
                        tracing::info!(connector = %self.config.name, attempt, "connector restarted");
                        break;
                    }
                    Err(e) => {
                        tracing::warn!(connector = %self.config.name, attempt, error = %e, "connector restart failed");
                    }
                }
            }
        }
    }

    /// Waits for the connection to end: `None` when it was stopped on purpose, else why it
    /// stopped.
    async fn watch(&self, connection: &mut Connection, changed: &Notify) -> Option<String> {
        loop {
            tokio::select! {
                () = self.stop.cancelled() => {
                    connection.close().await;
                    return None;
                }
                () = changed.notified() => {
                    match mcp::list_tools(&connection.peer).await {
                        Ok(listed) => {
                            let tools = self.judge(listed);
                            tracing::info!(connector = %self.config.name, tools = tools.len(), "tool list changed");
                            self.update(|v| v.tools = tools);
                        }
                        Err(e) => tracing::warn!(connector = %self.config.name, error = %e, "refreshing the tool list failed"),
                    }
                }
                _ = &mut connection.done => {
                    let stderr = mcp::stderr_note(&connection.stderr);
                    return Some(format!("it exited{stderr}"));
                }
            }
        }
    }

    /// Calls a server tool (by its server name). Starts the server when it is not running.
    pub async fn call(
        self: &Arc<Self>,
        tool: &str,
        arguments: &Value,
        cancel: &CancellationToken,
    ) -> Result<CallOutcome, ConnectorError> {
        if self.peer().is_none() {
            self.ensure_started().await?;
        }
        let peer = self.peer().ok_or_else(|| match self.status() {
            Status::Restarting { attempt, reason } => {
                ConnectorError::Restarting { attempt, reason }
            }
            Status::Failed { reason } => ConnectorError::StartFailed(reason),
            _ => ConnectorError::Stopped,
        })?;
        if !self.read_view().tools.iter().any(|t| t.tool.name == tool) {
            return Err(ConnectorError::UnknownTool(tool.to_owned()));
        }
        let timeout = self.options.call_timeout;
        tokio::select! {
            () = cancel.cancelled() => Err(ConnectorError::Cancelled),
            () = tokio::time::sleep(timeout) => Err(ConnectorError::TimedOut(timeout.as_secs())),
            outcome = mcp::call_tool(&peer, tool, arguments) => outcome,
        }
    }

    /// Stops the server (for good: a stopped connector does not start again). Waits until
    /// its supervisor has closed the connection.
    pub async fn stop(&self) {
        let running = self.peer().is_some();
        let waiting = self.stopped.notified();
        self.stop.cancel();
        if running {
            let _ = tokio::time::timeout(Duration::from_secs(5), waiting).await;
        }
        self.update(|v| {
            if !matches!(v.status, Status::Disabled) {
                v.status = Status::Stopped;
            }
            v.pid = None;
        });
    }
}
