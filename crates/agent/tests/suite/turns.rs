//! Scripted conversations through the fake model server (real HTTP) and the real tool-runner.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is a failed test"
)]

use crate::harness;

use harness::{Harness, decide, finished, names, tool_results};
use pretty_assertions::assert_eq;
use protocol::{
    ApprovalDecision, ApprovalMode, ApprovalScope, DecidedBy, EnforcementLevel, EventMsg, Op,
    ToolCallStatus, TurnStopReason,
};
use serde_json::json;
use test_support::model_server::{Reply, sse};

#[tokio::test]
async fn a_turn_that_only_talks_creates_no_sandbox() {
    let mut h = Harness::new().await;
    h.server.push(Reply::stream([
        sse::text("Hello"),
        sse::text(" there"),
        sse::stop("end_turn"),
    ]));
    let session = h.start(ApprovalMode::Ask).await;
    let created = h.next().await;
    assert!(matches!(
        created.msg,
        EventMsg::SessionCreated { resumed: false, .. }
    ));

    let events = h.run_turn(&session, "hi").await;
    assert_eq!(
        names(&events),
        [
            "turn_started",
            "model_text_delta",
            "model_text_delta",
            "assistant_message",
            "turn_finished"
        ]
    );
    assert_eq!(finished(&events), (TurnStopReason::EndTurn, 1));
    assert_eq!(
        h.starts(),
        0,
        "no sandbox may be built for a talk-only turn"
    );

    let request = &h.server.requests()[0];
    assert_eq!(request.body["model"], "claude-test");
    let tools: Vec<&str> = request.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        tools.contains(&"run_bash") && tools.contains(&"list_directory"),
        "{tools:?}"
    );
    // Durable events were committed; streaming fragments were not.
    let recorded: Vec<&str> = h.sink.events().iter().map(|e| e.msg.name()).collect();
    assert_eq!(
        recorded,
        [
            "session_created",
            "turn_started",
            "assistant_message",
            "turn_finished"
        ]
    );
}

#[tokio::test]
async fn an_approved_write_lands_in_the_granted_folder() {
    let mut h = Harness::new().await;
    let target = h.folder().join("notes.txt");
    h.server.push(Reply::stream([
        sse::text("Writing it."),
        sse::tool_use(
            "call_1",
            "write_file",
            json!({"path": target.display().to_string(), "content": "hello\n"}),
        ),
        sse::stop("tool_use"),
    ]));
    h.server
        .push(Reply::stream([sse::text("Done."), sse::stop("end_turn")]));
    let session = h.start(ApprovalMode::Ask).await;
    h.next().await;
    session
        .submit(Op::UserTurn {
            text: "write notes".into(),
        })
        .unwrap();

    let waiting = h
        .until(|m| matches!(m, EventMsg::ToolCallAwaitingApproval { .. }))
        .await;
    let Some(EventMsg::ToolCallAwaitingApproval {
        call_id,
        summary,
        lasting_allowed,
        ..
    }) = waiting.last().map(|e| e.msg.clone())
    else {
        unreachable!()
    };
    assert_eq!(call_id, "call_1");
    assert!(summary.contains("notes.txt"), "{summary}");
    assert!(lasting_allowed);
    assert!(!target.exists(), "nothing may run before the approval");
    decide(
        &session,
        &call_id,
        ApprovalDecision::Approve {
            scope: ApprovalScope::Once,
        },
    );
    let events = h.turn().await;
    assert_eq!(finished(&events), (TurnStopReason::EndTurn, 2));
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "hello\n");

    let finished_call = events
        .iter()
        .find_map(|e| match &e.msg {
            EventMsg::ToolCallFinished {
                status,
                enforcement,
                output,
                ..
            } => Some((*status, *enforcement, output.clone())),
            _ => None,
        })
        .unwrap();
    assert_eq!(finished_call.0, ToolCallStatus::Ok);
    assert_eq!(finished_call.1, EnforcementLevel::None);
    assert!(finished_call.2.contains("created"), "{}", finished_call.2);
    assert!(events.iter().any(|e| matches!(
        e.msg,
        EventMsg::ToolCallApproved {
            by: DecidedBy::User,
            scope: Some(ApprovalScope::Once),
            ..
        }
    )));
    assert!(
        events
            .iter()
            .any(|e| matches!(e.msg, EventMsg::SandboxReady { .. }))
    );

    let second = &h.server.requests()[1];
    let results = tool_results(&second.body);
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].0, "call_1");
    assert!(results[0].1.starts_with("created "), "{}", results[0].1);
    assert!(!results[0].2);
}

