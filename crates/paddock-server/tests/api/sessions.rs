//! Whole sessions through the API over real TCP: the fake model server asks for tool calls,
//! the real tool-runner runs them inside the real local wall, approvals come through the
//! inbox, and the audit trail is read and verified through the API.

#![allow(clippy::unwrap_used, reason = "test code: a panic is a failed test")]

use crate::common;

use common::{TestServer, temp_dir, tool_results};
use protocol::{EnforcementLevel, EventMsg, ToolCallStatus, TurnStopReason};
use serde_json::{Value, json};
use test_support::model_server::{Reply, sse};

fn finished_calls(events: &[protocol::Event]) -> Vec<(String, ToolCallStatus, EnforcementLevel)> {
    events
        .iter()
        .filter_map(|e| match &e.msg {
            EventMsg::ToolCallFinished {
                call_id,
                status,
                enforcement,
                ..
            } => Some((call_id.clone(), *status, *enforcement)),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_whole_session_with_a_rw_and_a_ro_folder_runs_through_the_api() {
    let server = TestServer::start().await;
    let work = temp_dir();
    let docs = temp_dir();
    let (work_path, docs_path) = (
        work.path().canonicalize().unwrap(),
        docs.path().canonicalize().unwrap(),
    );
    std::fs::write(docs_path.join("README.md"), "reference text\n").unwrap();
    let target = work_path.join("notes.txt");
    let forbidden = docs_path.join("scribble.txt");
    server.model.push(Reply::stream([
        sse::text("Reading the docs."),
        sse::tool_use(
            "toolu_read",
            "read_file",
            json!({"path": docs_path.join("README.md")}),
        ),
        sse::stop("tool_use"),
    ]));
    server.model.push(Reply::tool_call(
        "toolu_write",
        "write_file",
        json!({"path": target, "content": "written through the wall\n"}),
    ));
    server.model.push(Reply::tool_call(
        "toolu_ro",
        "write_file",
        json!({"path": forbidden, "content": "must not land\n"}),
    ));
    server
        .model
        .push(Reply::stream([sse::text("Done."), sse::stop("end_turn")]));

    let session = server
        .create_session(
            &[(&work_path, "read_write"), (&docs_path, "read_only")],
            "ask",
        )
        .await;
    let mut events = server.events(&session, 0).await;
    let created = events.next().await.unwrap();
    assert!(matches!(
        created.msg,
        EventMsg::SessionCreated { resumed: false, .. }
    ));
    server.send_turn(&session, "take notes").await;

    // The write asks; the inbox lists it; the first answer wins.
    let asked = events
        .until(|m| matches!(m, EventMsg::ToolCallAwaitingApproval { .. }))
        .await;
    assert!(
        asked.iter().any(|e| matches!(&e.msg, EventMsg::ToolCallFinished { call_id, .. } if call_id == "toolu_read")),
        "the read ran without asking"
    );
    let inbox = server.call(server.get("/v1/approvals"), 200).await;
    assert_eq!(inbox.as_array().unwrap().len(), 1, "{inbox}");
    assert_eq!(inbox[0]["session_id"], session.as_str());
    assert_eq!(inbox[0]["call_id"], "toolu_write");
    let decide = json!({"decision": {"type": "approve", "scope": "once"}});
    let answer = format!("/v1/sessions/{session}/approvals/toolu_write");
    server.call(server.post(&answer, &decide), 204).await;
    let second = server.call(server.post(&answer, &decide), 409).await;
    assert_eq!(second["code"], "approval_not_pending");

    // The write into the read-only folder asks too; approved, the wall still refuses it.
    let mut seen = events
        .until(|m| matches!(m, EventMsg::ToolCallAwaitingApproval { call_id, .. } if call_id == "toolu_ro"))
        .await;
    server
        .call(
            server.post(
                &format!("/v1/sessions/{session}/approvals/toolu_ro"),
                &decide,
            ),
            204,
        )
        .await;
    seen.extend(
        events
            .until(|m| matches!(m, EventMsg::TurnFinished { .. }))
            .await,
    );
    let rest = seen;
    assert!(matches!(
        rest.last().unwrap().msg,
        EventMsg::TurnFinished {
            stop_reason: TurnStopReason::EndTurn,
            ..
        }
    ));
    assert_eq!(
        std::fs::read_to_string(&target).unwrap(),
        "written through the wall\n"
    );
    assert!(!forbidden.exists(), "the read-only folder took a write");
    let calls = finished_calls(&rest);
    assert_eq!(
        calls,
        [
            (
                "toolu_write".into(),
                ToolCallStatus::Ok,
                EnforcementLevel::Local
            ),
            (
                "toolu_ro".into(),
                ToolCallStatus::Error,
                EnforcementLevel::Local
            ),
        ]
    );
    let results = tool_results(&server.model.requests()[3].body);
    assert!(results[0].contains("reference text"), "{results:?}");

    // The audit trail, through the API.
    let rows = server
        .call(
            server.get(&format!(
                "/v1/audit?session={session}&kind=tool_call&status=finished"
            )),
            200,
        )
        .await;
    let finished: Vec<&Value> = rows["events"].as_array().unwrap().iter().collect();
    assert_eq!(finished.len(), 2, "{rows}");
    assert!(
        finished
            .iter()
            .all(|r| r["record"]["enforcement"] == "local")
    );
    let writes = server
        .call(
            server.get(&format!(
                "/v1/audit?session={session}&tool=write_file&status=finished"
            )),
            200,
        )
        .await;
    assert_eq!(writes["events"][0]["record"]["call_id"], "toolu_write");
    assert_eq!(writes["events"][0]["record"]["decided_by"]["kind"], "user");
    // One row with its call's rows joined (same session, same call id).
    let seq = writes["events"][0]["seq"].as_i64().unwrap();
    let entry = server
        .call(server.get(&format!("/v1/audit/{seq}")), 200)
        .await;
    assert_eq!(entry["event"], writes["events"][0]);
    assert_eq!(entry["call_id"], "toolu_write");
    let call_rows = entry["call"].as_array().unwrap();
    assert!(call_rows.len() >= 2, "{entry}");
    assert!(call_rows.iter().all(|r| r["record"]["call_id"] == "toolu_write"
        && r["session_id"] == session.as_str()));
    assert_eq!(entry["denials"], Value::Array(Vec::new()));
    let missing = server.call(server.get("/v1/audit/999999"), 404).await;
    assert_eq!(missing["code"], "audit_row_not_found");
    let verify = server.call(server.get("/v1/audit/verify"), 200).await;
    assert_eq!(verify["first_broken"], Value::Null, "{verify}");
    assert!(verify["rows"].as_u64().unwrap() > 8);
    let bad = server
        .call(server.get("/v1/audit?kind=nonsense"), 400)
        .await;
    assert_eq!(bad["code"], "invalid_query");

    let exported = server
        .get(&format!("/v1/audit/export?session={session}&format=jsonl"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(exported.lines().count() >= 8, "{exported}");
    let closed = server
        .call(
            server.post(&format!("/v1/sessions/{session}/close"), &Value::Null),
            200,
        )
        .await;
    assert_eq!(closed["state"], "stored");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_folder_granted_to_a_live_session_rebuilds_the_wall_and_is_usable() {
    let server = TestServer::start().await;
    let work = temp_dir();
    let extra = temp_dir();
    let (work_path, extra_path) = (
        work.path().canonicalize().unwrap(),
        extra.path().canonicalize().unwrap(),
    );
    std::fs::write(extra_path.join("data.txt"), "from the granted folder\n").unwrap();
    let data = extra_path.join("data.txt");
    server
        .model
        .push(Reply::tool_call("t1", "list_directory", json!({})));
    server.model.push(Reply::final_text("ok"));
    server
        .model
        .push(Reply::tool_call("t2", "read_file", json!({"path": data})));
    server.model.push(Reply::final_text("read it"));

    let session = server
        .create_session(&[(&work_path, "read_write")], "ask")
        .await;
    let mut events = server.events(&session, 0).await;
    server.send_turn(&session, "look around").await;
    events
        .until(|m| matches!(m, EventMsg::TurnFinished { .. }))
        .await;

    let grant = json!({"path": extra_path, "access": "read_only"});
    server
        .call(
            server.post(&format!("/v1/sessions/{session}/folders"), &grant),
            202,
        )
        .await;
    let rebuilt = events
        .until(|m| matches!(m, EventMsg::SandboxRecreated { .. }))
        .await;
    assert!(rebuilt.iter().any(|e| matches!(&e.msg, EventMsg::FolderGranted { grant } if grant.path == extra_path.to_str().unwrap())));
    let info = server
        .call(server.get(&format!("/v1/sessions/{session}")), 200)
        .await;
    assert_eq!(info["folders"].as_array().unwrap().len(), 2, "{info}");

    server.send_turn(&session, "read the new folder").await;
    let turn = events
        .until(|m| matches!(m, EventMsg::TurnFinished { .. }))
        .await;
    assert_eq!(
        finished_calls(&turn),
        [("t2".into(), ToolCallStatus::Ok, EnforcementLevel::Local)]
    );
    let results = tool_results(&server.model.requests()[3].body);
    assert!(
        results.last().unwrap().contains("from the granted folder"),
        "{results:?}"
    );
    let told = server.model.requests()[2].body["messages"].to_string();
    assert!(
        told.contains("The sandbox was rebuilt because"),
        "the agent is told: {told}"
    );
    let missing = server
        .call(
            server.post(
                &format!("/v1/sessions/{session}/folders"),
                &json!({"path": "/nonexistent/folder", "access": "read_write"}),
            ),
            400,
        )
        .await;
    assert_eq!(missing["code"], "invalid_request");
    assert!(
        missing["message"]
            .as_str()
            .unwrap()
            .contains("does not exist")
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_denied_host_allowed_for_the_session_passes_the_wall_next_time() {
    let server = TestServer::start().await;
    let work = temp_dir();
    let work_path = work.path().canonicalize().unwrap();
    let curl =
        json!({"command": "curl -sS --max-time 10 https://blocked.example.invalid/ 2>&1 || true"});
    for id in ["n1", "n2"] {
        server
            .model
            .push(Reply::tool_call(id, "run_bash", curl.clone()));
        server.model.push(Reply::final_text("ok"));
    }
    let session = server
        .create_session(&[(&work_path, "read_write")], "bypass")
        .await;
    let mut events = server.events(&session, 0).await;
    server.send_turn(&session, "fetch").await;
    let first = events
        .until(|m| matches!(m, EventMsg::TurnFinished { .. }))
        .await;
    let denials = first
        .iter()
        .find_map(|e| match &e.msg {
            EventMsg::ToolCallFinished {
                network_denials, ..
            } => Some(network_denials.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(denials.len(), 1, "{denials:?}");
    assert_eq!(denials[0].host, "blocked.example.invalid");
    let listed = server
        .call(
            server.get(&format!("/v1/sessions/{session}/network/denials")),
            200,
        )
        .await;
    assert_eq!(listed[0]["denial"]["host"], "blocked.example.invalid");
    assert_eq!(listed[0]["call_id"], "n1");

    let allow = json!({"host": "blocked.example.invalid", "scope": "session"});
    server
        .call(
            server.post(&format!("/v1/sessions/{session}/network/allow"), &allow),
            202,
        )
        .await;
    let allowed = events
        .until(|m| matches!(m, EventMsg::SandboxRecreated { .. }))
        .await;
    assert!(allowed.iter().any(|e| matches!(&e.msg, EventMsg::HostAllowed { host, live: false } if host == "blocked.example.invalid")));

    server.send_turn(&session, "fetch again").await;
    let second = events
        .until(|m| matches!(m, EventMsg::TurnFinished { .. }))
        .await;
    let (denials, output) = second
        .iter()
        .find_map(|e| match &e.msg {
            EventMsg::ToolCallFinished {
                network_denials,
                output,
                ..
            } => Some((network_denials.clone(), output.clone())),
            _ => None,
        })
        .unwrap();
    assert!(denials.is_empty(), "allowed now: {denials:?}");
    // Past the policy, the proxy tried to resolve the (unresolvable) name: a 502, not a 403.
    assert!(output.contains("response 502"), "{output}");
    let first_output = first
        .iter()
        .find_map(|e| match &e.msg {
            EventMsg::ToolCallFinished { output, .. } => Some(output.clone()),
            _ => None,
        })
        .unwrap();
    assert!(first_output.contains("response 403"), "{first_output}");

    let bad = server
        .call(
            server.post(
                &format!("/v1/sessions/{session}/network/allow"),
                &json!({"host": "https://x.example/", "scope": "session"}),
            ),
            400,
        )
        .await;
    assert_eq!(bad["code"], "invalid_request");
    let rules = server
        .call(
            server.get(&format!("/v1/sessions/{session}/network/rules")),
            409,
        )
        .await;
    assert_eq!(
        rules["code"], "unsupported",
        "the local wall drafts no rules"
    );
    server.stop().await;
}
