//! `paddock sessions list`, `paddock run --resume` and `paddock approvals list|revoke`, end to
//! end through the built binary and the fake model server (real HTTP). The runs use the
//! `direct` provider: what is tested here is the session store and the CLI, not a wall.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is a failed test"
)]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use agent::SessionStore;
use approvals::{ApprovalGrant, ApprovalScope, StandingApproval};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use session_store::SqliteSessionStore;
use test_support::model_server::{FakeModelServer, Reply, sse};

const KEY: &str = "sk-ant-test-sessions-0123456789";

/// A machine for `paddock` subprocesses: its own config, state and home.
struct Machine {
    root: tempfile::TempDir,
}

impl Machine {
    fn new(server: &FakeModelServer) -> Self {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("config/paddock")).unwrap();
        std::fs::create_dir_all(root.path().join("home")).unwrap();
        let config = format!(
            "[models]\nprovider = \"anthropic\"\nmodel = \"claude-test\"\nbase_url = \"{}\"\nkey_store = \"env\"\n",
            server.anthropic_base_url()
        );
        std::fs::write(root.path().join("config/paddock/config.toml"), config).unwrap();
        Self { root }
    }

    fn sessions_db(&self) -> PathBuf {
        self.root.path().join("state/paddock/sessions.db")
    }

    async fn run(&self, args: &[&str]) -> (i32, String, String) {
        let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_paddock"));
        command
            .args(args)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.root.path().join("home"))
            .env("XDG_CONFIG_HOME", self.root.path().join("config"))
            .env("XDG_STATE_HOME", self.root.path().join("state"))
            .env("ANTHROPIC_API_KEY", KEY)
            .env("PADDOCK_TOOL_RUNNER", test_support::binaries::tool_runner())
            .stdin(Stdio::null())
            .kill_on_drop(true);
        let output = tokio::time::timeout(Duration::from_secs(180), command.output())
            .await
            .expect("paddock finished in time")
            .unwrap();
        (
            output.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&output.stdout).into_owned(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    }
}

fn events(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect()
}

fn session_id(events: &[Value]) -> String {
    events[0]["session_id"].as_str().unwrap().to_owned()
}

