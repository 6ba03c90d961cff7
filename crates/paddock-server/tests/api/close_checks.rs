//! What a sandbox leaves behind is checked when it closes, and the check reaches the audit
//! trail: a set-uid or set-gid file in a read-write folder at a wall's close (the session's
//! close, or a rebuild for a grant change) is stripped, and a `sandbox_closed` row names it.
//!
//! Inside the wall the command's own `chmod u+s` is refused (the seccomp filter); the set-id
//! bits the close finds are set from the host, standing for a kernel path the filter missed or
//! a file placed from outside while the session ran.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is a failed test"
)]

use crate::common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use common::{TestServer, temp_dir, tool_results};
use protocol::{CanaryResult, Event, EventMsg};
use serde_json::{Value, json};
use test_support::model_server::Reply;

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

fn set_mode(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn closed_checks(events: &[Event]) -> Vec<CanaryResult> {
    events
        .iter()
        .find_map(|e| match &e.msg {
            EventMsg::SandboxClosed { checks, .. } => Some(checks.clone()),
            _ => None,
        })
        .expect("a sandbox_closed event")
}

fn set_id_check(checks: &[CanaryResult]) -> &CanaryResult {
    checks
        .iter()
        .find(|c| c.name == "set_id_files_stripped")
        .expect("the set-id sweep ran at close")
}

/// The session's `sandbox_closed` audit rows, oldest first.
async fn closed_rows(server: &TestServer, session: &str) -> Vec<Value> {
    let rows = server
        .call(
            server.get(&format!(
                "/v1/audit?session={session}&kind=generic&limit=500"
            )),
            200,
        )
        .await;
    let mut rows: Vec<Value> = rows["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["record"]["name"] == "sandbox_closed")
        .cloned()
        .collect();
    rows.sort_by_key(|r| r["seq"].as_u64());
    rows
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn set_id_files_left_in_a_grant_are_stripped_at_close_and_audited() {
    let server = TestServer::start().await;
    let work = temp_dir();
    let extra = temp_dir();
    let (work_path, extra_path) = (
        work.path().canonicalize().unwrap(),
        extra.path().canonicalize().unwrap(),
    );
    let planted = work_path.join("x");
    let nested = work_path.join("deep").join("y");
    // The attack from inside: a copy of a shell, made set-uid now and again by a background
    // process after the call has returned.
    let attack = format!(
        "cd {work} && cp /bin/sh x && mkdir -p deep && cp /bin/sh deep/y; \
         chmod u+s x; echo \"chmod=$?\"; \
         (sleep 1; chmod u+s x; chmod g+s deep/y) >/dev/null 2>&1 &",
        work = work_path.display()
    );
    server.model.push(Reply::tool_call(
        "plant",
        "run_bash",
        json!({"command": attack}),
    ));
    server.model.push(Reply::final_text("planted"));
    let session = server
        .create_session(&[(&work_path, "read_write")], "bypass")
        .await;
    let mut events = server.events(&session, 0).await;
    server.send_turn(&session, "plant").await;
    events
        .until(|m| matches!(m, EventMsg::TurnFinished { .. }))
        .await;
    let results = tool_results(&server.model.requests()[1].body);
    assert!(
        results[0].contains("chmod=1"),
        "the wall refuses chmod u+s: {results:?}"
    );
    assert_eq!(mode(&planted) & 0o6000, 0, "no set-id bit from inside");

    // Set from outside while the session runs: the rebuild for a grant change finds it.
    set_mode(&planted, 0o4755);
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
    let check = set_id_check(&closed_checks(&rebuilt)).clone();
    assert!(check.passed, "{check:?}");
    assert!(
        check
            .detail
            .contains(&format!("{} (was 4755)", planted.display())),
        "{check:?}"
    );
    assert_eq!(mode(&planted), 0o755, "stripped at the rebuild");

    // And again, two of them, before the session closes.
    set_mode(&planted, 0o6755);
    set_mode(&nested, 0o2755);
    let closed = server
        .call(
            server.post(&format!("/v1/sessions/{session}/close"), &Value::Null),
            200,
        )
        .await;
    assert_eq!(closed["state"], "stored", "{closed}");
    assert_eq!(mode(&planted), 0o755, "stripped at close");
    assert_eq!(mode(&nested), 0o755, "stripped at close");
    let at_close = events.until(|m| matches!(m, EventMsg::SessionClosed)).await;
    let check = set_id_check(&closed_checks(&at_close)).clone();
    assert!(check.passed, "{check:?}");
    for (path, was) in [(&planted, "6755"), (&nested, "2755")] {
        assert!(
            check
                .detail
                .contains(&format!("{} (was {was})", path.display())),
            "{check:?}"
        );
    }

    // Both closes are in the audit trail, before the session's end, and the chain verifies.
    let rows = closed_rows(&server, &session).await;
    assert_eq!(rows.len(), 2, "{rows:#?}");
    let details: Vec<String> = rows
        .iter()
        .map(|r| r["record"]["data"]["checks"][0]["detail"].to_string())
        .collect();
    assert!(details[0].contains("was 4755"), "{details:?}");
    assert!(
        details[1].contains("was 6755") && details[1].contains("was 2755"),
        "{details:?}"
    );
    let ended = server
        .call(
            server.get(&format!("/v1/audit?session={session}&kind=session")),
            200,
        )
        .await;
    let end_id = ended["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["record"]["event"] == "ended")
        .map(|r| r["seq"].as_u64().unwrap())
        .expect("the session's end is audited");
    assert!(rows[1]["seq"].as_u64().unwrap() < end_id);
    let verify = server.call(server.get("/v1/audit/verify"), 200).await;
    assert_eq!(verify["first_broken"], Value::Null, "{verify}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clean_close_is_audited_as_clean() {
    let server = TestServer::start().await;
    let work = temp_dir();
    let work_path = work.path().canonicalize().unwrap();
    server.model.push(Reply::tool_call(
        "t",
        "run_bash",
        json!({"command": "echo hi > plain"}),
    ));
    server.model.push(Reply::final_text("ok"));
    let session = server
        .create_session(&[(&work_path, "read_write")], "bypass")
        .await;
    let mut events = server.events(&session, 0).await;
    server.send_turn(&session, "write").await;
    events
        .until(|m| matches!(m, EventMsg::TurnFinished { .. }))
        .await;
    server
        .call(
            server.post(&format!("/v1/sessions/{session}/close"), &Value::Null),
            200,
        )
        .await;
    let at_close = events.until(|m| matches!(m, EventMsg::SessionClosed)).await;
    let check = set_id_check(&closed_checks(&at_close)).clone();
    assert!(check.passed, "{check:?}");
    assert_eq!(
        check.detail,
        "no set-uid or set-gid file in the read-write folders"
    );
    assert_eq!(closed_rows(&server, &session).await.len(), 1);
    server.stop().await;
}
