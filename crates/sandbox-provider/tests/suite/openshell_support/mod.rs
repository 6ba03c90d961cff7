//! Shared set-up for the OpenShell provider tests: a gateway double over real gRPC on
//! loopback (mTLS unless a test asks otherwise), a registration written where discovery looks,
//! session folders owned by a regular user, and the provider pointed at all of it.

#![allow(dead_code, reason = "each test binary uses part of the harness")]

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use protocol::{FolderAccess, FolderGrant, NetworkProfileName};
use sandbox_policy::SandboxData;
use sandbox_provider::SandboxRequest;
use sandbox_provider::openshell::{HostEnvironment, OpenShellConfig, OpenShellProvider};
use test_support::gateway_double::{
    DoubleConfig, GatewayDouble, Registration, TestPki, register_gateway,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The regular user that owns the session folders (the sandbox runs as it).
pub const OWNER: u32 = 1000;
pub const IMAGE: &str = "registry.example/paddock-sandbox@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
pub const GATEWAY_NAME: &str = "double";

/// How the double and the registration authenticate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Auth {
    Mtls,
    Plaintext,
    Oidc,
}

pub const OIDC_TOKEN: &str = "oidc-access-token-PLANTED-4711";

pub struct Harness {
    pub root: tempfile::TempDir,
    /// Holds the provider's state folder, kept apart from `root` (see [`state_base`]).
    pub state_root: tempfile::TempDir,
    pub double: GatewayDouble,
    pub pki: TestPki,
    pub rw: PathBuf,
    pub ro: PathBuf,
    pub state: PathBuf,
    pub home: PathBuf,
    pub xdg: PathBuf,
    pub system: PathBuf,
    /// A loopback HTTP server the proxy may reach as `allowed.test`, `later.test` and
    /// `other.test` (when the policy allows them).
    pub web_port: u16,
}

fn mkdir(path: &Path, mode: u32) {
    std::fs::create_dir_all(path).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Where the provider's state folder lives. The provider rightly refuses a state folder under
/// `/tmp` or `/var/tmp` (a gateway run as a systemd service has `PrivateTmp`), so when the
/// checkout's target folder lies there (CI may clone anywhere) the state goes under
/// `/var/cache/paddock-tests` instead (the tests run as root; a home folder would not do, as
/// the double mounts as the sandbox user, who cannot pass through a 0700 `/root`). The session
/// folders stay under the target folder, which also proves that granted folders under `/tmp`
/// work.
fn state_base(target_tmp: &Path) -> PathBuf {
    let private_tmp = ["/tmp", "/var/tmp"]
        .iter()
        .any(|tmp| target_tmp.starts_with(tmp));
    if private_tmp {
        PathBuf::from("/var/cache/paddock-tests/openshell-state")
    } else {
        target_tmp.join("openshell-state")
    }
}

/// A fresh folder under `base` that others may pass through (the sandbox user must).
fn open_temp_dir(base: &Path) -> tempfile::TempDir {
    mkdir(base, 0o755);
    let dir = tempfile::Builder::new()
        .prefix("t")
        .tempdir_in(base)
        .unwrap();
    mkdir(dir.path(), 0o755);
    dir
}

/// A tiny HTTP server answering every request with `hello from allowed.test`.
async fn web_server() -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = [0u8; 4096];
                let _ = stream.read(&mut buf).await;
                let body = "hello from allowed.test";
                let response = format!(
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = stream.write_all(response.as_bytes()).await;
            });
        }
    });
    port
}

impl Harness {
    pub async fn start(auth: Auth) -> Self {
        Self::start_with(auth, |_| {}).await
    }

