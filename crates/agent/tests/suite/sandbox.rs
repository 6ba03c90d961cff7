//! The sandbox's life in a session: refused walls end the turn (never another provider),
//! grants rebuild a live sandbox and the model is told.

#![allow(clippy::unwrap_used, reason = "test code: a panic is a failed test")]

use crate::harness;

use harness::{Harness, finished, names, tool_results};
use protocol::{
    ApprovalMode, ErrorCode, EventMsg, FolderAccess, FolderGrant, Op, ToolCallStatus,
    TurnStopReason,
};
use serde_json::json;
use test_support::model_server::{Reply, sse};

#[tokio::test]
async fn a_wall_that_cannot_be_built_ends_the_turn_and_runs_nothing() {
    let mut h = Harness::with_runner("/nonexistent/tool-runner".into()).await;
    h.server.push(Reply::stream([
        sse::tool_use("c1", "run_bash", json!({"command": "echo hi"})),
        sse::tool_use("c2", "run_bash", json!({"command": "echo again"})),
        sse::stop("tool_use"),
    ]));
    let session = h.start(ApprovalMode::Bypass).await;
    h.next().await;
    let events = h.run_turn(&session, "go").await;
    assert_eq!(finished(&events), (TurnStopReason::SandboxRefused, 1));
    let refused = events
        .iter()
        .find_map(|e| match &e.msg {
            EventMsg::SandboxRefused { reason, diagnose } => {
                Some((reason.clone(), diagnose.clone()))
            }
            _ => None,
        })
        .unwrap();
    assert!(refused.0.contains("tool-runner"), "{}", refused.0);
    assert_eq!(refused.1, "paddock machine sandbox status");
    assert!(events.iter().any(|e| matches!(
        e.msg,
        EventMsg::Error {
            code: ErrorCode::SandboxRefused,
            ..
        }
    )));
    assert!(
        !names(&events).contains(&"tool_call_started"),
        "nothing may run"
    );
    assert!(!names(&events).contains(&"sandbox_ready"));
    assert_eq!(h.starts(), 1, "exactly one attempt, no fallback");

    // The next turn tries again (and is refused again) without breaking the history.
    h.server
        .push(Reply::tool_call("c3", "list_directory", json!({})));
    let events = h.run_turn(&session, "retry").await;
    assert_eq!(finished(&events).0, TurnStopReason::SandboxRefused);
    let results = tool_results(&h.server.requests()[1].body);
    assert_eq!(results.len(), 2);
    assert!(
        results.iter().all(|r| r.2 && r.1.starts_with("not run")),
        "{results:?}"
    );
}

#[tokio::test]
async fn granting_a_folder_rebuilds_the_live_sandbox_and_tells_the_model() {
    let mut h = Harness::new().await;
    let extra = tempfile::tempdir().unwrap();
    let extra_path = extra.path().canonicalize().unwrap();
    std::fs::write(extra_path.join("data.txt"), "from the new folder\n").unwrap();
    let data = extra_path.join("data.txt").display().to_string();

    h.server
        .push(Reply::tool_call("c1", "read_file", json!({"path": data})));
    h.server.push(Reply::final_text("cannot"));
    let session = h.start(ApprovalMode::Ask).await;
    h.next().await;
    h.run_turn(&session, "read it").await;
    let results = tool_results(&h.server.requests()[1].body);
    assert!(
        results[0].2 && results[0].1.contains("outside_roots"),
        "{results:?}"
    );

    session
        .submit(Op::GrantFolder {
            grant: FolderGrant {
                path: extra_path.display().to_string(),
                access: FolderAccess::ReadOnly,
            },
        })
        .unwrap();
    let events = h
        .until(|m| matches!(m, EventMsg::SandboxRecreated { .. }))
        .await;
    assert!(names(&events).contains(&"folder_granted"));
    assert_eq!(h.starts(), 2);

    h.server
        .push(Reply::tool_call("c2", "read_file", json!({"path": data})));
    h.server.push(Reply::final_text("read"));
    h.run_turn(&session, "now read it").await;
    let request = &h.server.requests()[3];
    let results = tool_results(&request.body);
    let last = results.last().unwrap();
    assert!(
        !last.2 && last.1.contains("from the new folder"),
        "{last:?}"
    );
    // The rebuild happened between turns: the note rides on the next user message.
    let messages = request.body["messages"].to_string();
    assert!(
        messages.contains("shell state"),
        "the model is told: {messages}"
    );
    assert!(
        request.body["system"]
            .to_string()
            .contains(&extra_path.display().to_string()),
        "the system prompt lists the new folder"
    );

    // Revoking takes it away again.
    session
        .submit(Op::RevokeFolder {
            path: extra_path.display().to_string(),
        })
        .unwrap();
    h.until(|m| matches!(m, EventMsg::SandboxRecreated { .. }))
        .await;
    h.server
        .push(Reply::tool_call("c3", "read_file", json!({"path": data})));
    h.server.push(Reply::final_text("gone"));
    let events = h.run_turn(&session, "and now?").await;
    assert!(events.iter().any(|e| matches!(
        e.msg,
        EventMsg::ToolCallFinished {
            status: ToolCallStatus::Error,
            ..
        }
    )));
    let results = tool_results(&h.server.requests()[5].body);
    assert!(
        results.last().unwrap().1.contains("outside_roots"),
        "{results:?}"
    );
}

#[tokio::test]
async fn revoking_a_folder_the_session_does_not_have_is_an_error() {
    let mut h = Harness::new().await;
    let session = h.start(ApprovalMode::Ask).await;
    h.next().await;
    session
        .submit(Op::RevokeFolder {
            path: "/not/granted".into(),
        })
        .unwrap();
    let event = h.next().await;
    assert!(
        matches!(&event.msg, EventMsg::Error { code: ErrorCode::InvalidOp, message } if message.contains("/not/granted")),
        "{event:?}"
    );
    session
        .submit(Op::GrantFolder {
            grant: FolderGrant {
                path: "relative/path".into(),
                access: FolderAccess::ReadWrite,
            },
        })
        .unwrap();
    let event = h.next().await;
    assert!(matches!(
        &event.msg,
        EventMsg::Error {
            code: ErrorCode::InvalidOp,
            ..
        }
    ));
}
