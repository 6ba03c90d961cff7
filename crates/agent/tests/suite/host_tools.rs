//! Host-side tools (connectors) get their own placement: they run in the host process, are
//! recorded with enforcement `host`, and are never let through by `auto-in-sandbox` as if a
//! wall confined them. Also: hosts allowed for a session, and event numbers that continue
//! after the durable sink's last committed event on resume.

#![allow(clippy::unwrap_used, reason = "test code: a panic is a failed test")]

use crate::harness;

use std::sync::{Arc, Mutex};

use agent::{HostTool, HostToolError, HostToolOutput, Session, ToolEffect};
use async_trait::async_trait;
use harness::{Harness, decide, finished, names, tool_results};
use model_client::ToolSpec;
use protocol::{
    ApprovalDecision, ApprovalMode, ApprovalScope, DecidedBy, EnforcementLevel, ErrorCode,
    EventMsg, Op, TurnStopReason,
};
use serde_json::{Value, json};
use test_support::model_server::Reply;
use tokio_util::sync::CancellationToken;

/// A host tool that records the inputs it was called with and echoes them.
#[derive(Default)]
struct EchoTool {
    calls: Mutex<Vec<Value>>,
}

#[async_trait]
impl HostTool for EchoTool {
    async fn call(
        &self,
        input: &Value,
        _cancel: &CancellationToken,
    ) -> Result<HostToolOutput, HostToolError> {
        self.calls.lock().unwrap().push(input.clone());
        Ok(HostToolOutput {
            text: format!("echo: {}", input["text"].as_str().unwrap_or("")),
            is_error: false,
        })
    }
}

fn echo_spec(name: &str) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        description: "Echo text from the host.".into(),
        input_schema: json!({
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
            "additionalProperties": false
        }),
    }
}

#[tokio::test]
async fn a_host_tool_is_asked_in_auto_in_sandbox_and_recorded_as_host() {
    let mut h = Harness::new().await;
    let tool = Arc::new(EchoTool::default());
    h.tools = h
        .tools
        .clone()
        .with_host_tool(echo_spec("echo_host"), ToolEffect::Read, tool.clone())
        .unwrap();
    h.server.push(Reply::tool_call(
        "c1",
        "echo_host",
        json!({"text": "hello"}),
    ));
    h.server.push(Reply::final_text("ok"));
    // auto-in-sandbox lets every walled call through; the host tool must still ask.
    let session = h.start(ApprovalMode::AutoInSandbox).await;
    h.next().await;
    session.submit(Op::UserTurn { text: "go".into() }).unwrap();
    let asked = h
        .until(|m| matches!(m, EventMsg::ToolCallAwaitingApproval { .. }))
        .await;
    let Some(EventMsg::ToolCallAwaitingApproval { summary, .. }) = asked.last().map(|e| &e.msg)
    else {
        panic!("no approval asked: {:?}", names(&asked));
    };
    assert!(summary.contains("runs on the host"), "{summary}");
    assert!(tool.calls.lock().unwrap().is_empty(), "ran before approval");
    decide(
        &session,
        "c1",
        ApprovalDecision::Approve {
            scope: ApprovalScope::Once,
        },
    );
    let events = h.turn().await;
    assert_eq!(finished(&events).0, TurnStopReason::EndTurn);
    let started = events
        .iter()
        .find_map(|e| match &e.msg {
            EventMsg::ToolCallStarted {
                enforcement,
                sandbox_id,
                ..
            } => Some((*enforcement, sandbox_id.clone())),
            _ => None,
        })
        .unwrap();
    assert_eq!(started, (EnforcementLevel::Host, "host".to_owned()));
    let finished_level = events.iter().find_map(|e| match &e.msg {
        EventMsg::ToolCallFinished { enforcement, .. } => Some(*enforcement),
        _ => None,
    });
    assert_eq!(finished_level, Some(EnforcementLevel::Host));
    assert_eq!(*tool.calls.lock().unwrap(), vec![json!({"text": "hello"})]);
    let results = tool_results(&h.server.requests()[1].body);
    assert_eq!(results, vec![("c1".into(), "echo: hello".into(), false)]);
    assert_eq!(h.starts(), 0, "a host tool builds no sandbox");
    // The durable record says who decided.
    assert!(h.sink.events().iter().any(|e| matches!(
        e.msg,
        EventMsg::ToolCallApproved {
            by: DecidedBy::User,
            ..
        }
    )));
}

