//! `paddock machine sandbox check`: builds a throwaway sandbox with the configured provider on an
//! empty folder, shows the wall attestation its canaries produced from inside, runs one tool call
//! through it, and tears it down. Proof that the wall works on this machine, without a model.

use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context;
use protocol::{Attestation, FolderAccess, FolderGrant, ProviderKind};
use sandbox_provider::SandboxRequest;
use tokio_util::sync::CancellationToken;
use tool_protocol::{RunBash, ToolRequest, ToolResult};

use paddock_host::Host;

/// The attestation as people read it.
pub fn render_attestation(attestation: &Attestation) -> String {
    let mut text = format!(
        "wall attestation (enforcement: {}, config {}):\n",
        attestation.enforcement.as_str(),
        attestation.config_hash
    );
    for canary in &attestation.canaries {
        text.push_str(&format!(
            "  [{}] {}: {}\n",
            if canary.passed { "ok" } else { "FAIL" },
            canary.name,
            canary.detail.lines().next().unwrap_or_default()
        ));
    }
    text
}

#[allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "the CLI's output is its interface"
)]
pub async fn check(host: &Host, provider: Option<ProviderKind>) -> anyhow::Result<ExitCode> {
    let config = host.config();
    let paths = host.paths();
    let kind = provider.unwrap_or(config.provider);
    let provider = host.provider(kind)?;
    let session_id = format!("check-{}", std::process::id());
    // Held while the check's sandbox lives: another process's orphan reaping leaves it alone.
    let _lease = host.hold_session(&session_id)?;
    // Under the state folder, not the system temp folder: a systemd-run OpenShell gateway has a
    // private /tmp and could not bind it.
    let folder = paths
        .state_dir
        .join("checks")
        .join(format!("check-{}", std::process::id()));
    std::fs::create_dir_all(&folder)
        .with_context(|| format!("creating the check folder {}", folder.display()))?;
    let folder_text = folder.to_string_lossy().into_owned();
    let request = SandboxRequest {
        session_id: session_id.clone(),
        folders: vec![FolderGrant {
            path: folder_text.clone(),
            access: FolderAccess::ReadWrite,
        }],
        cwd: folder_text,
        network_profile: config.network_profile,
        extra_hosts: Vec::new(),
        credentials: Vec::new(),
    };
    println!(
        "building a {} sandbox on an empty folder ({})",
        kind.as_str(),
        folder.display()
    );
    let started = Instant::now();
    let outcome = provider
        .start(&request, &|step: String| eprintln!("  … {step}"))
        .await;
    let sandbox = match outcome {
        Ok(sandbox) => sandbox,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&folder);
            println!("REFUSED: {e}");
            return Ok(ExitCode::FAILURE);
        }
    };
    let built = started.elapsed();
    print!("{}", render_attestation(sandbox.attestation()));
    println!("built and attested in {} ms", built.as_millis());

    let call = ToolRequest::RunBash(RunBash {
        command: concat!(
            "echo \"inside: uid $(id -u), $(uname -sr), working in $PWD\"; ",
            "echo probe > .paddock-check && rm .paddock-check && ",
            "echo \"the granted folder takes writes\""
        )
        .into(),
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
    let call_ok = match answer {
        Ok(ToolResult::RunBash(result)) if result.exit_code == Some(0) => {
            for line in result.stdout.to_text_lossy().lines() {
                println!("  {line}");
            }
            true
        }
        Ok(other) => {
            println!("a tool call through the wall did not succeed: {other:?}");
            false
        }
        Err(e) => {
            println!("a tool call through the wall failed: {e}");
            false
        }
    };
    let closed = sandbox.close().await;
    let _ = std::fs::remove_dir_all(&folder);
    if let Err(e) = &closed {
        println!("tearing the sandbox down failed: {e}");
    }
    let ok = sandbox.attestation().passed() && call_ok && closed.is_ok();
    println!(
        "{}",
        if ok {
            "check passed: sessions on this machine run inside this wall"
        } else {
            "CHECK FAILED"
        }
    );
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
