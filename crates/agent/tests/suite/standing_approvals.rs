//! Standing approvals are listed and revocable: `revoke_approval` withdraws a session or an
//! always approval (from memory and from the store), calls it covered ask again, and an
//! always approval removed elsewhere stops applying at the next turn.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is a failed test"
)]

use crate::harness;

use harness::{Harness, decide};
use pretty_assertions::assert_eq;
use protocol::{
    ApprovalDecision, ApprovalMode, ApprovalScope, DecidedBy, ErrorCode, Event, EventMsg, Op,
};
use serde_json::json;
use test_support::model_server::Reply;

/// Scripts one turn that runs `touch stamp` as call `id`, then ends.
fn touch_turn(h: &Harness, id: &str) {
    h.server.push(Reply::tool_call(
        id,
        "run_bash",
        json!({"command": "touch stamp"}),
    ));
    h.server.push(Reply::final_text("ok"));
}

/// Runs a turn whose one call asks; answers it with `scope`. Returns the turn's events.
async fn approve_turn(
    h: &mut Harness,
    session: &agent::Session,
    id: &str,
    scope: ApprovalScope,
) -> Vec<Event> {
    touch_turn(h, id);
    session.submit(Op::UserTurn { text: "go".into() }).unwrap();
    let mut events = h
        .until(|m| matches!(m, EventMsg::ToolCallAwaitingApproval { .. }))
        .await;
    decide(session, id, ApprovalDecision::Approve { scope });
    events.extend(h.turn().await);
    events
}

fn listed(events: &[Event]) -> Vec<protocol::StandingApproval> {
    events
        .iter()
        .rev()
        .find_map(|e| match &e.msg {
            EventMsg::StandingApprovals { approvals } => Some(approvals.clone()),
            _ => None,
        })
        .expect("a standing_approvals event")
}

/// The next turn's one call asks again (answered with a denial).
async fn asks_again(h: &mut Harness, session: &agent::Session, id: &str) {
    touch_turn(h, id);
    session
        .submit(Op::UserTurn {
            text: "again".into(),
        })
        .unwrap();
    let events = h
        .until(|m| {
            matches!(
                m,
                EventMsg::ToolCallAwaitingApproval { .. } | EventMsg::ToolCallApproved { .. }
            )
        })
        .await;
    assert!(
        matches!(
            events.last().map(|e| &e.msg),
            Some(EventMsg::ToolCallAwaitingApproval { .. })
        ),
        "a revoked approval must not let the call through: {:#?}",
        events.last()
    );
    decide(session, id, ApprovalDecision::Deny { reason: None });
    h.turn().await;
}

#[tokio::test]
async fn a_revoked_session_approval_asks_again_and_is_gone_from_the_store() {
    let mut h = Harness::new().await;
    let session = h.start(ApprovalMode::Ask).await;
    h.next().await;
    let events = approve_turn(&mut h, &session, "c1", ApprovalScope::Session).await;
    let approvals = listed(&events);
    assert_eq!(approvals.len(), 1);
    let id = approvals[0].id.clone();
    let stored = h.store.load(session.id()).await.unwrap().unwrap();
    assert_eq!(stored.session_approvals.len(), 1);

    session
        .submit(Op::RevokeApproval {
            approval_id: id.clone(),
        })
        .unwrap();
    let revoked = h.next().await;
    assert_eq!(
        revoked.msg,
        EventMsg::ApprovalRevoked {
            approval_id: id,
            scope: ApprovalScope::Session,
            description: approvals[0].description.clone(),
        }
    );
    let after = h.next().await;
    assert!(
        matches!(&after.msg, EventMsg::StandingApprovals { approvals } if approvals.is_empty()),
        "{after:?}"
    );
    let stored = h.store.load(session.id()).await.unwrap().unwrap();
    assert!(
        stored.session_approvals.is_empty(),
        "the revocation is saved"
    );
    asks_again(&mut h, &session, "c2").await;
}

#[tokio::test]
async fn a_revoked_always_approval_is_gone_from_the_machine() {
    let mut h = Harness::new().await;
    let session = h.start(ApprovalMode::Ask).await;
    h.next().await;
    let events = approve_turn(&mut h, &session, "c1", ApprovalScope::Always).await;
    let approvals = listed(&events);
    assert_eq!(approvals.len(), 1);
    assert_eq!(approvals[0].scope, ApprovalScope::Always);
    assert_eq!(h.store.always_approvals().await.unwrap().len(), 1);

    session
        .submit(Op::RevokeApproval {
            approval_id: approvals[0].id.clone(),
        })
        .unwrap();
    let revoked = h.next().await;
    assert!(
        matches!(&revoked.msg, EventMsg::ApprovalRevoked { scope: ApprovalScope::Always, approval_id, .. } if *approval_id == approvals[0].id),
        "{revoked:?}"
    );
    h.next().await;
    assert!(h.store.always_approvals().await.unwrap().is_empty());
    asks_again(&mut h, &session, "c2").await;

    // A new session on the same machine does not have it either.
    let second = h.start(ApprovalMode::Ask).await;
    h.next().await;
    asks_again(&mut h, &second, "d1").await;
}

#[tokio::test]
async fn an_always_approval_removed_elsewhere_stops_applying_at_the_next_turn() {
    let mut h = Harness::new().await;
    let session = h.start(ApprovalMode::Ask).await;
    h.next().await;
    let events = approve_turn(&mut h, &session, "c1", ApprovalScope::Always).await;
    let id = listed(&events)[0].id.clone();

    // The same command is let through while the approval stands ...
    touch_turn(&h, "c2");
    let events = h.run_turn(&session, "again").await;
    assert!(events.iter().any(|e| matches!(
        &e.msg,
        EventMsg::ToolCallApproved { call_id, by: DecidedBy::StandingApproval, .. } if call_id == "c2"
    )));
    // ... and not after another process (the CLI) removed it from the machine.
    assert!(h.store.remove_always_approval(&id).await.unwrap());
    asks_again(&mut h, &session, "c3").await;
}

#[tokio::test]
async fn revoking_an_unknown_approval_is_an_error_naming_it() {
    let mut h = Harness::new().await;
    let session = h.start(ApprovalMode::Ask).await;
    h.next().await;
    session
        .submit(Op::RevokeApproval {
            approval_id: "no-such-approval".into(),
        })
        .unwrap();
    let event = h.next().await;
    let EventMsg::Error { code, message } = &event.msg else {
        panic!("{event:?}")
    };
    assert_eq!(*code, ErrorCode::InvalidOp);
    assert!(message.contains("no-such-approval"), "{message}");
}
