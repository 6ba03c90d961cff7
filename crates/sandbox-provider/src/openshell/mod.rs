//! The `openshell` provider: one NVIDIA OpenShell sandbox per session, driven over the 0.1.x
//! gRPC wire with tonic and rustls.
//!
//! A session's sandbox is created lazily (on the first tool call that needs it), rendered by
//! `sandbox-policy`, awaited until READY, and reached through one `ExecSandboxInteractive`
//! stream running `tool-runner attach` (re-attached after a loss, the sandbox kept). Every
//! granted folder is verified from inside and the wall's canaries run before the first call.
//! When the gateway cannot be used the session is refused with the reason; it never falls back.

mod attest;
pub mod discovery;
pub mod exec;
pub mod gateway;
pub mod ocsf;
mod private_home;
mod rules;
mod session;
mod status;
pub mod transport;

use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use async_trait::async_trait;
use futures::StreamExt;
use openshell_proto::v1::{SandboxPhase, ServiceStatus};
use protocol::{MachineSandboxStatus, ProviderKind};
use sandbox_policy::{
    CredentialEntry, FolderSpec, HostRule, MountDriver, Owner, ProtectedMountSpec, RUNNER_SOCKET,
    SandboxData, SecretSpec, SecretValue, SessionSpec,
};

use crate::attestation::config_hash;
use crate::credentials;
use crate::error::ProviderError;
use crate::grant_pins::PinnedMount;
use crate::grant_pins::pin_grants;
use crate::protected::ProtectedMount;
use crate::sandbox::{Sandbox, SandboxProvider, SandboxRequest};
use crate::spawn;
use paddock_wall::pinned::FolderIdentity;

pub use discovery::{BearerToken, DiscoveryError, GatewayTarget, HostEnvironment, TlsMode};
pub use exec::{ExecOutcome, ExecSpec};
pub use gateway::Gateway;
/// The OpenShell release whose wire Paddock speaks (any gateway of its minor line works).
pub use openshell_proto::OPENSHELL_WIRE_VERSION;
pub use private_home::{HOMES_DIR, SSH_PROXY_PATH, SSH_PROXY_SCRIPT};
pub use session::{OpenShellSandbox, PendingRule};
pub use transport::GatewayError;

/// Label on every sandbox the machine creates; orphans are found by it.
pub const MACHINE_LABEL: &str = "paddock.machine";
/// Label naming the session a sandbox belongs to (its owner is the process running it).
pub const SESSION_LABEL: &str = "paddock.session";
/// Label on sandboxes created with `keep`: never reaped as orphans.
pub const KEEP_LABEL: &str = "paddock.keep";
/// Annotation holding the attestation's config hash (a kept sandbox is reused only when equal).
pub const CONFIG_ANNOTATION: &str = "paddock.config-hash";

/// How many orphan deletions are awaited at once.
const REAP_CONCURRENCY: usize = 16;

/// What a session is told when its sandbox was recreated to change its folders.
pub const RESTART_NOTE: &str = "The sandbox was recreated to change its folders (OpenShell fixes filesystem rules when a \
     sandbox is created). Shell state was lost: working-directory changes, exported variables \
     and background processes from earlier commands are gone; files in the folders are kept.";

/// Machine-level configuration of the OpenShell provider.
#[derive(Debug, Clone)]
pub struct OpenShellConfig {
    /// Variables and roots for gateway discovery and secret values.
    pub environment: HostEnvironment,
    /// This machine's id (a Kubernetes label value): orphans are found by it.
    pub machine_id: String,
    /// The sandbox image, pinned by digest.
    pub image: String,
    /// The host folder holding `tool-runner` (mounted read-only at the same path).
    pub runner_dir: PathBuf,
    /// A host folder of Paddock's own, outside every grant (the attestation's sentinel).
    pub state_dir: PathBuf,
    /// Where protected files a session planted are moved (one folder per session), outside
    /// every grant. Default: `quarantine` beside `state_dir`.
    pub quarantine_dir: PathBuf,
    /// The user's home, which must be absent inside.
    pub user_home: PathBuf,
    pub data: SandboxData,
    /// How long creating a sandbox may take (an image pull can be slow).
    pub ready_timeout: Duration,
    /// Secrets every session of this machine may use (values read from `environment`).
    pub secrets: Vec<SecretSpec>,
    /// Leave sandboxes running at close.
    pub keep: bool,
}

