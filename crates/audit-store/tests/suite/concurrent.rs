//! Several Paddock processes append to one audit trail (four `paddock run`s and a
//! `paddock up` on one state folder). Each opens the trail at the same moment (a fresh file:
//! journal mode and migrations race) and then appends; every open and every append succeeds,
//! every row lands once, and the one chain they share verifies.

// Test helpers: a panic is a failed test with a line number.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::sync::{Arc, Barrier};

use audit_store::{AuditStore, CallStatus, NewEvent};
use common::{attestation, tool_call};
use protocol::EnforcementLevel::Local;

const WRITERS: usize = 6;
const CALLS_EACH: usize = 40;

#[test]
fn writers_racing_on_a_fresh_trail_all_succeed_and_the_chain_verifies() {
    for round in 0..4 {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.db");
        let barrier = Arc::new(Barrier::new(WRITERS));
        let threads: Vec<_> = (0..WRITERS)
            .map(|writer| {
                let path = path.clone();
                let barrier = Arc::clone(&barrier);
                std::thread::spawn(move || -> Result<(), String> {
                    barrier.wait();
                    let fail = |what: &str, e: audit_store::AuditError| {
                        format!("round {round}, writer {writer}, {what}: {e}")
                    };
                    let mut store = AuditStore::open(&path).map_err(|e| fail("open", e))?;
                    let session = format!("s{writer}");
                    store
                        .append(&NewEvent::new(&session, 0, attestation(Local)))
                        .map_err(|e| fail("attestation", e))?;
                    for i in 0..CALLS_EACH {
                        let id = format!("{session}-call-{i}");
                        for status in [CallStatus::Started, CallStatus::Finished] {
                            store
                                .append(&NewEvent::new(
                                    &session,
                                    i as i64,
                                    tool_call(&id, "run_bash", Local, status),
                                ))
                                .map_err(|e| fail(&format!("append {id}"), e))?;
                        }
                    }
                    Ok(())
                })
            })
            .collect();
        let failures: Vec<String> = threads
            .into_iter()
            .filter_map(|t| t.join().unwrap().err())
            .collect();
        assert!(failures.is_empty(), "{failures:#?}");
        let report = AuditStore::open(&path).unwrap().verify().unwrap();
        assert!(report.is_intact(), "{report:?}");
        assert_eq!(report.rows, (WRITERS * (1 + 2 * CALLS_EACH)) as u64);
    }
}
