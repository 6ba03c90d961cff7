//! The `local` provider: Paddock's own Linux wall, the embedded default when OpenShell is not
//! configured. Bubblewrap builds the namespaces and mounts, the `paddock-wall` launcher applies
//! Landlock, seccomp and `no_new_privs` and execs the tool-runner, and a host-side proxy is the
//! sandbox's only way to the network. See `docs/local-wall.md`.

mod allow_list;
mod canaries;
mod credentials;
mod etc;
mod identity;
mod layout;
mod preflight;
pub mod proxy;
mod reaping;
pub mod resources;
mod wall_sandbox;

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use protocol::{EnforcementLevel, MachineSandboxStatus, ProviderKind};
use sandbox_policy::CredentialEntry;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::net::UnixStream;
use tokio::process::Command;
use tokio_util::sync::CancellationToken;

pub use crate::canaries::{CANARY_HOST, sh_quote};
pub use allow_list::{AllowListSource, PolicySource};
pub use credentials::glob_matches;
pub use etc::{ETC_ALLOWED, etc_allowed};
pub use identity::{Identity, USER_NAME};
pub use layout::{HOME_INSIDE, RUNNER_INSIDE, WALL_INSIDE};
pub use preflight::{
    APPARMOR_PROFILE_PATH, HostProbes, MIN_BWRAP, Preflight, SystemProbes, UsernsSettings,
    bwrap_apparmor_profile, default_bwrap, parse_bwrap_version,
};
pub use wall_sandbox::LocalSandbox;

use crate::error::ProviderError;
use crate::grant_pins::{PinnedGrant, pin_grants};
use crate::local::layout::{GrantMount, HostDirs, LayoutInput, ProtectedBind};
use crate::local::proxy::{
    BridgeToken, DenialLog, ProxyConfig, ProxyLimits, ProxyStats, Resolver, SystemResolver,
    raise_descriptor_limit,
};
use crate::local::resources::{CgroupSupport, LimitSettings, MachineSize, WallCgroup};
use crate::protected::ProtectedFiles;
use crate::runner_client::RunnerConnection;
use crate::sandbox::{Sandbox, SandboxProvider, SandboxRequest};
use crate::sandbox_folder::remove_sandbox_folder;
use crate::set_id_sweep::{self, SetIdSweep};
use crate::socket_address::SocketAddress;
use crate::spawn;

/// The state folder's subfolder holding the synthesized `/etc` (see `etc::cached`).
const ETC_CACHE: &str = "etc-cache";
/// The descriptor the launcher puts the first granted folder at (the next ones follow).
const GRANT_FD_BASE: i32 = 100;
const RUNNER_READY_TIMEOUT: Duration = Duration::from_secs(10);
const HELLO_TIMEOUT: Duration = Duration::from_secs(10);

/// What a session is told when its wall was rebuilt to change its folders.
pub const RESTART_NOTE: &str = "The sandbox was recreated to change its folders (filesystem rules are fixed when a \
     wall starts). Shell state was lost: working-directory changes, exported variables and \
     background processes from earlier commands are gone; files in the folders are kept.";

