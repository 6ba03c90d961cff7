//! Full turns end to end through the LOCAL wall: the fake model server (real HTTP, Anthropic
//! wire) asks to write a file, the approval is given, the file appears in the granted folder,
//! and the audit chain verifies. Once through the host crate (what every front end calls), once
//! as a subprocess of the built `paddock` binary.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is a failed test"
)]

use crate::cli_support;

use std::path::Path;
use std::time::Duration;

use audit_store::{AuditRecord, AuditStore, CallStatus, Query};
use cli_support::{KEY, Machine, model_config};
use paddock_host::paths::Paths;
use paddock_host::wiring::Helpers;
use paddock_host::{Host, HostOptions, NewSession};
use protocol::{
    ApprovalDecision, ApprovalMode, ApprovalScope, EnforcementLevel, EventMsg, FolderAccess,
    FolderGrant, ProviderKind,
};
use serde_json::{Value, json};
use test_support::model_server::{FakeModelServer, Reply, sse};

fn write_reply(target: &Path) -> [Reply; 2] {
    [
        Reply::stream([
            sse::text("I'll write it."),
            sse::tool_use(
                "toolu_1",
                "write_file",
                json!({"path": target.display().to_string(), "content": "hello from the wall\n"}),
            ),
            sse::stop("tool_use"),
        ]),
        Reply::stream([sse::text("Done."), sse::stop("end_turn")]),
    ]
}

fn helpers() -> Helpers {
    Helpers {
        tool_runner: test_support::binaries::tool_runner(),
        paddock_wall: test_support::binaries::paddock_wall(),
    }
}

