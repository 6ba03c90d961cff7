//! The `direct` provider: no wall. The tool-runner runs as a child of the host process with the
//! user's rights; its path guard is the only line. Chosen explicitly, shown loudly, and its
//! enforcement level is `none` on every call.

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use protocol::{
    Attestation, CanaryResult, EnforcementLevel, MachineSandboxStatus, ProviderKind, StatusCheck,
};
use tokio::process::{Child, Command};
use tokio::sync::{Mutex, mpsc};
use tokio_util::sync::CancellationToken;
use tool_protocol::{ErrorCode, Stat, ToolRequest};

use crate::attestation::{self, config_hash};
use crate::error::ProviderError;
use crate::runner_client::{CallError, OutputChunk, RunnerConnection};
use crate::sandbox::{ClosedSandbox, Sandbox, SandboxProvider, SandboxRequest, ToolCallOutcome};
use crate::spawn::{self, runner_args};

/// What a user is told wherever direct mode is in use.
pub const DIRECT_WARNING: &str = "UNPROTECTED: the `direct` provider runs the agent's commands on this machine with your \
     user's rights. No sandbox confines files, network or processes.";

const HELLO_TIMEOUT: Duration = Duration::from_secs(10);

/// Runs the tool-runner as a local child process.
#[derive(Debug, Clone)]
pub struct DirectProvider {
    runner: PathBuf,
    quarantine_dir: PathBuf,
}

impl DirectProvider {
    /// `runner` is the tool-runner executable to start. Protected files a session plants go to
    /// `paddock-quarantine` under the system's temporary folder unless
    /// [`Self::with_quarantine`] says otherwise.
    pub fn new(runner: PathBuf) -> Self {
        Self {
            runner,
            quarantine_dir: std::env::temp_dir().join("paddock-quarantine"),
        }
    }

    /// Where protected files a session planted are moved (one folder per session).
    pub fn with_quarantine(mut self, dir: PathBuf) -> Self {
        self.quarantine_dir = dir;
        self
    }
}

#[async_trait]
impl SandboxProvider for DirectProvider {
    fn kind(&self) -> ProviderKind {
        ProviderKind::Direct
    }

    async fn status(&self) -> MachineSandboxStatus {
        let runner_ok = self.runner.is_file();
        let mut checks = vec![
            StatusCheck {
                name: "tool-runner".into(),
                ok: runner_ok,
                detail: if runner_ok {
                    format!("{} is present", self.runner.display())
                } else {
                    format!("{} does not exist", self.runner.display())
                },
                fix: (!runner_ok).then(|| "cargo xtask runner".into()),
            },
            StatusCheck {
                name: "wall".into(),
                ok: true,
                detail: DIRECT_WARNING.into(),
                fix: None,
            },
        ];
        let protected_paths = crate::protected::listed(&mut checks);
        MachineSandboxStatus {
            provider: ProviderKind::Direct,
            enforcement: EnforcementLevel::None,
            checks,
            protected_paths,
        }
    }

    async fn start(
        &self,
        request: &SandboxRequest,
        progress: &(dyn Fn(String) + Send + Sync),
    ) -> Result<Arc<dyn Sandbox>, ProviderError> {
        spawn::check_folders(request)?;
        // No wall mounts anything read-only here; sweeps still catch what a command plants.
        let protected = crate::protected::start_for(request, &self.quarantine_dir, false).await?;
        progress(format!(
            "starting the tool-runner directly ({DIRECT_WARNING})"
        ));
        let args = runner_args("stdio", None, request);
        let mut command = Command::new(&self.runner);
        command
            .args(&args)
            .current_dir(&request.cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = command.spawn().map_err(|e| {
            ProviderError::io(
                format!("starting the tool-runner {}", self.runner.display()),
                e,
            )
        })?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(ProviderError::InvalidRequest(
                "the tool-runner's stdio could not be captured".into(),
            ));
        };
        spawn::forward_stderr(&mut child, "direct");
        let connection = RunnerConnection::open(stdout, stdin, HELLO_TIMEOUT).await?;
        let attestation = attest(&connection, request, &self.runner).await?;
        let id = format!("direct-{}", connection.hello().pid);
        Ok(Arc::new(DirectSandbox {
            id,
            connection,
            attestation,
            child: Mutex::new(Some(child)),
            protected,
        }))
    }
}

/// The one check direct mode can make: the runner's path guard refuses a path outside the
/// session's folders (it is the only line here).
async fn attest(
    connection: &RunnerConnection,
    request: &SandboxRequest,
    runner: &std::path::Path,
) -> Result<Attestation, ProviderError> {
    let probe = if request.folders.iter().any(|f| f.path == "/") {
        None
    } else {
        Some("/".to_owned())
    };
    let mut canaries = Vec::new();
    if let Some(path) = probe {
        let outcome = connection
            .call(
                ToolRequest::Stat(Stat { path: path.clone() }),
                None,
                &CancellationToken::new(),
            )
            .await;
        let passed = matches!(
            outcome,
            Err(CallError::Tool {
                code: ErrorCode::OutsideRoots,
                ..
            })
        );
        canaries.push(CanaryResult {
            name: "runner_guard_refuses_outside".into(),
            passed,
            detail: match outcome {
                Err(e) => format!("stat {path}: {e}"),
                Ok(_) => format!("stat {path} succeeded although it is outside the grants"),
            },
        });
    }
    let config_hash = config_hash(&[
        "direct",
        &runner.display().to_string(),
        &runner_args("stdio", None, request).join("\u{1f}"),
    ]);
    attestation::conclude(EnforcementLevel::None, config_hash, canaries)
}

struct DirectSandbox {
    id: String,
    connection: RunnerConnection,
    attestation: Attestation,
    child: Mutex<Option<Child>>,
    protected: Arc<crate::protected::ProtectedFiles>,
}

#[async_trait]
impl Sandbox for DirectSandbox {
    fn id(&self) -> &str {
        &self.id
    }

    fn attestation(&self) -> &Attestation {
        &self.attestation
    }

    fn protected(&self) -> Option<&Arc<crate::protected::ProtectedFiles>> {
        Some(&self.protected)
    }

    async fn call(
        &self,
        request: ToolRequest,
        output: Option<mpsc::UnboundedSender<OutputChunk>>,
        cancel: &CancellationToken,
    ) -> ToolCallOutcome {
        ToolCallOutcome {
            result: self.connection.call(request, output, cancel).await,
            denials: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// No wall, no sweep: `direct` confines nothing, so nothing is checked at close.
    async fn close(&self) -> Result<ClosedSandbox, ProviderError> {
        let Some(mut child) = self.child.lock().await.take() else {
            return Ok(ClosedSandbox::default());
        };
        // A shutdown frame ends a stdio-mode runner; give it a moment, then make sure.
        self.connection.shutdown(Duration::from_secs(2)).await;
        match tokio::time::timeout(Duration::from_secs(2), child.wait()).await {
            Ok(_) => Ok(ClosedSandbox::default()),
            Err(_) => child
                .kill()
                .await
                .map(|()| ClosedSandbox::default())
                .map_err(|e| ProviderError::io("stopping the tool-runner", e)),
        }
    }
}