/// The machine-level configuration of the local wall.
#[derive(Debug, Clone)]
pub struct LocalConfig {
    /// The tool-runner executable (static, mounted read-only inside).
    pub runner: PathBuf,
    /// The `paddock-wall` launcher.
    pub wall: PathBuf,
    /// Bubblewrap.
    pub bwrap: PathBuf,
    /// Where each wall's host folder is created (owner-only); must not lie inside a grant.
    pub state_dir: PathBuf,
    /// Where protected files a session planted are moved (one folder per session); must not
    /// lie inside a grant. Default: `quarantine` beside `state_dir`.
    pub quarantine_dir: PathBuf,
    /// The user's real home: the source of credential entries, and absent inside.
    pub user_home: PathBuf,
    /// Credential-share entries this machine offers (each off unless a session enables it):
    /// `sandbox-policy`'s built-ins and the user's custom entries.
    pub credentials: Vec<CredentialEntry>,
    pub policy: Arc<dyn PolicySource>,
    /// How the proxy resolves names (the system's resolver in production).
    pub resolver: Arc<dyn Resolver>,
    /// How the preflight probes the machine (the real machine in production).
    pub probes: Arc<dyn HostProbes>,
    /// How many connections each wall's proxy serves at once.
    pub proxy_limits: ProxyLimits,
    /// Processes, memory and CPU per wall.
    pub limits: LimitSettings,
    /// Where the walls' cgroups are made; `None` (production): found for this process
    /// ([`CgroupSupport::this_process`]). Tests set `Unavailable` to try the fallback.
    pub cgroup_support: Option<CgroupSupport>,
    /// Tests only: the runner gives its commands no Landlock signal scope (its
    /// `--test-unscoped-signals`), as on a kernel before 6.12, so the attack suite shows
    /// what else keeps signals off the runner. Never set outside tests.
    pub test_unscoped_signals: bool,
    /// The most entries the set-id sweep of the read-write folders looks at, at a start and at
    /// a close (200,000); a sweep that stops there fails its check. Lowered by tests only.
    pub set_id_sweep_limit: usize,
}

impl LocalConfig {
    /// Production defaults for the pieces that have them.
    pub fn new(
        runner: PathBuf,
        wall: PathBuf,
        state_dir: PathBuf,
        user_home: PathBuf,
        policy: Arc<dyn PolicySource>,
    ) -> Self {
        let quarantine_dir = state_dir
            .parent()
            .map_or_else(|| state_dir.join("quarantine"), |p| p.join("quarantine"));
        Self {
            runner,
            wall,
            bwrap: default_bwrap(),
            state_dir,
            quarantine_dir,
            user_home,
            credentials: Vec::new(),
            policy,
            resolver: Arc::new(SystemResolver),
            probes: Arc::new(SystemProbes),
            proxy_limits: ProxyLimits::default(),
            limits: LimitSettings::default(),
            cgroup_support: None,
            test_unscoped_signals: false,
            set_id_sweep_limit: set_id_sweep::MAX_ENTRIES,
        }
    }
}

/// The local wall provider.
#[derive(Debug)]
pub struct LocalProvider {
    config: LocalConfig,
    /// The last preflight that passed (a failed one is re-run at every start).
    ready: Mutex<Option<Preflight>>,
}

impl LocalProvider {
    pub fn new(config: LocalConfig) -> Self {
        Self {
            config,
            ready: Mutex::new(None),
        }
    }

    pub fn config(&self) -> &LocalConfig {
        &self.config
    }

    fn cgroup_support(&self) -> CgroupSupport {
        self.config
            .cgroup_support
            .clone()
            .unwrap_or_else(CgroupSupport::this_process)
    }

    fn preflight(&self) -> Preflight {
        let c = &self.config;
        preflight::run(c.probes.as_ref(), &c.bwrap, &c.runner, &c.wall)
    }

    fn ready_preflight(&self) -> Result<Preflight, ProviderError> {
        if let Some(ok) = self
            .ready
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
        {
            return Ok(ok);
        }
        let preflight = self.preflight();
        if !preflight.status.ready() {
            return Err(ProviderError::Unavailable {
                reason: format!(
                    "the local wall cannot be built: {}",
                    preflight.status.failure_summary()
                ),
            });
        }
        *self.ready.lock().unwrap_or_else(PoisonError::into_inner) = Some(preflight.clone());
        Ok(preflight)
    }

