//! Reaping on a gateway that two state folders of one machine share (two users, or a test
//! machine beside the real one): each reaps only the sandboxes of its own dead sessions.
//! With the machine's id as the only owner label, a start of the second took the first's
//! live sandbox for an orphan (its lease is in the other state folder) and deleted it
//! under the running session. With `openshell.keep`, sandboxes outlive stops and reaping.

use crate::common;

use std::collections::BTreeMap;

use common::{TestServer, openshell_config, owned_folder, registered_double, temp_dir};
use protocol::EventMsg;
use serde_json::{Value, json};
use test_support::model_server::Reply;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_state_folder_never_reaps_the_first_ones_live_sandbox() {
    let root = temp_dir();
    let double = registered_double(root.path(), |_| {}).await;
    let first = TestServer::start_with_config(&openshell_config("")).await;
    let second = TestServer::start_with_config(&openshell_config("")).await;
    let (_work, work) = owned_folder();

    // The first machine's session builds its sandbox with a call and stays open.
    let bash = |command: &str| json!({ "command": command });
    first.model.push(Reply::tool_call(
        "a1",
        "run_bash",
        bash("echo first > one.txt"),
    ));
    first.model.push(Reply::final_text("done"));
    first
        .model
        .push(Reply::tool_call("a2", "run_bash", bash("cat one.txt")));
    first.model.push(Reply::final_text("still here"));
    let live = first
        .create_session(&[(work.as_path(), "read_write")], "bypass")
        .await;
    let mut events = first.events(&live, 0).await;
    first.send_turn(&live, "write a file").await;
    events
        .until(|m| matches!(m, EventMsg::TurnFinished { .. }))
        .await;
    let sandboxes = double.sandbox_names();
    assert_eq!(sandboxes.len(), 1, "{sandboxes:?}");

    // What a dead process of the second state folder left: a sandbox with its owner label
    // and a session no process holds.
    let owner = paddock_host::wiring::sandbox_owner_label(&second.paths).unwrap();
    double.adopt_foreign_sandbox(
        "paddock-orphan-of-the-second",
        BTreeMap::from([
            ("paddock.machine".to_owned(), owner),
            ("paddock.session".to_owned(), "dead-session".to_owned()),
        ]),
    );
    assert_eq!(double.sandbox_names().len(), 2);

    // The second state folder reaps: its own orphan goes, the first's live sandbox stays.
    let report = second.host.reap_orphans().await;
    assert!(report.skipped.is_empty(), "{:?}", report.skipped);
    assert_eq!(
        report.reaped,
        ["paddock-orphan-of-the-second"],
        "{:?}",
        report.reaped
    );
    assert_eq!(
        double.sandbox_names(),
        sandboxes,
        "only the second folder's orphan was reaped"
    );
    let labels = double.labels(&sandboxes[0]).unwrap();
    assert!(
        labels["paddock.machine"].len() > 33,
        "the owner label names the state folder too: {labels:?}"
    );

    // And the first machine's session goes on in the same sandbox.
    first.send_turn(&live, "read it back").await;
    let seen = events
        .until(|m| matches!(m, EventMsg::TurnFinished { .. }))
        .await;
    let results = common::tool_results(&first.model.requests()[3].body);
    assert!(results.iter().any(|r| r.contains("first")), "{results:?}");
    assert!(
        !serde_json::to_string(&seen)
            .unwrap()
            .contains("sandbox_refused"),
        "{seen:?}"
    );
    let _: Value = first
        .call(
            first.post(&format!("/v1/sessions/{live}/close"), &Value::Null),
            200,
        )
        .await;
    second.stop().await;
    first.stop().await;
}

/// `openshell.keep = true`: a stop leaves the session's sandbox running (labelled kept), a
/// restart's reaping leaves it alone, and the resumed session's next call runs in it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kept_sandbox_outlives_a_stop_and_reaping_and_the_session_reuses_it() {
    let root = temp_dir();
    let double = registered_double(root.path(), |_| {}).await;
    let server = TestServer::start_with_config(&openshell_config("")).await;
    std::fs::write(
        server.paths.config_file(),
        format!(
            "{}keep = true\n",
            std::fs::read_to_string(server.paths.config_file()).unwrap()
        ),
    )
    .unwrap();
    let (root_dir, paths, model) = server.stop().await;
    let server = TestServer::open(root_dir, paths, model).await;
    let (_work, work) = owned_folder();
    let bash = |command: &str| json!({ "command": command });
    server.model.push(Reply::tool_call(
        "k1",
        "run_bash",
        bash("echo kept > k.txt"),
    ));
    server.model.push(Reply::final_text("done"));
    let session = server
        .create_session(&[(work.as_path(), "read_write")], "bypass")
        .await;
    let mut events = server.events(&session, 0).await;
    server.send_turn(&session, "write").await;
    events
        .until(|m| matches!(m, EventMsg::TurnFinished { .. }))
        .await;
    let sandboxes = double.sandbox_names();
    assert_eq!(sandboxes.len(), 1, "{sandboxes:?}");
    let id = double.sandbox_id(&sandboxes[0]);

    let (root_dir, paths, model) = server.stop().await;
    assert_eq!(double.sandbox_names(), sandboxes, "the stop kept it");
    assert_eq!(
        double
            .labels(&sandboxes[0])
            .unwrap()
            .get("paddock.keep")
            .map(String::as_str),
        Some("true")
    );
    let server = TestServer::open(root_dir, paths, model).await;
    let report = server.host.reap_orphans().await;
    assert!(
        report.reaped.iter().all(|r| !r.contains(&sandboxes[0])),
        "{:?}",
        report.reaped
    );
    assert_eq!(double.sandbox_names(), sandboxes, "reaping kept it");

    let _: Value = server
        .call(
            server.post(&format!("/v1/sessions/{session}/resume"), &json!({})),
            200,
        )
        .await;
    server
        .model
        .push(Reply::tool_call("k2", "run_bash", bash("cat k.txt")));
    server.model.push(Reply::final_text("read"));
    let after = server.host.last_event_seq(&session).await.unwrap();
    let mut events = server.events(&session, after).await;
    server.send_turn(&session, "read").await;
    events
        .until(|m| matches!(m, EventMsg::TurnFinished { .. }))
        .await;
    assert_eq!(
        double.sandbox_id(&sandboxes[0]),
        id,
        "the same sandbox ran it"
    );
    let results = common::tool_results(&server.model.requests().last().unwrap().body);
    assert!(results.iter().any(|r| r.contains("kept")), "{results:?}");
    server.stop().await;
}
