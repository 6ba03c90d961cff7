//! A TEST DOUBLE of an OpenShell 0.1.x gateway: a tonic server speaking the real wire (mTLS,
//! OIDC bearer or plaintext) for the RPCs Paddock calls, with the gateway's validations and
//! real behaviour. Sandboxes are real: their processes run inside Paddock's local wall
//! (bubblewrap + Landlock + seccomp + the allow-list proxy), so tests through the OpenShell
//! wire exercise real enforcement and real denials. Never used on a production path.
//!
//! Knobs let tests break the gateway the ways a real one breaks: unhealthy, credentials
//! refused, bind mounts disabled, a shadowed mount, a canary that fails, a dropped attach
//! stream, a slow READY.

mod egress;
mod exec;
mod launch;
pub mod pki;
mod policy_rpc;
mod service;
mod state;
mod validate;

use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use openshell_proto::datamodel::Provider;
use openshell_proto::prost_types;
use openshell_proto::v1::open_shell_server::OpenShellServer;
use openshell_proto::v1::{SandboxLogLine, SandboxPhase, ServiceStatus};
use tokio_stream::wrappers::TcpListenerStream;
use tokio_util::sync::CancellationToken;
use tonic::transport::{Certificate, Identity, Server, ServerTlsConfig};

pub use launch::{Mount, shell_quote};
pub use pki::{Registration, TestPki, register_gateway};

use service::DoubleService;
use state::State;

/// The gateway version the double reports.
pub const DOUBLE_VERSION: &str = "0.1.5-double";
/// The largest message the double decodes (the gateway's limit).
pub const MAX_DECODE_BYTES: usize = 1024 * 1024;

pub(crate) fn now_timestamp() -> prost_types::Timestamp {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    prost_types::Timestamp {
        seconds: i64::try_from(now.as_secs()).unwrap_or(i64::MAX),
        nanos: i32::try_from(now.subsec_nanos()).unwrap_or(0),
    }
}

/// How the double is set up. Start from [`DoubleConfig::new`].
#[derive(Debug, Clone)]
pub struct DoubleConfig {
    /// Serve TLS with this PKI and require the client certificate (unless `bearer_token`).
    pub tls: Option<TestPki>,
    /// Require `authorization: Bearer <token>` on every user call (OIDC mode).
    pub bearer_token: Option<String>,
    /// `[openshell.drivers.<d>] allow_driver_config`.
    pub allow_driver_config: bool,
    /// `[openshell.drivers.<d>] enable_bind_mounts`.
    pub enable_bind_mounts: bool,
    /// The compute driver reported and expected in `driver_config` (`docker`).
    pub driver: String,
    /// Where each sandbox's host folder is made.
    pub state_dir: PathBuf,
    /// The `paddock-wall` launcher and bubblewrap.
    pub wall: PathBuf,
    pub bwrap: PathBuf,
    /// Names the sandbox proxy resolves, to the test's own servers (nothing else resolves).
    pub hosts: BTreeMap<String, Vec<IpAddr>>,
}

impl DoubleConfig {
    /// Plaintext, bind mounts allowed, docker driver, the workspace's `paddock-wall`.
    pub fn new(state_dir: PathBuf) -> Self {
        Self {
            tls: None,
            bearer_token: None,
            allow_driver_config: true,
            enable_bind_mounts: true,
            driver: "docker".into(),
            state_dir,
            wall: crate::binaries::paddock_wall(),
            bwrap: PathBuf::from("/usr/bin/bwrap"),
            hosts: BTreeMap::new(),
        }
    }
}

/// Test knobs, changeable while the double runs.
#[derive(Debug)]
pub struct Knobs {
    health: Mutex<ServiceStatus>,
    reject_credentials: Mutex<bool>,
    ready_delay: Mutex<Duration>,
    /// `true` while new sandboxes are held in PROVISIONING (see `hold_launches`).
    held: tokio::sync::watch::Sender<bool>,
    shadowed: Mutex<Vec<String>>,
    exposed: Mutex<Vec<String>>,
    attach_streams: Mutex<Vec<CancellationToken>>,
}