impl OpenShellConfig {
    /// The production configuration: this process's environment and the shipped data.
    pub fn new(
        machine_id: impl Into<String>,
        image: impl Into<String>,
        runner_dir: PathBuf,
        state_dir: PathBuf,
        user_home: PathBuf,
    ) -> Result<Self, ProviderError> {
        let quarantine_dir = state_dir
            .parent()
            .map_or_else(|| state_dir.join("quarantine"), |p| p.join("quarantine"));
        Ok(Self {
            environment: HostEnvironment::from_process(),
            machine_id: machine_id.into(),
            image: image.into(),
            runner_dir,
            state_dir,
            quarantine_dir,
            user_home,
            data: SandboxData::builtin()
                .map_err(|e| ProviderError::InvalidRequest(e.to_string()))?,
            ready_timeout: Duration::from_secs(300),
            secrets: Vec::new(),
            keep: false,
        })
    }
}

/// What a session's render needs besides the request, found by the provider on the host.
struct Parts<'a> {
    driver: MountDriver,
    folders: Vec<FolderSpec>,
    entries: &'a [CredentialEntry],
    private_home: Option<&'a Path>,
    protected: &'a [ProtectedMount],
}

/// Per-session choices beyond the [`SandboxRequest`].
#[derive(Debug, Clone, Default)]
pub struct SessionOptions {
    /// Secrets for this session, in addition to the machine's.
    pub secrets: Vec<SecretSpec>,
    /// Leave this session's sandbox running at close (overrides the machine's `keep`).
    pub keep: Option<bool>,
}

/// The OpenShell provider.
#[derive(Debug)]
pub struct OpenShellProvider {
    config: OpenShellConfig,
    /// Credential-share entries this machine offers (each off unless a session enables it).
    credentials: Vec<CredentialEntry>,
    gateway: tokio::sync::Mutex<Option<Gateway>>,
}

fn unavailable(reason: impl Into<String>) -> ProviderError {
    ProviderError::Unavailable {
        reason: reason.into(),
    }
}

/// A create error the operator can fix, in plain words.
fn create_refusal(error: &GatewayError) -> ProviderError {
    let text = error.to_string();
    let lower = text.to_ascii_lowercase();
    if [
        "allow_driver_config",
        "enable_bind_mounts",
        "admission",
        "bind mount",
    ]
    .iter()
    .any(|w| lower.contains(w))
    {
        return unavailable(format!(
            "the OpenShell gateway does not allow bind mounts, so the session's folders cannot \
             reach a sandbox. In the gateway's gateway.toml set `allow_driver_config = true` and \
             `enable_bind_mounts = true` under [openshell.drivers.<driver>] and \
             `enabled = false` under [openshell.drivers.<driver>.resource_admission], then \
             restart the gateway (gateway said: {text})"
        ));
    }
    unavailable(format!("the gateway refused to create the sandbox: {text}"))
}

impl OpenShellProvider {
    /// A provider offering the built-in credential entries of `config.data` (`ssh`, `gh`,
    /// `aws`, `kube`); see [`OpenShellProvider::with_credentials`].
    pub fn new(config: OpenShellConfig) -> Self {
        let credentials = config
            .data
            .credential_names()
            .iter()
            .filter_map(|name| config.data.credential(name).ok())
            .collect();
        Self {
            config,
            credentials,
            gateway: tokio::sync::Mutex::new(None),
        }
    }

    /// Replaces the credential-share entries this machine offers: `sandbox-policy`'s
    /// built-ins (opted in to optional files or not) and the user's custom entries.
    pub fn with_credentials(mut self, entries: Vec<CredentialEntry>) -> Self {
        self.credentials = entries;
        self
    }

    pub fn config(&self) -> &OpenShellConfig {
        &self.config
    }

    /// The credential-share entries this machine offers.
    pub fn credentials(&self) -> &[CredentialEntry] {
        &self.credentials
    }

