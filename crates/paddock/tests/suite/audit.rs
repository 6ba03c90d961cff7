//! `paddock audit list|show` through the real binary on a trail made by real `paddock run`s
//! through the local wall: every filter, keyset paging with `--after` (every row exactly once
//! across pages), and `show` joining a network denial to its call by the row relation (same
//! session, same call id): a second session reusing the call id gets none of the first's
//! denials, which a match on the call id or on the text would have given it.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is a failed test"
)]

use crate::cli_support;

use cli_support::Machine;
use serde_json::{Value, json};
use test_support::model_server::{FakeModelServer, Reply};

const CALL: &str = "toolu_same_id";

impl Machine {
    /// The rows `audit list ARGS --json` prints, and the `--after` cursor it names.
    async fn list(&self, args: &[&str]) -> (Vec<Value>, Option<String>) {
        let mut all = vec!["audit", "list", "--json"];
        all.extend_from_slice(args);
        let (code, stdout, stderr) = self.run(&all).await;
        assert_eq!(code, 0, "{args:?}: {stderr}");
        let rows = stdout
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        let next = stderr
            .lines()
            .find_map(|l| l.strip_prefix("more: add --after "))
            .map(str::to_owned);
        (rows, next)
    }

    async fn show(&self, seq: i64) -> Value {
        let (code, stdout, stderr) = self
            .run(&["audit", "show", &seq.to_string(), "--json"])
            .await;
        assert_eq!(code, 0, "{stderr}");
        serde_json::from_str(stdout.trim()).unwrap()
    }

    /// One `paddock run` whose model makes one `run_bash` call `CALL` of `command`.
    async fn run_call(&self, server: &FakeModelServer, work: &str, command: &str) {
        server.push(Reply::tool_call(
            CALL,
            "run_bash",
            json!({ "command": command }),
        ));
        server.push(Reply::final_text("Done."));
        let (code, stdout, stderr) = self
            .run(&["run", "go", "--folder", work, "--approve-all", "--json"])
            .await;
        assert_eq!(code, 0, "stdout:\n{stdout}\nstderr:\n{stderr}");
    }
}

