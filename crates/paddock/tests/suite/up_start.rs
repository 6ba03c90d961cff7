//! How `paddock up` starts and speaks: with no model key it still serves and says exactly how
//! to add one (sessions are refused with the same words until then); with `--log-format json`
//! every line on stderr is a JSON object (the start's warnings included), from start to stop.

use crate::up_support;

use serde_json::{Value, json};
use test_support::model_server::FakeModelServer;
use up_support::Machine;

/// The printed lines with what changes between runs (the port, the machine's folder) named.
fn stable(lines: &[String], up: &up_support::Up, machine: &Machine) -> String {
    let state = machine.state().display().to_string();
    lines
        .iter()
        .map(|line| {
            line.replace(&up.base, "http://127.0.0.1:<port>")
                .replace(&state, "<state>")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_model_key_up_serves_and_says_how_to_add_one() {
    let model = FakeModelServer::start().await.unwrap();
    let machine = Machine::new(&model, "");
    let up = machine
        .up_custom("warn", &[], |command| {
            command.env_remove("ANTHROPIC_API_KEY");
        })
        .await;
    insta::assert_snapshot!("up_without_a_model_key", stable(&up.printed, &up, &machine));

    // It serves: the API answers, and a session is refused with the same advice.
    let health = up.get("/v1/health").await;
    assert_eq!(health["status"], "ok");
    let folder = machine.folder("keyless");
    let refused = up
        .post(
            "/v1/sessions",
            &json!({"folders": [{"path": folder, "access": "read_write"}]}),
            409,
        )
        .await;
    assert_eq!(refused["code"], "model_key_missing", "{refused}");
    let message = refused["message"].as_str().unwrap();
    assert!(
        message.contains("set ANTHROPIC_API_KEY in the environment that starts Paddock"),
        "{message}"
    );
    let providers = up.get("/v1/models/providers").await;
    let anthropic = providers
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "anthropic")
        .unwrap();
    assert_eq!(anthropic["has_key"], false, "{anthropic}");
    assert_eq!(model.request_count(), 0, "nothing reached the model API");
    let (rest, status) = up.stop().await;
    assert!(status.success(), "{rest:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn log_format_json_puts_only_json_lines_on_stderr() {
    let model = FakeModelServer::start().await.unwrap();
    // The `direct` wall: `up` warns at start and on every session.
    let machine = Machine::new(&model, "[sandbox]\nprovider = \"direct\"\n");
    let up = machine
        .up_custom("info", &["--log-format", "json"], |_| {})
        .await;
    let folder = machine.folder("logged");
    up.post(
        "/v1/sessions",
        &json!({"folders": [{"path": folder, "access": "read_write"}]}),
        201,
    )
    .await;
    let stopped = up.stop_with(libc::SIGTERM).await;
    assert!(stopped.status.success(), "{:?}", stopped.stderr);

    let lines: Vec<Value> = stopped
        .stderr
        .iter()
        .map(|line| {
            serde_json::from_str::<Value>(line)
                .unwrap_or_else(|e| panic!("not a JSON line ({e}): {line:?}"))
        })
        .collect();
    for line in &lines {
        for field in ["timestamp", "level", "target"] {
            assert!(line[field].is_string(), "no {field}: {line}");
        }
        assert!(line["fields"]["message"].is_string(), "no message: {line}");
    }
    let said = |level: &str, start: &str| {
        lines.iter().any(|l| {
            l["level"] == level
                && l["fields"]["message"]
                    .as_str()
                    .is_some_and(|m| m.starts_with(start))
        })
    };
    assert!(
        said("WARN", "WARNING: the configured wall is `direct`"),
        "the start's warning as a log line: {:#?}",
        stopped.stderr
    );
    assert!(
        said("WARN", "WARNING: UNPROTECTED"),
        "the session's warning: {:#?}",
        stopped.stderr
    );
    assert!(
        said("INFO", "shutting down"),
        "the shutdown: {:#?}",
        stopped.stderr
    );
}
