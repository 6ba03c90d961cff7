//! Sessions survive a restart: a turn runs, everything is dropped, the store is reopened from
//! its file, and the conversation continues with its full history, grants and approvals.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is a failed test"
)]

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use agent::{AgentConfig, DiscardSink, EventBus, Session, SessionDeps, SessionStore, ToolRegistry};
use model_client::{ApiKey, ClientConfig, Vendor};
use protocol::{
    ApprovalDecision, ApprovalMode, ApprovalScope, DecidedBy, Event, EventMsg, FolderAccess,
    FolderGrant, NetworkProfileName, Op, SessionSettings,
};
use sandbox_provider::direct::DirectProvider;
use serde_json::json;
use session_store::SqliteSessionStore;
use test_support::model_server::{FakeModelServer, Reply, sse};
use tokio::sync::broadcast;

fn deps(server: &FakeModelServer, store: Arc<dyn SessionStore>, bus: &EventBus) -> SessionDeps {
    let config = ClientConfig::new(
        server.anthropic_base_url(),
        Some(ApiKey::new("test-key-not-secret").unwrap()),
    );
    SessionDeps {
        model: model_client::connect(Vendor::Anthropic, &config).unwrap(),
        provider: Arc::new(DirectProvider::new(test_support::binaries::tool_runner())),
        store,
        bus: bus.clone(),
        tools: ToolRegistry::sandbox_tools(),
        config: AgentConfig::new("claude-test"),
    }
}

async fn until(
    events: &mut broadcast::Receiver<Event>,
    done: impl Fn(&EventMsg) -> bool,
) -> Vec<Event> {
    let mut seen = Vec::new();
    loop {
        let event = tokio::time::timeout(Duration::from_secs(60), events.recv())
            .await
            .expect("an event in time")
            .unwrap();
        let stop = done(&event.msg);
        seen.push(event);
        if stop {
            return seen;
        }
    }
}

fn settings(folder: &Path) -> SessionSettings {
    SessionSettings {
        folders: vec![FolderGrant {
            path: folder.display().to_string(),
            access: FolderAccess::ReadWrite,
        }],
        cwd: None,
        network_profile: NetworkProfileName::Strict,
        extra_hosts: vec![],
        credentials: vec![],
        secrets: vec![],
        model: None,
        approval_mode: ApprovalMode::Ask,
    }
}

