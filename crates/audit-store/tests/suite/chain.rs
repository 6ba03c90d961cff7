//! Append-only storage, the hash chain, and `verify()` naming the first broken row.

// Test helpers: a panic is a failed test with a line number.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use audit_store::{
    AuditError, AuditStore, CallStatus, ChainProblem, GENESIS, MIGRATIONS, canonical_json,
};
use common::{attestation, denial, event, session_started, temp_store, tool_call};
use pretty_assertions::assert_eq;
use protocol::EnforcementLevel::{Local, Openshell};
use rusqlite::Connection;

fn filled() -> (tempfile::TempDir, AuditStore) {
    let (dir, mut store) = temp_store();
    store.append(&event("s1", 1, attestation(Local))).unwrap();
    for i in 0..5 {
        let id = format!("c{i}");
        store
            .append(&event(
                "s1",
                10 + i,
                tool_call(&id, "run_bash", Local, CallStatus::Started),
            ))
            .unwrap();
        store
            .append(&event(
                "s1",
                20 + i,
                tool_call(&id, "run_bash", Local, CallStatus::Finished),
            ))
            .unwrap();
    }
    (dir, store)
}

/// A raw connection with the append-only triggers dropped, as an attacker with the file would.
fn tamper(store: &AuditStore, sql: &str) {
    let conn = Connection::open(store.path()).unwrap();
    conn.execute_batch(&format!(
        "DROP TRIGGER events_refuse_update; DROP TRIGGER events_refuse_delete; {sql}"
    ))
    .unwrap();
}

