//! `paddock approvals list|revoke`: the machine's `always` approvals, or a stored session's
//! `session` approvals with `--session ID`, through the host.
//!
//! A session running in another process re-reads the machine's `always` approvals at its
//! next turn, so a revocation reaches it then; its own `session` approvals live in that
//! process (revoke those there), and `--session` here is for stored sessions.

use std::process::ExitCode;

use anyhow::bail;
use paddock_host::Host;
use paddock_host::paths::Paths;

#[allow(clippy::print_stdout, reason = "the CLI's output is its interface")]
pub async fn list(
    paths: &Paths,
    stored: bool,
    session: Option<&str>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let listed = match (stored, session) {
        (false, None) => Vec::new(),
        (false, Some(id)) => bail!("no stored session `{id}` (there are no sessions yet)"),
        (true, _) => {
            let host = Host::open(paddock_host::HostOptions::new(paths.clone())).await?;
            host.standing_approvals(session).await?
        }
    };
    if json {
        println!("{}", serde_json::to_string(&listed)?);
        return Ok(ExitCode::SUCCESS);
    }
    if listed.is_empty() {
        match session {
            Some(id) => println!("session `{id}` has no standing approvals"),
            None => println!("no `always` approvals on this machine"),
        }
    }
    for approval in &listed {
        let scope = match approval.scope {
            protocol::ApprovalScope::Always => "always",
            protocol::ApprovalScope::Session => "session",
            protocol::ApprovalScope::Once => "once",
        };
        println!("{}  {scope}  {}", approval.id, approval.description);
    }
    Ok(ExitCode::SUCCESS)
}

#[allow(clippy::print_stdout, reason = "the CLI's output is its interface")]
pub async fn revoke(
    paths: &Paths,
    stored: bool,
    id: &str,
    session: Option<&str>,
) -> anyhow::Result<ExitCode> {
    if !stored {
        bail!("no approval `{id}`: no session or approval was ever stored on this machine");
    }
    let host = Host::open(paddock_host::HostOptions::new(paths.clone())).await?;
    match host.revoke_standing_approval(id, session).await {
        Ok(approval) => {
            println!("revoked: {}", approval.description);
            Ok(ExitCode::SUCCESS)
        }
        Err(paddock_host::HostError::InvalidRequest { .. }) if session.is_none() => bail!(
            "no `always` approval has the id `{id}` (see `paddock approvals list`; a \
             session's own approvals need --session SESSION_ID)"
        ),
        Err(paddock_host::HostError::InvalidRequest { .. }) => {
            let session_id = session.unwrap_or_default();
            bail!(
                "session `{session_id}` has no approval with the id `{id}` (see `paddock \
                 approvals list --session {session_id}`)"
            )
        }
        Err(e) => Err(e.into()),
    }
}
