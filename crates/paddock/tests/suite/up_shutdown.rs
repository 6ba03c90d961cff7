//! `paddock up` stopped in the middle of a turn, with SIGTERM as `systemctl --user stop` does
//! and with SIGINT as Ctrl-C does: the running call is cancelled (not waited for), everything
//! is committed (the call's end as `cancelled`, the turn's end, `session_closed`), the sandbox
//! is torn down rather than left for reaping, the process says `stopped` and exits 0, the
//! audit chain verifies, and after a restart the session resumes with its history.

use crate::up_support;

use protocol::{Event, EventMsg, ToolCallStatus, TurnStopReason};
use serde_json::{Value, json};
use test_support::model_server::{FakeModelServer, Reply, sse};
use up_support::{Machine, Up};

const MARKER: &str = "task stop me";

/// Starts `up`, a session whose call runs far longer than the test waits, and stops `up`
/// with `signal` while the call runs. Returns the session's id.
async fn stopped_mid_call(model: &FakeModelServer, machine: &Machine, signal: i32) -> String {
    // A call far longer than the test waits for `up` to stop: waiting for it would fail.
    model.push_for(
        MARKER,
        Reply::stream(vec![
            sse::tool_use(
                "long",
                "run_bash",
                json!({"command": "echo started; sleep 600"}),
            ),
            sse::stop("tool_use"),
        ]),
    );
    let up = machine.up("warn").await;
    let folder = machine.folder("stop");
    let info = up
        .post(
            "/v1/sessions",
            &json!({"folders": [{"path": folder, "access": "read_write"}], "approval_mode": "bypass"}),
            201,
        )
        .await;
    let id = info["id"].as_str().unwrap().to_owned();
    let mut socket = up.events(&id, 0).await;
    up.post(
        &format!("/v1/sessions/{id}/turns"),
        &json!({"text": MARKER}),
        202,
    )
    .await;
    socket
        .until(|m| matches!(m, EventMsg::ToolCallOutput { call_id, .. } if call_id == "long"))
        .await;
    let pid = up.child.id().unwrap();
    let walls = machine.state().join("walls");
    let own_walls = || -> Vec<String> {
        std::fs::read_dir(&walls)
            .map(|entries| {
                entries
                    .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                    .filter(|name| name.starts_with(&format!("wall-{pid}-")))
                    .collect()
            })
            .unwrap_or_default()
    };
    assert!(!own_walls().is_empty(), "the session's wall is up");

    let stopped = up.stop_with(signal).await;
    assert!(
        stopped.status.success(),
        "{:?}: {:?} {:?}",
        stopped.status,
        stopped.stdout,
        stopped.stderr
    );
    assert_eq!(
        stopped.stdout.last().map(String::as_str),
        Some("stopped"),
        "{:?}",
        stopped.stdout
    );
    assert!(
        own_walls().is_empty(),
        "the wall was torn down at shutdown, not left for reaping: {:?}",
        own_walls()
    );
    id
}

/// Restarts `up` and checks the log holds the call's end, the turn's end and the close, in
/// that order, the cancelled call is in the audit trail and the chain verifies. Returns the
/// restarted `up` and the logged events.
async fn committed_after_restart(machine: &Machine, id: &str) -> (Up, Vec<Event>) {
    let up = machine.up("warn").await;
    let mut replay = up.events(id, 0).await;
    let logged = replay.until(|m| matches!(m, EventMsg::SessionClosed)).await;
    let position = |wanted: &dyn Fn(&EventMsg) -> bool| {
        logged
            .iter()
            .position(|e| wanted(&e.msg))
            .unwrap_or_else(|| panic!("not in the log: {logged:#?}"))
    };
    let finished = position(
        &|m| matches!(m, EventMsg::ToolCallFinished { call_id, status: ToolCallStatus::Cancelled, .. } if call_id == "long"),
    );
    let turn_end = position(&|m| {
        matches!(
            m,
            EventMsg::TurnFinished {
                stop_reason: TurnStopReason::Interrupted,
                ..
            }
        )
    });
    let closed = position(&|m| matches!(m, EventMsg::SessionClosed));
    assert!(finished < turn_end && turn_end < closed, "{logged:#?}");
    let audit = up
        .get(&format!(
            "/v1/audit?session={id}&tool=run_bash&status=cancelled"
        ))
        .await;
    assert_eq!(
        audit["events"].as_array().unwrap().len(),
        1,
        "the cancelled call is in the audit trail: {audit}"
    );
    let verify = up.get("/v1/audit/verify").await;
    assert_eq!(verify["first_broken"], Value::Null, "{verify}");
    (up, logged)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_mid_turn_cancels_the_call_commits_everything_and_the_session_resumes() {
    let model = FakeModelServer::start().await.unwrap();
    let machine = Machine::new(&model, "");
    let id = stopped_mid_call(&model, &machine, libc::SIGTERM).await;
    model.push_for(MARKER, Reply::final_text("picked up again"));
    let (up, logged) = committed_after_restart(&machine, &id).await;

    // The session resumes with its history: the model sees the cancelled call's result.
    let resumed = up
        .post(&format!("/v1/sessions/{id}/resume"), &json!({}), 200)
        .await;
    assert_eq!(resumed["state"], "running", "{resumed}");
    let mut live = up.events(&id, logged.last().unwrap().seq).await;
    up.post(
        &format!("/v1/sessions/{id}/turns"),
        &json!({"text": "go on"}),
        202,
    )
    .await;
    let after = live
        .until(|m| matches!(m, EventMsg::TurnFinished { .. }))
        .await;
    assert!(
        matches!(
            after.last().unwrap().msg,
            EventMsg::TurnFinished {
                stop_reason: TurnStopReason::EndTurn,
                ..
            }
        ),
        "{after:#?}"
    );
    let history = serde_json::to_string(&model.requests().last().unwrap().body).unwrap();
    assert!(
        history.contains(MARKER) && history.contains("go on"),
        "the resumed turn carries the history"
    );
    let (rest, status) = up.stop().await;
    assert!(status.success(), "{rest:?}");
}

/// Ctrl-C in the terminal running `paddock up` is SIGINT: the same graceful shutdown.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigint_mid_turn_shuts_down_as_gracefully_as_sigterm() {
    let model = FakeModelServer::start().await.unwrap();
    let machine = Machine::new(&model, "");
    let id = stopped_mid_call(&model, &machine, libc::SIGINT).await;
    let (up, _) = committed_after_restart(&machine, &id).await;
    let session = up.get(&format!("/v1/sessions/{id}")).await;
    assert_eq!(session["state"], "stored", "{session}");
    let (rest, status) = up.stop().await;
    assert!(status.success(), "{rest:?}");
}
