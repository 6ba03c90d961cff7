//! The audit query's filters over HTTP, each against rows written by real sessions: a local
//! wall session whose calls were approved and denied (one of them `web_fetch`, a host tool),
//! and a `direct` one. `decision`, `enforcement` and the time range (`since_ms` inclusive,
//! `until_ms` exclusive) return exactly the rows that match, checked against the whole trail;
//! keyset paging (`limit` + `cursor`) walks every row once, newest first; a cursor is refused
//! with other filters, and an empty range is refused.

use std::collections::BTreeSet;

use crate::common;

use common::{Events, TestServer};
use protocol::EventMsg;
use serde_json::{Value, json};
use test_support::model_server::{Reply, sse};

fn now_ms() -> i64 {
    i64::try_from(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis(),
    )
    .unwrap()
}

/// Runs one turn, answering each approval as `answer(call_id)` says.
async fn turn(
    server: &TestServer,
    events: &mut Events,
    session: &str,
    text: &str,
    answer: impl Fn(&str) -> Value,
) {
    server.send_turn(session, text).await;
    loop {
        let event = events.next().await.expect("the socket stayed open");
        match &event.msg {
            EventMsg::ToolCallAwaitingApproval { call_id, .. } => {
                server
                    .call(
                        server.post(
                            &format!("/v1/sessions/{session}/approvals/{call_id}"),
                            &json!({"decision": answer(call_id)}),
                        ),
                        204,
                    )
                    .await;
            }
            EventMsg::TurnFinished { .. } => return,
            _ => {}
        }
    }
}

async fn rows(server: &TestServer, query: &str) -> Vec<Value> {
    let page = server
        .call(server.get(&format!("/v1/audit?limit=1000&{query}")), 200)
        .await;
    assert_eq!(page["next"], Value::Null, "one page holds them: {page}");
    page["events"].as_array().unwrap().clone()
}

fn seqs(rows: &[Value]) -> Vec<i64> {
    rows.iter().map(|r| r["seq"].as_i64().unwrap()).collect()
}

