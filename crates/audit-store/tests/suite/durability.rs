//! A writer killed with SIGKILL mid-loop loses nothing it reported as committed, and the chain
//! it leaves verifies. The writer is this test binary, re-executed with an environment
//! variable naming its database.

// Test helpers: a panic is a failed test with a line number.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};

use audit_store::{AuditRecord, AuditStore, CallStatus, Durability, NewEvent, OpenOptions, Query};
use common::{attestation, tool_call};
use protocol::EnforcementLevel::Local;

const CHILD_DB: &str = "PADDOCK_AUDIT_KILL_TEST_DB";
const CHILD_DURABILITY: &str = "PADDOCK_AUDIT_KILL_TEST_DURABILITY";
const CALLS: usize = 1000;
const KILL_AFTER: usize = 300;

/// In a child (with `CHILD_DB` set): appends 1,000 tool calls (a `started` and a `finished`
/// row each, every append its own commit), reporting each commit on stdout. On its own: the
/// same loop for 20 calls, then checks that every row is there and the chain verifies.
#[test]
fn writer_loop_commits_every_call() {
    let child_db = std::env::var_os(CHILD_DB);
    let dir = tempfile::tempdir().unwrap();
    let path = child_db
        .clone()
        .map_or_else(|| dir.path().join("audit.db"), Into::into);
    let durability = match std::env::var(CHILD_DURABILITY).as_deref() {
        Ok("normal") => Durability::Normal,
        Ok("flushed") => Durability::Flushed {
            within: std::time::Duration::from_millis(100),
        },
        _ => Durability::Full,
    };
    let calls = if child_db.is_some() { CALLS } else { 20 };
    let mut store = AuditStore::open_with(&path, &OpenOptions { durability }).unwrap();
    store
        .append(&NewEvent::new("s", 0, attestation(Local)))
        .unwrap();
    for i in 0..calls {
        let id = format!("call-{i}");
        for status in [CallStatus::Started, CallStatus::Finished] {
            store
                .append(&NewEvent::new(
                    "s",
                    i as i64,
                    tool_call(&id, "run_bash", Local, status),
                ))
                .unwrap();
            if child_db.is_some() {
                println!("committed {id} {}", status.as_str());
            }
        }
        if child_db.is_some() {
            // The tool's own work between its two rows.
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }
    let report = store.verify().unwrap();
    assert!(report.is_intact(), "{report:?}");
    assert_eq!(report.rows, 1 + 2 * calls as u64);
}

fn stored_rows(store: &AuditStore) -> BTreeSet<(String, String)> {
    let mut rows = BTreeSet::new();
    let mut query = Query {
        limit: 1000,
        ..Query::default()
    };
    loop {
        let page = store.query(&query).unwrap();
        for event in &page.events {
            if let AuditRecord::ToolCall(call) = &event.record {
                rows.insert((call.call_id.clone(), call.status.as_str().to_string()));
            }
        }
        match page.next {
            Some(next) => query.cursor = Some(next),
            None => return rows,
        }
    }
}

fn kill_mid_write(durability: &str) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.db");
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            // The test's path inside the crate's one test binary.
            "durability::writer_loop_commits_every_call",
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .env(CHILD_DB, &path)
        .env(CHILD_DURABILITY, durability)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut reported = BTreeSet::new();
    let mut killed = false;
    for line in BufReader::new(stdout).lines() {
        let line = line.unwrap();
        // libtest may print `test name ... ` on the same line as the first report.
        if let Some(rest) = line
            .find("committed ")
            .map(|at| &line[at + "committed ".len()..])
        {
            let (id, status) = rest.split_once(' ').unwrap();
            reported.insert((id.to_string(), status.to_string()));
        }
        if !killed && reported.len() >= KILL_AFTER {
            child.kill().unwrap(); // SIGKILL
            killed = true;
        }
    }
    let status = child.wait().unwrap();
    assert_eq!(
        status.signal(),
        Some(9),
        "the writer must die by SIGKILL mid-loop: {status:?}"
    );
    assert!(
        reported.len() < 2 * CALLS,
        "the writer finished before it was killed"
    );

    let store = AuditStore::open(&path).unwrap();
    let report = store.verify().unwrap();
    assert!(report.is_intact(), "{durability}: {report:?}");
    let stored = stored_rows(&store);
    let lost: Vec<_> = reported.difference(&stored).collect();
    assert!(
        lost.is_empty(),
        "{durability}: reported as committed but missing: {lost:?}"
    );
    // The store holds at most the one commit that landed between commit and report.
    assert!(
        stored.len() <= reported.len() + 1,
        "{} stored, {} reported",
        stored.len(),
        reported.len()
    );
}

#[test]
fn kill_9_with_synchronous_full_loses_no_reported_commit() {
    kill_mid_write("full");
}

#[test]
fn kill_9_with_wal_and_synchronous_normal_loses_no_reported_commit() {
    kill_mid_write("normal");
}

#[test]
fn kill_9_with_the_flushed_log_loses_no_reported_commit() {
    kill_mid_write("flushed");
}

/// `flush` works whatever the durability, before any row and after some; a store dropped
/// with rows left to flush closes cleanly (its flushing thread ends) and reopens intact.
#[test]
fn flush_is_available_with_every_durability() {
    for durability in [
        Durability::Full,
        Durability::Normal,
        Durability::Flushed {
            within: std::time::Duration::from_secs(3600),
        },
    ] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.db");
        let mut store = AuditStore::open_with(&path, &OpenOptions { durability }).unwrap();
        store.flush().unwrap();
        store
            .append(&NewEvent::new("s", 0, attestation(Local)))
            .unwrap();
        store
            .append(&NewEvent::new(
                "s",
                1,
                tool_call("c", "run_bash", Local, CallStatus::Started),
            ))
            .unwrap();
        store.flush().unwrap();
        store
            .append(&NewEvent::new(
                "s",
                2,
                tool_call("c", "run_bash", Local, CallStatus::Finished),
            ))
            .unwrap();
        drop(store);
        let store = AuditStore::open(&path).unwrap();
        let report = store.verify().unwrap();
        assert!(report.is_intact(), "{durability:?}: {report:?}");
        assert_eq!(report.rows, 3, "{durability:?}");
    }
}
