//! The machine's sandbox check: a throwaway sandbox built with a wall on an empty folder, its
//! attestation from inside, one command run through it, and its teardown. Proof that the wall
//! works on this machine, without a model. Every front end shows the [`SandboxCheck`] this
//! returns (`paddock machine sandbox check`, `POST /v1/machine/sandbox/check`).

use std::time::Instant;

use protocol::{Attestation, FolderAccess, FolderGrant, ProviderKind};
use sandbox_provider::SandboxRequest;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;
use tool_protocol::{RunBash, ToolRequest, ToolResult};

use crate::error::HostError;
use crate::host::Host;

/// The command run through the wall: who it runs as, where, and a write into the folder.
const CHECK_COMMAND: &str = concat!(
    "echo \"inside: uid $(id -u), $(uname -sr), working in $PWD\"; ",
    "echo probe > .paddock-check && rm .paddock-check && ",
    "echo \"the granted folder takes writes\""
);

/// What the check's command did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "wire-schemas", derive(ts_rs::TS, utoipa::ToSchema))]
pub struct CheckCall {
    /// It ran inside the wall and exited 0.
    pub ok: bool,
    /// What it printed, line by line.
    pub output: Vec<String>,
    /// Why it did not succeed.
    pub problem: Option<String>,
}

/// What checking a wall found. `passed` only when the wall was built, every canary passed,
/// the command succeeded and the sandbox was torn down.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "wire-schemas", derive(ts_rs::TS, utoipa::ToSchema))]
pub struct SandboxCheck {
    pub provider: ProviderKind,
    /// The empty folder granted read-write (removed afterwards).
    pub folder: String,
    /// What the provider reported while building the wall, in order.
    pub steps: Vec<String>,
    /// Why the wall was refused (then nothing else ran).
    pub refused: Option<String>,
    /// The wall's attestation from inside: its canaries' results.
    pub attestation: Option<Attestation>,
    /// Milliseconds from asking for the sandbox to an attested wall.
    #[cfg_attr(feature = "wire-schemas", ts(type = "number | null"))]
    pub build_ms: Option<u64>,
    /// The command run through the wall.
    pub call: Option<CheckCall>,
    /// Why tearing the sandbox down failed.
    pub teardown_error: Option<String>,
    pub passed: bool,
}

impl Host {
    /// Builds a throwaway sandbox with the wall of `kind` (default: the configured one) on an
    /// empty folder under the state folder, reads its attestation, runs one command through
    /// it and tears it down. `progress` hears each step as it happens (the answer lists them
    /// too). A wall that cannot be built is a check that did not pass (`refused`), not an
    /// error; errors are this host's own (the folder, the lease).
    pub async fn sandbox_check(
        &self,
        kind: Option<ProviderKind>,
        progress: &(dyn Fn(String) + Send + Sync),
    ) -> Result<SandboxCheck, HostError> {
        let config = self.config();
        let kind = kind.unwrap_or(config.provider);
        let session_id = format!("check-{}", uuid::Uuid::new_v4());
        // Held while the check's sandbox lives: another process's orphan reaping leaves it alone.
        let _lease = self.hold_session(&session_id)?;
        // Under the state folder, not the system temp folder: a systemd-run OpenShell gateway
        // has a private /tmp and could not bind it.
        let folder = self.paths().state_dir.join("checks").join(&session_id);
        std::fs::create_dir_all(&folder).map_err(|e| {
            HostError::io(format!("creating the check folder {}", folder.display()), e)
        })?;
        let folder_text = folder.to_string_lossy().into_owned();
        let steps = std::sync::Mutex::new(Vec::new());
        let report = |step: String| {
            progress(step.clone());
            steps
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push(step);
        };
        report(format!(
            "building a {} sandbox on an empty folder ({folder_text})",
            kind.as_str()
        ));
        let mut check = SandboxCheck {
            provider: kind,
            folder: folder_text.clone(),
            steps: Vec::new(),
            refused: None,
            attestation: None,
            build_ms: None,
            call: None,
            teardown_error: None,
            passed: false,
        };
        let request = SandboxRequest {
            session_id,
            folders: vec![FolderGrant {
                path: folder_text.clone(),
                access: FolderAccess::ReadWrite,
            }],
            cwd: folder_text,
            network_profile: config.network_profile,
            extra_hosts: Vec::new(),
            credentials: Vec::new(),
        };
        let started = Instant::now();
        let built = match self.provider(kind) {
            Ok(provider) => provider
                .start(&request, &report)
                .await
                .map_err(|e| e.to_string()),
            Err(e) => Err(e.to_string()),
        };
        match built {
            Err(reason) => check.refused = Some(reason),
            Ok(sandbox) => {
                check.build_ms =
                    Some(u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX));
                check.attestation = Some(sandbox.attestation().clone());
                check.call = Some(run_check_command(sandbox.as_ref()).await);
                if let Err(e) = sandbox.close().await {
                    check.teardown_error = Some(e.to_string());
                }
            }
        }
        let _ = std::fs::remove_dir_all(&folder);
        check.passed = check.refused.is_none()
            && check.attestation.as_ref().is_some_and(Attestation::passed)
            && check.call.as_ref().is_some_and(|c| c.ok)
            && check.teardown_error.is_none();
        check.steps = steps
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        Ok(check)
    }
}

async fn run_check_command(sandbox: &dyn sandbox_provider::Sandbox) -> CheckCall {
    let call = ToolRequest::RunBash(RunBash {
        command: CHECK_COMMAND.into(),
        cwd: None,
        env: None,
        stdin: None,
        timeout_ms: Some(10_000),
        max_output_bytes: None,
    });
    let answer = sandbox
        .call(call, None, &CancellationToken::new())
        .await
        .result;
    match answer {
        Ok(ToolResult::RunBash(result)) => CheckCall {
            ok: result.exit_code == Some(0),
            output: result
                .stdout
                .to_text_lossy()
                .lines()
                .map(str::to_owned)
                .collect(),
            problem: (result.exit_code != Some(0)).then(|| {
                let how = match (result.exit_code, result.signal) {
                    _ if result.timed_out => "timed out".to_owned(),
                    (Some(code), _) => format!("exited with code {code}"),
                    (None, Some(signal)) => format!("was killed by signal {signal}"),
                    (None, None) => "ended without an exit status".to_owned(),
                };
                format!(
                    "the command {how}: {}",
                    result.stderr.to_text_lossy().trim()
                )
            }),
        },
        Ok(other) => CheckCall {
            ok: false,
            output: Vec::new(),
            problem: Some(format!("an unexpected answer: {other:?}")),
        },
        Err(e) => CheckCall {
            ok: false,
            output: Vec::new(),
            problem: Some(e.to_string()),
        },
    }
}
