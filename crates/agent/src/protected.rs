//! Files the host runs later, from the agent's side: the protected list the approvals check
//! writes against, the sweeps after every call that can write (and at turn end and close)
//! with their events and a note for the model, and approved writes of protected files made by
//! the host outside the wall.

use std::path::Path;
use std::sync::Arc;

use approvals::{ProtectedPaths, SafetyCheckKind, resolve};
use protocol::EventMsg;
use sandbox_provider::protected::{ProtectedChange, ProtectedFiles};
use sandbox_provider::{CallError, ToolCallOutcome};
use tool_protocol::ToolRequest;

use crate::approval_gate::session_cwd;
use crate::event_bus::{SessionEvents, SinkError};

/// What the model is told when a write of a protected path failed inside (or when a command
/// hit a read-only protected path).
pub(crate) const READ_ONLY_NOTE: &str = "inside the read-write folders, files the host runs \
     later (git config, hooks and info, shell dotfiles, editor and agent settings) are \
     read-only. To change one, use write_file or edit_file on its path: the user is asked, and \
     an approved change is made by Paddock outside the sandbox";

/// What the model is told when a command met a read-only file system: about the folder the
/// session was granted read-only when the output names a path in one, else about protected
/// files (`READ_ONLY_NOTE`), mentioning the read-only folders the session has.
pub(crate) fn read_only_note(output: &str, folders: &[protocol::FolderGrant]) -> String {
    let read_only: Vec<&str> = folders
        .iter()
        .filter(|grant| grant.access == protocol::FolderAccess::ReadOnly)
        .map(|grant| grant.path.as_str())
        .collect();
    let named = read_only.iter().find(|folder| {
        output.match_indices(*folder).any(|(at, _)| {
            // The folder itself or a path under it, not a longer name that starts the same.
            matches!(
                output[at + folder.len()..].chars().next(),
                None | Some('/' | ':' | ' ' | '\n' | '\'' | '"')
            )
        })
    });
    match (named, read_only.is_empty()) {
        (Some(folder), _) => format!(
            "{folder} was granted to this session read-only: nothing in the sandbox can write \
             there. If the task needs a change in it, say so to the user, who can grant it \
             read-write"
        ),
        (None, true) => READ_ONLY_NOTE.to_owned(),
        (None, false) => format!(
            "{READ_ONLY_NOTE}. These folders were granted read-only, so nothing in the sandbox \
             can write in them: {}",
            read_only.join(", ")
        ),
    }
}

/// Whether a command's output shows it met a read-only protected path: a write refused by the
/// mount, or git unable to write a repository's configuration (renaming onto the mounted
/// file is refused as busy).
pub(crate) fn hit_read_only(output: &str) -> bool {
    output.contains("Read-only file system")
        || output.contains("could not write config file")
        || output.contains("could not lock config file")
}

/// The protected paths for a call's approval: the list's globs, and what the live sandbox
/// found (a repository's `core.hooksPath` folder, an included configuration).
pub(crate) fn paths(globs: &ProtectedPaths, live: Option<&Arc<ProtectedFiles>>) -> ProtectedPaths {
    match live {
        Some(files) => globs.with_exact(files.paths()),
        None => globs.clone(),
    }
}

/// Whether a safety check means a write of a protected path.
pub(crate) fn is_protected_write(kind: SafetyCheckKind) -> bool {
    matches!(
        kind,
        SafetyCheckKind::ProtectedPath | SafetyCheckKind::GitHooks | SafetyCheckKind::GitConfig
    )
}

/// The protected path a file-tool call writes, when it writes one: such a call runs on the
/// host, outside the wall (it is read-only inside).
pub(crate) fn host_write_path(
    settings: &protocol::SessionSettings,
    files: &ProtectedFiles,
    request: &ToolRequest,
) -> Option<String> {
    let path = match request {
        ToolRequest::WriteFile(r) => &r.path,
        ToolRequest::EditFile(r) => &r.path,
        ToolRequest::Delete(r) => &r.path,
        _ => return None,
    };
    let cwd = session_cwd(settings);
    let absolute = resolve(&cwd, path);
    files.is_protected(Path::new(&absolute)).then_some(absolute)
}

