//! [`Host`]: the composition root every front end calls (the CLI, the server, the desktop
//! shell). It owns the machine config and paths, the stores, the event bus and its durable
//! journal, the model client and the providers; sessions are in `sessions.rs`, the machine's
//! other resources (settings, audit, models, sandbox status, reaping) in `machine.rs`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use agent::{AgentConfig, EventBus, SessionDeps, ToolRegistry};
use audit_store::AuditStore;
use model_client::{ApiKey, KeyStoreKind, ModelClient};
use protocol::ProviderKind;
use sandbox_provider::SandboxProvider;
use session_store::{SqliteEventLog, SqliteSessionStore};

use paddock_connectors::{ConnectorSet, SupervisorOptions};

use crate::audit_sink::AuditSink;
use crate::config::MachineConfig;
use crate::connectors::{self, Redactions, SessionConnectors};
use crate::error::HostError;
use crate::inbox::Inbox;
use crate::journal::{EventStream, Journal};
use crate::lease::Leases;
use crate::paths::Paths;
use crate::probes::{MachineProbes, SystemMachine};
use crate::sessions::Running;
use crate::wiring::{self, Helpers, SecretValues};

/// How far a live reader may fall behind before it is caught up from the event log.
pub const DEFAULT_LIVE_CAPACITY: usize = 65_536;

/// How to open a [`Host`].
#[derive(Debug, Clone)]
pub struct HostOptions {
    pub paths: Paths,
    /// The tool-runner and wall launcher; default: [`Helpers::resolve`] of the config.
    pub helpers: Option<Helpers>,
    /// Events a live reader may fall behind by (default [`DEFAULT_LIVE_CAPACITY`]).
    pub live_capacity: usize,
    /// Extra host-side tools offered to every session (connectors).
    pub tools: Option<ToolRegistry>,
    /// Most model requests per turn (default: the agent's).
    pub max_steps: Option<u32>,
    /// How the machine is probed (status, setup) and OpenShell found; default: the real
    /// machine ([`SystemMachine`]).
    pub probes: Option<Arc<dyn MachineProbes>>,
    /// The key store when the user's config does not name one (the built-in default is
    /// `env`; the desktop app uses the OS keychain).
    pub default_key_store: Option<KeyStoreKind>,
    /// Timing of the connectors' supervisors (default: [`SupervisorOptions::default`]).
    pub connector_options: SupervisorOptions,
}

impl HostOptions {
    pub fn new(paths: Paths) -> Self {
        Self {
            paths,
            helpers: None,
            live_capacity: DEFAULT_LIVE_CAPACITY,
            tools: None,
            max_steps: None,
            probes: None,
            default_key_store: None,
            connector_options: SupervisorOptions::default(),
        }
    }
}

/// The machine's Paddock: sessions, approvals, settings, audit, models, sandbox status.
/// Cheap to clone (one shared inner state).
#[derive(Clone)]
pub struct Host {
    pub(crate) inner: Arc<Inner>,
}

impl std::fmt::Debug for Host {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Host")
            .field("state_dir", &self.inner.paths.state_dir)
            .finish_non_exhaustive()
    }
}

pub(crate) struct Inner {
    pub(crate) paths: Paths,
    pub(crate) helpers: Helpers,
    pub(crate) config: Arc<RwLock<MachineConfig>>,
    pub(crate) store: Arc<SqliteSessionStore>,
    pub(crate) log: SqliteEventLog,
    pub(crate) audit: Arc<AuditSink>,
    pub(crate) inbox: Arc<Inbox>,
    pub(crate) bus: EventBus,
    pub(crate) leases: Leases,
    pub(crate) tools: ToolRegistry,
    pub(crate) max_steps: Option<u32>,
    pub(crate) probes: Arc<dyn MachineProbes>,
    pub(crate) default_key_store: Option<KeyStoreKind>,
    /// The sessions this process runs.
    pub(crate) running: Mutex<HashMap<String, Arc<Running>>>,
    /// One provider per wall kind (sessions with secrets get their own).
    pub(crate) providers: Mutex<HashMap<ProviderKind, Arc<dyn SandboxProvider>>>,
    /// The model client, built on first use (a missing key is not an error until then).
    pub(crate) model: tokio::sync::Mutex<Option<Arc<dyn ModelClient>>>,
    /// Every secret registered for redaction (model keys, secret values): registered again
    /// with each read connection of the audit trail, so exports are redacted too.
    pub(crate) secrets: Arc<Mutex<Vec<ApiKey>>>,
    /// The machine's connectors (`[[connectors]]`), started when a session needs them.
    pub(crate) connectors: Arc<ConnectorSet>,
    /// Connector tokens in use, cleaned from tool results and errors.
    pub(crate) redactions: Redactions,
}

