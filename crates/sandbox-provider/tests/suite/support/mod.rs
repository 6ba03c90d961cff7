//! Shared set-up of the local wall's integration tests: a provider built on the real binaries,
//! bubblewrap and kernel, with a fixed allow-list and a resolver map of test names.

#![allow(dead_code, reason = "each test file uses part of the support module")]
#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed set-up step fails the test"
)]

use std::net::{IpAddr, Ipv4Addr};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use protocol::{FolderAccess, FolderGrant, NetworkProfileName};
use sandbox_policy::CredentialEntry;
use sandbox_provider::local::proxy::{ExplicitAddress, StaticResolver};
use sandbox_provider::local::resources::{CgroupSupport, LimitSettings};
use sandbox_provider::local::{AllowListSource, LocalConfig, LocalProvider, LocalSandbox};
use sandbox_provider::{Sandbox, SandboxRequest};
use tokio_util::sync::CancellationToken;
use tool_protocol::{RunBash, RunBashResult, ToolRequest, ToolResult};

pub const LOOPBACK: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);

/// One test's world: a fake user home, folders to grant, the wall's state folder.
pub struct World {
    pub root: tempfile::TempDir,
    pub provider: LocalProvider,
    pub extra_hosts: Vec<String>,
}

impl World {
    pub fn home(&self) -> PathBuf {
        self.root.path().join("home")
    }
    pub fn work(&self) -> PathBuf {
        self.root.path().join("work")
    }
    pub fn docs(&self) -> PathBuf {
        self.root.path().join("docs")
    }
    pub fn outside(&self) -> PathBuf {
        self.root.path().join("outside")
    }

    /// A request granting `work` read-write and `docs` read-only.
    pub fn request(&self, credentials: &[&str]) -> SandboxRequest {
        SandboxRequest {
            session_id: "test-session".into(),
            folders: vec![
                FolderGrant {
                    path: self.work().display().to_string(),
                    access: FolderAccess::ReadWrite,
                },
                FolderGrant {
                    path: self.docs().display().to_string(),
                    access: FolderAccess::ReadOnly,
                },
            ],
            cwd: self.work().display().to_string(),
            network_profile: NetworkProfileName::Strict,
            extra_hosts: self.extra_hosts.clone(),
            credentials: credentials.iter().map(|s| (*s).to_owned()).collect(),
        }
    }

    pub async fn start(&self) -> Arc<LocalSandbox> {
        self.start_with(&[]).await
    }

    pub async fn start_with(&self, credentials: &[&str]) -> Arc<LocalSandbox> {
        match self
            .provider
            .start_local(&self.request(credentials), &|_| {})
            .await
        {
            Ok(sandbox) => sandbox,
            Err(e) => panic!("the local wall did not start: {e}"),
        }
    }
}

/// How a world differs from the default (strict profile, nothing extra).
#[derive(Default)]
pub struct WorldOptions {
    /// `host:port` names a rule maps explicitly to 127.0.0.1 (the tests' loopback servers).
    pub loopback_hosts: Vec<(String, u16)>,
    /// The proxy's resolver map (names not in it do not resolve).
    pub resolver: StaticResolver,
    /// Credential entries the machine offers.
    pub credentials: Vec<CredentialEntry>,
    /// Hosts added to the session (`host:port`).
    pub extra_hosts: Vec<String>,
    /// A state folder nested this deep, so socket paths outgrow `sun_path` (a long home).
    pub state_depth: usize,
    /// Processes, memory and CPU per wall (the defaults when `None`).
    pub limits: Option<LimitSettings>,
    /// Where the walls' cgroups are made (this process's when `None`).
    pub cgroups: Option<CgroupSupport>,
    /// The runner's commands get no Landlock signal scope, as on a kernel before 6.12.
    pub unscoped_signals: bool,
    /// The set-id sweep's limit of entries (200,000 when `None`).
    pub set_id_sweep_limit: Option<usize>,
}

pub fn world() -> World {
    world_with(WorldOptions::default())
}

pub fn world_with(options: WorldOptions) -> World {
    let root = tempfile::tempdir().unwrap();
    for dir in ["home", "work", "docs", "outside", "state"] {
        std::fs::create_dir(root.path().join(dir)).unwrap();
    }
    std::fs::write(root.path().join("docs/readme.txt"), "read-only document\n").unwrap();
    std::fs::write(root.path().join("outside/secret.txt"), "OUTSIDE-SECRET\n").unwrap();
    std::fs::write(root.path().join("home/.bash_history"), "HOME-SECRET\n").unwrap();
    let mut state = root.path().join("state");
    for level in 0..options.state_depth {
        state.push(format!("a-long-folder-name-{level}"));
    }
    std::fs::create_dir_all(&state).unwrap();
    let mut config = LocalConfig::new(
        test_support::binaries::tool_runner(),
        test_support::binaries::paddock_wall(),
        state,
        root.path().join("home"),
        Arc::new(AllowListSource {
            data: sandbox_policy::SandboxData::builtin().unwrap(),
            explicit: options
                .loopback_hosts
                .iter()
                .map(|(host, port)| ExplicitAddress {
                    host: host.clone(),
                    port: *port,
                    ip: LOOPBACK,
                })
                .collect(),
        }),
    );
    config.resolver = Arc::new(options.resolver);
    if let Some(limits) = options.limits {
        config.limits = limits;
    }
    config.cgroup_support = options.cgroups;
    config.test_unscoped_signals = options.unscoped_signals;
    if let Some(limit) = options.set_id_sweep_limit {
        config.set_id_sweep_limit = limit;
    }
    config.credentials = options.credentials;
    World {
        root,
        provider: LocalProvider::new(config),
        extra_hosts: options.extra_hosts,
    }
}

/// Runs `command` with bash inside the sandbox.
pub async fn bash(sandbox: &dyn Sandbox, command: &str) -> RunBashResult {
    let outcome = sandbox
        .call(
            ToolRequest::RunBash(RunBash {
                command: command.to_owned(),
                cwd: None,
                env: None,
                stdin: None,
                timeout_ms: Some(20_000),
                max_output_bytes: None,
            }),
            None,
            &CancellationToken::new(),
        )
        .await;
    match outcome.result {
        Ok(ToolResult::RunBash(result)) => result,
        other => panic!("run_bash {command:?}: {other:?}"),
    }
}

pub fn stdout(result: &RunBashResult) -> String {
    result.stdout.to_text_lossy()
}

pub fn stderr(result: &RunBashResult) -> String {
    result.stderr.to_text_lossy()
}

pub fn exists(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok()
}