    /// A connected, healthy, authenticated gateway, or the refusal saying why not.
    pub async fn gateway(&self) -> Result<Gateway, ProviderError> {
        let mut slot = self.gateway.lock().await;
        let gateway = match slot.as_ref() {
            Some(gateway) => gateway.clone(),
            None => {
                let target = discovery::discover(&self.config.environment)
                    .map_err(|e| unavailable(e.to_string()))?;
                let gateway = Gateway::connect(target)
                    .await
                    .map_err(|e| unavailable(e.to_string()))?;
                *slot = Some(gateway.clone());
                gateway
            }
        };
        let health = gateway
            .health()
            .await
            .map_err(|e| unavailable(format!("the gateway's health check failed: {e}")))?;
        if health.status() != ServiceStatus::Healthy {
            return Err(unavailable(format!(
                "the OpenShell gateway at {} reports {} (version {})",
                gateway.target().endpoint,
                health.status().as_str_name(),
                health.version
            )));
        }
        gateway.current_user().await.map_err(|e| match e {
            GatewayError::Unauthenticated(why) => unavailable(format!(
                "the OpenShell gateway at {} did not accept Paddock's credentials ({}): {why}",
                gateway.target().endpoint,
                gateway.target().auth_description()
            )),
            other => unavailable(format!("checking who we are failed: {other}")),
        })?;
        Ok(gateway)
    }

    /// The bind-mount shape the gateway's driver takes (docker unless it says podman).
    async fn mount_driver(&self, gateway: &Gateway) -> Result<MountDriver, ProviderError> {
        let info = match gateway.gateway_info().await {
            Ok(info) => info,
            // Not an admin: the driver cannot be read; Docker is the common case.
            Err(GatewayError::PermissionDenied(_)) => return Ok(MountDriver::Docker),
            Err(e) => {
                return Err(unavailable(format!(
                    "reading the gateway's info failed: {e}"
                )));
            }
        };
        match info.compute_drivers.first().map(|d| d.name.as_str()) {
            None | Some("docker") => Ok(MountDriver::Docker),
            Some("podman") => Ok(MountDriver::Podman),
            Some(other) => Err(unavailable(format!(
                "the gateway's compute driver `{other}` has no host bind mounts, so the \
                 session's folders cannot reach a sandbox; use a docker or podman gateway"
            ))),
        }
    }

    /// Renders a session: folders with their owners, the enabled credential entries with
    /// their private home, the machine's and session's secrets (values from the host
    /// environment; a missing one is an error naming the variable).
    fn render(
        &self,
        request: &SandboxRequest,
        options: &SessionOptions,
        parts: Parts<'_>,
    ) -> Result<sandbox_policy::RenderedSandbox, ProviderError> {
        let Parts {
            driver,
            folders,
            entries,
            private_home,
            protected,
        } = parts;
        let invalid = |e: sandbox_policy::PolicyError| ProviderError::InvalidRequest(e.to_string());
        let extra_hosts = request
            .extra_hosts
            .iter()
            .map(|h| HostRule::parse_in("extra_hosts", h))
            .collect::<Result<Vec<_>, _>>()
            .map_err(invalid)?;
        let secrets: Vec<SecretSpec> = self
            .config
            .secrets
            .iter()
            .chain(&options.secrets)
            .cloned()
            .collect();
        let values: BTreeMap<String, SecretValue> = secrets
            .iter()
            .filter_map(|s| {
                let value = self.config.environment.var(&s.name)?;
                Some((s.name.clone(), SecretValue::new(value)))
            })
            .collect();
        let spec = SessionSpec {
            session_id: request.session_id.clone(),
            machine_id: self.config.machine_id.clone(),
            folders,
            cwd: request.cwd.clone(),
            network: request.network_profile,
            extra_hosts,
            credentials: entries.to_vec(),
            private_home: private_home.map(|p| p.display().to_string()),
            runner_dir: self.config.runner_dir.display().to_string(),
            image: self.config.image.clone(),
            driver,
            secrets,
            environment: BTreeMap::new(),
            protected: protected
                .iter()
                .map(|m| ProtectedMountSpec {
                    path: m.path.display().to_string(),
                    read_only: m.read_only,
                })
                .collect(),
        };
        sandbox_policy::render(&self.config.data, &spec, &values).map_err(invalid)
    }