#[tokio::test]
async fn a_session_resumes_after_a_restart_with_its_history_grants_and_approvals() {
    let state = tempfile::tempdir().unwrap();
    let db = state.path().join("sessions.db");
    let folder = tempfile::tempdir().unwrap();
    let folder = folder.path().canonicalize().unwrap();
    let extra = tempfile::tempdir().unwrap();
    let extra = extra.path().canonicalize().unwrap();
    let server = FakeModelServer::start().await.unwrap();

    // First process: a turn with an approved command (session scope) and a new grant.
    let session_id = {
        let store: Arc<dyn SessionStore> = Arc::new(SqliteSessionStore::open(&db).unwrap());
        let bus = EventBus::new(Arc::new(DiscardSink), 1024);
        let mut events = bus.subscribe();
        server.push(Reply::stream([
            sse::text("Making it."),
            sse::tool_use("c1", "run_bash", json!({"command": "touch made"})),
            sse::stop("tool_use"),
        ]));
        server.push(Reply::stream([sse::text("Made."), sse::stop("end_turn")]));
        let session = Session::start(deps(&server, store, &bus), settings(&folder))
            .await
            .unwrap();
        session
            .submit(Op::UserTurn {
                text: "make a file".into(),
            })
            .unwrap();
        until(&mut events, |m| {
            matches!(m, EventMsg::ToolCallAwaitingApproval { .. })
        })
        .await;
        session
            .submit(Op::Approval {
                call_id: "c1".into(),
                decision: ApprovalDecision::Approve {
                    scope: ApprovalScope::Session,
                },
            })
            .unwrap();
        until(&mut events, |m| matches!(m, EventMsg::TurnFinished { .. })).await;
        session
            .submit(Op::GrantFolder {
                grant: FolderGrant {
                    path: extra.display().to_string(),
                    access: FolderAccess::ReadOnly,
                },
            })
            .unwrap();
        until(&mut events, |m| matches!(m, EventMsg::FolderGranted { .. })).await;
        let id = session.id().to_owned();
        session.submit(Op::Close).unwrap();
        let closed = until(&mut events, |m| matches!(m, EventMsg::SessionClosed)).await;
        session.closed().await;
        (id, closed.last().unwrap().seq)
    };
    let (session_id, last_seq) = session_id;
    assert!(folder.join("made").exists());

    // Second process: reopen from the file and go on.
    let store: Arc<dyn SessionStore> = Arc::new(SqliteSessionStore::open(&db).unwrap());
    let listed = store.list().await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].id, session_id);
    assert_eq!(listed[0].title, "make a file");
    assert_eq!(listed[0].message_count, 4);

    let bus = EventBus::new(Arc::new(DiscardSink), 1024);
    let mut events = bus.subscribe();
    server.push(Reply::tool_call(
        "c2",
        "run_bash",
        json!({"command": "touch made"}),
    ));
    server.push(Reply::final_text("Again."));
    let session = Session::resume(deps(&server, store, &bus), &session_id)
        .await
        .unwrap();
    let created = until(&mut events, |m| {
        matches!(m, EventMsg::SessionCreated { .. })
    })
    .await;
    let EventMsg::SessionCreated {
        settings, resumed, ..
    } = &created[0].msg
    else {
        unreachable!()
    };
    assert!(resumed);
    assert_eq!(settings.folders.len(), 2, "the grant survived");
    assert_eq!(created[0].seq, last_seq + 1, "event numbers continue");

    session
        .submit(Op::UserTurn {
            text: "do it again".into(),
        })
        .unwrap();
    let turn = until(&mut events, |m| matches!(m, EventMsg::TurnFinished { .. })).await;
    assert!(
        turn.iter().any(|e| matches!(
            e.msg,
            EventMsg::ToolCallApproved {
                by: DecidedBy::StandingApproval,
                ..
            }
        )),
        "the session approval survived the restart"
    );
    let requests = server.requests();
    let messages = requests[2].body["messages"].as_array().unwrap().clone();
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant", "user", "assistant", "user"]);
    assert_eq!(messages[0]["content"][0]["text"], "make a file");
    assert_eq!(messages[1]["content"][1]["id"], "c1");
    assert_eq!(messages[2]["content"][0]["tool_use_id"], "c1");
    assert_eq!(messages[3]["content"][0]["text"], "Made.");
    session.submit(Op::Close).unwrap();
    session.closed().await;
}

#[tokio::test]
async fn resuming_an_unknown_session_names_it() {
    let server = FakeModelServer::start().await.unwrap();
    let store: Arc<dyn SessionStore> = Arc::new(SqliteSessionStore::open_in_memory().unwrap());
    let bus = EventBus::new(Arc::new(DiscardSink), 16);
    let err = Session::resume(deps(&server, store, &bus), "no-such-session")
        .await
        .unwrap_err();
    assert!(err.to_string().contains("no-such-session"), "{err}");
}

/// Runs one turn whose only call asks and is answered with `scope`; returns the turn's events.
async fn approved_turn(
    session: &Session,
    events: &mut broadcast::Receiver<Event>,
    id: &str,
    scope: ApprovalScope,
) -> Vec<Event> {
    session
        .submit(Op::UserTurn {
            text: format!("run {id}"),
        })
        .unwrap();
    let mut seen = until(events, |m| {
        matches!(m, EventMsg::ToolCallAwaitingApproval { .. })
    })
    .await;
    session
        .submit(Op::Approval {
            call_id: id.into(),
            decision: ApprovalDecision::Approve { scope },
        })
        .unwrap();
    seen.extend(until(events, |m| matches!(m, EventMsg::TurnFinished { .. })).await);
    seen
}