#[tokio::test]
async fn a_host_tool_cannot_take_a_sandbox_tools_name() {
    for name in ["read_file", "run_bash", "grep", "download"] {
        let refused = agent::ToolRegistry::sandbox_tools()
            .with_host_tool(
                echo_spec(name),
                ToolEffect::Read,
                Arc::new(EchoTool::default()),
            )
            .unwrap_err();
        assert!(
            refused.to_string().contains("sandbox tool's"),
            "{name}: {refused}"
        );
    }
    let twice = agent::ToolRegistry::sandbox_tools()
        .with_host_tool(
            echo_spec("echo_host"),
            ToolEffect::Read,
            Arc::new(EchoTool::default()),
        )
        .unwrap()
        .with_host_tool(
            echo_spec("echo_host"),
            ToolEffect::Read,
            Arc::new(EchoTool::default()),
        )
        .unwrap_err();
    assert!(twice.to_string().contains("already registered"), "{twice}");
}

#[tokio::test]
async fn allowing_a_host_extends_the_session_and_bad_hosts_are_refused() {
    let mut h = Harness::new().await;
    let session = h.start(ApprovalMode::Ask).await;
    h.next().await;
    session
        .submit(Op::AllowHost {
            host: "api.example.com:8443".into(),
        })
        .unwrap();
    let allowed = h.until(|m| matches!(m, EventMsg::HostAllowed { .. })).await;
    assert_eq!(
        allowed.last().unwrap().msg,
        EventMsg::HostAllowed {
            host: "api.example.com:8443".into(),
            live: false
        }
    );
    assert_eq!(session.settings().extra_hosts, vec!["api.example.com:8443"]);
    let stored = h.store.load(session.id()).await.unwrap().unwrap();
    assert_eq!(stored.settings.extra_hosts, vec!["api.example.com:8443"]);

    session
        .submit(Op::AllowHost {
            host: "https://evil.example/x".into(),
        })
        .unwrap();
    let refused = h.until(|m| matches!(m, EventMsg::Error { .. })).await;
    let EventMsg::Error { code, message } = &refused.last().unwrap().msg else {
        unreachable!()
    };
    assert_eq!(*code, ErrorCode::InvalidOp);
    assert!(message.contains("not a URL"), "{message}");
    assert_eq!(session.settings().extra_hosts.len(), 1);
}

#[tokio::test]
async fn drafted_rules_are_refused_by_a_wall_without_an_advisor() {
    let mut h = Harness::new().await;
    h.server
        .push(Reply::tool_call("c1", "list_directory", json!({})));
    h.server.push(Reply::final_text("ok"));
    let session = h.start(ApprovalMode::Ask).await;
    h.next().await;
    assert_eq!(session.drafted_rules().await.unwrap(), vec![]);
    h.run_turn(&session, "look").await;
    let refused = session.drafted_rules().await.unwrap_err();
    assert!(
        refused.to_string().contains("drafts no network rules"),
        "{refused}"
    );
}

#[tokio::test]
async fn a_resumed_session_numbers_events_after_the_sinks_last_commit() {
    let mut h = Harness::new().await;
    h.server.push(Reply::final_text("hi"));
    let session = h.start(ApprovalMode::Ask).await;
    let id = session.id().to_owned();
    h.next().await;
    h.run_turn(&session, "hello").await;
    session.submit(Op::Close).unwrap();
    h.until(|m| matches!(m, EventMsg::SessionClosed)).await;
    session.closed().await;
    let last_committed = h
        .sink
        .events()
        .iter()
        .filter(|e| e.session_id == id)
        .map(|e| e.seq)
        .max()
        .unwrap();
    // The store lags behind the sink, as after a kill between a commit and a save.
    let record = h.store.load(&id).await.unwrap().unwrap();
    h.store
        .save_messages(&id, record.messages.len(), &[], 1)
        .await
        .unwrap();

    let resumed = Session::resume(h.deps(), &id).await.unwrap();
    let created = h.next().await;
    assert!(matches!(
        created.msg,
        EventMsg::SessionCreated { resumed: true, .. }
    ));
    assert_eq!(created.seq, last_committed + 1);
    resumed.submit(Op::Close).unwrap();
    resumed.closed().await;
}