/// Makes an approved write of a protected path on the host (blocking I/O off the runtime).
pub(crate) async fn host_write(
    files: Arc<ProtectedFiles>,
    request: ToolRequest,
) -> ToolCallOutcome {
    let result = tokio::task::spawn_blocking(move || files.write(&request))
        .await
        .unwrap_or_else(|e| Err(CallError::Protocol(format!("the host write failed: {e}"))));
    ToolCallOutcome {
        result,
        denials: Vec::new(),
        notes: Vec::new(),
    }
}

/// The model's note about protected paths a sweep found and undid (`shown`, one line each).
pub(crate) fn undone_note(shown: &[String]) -> String {
    format!(
        "files the host runs later were created or replaced and undone: {}. {READ_ONLY_NOTE}",
        shown.join("; ")
    )
}

/// Sweeps and reports each change as an event; returns them in one line each.
pub(crate) async fn sweep_and_report(
    events: &SessionEvents,
    turn_id: Option<&str>,
    call_id: Option<&str>,
    files: Arc<ProtectedFiles>,
) -> Result<Vec<String>, SinkError> {
    let changes: Vec<ProtectedChange> = tokio::task::spawn_blocking(move || files.sweep())
        .await
        .unwrap_or_else(|e| {
            tracing::error!("the protected-files sweep failed: {e}");
            Vec::new()
        });
    let mut shown = Vec::new();
    for change in changes {
        let path = change.path.display().to_string();
        shown.push(format!("`{path}` ({})", change.detail));
        events
            .emit(
                turn_id,
                EventMsg::ProtectedPathChanged {
                    call_id: call_id.map(str::to_owned),
                    path,
                    reason: change.reason,
                    action: change.action,
                    quarantined_to: change.quarantined_to.map(|p| p.display().to_string()),
                    detail: change.detail,
                },
            )
            .await?;
    }
    Ok(shown)
}

#[cfg(test)]
mod tests {
    use protocol::{FolderAccess, FolderGrant};

    use super::{READ_ONLY_NOTE, hit_read_only, read_only_note};

    #[test]
    fn read_only_protected_paths_are_recognised_in_output() {
        assert!(hit_read_only(
            "sh: 1: cannot create .bashrc: Read-only file system"
        ));
        assert!(hit_read_only(
            "error: could not write config file .git/config: Device or resource busy"
        ));
        assert!(hit_read_only(
            "error: could not lock config file .git/config"
        ));
        assert!(!hit_read_only("Everything up-to-date"));
    }

    fn grants() -> Vec<FolderGrant> {
        vec![
            FolderGrant {
                path: "/home/u/work".into(),
                access: FolderAccess::ReadWrite,
            },
            FolderGrant {
                path: "/home/u/docs".into(),
                access: FolderAccess::ReadOnly,
            },
        ]
    }

    #[test]
    fn a_write_into_a_read_only_folder_is_explained_as_the_grant() {
        let output = "bash: line 1: /home/u/docs/x: Read-only file system";
        let note = read_only_note(output, &grants());
        assert!(
            note.starts_with("/home/u/docs was granted to this session read-only"),
            "{note}"
        );
        assert!(!note.contains("git config"), "{note}");
    }

    #[test]
    fn a_protected_file_or_an_unnamed_path_gets_the_protected_note_and_the_read_only_folders() {
        for output in [
            "sh: 1: cannot create .bashrc: Read-only file system",
            // A longer name that starts like the read-only folder is not in it.
            "bash: /home/u/docs2/x: Read-only file system",
        ] {
            let note = read_only_note(output, &grants());
            assert!(note.starts_with(READ_ONLY_NOTE), "{note}");
            assert!(note.ends_with("can write in them: /home/u/docs"), "{note}");
        }
        let only_rw = &grants()[..1];
        assert_eq!(
            read_only_note("x: Read-only file system", only_rw),
            READ_ONLY_NOTE
        );
    }
}
