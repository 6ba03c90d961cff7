//! Interrupts cancel the model stream, running tool calls and pending approvals; the session
//! stays usable and its history stays valid.

#![allow(clippy::unwrap_used, reason = "test code: a panic is a failed test")]

use crate::harness;

use std::time::Duration;

use harness::{Harness, decide, finished, tool_results};
use protocol::{ApprovalMode, EventMsg, Op, ToolCallStatus, TurnStopReason};
use serde_json::json;
use test_support::model_server::{Reply, StreamOutcome, sse};

#[tokio::test]
async fn interrupt_mid_stream_cancels_the_request_and_keeps_the_partial_text() {
    let mut h = Harness::new().await;
    h.server.push(
        Reply::stream([
            sse::text("Let me think"),
            sse::text(" more"),
            sse::stop("end_turn"),
        ])
        .stall_after(1),
    );
    let session = h.start(ApprovalMode::Ask).await;
    h.next().await;
    session
        .submit(Op::UserTurn {
            text: "think".into(),
        })
        .unwrap();
    h.until(|m| matches!(m, EventMsg::ModelTextDelta { .. }))
        .await;
    session.submit(Op::Interrupt).unwrap();
    let events = h.turn().await;
    assert_eq!(finished(&events).0, TurnStopReason::Interrupted);
    let outcome = h
        .server
        .wait_for_outcome(0, Duration::from_secs(10))
        .await
        .unwrap();
    assert!(
        matches!(outcome, StreamOutcome::ClientDisconnected { .. }),
        "the stream must be dropped, got {outcome:?}"
    );

    h.server.push(Reply::final_text("Back."));
    let events = h.run_turn(&session, "continue").await;
    assert_eq!(finished(&events).0, TurnStopReason::EndTurn);
    let messages = h.server.requests()[1].body["messages"].clone();
    let roles: Vec<&str> = messages
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant", "user"]);
    assert_eq!(messages[1]["content"][0]["text"], "Let me think");
}

#[tokio::test]
async fn interrupt_mid_tool_kills_the_command_and_answers_the_call() {
    let mut h = Harness::new().await;
    h.server.push(Reply::tool_call(
        "c1",
        "run_bash",
        json!({"command": "sleep 60"}),
    ));
    let session = h.start(ApprovalMode::Ask).await;
    h.next().await;
    session
        .submit(Op::UserTurn {
            text: "wait".into(),
        })
        .unwrap();
    h.until(|m| matches!(m, EventMsg::ToolCallStarted { .. }))
        .await;
    let interrupted_at = std::time::Instant::now();
    session.submit(Op::Interrupt).unwrap();
    let events = h.turn().await;
    assert!(
        interrupted_at.elapsed() < Duration::from_secs(30),
        "the command was not cancelled"
    );
    assert_eq!(finished(&events).0, TurnStopReason::Interrupted);
    assert!(events.iter().any(|e| matches!(
        e.msg,
        EventMsg::ToolCallFinished {
            status: ToolCallStatus::Cancelled,
            ..
        }
    )));

    // Next turn: the fake server checks every tool_use has its tool_result.
    h.server.push(Reply::final_text("ok"));
    let events = h.run_turn(&session, "never mind").await;
    assert_eq!(finished(&events).0, TurnStopReason::EndTurn);
    let results = tool_results(&h.server.requests()[1].body);
    assert_eq!(results.len(), 1);
    assert!(results[0].1.contains("cancelled"), "{:?}", results[0]);
    // The sandbox survived the interrupt and still runs commands.
    h.server.push(Reply::tool_call(
        "c2",
        "run_bash",
        json!({"command": "echo alive"}),
    ));
    h.server.push(Reply::final_text("ok"));
    h.run_turn(&session, "again").await;
    let results = tool_results(&h.server.requests()[3].body);
    assert!(results.last().unwrap().1.contains("alive"), "{results:?}");
    assert_eq!(h.starts(), 1);
}

#[tokio::test]
async fn interrupt_while_awaiting_approval_runs_nothing() {
    let mut h = Harness::new().await;
    h.server.push(Reply::stream([
        sse::tool_use("c1", "run_bash", json!({"command": "touch nope"})),
        sse::tool_use("c2", "run_bash", json!({"command": "touch nope2"})),
        sse::stop("tool_use"),
    ]));
    let session = h.start(ApprovalMode::Ask).await;
    h.next().await;
    session.submit(Op::UserTurn { text: "go".into() }).unwrap();
    h.until(|m| matches!(m, EventMsg::ToolCallAwaitingApproval { .. }))
        .await;
    session.submit(Op::Interrupt).unwrap();
    let events = h.turn().await;
    assert_eq!(finished(&events).0, TurnStopReason::Interrupted);
    assert!(!h.folder().join("nope").exists());
    assert!(!h.folder().join("nope2").exists());
    assert_eq!(h.starts(), 0);
    // A late approval for the abandoned call is refused.
    decide(
        &session,
        "c1",
        protocol::ApprovalDecision::Approve {
            scope: protocol::ApprovalScope::Once,
        },
    );
    let event = h.next().await;
    assert!(matches!(
        event.msg,
        EventMsg::Error {
            code: protocol::ErrorCode::UnknownCall,
            ..
        }
    ));

    h.server.push(Reply::final_text("fine"));
    h.run_turn(&session, "skip it").await;
    let results = tool_results(&h.server.requests()[1].body);
    assert_eq!(results.len(), 2, "both calls are answered: {results:?}");
    assert!(results.iter().all(|r| r.2));
}

#[tokio::test]
async fn a_second_user_turn_while_one_runs_is_refused() {
    let mut h = Harness::new().await;
    h.server.push(Reply::final_text("slow").stall_after(1));
    let session = h.start(ApprovalMode::Ask).await;
    h.next().await;
    session.submit(Op::UserTurn { text: "one".into() }).unwrap();
    h.until(|m| matches!(m, EventMsg::ModelTextDelta { .. }))
        .await;
    session.submit(Op::UserTurn { text: "two".into() }).unwrap();
    let event = h.next().await;
    assert!(
        matches!(
            event.msg,
            EventMsg::Error {
                code: protocol::ErrorCode::TurnInProgress,
                ..
            }
        ),
        "{event:?}"
    );
    session.submit(Op::Interrupt).unwrap();
    h.turn().await;
}