#[tokio::test]
async fn a_file_downloaded_before_a_restart_still_asks_when_run_after_it() {
    let state = tempfile::tempdir().unwrap();
    let db = state.path().join("sessions.db");
    let folder = tempfile::tempdir().unwrap();
    let folder = folder.path().canonicalize().unwrap();
    let source = tempfile::tempdir().unwrap();
    let payload = source.path().join("payload.sh");
    std::fs::write(&payload, "echo ran > ran.txt\n").unwrap();
    let server = FakeModelServer::start().await.unwrap();

    let session_id = {
        let store: Arc<dyn SessionStore> = Arc::new(SqliteSessionStore::open(&db).unwrap());
        let bus = EventBus::new(Arc::new(DiscardSink), 1024);
        let mut events = bus.subscribe();
        let command = format!("curl -sS -o tool file://{}", payload.display());
        server.push(Reply::tool_call(
            "dl",
            "run_bash",
            json!({ "command": command }),
        ));
        server.push(Reply::final_text("Got it."));
        let session = Session::start(deps(&server, store, &bus), settings(&folder))
            .await
            .unwrap();
        approved_turn(&session, &mut events, "dl", ApprovalScope::Once).await;
        let id = session.id().to_owned();
        session.submit(Op::Close).unwrap();
        session.closed().await;
        id
    };
    assert!(folder.join("tool").exists());

    let store: Arc<dyn SessionStore> = Arc::new(SqliteSessionStore::open(&db).unwrap());
    let bus = EventBus::new(Arc::new(DiscardSink), 1024);
    let mut events = bus.subscribe();
    server.push(Reply::tool_call(
        "run",
        "run_bash",
        json!({"command": "sh tool"}),
    ));
    server.push(Reply::final_text("Not run."));
    let session = Session::resume(deps(&server, store, &bus), &session_id)
        .await
        .unwrap();
    session
        .submit(Op::UserTurn {
            text: "run it".into(),
        })
        .unwrap();
    let asked = until(&mut events, |m| {
        matches!(m, EventMsg::ToolCallAwaitingApproval { .. })
    })
    .await;
    let Some(EventMsg::ToolCallAwaitingApproval {
        reason,
        lasting_allowed,
        ..
    }) = asked.last().map(|e| e.msg.clone())
    else {
        unreachable!()
    };
    assert!(
        reason.starts_with("safety check:") && reason.contains("downloaded in this session"),
        "{reason}"
    );
    assert!(!lasting_allowed);
    session
        .submit(Op::Approval {
            call_id: "run".into(),
            decision: ApprovalDecision::Deny { reason: None },
        })
        .unwrap();
    until(&mut events, |m| matches!(m, EventMsg::TurnFinished { .. })).await;
    assert!(!folder.join("ran.txt").exists());
    session.submit(Op::Close).unwrap();
    session.closed().await;
}

#[tokio::test]
async fn an_always_approval_the_store_cannot_save_is_reported_and_holds_for_the_session() {
    let state = tempfile::tempdir().unwrap();
    let db = state.path().join("sessions.db");
    let folder = tempfile::tempdir().unwrap();
    let folder = folder.path().canonicalize().unwrap();
    let server = FakeModelServer::start().await.unwrap();
    let store: Arc<dyn SessionStore> = Arc::new(SqliteSessionStore::open(&db).unwrap());
    // A real SQLite failure on exactly that write.
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute_batch(
            "CREATE TRIGGER refuse_always BEFORE INSERT ON always_approvals
             BEGIN SELECT RAISE(FAIL, 'disk quota exceeded'); END;",
        )
        .unwrap();
    let bus = EventBus::new(Arc::new(DiscardSink), 1024);
    let mut events = bus.subscribe();
    for id in ["c1", "c2"] {
        server.push(Reply::tool_call(
            id,
            "run_bash",
            json!({"command": "touch stamp"}),
        ));
        server.push(Reply::final_text("ok"));
    }
    let session = Session::start(deps(&server, store.clone(), &bus), settings(&folder))
        .await
        .unwrap();
    let turn = approved_turn(&session, &mut events, "c1", ApprovalScope::Always).await;
    let error = turn
        .iter()
        .find_map(|e| match &e.msg {
            EventMsg::Error { code, message } => Some((*code, message.clone())),
            _ => None,
        })
        .expect("an error event");
    assert_eq!(error.0, protocol::ErrorCode::PersistenceFailed);
    assert!(
        error.1.contains("will not survive a restart") && error.1.contains("disk quota exceeded"),
        "{}",
        error.1
    );
    assert!(folder.join("stamp").exists(), "the approved call still ran");
    assert!(store.always_approvals().await.unwrap().is_empty());

    // It holds for the rest of this session, turns included.
    session
        .submit(Op::UserTurn {
            text: "again".into(),
        })
        .unwrap();
    let turn = until(&mut events, |m| matches!(m, EventMsg::TurnFinished { .. })).await;
    assert!(
        turn.iter().any(|e| matches!(
            &e.msg,
            EventMsg::ToolCallApproved { call_id, by: DecidedBy::StandingApproval, .. } if call_id == "c2"
        )),
        "{turn:#?}"
    );
    session.submit(Op::Close).unwrap();
    session.closed().await;
}