    /// Starts the double (after `adjust` changed its configuration) and registers it.
    pub async fn start_with(auth: Auth, adjust: impl FnOnce(&mut DoubleConfig)) -> Self {
        let target_tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
        let root = open_temp_dir(&target_tmp.join("openshell-tests"));
        let state_root = open_temp_dir(&state_base(&target_tmp));
        let p = root.path();
        let (rw, ro, state, home) = (
            p.join("work"),
            p.join("docs"),
            state_root.path().join("state"),
            p.join("home"),
        );
        for dir in [&rw, &ro, &state, &home] {
            mkdir(dir, 0o755);
        }
        std::fs::write(ro.join("README.md"), "read-only reference text\n").unwrap();
        std::fs::write(home.join(".bash_history"), "secret history\n").unwrap();
        for dir in [&rw, &ro] {
            std::os::unix::fs::chown(dir, Some(OWNER), Some(OWNER)).unwrap();
        }
        std::os::unix::fs::chown(ro.join("README.md"), Some(OWNER), Some(OWNER)).unwrap();

        let pki = TestPki::generate();
        let web_port = web_server().await;
        let mut config = DoubleConfig::new(p.join("double"));
        mkdir(&config.state_dir, 0o755);
        config.hosts = ["allowed.test", "later.test", "other.test"]
            .iter()
            .map(|h| ((*h).to_owned(), vec![IpAddr::V4(Ipv4Addr::LOCALHOST)]))
            .collect::<BTreeMap<_, _>>();
        match auth {
            Auth::Mtls => config.tls = Some(pki.clone()),
            Auth::Plaintext => {}
            Auth::Oidc => {
                config.tls = Some(pki.clone());
                config.bearer_token = Some(OIDC_TOKEN.to_owned());
            }
        }
        adjust(&mut config);
        let double = GatewayDouble::start(config).await.unwrap();

        let xdg = p.join("xdg");
        let system = p.join("etc-openshell");
        mkdir(&xdg.join("openshell"), 0o700);
        mkdir(&system, 0o755);
        let registration = match auth {
            Auth::Mtls => Registration::Mtls(&pki),
            Auth::Plaintext => Registration::Plaintext,
            Auth::Oidc => Registration::Oidc {
                pki: &pki,
                token: OIDC_TOKEN,
            },
        };
        register_gateway(
            &xdg.join("openshell"),
            GATEWAY_NAME,
            &double.endpoint(),
            &registration,
        );
        std::fs::write(xdg.join("openshell").join("active_gateway"), GATEWAY_NAME).unwrap();
        Self {
            root,
            state_root,
            double,
            pki,
            rw,
            ro,
            state,
            home,
            xdg,
            system,
            web_port,
        }
    }

    /// Discovery variables pointing at this harness (plus `extra`).
    pub fn environment(&self, extra: &[(&str, &str)]) -> HostEnvironment {
        let mut vars = vec![
            ("XDG_CONFIG_HOME".to_owned(), self.xdg.display().to_string()),
            (
                "OPENSHELL_SYSTEM_GATEWAY_DIR".to_owned(),
                self.system.display().to_string(),
            ),
            ("HOME".to_owned(), self.home.display().to_string()),
        ];
        vars.extend(
            extra
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned())),
        );
        HostEnvironment::from_vars(vars)
    }

    pub fn config(&self, environment: HostEnvironment) -> OpenShellConfig {
        let runner = test_support::binaries::tool_runner();
        OpenShellConfig {
            environment,
            machine_id: "test-machine".into(),
            image: IMAGE.into(),
            runner_dir: runner.parent().unwrap().to_path_buf(),
            state_dir: self.state.clone(),
            quarantine_dir: self.state_root.path().join("quarantine"),
            user_home: self.home.clone(),
            data: SandboxData::builtin().unwrap(),
            ready_timeout: Duration::from_secs(30),
            secrets: Vec::new(),
            keep: false,
        }
    }

    pub fn provider(&self) -> Arc<OpenShellProvider> {
        Arc::new(OpenShellProvider::new(self.config(self.environment(&[]))))
    }

    /// A session with the read-write and read-only folders, working in the first; the
    /// loopback web server is allowed as `allowed.test:<port>` only when `allow_web`.
    pub fn request(&self, allow_web: bool) -> SandboxRequest {
        SandboxRequest {
            session_id: format!("session-{}", uuid::Uuid::new_v4()),
            folders: vec![
                FolderGrant {
                    path: self.rw.display().to_string(),
                    access: FolderAccess::ReadWrite,
                },
                FolderGrant {
                    path: self.ro.display().to_string(),
                    access: FolderAccess::ReadOnly,
                },
            ],
            cwd: self.rw.display().to_string(),
            network_profile: NetworkProfileName::Strict,
            extra_hosts: if allow_web {
                vec![format!("allowed.test:{}", self.web_port)]
            } else {
                Vec::new()
            },
            credentials: Vec::new(),
        }
    }
}

/// Collects progress lines.
pub fn progress_log() -> (
    Arc<std::sync::Mutex<Vec<String>>>,
    impl Fn(String) + Send + Sync,
) {
    let lines = Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = lines.clone();
    (lines, move |line: String| sink.lock().unwrap().push(line))
}

/// A `run_bash` request.
pub fn bash(command: &str) -> tool_protocol::ToolRequest {
    tool_protocol::ToolRequest::RunBash(tool_protocol::RunBash {
        command: command.to_owned(),
        cwd: None,
        env: None,
        stdin: None,
        timeout_ms: Some(20_000),
        max_output_bytes: None,
    })
}

/// The stdout and exit code of a `run_bash` result.
pub fn bash_result(outcome: &sandbox_provider::ToolCallOutcome) -> (String, Option<i64>) {
    match &outcome.result {
        Ok(tool_protocol::ToolResult::RunBash(run)) => (
            format!(
                "{}{}",
                run.stdout.to_text_lossy(),
                run.stderr.to_text_lossy()
            ),
            run.exit_code,
        ),
        other => panic!("not a run_bash result: {other:?}"),
    }
}