/// `config` with the front end's key store when the user's file names none.
fn with_default_key_store(
    mut config: MachineConfig,
    default: Option<KeyStoreKind>,
) -> MachineConfig {
    if let Some(kind) = default
        && !config.models.key_store_explicit
    {
        config.models.key_store = kind;
    }
    config
}

/// Creates `dir` (and its parents) when missing; a folder this creates is owner-only (it holds
/// the audit trail, the sessions, the API token and the key file).
fn create_private_dir(dir: &std::path::Path) -> Result<(), HostError> {
    use std::os::unix::fs::DirBuilderExt;
    if dir.is_dir() {
        return Ok(());
    }
    if let Some(parent) = dir.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| HostError::io(format!("creating {}", parent.display()), e))?;
    }
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(HostError::io(format!("creating {}", dir.display()), e)),
    }
}

impl Host {
    /// Opens the machine's Paddock: reads the config (refusing a bad one, naming the key),
    /// opens the stores (creating the state folder), and wires the event bus to the audit
    /// trail, the event log and the approvals inbox. No model key is needed yet.
    pub async fn open(options: HostOptions) -> Result<Self, HostError> {
        let paths = options.paths;
        let config = with_default_key_store(
            MachineConfig::load(&paths.config_file())?,
            options.default_key_store,
        );
        create_private_dir(&paths.state_dir)?;
        let helpers = options.helpers.unwrap_or_else(|| Helpers::resolve(&config));
        let (store, log, audit) = {
            let paths = paths.clone();
            let durability = config.audit_durability;
            tokio::task::spawn_blocking(move || {
                let store = SqliteSessionStore::open(&paths.sessions_db())?;
                let log = SqliteEventLog::open(&paths.events_db())?;
                let audit = AuditStore::open_with(
                    paths.audit_db(),
                    &audit_store::OpenOptions {
                        durability: durability.store_durability(),
                    },
                )?;
                Ok::<_, HostError>((store, log, audit))
            })
            .await
            .map_err(|e| HostError::Internal(format!("opening the stores: {e}")))??
        };
        let audit = Arc::new(AuditSink::new(audit));
        let inbox = Arc::new(Inbox::default());
        let journal = Journal {
            audit: Arc::clone(&audit),
            log: log.clone(),
            inbox: Arc::clone(&inbox),
        };
        let redactions = Redactions::default();
        let bus = EventBus::new(Arc::new(journal), options.live_capacity)
            .with_scrubber(Arc::new(redactions.clone()));
        let leases = Leases::new(paths.leases_dir());
        let secrets = Arc::new(Mutex::new(Vec::new()));
        let connectors = config.connectors.clone();
        let config = Arc::new(RwLock::new(config));
        let set = Arc::new(connectors::connector_set(
            connectors::token_source(Arc::clone(&config)),
            audit.store(),
            Arc::clone(&secrets),
            redactions.clone(),
            options.connector_options,
        ));
        set.sync(&connectors).await;
        let inner = Inner {
            helpers,
            config,
            store: Arc::new(store),
            log,
            audit,
            inbox,
            bus,
            leases,
            tools: options.tools.unwrap_or_else(ToolRegistry::sandbox_tools),
            max_steps: options.max_steps,
            probes: options.probes.unwrap_or_else(|| Arc::new(SystemMachine)),
            default_key_store: options.default_key_store,
            running: Mutex::new(HashMap::new()),
            providers: Mutex::new(HashMap::new()),
            model: tokio::sync::Mutex::new(None),
            secrets,
            connectors: set,
            redactions,
            paths,
        };
        Ok(Self {
            inner: Arc::new(inner),
        })
    }