#[tokio::test]
async fn a_denial_reaches_the_model_with_the_users_reason() {
    let mut h = Harness::new().await;
    h.server.push(Reply::tool_call(
        "c1",
        "run_bash",
        json!({"command": "touch made-by-agent"}),
    ));
    h.server.push(Reply::final_text("Understood."));
    let session = h.start(ApprovalMode::Ask).await;
    h.next().await;
    session.submit(Op::UserTurn { text: "go".into() }).unwrap();
    h.until(|m| matches!(m, EventMsg::ToolCallAwaitingApproval { .. }))
        .await;
    decide(
        &session,
        "c1",
        ApprovalDecision::Deny {
            reason: Some("not in my repo".into()),
        },
    );
    let events = h.turn().await;
    assert!(events.iter().any(|e| matches!(
        &e.msg,
        EventMsg::ToolCallDenied { by: DecidedBy::User, reason, .. } if reason == "not in my repo"
    )));
    assert!(events.iter().any(|e| matches!(
        e.msg,
        EventMsg::ToolCallFinished {
            status: ToolCallStatus::Denied,
            ..
        }
    )));
    assert!(!h.folder().join("made-by-agent").exists());
    assert_eq!(h.starts(), 0, "a denied call needs no sandbox");
    let results = tool_results(&h.server.requests()[1].body);
    assert!(results[0].1.contains("not in my repo"), "{}", results[0].1);
    assert!(results[0].2, "a denial is an error result");
}

#[tokio::test]
async fn an_approval_for_an_unknown_call_is_an_error_event() {
    let mut h = Harness::new().await;
    let session = h.start(ApprovalMode::Ask).await;
    h.next().await;
    decide(
        &session,
        "nope",
        ApprovalDecision::Approve {
            scope: ApprovalScope::Once,
        },
    );
    let event = h.next().await;
    assert!(
        matches!(&event.msg, EventMsg::Error { code: protocol::ErrorCode::UnknownCall, message } if message.contains("nope")),
        "{event:?}"
    );
}