fn seqs(rows: &[Value]) -> Vec<i64> {
    rows.iter().map(|r| r["seq"].as_i64().unwrap()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn show_joins_a_denial_to_its_call_by_session_and_call_and_list_pages_and_filters() {
    let server = FakeModelServer::start().await.unwrap();
    let machine = Machine::with_model(&server);
    let work = tempfile::tempdir().unwrap();
    let work = work.path().canonicalize().unwrap().display().to_string();
    machine
        .run_call(
            &server,
            &work,
            "curl -sS --max-time 10 https://blocked.example.invalid/ || true",
        )
        .await;
    // Another session, the same call id, no connection: nothing of the first's joins it.
    machine
        .run_call(&server, &work, "echo blocked.example.invalid")
        .await;

    let (denials, _) = machine.list(&["--kind", "network_denial"]).await;
    assert_eq!(denials.len(), 1, "{denials:#?}");
    let denial = &denials[0];
    assert_eq!(denial["record"]["call_id"], CALL);
    let first_session = denial["session_id"].as_str().unwrap().to_owned();

    let (calls, _) = machine
        .list(&[
            "--kind",
            "tool_call",
            "--tool",
            "run_bash",
            "--status",
            "finished",
        ])
        .await;
    assert_eq!(calls.len(), 2, "{calls:#?}");
    assert!(calls.iter().all(|c| c["record"]["call_id"] == CALL));
    for call in &calls {
        let entry = machine.show(call["seq"].as_i64().unwrap()).await;
        assert_eq!(entry["event"], *call);
        assert_eq!(entry["call_id"], CALL);
        let session = call["session_id"].as_str().unwrap();
        let rows = entry["call"].as_array().unwrap();
        assert!(rows.len() >= 2, "started and finished: {entry:#}");
        assert!(
            rows.iter()
                .all(|r| r["session_id"] == session && r["record"]["call_id"] == CALL)
        );
        assert!(
            seqs(rows).windows(2).all(|w| w[0] < w[1]),
            "the call's rows oldest first"
        );
        let joined = entry["denials"].as_array().unwrap();
        if session == first_session {
            assert_eq!(joined.len(), 1, "{entry:#}");
            assert_eq!(joined[0]["seq"], denial["seq"], "the very denial row");
            assert_eq!(
                joined[0]["record"]["denial"]["host"],
                "blocked.example.invalid"
            );
        } else {
            assert!(
                joined.is_empty(),
                "another session's denial was joined: {entry:#}"
            );
        }
    }
    // Showing the denial row joins it back to its call.
    let from_denial = machine.show(denial["seq"].as_i64().unwrap()).await;
    assert_eq!(from_denial["call_id"], CALL);
    assert!(
        from_denial["call"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["session_id"] == first_session.as_str())
    );
    let (code, text, _) = machine
        .run(&["audit", "show", &denial["seq"].to_string()])
        .await;
    assert_eq!(code, 0);
    assert!(text.contains("network denials of this call: 1"), "{text}");

    // Keyset paging: every row exactly once, newest first, across pages of 3.
    let (everything, none) = machine.list(&["--limit", "1000"]).await;
    assert!(
        none.is_none() && everything.len() > 6,
        "{}",
        everything.len()
    );
    let mut paged = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let mut args = vec!["--limit", "3"];
        if let Some(cursor) = &after {
            args.extend(["--after", cursor.as_str()]);
        }
        let (rows, next) = machine.list(&args).await;
        assert!(rows.len() <= 3);
        paged.extend(rows);
        match next {
            Some(next) => after = Some(next),
            None => break,
        }
    }
    assert_eq!(seqs(&paged), seqs(&everything));
    assert!(seqs(&paged).windows(2).all(|w| w[0] > w[1]));
    let (_, text, _) = machine.run(&["audit", "list", "--limit", "2"]).await;
    assert!(text.contains("\nmore: add --after "), "{text}");

    // Filters.
    let (second, _) = machine
        .list(&[
            "--session",
            calls
                .iter()
                .map(|c| c["session_id"].as_str().unwrap())
                .find(|s| *s != first_session)
                .unwrap(),
        ])
        .await;
    assert!(!second.is_empty());
    assert!(
        second
            .iter()
            .all(|r| r["session_id"] != first_session.as_str())
    );
    let (texted, _) = machine.list(&["--text", "BLOCKED.example"]).await;
    assert!(seqs(&texted).contains(&denial["seq"].as_i64().unwrap()));
    let (by_call, _) = machine.list(&["--call", CALL, "--decision", "allow"]).await;
    assert!(!by_call.is_empty());
    assert!(by_call.iter().all(|r| r["record"]["decision"] == "allow"));
    let level = calls[0]["record"]["enforcement"]
        .as_str()
        .unwrap()
        .to_owned();
    let (walled, _) = machine
        .list(&["--enforcement", &level, "--kind", "tool_call"])
        .await;
    assert_eq!(
        walled.len(),
        calls.len() * 2,
        "started and finished of both: {walled:#?}"
    );
    assert!(
        walled
            .iter()
            .all(|r| r["record"]["enforcement"] == level.as_str())
    );
    let newest = everything[0]["time_ms"].as_i64().unwrap();
    let (since, _) = machine.list(&["--since", &newest.to_string()]).await;
    assert!(seqs(&since).contains(&everything[0]["seq"].as_i64().unwrap()));
    let (until, _) = machine.list(&["--until", "2000-01-01"]).await;
    assert!(until.is_empty());
    let (_, text, _) = machine
        .run(&["audit", "list", "--since", "2999-01-01T00:00Z"])
        .await;
    assert_eq!(text, "no rows match\n");

    // Bad input names what was wrong.
    for (args, expected) in [
        (vec!["--kind", "bogus"], "--kind `bogus` is not one of"),
        (
            vec!["--since", "yesterday"],
            "--since `yesterday` is not a time",
        ),
        (vec!["--status", "done"], "--status `done` is not one of"),
    ] {
        let mut all = vec!["audit", "list"];
        all.extend(args);
        let (code, _, stderr) = machine.run(&all).await;
        assert_eq!(code, 1);
        assert!(stderr.contains(expected), "{stderr}");
    }
    let cursor = after.unwrap_or_default();
    let (code, _, stderr) = machine
        .run(&[
            "audit", "list", "--limit", "3", "--kind", "session", "--after", &cursor,
        ])
        .await;
    assert_eq!(code, 1, "a cursor is refused with other filters: {stderr}");
    let (code, _, stderr) = machine.run(&["audit", "show", "999999"]).await;
    assert_eq!(code, 1);
    assert!(stderr.contains("no audit row #999999"), "{stderr}");
}