    pub fn paths(&self) -> &Paths {
        &self.inner.paths
    }

    pub fn helpers(&self) -> &Helpers {
        &self.inner.helpers
    }

    /// How this host probes the machine.
    pub fn probes(&self) -> Arc<dyn MachineProbes> {
        Arc::clone(&self.inner.probes)
    }

    /// The machine config in force (updates through [`Host::update_settings`] replace it).
    pub fn config(&self) -> MachineConfig {
        self.inner
            .config
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    pub(crate) fn replace_config(&self, config: MachineConfig) {
        let config = with_default_key_store(config, self.inner.default_key_store);
        *self
            .inner
            .config
            .write()
            .unwrap_or_else(PoisonError::into_inner) = config;
        // Parts built from the old config are rebuilt on next use.
        self.inner
            .providers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
        if let Ok(mut model) = self.inner.model.try_lock() {
            *model = None;
        }
        // Connectors whose entry changed are stopped and started anew when next needed.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let set = Arc::clone(&self.inner.connectors);
            let wanted = self.config().connectors;
            runtime.spawn(async move { set.sync(&wanted).await });
        }
    }

    /// The model client, built (and its key registered for redaction) on first use.
    pub async fn model(&self) -> Result<Arc<dyn ModelClient>, HostError> {
        let mut slot = self.inner.model.lock().await;
        if let Some(model) = slot.as_ref() {
            return Ok(Arc::clone(model));
        }
        let (client, key) = wiring::model_client(&self.config()).await?;
        if let Some(key) = key {
            self.register_secret(key).await?;
        }
        *slot = Some(Arc::clone(&client));
        Ok(client)
    }

    /// Registers a secret (a key, a secret's value) with the audit trail's redactor.
    pub(crate) async fn register_secret(&self, secret: ApiKey) -> Result<(), HostError> {
        let store = self.inner.audit.store();
        let value = secret.clone();
        tokio::task::spawn_blocking(move || {
            store
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .register_secret(value.expose_secret())
        })
        .await
        .map_err(|e| HostError::Internal(format!("registering a secret: {e}")))??;
        if let Some(secret) = paddock_connectors::Secret::new(secret.expose_secret()) {
            self.inner.redactions.add(&secret);
        }
        let mut secrets = self
            .inner
            .secrets
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if !secrets
            .iter()
            .any(|s| s.expose_secret() == secret.expose_secret())
        {
            secrets.push(secret);
        }
        Ok(())
    }

    /// The shared provider of `kind` (built on first use).
    pub fn provider(&self, kind: ProviderKind) -> Result<Arc<dyn SandboxProvider>, HostError> {
        let mut providers = self
            .inner
            .providers
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(provider) = providers.get(&kind) {
            return Ok(Arc::clone(provider));
        }
        let provider = wiring::provider(
            kind,
            &self.config(),
            self.paths(),
            self.helpers(),
            self.inner.probes.as_ref(),
        )?;
        providers.insert(kind, Arc::clone(&provider));
        Ok(provider)
    }

    /// A provider for a session that was given secrets: its own OpenShell provider whose
    /// sandboxes get the secrets as providers (placeholders inside). Other walls cannot
    /// inject placeholders and refuse.
    pub(crate) async fn provider_with_secrets(
        &self,
        kind: ProviderKind,
        secrets: &[String],
    ) -> Result<Arc<dyn SandboxProvider>, HostError> {
        if secrets.is_empty() {
            return self.provider(kind);
        }
        if kind != ProviderKind::Openshell {
            return Err(HostError::SecretRefused {
                name: secrets.join(", "),
                reason: format!(
                    "the {} wall cannot inject secret placeholders (only OpenShell's gateway \
                     can), and Paddock never puts a secret's value inside a sandbox; use the \
                     openshell provider for this session, or leave the secret out",
                    kind.as_str()
                ),
            });
        }
        let config = self.config();
        let values: SecretValues = wiring::secret_values(&config, secrets).await?;
        for value in values.values() {
            self.register_secret(value.clone()).await?;
        }
        let provider = wiring::openshell_provider_in(
            &config,
            self.paths(),
            self.helpers(),
            &values,
            self.inner.probes.environment(),
        )?;
        Ok(Arc::new(provider))
    }

