//! "Running a file the agent just downloaded" asks in a later call, not only within the same
//! command: the session keeps what its commands downloaded (in memory and in the store), and
//! every way of running such a file is a safety check that offers `once` only.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is a failed test"
)]

use crate::harness;

use harness::{Harness, decide};
use pretty_assertions::assert_eq;
use protocol::{ApprovalDecision, ApprovalMode, ApprovalScope, DecidedBy, EventMsg, Op};
use serde_json::json;
use test_support::model_server::{Reply, sse};

/// A turn whose one command the user approves once; returns once it finished.
async fn approved_command(h: &mut Harness, session: &agent::Session, id: &str, command: &str) {
    h.server.push(Reply::tool_call(
        id,
        "run_bash",
        json!({ "command": command }),
    ));
    h.server.push(Reply::final_text("done"));
    session
        .submit(Op::UserTurn {
            text: format!("run {id}"),
        })
        .unwrap();
    h.until(|m| matches!(m, EventMsg::ToolCallAwaitingApproval { .. }))
        .await;
    decide(
        session,
        id,
        ApprovalDecision::Approve {
            scope: ApprovalScope::Once,
        },
    );
    let events = h.turn().await;
    assert!(
        events
            .iter()
            .any(|e| matches!(&e.msg, EventMsg::ToolCallStarted { call_id, .. } if call_id == id)),
        "{id} ran"
    );
}

#[tokio::test]
async fn running_a_file_downloaded_by_an_earlier_call_asks_with_the_safety_check() {
    let mut h = Harness::new().await;
    let source = tempfile::tempdir().unwrap();
    let payload = source.path().join("payload.sh");
    std::fs::write(&payload, "echo payload ran > ran.txt\n").unwrap();
    let url = format!("file://{}", payload.display());
    let session = h.start(ApprovalMode::Ask).await;
    h.next().await;

    approved_command(&mut h, &session, "dl", &format!("curl -sS -o tool {url}")).await;
    assert!(h.folder().join("tool").exists(), "curl really downloaded");
    let stored = h.store.load(session.id()).await.unwrap().unwrap();
    let tool = h.folder().join("tool").display().to_string();
    assert_eq!(
        stored.downloads,
        vec![tool.clone()],
        "kept with the session"
    );

    let runs = [
        ("r1", "./tool"),
        ("r2", "bash tool"),
        ("r3", "sh ./tool --flag"),
        ("r4", "python3 tool"),
        ("r5", "chmod +x tool && ./tool"),
        ("r6", "source tool"),
        ("r7", &format!("sudo {tool}")),
    ];
    h.server.push(Reply::stream(
        runs.iter()
            .map(|(id, command)| sse::tool_use(*id, "run_bash", json!({ "command": command })))
            .chain([sse::stop("tool_use")]),
    ));
    h.server.push(Reply::final_text("ok"));
    session
        .submit(Op::UserTurn {
            text: "run it".into(),
        })
        .unwrap();
    for (id, command) in runs {
        let asked = h
            .until(|m| match m {
                EventMsg::ToolCallAwaitingApproval { call_id, .. }
                | EventMsg::ToolCallApproved { call_id, .. }
                | EventMsg::ToolCallDenied { call_id, .. } => call_id == id,
                _ => false,
            })
            .await;
        let Some(EventMsg::ToolCallAwaitingApproval {
            call_id,
            reason,
            lasting_allowed,
            ..
        }) = asked.last().map(|e| e.msg.clone())
        else {
            panic!("`{command}` did not ask: {:#?}", asked.last());
        };
        assert_eq!(call_id, id);
        assert!(
            reason.starts_with("safety check:") && reason.contains("downloaded in this session"),
            "`{command}`: {reason}"
        );
        assert!(!lasting_allowed, "`{command}`: only once may answer it");
        decide(&session, id, ApprovalDecision::Deny { reason: None });
    }
    h.turn().await;
    assert!(!h.folder().join("ran.txt").exists(), "nothing ran");
}

#[tokio::test]
async fn other_files_and_bypass_are_not_affected() {
    let mut h = Harness::new().await;
    let session = h.start(ApprovalMode::Ask).await;
    h.next().await;
    // A download that fails still counts (the name was chosen before it ran).
    approved_command(
        &mut h,
        &session,
        "dl",
        "curl -sS -o tool file:///nonexistent/payload.sh || true",
    )
    .await;
    std::fs::write(h.folder().join("build.sh"), "true\n").unwrap();
    h.server.push(Reply::tool_call(
        "b1",
        "run_bash",
        json!({"command": "bash build.sh"}),
    ));
    h.server.push(Reply::final_text("ok"));
    session
        .submit(Op::UserTurn {
            text: "build".into(),
        })
        .unwrap();
    let asked = h
        .until(|m| matches!(m, EventMsg::ToolCallAwaitingApproval { .. }))
        .await;
    let Some(EventMsg::ToolCallAwaitingApproval { reason, .. }) =
        asked.last().map(|e| e.msg.clone())
    else {
        unreachable!()
    };
    assert!(!reason.contains("safety check"), "{reason}");
    decide(&session, "b1", ApprovalDecision::Deny { reason: None });
    h.turn().await;
    let stored = h.store.load(session.id()).await.unwrap().unwrap();
    assert_eq!(
        stored.downloads,
        [h.folder().join("tool").display().to_string()]
    );

    // Bypass lets a downloaded file run (loudly, by the user's choice).
    let bypass = h.start(ApprovalMode::Bypass).await;
    h.next().await;
    h.server.push(Reply::stream([
        sse::tool_use(
            "x1",
            "run_bash",
            json!({"command": "curl -sS -o t2 file:///nonexistent || true"}),
        ),
        sse::tool_use("x2", "run_bash", json!({"command": "sh t2 || true"})),
        sse::stop("tool_use"),
    ]));
    h.server.push(Reply::final_text("ok"));
    let events = h.run_turn(&bypass, "go").await;
    assert!(events.iter().any(|e| matches!(
        &e.msg,
        EventMsg::ToolCallApproved { call_id, by: DecidedBy::Mode, .. } if call_id == "x2"
    )));
}