    /// Starts a wall and returns it with its concrete type (denial feed, host folder).
    pub async fn start_local(
        &self,
        request: &SandboxRequest,
        progress: &(dyn Fn(String) + Send + Sync),
    ) -> Result<Arc<LocalSandbox>, ProviderError> {
        let preflight = self.ready_preflight()?;
        spawn::check_folders(request)?;
        self.check_grants(request)?;
        let pinned = pin_grants(request)?;
        // Set-id files left in the read-write folders (by a wall that crashed, or placed from
        // outside) lose their bits on a thread of their own while the wall is built; the
        // attestation waits for it and records it, so it is done before any command of the
        // session runs (only the canaries run before, and they make no set-id file).
        let swept = {
            let (folders, limit) = (request.folders.clone(), self.config.set_id_sweep_limit);
            tokio::task::spawn_blocking(move || set_id_sweep::sweep(&folders, limit))
        };
        // SAFETY-free: geteuid/getegid through the launcher's helper and std.
        let euid = paddock_wall::privileges::effective_uid();
        let egid = std::os::unix::fs::MetadataExt::gid(
            &std::fs::metadata("/proc/self")
                .map_err(|e| ProviderError::io("reading /proc/self", e))?,
        );
        let identity = identity::choose(request, euid, egid)?;
        // One count for the whole process: a wall's name (its folder, its cgroup) is unique
        // even between providers sharing a state folder or a cgroup.
        static WALLS: AtomicU64 = AtomicU64::new(0);
        let n = WALLS.fetch_add(1, Ordering::Relaxed);
        let dirs = HostDirs {
            root: self.config.state_dir.join(format!(
                "wall-{}-{}-{n}",
                std::process::id(),
                sanitize(&request.session_id)
            )),
        };
        // The walk decides the mounts, so it comes first; its inotify watches (one per folder,
        // the larger part of its cost on a large grant) are added on a thread of their own
        // while the wall is built, and awaited before the wall is handed out.
        let protected =
            crate::protected::start_unwatched_for(request, &self.config.quarantine_dir, true)
                .await?;
        let watching = {
            let protected = Arc::clone(&protected);
            tokio::task::spawn_blocking(move || protected.add_watches())
        };
        progress(format!(
            "building the local wall in {}",
            dirs.root.display()
        ));
        let found = StartChecks {
            pinned: &pinned,
            swept,
            protected,
        };
        let built = self
            .build(request, found, &preflight, identity, &dirs)
            .await;
        let watched = watching.await;
        let sandbox = match built {
            Ok(sandbox) => sandbox,
            Err(e) => {
                let _ = remove_sandbox_folder(&dirs.root);
                return Err(e);
            }
        };
        if let Err(e) = watched {
            let _ = sandbox.close().await;
            return Err(ProviderError::Unavailable {
                reason: format!("watching the granted folders failed: {e}"),
            });
        }
        progress(sandbox.protected.summary());
        Ok(sandbox)
    }

    /// Closes `old` and starts a wall for `request` (a session whose folders changed):
    /// filesystem rules are fixed at start. Returns the new sandbox and the note to give the
    /// agent ([`RESTART_NOTE`]).
    pub async fn restart(
        &self,
        old: &dyn Sandbox,
        request: &SandboxRequest,
        progress: &(dyn Fn(String) + Send + Sync),
    ) -> Result<(Arc<LocalSandbox>, &'static str), ProviderError> {
        old.close().await?;
        let sandbox = self.start_local(request, progress).await?;
        Ok((sandbox, RESTART_NOTE))
    }

    fn check_grants(&self, request: &SandboxRequest) -> Result<(), ProviderError> {
        for folder in &request.folders {
            let path = Path::new(&folder.path);
            if path == Path::new("/") {
                return Err(ProviderError::InvalidRequest(
                    "/: the local wall does not grant the whole filesystem".into(),
                ));
            }
            if self.config.state_dir.starts_with(path) {
                return Err(ProviderError::InvalidRequest(format!(
                    "{}: this folder holds the local wall's own state ({}); grant a folder inside it instead",
                    folder.path,
                    self.config.state_dir.display()
                )));
            }
        }
        Ok(())
    }