fn folder(dir: &Path) -> String {
    dir.canonicalize().unwrap().display().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_is_listed_and_resumed_with_its_whole_history() {
    let server = FakeModelServer::start().await.unwrap();
    let machine = Machine::new(&server);
    let work = tempfile::tempdir().unwrap();
    let work = folder(work.path());
    let target = format!("{work}/hello.txt");
    server.push(Reply::stream([
        sse::text("Writing it."),
        sse::tool_use(
            "toolu_1",
            "write_file",
            json!({"path": target, "content": "hello\n"}),
        ),
        sse::stop("tool_use"),
    ]));
    server.push(Reply::stream([sse::text("Done."), sse::stop("end_turn")]));
    let (code, stdout, stderr) = machine
        .run(&[
            "run",
            "write hello.txt",
            "--folder",
            &work,
            "--provider",
            "direct",
            "--approve-all",
            "--json",
        ])
        .await;
    assert_eq!(code, 0, "stdout:\n{stdout}\nstderr:\n{stderr}");
    let first = events(&stdout);
    let id = session_id(&first);
    assert!(
        stderr.contains(&format!("paddock run --resume {id}")),
        "{stderr}"
    );

    let (code, listed, _) = machine.run(&["sessions", "list", "--json"]).await;
    assert_eq!(code, 0);
    let listed: Value = serde_json::from_str(&listed).unwrap();
    assert_eq!(listed.as_array().unwrap().len(), 1, "{listed}");
    assert_eq!(listed[0]["id"], id.as_str());
    assert_eq!(listed[0]["provider"], "direct");
    assert_eq!(listed[0]["folders"][0]["path"], work.as_str());
    assert_eq!(listed[0]["title"], "write hello.txt");
    assert_eq!(listed[0]["message_count"], 4);
    let (_, text, _) = machine.run(&["sessions", "list"]).await;
    assert!(
        text.contains(&id) && text.contains("direct") && text.contains(&work),
        "{text}"
    );

    // The next message continues the stored session: the model sees everything so far.
    server.push(Reply::final_text("It says hello."));
    let (code, stdout, stderr) = machine
        .run(&["run", "--resume", &id, "what did you write?", "--json"])
        .await;
    assert_eq!(code, 0, "stdout:\n{stdout}\nstderr:\n{stderr}");
    let resumed = events(&stdout);
    assert_eq!(session_id(&resumed), id);
    assert_eq!(resumed[0]["msg"]["type"], "session_created");
    assert_eq!(resumed[0]["msg"]["resumed"], true);
    assert_eq!(
        resumed[0]["seq"].as_u64().unwrap(),
        first.last().unwrap()["seq"].as_u64().unwrap() + 1,
        "event numbers continue"
    );
    // No --provider: the session's own wall (`direct`, not the config's `local`) is used.
    assert!(
        stderr.contains("UNPROTECTED: the `direct` provider"),
        "{stderr}"
    );

    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let messages = requests[2].body["messages"].as_array().unwrap();
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant", "user", "assistant", "user"]);
    assert_eq!(messages[0]["content"][0]["text"], "write hello.txt");
    assert_eq!(messages[1]["content"][1]["id"], "toolu_1");
    assert_eq!(messages[2]["content"][0]["tool_use_id"], "toolu_1");
    assert_eq!(messages[3]["content"][0]["text"], "Done.");
    assert_eq!(messages[4]["content"][0]["text"], "what did you write?");
    assert!(
        requests[2].body["system"].as_str().unwrap().contains(&work),
        "the resumed session keeps its folder grant"
    );

    let (code, _, stderr) = machine
        .run(&["run", "--resume", "no-such-session", "hello"])
        .await;
    assert_eq!(code, 1);
    assert!(
        stderr.contains("no-such-session") && stderr.contains("sessions list"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approvals_are_listed_and_revoked_from_the_cli_and_a_resumed_run_obeys() {
    let server = FakeModelServer::start().await.unwrap();
    let machine = Machine::new(&server);
    let work = tempfile::tempdir().unwrap();
    let work = folder(work.path());
    let (code, stdout, _) = machine.run(&["approvals", "list"]).await;
    assert_eq!(code, 0);
    assert!(stdout.contains("no `always` approvals"), "{stdout}");

    // A first run stores the session; nothing needs approving.
    server.push(Reply::final_text("Hi."));
    let (code, stdout, stderr) = machine
        .run(&[
            "run",
            "say hi",
            "--folder",
            &work,
            "--provider",
            "direct",
            "--json",
        ])
        .await;
    assert_eq!(code, 0, "{stderr}");
    let id = session_id(&events(&stdout));

    // The user approved `touch` for always (stored as the agent would store it), and the
    // session holds a session approval.
    let always = StandingApproval::new(
        ApprovalScope::Always,
        ApprovalGrant::CommandPrefix {
            prefix: vec!["touch".into()],
        },
    );
    let session_one = StandingApproval::new(
        ApprovalScope::Session,
        ApprovalGrant::CommandPrefix {
            prefix: vec!["make".into()],
        },
    );
    {
        let store = SqliteSessionStore::open(&machine.sessions_db()).unwrap();
        store.add_always_approval(&always).await.unwrap();
        store
            .save_session_approvals(&id, std::slice::from_ref(&session_one))
            .await
            .unwrap();
    }
    let (code, listed, _) = machine.run(&["approvals", "list", "--json"]).await;
    assert_eq!(code, 0);
    let listed: Value = serde_json::from_str(&listed).unwrap();
    assert_eq!(
        listed,
        json!([{"id": always.id, "scope": "always",
                "description": "commands starting with `touch`"}])
    );
    let (_, text, _) = machine.run(&["approvals", "list", "--session", &id]).await;
    assert!(
        text.contains(&session_one.id) && text.contains("`make`"),
        "{text}"
    );

    // While it stands, a resumed run lets `touch` through without a prompt (stdin is not a
    // terminal, so any prompt would be refused).
    let touch_turn = |name: &str| {
        server.push(Reply::tool_call(
            format!("t_{name}"),
            "run_bash",
            json!({ "command": format!("touch {name}") }),
        ));
        server.push(Reply::final_text("ok"));
    };
    touch_turn("first");
    let (code, _, stderr) = machine.run(&["run", "--resume", &id, "touch first"]).await;
    assert_eq!(code, 0, "{stderr}");
    assert!(
        Path::new(&work).join("first").exists(),
        "the approval applied"
    );

    // Revoked from the CLI, it no longer does.
    let (code, stdout, stderr) = machine.run(&["approvals", "revoke", &always.id]).await;
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("revoked: commands starting with `touch`"),
        "{stdout}"
    );
    let (_, listed, _) = machine.run(&["approvals", "list", "--json"]).await;
    assert_eq!(listed.trim(), "[]");
    touch_turn("second");
    let (_, stdout, _) = machine
        .run(&["run", "--resume", &id, "touch second", "--json"])
        .await;
    assert!(
        !Path::new(&work).join("second").exists(),
        "the call was asked and refused"
    );
    assert!(
        events(&stdout)
            .iter()
            .any(|e| e["msg"]["type"] == "tool_call_awaiting_approval"),
        "{stdout}"
    );

    // A session's own approval is revoked with --session.
    let (code, _, stderr) = machine
        .run(&["approvals", "revoke", &session_one.id, "--session", &id])
        .await;
    assert_eq!(code, 0, "{stderr}");
    let store = SqliteSessionStore::open(&machine.sessions_db()).unwrap();
    assert!(
        store
            .load(&id)
            .await
            .unwrap()
            .unwrap()
            .session_approvals
            .is_empty()
    );

    // Unknown ids are refused, naming them.
    let (code, _, stderr) = machine.run(&["approvals", "revoke", "apr-nope"]).await;
    assert_eq!(code, 1);
    assert!(stderr.contains("apr-nope"), "{stderr}");
    let (code, _, stderr) = machine
        .run(&["approvals", "revoke", "apr-nope", "--session", &id])
        .await;
    assert_eq!(code, 1);
    assert!(
        stderr.contains("apr-nope") && stderr.contains(&id),
        "{stderr}"
    );
}