#[tokio::test]
async fn a_session_approval_stands_for_the_same_command() {
    let mut h = Harness::new().await;
    for id in ["c1", "c2"] {
        h.server.push(Reply::tool_call(
            id,
            "run_bash",
            json!({"command": "touch stamp"}),
        ));
    }
    h.server.push(Reply::final_text("ok"));
    let session = h.start(ApprovalMode::Ask).await;
    h.next().await;
    session.submit(Op::UserTurn { text: "go".into() }).unwrap();
    h.until(|m| matches!(m, EventMsg::ToolCallAwaitingApproval { .. }))
        .await;
    decide(
        &session,
        "c1",
        ApprovalDecision::Approve {
            scope: ApprovalScope::Session,
        },
    );
    let events = h.turn().await;
    let awaiting = events
        .iter()
        .filter(|e| matches!(e.msg, EventMsg::ToolCallAwaitingApproval { .. }))
        .count();
    assert_eq!(awaiting, 0, "the second call must not ask again");
    assert!(events.iter().any(|e| matches!(
        &e.msg,
        EventMsg::ToolCallApproved { call_id, by: DecidedBy::StandingApproval, .. } if call_id == "c2"
    )));
    let listed = events
        .iter()
        .find_map(|e| match &e.msg {
            EventMsg::StandingApprovals { approvals } => Some(approvals.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].scope, ApprovalScope::Session);
    assert!(listed[0].description.contains("touch"), "{:?}", listed[0]);

    session.submit(Op::ListApprovals).unwrap();
    let event = h.next().await;
    assert!(
        matches!(&event.msg, EventMsg::StandingApprovals { approvals } if approvals == &listed)
    );
}

#[tokio::test]
async fn an_always_approval_carries_over_to_the_next_session() {
    let mut h = Harness::new().await;
    h.server.push(Reply::tool_call(
        "c1",
        "run_bash",
        json!({"command": "touch stamp"}),
    ));
    h.server.push(Reply::final_text("ok"));
    let first = h.start(ApprovalMode::Ask).await;
    h.next().await;
    first.submit(Op::UserTurn { text: "go".into() }).unwrap();
    h.until(|m| matches!(m, EventMsg::ToolCallAwaitingApproval { .. }))
        .await;
    decide(
        &first,
        "c1",
        ApprovalDecision::Approve {
            scope: ApprovalScope::Always,
        },
    );
    h.turn().await;
    first.submit(Op::Close).unwrap();
    first.closed().await;

    h.server.push(Reply::tool_call(
        "d1",
        "run_bash",
        json!({"command": "touch stamp"}),
    ));
    h.server.push(Reply::final_text("ok"));
    let second = h.start(ApprovalMode::Ask).await;
    let events = h.run_turn(&second, "again").await;
    assert!(events.iter().any(|e| matches!(
        &e.msg,
        EventMsg::ToolCallApproved { call_id, by: DecidedBy::StandingApproval, .. } if call_id == "d1"
    )));
}

#[tokio::test]
async fn invalid_tool_input_goes_back_to_the_model_as_an_error() {
    let mut h = Harness::new().await;
    h.server.push(Reply::stream([
        sse::tool_use("c1", "write_file", json!({"path": "x.txt"})),
        sse::tool_use("c2", "format_disk", json!({})),
        sse::stop("tool_use"),
    ]));
    h.server.push(Reply::final_text("sorry"));
    let session = h.start(ApprovalMode::Bypass).await;
    h.next().await;
    let events = h.run_turn(&session, "go").await;
    assert_eq!(finished(&events), (TurnStopReason::EndTurn, 2));
    let results = tool_results(&h.server.requests()[1].body);
    assert_eq!(results.len(), 2);
    assert!(
        results[0].2 && results[0].1.contains("content"),
        "{:?}",
        results[0]
    );
    assert!(
        results[1].2 && results[1].1.contains("no such tool"),
        "{:?}",
        results[1]
    );
    assert_eq!(h.starts(), 0);
}

#[tokio::test]
async fn reads_run_in_parallel_and_writes_in_order() {
    let mut h = Harness::new().await;
    let dir = h.folder();
    for name in ["a.txt", "b.txt", "c.txt"] {
        std::fs::write(dir.join(name), format!("{name}\n")).unwrap();
    }
    let path = |n: &str| dir.join(n).display().to_string();
    h.server.push(Reply::stream([
        sse::tool_use("r1", "read_file", json!({"path": path("a.txt")})),
        sse::tool_use("r2", "read_file", json!({"path": path("b.txt")})),
        sse::tool_use("r3", "read_file", json!({"path": path("c.txt")})),
        sse::tool_use(
            "w1",
            "write_file",
            json!({"path": path("out.txt"), "content": "one"}),
        ),
        sse::tool_use(
            "w2",
            "edit_file",
            json!({"path": path("out.txt"), "old_string": "one", "new_string": "two"}),
        ),
        sse::stop("tool_use"),
    ]));
    h.server.push(Reply::final_text("done"));
    let session = h.start(ApprovalMode::Bypass).await;
    h.next().await;
    let events = h.run_turn(&session, "go").await;
    let position = |name: &str, id: &str| {
        events
            .iter()
            .position(|e| {
                e.msg.name() == name && serde_json::to_value(&e.msg).unwrap()["call_id"] == id
            })
            .unwrap_or_else(|| panic!("no {name} for {id}"))
    };
    // Reads: the second and third were requested before the first finished.
    assert!(position("tool_call_requested", "r2") < position("tool_call_finished", "r1"));
    assert!(position("tool_call_requested", "r3") < position("tool_call_finished", "r1"));
    // Writes: each waits for everything before it.
    assert!(position("tool_call_finished", "r3") < position("tool_call_requested", "w1"));
    assert!(position("tool_call_finished", "w1") < position("tool_call_requested", "w2"));
    assert_eq!(std::fs::read_to_string(dir.join("out.txt")).unwrap(), "two");
    assert_eq!(h.starts(), 1, "one sandbox serves every call");

    let results = tool_results(&h.server.requests()[1].body);
    let ids: Vec<&str> = results.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(
        ids,
        ["r1", "r2", "r3", "w1", "w2"],
        "results keep the model's order"
    );
    assert!(results[1].1.contains("b.txt"), "{}", results[1].1);
}

#[tokio::test]
async fn the_step_limit_ends_a_turn_that_keeps_calling_tools() {
    let mut h = Harness::new().await;
    h.config.max_steps = 2;
    for id in ["s1", "s2"] {
        h.server.push(Reply::tool_call(
            id,
            "run_bash",
            json!({"command": "echo again"}),
        ));
    }
    let session = h.start(ApprovalMode::Ask).await;
    h.next().await;
    let events = h.run_turn(&session, "loop").await;
    assert_eq!(finished(&events), (TurnStopReason::StepLimit, 2));
    assert_eq!(h.server.request_count(), 2);

    // The session stays usable and the history is valid (every tool_use answered).
    h.server.push(Reply::final_text("stopped"));
    let events = h.run_turn(&session, "stop now").await;
    assert_eq!(finished(&events), (TurnStopReason::EndTurn, 1));
    let results = tool_results(&h.server.requests()[2].body);
    assert_eq!(results.len(), 2);
    assert!(results[1].1.contains("again"), "{:?}", results[1]);
}

#[tokio::test]
async fn long_output_is_cut_for_the_model_but_kept_for_the_audit() {
    let mut h = Harness::new().await;
    h.config.model_output_chars = 500;
    h.server.push(Reply::tool_call(
        "c1",
        "run_bash",
        json!({"command": "seq 1 3000"}),
    ));
    h.server.push(Reply::final_text("ok"));
    let session = h.start(ApprovalMode::Ask).await;
    h.next().await;
    let events = h.run_turn(&session, "count").await;
    let (truncated, output) = events
        .iter()
        .find_map(|e| match &e.msg {
            EventMsg::ToolCallFinished {
                truncated, output, ..
            } => Some((*truncated, output.clone())),
            _ => None,
        })
        .unwrap();
    assert!(truncated);
    assert!(
        output.contains("\n1500\n") && output.ends_with("3000\n"),
        "the audit keeps it all"
    );
    let results = tool_results(&h.server.requests()[1].body);
    let text = &results[0].1;
    assert!(text.chars().count() <= 500, "{}", text.len());
    assert!(text.contains("characters cut"), "{text}");
    assert!(
        text.starts_with("exit code: 0") && text.ends_with("3000\n"),
        "{text}"
    );
}

#[tokio::test]
async fn the_openai_wire_runs_the_same_turn() {
    let mut h = Harness::new().await;
    h.vendor = model_client::Vendor::OpenAiCompatible;
    h.server.push(Reply::tool_call(
        "call_a",
        "run_bash",
        json!({"command": "echo via-openai"}),
    ));
    h.server.push(Reply::final_text("done"));
    let session = h.start(ApprovalMode::Ask).await;
    h.next().await;
    let events = h.run_turn(&session, "go").await;
    assert_eq!(finished(&events), (TurnStopReason::EndTurn, 2));
    let second = &h.server.requests()[1].body;
    let tool_message = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap();
    assert_eq!(tool_message["tool_call_id"], "call_a");
    assert!(
        tool_message["content"].to_string().contains("via-openai"),
        "{tool_message}"
    );
}

#[tokio::test]
async fn a_user_turn_sent_the_moment_turn_finished_arrives_is_taken() {
    let mut h = Harness::new().await;
    let session = h.start(ApprovalMode::Ask).await;
    h.next().await;
    for round in 0..5 {
        h.server.push(Reply::final_text(format!("answer {round}")));
        let events = h.run_turn(&session, &format!("question {round}")).await;
        assert!(
            !names(&events).contains(&"error"),
            "round {round}: {:?}",
            names(&events)
        );
        assert_eq!(finished(&events), (TurnStopReason::EndTurn, 1));
    }
    assert_eq!(h.server.request_count(), 5);
}