    /// Starts a session's sandbox and returns it with its concrete type (drafted rules, live
    /// policy edits).
    pub async fn start_session(
        &self,
        request: &SandboxRequest,
        options: &SessionOptions,
        progress: &(dyn Fn(String) + Send + Sync),
    ) -> Result<Arc<OpenShellSandbox>, ProviderError> {
        spawn::check_folders(request)?;
        // The gateway mounts by path: what the host pins here is compared, through the runner,
        // with what the sandbox sees before the first tool call.
        let pins: Vec<(String, FolderIdentity)> = pin_grants(request)?
            .iter()
            .map(|p| (p.grant.path.clone(), p.identity()))
            .collect();
        let swept = crate::set_id_sweep::sweep(&request.folders, crate::set_id_sweep::MAX_ENTRIES);
        let entries = credentials::enabled_entries(
            &self.credentials,
            &request.credentials,
            &self.config.user_home,
        )?;
        let keep = options.keep.unwrap_or(self.config.keep);
        let gateway = self.gateway().await?;
        let driver = self.mount_driver(&gateway).await?;
        let folders = folder_specs(request)?;
        let home_path = if entries.is_empty() {
            None
        } else {
            let path = private_home::location(
                &self.config.state_dir,
                &sandbox_policy::sandbox_name(&request.session_id),
            );
            private_home::check_location(&path, request)?;
            Some(path)
        };
        let protected =
            crate::protected::start_for(request, &self.config.quarantine_dir, true).await?;
        progress(protected.summary());
        // Pinned like the grants: the gateway mounts them by path, so their identity is
        // compared from inside before the first tool call.
        let protected_pins = crate::grant_pins::pin_protected(protected.mounts())?;
        let protected_mounts: Vec<ProtectedMount> =
            protected_pins.iter().map(|p| p.mount.clone()).collect();
        let rendered = self.render(
            request,
            options,
            Parts {
                driver,
                folders: folders.clone(),
                entries: &entries,
                private_home: home_path.as_deref(),
                protected: &protected_mounts,
            },
        )?;
        let name = rendered.name.clone();
        let hash = config_hash(&[
            "openshell",
            &rendered.policy_yaml,
            &rendered.request_json().to_string(),
        ]);
        let mut create = rendered.request.clone();
        create.annotations.insert(
            CONFIG_ANNOTATION.to_owned(),
            hash.trim_start_matches("sha256:").to_owned(),
        );
        if keep {
            create
                .labels
                .insert(KEEP_LABEL.to_owned(), "true".to_owned());
        }
        let providers: Vec<_> = rendered
            .providers
            .iter()
            .map(|p| p.delete_request())
            .collect();

        let reuse = match gateway.get_sandbox(&name).await {
            Ok(Some(existing)) => {
                let same = existing
                    .metadata
                    .as_ref()
                    .and_then(|m| m.annotations.get(CONFIG_ANNOTATION))
                    == create.annotations.get(CONFIG_ANNOTATION);
                // A kept sandbox is reused only with its private home still in place.
                let home_kept = home_path.as_deref().is_none_or(Path::is_dir);
                if same && home_kept && gateway::phase_of(&existing) == SandboxPhase::Ready {
                    progress(format!("reusing the kept sandbox {name}"));
                    true
                } else {
                    progress(format!("replacing the earlier sandbox {name}"));
                    gateway.delete_sandbox(&name).await.map_err(|e| {
                        unavailable(format!("removing the earlier sandbox {name}: {e}"))
                    })?;
                    false
                }
            }
            Ok(None) => false,
            Err(e) => return Err(unavailable(format!("looking up sandbox {name}: {e}"))),
        };

        // Removed again if anything below fails (the guard's Drop), after the sandbox.
        let home = match &home_path {
            None => None,
            Some(path) if reuse => Some(private_home::PrivateHome::adopt(path)),
            Some(path) => {
                progress(format!(
                    "copying the credential entries ({}) into the private home {}",
                    request.credentials.join(", "),
                    path.display()
                ));
                let owner = sandbox_policy::run_as_owner(&folders, &request.cwd)
                    .map_err(|e| ProviderError::InvalidRequest(e.to_string()))?;
                Some(private_home::PrivateHome::prepare(
                    path,
                    &entries,
                    &self.config.user_home,
                    owner,
                )?)
            }
        };

        if !reuse {
            for provider in &rendered.providers {
                progress(format!(
                    "creating provider {} for secret {}",
                    provider.name, provider.variable
                ));
                let _ = gateway.delete_provider(provider.delete_request()).await;
                if let Err(e) = gateway.create_provider(provider.create_request()).await {
                    self.cleanup(&gateway, None, &providers).await;
                    return Err(unavailable(format!(
                        "creating the provider for secret {}: {e}",
                        provider.variable
                    )));
                }
            }
            progress(format!("creating sandbox {name}"));
            if let Err(e) = gateway.create_sandbox(create).await {
                self.cleanup(&gateway, None, &providers).await;
                return Err(create_refusal(&e));
            }
        }
        let sandbox = match gateway
            .wait_ready(&name, self.config.ready_timeout, progress)
            .await
        {
            Ok(sandbox) => sandbox,
            Err(e) => {
                self.cleanup(&gateway, Some(&name), &providers).await;
                return Err(unavailable(format!("the sandbox did not start: {e}")));
            }
        };
        let attach_argv = vec![
            format!(
                "{}/tool-runner",
                self.config
                    .runner_dir
                    .display()
                    .to_string()
                    .trim_end_matches('/')
            ),
            "attach".to_owned(),
            "--socket".to_owned(),
            RUNNER_SOCKET.to_owned(),
        ];
        progress("attaching to the tool-runner".into());
        let connection = match session::attach_with_retries(&gateway, &name, &attach_argv).await {
            Ok(connection) => connection,
            Err(e) => {
                self.cleanup(&gateway, Some(&name), &providers).await;
                return Err(unavailable(e));
            }
        };
        progress("verifying the folders and the wall from inside".into());
        let home_inside = home.as_ref().map(|h| h.path().to_path_buf());
        let attestation = match self
            .attest(
                &connection,
                request,
                (&pins, &protected_pins),
                home_inside.as_deref(),
                hash,
            )
            .await
            .and_then(|a| crate::attestation::add_canary(a, swept.canary()))
        {
            Ok(attestation) => attestation,
            Err(e) => {
                drop(connection);
                self.cleanup(&gateway, Some(&name), &providers).await;
                return Err(e);
            }
        };
        let sandbox = Arc::new(OpenShellSandbox {
            sandbox_id: gateway::id_of(&sandbox),
            name,
            gateway,
            request: request.clone(),
            attach_argv,
            attestation,
            summary: rendered.summary.clone(),
            policy_yaml: rendered.policy_yaml.clone(),
            providers,
            keep,
            runner: connection.hello().clone(),
            connection: tokio::sync::Mutex::new(Some(Arc::new(connection))),
            reported: Default::default(),
            closed: AtomicBool::new(false),
            private_home: std::sync::Mutex::new(home),
            protected,
        });
        sandbox.mark_log_seen().await;
        Ok(sandbox)
    }

