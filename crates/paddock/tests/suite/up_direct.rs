//! `paddock up` on a machine whose wall is `direct` (no enforcement) says so loudly: on stderr
//! at start, in the API's machine status, and with every session (created, listed, shown,
//! resumed).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is a failed test"
)]

use crate::up_support;

use serde_json::{Value, json};
use test_support::model_server::FakeModelServer;
use up_support::{Machine, WAIT};

const UNPROTECTED: &str = "UNPROTECTED: the `direct` provider runs the agent's commands";

fn warned(session: &Value) -> bool {
    session["warning"]
        .as_str()
        .is_some_and(|w| w.starts_with("WARNING: ") && w.contains(UNPROTECTED))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn up_on_the_direct_wall_warns_at_start_in_the_status_and_on_every_session() {
    let model = FakeModelServer::start().await.unwrap();
    let machine = Machine::new(&model, "[sandbox]\nprovider = \"direct\"\n");
    let mut up = machine.up("warn").await;

    // Stderr, at start (read as it arrives).
    let mut stderr = Vec::new();
    let said = tokio::time::timeout(WAIT, async {
        loop {
            stderr.extend(up.log_lines());
            if stderr
                .iter()
                .any(|l| l.starts_with("WARNING: the configured wall is `direct`"))
            {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    })
    .await;
    assert!(said.is_ok(), "no warning on stderr: {stderr:?}");

    // The machine status.
    let status = up.get("/v1/machine/sandbox").await;
    assert_eq!(status["provider"], "direct", "{status}");
    assert_eq!(status["enforcement"], "none", "{status}");
    assert!(
        status["checks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["name"] == "wall" && c["detail"].as_str().unwrap().contains(UNPROTECTED)),
        "{status}"
    );

    // Every session, however it is reached.
    let folder = machine.folder("direct");
    let created = up
        .post(
            "/v1/sessions",
            &json!({"folders": [{"path": folder, "access": "read_write"}]}),
            201,
        )
        .await;
    assert!(warned(&created), "{created}");
    assert_eq!(created["enforcement"], "none");
    let id = created["id"].as_str().unwrap().to_owned();
    let second = up
        .post(
            "/v1/sessions",
            &json!({"folders": [{"path": folder, "access": "read_only"}]}),
            201,
        )
        .await;
    assert!(warned(&second), "{second}");
    let listed = up.get("/v1/sessions").await;
    let listed = listed.as_array().unwrap();
    assert_eq!(listed.len(), 2, "{listed:?}");
    assert!(listed.iter().all(warned), "{listed:?}");
    let shown = up.get(&format!("/v1/sessions/{id}")).await;
    assert!(warned(&shown), "{shown}");
    let closed = up
        .post(&format!("/v1/sessions/{id}/close"), &Value::Null, 200)
        .await;
    assert!(
        warned(&closed),
        "a stored direct session still says so: {closed}"
    );
    let resumed = up
        .post(&format!("/v1/sessions/{id}/resume"), &json!({}), 200)
        .await;
    assert!(warned(&resumed), "{resumed}");
    assert_eq!(resumed["state"], "running", "{resumed}");

    let (_, exit) = up.stop().await;
    assert!(exit.success(), "{exit:?}");
}
