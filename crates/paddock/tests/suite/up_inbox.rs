//! A headless `paddock up` whose user is away: a call waits for approval, every WebSocket
//! client goes away, time passes, and the call is answered later through the inbox. The turn
//! completes (no timeout, no error), the file is written, and a client that comes back gets
//! the rest of the turn from where it left off.

use std::time::Duration;

use crate::up_support;

use protocol::{EventMsg, ToolCallStatus, TurnStopReason};
use serde_json::{Value, json};
use test_support::model_server::{FakeModelServer, Reply};
use up_support::Machine;

/// Longer than a client's reconnect backoff and a socket ticket's life would matter for.
const AWAY: Duration = Duration::from_secs(5);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_answered_through_the_inbox_after_every_client_left_completes_the_turn() {
    let model = FakeModelServer::start().await.unwrap();
    let machine = Machine::new(&model, "");
    let folder = machine.folder("later");
    let marker = "task write when approved";
    model.push_for(
        marker,
        Reply::tool_call(
            "w1",
            "write_file",
            json!({"path": folder.join("later.txt"), "content": "approved later\n"}),
        ),
    );
    model.push_for(marker, Reply::final_text("written"));
    let up = machine.up("warn").await;
    let info = up
        .post(
            "/v1/sessions",
            &json!({"folders": [{"path": folder, "access": "read_write"}], "approval_mode": "ask"}),
            201,
        )
        .await;
    let id = info["id"].as_str().unwrap().to_owned();
    let mut socket = up.events(&id, 0).await;
    up.post(
        &format!("/v1/sessions/{id}/turns"),
        &json!({"text": marker}),
        202,
    )
    .await;
    let seen = socket
        .until(
            |m| matches!(m, EventMsg::ToolCallAwaitingApproval { call_id, .. } if call_id == "w1"),
        )
        .await;
    let last_seen = seen.last().unwrap().seq;
    socket.close().await;

    tokio::time::sleep(AWAY).await;
    let inbox = up.get("/v1/approvals").await;
    let waiting = inbox.as_array().unwrap();
    assert_eq!(waiting.len(), 1, "{inbox}");
    assert_eq!(waiting[0]["session_id"], id.as_str(), "{inbox}");
    assert_eq!(waiting[0]["call_id"], "w1", "{inbox}");
    assert!(
        !folder.join("later.txt").exists(),
        "nothing ran before the answer"
    );
    up.call(
        reqwest::Method::POST,
        &format!("/v1/sessions/{id}/approvals/w1"),
        Some(&json!({"decision": {"type": "approve", "scope": "once"}})),
        204,
    )
    .await;

    // A client that comes back gets the rest of the turn, from where it left off.
    let mut back = up.events(&id, last_seen).await;
    let rest = back
        .until(|m| matches!(m, EventMsg::TurnFinished { .. }))
        .await;
    assert!(rest.iter().all(|e| e.seq > last_seen), "{rest:#?}");
    assert!(
        !rest.iter().any(|e| matches!(e.msg, EventMsg::Error { .. })),
        "{rest:#?}"
    );
    assert!(rest.iter().any(|e| matches!(
        &e.msg,
        EventMsg::ToolCallFinished { call_id, status: ToolCallStatus::Ok, .. } if call_id == "w1"
    )));
    assert!(
        matches!(
            rest.last().unwrap().msg,
            EventMsg::TurnFinished {
                stop_reason: TurnStopReason::EndTurn,
                ..
            }
        ),
        "{rest:#?}"
    );
    assert_eq!(
        std::fs::read_to_string(folder.join("later.txt")).unwrap(),
        "approved later\n"
    );
    assert_eq!(up.get("/v1/approvals").await, Value::Array(Vec::new()));
    let (rest, status) = up.stop().await;
    assert!(status.success(), "{rest:?}");
}
