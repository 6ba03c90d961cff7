//! `paddock approvals list|revoke`: the machine's `always` approvals, or a stored session's
//! `session` approvals with `--session ID`.
//!
//! These edit the session store directly. A session running in another process re-reads the
//! machine's `always` approvals at its next turn, so a revocation reaches it then; its own
//! `session` approvals live in that process (revoke those there, with the `revoke_approval`
//! op), and `--session` here is for stored sessions that are not running.

use std::process::ExitCode;

use agent::{SessionStore, listed_approval};
use anyhow::{Context, bail};

use crate::sessions_cmd::open_existing;
use paddock::paths::Paths;

#[allow(clippy::print_stdout, reason = "the CLI's output is its interface")]
pub async fn list(paths: &Paths, session: Option<&str>, json: bool) -> anyhow::Result<ExitCode> {
    let store = open_existing(paths).await?;
    let approvals = match (store, session) {
        (None, None) => Vec::new(),
        (None, Some(id)) => bail!("no stored session `{id}` (there are no sessions yet)"),
        (Some(store), None) => store
            .always_approvals()
            .await
            .context("reading the machine's approvals")?,
        (Some(store), Some(id)) => {
            store
                .load(id)
                .await
                .with_context(|| format!("loading session `{id}`"))?
                .with_context(|| {
                    format!("no stored session `{id}` (list them with `paddock sessions list`)")
                })?
                .session_approvals
        }
    };
    let listed: Vec<protocol::StandingApproval> = approvals.iter().map(listed_approval).collect();
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
pub async fn revoke(paths: &Paths, id: &str, session: Option<&str>) -> anyhow::Result<ExitCode> {
    let Some(store) = open_existing(paths).await? else {
        bail!("no approval `{id}`: no session or approval was ever stored on this machine");
    };
    match session {
        None => {
            let known = store
                .always_approvals()
                .await
                .context("reading the machine's approvals")?
                .into_iter()
                .find(|a| a.id == id);
            let Some(approval) = known else {
                bail!(
                    "no `always` approval has the id `{id}` (see `paddock approvals list`; a \
                     session's own approvals need --session SESSION_ID)"
                );
            };
            store
                .remove_always_approval(id)
                .await
                .context("removing the approval")?;
            println!("revoked: {}", listed_approval(&approval).description);
        }
        Some(session_id) => {
            let record = store
                .load(session_id)
                .await
                .with_context(|| format!("loading session `{session_id}`"))?
                .with_context(|| {
                    format!(
                        "no stored session `{session_id}` (list them with `paddock sessions list`)"
                    )
                })?;
            let mut approvals = record.session_approvals;
            let Some(index) = approvals.iter().position(|a| a.id == id) else {
                bail!(
                    "session `{session_id}` has no approval with the id `{id}` (see `paddock \
                     approvals list --session {session_id}`)"
                );
            };
            let approval = approvals.remove(index);
            store
                .save_session_approvals(session_id, &approvals)
                .await
                .context("saving the session's approvals")?;
            println!("revoked: {}", listed_approval(&approval).description);
        }
    }
    Ok(ExitCode::SUCCESS)
}
