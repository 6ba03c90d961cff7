//! Changes to a running session's settings: folder grants and revocations, hosts allowed for
//! the session. Each change is saved, reported as an event, and then reaches the live sandbox:
//! a wall that can take it live does; otherwise the sandbox is rebuilt in the background
//! (after running calls end) and the model is told its shell state was lost.

use std::sync::Arc;

use protocol::{ErrorCode, EventMsg, FolderAccess, FolderGrant, SessionSettings};

use crate::sandbox_slot::wall_request;
use crate::shared::Shared;

async fn error(shared: &Shared, code: ErrorCode, message: String) {
    shared
        .events
        .emit_logged(None, EventMsg::Error { code, message })
        .await;
}

/// `grant_folder`: adds (or changes the access of) a folder.
pub(crate) async fn grant(shared: &Arc<Shared>, grant: FolderGrant) {
    if !grant.path.starts_with('/') {
        let message = format!("grant_folder: `{}` is not an absolute path", grant.path);
        error(shared, ErrorCode::InvalidOp, message).await;
        return;
    }
    let settings = {
        let mut state = shared.state();
        state.settings.folders.retain(|f| f.path != grant.path);
        state.settings.folders.push(grant.clone());
        state.settings.clone()
    };
    let access = match grant.access {
        FolderAccess::ReadWrite => "read-write",
        FolderAccess::ReadOnly => "read-only",
    };
    let reason = format!("{} was granted ({access})", grant.path);
    let event = EventMsg::FolderGranted { grant };
    changed(shared, &settings, event).await;
    rebuild(shared, reason);
}

/// `revoke_folder`: removes a folder (and the working folder, when it lay inside it).
pub(crate) async fn revoke(shared: &Arc<Shared>, path: String) {
    let settings = {
        let mut state = shared.state();
        let before = state.settings.folders.len();
        state.settings.folders.retain(|f| f.path != path);
        if state.settings.folders.len() == before {
            None
        } else {
            if state
                .settings
                .cwd
                .as_deref()
                .is_some_and(|cwd| std::path::Path::new(cwd).starts_with(&path))
            {
                state.settings.cwd = None;
            }
            Some(state.settings.clone())
        }
    };
    let Some(settings) = settings else {
        let message = format!("revoke_folder: `{path}` is not one of the session's folders");
        error(shared, ErrorCode::InvalidOp, message).await;
        return;
    };
    let reason = format!("{path} was revoked");
    changed(shared, &settings, EventMsg::FolderRevoked { path }).await;
    rebuild(shared, reason);
}

/// `allow_host`: adds a host to the session's extra hosts. A live sandbox that can change its
/// policy live takes it at once; one that cannot is rebuilt.
pub(crate) async fn allow_host(shared: &Arc<Shared>, host: String) {
    if let Err(problem) = check_host(&host) {
        error(
            shared,
            ErrorCode::InvalidOp,
            format!("allow_host: {problem}"),
        )
        .await;
        return;
    }
    let settings = {
        let mut state = shared.state();
        if !state.settings.extra_hosts.contains(&host) {
            state.settings.extra_hosts.push(host.clone());
        }
        state.settings.clone()
    };
    let live = match shared.slot.current().await {
        None => false,
        Some(sandbox) => match sandbox.allow_host_live(&host).await {
            Ok(live) => live,
            Err(e) => {
                tracing::warn!(session = %shared.id, "allowing {host} live failed: {e}");
                false
            }
        },
    };
    let reason = format!("{host} was allowed for this session");
    changed(shared, &settings, EventMsg::HostAllowed { host, live }).await;
    if !live {
        rebuild(shared, reason);
    }
}

/// A `host`, `host:port` or `*.host` entry: a name (letters, digits, `.`, `-`, a leading
/// `*.`) and an optional port from 1 to 65535. The walls check it again when they use it.
pub fn check_host(entry: &str) -> Result<(), String> {
    if entry.is_empty() {
        return Err("an empty host".into());
    }
    if entry.contains("://") || entry.contains('/') {
        return Err(format!("`{entry}`: give a host name, not a URL"));
    }
    let (host, port) = match entry.rsplit_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (entry, None),
    };
    let name = host.strip_prefix("*.").unwrap_or(host);
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-')
    {
        return Err(format!("`{entry}`: not a host name"));
    }
    if let Some(port) = port
        && port.parse::<u16>().map_or(true, |p| p == 0)
    {
        return Err(format!(
            "`{entry}`: the port must be a number from 1 to 65535"
        ));
    }
    Ok(())
}

/// Saves the new settings, tells the host tools' sources, and reports the change.
async fn changed(shared: &Shared, settings: &SessionSettings, event: EventMsg) {
    shared.tools.settings_changed(settings);
    if let Err(e) = shared.store.save_settings(&shared.id, settings).await {
        error(shared, ErrorCode::PersistenceFailed, e.to_string()).await;
    }
    shared.events.emit_logged(None, event).await;
    if let Err(e) = shared.persist_messages().await {
        error(shared, ErrorCode::PersistenceFailed, e.to_string()).await;
    }
}

/// Rebuilds a live sandbox in the background with the settings in force when the rebuild
/// starts (so two quick changes both reach the wall). Nothing happens when no sandbox is
/// live: the next call builds one with the new settings anyway.
fn rebuild(shared: &Arc<Shared>, reason: String) {
    let shared = Arc::clone(shared);
    tokio::spawn(async move {
        if !shared.slot.is_live().await {
            return;
        }
        let note = format!(
            "The sandbox was rebuilt because {reason}: shell state (variables, background \
             processes, files outside the granted folders) was lost."
        );
        let request = || wall_request(&shared.id, &shared.state().settings);
        let rebuilt = || shared.state().notes.push(note);
        if let Err(e) = shared
            .slot
            .recreate(request, &reason, &shared.events, rebuilt)
            .await
        {
            shared
                .events
                .emit_logged(
                    None,
                    EventMsg::Error {
                        code: ErrorCode::SandboxRefused,
                        message: e.to_string(),
                    },
                )
                .await;
        }
    });
}
