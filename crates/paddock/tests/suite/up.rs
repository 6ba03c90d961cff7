//! `paddock up` as a user runs it, with `paddock run`s beside it on one state folder:
//! several processes at once (every run succeeds, audit rows = calls, the chain verifies),
//! `kill -9` mid-turn and a restart (the session resumes, nothing committed is lost, the dead
//! process's wall is reaped), and planted secrets that must show nowhere.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is a failed test"
)]

use crate::up_support;

use std::collections::BTreeMap;

use protocol::{Event, EventMsg, TurnStopReason};
use serde_json::{Value, json};
use test_support::model_server::{FakeModelServer, Reply, sse};
use up_support::{KEY, Machine, script_calls};

const CALLS_PER_SESSION: usize = 100;

/// Counts the audit rows of an export by (session, status) of tool calls.
fn tool_rows(export: &str) -> BTreeMap<(String, String), usize> {
    let mut rows = BTreeMap::new();
    for line in export.lines() {
        let row: Value = serde_json::from_str(line).unwrap();
        if row["record"]["type"] == "tool_call" {
            let key = (
                row["session_id"].as_str().unwrap().to_owned(),
                row["record"]["status"].as_str().unwrap().to_owned(),
            );
            *rows.entry(key).or_default() += 1;
        }
    }
    rows
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_runs_and_an_up_serving_two_sessions_share_one_state_folder() {
    let model = FakeModelServer::start().await.unwrap();
    let machine = Machine::new(&model, "");
    for name in ["run-0", "run-1", "run-2", "run-3", "up-a", "up-b"] {
        script_calls(&model, &format!("task {name}"), 10, CALLS_PER_SESSION / 10);
    }
    let up = machine.up("warn").await;
    let mut runs = Vec::new();
    for n in 0..4 {
        let folder = machine.folder(&format!("run-{n}"));
        let mut command = machine.command(&[
            "run",
            &format!("task run-{n}"),
            "--folder",
            folder.to_str().unwrap(),
            "--approval-mode",
            "bypass",
            "--json",
        ]);
        command
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        runs.push(command.spawn().unwrap());
    }
    let mut sessions = Vec::new();
    for name in ["up-a", "up-b"] {
        let folder = machine.folder(name);
        let id = up.session(&folder, "bypass").await;
        let socket = up.events(&id, 0).await;
        up.post(
            &format!("/v1/sessions/{id}/turns"),
            &json!({"text": format!("task {name}")}),
            202,
        )
        .await;
        sessions.push((id, socket));
    }
    for (n, run) in runs.into_iter().enumerate() {
        let output = tokio::time::timeout(up_support::WAIT, run.wait_with_output())
            .await
            .expect("paddock run finished in time")
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "run {n} failed: {stderr}");
        let finished = String::from_utf8_lossy(&output.stdout)
            .lines()
            .filter(|l| l.contains("\"type\":\"tool_call_finished\""))
            .count();
        assert_eq!(finished, CALLS_PER_SESSION, "run {n}");
    }
    let mut up_ids = Vec::new();
    for (id, mut socket) in sessions {
        let events = socket
            .until(|m| matches!(m, EventMsg::TurnFinished { .. }))
            .await;
        assert!(matches!(
            events.last().unwrap().msg,
            EventMsg::TurnFinished {
                stop_reason: TurnStopReason::EndTurn,
                ..
            }
        ));
        let finished = events
            .iter()
            .filter(|e| matches!(e.msg, EventMsg::ToolCallFinished { .. }))
            .count();
        assert_eq!(finished, CALLS_PER_SESSION, "up session {id}");
        up_ids.push(id);
    }

    let export = up
        .client
        .get(format!("{}/v1/audit/export", up.base))
        .bearer_auth(&up.token)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let rows = tool_rows(&export);
    let sessions: Vec<&String> = rows
        .keys()
        .map(|(s, _)| s)
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    assert_eq!(sessions.len(), 6, "{rows:?}");
    for session in sessions {
        for status in ["started", "finished"] {
            assert_eq!(
                rows.get(&(session.clone(), status.to_owned())),
                Some(&CALLS_PER_SESSION),
                "{session} {status}: {rows:?}"
            );
        }
    }
    for id in &up_ids {
        assert!(rows.contains_key(&(id.clone(), "finished".to_owned())));
    }
    let verify = up.get("/v1/audit/verify").await;
    assert_eq!(verify["first_broken"], Value::Null, "{verify}");
    let (_, status) = up.stop().await;
    assert!(status.success());
    assert_eq!(model.remaining_replies(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn up_killed_mid_turn_restarts_resumes_and_loses_nothing_committed() {
    let model = FakeModelServer::start().await.unwrap();
    let machine = Machine::new(&model, "");
    let marker = "task kill me";
    let mut calls = Vec::new();
    for n in 0..3 {
        calls.push(sse::tool_use(
            format!("quick{n}"),
            "run_bash",
            json!({"command": format!("echo quick {n}")}),
        ));
    }
    calls.push(sse::tool_use(
        "slow",
        "run_bash",
        json!({"command": "echo started; sleep 60"}),
    ));
    calls.push(sse::stop("tool_use"));
    model.push_for(marker, Reply::stream(calls));

    let mut up = machine.up("warn").await;
    let folder = machine.folder("kill");
    let id = up.session(&folder, "bypass").await;
    let mut socket = up.events(&id, 0).await;
    up.turn(&id, marker).await;
    let before = socket
        .until(|m| matches!(m, EventMsg::ToolCallStarted { call_id, .. } if call_id == "slow"))
        .await;
    let dead_pid = up.child.id().unwrap();
    up.child.start_kill().unwrap();
    up.child.wait().await.unwrap();
    let walls = machine.state().join("walls");
    let left: Vec<String> = std::fs::read_dir(&walls)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with(&format!("wall-{dead_pid}-")))
        .collect();
    assert!(!left.is_empty(), "the killed process left its wall folder");

    // Restart: the dead process's wall is reaped, the session is stored, nothing is lost.
    model.push_for(marker, Reply::final_text("resumed fine"));
    let up = machine.up("warn").await;
    for name in &left {
        assert!(!walls.join(name).exists(), "{name} was not reaped");
    }
    let stored = up.get(&format!("/v1/sessions/{id}")).await;
    assert_eq!(stored["state"], "stored", "{stored}");
    let verify = up.get("/v1/audit/verify").await;
    assert_eq!(verify["first_broken"], Value::Null, "{verify}");
    let mut replay = up.events(&id, 0).await;
    let committed: Vec<Event> = before.iter().filter(|e| e.is_durable()).cloned().collect();
    let mut replayed = Vec::new();
    while replayed.len() < committed.len() {
        replayed.push(replay.next().await.expect("the log replays"));
    }
    assert_eq!(
        replayed, committed,
        "every committed event survived the kill"
    );
    let audit = up
        .get(&format!(
            "/v1/audit?session={id}&tool=run_bash&status=started"
        ))
        .await;
    assert_eq!(
        audit["events"].as_array().unwrap().len(),
        4,
        "the slow call's start was committed before it ran: {audit}"
    );

    let resumed = up
        .post(&format!("/v1/sessions/{id}/resume"), &json!({}), 200)
        .await;
    assert_eq!(resumed["state"], "running");
    let last_before = before.last().unwrap().seq;
    let mut live = up.events(&id, last_before).await;
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
        after.iter().all(|e| e.seq > last_before),
        "no number reused"
    );
    assert!(matches!(
        after[0].msg,
        EventMsg::SessionCreated { resumed: true, .. }
    ));
    assert!(matches!(
        after.last().unwrap().msg,
        EventMsg::TurnFinished {
            stop_reason: TurnStopReason::EndTurn,
            ..
        }
    ));
    let verify = up.get("/v1/audit/verify").await;
    assert_eq!(verify["first_broken"], Value::Null, "{verify}");
    let (rest, status) = up.stop().await;
    assert!(status.success(), "{rest:?}");
    assert_eq!(rest.last().map(String::as_str), Some("stopped"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn planted_keys_and_secrets_show_in_no_log_line_audit_row_api_error_or_event() {
    const SECRET: &str = "ghp_PLANTEDsecretValue0123456789abcdefABCD";
    let model = FakeModelServer::start().await.unwrap();
    let machine = Machine::new(&model, "[sandbox]\nsecrets = [\"GITHUB_TOKEN\"]\n");
    // Everything the server can log, at the most verbose level.
    let mut up = machine.up("trace").await;
    let mut answers: Vec<String> = Vec::new();

    // The key store is `env` (read-only): storing the secret there is refused, and the
    // refusal does not quote it.
    let refused = up
        .call(
            reqwest::Method::PUT,
            "/v1/secrets/GITHUB_TOKEN",
            Some(&json!({"value": SECRET})),
            400,
        )
        .await;
    answers.push(refused.to_string());
    // A session on the local wall asking for the secret is refused, saying why.
    let folder = machine.folder("secrets");
    let refused = up
        .post(
            "/v1/sessions",
            &json!({"folders": [{"path": folder, "access": "read_write"}], "secrets": ["GITHUB_TOKEN"]}),
            400,
        )
        .await;
    assert_eq!(refused["code"], "secret_refused");
    assert!(
        refused["message"]
            .as_str()
            .unwrap()
            .contains("cannot inject secret placeholders"),
        "{refused}"
    );
    answers.push(refused.to_string());

    // The model API refuses the key and quotes it back (the fake does, in full).
    model.require_api_key("a-different-key-0123456789");
    let info = up
        .post(
            "/v1/sessions",
            &json!({"folders": [{"path": folder, "access": "read_write"}]}),
            201,
        )
        .await;
    let id = info["id"].as_str().unwrap().to_owned();
    let mut socket = up.events(&id, 0).await;
    up.post(
        &format!("/v1/sessions/{id}/turns"),
        &json!({"text": "hello"}),
        202,
    )
    .await;
    let events = socket
        .until(|m| matches!(m, EventMsg::TurnFinished { .. }))
        .await;
    assert!(
        events.iter().any(|e| matches!(
            &e.msg,
            EventMsg::Error {
                code: protocol::ErrorCode::ModelAuth,
                ..
            }
        )),
        "the refusal reached the session: {events:?}"
    );
    let export = up
        .client
        .get(format!("{}/v1/audit/export", up.base))
        .bearer_auth(&up.token)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    for path in [
        "/v1/settings",
        "/v1/models/providers",
        &format!("/v1/sessions/{id}"),
    ] {
        answers.push(up.get(path).await.to_string());
    }
    let check = up.post("/v1/models/test", &json!({}), 200).await;
    assert_eq!(check["ok"], false);
    answers.push(check.to_string());
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let log = up.log_lines();
    assert!(log.len() > 10, "trace logging produced lines: {log:?}");
    let (rest, _) = up.stop().await;
    let everything = [
        serde_json::to_string(&events).unwrap(),
        export,
        answers.join("\n"),
        log.join("\n"),
        rest.join("\n"),
    ];
    for (what, text) in ["events", "audit export", "API answers", "log", "stdout"]
        .iter()
        .zip(&everything)
    {
        assert!(!text.contains(KEY), "the model key shows in the {what}");
        assert!(!text.contains(SECRET), "the secret shows in the {what}");
    }
    assert!(
        model.requests().iter().any(|r| !r.api_key_accepted),
        "the key was really refused (and quoted) by the model API"
    );
}

/// A secret really in use: `paddock up` at trace level on the OpenShell provider (the gateway
/// double, real gRPC over mTLS), a session given the secret as a gateway provider and a
/// command reading its placeholder. The value goes to the gateway's provider and nowhere
/// else: no log line of any crate, no event, no audit row, no API answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secret_in_use_on_openshell_shows_in_no_log_line_event_or_audit_row() {
    use std::os::unix::fs::PermissionsExt;
    use test_support::gateway_double::{
        DoubleConfig, GatewayDouble, Registration, TestPki, register_gateway,
    };
    const SECRET: &str = "ghp_PLANTEDliveSecret0123456789abcdefABCD";
    const IMAGE: &str = "registry.example/paddock-sandbox@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
    let mkdir = |path: &std::path::Path, mode: u32| {
        std::fs::create_dir_all(path).unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    };
    let model = FakeModelServer::start().await.unwrap();
    let machine = Machine::new(
        &model,
        &format!(
            "[sandbox]\nprovider = \"openshell\"\nsecrets = [\"GITHUB_TOKEN\"]\n[openshell]\ngateway = \"double\"\nimage = \"{IMAGE}\"\n"
        ),
    );
    let root = machine.root.path();
    let pki = TestPki::generate();
    let mut config = DoubleConfig::new(root.join("double"));
    mkdir(&config.state_dir, 0o755);
    config.tls = Some(pki.clone());
    let double = GatewayDouble::start(config).await.unwrap();
    // `paddock up` finds the gateway the way the `openshell` CLI does: its XDG config.
    let registrations = root.join("config/openshell");
    mkdir(&registrations, 0o700);
    register_gateway(
        &registrations,
        "double",
        &double.endpoint(),
        &Registration::Mtls(&pki),
    );
    let system = root.join("etc-openshell");
    mkdir(&system, 0o755);
    let mut up = machine
        .up_with(
            "trace",
            &[
                ("GITHUB_TOKEN", SECRET.as_ref()),
                ("OPENSHELL_SYSTEM_GATEWAY_DIR", system.as_os_str()),
            ],
        )
        .await;
    let folder = machine.folder("live-secret");
    std::os::unix::fs::chown(&folder, Some(1000), Some(1000)).unwrap();
    let marker = "task use the secret";
    model.push_for(
        marker,
        Reply::tool_call(
            "env",
            "run_bash",
            json!({"command": "printf 'token=%s\\n' \"$GITHUB_TOKEN\""}),
        ),
    );
    model.push_for(marker, Reply::final_text("used it"));
    let info = up
        .post(
            "/v1/sessions",
            &json!({"folders": [{"path": folder, "access": "read_write"}], "secrets": ["GITHUB_TOKEN"], "approval_mode": "bypass"}),
            201,
        )
        .await;
    let id = info["id"].as_str().unwrap().to_owned();
    let mut socket = up.events(&id, 0).await;
    up.turn(&id, marker).await;
    let events = socket
        .until(|m| matches!(m, EventMsg::TurnFinished { .. }))
        .await;
    // The secret was really used: the gateway holds it, the command saw its placeholder.
    assert!(
        double
            .providers()
            .iter()
            .any(|p| p.credentials.get("GITHUB_TOKEN").map(String::as_str) == Some(SECRET)),
        "the gateway's provider holds the secret"
    );
    let events_text = serde_json::to_string(&events).unwrap();
    assert!(
        events_text.contains("token=openshell:resolve:env:GITHUB_TOKEN"),
        "{events_text}"
    );
    let export = up
        .client
        .get(format!("{}/v1/audit/export", up.base))
        .bearer_auth(&up.token)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let answers = [
        up.get(&format!("/v1/sessions/{id}")).await.to_string(),
        up.get("/v1/settings").await.to_string(),
        up.get("/v1/audit?limit=500").await.to_string(),
    ];
    up.post(&format!("/v1/sessions/{id}/close"), &json!({}), 200)
        .await;
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let log = up.log_lines();
    assert!(log.len() > 10, "trace logging produced lines: {log:?}");
    let (rest, status) = up.stop().await;
    assert!(status.success(), "{rest:?}");
    for (what, text) in [
        ("events", events_text),
        ("audit export", export),
        ("API answers", answers.join("\n")),
        ("log", log.join("\n")),
        ("stdout", rest.join("\n")),
    ] {
        assert!(!text.contains(SECRET), "the secret shows in the {what}");
        assert!(!text.contains(KEY), "the model key shows in the {what}");
    }
}