    /// Creates the wall's folders and its sentinel (returned); the folder is this process's
    /// (see [`reaping::OwnWall`]) from before it exists, and records its session for the
    /// orphan reaping of other processes.
    fn prepare_dirs(
        &self,
        dirs: &HostDirs,
        identity: &Identity,
        session_id: &str,
    ) -> Result<(String, reaping::OwnWall), ProviderError> {
        let io = |what: &str, e| ProviderError::io(format!("{what} {}", dirs.root.display()), e);
        std::fs::create_dir_all(&self.config.state_dir)
            .map_err(|e| io("creating the state folder for", e))?;
        let own = reaping::OwnWall::register(&dirs.root);
        std::fs::create_dir(&dirs.root).map_err(|e| io("creating", e))?;
        std::fs::set_permissions(&dirs.root, std::fs::Permissions::from_mode(0o700))
            .map_err(|e| io("protecting", e))?;
        // Written by the host before the folder is handed over; never mounted inside.
        std::fs::write(
            dirs.root.join(reaping::OWNER_FILE),
            format!("{session_id}\n"),
        )
        .map_err(|e| io("recording the session of", e))?;
        identity.hand_over(&dirs.root)?;
        for dir in [
            dirs.home(),
            dirs.tmp(),
            dirs.proxy(),
            dirs.runner(),
            dirs.probe(),
            dirs.etc(),
        ] {
            std::fs::create_dir(&dir)
                .map_err(|e| ProviderError::io(format!("creating {}", dir.display()), e))?;
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))
                .map_err(|e| ProviderError::io(format!("protecting {}", dir.display()), e))?;
            identity.hand_over(&dir)?;
        }
        let secret = format!("paddock-sentinel-{:016x}", random_u64());
        std::fs::write(dirs.sentinel(), &secret).map_err(|e| io("writing the sentinel in", e))?;
        Ok((secret, own))
    }

    async fn build(
        &self,
        request: &SandboxRequest,
        found: StartChecks<'_>,
        preflight: &Preflight,
        identity: Identity,
        dirs: &HostDirs,
    ) -> Result<Arc<LocalSandbox>, ProviderError> {
        let StartChecks {
            pinned,
            swept,
            protected,
        } = found;
        let c = &self.config;
        let (secret, own_wall) = self.prepare_dirs(dirs, &identity, &request.session_id)?;
        let bridge_token = BridgeToken::generate()
            .map_err(|e| ProviderError::io("drawing the wall's bridge token", e))?;
        let machine = MachineSize::this_machine()
            .map_err(|e| ProviderError::io("reading this machine's memory and CPUs", e))?;
        let cgroup_name = format!(
            "paddock-{}",
            dirs.root
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        );
        let resources = resources::for_wall(
            &self.cgroup_support(),
            &cgroup_name,
            &c.limits.resolve(machine),
            identity.host_uid,
            raise_descriptor_limit().original,
        );
        // Removes the cgroup (killing what runs in it) if the start fails anywhere below.
        let mut cgroup_guard = CgroupGuard(resources.cgroup.clone());
        // The launcher opens each grant again (as the wall's user), checks it against the
        // identity pinned here and puts it at a fixed descriptor for bubblewrap: no descriptor
        // of this process is handed down (clearing close-on-exec would need code run in a
        // forked copy of this process).
        let grant_mounts: Vec<GrantMount> = pinned
            .iter()
            .zip(GRANT_FD_BASE..)
            .map(|(p, fd)| GrantMount {
                path: p.grant.path.clone(),
                access: p.grant.access,
                fd,
                identity: p.identity(),
            })
            .collect();
        // The protected paths the walk found, pinned now and mounted by handle after the
        // grants' descriptors, the same way.
        let first_protected_fd =
            GRANT_FD_BASE.saturating_add(i32::try_from(grant_mounts.len()).unwrap_or(i32::MAX));
        let protected_binds: Vec<ProtectedBind> =
            crate::grant_pins::pin_protected(protected.mounts())?
                .into_iter()
                .zip(first_protected_fd..)
                .map(|(p, fd)| ProtectedBind {
                    path: p.mount.path.display().to_string(),
                    read_only: p.mount.read_only,
                    fd,
                    identity: p.identity,
                })
                .collect();

        let enabled = crate::credentials::enabled_entries(
            &c.credentials,
            &request.credentials,
            &c.user_home,
        )?;
        let mut credential_env = BTreeMap::new();
        for entry in &enabled {
            credentials::copy_share(entry, &c.user_home, &dirs.home(), &identity)?;
            credential_env.extend(credentials::environment(entry));
        }
        let policy = c
            .policy
            .policy(request, &enabled)
            .map_err(|e| ProviderError::InvalidRequest(format!("the network allow-list: {e}")))?;

        let write = |path: PathBuf, text: &str| -> Result<(), ProviderError> {
            std::fs::write(&path, text)
                .map_err(|e| ProviderError::io(format!("writing {}", path.display()), e))?;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644))
                .map_err(|e| ProviderError::io(format!("protecting {}", path.display()), e))?;
            identity.hand_over(&path)
        };
        write(dirs.etc().join("passwd"), &identity.passwd(HOME_INSIDE))?;
        write(dirs.etc().join("group"), &identity.group())?;
        let etc_dir = etc::cached(Path::new("/etc"), &c.state_dir.join(ETC_CACHE))
            .map_err(|e| ProviderError::io("building the walls' /etc", e))?;
        let mut rendered = layout::render(&LayoutInput {
            request,
            grants: &grant_mounts,
            identity,
            dirs,
            runner: &c.runner,
            wall: &c.wall,
            host_root: Path::new("/"),
            etc: &etc_dir,
            disable_userns: preflight.disable_userns(),
            credential_env,
            bridge_token: bridge_token.as_hex(),
            protected: &protected_binds,
            unscoped_signals: c.test_unscoped_signals,
        })
        .map_err(|e| ProviderError::io("reading the host's system folders", e))?;
        rendered.config.rlimits = resources.rlimits.clone();
        write(dirs.config(), &rendered.config.to_json())?;

        let denials = DenialLog::default();
        let stop_proxy = CancellationToken::new();
        // Stops the proxy if the start fails anywhere below.
        let proxy_guard = stop_proxy.clone().drop_guard();
        let proxy_stats = ProxyStats::default();
        let mut proxy_config =
            ProxyConfig::new(policy.clone(), c.resolver.clone(), denials.clone());
        proxy_config.bridge_token = Some(bridge_token);
        proxy_config.limits = c.proxy_limits;
        proxy_config.stats = proxy_stats.clone();
        proxy::start(&dirs.proxy_socket(), proxy_config, stop_proxy.clone()).map_err(|e| {
            ProviderError::io(
                format!("binding the proxy at {}", dirs.proxy_socket().display()),
                e,
            )
        })?;
        identity.hand_over(&dirs.proxy_socket())?;

        let mut command = Command::new(&c.wall);
        command.arg("outer");
        for procs in resources
            .cgroup
            .as_ref()
            .map(WallCgroup::procs_files)
            .unwrap_or_default()
        {
            command.arg("--cgroup").arg(procs);
        }
        if let Some((uid, gid)) = identity.drop_to {
            command.args(["--uid", &uid.to_string(), "--gid", &gid.to_string()]);
        }
        for grant in &grant_mounts {
            let pin = paddock_wall::launch::GrantPin {
                fd: grant.fd,
                identity: grant.identity,
                path: grant.path.clone(),
            };
            command.args(["--grant", &pin.to_arg()]);
        }
        for bind in &protected_binds {
            let pin = paddock_wall::launch::GrantPin {
                fd: bind.fd,
                identity: bind.identity,
                path: bind.path.clone(),
            };
            command.args(["--protected", &pin.to_arg()]);
        }
        command
            .arg("--")
            .arg(&c.bwrap)
            .args(&rendered.bwrap_args)
            .env_clear()
            .current_dir("/")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = command
            .spawn()
            .map_err(|e| ProviderError::io(format!("starting {}", c.wall.display()), e))?;
        let stderr_tail = Arc::new(Mutex::new(Vec::<String>::new()));
        if let Some(stderr) = child.stderr.take() {
            let tail = stderr_tail.clone();
            tokio::spawn(async move {
                let mut lines = BufReader::new(stderr).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    tracing::debug!(target: "tool_runner", sandbox = "local", "{line}");
                    let mut tail = tail.lock().unwrap_or_else(PoisonError::into_inner);
                    tail.push(line);
                    if tail.len() > 20 {
                        tail.remove(0);
                    }
                }
            });
        }

        let socket = dirs.runner_socket();
        let address = SocketAddress::new(&socket)
            .map_err(|e| ProviderError::io(format!("naming {}", socket.display()), e))?;
        let started = Instant::now();
        let stream = loop {
            if let Ok(stream) = UnixStream::connect(address.path()).await {
                break stream;
            }
            if let Ok(Some(status)) = child.try_wait() {
                // Give the stderr reader a moment to collect the last words.
                tokio::time::sleep(Duration::from_millis(20)).await;
                let tail = stderr_tail
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .join("; ");
                if tail.contains("the wall refuses to start: granted folder")
                    || tail.contains("the wall refuses to start: protected path")
                {
                    // The launcher found a grant or a protected path that is no longer what
                    // the host pinned, or not mounted where it must be.
                    return Err(ProviderError::InvalidRequest(tail));
                }
                if tail.contains("Race condition binding dirfd")
                    || layout::swapped_source(&tail, &rendered.bwrap_args)
                {
                    // bubblewrap mounts a pinned folder or file by the path its handle
                    // resolves to, then checks the mount is that one: it was swapped in
                    // between (or the path named nothing any more when it looked).
                    let folders: Vec<&str> =
                        request.folders.iter().map(|f| f.path.as_str()).collect();
                    return Err(ProviderError::InvalidRequest(format!(
                        "a granted folder, or a protected path in one ({}), was replaced by \
                         another while the wall started (bubblewrap: {tail}); the wall did not \
                         start",
                        folders.join(", ")
                    )));
                }
                return Err(ProviderError::Unavailable {
                    reason: format!(
                        "the local wall exited before its runner was ready ({status}): {tail}"
                    ),
                });
            }
            if started.elapsed() > RUNNER_READY_TIMEOUT {
                return Err(ProviderError::Unavailable {
                    reason: format!(
                        "the runner's socket did not appear within {RUNNER_READY_TIMEOUT:?}"
                    ),
                });
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        };
        let (read, write_half) = stream.into_split();
        let connection = RunnerConnection::open(read, write_half, HELLO_TIMEOUT).await?;
        let in_cgroup = match (&resources.cgroup, child.id()) {
            (Some(cgroup), Some(pid)) => cgroup.holds(pid),
            (Some(_), None) => Err("the wall's process is gone".to_owned()),
            (None, _) => Ok(()),
        };
        // Before any command ran: what is in the cgroup now is the wall itself.
        let own_processes = match &resources.cgroup {
            Some(cgroup) => cgroup
                .processes()
                .map_err(|reason| ProviderError::Unavailable { reason })?,
            None => Vec::new(),
        };

        let mut config_parts = layout::hash_parts(&rendered, &policy.describe(), dirs);
        config_parts.push(format!(
            "limits {:?} {:?} {:?} {:?} {:?}",
            resources.in_force.mechanism,
            resources.in_force.processes,
            resources.in_force.memory_bytes,
            resources.in_force.swap_bytes,
            resources.in_force.cpu_millis
        ));
        let mut sandbox = LocalSandbox {
            id: format!(
                "local-{}",
                dirs.root
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()
            ),
            connection,
            attestation: protocol::Attestation {
                enforcement: EnforcementLevel::Local,
                config_hash: String::new(),
                canaries: Vec::new(),
                time_ms: 0,
                limits: None,
            },
            child: tokio::sync::Mutex::new(Some(child)),
            cgroup: cgroup_guard.0.take(),
            own_processes,
            refused_forks_seen: Mutex::new(0),
            dir: dirs.root.clone(),
            denials,
            proxy_stats,
            stop_proxy,
            folders: request.folders.clone(),
            set_id_sweep_limit: self.config.set_id_sweep_limit,
            protected,
            _own_wall: own_wall,
        };
        let attested = canaries::attest(
            &sandbox.connection,
            &canaries::CanaryInput {
                request,
                user_home: &c.user_home,
                sentinel: &dirs.sentinel(),
                sentinel_secret: &secret,
                config_parts,
                limits: canaries::LimitsCheck {
                    in_force: &resources.in_force,
                    in_cgroup,
                    rlimits: &resources.rlimits,
                },
            },
        )
        .await;
        let swept = swept.await.unwrap_or_else(|e| SetIdSweep {
            failed: vec![(
                PathBuf::from(&request.cwd),
                format!("the sweep of the read-write folders did not finish: {e}"),
            )],
            ..SetIdSweep::default()
        });
        match attested.and_then(|a| crate::attestation::add_canary(a, swept.canary())) {
            Ok(mut attestation) => {
                proxy_guard.disarm();
                attestation.limits = Some(resources.in_force);
                sandbox.attestation = attestation;
                Ok(Arc::new(sandbox))
            }
            Err(e) => {
                let _ = sandbox.close().await;
                Err(e)
            }
        }
    }
}