/// Sets `ANTHROPIC_API_KEY` for this test process (the `env` key store reads it). nextest
/// runs each test in its own process.
fn with_key() {
    // SAFETY: set at the start of the test, before it starts any thread that reads the
    // environment.
    unsafe { std::env::set_var("ANTHROPIC_API_KEY", KEY) };
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_turn_writes_through_the_local_wall_and_the_chain_verifies() {
    with_key();
    let state = tempfile::tempdir().unwrap();
    let paths = Paths::under(state.path());
    let work = tempfile::tempdir().unwrap();
    let work = work.path().canonicalize().unwrap();
    let target = work.join("hello.txt");
    let server = FakeModelServer::start().await.unwrap();
    for reply in write_reply(&target) {
        server.push(reply);
    }
    std::fs::create_dir_all(&paths.config_dir).unwrap();
    std::fs::write(paths.config_file(), model_config(&server)).unwrap();
    let mut options = HostOptions::new(paths.clone());
    options.helpers = Some(helpers());
    let host = Host::open(options).await.unwrap();
    assert_eq!(
        host.config().provider,
        ProviderKind::Local,
        "local is the default wall"
    );
    let session = host
        .create_session(NewSession {
            folders: vec![FolderGrant {
                path: work.display().to_string(),
                access: FolderAccess::ReadWrite,
            }],
            approval_mode: Some(ApprovalMode::Ask),
            ..NewSession::default()
        })
        .await
        .unwrap();
    let mut events = host.events(&session.id, 0);
    host.send_turn(&session.id, "write hello.txt")
        .await
        .unwrap();
    let mut enforcement = None;
    let finished = loop {
        let event = tokio::time::timeout(Duration::from_secs(120), events.next())
            .await
            .expect("an event in time")
            .unwrap()
            .unwrap();
        match &event.msg {
            EventMsg::ToolCallAwaitingApproval { call_id, .. } => {
                assert!(!target.exists());
                host.decide_approval(
                    &session.id,
                    call_id,
                    ApprovalDecision::Approve {
                        scope: ApprovalScope::Once,
                    },
                )
                .await
                .unwrap();
            }
            EventMsg::ToolCallFinished {
                enforcement: level, ..
            } => enforcement = Some(*level),
            EventMsg::SandboxRefused { reason, .. } => {
                panic!("the local wall was refused: {reason}")
            }
            EventMsg::TurnFinished { stop_reason, .. } => break *stop_reason,
            _ => {}
        }
    };
    host.close_session(&session.id).await.unwrap();
    assert_eq!(finished, protocol::TurnStopReason::EndTurn);
    assert_eq!(enforcement, Some(EnforcementLevel::Local));
    assert_eq!(
        std::fs::read_to_string(&target).unwrap(),
        "hello from the wall\n"
    );

    let audit = AuditStore::open(paths.audit_db()).unwrap();
    let report = audit.verify().unwrap();
    assert!(report.is_intact(), "{report:?}");
    let mut rows = audit
        .query(&Query {
            limit: 1000,
            ..Query::default()
        })
        .unwrap()
        .events;
    rows.sort_by_key(|r| r.seq);
    let kinds: Vec<&AuditRecord> = rows.iter().map(|r| &r.record).collect();
    assert!(
        matches!(kinds[0], AuditRecord::Session(s) if s.provider.as_deref() == Some("local")),
        "{:?}",
        kinds[0]
    );
    assert!(kinds.iter().any(|r| matches!(r, AuditRecord::Attestation(a) if a.enforcement == EnforcementLevel::Local && a.passed())));
    let calls: Vec<(CallStatus, EnforcementLevel)> = kinds
        .iter()
        .filter_map(|r| match r {
            AuditRecord::ToolCall(c) => Some((c.status, c.enforcement)),
            _ => None,
        })
        .collect();
    assert_eq!(
        calls,
        [
            (CallStatus::Started, EnforcementLevel::Local),
            (CallStatus::Finished, EnforcementLevel::Local)
        ]
    );
    let everything = serde_json::to_string(&rows).unwrap();
    assert!(
        !everything.contains(KEY),
        "the model key must never reach the audit trail"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_paddock_binary_runs_a_task_through_the_local_wall() {
    let server = FakeModelServer::start().await.unwrap();
    let machine = Machine::new(&model_config(&server));
    let work = tempfile::tempdir().unwrap();
    let work = work.path().canonicalize().unwrap();
    let target = work.join("hello.txt");
    for reply in write_reply(&target) {
        server.push(reply);
    }
    let folder = work.display().to_string();
    let (code, stdout, stderr) = machine
        .run(&[
            "run",
            "write hello.txt",
            "--folder",
            &folder,
            "--approve-all",
            "--json",
        ])
        .await;
    assert_eq!(code, 0, "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert_eq!(
        std::fs::read_to_string(&target).unwrap(),
        "hello from the wall\n"
    );

    let events: Vec<Value> = stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect();
    let finished = events
        .iter()
        .find(|e| e["msg"]["type"] == "tool_call_finished")
        .unwrap();
    assert_eq!(finished["msg"]["enforcement"], "local");
    assert_eq!(finished["msg"]["status"], "ok");
    assert!(events.iter().any(|e| e["msg"]["type"] == "sandbox_ready"));
    let record_line = stderr
        .lines()
        .find_map(|l| l.strip_prefix("run record: "))
        .unwrap();
    let recorded = std::fs::read_to_string(Path::new(record_line).join("events.jsonl")).unwrap();
    assert_eq!(
        recorded.lines().count(),
        events.len(),
        "events.jsonl holds every event"
    );
    assert!(!stdout.contains(KEY) && !stderr.contains(KEY) && !recorded.contains(KEY));

    let (code, stdout, _) = machine.run(&["audit", "verify"]).await;
    assert_eq!(code, 0, "{stdout}");
    assert!(stdout.starts_with("intact:"), "{stdout}");
    let (code, exported, _) = machine.run(&["audit", "export", "--format", "jsonl"]).await;
    assert_eq!(code, 0);
    assert!(
        exported.contains("\"tool_call\"") && exported.contains("write_file"),
        "{exported}"
    );
    assert!(!exported.contains(KEY));
    let (code, ocsf, _) = machine.run(&["audit", "export", "--format", "ocsf"]).await;
    assert_eq!(code, 0);
    assert!(!ocsf.trim().is_empty());
    let (code, listed, _) = machine.run(&["audit", "list"]).await;
    assert_eq!(code, 0);
    assert!(
        listed.contains("tool_call toolu_1 write_file started [local]"),
        "{listed}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_terminal_prompts_are_refused_and_nothing_runs() {
    let server = FakeModelServer::start().await.unwrap();
    let machine = Machine::new(&model_config(&server));
    let work = tempfile::tempdir().unwrap();
    let work = work.path().canonicalize().unwrap();
    let target = work.join("hello.txt");
    server.push(write_reply(&target)[0].clone());
    server.push(Reply::final_text("OK, not writing."));
    let folder = work.display().to_string();
    let (_, stdout, stderr) = machine
        .run(&["run", "write hello.txt", "--folder", &folder])
        .await;
    assert!(!target.exists(), "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(stdout.contains("denied: nobody can answer"), "{stdout}");
    let second = &server.requests()[1].body;
    assert!(
        second.to_string().contains("stdin is not a terminal"),
        "the model is told why"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_run_options_are_refused_before_a_session_or_a_model_request() {
    let server = FakeModelServer::start().await.unwrap();
    let machine = Machine::new(&model_config(&server));
    let work = tempfile::tempdir().unwrap();
    let folder = work.path().canonicalize().unwrap().display().to_string();
    let missing = work.path().join("missing").display().to_string();
    let cases: [(&[&str], &[&str]); 4] = [
        (
            &["--folder", &folder, "--credential", "nonesuch"],
            &[
                "--credential `nonesuch`",
                "it offers: ",
                "ssh",
                "[[sandbox_credentials]]",
            ],
        ),
        (
            &["--folder", &folder, "--allow-host", "https://example.com/x"],
            &["--allow-host", "give a host name, not a URL"],
        ),
        (&["--folder", &missing], &["--folder", "does not exist"]),
        (
            &["--folder", &folder, "--approval-mode", "yolo"],
            &["--approval-mode `yolo`", "ask, auto-edit"],
        ),
    ];
    for (options, expected) in cases {
        let mut args = vec!["run", "a task"];
        args.extend_from_slice(options);
        let (code, stdout, stderr) = machine.run(&args).await;
        assert_eq!(code, 1, "{args:?}\nstdout:\n{stdout}\nstderr:\n{stderr}");
        for text in expected {
            assert!(
                stderr.contains(text),
                "{args:?}: `{text}` missing in:\n{stderr}"
            );
        }
    }
    assert_eq!(server.request_count(), 0, "no model request was spent");
    let (code, listed, _) = machine.run(&["sessions", "list", "--json"]).await;
    assert_eq!(code, 0);
    assert!(
        !listed.contains("a task"),
        "no session was stored: {listed}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_machine_config_is_refused_naming_file_and_key() {
    let machine = Machine::new("[sandbox]\nprovider = \"docker\"\n");
    let (code, _, stderr) = machine.run(&["machine", "sandbox", "status"]).await;
    assert_eq!(code, 1);
    assert!(
        stderr.contains("config.toml") && stderr.contains("sandbox.provider"),
        "{stderr}"
    );
    assert!(stderr.contains("docker"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sandbox_status_and_setup() {
    let machine = Machine::new("");
    let (code, stdout, stderr) = machine
        .run(&["machine", "sandbox", "status", "--json"])
        .await;
    let status: Value =
        serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout} {stderr}"));
    assert_eq!(status["provider"], "local");
    let ready = status["checks"]
        .as_array()
        .unwrap()
        .iter()
        .all(|c| c["ok"] == true);
    assert_eq!(code, if ready { 0 } else { 1 });

    // A provider whose runner is missing is not ready: exit code 1 and the fix is named.
    let mut command = machine.command(&["machine", "sandbox", "status", "--provider", "direct"]);
    command.env("PADDOCK_TOOL_RUNNER", "/nonexistent/tool-runner");
    let output = command.output().await.unwrap();
    assert_eq!(output.status.code(), Some(1));
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("FAIL") && text.contains("fix:"), "{text}");

    // Setup refuses to change anything without a terminal or --yes ...
    let (code, stdout, _) = machine
        .run(&["machine", "sandbox", "setup", "--provider", "direct"])
        .await;
    assert_eq!(code, 1, "{stdout}");
    // The exact change, as a diff of the machine config.
    assert!(
        stdout.contains("Paddock edits ") && stdout.contains("+provider = \"direct\""),
        "{stdout}"
    );
    let config_file = machine.root.path().join("config/paddock/config.toml");
    assert_eq!(std::fs::read_to_string(&config_file).unwrap(), "");
    // ... and with --yes writes only the provider, keeping a backup.
    let (code, stdout, _) = machine
        .run(&[
            "machine",
            "sandbox",
            "setup",
            "--provider",
            "direct",
            "--yes",
        ])
        .await;
    assert_eq!(code, 0, "{stdout}");
    let written = std::fs::read_to_string(&config_file).unwrap();
    assert_eq!(written.trim(), "[sandbox]\nprovider = \"direct\"");
    assert!(config_file.with_extension("toml.bak").exists());
    // Idempotent: a second run changes nothing and says so.
    let (code, stdout, _) = machine
        .run(&[
            "machine",
            "sandbox",
            "setup",
            "--provider",
            "direct",
            "--yes",
        ])
        .await;
    assert_eq!(code, 0, "{stdout}");
    assert!(stdout.contains("nothing to change"), "{stdout}");
    assert_eq!(std::fs::read_to_string(&config_file).unwrap(), written);
    let (_, stdout, _) = machine
        .run(&["machine", "sandbox", "status", "--json"])
        .await;
    let status: Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(status["provider"], "direct");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_connection_reaches_the_model_in_the_providers_words() {
    let server = FakeModelServer::start().await.unwrap();
    let machine = Machine::new(&model_config(&server));
    let work = tempfile::tempdir().unwrap();
    let work = work.path().canonicalize().unwrap();
    server.push(Reply::tool_call(
        "toolu_net",
        "run_bash",
        json!({"command": "curl -sS --max-time 10 https://blocked.example.invalid/ || true"}),
    ));
    server.push(Reply::final_text("Blocked."));
    let folder = work.display().to_string();
    let (code, stdout, stderr) = machine
        .run(&[
            "run",
            "fetch it",
            "--folder",
            &folder,
            "--approve-all",
            "--json",
        ])
        .await;
    assert_eq!(code, 0, "stdout:\n{stdout}\nstderr:\n{stderr}");
    let finished: Value = stdout
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .find(|e| e["msg"]["type"] == "tool_call_finished")
        .unwrap();
    let denials = finished["msg"]["network_denials"].as_array().unwrap();
    assert!(!denials.is_empty(), "{finished}");
    assert_eq!(denials[0]["host"], "blocked.example.invalid");
    assert_eq!(denials[0]["binary"], "/usr/bin/curl");
    let notice = format!(
        "[blocked by the sandbox's network policy: /usr/bin/curl tried blocked.example.invalid:{}. This is not a network fault; ask the user to allow it.]",
        denials[0]["port"]
    );
    let results = server.requests()[1].body.to_string();
    assert!(results.contains(&notice), "{results}");

    let (_, exported, _) = machine.run(&["audit", "export", "--format", "jsonl"]).await;
    assert!(exported.contains("network_denial"), "{exported}");
}

/// The run's events as recorded in its run record (the path `paddock run` prints last).
fn recorded_events(output: &str) -> Vec<Value> {
    let record = output
        .lines()
        .find_map(|l| l.strip_prefix("run record: "))
        .unwrap_or_else(|| panic!("no run record line in:\n{output}"));
    std::fs::read_to_string(Path::new(record).join("events.jsonl"))
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_connections_name_their_programs_everywhere() {
    let server = FakeModelServer::start().await.unwrap();
    let machine = Machine::new(&model_config(&server));
    let work = tempfile::tempdir().unwrap();
    let work = work.path().canonicalize().unwrap();
    let attempts = [
        (
            "toolu_curl",
            "curl -sS --max-time 10 https://curl-blocked.invalid/ || true",
            "curl-blocked.invalid",
            "curl",
        ),
        (
            "toolu_python",
            "python3 -c \"import urllib.request as u; u.urlopen('http://python-blocked.invalid/', timeout=10)\" 2>&1 | tail -1; true",
            "python-blocked.invalid",
            "python3",
        ),
    ];
    for (id, command, _, _) in attempts {
        server.push(Reply::tool_call(
            id,
            "run_bash",
            json!({ "command": command }),
        ));
    }
    server.push(Reply::final_text("Both were blocked."));
    let folder = work.display().to_string();
    let (code, terminal, stderr) = machine
        .run(&["run", "fetch both", "--folder", &folder, "--approve-all"])
        .await;
    assert_eq!(code, 0, "stdout:\n{terminal}\nstderr:\n{stderr}");
    let events = recorded_events(&terminal);
    let (_, exported, _) = machine.run(&["audit", "export", "--format", "jsonl"]).await;
    let audit_rows: Vec<Value> = exported
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["record"].clone())
        .filter(|r| r.get("denial").is_some())
        .collect();
    let (_, listed, _) = machine.run(&["audit", "list"]).await;

    for (step, (id, _, host, program)) in attempts.into_iter().enumerate() {
        // The event: the call's denial names the program that opened the connection.
        let finished = events
            .iter()
            .find(|e| e["msg"]["type"] == "tool_call_finished" && e["msg"]["call_id"] == id)
            .unwrap_or_else(|| panic!("{id} did not finish: {events:?}"));
        let denials = finished["msg"]["network_denials"].as_array().unwrap();
        let denial = denials
            .iter()
            .find(|d| d["host"] == host)
            .unwrap_or_else(|| panic!("{id}: no denial of {host}: {finished}"));
        let binary = denial["binary"].as_str().unwrap_or_default().to_owned();
        let executable = Path::new(&binary)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        assert!(
            binary.starts_with('/') && executable.starts_with(program),
            "{id}: the denial names {binary:?}, not {program}"
        );
        let port = denial["port"].as_u64().unwrap();
        // The audit row, joined to its call.
        assert!(
            audit_rows.iter().any(|r| r["call_id"] == id
                && r["denial"]["host"] == host
                && r["denial"]["binary"] == binary.as_str()),
            "{id}: no audit row naming {binary}: {audit_rows:?}"
        );
        assert!(
            listed.contains(&format!("network_denial {binary} -> {host}:{port}")),
            "{id}: `audit list` does not name {binary}:\n{listed}"
        );
        // The model's notice, in the request after the call.
        let notice = format!(
            "[blocked by the sandbox's network policy: {binary} tried {host}:{port}. This is not a network fault; ask the user to allow it.]"
        );
        let results = server.requests()[step + 1].body.to_string();
        assert!(
            results.contains(&notice),
            "{id}: the model was not told {notice}:\n{results}"
        );
        // The terminal line of `paddock run`.
        assert!(
            terminal.contains(&format!("network denied: {binary} -> {host}:{port} (")),
            "{id}: the terminal does not name {binary}:\n{terminal}"
        );
    }
}

const GRABBER: &str = test_support::hostile::PROCESS_GRABBER;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sandbox_held_at_its_process_limit_recovers_and_the_model_is_told() {
    let server = FakeModelServer::start().await.unwrap();
    let machine = Machine::new(&format!(
        "{}[sandbox.limits]\nprocesses = 64\n",
        model_config(&server)
    ));
    let work = tempfile::tempdir().unwrap();
    let folder = work.path().canonicalize().unwrap().display().to_string();
    for (id, command) in [("toolu_grab", GRABBER), ("toolu_after", "echo alive")] {
        server.push(Reply::tool_call(
            id,
            "run_bash",
            json!({ "command": command }),
        ));
    }
    server.push(Reply::final_text("Done."));
    let (code, stdout, stderr) = machine
        .run(&["run", "fill it", "--folder", &folder, "--approve-all"])
        .await;
    assert_eq!(code, 0, "stdout:\n{stdout}\nstderr:\n{stderr}");
    let requests = server.requests();
    let told = requests[1].body.to_string();
    assert!(
        told.contains("[note from Paddock: the sandbox reached its limit of 64 processes"),
        "the model was not told: {told}"
    );
    let after = requests[2].body.to_string();
    assert!(
        after.contains("alive") && !after.contains("cannot start bash"),
        "the session did not recover: {after}"
    );
}