/// The call ids and statuses of tool-call rows.
fn calls(rows: &[Value]) -> BTreeSet<(String, String)> {
    rows.iter()
        .filter(|r| r["record"]["type"] == "tool_call")
        .map(|r| {
            (
                r["record"]["call_id"].as_str().unwrap().to_owned(),
                r["record"]["status"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn set(items: &[(&str, &str)]) -> BTreeSet<(String, String)> {
    items
        .iter()
        .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
        .collect()
}

/// Walks `query` page by page (`limit` rows each); returns every page's rows.
async fn walk(server: &TestServer, query: &str, limit: usize) -> Vec<Vec<Value>> {
    let mut pages = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut path = format!("/v1/audit?limit={limit}&{query}");
        if let Some(cursor) = &cursor {
            path.push_str(&format!("&cursor={cursor}"));
        }
        let page = server.call(server.get(&path), 200).await;
        pages.push(page["events"].as_array().unwrap().clone());
        match page["next"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => return pages,
        }
        assert!(pages.len() < 1000, "paging never ended");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn decision_enforcement_time_range_and_paging_select_exactly_their_rows() {
    let server = TestServer::start().await;
    let work = common::temp_dir();
    let folder = work.path().canonicalize().unwrap();

    // Session A on the local wall, asking: one write approved, a write and a fetch (a host
    // tool) denied; a later command allowed by a rule (no question).
    let a_marker = "audit a";
    server.model.push_for(
        a_marker,
        Reply::stream(vec![
            sse::tool_use(
                "a_ok",
                "write_file",
                json!({"path": folder.join("kept.txt"), "content": "kept\n"}),
            ),
            sse::tool_use(
                "a_no",
                "write_file",
                json!({"path": folder.join("refused.txt"), "content": "refused\n"}),
            ),
            sse::tool_use("a_web", "web_fetch", json!({"url": "https://example.com/"})),
            sse::stop("tool_use"),
        ]),
    );
    server
        .model
        .push_for(a_marker, Reply::final_text("first done"));
    server.model.push_for(
        a_marker,
        Reply::tool_call("b_ok", "run_bash", json!({"command": "echo later"})),
    );
    server
        .model
        .push_for(a_marker, Reply::final_text("second done"));
    let a = server
        .create_session(&[(&folder, "read_write")], "ask")
        .await;
    let mut a_events = server.events(&a, 0).await;
    turn(&server, &mut a_events, &a, a_marker, |call| match call {
        "a_ok" => json!({"type": "approve", "scope": "once"}),
        _ => json!({"type": "deny", "reason": "not this one"}),
    })
    .await;

    // A time between the first turn's rows and everything after.
    let first_turn = rows(&server, "").await;
    let last_early = first_turn
        .iter()
        .map(|r| r["time_ms"].as_i64().unwrap())
        .max()
        .unwrap();
    while now_ms() <= last_early {
        tokio::time::sleep(std::time::Duration::from_millis(2)).await;
    }
    let pivot = now_ms();

    turn(
        &server,
        &mut a_events,
        &a,
        "audit a again",
        |_| json!({"type": "approve", "scope": "once"}),
    )
    .await;
    // Session B with no wall at all.
    let b_marker = "audit b";
    server.model.push_for(
        b_marker,
        Reply::tool_call("c_ok", "run_bash", json!({"command": "echo direct"})),
    );
    server
        .model
        .push_for(b_marker, Reply::final_text("direct done"));
    let b = server
        .call(
            server.post(
                "/v1/sessions",
                &json!({"folders": [{"path": folder, "access": "read_write"}],
                        "approval_mode": "bypass", "provider": "direct"}),
            ),
            201,
        )
        .await;
    let b = b["id"].as_str().unwrap().to_owned();
    let mut b_events = server.events(&b, 0).await;
    turn(&server, &mut b_events, &b, b_marker, |_| json!(null)).await;

    let all = rows(&server, "").await;
    assert!(all.len() > 12, "{all:#?}");
    assert!(folder.join("kept.txt").exists() && !folder.join("refused.txt").exists());

    // decision: the denied calls' rows and nothing else; allow: every other call row.
    let denied = rows(&server, "decision=deny").await;
    assert_eq!(
        calls(&denied),
        set(&[("a_no", "denied"), ("a_web", "denied")])
    );
    assert_eq!(denied.len(), 2, "{denied:#?}");
    let allowed = rows(&server, "decision=allow").await;
    assert_eq!(
        calls(&allowed),
        set(&[
            ("a_ok", "started"),
            ("a_ok", "finished"),
            ("b_ok", "started"),
            ("b_ok", "finished"),
            ("c_ok", "started"),
            ("c_ok", "finished"),
        ])
    );
    assert_eq!(allowed.len(), 6, "only tool-call rows carry a decision");

    // enforcement: the wall that ran (or would have run) each call; attestations count too.
    let host = rows(&server, "enforcement=host").await;
    assert_eq!(calls(&host), set(&[("a_web", "denied")]));
    assert_eq!(host.len(), 1);
    assert_eq!(host[0]["record"]["connector"], "web_fetch");
    let none = rows(&server, "enforcement=none").await;
    assert!(
        none.iter().all(|r| r["session_id"] == b.as_str()),
        "{none:#?}"
    );
    assert_eq!(
        calls(&none),
        set(&[("c_ok", "started"), ("c_ok", "finished")])
    );
    let local = rows(&server, "enforcement=local").await;
    assert!(local.iter().all(|r| r["session_id"] == a.as_str()));
    assert_eq!(
        calls(&local),
        set(&[
            ("a_ok", "started"),
            ("a_ok", "finished"),
            ("a_no", "denied"),
            ("b_ok", "started"),
            ("b_ok", "finished"),
        ])
    );
    assert!(
        local.iter().any(|r| r["record"]["type"] == "attestation"),
        "the local wall's attestation row: {local:#?}"
    );
    let combined = rows(
        &server,
        &format!("enforcement=local&decision=deny&session={a}"),
    )
    .await;
    assert_eq!(calls(&combined), set(&[("a_no", "denied")]));
    assert_eq!(combined.len(), 1);

    // The time range, against the rows' own times: since is inclusive, until exclusive.
    let expected = |keep: &dyn Fn(i64) -> bool| -> Vec<i64> {
        all.iter()
            .filter(|r| keep(r["time_ms"].as_i64().unwrap()))
            .map(|r| r["seq"].as_i64().unwrap())
            .collect()
    };
    let since = rows(&server, &format!("since_ms={pivot}")).await;
    assert_eq!(seqs(&since), expected(&|t| t >= pivot));
    assert!(calls(&since).contains(&("b_ok".to_owned(), "finished".to_owned())));
    assert!(calls(&since).contains(&("c_ok".to_owned(), "finished".to_owned())));
    assert!(!calls(&since).iter().any(|(call, _)| call.starts_with("a_")));
    let until = rows(&server, &format!("until_ms={pivot}")).await;
    assert_eq!(seqs(&until), expected(&|t| t < pivot));
    assert_eq!(since.len() + until.len(), all.len());
    assert_eq!(calls(&until).len(), 4, "{until:#?}");
    let first_row_time = all.last().unwrap()["time_ms"].as_i64().unwrap();
    let exact = rows(
        &server,
        &format!("since_ms={first_row_time}&until_ms={}", first_row_time + 1),
    )
    .await;
    assert_eq!(seqs(&exact), expected(&|t| t == first_row_time));
    assert!(exact.iter().any(|r| r["seq"] == all.last().unwrap()["seq"]));
    let refused = server
        .call(
            server.get(&format!(
                "/v1/audit?since_ms={pivot}&until_ms={}",
                pivot - 1
            )),
            400,
        )
        .await;
    assert_eq!(refused["code"], "invalid_request", "{refused}");

    // Keyset paging: every row exactly once, newest first, full pages until the last.
    for (query, limit) in [
        ("", 3),
        (&*format!("session={a}"), 2),
        ("decision=allow", 4),
    ] {
        let pages = walk(&server, query, limit).await;
        let walked: Vec<i64> = pages.iter().flat_map(|p| seqs(p)).collect();
        assert_eq!(walked, seqs(&rows(&server, query).await), "{query}");
        let unique: BTreeSet<i64> = walked.iter().copied().collect();
        assert_eq!(unique.len(), walked.len(), "{query}: a row came twice");
        assert!(
            walked.windows(2).all(|w| w[0] > w[1]),
            "{query}: newest first"
        );
        let (last, full) = pages.split_last().unwrap();
        assert!(full.iter().all(|p| p.len() == limit), "{query}");
        assert!(!last.is_empty() && last.len() <= limit, "{query}");
        assert!(pages.len() >= 2, "{query}: more than one page");
    }
    // A cursor belongs to its filters.
    let first = server.call(server.get("/v1/audit?limit=2"), 200).await;
    let cursor = first["next"].as_str().unwrap();
    let foreign = server
        .call(
            server.get(&format!("/v1/audit?limit=2&decision=deny&cursor={cursor}")),
            400,
        )
        .await;
    assert_eq!(foreign["code"], "invalid_request", "{foreign}");
}