/// What the checks before a wall's build found: the grants pinned, the set-id files swept from
/// them, the protected files to mount read-only and watch.
struct StartChecks<'a> {
    pinned: &'a [PinnedGrant],
    /// The sweep, running on a thread of its own while the wall is built.
    swept: tokio::task::JoinHandle<SetIdSweep>,
    protected: Arc<ProtectedFiles>,
}

/// Removes a wall's cgroup when dropped, unless taken.
struct CgroupGuard(Option<WallCgroup>);

impl Drop for CgroupGuard {
    fn drop(&mut self) {
        if let Some(cgroup) = self.0.take() {
            let _ = cgroup.remove();
        }
    }
}

fn sanitize(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(40)
        .collect()
}

fn random_u64() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    hasher.finish()
}

#[async_trait]
impl SandboxProvider for LocalProvider {
    fn kind(&self) -> ProviderKind {
        ProviderKind::Local
    }

    /// The preflight: bubblewrap, user namespaces, Landlock, seccomp, the two binaries.
    async fn status(&self) -> MachineSandboxStatus {
        self.preflight().status
    }

    async fn start(
        &self,
        request: &SandboxRequest,
        progress: &(dyn Fn(String) + Send + Sync),
    ) -> Result<Arc<dyn Sandbox>, ProviderError> {
        let sandbox: Arc<dyn Sandbox> = self.start_local(request, progress).await?;
        Ok(sandbox)
    }