impl Default for Knobs {
    fn default() -> Self {
        Self {
            health: Mutex::new(ServiceStatus::Healthy),
            reject_credentials: Mutex::new(false),
            ready_delay: Mutex::new(Duration::ZERO),
            held: tokio::sync::watch::Sender::new(false),
            shadowed: Mutex::default(),
            exposed: Mutex::default(),
            attach_streams: Mutex::default(),
        }
    }
}

fn get<T: Clone>(m: &Mutex<T>) -> T {
    m.lock().unwrap_or_else(PoisonError::into_inner).clone()
}

fn set<T>(m: &Mutex<T>, value: T) {
    *m.lock().unwrap_or_else(PoisonError::into_inner) = value;
}

/// A running gateway double on a loopback port.
pub struct GatewayDouble {
    address: SocketAddr,
    tls: bool,
    state: Arc<State>,
    knobs: Arc<Knobs>,
    shutdown: CancellationToken,
}

impl std::fmt::Debug for GatewayDouble {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GatewayDouble")
            .field("address", &self.address)
            .finish_non_exhaustive()
    }
}

impl GatewayDouble {
    /// Binds `127.0.0.1:0` and serves until dropped.
    pub async fn start(config: DoubleConfig) -> std::io::Result<Self> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let address = listener.local_addr()?;
        let state = Arc::new(State::default());
        let knobs = Arc::new(Knobs::default());
        let shutdown = CancellationToken::new();
        let mut builder = Server::builder();
        let tls = config.tls.is_some();
        if let Some(pki) = &config.tls {
            let tls_config = ServerTlsConfig::new()
                .identity(Identity::from_pem(
                    &pki.server_cert_pem,
                    &pki.server_key_pem,
                ))
                .client_ca_root(Certificate::from_pem(&pki.ca_pem))
                .client_auth_optional(config.bearer_token.is_some());
            builder = builder.tls_config(tls_config).map_err(|e| {
                std::io::Error::other(format!("the double's TLS configuration: {e}"))
            })?;
        }
        let service = DoubleService::new(config, state.clone(), knobs.clone());
        let server = OpenShellServer::new(service).max_decoding_message_size(MAX_DECODE_BYTES);
        let stop = shutdown.clone();
        tokio::spawn(async move {
            let result = builder
                .add_service(server)
                .serve_with_incoming_shutdown(
                    TcpListenerStream::new(listener),
                    stop.cancelled_owned(),
                )
                .await;
            if let Err(e) = result {
                tracing::warn!(error = %e, "the gateway double stopped");
            }
        });
        Ok(Self {
            address,
            tls,
            state,
            knobs,
            shutdown,
        })
    }

    /// `https://127.0.0.1:PORT` (TLS) or `http://127.0.0.1:PORT`.
    pub fn endpoint(&self) -> String {
        let scheme = if self.tls { "https" } else { "http" };
        format!("{scheme}://{}", self.address)
    }

    /// Knob: what Health reports.
    pub fn set_health(&self, status: ServiceStatus) {
        set(&self.knobs.health, status);
    }

    /// Knob: refuse every user call with UNAUTHENTICATED (credentials no longer accepted).
    pub fn reject_credentials(&self, reject: bool) {
        set(&self.knobs.reject_credentials, reject);
    }

    /// Knob: how long new sandboxes stay PROVISIONING.
    pub fn set_ready_delay(&self, delay: Duration) {
        set(&self.knobs.ready_delay, delay);
    }

    /// Knob: new sandboxes stay PROVISIONING, nothing of them launched, until
    /// [`GatewayDouble::release_launches`] (after the ready delay). A test that must act between
    /// the gateway taking a create request and its launch holds them, instead of racing a
    /// delay a loaded machine may overrun.
    pub fn hold_launches(&self) {
        self.knobs.held.send_replace(true);
    }

    /// Knob: launches held by [`GatewayDouble::hold_launches`] go on.
    pub fn release_launches(&self) {
        self.knobs.held.send_replace(false);
    }

    /// Knob: new sandboxes get an empty tmpfs over these mount targets (an image path that
    /// shadows a bind mount).
    pub fn shadow_mounts(&self, targets: &[&str]) {
        set(
            &self.knobs.shadowed,
            targets.iter().map(|t| (*t).to_owned()).collect(),
        );
    }

    /// Knob: new sandboxes may also read these host paths (a wall with a hole, so a canary
    /// fails).
    pub fn expose_paths(&self, paths: &[&str]) {
        set(
            &self.knobs.exposed,
            paths.iter().map(|t| (*t).to_owned()).collect(),
        );
    }

    /// Knob: cuts every open `ExecSandboxInteractive` stream with UNAVAILABLE (the sandbox
    /// stays). Returns how many were cut.
    pub fn drop_attach_streams(&self) -> usize {
        let streams: Vec<CancellationToken> = std::mem::take(
            &mut *self
                .knobs
                .attach_streams
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        );
        let live = streams.iter().filter(|t| !t.is_cancelled()).count();
        for token in streams {
            token.cancel();
        }
        live
    }

    /// Names of the sandboxes the double holds.
    pub fn sandbox_names(&self) -> Vec<String> {
        self.state.lock().sandboxes.keys().cloned().collect()
    }

    /// A sandbox's phase, if it exists.
    pub fn phase(&self, name: &str) -> Option<SandboxPhase> {
        self.state.lock().sandboxes.get(name).map(|r| r.phase)
    }

    /// A sandbox's `metadata.id`.
    pub fn sandbox_id(&self, name: &str) -> Option<String> {
        self.state.lock().sandboxes.get(name).map(|r| r.id.clone())
    }

    /// A sandbox's labels.
    pub fn labels(&self, name: &str) -> Option<BTreeMap<String, String>> {
        self.state
            .lock()
            .sandboxes
            .get(name)
            .map(|r| r.labels.clone())
    }

    /// The mounts a sandbox was created with (its `driver_config`, as validated).
    pub fn mounts(&self, name: &str) -> Vec<Mount> {
        self.state
            .lock()
            .sandboxes
            .get(name)
            .and_then(|r| r.layout.as_ref().map(|l| l.mounts.clone()))
            .unwrap_or_default()
    }

    /// A sandbox's log lines.
    pub fn logs(&self, name: &str) -> Vec<SandboxLogLine> {
        self.state
            .lock()
            .sandboxes
            .get(name)
            .map(|r| r.logs.clone())
            .unwrap_or_default()
    }

    /// The providers the double holds.
    pub fn providers(&self) -> Vec<Provider> {
        self.state.lock().providers.values().cloned().collect()
    }

    /// For each UpdateConfig received: whether it asked for the global scope.
    pub fn update_scopes(&self) -> Vec<bool> {
        self.state.lock().update_scopes.clone()
    }

    /// Creates a sandbox as another client (another Paddock run) would have, running
    /// `command`, with `labels`. For orphan tests.
    pub fn adopt_foreign_sandbox(&self, name: &str, labels: BTreeMap<String, String>) {
        let mut memory = self.state.lock();
        let id = uuid::Uuid::new_v4().to_string();
        memory.sandboxes.insert(
            name.to_owned(),
            state::Record {
                id,
                name: name.to_owned(),
                labels,
                annotations: BTreeMap::new(),
                spec: Default::default(),
                policy: Default::default(),
                policy_version: 1,
                phase: SandboxPhase::Ready,
                conditions: Vec::new(),
                exit_code: None,
                layout: None,
                logs: Vec::new(),
                drafts: Vec::new(),
                draft_version: 0,
                stop: CancellationToken::new(),
                deleting: false,
            },
        );
        drop(memory);
        self.state.touch();
    }
}

impl Drop for GatewayDouble {
    fn drop(&mut self) {
        self.shutdown.cancel();
        for record in self.state.lock().sandboxes.values() {
            record.stop.cancel();
        }
        for token in self
            .knobs
            .attach_streams
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
        {
            token.cancel();
        }
    }
}
