//! Several Paddock processes share one state folder: each opens the store at the same moment
//! (a fresh file: journal mode and migrations race) and then writes. Every open and every
//! write must succeed; none may die with "database is locked".

#![allow(clippy::unwrap_used, reason = "test code: a panic is a failed test")]

use std::sync::{Arc, Barrier};

use agent::{SessionRecord, SessionStore};
use protocol::{ApprovalMode, NetworkProfileName, SessionSettings};
use session_store::SqliteSessionStore;

const OPENERS: usize = 8;
const SESSIONS_EACH: usize = 25;

fn record(id: String) -> SessionRecord {
    SessionRecord {
        id,
        settings: SessionSettings {
            folders: vec![],
            cwd: None,
            network_profile: NetworkProfileName::Strict,
            extra_hosts: vec![],
            credentials: vec![],
            secrets: vec![],
            model: None,
            approval_mode: ApprovalMode::Ask,
        },
        messages: vec![],
        session_approvals: vec![],
        downloads: vec![],
        written: vec![],
        provider: None,
        last_seq: 0,
        created_ms: 1,
        updated_ms: 1,
    }
}

#[test]
fn openers_racing_on_a_fresh_file_all_succeed_and_every_write_lands() {
    for round in 0..5 {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sessions.db");
        let barrier = Arc::new(Barrier::new(OPENERS));
        let threads: Vec<_> = (0..OPENERS)
            .map(|opener| {
                let path = path.clone();
                let barrier = Arc::clone(&barrier);
                std::thread::spawn(move || {
                    barrier.wait();
                    let store = SqliteSessionStore::open(&path)
                        .map_err(|e| format!("round {round}, opener {opener}: {e}"))?;
                    let runtime = tokio::runtime::Builder::new_current_thread()
                        .build()
                        .unwrap();
                    runtime.block_on(async {
                        for n in 0..SESSIONS_EACH {
                            store
                                .create(&record(format!("s-{opener}-{n}")))
                                .await
                                .map_err(|e| {
                                    format!("round {round}, opener {opener}, write {n}: {e}")
                                })?;
                        }
                        Ok::<_, String>(())
                    })
                })
            })
            .collect();
        let failures: Vec<String> = threads
            .into_iter()
            .filter_map(|t| t.join().unwrap().err())
            .collect();
        assert!(failures.is_empty(), "{failures:#?}");
        let store = SqliteSessionStore::open(&path).unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let listed = runtime.block_on(store.list()).unwrap();
        assert_eq!(listed.len(), OPENERS * SESSIONS_EACH);
    }
}
