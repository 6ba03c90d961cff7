//! Tool-call arguments the model gets wrong go back to it as a tool error, and the turn goes
//! on: the model can try again. Both wires, through the fake model server (whose invariant
//! checks fail the test if the conversation we send back is not valid).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is a failed test"
)]

use crate::harness;

use harness::{Harness, finished};
use model_client::Vendor;
use pretty_assertions::assert_eq;
use protocol::{ApprovalMode, EventMsg, ToolCallStatus, TurnStopReason};
use serde_json::{Value, json};
use test_support::model_server::{Reply, sse};

/// The text of every tool result in a request body, on either wire.
fn results_of(body: &Value) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for message in body["messages"].as_array().unwrap() {
        if message["role"] == "tool" {
            found.push((
                message["tool_call_id"].as_str().unwrap().to_owned(),
                message["content"].as_str().unwrap_or_default().to_owned(),
            ));
        }
        for block in message["content"].as_array().into_iter().flatten() {
            if block["type"] == "tool_result" {
                found.push((
                    block["tool_use_id"].as_str().unwrap().to_owned(),
                    block["content"].to_string(),
                ));
            }
        }
    }
    found
}

async fn broken_then_fixed(vendor: Vendor) {
    let mut h = Harness::new().await;
    h.vendor = vendor;
    let target = h.folder().join("notes.txt");
    let path = target.display().to_string();
    let broken = format!("{{\"path\": \"{path}\", \"content\": \"hi\"");
    h.server.push(Reply::stream([
        sse::text("Writing."),
        sse::tool_start("call_1", "write_file"),
        sse::tool_args("call_1", broken.clone()),
        sse::tool_end("call_1"),
        sse::stop("tool_use"),
    ]));
    h.server.push(Reply::tool_call(
        "call_2",
        "write_file",
        json!({"path": path, "content": "hi"}),
    ));
    h.server.push(Reply::stream([
        sse::text("Written."),
        sse::stop("end_turn"),
    ]));
    let session = h.start(ApprovalMode::AutoEdit).await;
    h.next().await;
    let events = h.run_turn(&session, "write notes.txt").await;

    assert_eq!(
        finished(&events),
        (TurnStopReason::EndTurn, 3),
        "{events:#?}"
    );
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "hi");
    // The broken call is recorded with the raw text and ends as an error without running.
    let requested = events
        .iter()
        .find_map(|e| match &e.msg {
            EventMsg::ToolCallRequested { call_id, args, .. } if call_id == "call_1" => {
                Some(args.clone())
            }
            _ => None,
        })
        .unwrap();
    assert_eq!(requested, Value::String(broken.clone()));
    let statuses: Vec<(String, ToolCallStatus)> = events
        .iter()
        .filter_map(|e| match &e.msg {
            EventMsg::ToolCallFinished {
                call_id, status, ..
            } => Some((call_id.clone(), *status)),
            _ => None,
        })
        .collect();
    assert_eq!(
        statuses,
        [
            ("call_1".to_owned(), ToolCallStatus::Error),
            ("call_2".to_owned(), ToolCallStatus::Ok)
        ]
    );
    assert!(
        !events.iter().any(
            |e| matches!(&e.msg, EventMsg::ToolCallStarted { call_id, .. } if call_id == "call_1")
        ),
        "a call whose arguments did not parse never reaches the sandbox"
    );

    // The model is told what was wrong, with its raw text, and retries.
    let requests = h.server.requests();
    assert_eq!(requests.len(), 3);
    let results = results_of(&requests[1].body);
    assert_eq!(results.len(), 1, "{results:?}");
    assert_eq!(results[0].0, "call_1");
    assert!(
        results[0].1.contains("your arguments were not valid JSON")
            && results[0].1.contains("EOF")
            && results[0].1.contains("raw: {"),
        "{}",
        results[0].1
    );
}

#[tokio::test]
async fn broken_tool_json_goes_back_to_the_model_which_retries_anthropic() {
    broken_then_fixed(Vendor::Anthropic).await;
}

#[tokio::test]
async fn broken_tool_json_goes_back_to_the_model_which_retries_openai() {
    broken_then_fixed(Vendor::OpenAiCompatible).await;
}
