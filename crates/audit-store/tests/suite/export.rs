//! JSON Lines and OCSF exports.

// Test helpers: a panic is a failed test with a line number.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use audit_store::{CallStatus, ChainProblem, OCSF_VERSION, Query, verify_jsonl};
use common::{attestation, denial, event, temp_store, tool_call};
use pretty_assertions::assert_eq;
use protocol::EnforcementLevel::Local;
use serde_json::Value;

fn store_with_calls() -> (tempfile::TempDir, audit_store::AuditStore) {
    let (dir, mut store) = temp_store();
    store
        .append_batch(&[
            event("s", 1, attestation(Local)),
            event(
                "s",
                2,
                tool_call("c1", "run_bash", Local, CallStatus::Started),
            ),
            event("s", 3, denial("c1", "evil.example")),
            event(
                "s",
                4,
                tool_call("c1", "run_bash", Local, CallStatus::Finished),
            ),
            event(
                "s",
                5,
                tool_call("c2", "edit_file", Local, CallStatus::Denied),
            ),
        ])
        .unwrap();
    (dir, store)
}

#[test]
fn a_jsonl_export_verifies_offline_and_tampering_is_named() {
    let (_dir, store) = store_with_calls();
    let mut out = Vec::new();
    assert_eq!(store.export_jsonl(&Query::default(), &mut out).unwrap(), 5);
    let text = String::from_utf8(out).unwrap();
    let report = verify_jsonl(text.as_bytes()).unwrap();
    assert!(report.is_intact(), "{report:?}");
    assert_eq!(report.head, store.head().unwrap());

    let tampered = text.replace("evil.example", "good.example");
    let broken = verify_jsonl(tampered.as_bytes())
        .unwrap()
        .first_broken
        .unwrap();
    assert_eq!(broken.seq, 3);
    assert!(matches!(
        broken.problem,
        ChainProblem::ContentChanged { .. }
    ));

    let dropped: Vec<&str> = text.lines().filter(|l| !l.contains("\"seq\":4,")).collect();
    let broken = verify_jsonl(dropped.join("\n").as_bytes())
        .unwrap()
        .first_broken
        .unwrap();
    assert_eq!(
        (broken.seq, broken.problem),
        (5, ChainProblem::RowMissing { expected: 4 })
    );

    let err = verify_jsonl("{not json\n".as_bytes()).unwrap_err();
    assert!(err.to_string().contains("export line 1"), "{err}");
}

#[test]
fn ocsf_maps_tool_calls_to_api_activity_and_denials_to_network_activity() {
    let (_dir, store) = store_with_calls();
    let mut out = Vec::new();
    assert_eq!(store.export_ocsf(&Query::default(), &mut out).unwrap(), 4);
    let events: Vec<Value> = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let classes: Vec<i64> = events
        .iter()
        .map(|e| e["class_uid"].as_i64().unwrap())
        .collect();
    assert_eq!(classes, vec![6003, 4001, 6003, 6003]);
    for e in &events {
        assert_eq!(e["metadata"]["version"], OCSF_VERSION);
        let class = e["class_uid"].as_i64().unwrap();
        let activity = e["activity_id"].as_i64().unwrap();
        assert_eq!(e["type_uid"].as_i64().unwrap(), class * 100 + activity);
        assert_eq!(e["category_uid"].as_i64().unwrap(), class / 1000);
        assert!(e["time"].is_i64());
        assert_eq!(e["actor"]["session"]["uid"], "s");
    }
    let started = &events[0];
    assert_eq!(started["api"]["operation"], "run_bash");
    assert_eq!(started["api"]["request"]["uid"], "c1");
    assert_eq!(started["activity_id"], 99);
    assert_eq!(started["status"], "Started");
    assert_eq!(started["unmapped"]["enforcement"], "local");

    let refused = &events[1];
    assert_eq!(refused["activity_id"], 5);
    assert_eq!(refused["dst_endpoint"]["hostname"], "evil.example");
    assert_eq!(refused["dst_endpoint"]["port"], 443);
    assert_eq!(refused["disposition_id"], 2);
    assert_eq!(refused["actor"]["process"]["file"]["name"], "curl");
    // Joined to the call that caused it.
    assert_eq!(
        refused["metadata"]["correlation_uid"],
        started["metadata"]["correlation_uid"]
    );

    let finished = &events[2];
    assert_eq!(
        (
            finished["status_id"].as_i64(),
            finished["status_code"].as_str()
        ),
        (Some(1), Some("0"))
    );
    let denied = &events[3];
    assert_eq!(denied["activity_id"], 3);
    assert_eq!(
        (denied["action_id"].as_i64(), denied["status_id"].as_i64()),
        (Some(2), Some(2))
    );
}

#[test]
fn exports_follow_filters() {
    let (_dir, store) = store_with_calls();
    let mut out = Vec::new();
    let n = store
        .export_jsonl(
            &Query {
                call_id: Some("c1".into()),
                ..Query::default()
            },
            &mut out,
        )
        .unwrap();
    assert_eq!(n, 3);
}