    async fn attest(
        &self,
        connection: &crate::runner_client::RunnerConnection,
        request: &SandboxRequest,
        (pins, protected): (&[(String, FolderIdentity)], &[PinnedMount]),
        private_home: Option<&Path>,
        hash: String,
    ) -> Result<protocol::Attestation, ProviderError> {
        let dir = &self.config.state_dir;
        std::fs::create_dir_all(dir)
            .map_err(|e| ProviderError::io(format!("creating {}", dir.display()), e))?;
        let secret = format!("paddock-sentinel-{}", uuid::Uuid::new_v4().simple());
        let sentinel = dir.join(format!("sentinel-{}", uuid::Uuid::new_v4().simple()));
        std::fs::write(&sentinel, &secret)
            .map_err(|e| ProviderError::io(format!("writing {}", sentinel.display()), e))?;
        let runner_dir = self.config.runner_dir.display().to_string();
        let result = attest::attest(
            connection,
            &attest::AttestInput {
                request,
                pins,
                protected,
                user_home: &self.config.user_home,
                sentinel: &sentinel,
                sentinel_secret: &secret,
                runner_dir: &runner_dir,
                private_home,
                config_hash: hash,
            },
        )
        .await;
        let _ = std::fs::remove_file(&sentinel);
        result
    }

    /// Best effort: removes what a failed start left behind.
    async fn cleanup(
        &self,
        gateway: &Gateway,
        sandbox: Option<&str>,
        providers: &[openshell_proto::v1::DeleteProviderRequest],
    ) {
        if let Some(name) = sandbox
            && let Err(e) = gateway.delete_sandbox(name).await
        {
            tracing::warn!(sandbox = name, error = %e, "removing a sandbox that failed to start");
        }
        for provider in providers {
            let _ = gateway.delete_provider(provider.clone()).await;
        }
    }

    /// Closes `old` and starts a sandbox for `request` (a session whose folders changed):
    /// OpenShell fixes filesystem rules at creation. Returns the new sandbox and the note to
    /// give the agent ([`RESTART_NOTE`]).
    pub async fn recreate(
        &self,
        old: &OpenShellSandbox,
        request: &SandboxRequest,
        options: &SessionOptions,
        progress: &(dyn Fn(String) + Send + Sync),
    ) -> Result<(Arc<OpenShellSandbox>, &'static str), ProviderError> {
        old.closed.store(true, std::sync::atomic::Ordering::Release);
        old.connection.lock().await.take();
        old.delete().await?;
        let sandbox = self.start_session(request, options, progress).await?;
        Ok((sandbox, RESTART_NOTE))
    }
}

