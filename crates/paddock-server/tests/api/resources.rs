//! The API's smaller resources, each through real TCP with the local wall and the fake
//! model server: the inbox across sessions and standing approvals (list, revoke, and the
//! call asking again), interrupt, revoking a folder from a live session, allowing a host on
//! the machine (written to `config.toml`), and the OCSF export.

use crate::common;

use common::{TestServer, temp_dir, tool_results};
use protocol::{EventMsg, ToolCallStatus, TurnStopReason};
use serde_json::{Value, json};
use test_support::model_server::Reply;

fn write(id: &str, path: &std::path::Path) -> Reply {
    Reply::tool_call(id, "write_file", json!({"path": path, "content": "x\n"}))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_inbox_spans_sessions_and_standing_approvals_are_listed_and_revoked() {
    let server = TestServer::start().await;
    let (a, b) = (temp_dir(), temp_dir());
    let (a_path, b_path) = (
        a.path().canonicalize().unwrap(),
        b.path().canonicalize().unwrap(),
    );
    let first = server
        .create_session(&[(&a_path, "read_write")], "ask")
        .await;
    let second = server
        .create_session(&[(&b_path, "read_write")], "ask")
        .await;
    // Each session's model asks for a write; the fake answers by the prompt's marker.
    server
        .model
        .push_for("task first", write("w1", &a_path.join("one.txt")));
    server
        .model
        .push_for("task first", Reply::final_text("one"));
    server
        .model
        .push_for("task second", write("w2", &b_path.join("two.txt")));
    server
        .model
        .push_for("task second", Reply::final_text("two"));
    let mut first_events = server.events(&first, 0).await;
    let mut second_events = server.events(&second, 0).await;
    server.send_turn(&first, "task first").await;
    first_events
        .until(|m| matches!(m, EventMsg::ToolCallAwaitingApproval { .. }))
        .await;
    server.send_turn(&second, "task second").await;
    second_events
        .until(|m| matches!(m, EventMsg::ToolCallAwaitingApproval { .. }))
        .await;

    // One inbox, oldest first, each entry naming its session.
    let inbox = server.call(server.get("/v1/approvals"), 200).await;
    let pending: Vec<(&str, &str)> = inbox
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["session_id"].as_str().unwrap(),
                p["call_id"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        pending,
        [(first.as_str(), "w1"), (second.as_str(), "w2")],
        "{inbox}"
    );
    let of_second = server
        .call(server.get(&format!("/v1/sessions/{second}/approvals")), 200)
        .await;
    assert_eq!(of_second.as_array().unwrap().len(), 1, "{of_second}");

    // Answered from the inbox: `always` for the first, `session` for the second.
    for (session, call, scope) in [(&first, "w1", "always"), (&second, "w2", "session")] {
        server
            .call(
                server.post(
                    &format!("/v1/sessions/{session}/approvals/{call}"),
                    &json!({"decision": {"type": "approve", "scope": scope}}),
                ),
                204,
            )
            .await;
    }
    first_events
        .until(|m| matches!(m, EventMsg::TurnFinished { .. }))
        .await;
    second_events
        .until(|m| matches!(m, EventMsg::TurnFinished { .. }))
        .await;
    assert!(a_path.join("one.txt").exists() && b_path.join("two.txt").exists());
    let empty = server.call(server.get("/v1/approvals"), 200).await;
    assert_eq!(empty, json!([]));

    let machine_wide = server.call(server.get("/v1/approvals/standing"), 200).await;
    let always: Vec<&Value> = machine_wide
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["scope"] == "always")
        .collect();
    assert_eq!(always.len(), 1, "{machine_wide}");
    let of_session = server
        .call(
            server.get(&format!("/v1/approvals/standing?session={second}")),
            200,
        )
        .await;
    let session_scoped: Vec<&Value> = of_session
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["scope"] == "session")
        .collect();
    assert_eq!(session_scoped.len(), 1, "{of_session}");

    // Revoked, the always approval is gone and the same write asks again.
    let id = always[0]["id"].as_str().unwrap();
    let revoked = server
        .call(
            server
                .client
                .delete(server.url(&format!("/v1/approvals/standing/{id}")))
                .bearer_auth(&server.token),
            200,
        )
        .await;
    assert_eq!(revoked["id"], id, "{revoked}");
    let after = server.call(server.get("/v1/approvals/standing"), 200).await;
    assert!(
        after.as_array().unwrap().iter().all(|a| a["id"] != id),
        "{after}"
    );
    let unknown = server
        .call(
            server
                .client
                .delete(server.url("/v1/approvals/standing/no-such-approval"))
                .bearer_auth(&server.token),
            400,
        )
        .await;
    assert_eq!(unknown["code"], "invalid_request", "{unknown}");
    server
        .model
        .push_for("task again", write("w3", &a_path.join("one.txt")));
    server
        .model
        .push_for("task again", Reply::final_text("asked"));
    server.send_turn(&first, "task again").await;
    let asked = first_events
        .until(|m| matches!(m, EventMsg::ToolCallAwaitingApproval { .. }))
        .await;
    assert!(matches!(
        &asked.last().unwrap().msg,
        EventMsg::ToolCallAwaitingApproval { call_id, .. } if call_id == "w3"
    ));
    server
        .call(
            server.post(
                &format!("/v1/sessions/{first}/approvals/w3"),
                &json!({"decision": {"type": "deny", "reason": "not again"}}),
            ),
            204,
        )
        .await;
    let denied = first_events
        .until(|m| matches!(m, EventMsg::TurnFinished { .. }))
        .await;
    assert!(denied.iter().any(|e| matches!(&e.msg,
        EventMsg::ToolCallFinished { call_id, status: ToolCallStatus::Denied, .. } if call_id == "w3")));
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interrupt_cancels_the_running_call_and_ends_the_turn() {
    let server = TestServer::start().await;
    let work = temp_dir();
    let work_path = work.path().canonicalize().unwrap();
    server.model.push(Reply::tool_call(
        "long",
        "run_bash",
        json!({"command": "echo started; sleep 600"}),
    ));
    server.model.push(Reply::final_text("after the interrupt"));
    let session = server
        .create_session(&[(&work_path, "read_write")], "bypass")
        .await;
    let mut events = server.events(&session, 0).await;
    server.send_turn(&session, "wait a long time").await;
    events
        .until(|m| matches!(m, EventMsg::ToolCallOutput { call_id, .. } if call_id == "long"))
        .await;
    server
        .call(
            server.post(&format!("/v1/sessions/{session}/interrupt"), &Value::Null),
            202,
        )
        .await;
    let ended = events
        .until(|m| matches!(m, EventMsg::TurnFinished { .. }))
        .await;
    assert!(ended.iter().any(|e| matches!(&e.msg,
        EventMsg::ToolCallFinished { call_id, status: ToolCallStatus::Cancelled, .. } if call_id == "long")), "{ended:#?}");
    assert!(matches!(
        ended.last().unwrap().msg,
        EventMsg::TurnFinished {
            stop_reason: TurnStopReason::Interrupted,
            ..
        }
    ));
    let missing = server
        .call(
            server.post("/v1/sessions/no-such-session/interrupt", &Value::Null),
            404,
        )
        .await;
    assert_eq!(missing["code"], "session_not_found");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_folder_revoked_from_a_live_session_is_gone_from_its_wall() {
    let server = TestServer::start().await;
    let (work, extra) = (temp_dir(), temp_dir());
    let (work_path, extra_path) = (
        work.path().canonicalize().unwrap(),
        extra.path().canonicalize().unwrap(),
    );
    std::fs::write(extra_path.join("data.txt"), "granted once\n").unwrap();
    let read = json!({"path": extra_path.join("data.txt")});
    for id in ["r1", "r2"] {
        server
            .model
            .push(Reply::tool_call(id, "read_file", read.clone()));
        server.model.push(Reply::final_text("ok"));
    }
    let session = server
        .create_session(
            &[(&work_path, "read_write"), (&extra_path, "read_only")],
            "bypass",
        )
        .await;
    let mut events = server.events(&session, 0).await;
    server.send_turn(&session, "read it").await;
    events
        .until(|m| matches!(m, EventMsg::TurnFinished { .. }))
        .await;
    server
        .call(
            server.post(
                &format!("/v1/sessions/{session}/folders/revoke"),
                &json!({"path": extra_path}),
            ),
            202,
        )
        .await;
    let rebuilt = events
        .until(|m| matches!(m, EventMsg::SandboxRecreated { .. }))
        .await;
    assert!(rebuilt.iter().any(|e| matches!(&e.msg,
        EventMsg::FolderRevoked { path } if path == extra_path.to_str().unwrap())));
    let info = server
        .call(server.get(&format!("/v1/sessions/{session}")), 200)
        .await;
    assert_eq!(info["folders"].as_array().unwrap().len(), 1, "{info}");
    server.send_turn(&session, "read it again").await;
    let turn = events
        .until(|m| matches!(m, EventMsg::TurnFinished { .. }))
        .await;
    assert!(turn.iter().any(|e| matches!(&e.msg,
        EventMsg::ToolCallFinished { call_id, status: ToolCallStatus::Error, .. } if call_id == "r2")), "{turn:#?}");
    let results = tool_results(&server.model.requests()[3].body);
    assert!(
        !results.last().unwrap().contains("granted once"),
        "the revoked folder was still readable: {results:?}"
    );
    let unknown = server
        .call(
            server.post(
                &format!("/v1/sessions/{session}/folders/revoke"),
                &json!({"path": "/not/granted"}),
            ),
            400,
        )
        .await;
    assert_eq!(unknown["code"], "invalid_request", "{unknown}");
    assert!(
        unknown["message"]
            .as_str()
            .unwrap()
            .contains("/not/granted"),
        "{unknown}"
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_allowed_on_the_machine_lands_in_the_config_file_with_its_comments() {
    let server =
        TestServer::start_with_config("[sandbox]\n# hosts the team agreed on\nextra_hosts = []\n")
            .await;
    let work = temp_dir();
    let work_path = work.path().canonicalize().unwrap();
    let session = server
        .create_session(&[(&work_path, "read_write")], "bypass")
        .await;
    let mut events = server.events(&session, 0).await;
    server
        .call(
            server.post(
                &format!("/v1/sessions/{session}/network/allow"),
                &json!({"host": "docs.example.org", "scope": "machine"}),
            ),
            202,
        )
        .await;
    let allowed = events
        .until(|m| matches!(m, EventMsg::HostAllowed { .. }))
        .await;
    assert!(matches!(&allowed.last().unwrap().msg,
        EventMsg::HostAllowed { host, .. } if host == "docs.example.org"));
    let file = std::fs::read_to_string(server.paths.config_file()).unwrap();
    assert!(file.contains("# hosts the team agreed on"), "{file}");
    assert!(file.contains("\"docs.example.org\""), "{file}");
    let settings = server.call(server.get("/v1/settings"), 200).await;
    assert!(
        settings["values"]["sandbox.extra_hosts"]
            .to_string()
            .contains("docs.example.org"),
        "{settings}"
    );
    let bad = server
        .call(
            server.post(
                &format!("/v1/sessions/{session}/network/allow"),
                &json!({"host": "not a host", "scope": "machine"}),
            ),
            400,
        )
        .await;
    assert_eq!(bad["code"], "invalid_request", "{bad}");
    let file_after = std::fs::read_to_string(server.paths.config_file()).unwrap();
    assert_eq!(file_after, file, "a refused host changes nothing");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ocsf_export_is_one_ocsf_event_per_line() {
    let server = TestServer::start().await;
    let work = temp_dir();
    let work_path = work.path().canonicalize().unwrap();
    server
        .model
        .push(Reply::tool_call("l1", "list_directory", json!({})));
    server.model.push(Reply::final_text("listed"));
    let session = server
        .create_session(&[(&work_path, "read_write")], "bypass")
        .await;
    let mut events = server.events(&session, 0).await;
    server.send_turn(&session, "list").await;
    events
        .until(|m| matches!(m, EventMsg::TurnFinished { .. }))
        .await;
    let response = server
        .get(&format!("/v1/audit/export?session={session}&format=ocsf"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "application/x-ndjson");
    let body = response.text().await.unwrap();
    let lines: Vec<Value> = body
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(!lines.is_empty(), "{body}");
    let api_activity: Vec<&Value> = lines.iter().filter(|e| e["class_uid"] == 6003).collect();
    assert!(
        api_activity
            .iter()
            .any(|e| e.to_string().contains("list_directory")),
        "{body}"
    );
    assert!(
        lines.iter().all(|e| e["time"].is_number()),
        "every event has its time: {body}"
    );
    let bad = server
        .call(server.get("/v1/audit/export?format=csv"), 400)
        .await;
    assert_eq!(bad["code"], "invalid_query", "{bad}");
    server.stop().await;
}