#[test]
fn rows_chain_from_genesis_and_verify() {
    let (_dir, store) = filled();
    let report = store.verify().unwrap();
    assert!(report.is_intact(), "{report:?}");
    assert_eq!(report.rows, 11);
    assert_eq!(report.head, store.head().unwrap());
    let conn = Connection::open(store.path()).unwrap();
    let first_prev: String = conn
        .query_row("SELECT prev_hash FROM events WHERE seq = 1", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(first_prev, GENESIS);
    // The hash is sha256(prev_hash || content), recomputable by anyone.
    let (content, prev, hash): (String, String, String) = conn
        .query_row(
            "SELECT content, prev_hash, hash FROM events WHERE seq = 4",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    use sha2::Digest;
    let mut h = sha2::Sha256::new();
    h.update(prev.as_bytes());
    h.update(content.as_bytes());
    assert_eq!(hex::encode(h.finalize()), hash);
    // The content is canonical JSON (keys sorted, no whitespace).
    let value: serde_json::Value = serde_json::from_str(&content).unwrap();
    assert_eq!(canonical_json(&value), content);
    assert!(content.starts_with(r#"{"record":{"args":"#), "{content}");
}

#[test]
fn the_database_refuses_update_and_delete() {
    let (_dir, store) = filled();
    let conn = Connection::open(store.path()).unwrap();
    let err = conn
        .execute("UPDATE events SET tool = 'x' WHERE seq = 2", [])
        .unwrap_err();
    assert!(
        err.to_string().contains("append-only: UPDATE refused"),
        "{err}"
    );
    let err = conn
        .execute("DELETE FROM events WHERE seq = 2", [])
        .unwrap_err();
    assert!(
        err.to_string().contains("append-only: DELETE refused"),
        "{err}"
    );
    assert!(store.verify().unwrap().is_intact());
}

#[test]
fn changed_content_is_named() {
    let (_dir, store) = filled();
    tamper(
        &store,
        "UPDATE events SET content = replace(content, 'cargo test', 'cargo tesT') WHERE seq = 4",
    );
    let broken = store.verify().unwrap().first_broken.unwrap();
    assert_eq!(broken.seq, 4);
    assert!(
        matches!(broken.problem, ChainProblem::ContentChanged { .. }),
        "{broken:?}"
    );
    assert!(
        broken.to_string().contains("row 4: content changed"),
        "{broken}"
    );
}

#[test]
fn a_changed_filter_column_is_named() {
    let (_dir, store) = filled();
    tamper(&store, "UPDATE events SET status = 'failed' WHERE seq = 3");
    let broken = store.verify().unwrap().first_broken.unwrap();
    assert_eq!(broken.seq, 3);
    assert!(broken.to_string().contains("filter column"), "{broken}");
}

#[test]
fn a_missing_row_is_a_sequence_gap() {
    let (_dir, store) = filled();
    tamper(&store, "DELETE FROM events WHERE seq = 6");
    let broken = store.verify().unwrap().first_broken.unwrap();
    assert_eq!(broken.seq, 7);
    assert_eq!(broken.problem, ChainProblem::RowMissing { expected: 6 });
    assert!(
        broken
            .to_string()
            .contains("rows 6..6 are missing (sequence gap)"),
        "{broken}"
    );
}

#[test]
fn a_recomputed_row_breaks_the_link_to_the_next() {
    let (_dir, store) = filled();
    // Rewrite row 5 and give it a self-consistent hash: row 6 no longer links to it.
    let conn = Connection::open(store.path()).unwrap();
    let (content, prev): (String, String) = conn
        .query_row(
            "SELECT content, prev_hash FROM events WHERE seq = 5",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    let forged = content.replace("cargo test", "rm -rf /x");
    use sha2::Digest;
    let mut h = sha2::Sha256::new();
    h.update(prev.as_bytes());
    h.update(forged.as_bytes());
    let forged_hash = hex::encode(h.finalize());
    tamper(
        &store,
        &format!(
            "UPDATE events SET content = '{}', hash = '{forged_hash}' WHERE seq = 5",
            forged.replace('\'', "''")
        ),
    );
    let broken = store.verify().unwrap().first_broken.unwrap();
    assert_eq!(broken.seq, 6);
    assert_eq!(broken.problem, ChainProblem::HashMismatch);
    assert!(broken.to_string().contains("hash mismatch"), "{broken}");
}

#[test]
fn a_truncated_tail_is_caught_by_an_anchor() {
    let (_dir, store) = filled();
    let anchor = store.head().unwrap().unwrap();
    assert!(store.verify_with_anchor(&anchor).unwrap().is_intact());
    tamper(&store, "DELETE FROM events WHERE seq >= 10");
    // The chain alone still looks whole; the anchor does not.
    assert!(store.verify().unwrap().is_intact());
    let broken = store
        .verify_with_anchor(&anchor)
        .unwrap()
        .first_broken
        .unwrap();
    assert!(
        matches!(broken.problem, ChainProblem::AnchorMismatch { .. }),
        "{broken:?}"
    );
    assert!(broken.to_string().contains("truncated"), "{broken}");
}

#[test]
fn a_session_opens_with_its_attestation_or_start() {
    let (_dir, mut store) = temp_store();
    let err = store
        .append(&event(
            "s9",
            1,
            tool_call("c1", "run_bash", Openshell, CallStatus::Started),
        ))
        .unwrap_err();
    assert!(matches!(err, AuditError::SessionNotOpened { .. }), "{err}");
    assert!(
        err.to_string().contains("`s9`") && err.to_string().contains("tool_call"),
        "{err}"
    );
    assert_eq!(store.head().unwrap(), None, "nothing was written");
    store
        .append(&event("s9", 1, attestation(Openshell)))
        .unwrap();
    store
        .append(&event(
            "s9",
            2,
            tool_call("c1", "run_bash", Openshell, CallStatus::Started),
        ))
        .unwrap();
    store.append(&event("s8", 3, session_started())).unwrap();
    store
        .append(&event("s8", 4, denial("c1", "example.com")))
        .unwrap();
    // A second store on the same file knows the sessions from the rows.
    let mut again = AuditStore::open(store.path()).unwrap();
    again
        .append(&event(
            "s9",
            5,
            tool_call("c1", "run_bash", Openshell, CallStatus::Finished),
        ))
        .unwrap();
    assert!(again.verify().unwrap().is_intact());
}

#[test]
fn a_batch_is_all_or_nothing() {
    let (_dir, mut store) = temp_store();
    store.append(&event("s1", 1, attestation(Local))).unwrap();
    let batch = vec![
        event(
            "s1",
            2,
            tool_call("c1", "run_bash", Local, CallStatus::Started),
        ),
        event(
            "s2",
            3,
            tool_call("c2", "run_bash", Local, CallStatus::Started),
        ),
    ];
    assert!(store.append_batch(&batch).is_err());
    assert_eq!(store.head().unwrap().unwrap().seq, 1);
    let appended = store.append_batch(&batch[..1]).unwrap();
    assert_eq!(appended[0].seq, 2);
    assert!(store.verify().unwrap().is_intact());
}

#[test]
fn migrations_are_numbered_applied_in_order_and_recorded() {
    let names: Vec<&str> = MIGRATIONS.iter().map(|m| m.1).collect();
    assert_eq!(
        names,
        ["0001_events", "0002_query_indexes", "0003_time_bound_index"]
    );
    for (i, (version, name, _)) in MIGRATIONS.iter().enumerate() {
        assert_eq!(*version, i as i64 + 1);
        assert!(name.starts_with(&format!("{version:04}_")));
    }
    let (_dir, store) = temp_store();
    let path = store.path().to_path_buf();
    drop(store);
    let recorded = |path: &std::path::Path| -> Vec<(i64, String)> {
        let conn = Connection::open(path).unwrap();
        let mut stmt = conn
            .prepare("SELECT version, name FROM schema_migrations ORDER BY version")
            .unwrap();
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    assert_eq!(
        recorded(&path),
        vec![
            (1, "0001_events".into()),
            (2, "0002_query_indexes".into()),
            (3, "0003_time_bound_index".into())
        ]
    );
    // Reopening applies nothing twice.
    AuditStore::open(&path).unwrap();
    assert_eq!(recorded(&path).len(), 3);

    // A database at version 1 gets versions 2 and 3 on open.
    let dir = tempfile::tempdir().unwrap();
    let old = dir.path().join("old.db");
    {
        let conn = Connection::open(&old).unwrap();
        conn.execute_batch(
            "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_ms INTEGER NOT NULL) STRICT;",
        )
        .unwrap();
        conn.execute_batch(MIGRATIONS[0].2).unwrap();
        conn.execute(
            "INSERT INTO schema_migrations VALUES (1, '0001_events', 0)",
            [],
        )
        .unwrap();
    }
    AuditStore::open(&old).unwrap();
    assert_eq!(recorded(&old).len(), 3);
    let conn = Connection::open(&old).unwrap();
    let indexes: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name LIKE 'events_by_%'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(indexes, 7);
    let time_indexes: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE '%time%'")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(time_indexes, ["events_by_seq_time"]);

    // A database from a newer build is refused.
    conn.execute(
        "INSERT INTO schema_migrations VALUES (99, '0099_future', 0)",
        [],
    )
    .unwrap();
    let err = AuditStore::open(&old).err().unwrap();
    assert!(err.to_string().contains("schema version 99"), "{err}");
}

#[test]
fn the_database_is_in_wal_mode_and_private() {
    let (_dir, store) = temp_store();
    let conn = Connection::open(store.path()).unwrap();
    let mode: String = conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    use std::os::unix::fs::PermissionsExt;
    let perms = std::fs::metadata(store.path())
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(perms & 0o777, 0o600);
}
