//! The durability contract with the audit store: a call's `tool_call_started` is committed
//! before the call runs, and its `tool_call_finished` before the model sees the result. A sink
//! that cannot commit stops the call.

#![allow(clippy::unwrap_used, reason = "test code: a panic is a failed test")]

use crate::harness;

use std::sync::{Arc, Mutex};

use harness::{Harness, finished};
use protocol::{ApprovalMode, EventMsg, TurnStopReason};
use serde_json::json;
use test_support::model_server::Reply;

#[tokio::test]
async fn started_is_committed_before_the_call_runs_and_finished_before_the_model_sees_it() {
    let mut h = Harness::new().await;
    let target = h.folder().join("out.txt");
    h.server.push(Reply::tool_call(
        "c1",
        "write_file",
        json!({"path": target.display().to_string(), "content": "x"}),
    ));
    h.server.push(Reply::final_text("done"));
    // What the world looked like at each commit.
    let seen: Arc<Mutex<Vec<(String, bool)>>> = Arc::default();
    let observed = seen.clone();
    let watched = target.clone();
    h.sink.set_hook(Box::new(move |event| {
        observed
            .lock()
            .unwrap()
            .push((event.msg.name().to_owned(), watched.exists()));
        Ok(())
    }));
    let session = h.start(ApprovalMode::Bypass).await;
    h.next().await;
    let events = h.run_turn(&session, "go").await;
    assert_eq!(finished(&events).0, TurnStopReason::EndTurn);
    let seen = seen.lock().unwrap().clone();
    let at = |name: &str| seen.iter().find(|(n, _)| n == name).unwrap().1;
    assert!(
        !at("tool_call_started"),
        "started must be committed before the file is written"
    );
    assert!(at("tool_call_finished"));

    // The finished row precedes the request that carries the result to the model: the sink
    // saw it while only one request had been made.
    let recorded = h.sink.events();
    let finished_seq = recorded
        .iter()
        .find(|e| e.msg.name() == "tool_call_finished")
        .unwrap()
        .seq;
    let second_turn_step = recorded
        .iter()
        .find(|e| e.msg.name() == "assistant_message")
        .unwrap()
        .seq;
    assert!(finished_seq < second_turn_step);
}

#[tokio::test]
async fn a_sink_that_cannot_commit_started_stops_the_call() {
    let mut h = Harness::new().await;
    let target = h.folder().join("never.txt");
    h.server.push(Reply::tool_call(
        "c1",
        "write_file",
        json!({"path": target.display().to_string(), "content": "x"}),
    ));
    h.sink.set_hook(Box::new(|event| match event.msg {
        EventMsg::ToolCallStarted { .. } => Err("disk full".into()),
        _ => Ok(()),
    }));
    let session = h.start(ApprovalMode::Bypass).await;
    h.next().await;
    let events = h.run_turn(&session, "go").await;
    assert_eq!(finished(&events).0, TurnStopReason::Error);
    assert!(
        !target.exists(),
        "the call must not run without its started record"
    );
    assert!(events.iter().any(|e| matches!(
        &e.msg,
        EventMsg::Error { code: protocol::ErrorCode::PersistenceFailed, message } if message.contains("disk full")
    )));
    assert_eq!(
        h.server.request_count(),
        1,
        "the model never sees an unrecorded call"
    );
}

#[tokio::test]
async fn a_sink_that_cannot_commit_finished_withholds_the_result() {
    let mut h = Harness::new().await;
    h.server.push(Reply::tool_call(
        "c1",
        "run_bash",
        json!({"command": "echo secret-output"}),
    ));
    h.sink.set_hook(Box::new(|event| match event.msg {
        EventMsg::ToolCallFinished { .. } => Err("database locked".into()),
        _ => Ok(()),
    }));
    let session = h.start(ApprovalMode::Bypass).await;
    h.next().await;
    let events = h.run_turn(&session, "go").await;
    assert_eq!(finished(&events).0, TurnStopReason::Error);
    assert_eq!(
        h.server.request_count(),
        1,
        "the unrecorded result never reaches the model"
    );
}