    /// Removes the walls (folder and cgroup) whose session no live process runs, as the
    /// host's session leases say (`owners`), except this process's own. The pid in a wall's
    /// name is not asked (see `reaping`): a live Paddock in another PID namespace sharing the
    /// state folder keeps its walls, and a dead one's are reaped even when its pid was given
    /// to another process.
    async fn reap_orphans(
        &self,
        owners: &dyn crate::sandbox::SessionOwners,
    ) -> Result<Vec<String>, ProviderError> {
        let census = reaping::census(&self.config.state_dir, owners);
        let support = self.cgroup_support();
        let mut reaped = Vec::new();
        for (name, path) in census.orphans {
            let cgroup = format!("paddock-{name}");
            let removed = {
                let (support, name) = (support.clone(), cgroup.clone());
                tokio::task::spawn_blocking(move || {
                    resources::cgroup::remove_named(&support, &name)
                })
                .await
                .unwrap_or_else(|e| Err(format!("removing {cgroup}: {e}")))
            };
            match removed {
                Ok(true) => reaped.push(cgroup),
                Ok(false) => {}
                // The folder stays as the record of whose cgroup it is: tried again next time.
                Err(reason) => {
                    tracing::warn!("reaping {name}: {reason}");
                    continue;
                }
            }
            remove_sandbox_folder(&path)
                .map_err(|e| ProviderError::io(format!("removing {}", path.display()), e))?;
            reaped.push(name);
        }
        // Older copies of the synthesized /etc, once no wall can still mount them.
        if !census.walls_kept {
            reaped.extend(etc::reap_old(&self.config.state_dir.join(ETC_CACHE)));
        }
        Ok(reaped)
    }
}