/// The session's folders with their owners on the host.
fn folder_specs(request: &SandboxRequest) -> Result<Vec<FolderSpec>, ProviderError> {
    request
        .folders
        .iter()
        .map(|folder| {
            let meta = std::fs::metadata(&folder.path)
                .map_err(|e| ProviderError::io(format!("reading {}", folder.path), e))?;
            Ok(FolderSpec {
                path: folder.path.clone(),
                access: folder.access,
                owner: Owner {
                    uid: meta.uid(),
                    gid: meta.gid(),
                },
            })
        })
        .collect()
}

#[async_trait]
impl SandboxProvider for OpenShellProvider {
    fn kind(&self) -> ProviderKind {
        ProviderKind::Openshell
    }

    async fn status(&self) -> MachineSandboxStatus {
        status::machine_status(&self.config).await
    }

    async fn start(
        &self,
        request: &SandboxRequest,
        progress: &(dyn Fn(String) + Send + Sync),
    ) -> Result<Arc<dyn Sandbox>, ProviderError> {
        let sandbox: Arc<dyn Sandbox> = self
            .start_session(request, &SessionOptions::default(), progress)
            .await?;
        Ok(sandbox)
    }

    /// Deletes sandboxes (and their providers) labelled with this machine's id whose session
    /// no live Paddock process runs (`owners`), except those created with `keep`.
    async fn reap_orphans(
        &self,
        owners: &dyn crate::sandbox::SessionOwners,
    ) -> Result<Vec<String>, ProviderError> {
        let gateway = self.gateway().await?;
        let selector = format!("{MACHINE_LABEL}={}", self.config.machine_id);
        let sandboxes = gateway
            .list_sandboxes(&selector)
            .await
            .map_err(|e| unavailable(format!("listing this machine's sandboxes: {e}")))?;
        let orphans: Vec<String> = sandboxes
            .into_iter()
            .filter_map(|s| s.metadata)
            .filter(|m| m.labels.get(KEEP_LABEL).is_none_or(|v| v != "true"))
            .filter(|m| {
                m.labels
                    .get(SESSION_LABEL)
                    .is_none_or(|session| !owners.is_live(session))
            })
            .map(|m| m.name)
            .collect();
        // Deletions are asynchronous on the gateway: wait on several at once.
        let results: Vec<(String, Result<(), GatewayError>)> =
            futures::stream::iter(orphans.into_iter().map(|name| {
                let gateway = gateway.clone();
                async move {
                    let result = gateway.delete_sandbox(&name).await;
                    (name, result)
                }
            }))
            .buffer_unordered(REAP_CONCURRENCY)
            .collect()
            .await;
        let mut reaped = Vec::new();
        for (name, result) in results {
            result.map_err(|e| unavailable(format!("deleting orphan {name}: {e}")))?;
            reaped.push(name);
        }
        let left: Vec<_> = gateway
            .list_sandboxes(&selector)
            .await
            .map_err(|e| unavailable(format!("listing this machine's sandboxes: {e}")))?
            .into_iter()
            .filter_map(|s| s.metadata)
            .collect();
        let remaining: Vec<String> = left
            .iter()
            .filter_map(|m| m.labels.get(SESSION_LABEL).cloned())
            .collect();
        // Private homes whose sandbox is gone (deleted above, or lost with a crash).
        let live: BTreeSet<String> = left.iter().map(|m| m.name.clone()).collect();
        for home in private_home::reap(&self.config.state_dir, &live)? {
            if !reaped.contains(&home) {
                reaped.push(format!("{home} (private home)"));
            }
        }
        let providers = gateway
            .list_providers(&selector)
            .await
            .map_err(|e| unavailable(format!("listing this machine's providers: {e}")))?;
        for provider in providers {
            let Some(meta) = provider.metadata else {
                continue;
            };
            let session = meta.labels.get(SESSION_LABEL).cloned().unwrap_or_default();
            if remaining.contains(&session) {
                continue;
            }
            let _ = gateway
                .delete_provider(openshell_proto::v1::DeleteProviderRequest {
                    name: meta.name.clone(),
                    workspace_scope: Some(openshell_proto::default_workspace()),
                    allow_missing: true,
                    request_id: String::new(),
                })
                .await;
        }
        Ok(reaped)
    }
}
