//! `paddock machine sandbox check`: renders the host's [`SandboxCheck`] (a throwaway sandbox
//! built on an empty folder, its attestation from inside, one command through it, teardown).

use std::process::ExitCode;

use paddock_host::{Host, SandboxCheck};
use protocol::{Attestation, ProviderKind};

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

/// The check as people read it (the build steps went to stderr as they happened).
pub fn render_check(check: &SandboxCheck) -> String {
    let mut text = String::new();
    if let Some(reason) = &check.refused {
        text.push_str(&format!("REFUSED: {reason}\n"));
    }
    if let Some(attestation) = &check.attestation {
        text.push_str(&render_attestation(attestation));
    }
    if let Some(ms) = check.build_ms {
        text.push_str(&format!("built and attested in {ms} ms\n"));
    }
    if let Some(call) = &check.call {
        for line in &call.output {
            text.push_str(&format!("  {line}\n"));
        }
        if let Some(problem) = &call.problem {
            text.push_str(&format!(
                "a tool call through the wall did not succeed: {problem}\n"
            ));
        }
    }
    if let Some(problem) = &check.teardown_error {
        text.push_str(&format!("tearing the sandbox down failed: {problem}\n"));
    }
    text.push_str(if check.passed {
        "check passed: sessions on this machine run inside this wall\n"
    } else {
        "CHECK FAILED\n"
    });
    text
}

#[allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "the CLI's output is its interface"
)]
pub async fn check(
    host: &Host,
    provider: Option<ProviderKind>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let check = host
        .sandbox_check(provider, &|step: String| {
            if !json {
                eprintln!("  … {step}");
            }
        })
        .await?;
    if json {
        println!("{}", serde_json::to_string(&check)?);
    } else {
        print!("{}", render_check(&check));
    }
    Ok(if check.passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
