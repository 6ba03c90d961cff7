//! The approvals in force for a session: keeping the ones the user gives (session ones with the
//! session, `always` ones machine-wide), withdrawing them (`revoke_approval`), and re-reading
//! the machine's `always` approvals at each turn so a revocation made elsewhere takes effect.
//! A store that cannot save is never silent: the user gets an `error` event saying what will
//! not survive a restart.

use approvals::{ApprovalScope, StandingApproval};
use protocol::{ErrorCode, EventMsg};

use crate::approval_gate::listed_approval;
use crate::event_bus::SinkError;
use crate::shared::Shared;

fn persistence_error(message: String) -> EventMsg {
    EventMsg::Error {
        code: ErrorCode::PersistenceFailed,
        message,
    }
}

/// Keeps new session or always approvals, saves them, and lists the approvals in force.
pub(crate) async fn stand(
    shared: &Shared,
    turn_id: Option<&str>,
    new_approvals: Vec<StandingApproval>,
) -> Result<(), SinkError> {
    let mut session_changed = false;
    for approval in new_approvals {
        match approval.scope {
            ApprovalScope::Always => {
                shared.state().always_approvals.push(approval.clone());
                if let Err(e) = shared.store.add_always_approval(&approval).await {
                    tracing::warn!(session = %shared.id, "saving an always approval failed: {e}");
                    shared.state().unsaved_always.push(approval.clone());
                    let message = format!(
                        "the `always` approval ({}) holds in this session only: saving it for \
                         the machine failed, so it will not survive a restart: {e}",
                        approval.grant.describe()
                    );
                    shared
                        .events
                        .emit(turn_id, persistence_error(message))
                        .await?;
                }
            }
            ApprovalScope::Session => {
                shared.state().session_approvals.push(approval);
                session_changed = true;
            }
            ApprovalScope::Once => {}
        }
    }
    if session_changed {
        let approvals = shared.state().session_approvals.clone();
        if let Err(e) = shared
            .store
            .save_session_approvals(&shared.id, &approvals)
            .await
        {
            tracing::warn!(session = %shared.id, "saving session approvals failed: {e}");
            let message = format!(
                "the session's approvals hold until it ends, but saving them failed, so a \
                 resumed session will not have them: {e}"
            );
            shared
                .events
                .emit(turn_id, persistence_error(message))
                .await?;
        }
    }
    let approvals = shared.state().listed();
    shared
        .events
        .emit(None, EventMsg::StandingApprovals { approvals })
        .await
}

/// Re-reads the machine's `always` approvals (another session or the CLI may have added or
/// revoked some). When they cannot be read, none apply (the user is asked instead) and an
/// error says so; approvals this session could not save stay in force for it.
pub(crate) async fn refresh_always(
    shared: &Shared,
    turn_id: Option<&str>,
) -> Result<(), SinkError> {
    let stored = shared.store.always_approvals().await;
    let failure = {
        let mut state = shared.state();
        let mut always = match &stored {
            Ok(list) => list.clone(),
            Err(_) => Vec::new(),
        };
        for approval in &state.unsaved_always {
            if !always.iter().any(|a| a.id == approval.id) {
                always.push(approval.clone());
            }
        }
        state.always_approvals = always;
        stored.err()
    };
    match failure {
        None => Ok(()),
        Some(e) => {
            let message = format!(
                "the machine's `always` approvals cannot be read, so none apply in this turn \
                 (calls they cover ask instead): {e}"
            );
            shared
                .events
                .emit(turn_id, persistence_error(message))
                .await
        }
    }
}

/// Withdraws a session or always approval by id (the `revoke_approval` op).
pub(crate) async fn revoke(shared: &Shared, approval_id: &str) {
    let events = &shared.events;
    let in_session = {
        let mut state = shared.state();
        let found = state
            .session_approvals
            .iter()
            .position(|a| a.id == approval_id);
        found.map(|index| state.session_approvals.remove(index))
    };
    if let Some(approval) = in_session {
        let approvals = shared.state().session_approvals.clone();
        if let Err(e) = shared
            .store
            .save_session_approvals(&shared.id, &approvals)
            .await
        {
            let message = format!(
                "the session approval ({}) is withdrawn, but saving that failed, so a resumed \
                 session would have it again: {e}",
                approval.grant.describe()
            );
            events.emit_logged(None, persistence_error(message)).await;
        }
        revoked(shared, &approval).await;
        return;
    }

    // An always approval: in memory, or stored by another session since this one started.
    let remembered = shared
        .state()
        .always_approvals
        .iter()
        .find(|a| a.id == approval_id)
        .cloned();
    let known = match remembered {
        Some(approval) => Some(approval),
        None => match shared.store.always_approvals().await {
            Ok(stored) => stored.into_iter().find(|a| a.id == approval_id),
            Err(e) => {
                let message = format!("revoke_approval: reading the machine's approvals: {e}");
                events.emit_logged(None, persistence_error(message)).await;
                return;
            }
        },
    };
    let Some(approval) = known else {
        let message = format!(
            "revoke_approval: no standing approval has the id `{approval_id}` (list_approvals \
             shows the ones in force)"
        );
        events
            .emit_logged(
                None,
                EventMsg::Error {
                    code: ErrorCode::InvalidOp,
                    message,
                },
            )
            .await;
        return;
    };
    {
        let mut state = shared.state();
        state.always_approvals.retain(|a| a.id != approval_id);
        state.unsaved_always.retain(|a| a.id != approval_id);
    }
    match shared.store.remove_always_approval(approval_id).await {
        Ok(_) => revoked(shared, &approval).await,
        Err(e) => {
            let message = format!(
                "the `always` approval ({}) is withdrawn from this session, but removing it \
                 from the machine failed, so other sessions still use it: {e}",
                approval.grant.describe()
            );
            events.emit_logged(None, persistence_error(message)).await;
            let approvals = shared.state().listed();
            events
                .emit_logged(None, EventMsg::StandingApprovals { approvals })
                .await;
        }
    }
}

async fn revoked(shared: &Shared, approval: &StandingApproval) {
    let shown = listed_approval(approval);
    shared
        .events
        .emit_logged(
            None,
            EventMsg::ApprovalRevoked {
                approval_id: shown.id,
                scope: shown.scope,
                description: shown.description,
            },
        )
        .await;
    let approvals = shared.state().listed();
    shared
        .events
        .emit_logged(None, EventMsg::StandingApprovals { approvals })
        .await;
}
