//! The approval paths the gate can take besides the user's answers (see `turns.rs`): deny
//! rules, safety checks that allow only `once`, and modes.

#![allow(clippy::unwrap_used, reason = "test code: a panic is a failed test")]

use crate::harness;

use harness::{Harness, decide, tool_results};
use protocol::{ApprovalDecision, ApprovalMode, ApprovalScope, DecidedBy, EventMsg, Op};
use serde_json::json;
use test_support::model_server::{Reply, sse};

#[tokio::test]
async fn a_deny_rule_refuses_even_in_bypass_mode() {
    let mut h = Harness::new().await;
    h.server.push(Reply::tool_call(
        "c1",
        "run_bash",
        json!({"command": "rm -rf ~"}),
    ));
    h.server.push(Reply::final_text("ok"));
    let session = h.start(ApprovalMode::Bypass).await;
    h.next().await;
    let events = h.run_turn(&session, "clean up").await;
    let denied = events
        .iter()
        .find_map(|e| match &e.msg {
            EventMsg::ToolCallDenied { by, reason, .. } => Some((*by, reason.clone())),
            _ => None,
        })
        .unwrap();
    assert_eq!(denied.0, DecidedBy::Rule);
    assert!(denied.1.contains("delete-root-or-home"), "{}", denied.1);
    assert_eq!(h.starts(), 0, "nothing ran");
    let results = tool_results(&h.server.requests()[1].body);
    assert!(
        results[0].2 && results[0].1.contains("delete-root-or-home"),
        "{results:?}"
    );
}

#[tokio::test]
async fn a_safety_check_offers_only_once_and_keeps_nothing() {
    let mut h = Harness::new().await;
    let hook = h.folder().join(".git/hooks/pre-commit");
    h.server.push(Reply::tool_call(
        "c1",
        "write_file",
        json!({"path": hook.display().to_string(), "content": "#!/bin/sh\n"}),
    ));
    h.server.push(Reply::final_text("ok"));
    // auto-edit lets ordinary edits through; a git hook is still asked.
    let session = h.start(ApprovalMode::AutoEdit).await;
    h.next().await;
    session
        .submit(Op::UserTurn {
            text: "add a hook".into(),
        })
        .unwrap();
    let waiting = h
        .until(|m| matches!(m, EventMsg::ToolCallAwaitingApproval { .. }))
        .await;
    let Some(EventMsg::ToolCallAwaitingApproval {
        reason,
        lasting_allowed,
        ..
    }) = waiting.last().map(|e| e.msg.clone())
    else {
        unreachable!()
    };
    assert!(!lasting_allowed, "a safety check offers once only");
    assert!(reason.contains("safety check"), "{reason}");
    // A client that asks for `always` anyway gets a one-time approval.
    decide(
        &session,
        "c1",
        ApprovalDecision::Approve {
            scope: ApprovalScope::Always,
        },
    );
    let events = h.turn().await;
    assert!(events.iter().any(|e| matches!(
        e.msg,
        EventMsg::ToolCallApproved {
            scope: Some(ApprovalScope::Once),
            ..
        }
    )));
    assert!(hook.exists());
    assert!(
        !events
            .iter()
            .any(|e| matches!(e.msg, EventMsg::StandingApprovals { .. })),
        "nothing may stand for a safety-checked call"
    );
    session.submit(Op::ListApprovals).unwrap();
    let listed = h.next().await;
    assert!(
        matches!(&listed.msg, EventMsg::StandingApprovals { approvals } if approvals.is_empty())
    );
}

#[tokio::test]
async fn auto_edit_lets_edits_in_granted_folders_through_but_asks_for_commands() {
    let mut h = Harness::new().await;
    let file = h.folder().join("a.txt");
    h.server.push(Reply::stream([
        sse::tool_use(
            "c1",
            "write_file",
            json!({"path": file.display().to_string(), "content": "x"}),
        ),
        sse::tool_use("c2", "run_bash", json!({"command": "touch b.txt"})),
        sse::stop("tool_use"),
    ]));
    h.server.push(Reply::final_text("ok"));
    let session = h.start(ApprovalMode::AutoEdit).await;
    h.next().await;
    session.submit(Op::UserTurn { text: "go".into() }).unwrap();
    let before = h
        .until(|m| matches!(m, EventMsg::ToolCallAwaitingApproval { .. }))
        .await;
    assert!(before.iter().any(|e| matches!(
        &e.msg,
        EventMsg::ToolCallApproved { call_id, by: DecidedBy::Mode, .. } if call_id == "c1"
    )));
    assert!(file.exists(), "the edit ran without asking");
    decide(&session, "c2", ApprovalDecision::Deny { reason: None });
    h.turn().await;
    assert!(!h.folder().join("b.txt").exists());
}