    /// The parts a session is built from.
    pub(crate) fn deps(
        &self,
        model: Arc<dyn ModelClient>,
        provider: Arc<dyn SandboxProvider>,
        tools: ToolRegistry,
    ) -> SessionDeps {
        let config = self.config();
        let mut agent_config = AgentConfig::new(config.models.model);
        if let Some(steps) = self.inner.max_steps {
            agent_config.max_steps = steps;
        }
        SessionDeps {
            model,
            provider,
            store: self.inner.store.clone(),
            bus: self.inner.bus.clone(),
            tools,
            config: agent_config,
        }
    }

    /// The tools of a session with these settings: the host's registry with the connectors'
    /// tools and `web_fetch`. Starts every enabled connector not running (each bounded by its
    /// start timeout); returns what the session's user must be told (`notice` events):
    /// connectors that could not start, project files' settings that were ignored.
    pub(crate) async fn session_tools(
        &self,
        settings: &protocol::SessionSettings,
    ) -> (ToolRegistry, Vec<(String, String)>) {
        let config = self.config();
        let mut notices = Vec::new();
        for (name, error) in self.inner.connectors.start_enabled().await {
            let message = self.inner.redactions.redact(&format!(
                "the connector `{name}` could not start, so its tools are not offered in this \
                 session: {error}"
            ));
            tracing::warn!("{message}");
            notices.push((format!("connector:{name}"), message));
        }
        let web_fetch = match connectors::session_web_fetch(settings, &config) {
            Ok(fetch) => fetch,
            Err(e) => {
                notices.push((
                    "connector:web_fetch".to_owned(),
                    format!("web_fetch is not offered in this session: {e}"),
                ));
                None
            }
        };
        let scan_settings = settings.clone();
        let ignored = tokio::task::spawn_blocking(move || crate::project::scan(&scan_settings))
            .await
            .unwrap_or_default();
        notices.extend(ignored.iter().map(crate::project::IgnoredSetting::notice));
        let source = SessionConnectors::new(
            Arc::clone(&self.inner.connectors),
            web_fetch,
            Arc::clone(&self.inner.config),
            self.inner.redactions.clone(),
        );
        let tools = self.inner.tools.clone().with_host_source(Arc::new(source));
        (tools, notices)
    }

    /// A session's events after `after` (from the durable log), then live as they happen
    /// (for sessions this process runs). Each event once, in order; see [`EventStream`].
    pub fn events(&self, session_id: &str, after: u64) -> EventStream {
        EventStream::new(
            session_id.to_owned(),
            self.inner.log.clone(),
            self.inner.bus.subscribe(),
            after,
        )
    }

    /// Marks `session_id` as run by this process until the lease is dropped (for sandboxes
    /// built outside a session, like `machine sandbox check`'s): reaping leaves them alone.
    pub fn hold_session(&self, session_id: &str) -> Result<crate::lease::SessionLease, HostError> {
        self.inner.leases.acquire(session_id)
    }

    /// The last logged event number of a session (0 when it has none): a client that shows
    /// only what happens from now on reads events after it.
    pub async fn last_event_seq(&self, session_id: &str) -> Result<u64, HostError> {
        Ok(self.inner.log.last_seq(session_id).await?.unwrap_or(0))
    }

    /// A live view of every event of every session this process runs (no replay; may lag).
    pub fn subscribe_all(&self) -> tokio::sync::broadcast::Receiver<protocol::Event> {
        self.inner.bus.subscribe()
    }

    /// Closes every session this process runs: running turns are cancelled (every call
    /// committed as cancelled), sandboxes torn down, `session_closed` recorded; the sessions
    /// stay stored and resume after a restart.
    pub async fn shutdown(&self) {
        let running: Vec<Arc<Running>> = self
            .inner
            .running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .drain()
            .map(|(_, running)| running)
            .collect();
        for session in &running {
            let _ = session.session.submit(protocol::Op::Close);
        }
        for session in running {
            session.session.closed().await;
        }
        self.inner.connectors.shutdown().await;
    }

    /// The machine's connectors (status, tools; see the `connectors` API).
    pub fn connector_set(&self) -> &Arc<ConnectorSet> {
        &self.inner.connectors
    }
}
