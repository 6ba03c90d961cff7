//! The files a session's calls downloaded and wrote. Running a downloaded one later
//! (directly, through a shell or an interpreter, or `source`d) is a safety check of the
//! `approvals` crate; running one the session wrote (a file tool's, or a redirection's) cannot
//! be checked, so `auto-in-sandbox` asks. The agent only keeps the lists: what each call that
//! reaches the sandbox downloads (`approvals::downloads_of`) and writes
//! (`approvals::writes_of`, the file tools' paths), in memory and with the session in the
//! store.

use approvals::{downloads_of, resolve, writes_of};
use protocol::{ErrorCode, EventMsg};
use tool_protocol::ToolRequest;

use crate::approval_gate::session_cwd;
use crate::event_bus::SinkError;
use crate::shared::Shared;

/// Records what `request` downloads and writes. Called once the call is committed as started
/// and before it runs, so a file is known even when the command fails or is cut short. A
/// store that cannot save gets an error event (the paths still count in memory).
pub(crate) async fn record(
    shared: &Shared,
    turn_id: Option<&str>,
    request: &ToolRequest,
) -> Result<(), SinkError> {
    let (downloaded, written) = {
        let mut state = shared.state();
        let cwd = session_cwd(&state.settings);
        let (downloaded, written): (Vec<String>, Vec<String>) = match request {
            ToolRequest::RunBash(run) => {
                let cwd = resolve(&cwd, run.cwd.as_deref().unwrap_or("."));
                (
                    downloads_of(&run.command, &cwd),
                    writes_of(&run.command, &cwd),
                )
            }
            ToolRequest::WriteFile(w) => (Vec::new(), vec![resolve(&cwd, &w.path)]),
            ToolRequest::EditFile(e) => (Vec::new(), vec![resolve(&cwd, &e.path)]),
            ToolRequest::Upload(u) => (Vec::new(), vec![resolve(&cwd, &u.path)]),
            _ => (Vec::new(), Vec::new()),
        };
        let downloaded: Vec<String> = downloaded
            .into_iter()
            .filter(|path| !state.downloads.contains(path))
            .collect();
        let written: Vec<String> = written
            .into_iter()
            .filter(|path| !state.written.contains(path))
            .collect();
        state.downloads.extend(downloaded.iter().cloned());
        state.written.extend(written.iter().cloned());
        (downloaded, written)
    };
    if !downloaded.is_empty()
        && let Err(e) = shared.store.add_downloads(&shared.id, &downloaded).await
    {
        let message = format!(
            "the files this command downloads ({}) count as downloaded in this session only: \
             saving them failed, so after a resume running them would not ask: {e}",
            downloaded.join(", ")
        );
        unsaved(shared, turn_id, message, &e).await?;
    }
    if !written.is_empty()
        && let Err(e) = shared.store.add_written(&shared.id, &written).await
    {
        let message = format!(
            "the files this call writes ({}) count as written in this session only: saving \
             them failed, so after a resume running them would not ask in auto-in-sandbox: {e}",
            written.join(", ")
        );
        unsaved(shared, turn_id, message, &e).await?;
    }
    Ok(())
}

async fn unsaved(
    shared: &Shared,
    turn_id: Option<&str>,
    message: String,
    error: &crate::session_store::StoreError,
) -> Result<(), SinkError> {
    tracing::warn!(session = %shared.id, "saving the session's files failed: {error}");
    shared
        .events
        .emit(
            turn_id,
            EventMsg::Error {
                code: ErrorCode::PersistenceFailed,
                message,
            },
        )
        .await
}
