//! The files a session's commands downloaded. Running one of them later (directly, through a
//! shell or an interpreter, or `source`d) is a safety check of the `approvals` crate; the agent
//! only keeps the list: what each `run_bash` call that reaches the sandbox downloads
//! (`approvals::downloads_of`), in memory and with the session in the store.

use approvals::{downloads_of, resolve};
use protocol::{ErrorCode, EventMsg};
use tool_protocol::ToolRequest;

use crate::approval_gate::session_cwd;
use crate::event_bus::SinkError;
use crate::shared::Shared;

/// Records what `request` downloads, if it is a command. Called once the call is committed as
/// started and before it runs, so a download is known even when the command fails or is cut
/// short. A store that cannot save gets an error event (the paths still count in memory).
pub(crate) async fn record(
    shared: &Shared,
    turn_id: Option<&str>,
    request: &ToolRequest,
) -> Result<(), SinkError> {
    let ToolRequest::RunBash(run) = request else {
        return Ok(());
    };
    let new: Vec<String> = {
        let mut state = shared.state();
        let cwd = resolve(
            &session_cwd(&state.settings),
            run.cwd.as_deref().unwrap_or("."),
        );
        let new: Vec<String> = downloads_of(&run.command, &cwd)
            .into_iter()
            .filter(|path| !state.downloads.contains(path))
            .collect();
        state.downloads.extend(new.iter().cloned());
        new
    };
    if new.is_empty() {
        return Ok(());
    }
    if let Err(e) = shared.store.add_downloads(&shared.id, &new).await {
        tracing::warn!(session = %shared.id, "saving downloaded paths failed: {e}");
        let message = format!(
            "the files this command downloads ({}) count as downloaded in this session only: \
             saving them failed, so after a resume running them would not ask: {e}",
            new.join(", ")
        );
        shared
            .events
            .emit(
                turn_id,
                EventMsg::Error {
                    code: ErrorCode::PersistenceFailed,
                    message,
                },
            )
            .await?;
    }
    Ok(())
}
