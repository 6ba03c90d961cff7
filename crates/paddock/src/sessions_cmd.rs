//! `paddock sessions list`: the stored sessions, to pick one for `paddock run --resume`.

use std::process::ExitCode;

use anyhow::Context;
use paddock_host::paths::Paths;
use paddock_host::{Host, SessionInfo, SessionState};
use protocol::FolderAccess;

/// Whether any session was ever stored on this machine (listing never creates the store).
pub fn stored(paths: &Paths) -> bool {
    paths.sessions_db().exists()
}

#[allow(clippy::print_stdout, reason = "the CLI's output is its interface")]
pub fn none(json: bool) -> anyhow::Result<ExitCode> {
    if json {
        println!("[]");
    } else {
        println!("no stored sessions (`paddock run` stores one per run)");
    }
    Ok(ExitCode::SUCCESS)
}

fn folders(summary: &SessionInfo) -> String {
    if summary.folders.is_empty() {
        return "(no folders)".to_owned();
    }
    summary
        .folders
        .iter()
        .map(|f| match f.access {
            FolderAccess::ReadWrite => f.path.clone(),
            FolderAccess::ReadOnly => format!("{}:ro", f.path),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[allow(clippy::print_stdout, reason = "the CLI's output is its interface")]
pub async fn list(host: &Host, json: bool) -> anyhow::Result<ExitCode> {
    let sessions = host.list_sessions().await.context("listing sessions")?;
    if json {
        println!("{}", serde_json::to_string(&sessions)?);
        return Ok(ExitCode::SUCCESS);
    }
    if sessions.is_empty() {
        return none(false);
    }
    for session in &sessions {
        let provider = session.provider.map_or("unknown", |p| p.as_str());
        let state = match session.state {
            SessionState::Elsewhere => "  (running in another paddock process)",
            SessionState::Running | SessionState::Stored => "",
        };
        println!(
            "{}  created {}  last active {}  {}  {}{state}",
            session.id,
            crate::utc::minute(session.created_ms),
            crate::utc::minute(session.updated_ms),
            provider,
            folders(session)
        );
        if !session.title.is_empty() {
            println!("    {}", session.title);
        }
    }
    Ok(ExitCode::SUCCESS)
}
