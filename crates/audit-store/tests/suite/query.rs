//! Filters and keyset pagination.

// Test helpers: a panic is a failed test with a line number.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use audit_store::{AuditError, CallStatus, Decision, Query, RecordKind};
use common::{attestation, denial, event, temp_store, tool_call};
use pretty_assertions::assert_eq;
use protocol::EnforcementLevel::{Local, None as Unwalled, Openshell};

fn seqs(page: &audit_store::Page) -> Vec<i64> {
    page.events.iter().map(|e| e.seq).collect()
}

#[test]
fn filters_combine_and_pages_are_newest_first() {
    let (_dir, mut store) = temp_store();
    let mut batch = vec![
        event("a", 0, attestation(Local)),
        event("b", 0, attestation(Openshell)),
    ];
    for i in 0..30 {
        let (session, enforcement) = if i % 2 == 0 {
            ("a", Local)
        } else {
            ("b", Openshell)
        };
        let tool = if i % 3 == 0 { "write_file" } else { "run_bash" };
        let status = if i % 5 == 0 {
            CallStatus::Denied
        } else {
            CallStatus::Finished
        };
        batch.push(event(
            session,
            100 + i,
            tool_call(&format!("c{i}"), tool, enforcement, status),
        ));
    }
    batch.push(event("a", 200, denial("c4", "evil.example")));
    store.append_batch(&batch).unwrap();

    let page = store
        .query(&Query {
            tool: Some("write_file".into()),
            enforcement: Some(Local),
            ..Query::default()
        })
        .unwrap();
    // i in {0, 6, 12, 18, 24} → seq i + 3.
    assert_eq!(seqs(&page), vec![27, 21, 15, 9, 3]);
    assert_eq!(page.next, None);

    let denied = store
        .query(&Query {
            decision: Some(Decision::Deny),
            ..Query::default()
        })
        .unwrap();
    assert_eq!(denied.events.len(), 6);
    let denied_status = store
        .query(&Query {
            status: Some(CallStatus::Denied),
            session_id: Some("b".into()),
            ..Query::default()
        })
        .unwrap();
    assert_eq!(seqs(&denied_status), vec![28, 18, 8]);

    let window = store
        .query(&Query {
            since_ms: Some(110),
            until_ms: Some(113),
            ..Query::default()
        })
        .unwrap();
    assert_eq!(seqs(&window), vec![15, 14, 13]);

    let text = store
        .query(&Query {
            text: Some("EVIL.example".into()),
            ..Query::default()
        })
        .unwrap();
    assert_eq!(text.events.len(), 1);
    assert_eq!(text.events[0].record.kind(), RecordKind::NetworkDenial);
    // `%` and `_` are literal in a text search.
    assert!(
        store
            .query(&Query {
                text: Some("%".into()),
                ..Query::default()
            })
            .unwrap()
            .events
            .is_empty()
    );

    let kinds = store
        .query(&Query {
            kind: Some(RecordKind::Attestation),
            ..Query::default()
        })
        .unwrap();
    assert_eq!(seqs(&kinds), vec![2, 1]);
    let unwalled = store
        .query(&Query {
            enforcement: Some(Unwalled),
            ..Query::default()
        })
        .unwrap();
    assert!(unwalled.events.is_empty());

    // A call's history: its states and the denial it caused, oldest first.
    let history = store.call_history("c4").unwrap();
    let kinds: Vec<RecordKind> = history.iter().map(|e| e.record.kind()).collect();
    assert_eq!(kinds, vec![RecordKind::ToolCall, RecordKind::NetworkDenial]);
}

#[test]
fn keyset_pages_walk_everything_once() {
    let (_dir, mut store) = temp_store();
    let mut batch = vec![event("s", 0, attestation(Local))];
    for i in 0..120 {
        batch.push(event(
            "s",
            i,
            tool_call(&format!("c{i}"), "run_bash", Local, CallStatus::Started),
        ));
    }
    store.append_batch(&batch).unwrap();
    let mut query = Query {
        kind: Some(RecordKind::ToolCall),
        limit: 50,
        ..Query::default()
    };
    let mut seen = Vec::new();
    let mut pages = 0;
    loop {
        let page = store.query(&query).unwrap();
        pages += 1;
        seen.extend(seqs(&page));
        match page.next {
            Some(next) => query.cursor = Some(next),
            None => break,
        }
    }
    assert_eq!(pages, 3);
    let expected: Vec<i64> = (2..=121).rev().collect();
    assert_eq!(seen, expected);
    // New rows do not shift an open cursor's pages.
    let first = store
        .query(&Query {
            kind: Some(RecordKind::ToolCall),
            limit: 50,
            ..Query::default()
        })
        .unwrap();
    store
        .append(&event(
            "s",
            999,
            tool_call("new", "run_bash", Local, CallStatus::Started),
        ))
        .unwrap();
    let second = store
        .query(&Query {
            cursor: first.next,
            kind: Some(RecordKind::ToolCall),
            limit: 50,
            ..Query::default()
        })
        .unwrap();
    assert_eq!(second.events[0].seq, 71);
}

#[test]
fn bad_queries_and_cursors_are_refused() {
    let (_dir, mut store) = temp_store();
    store.append(&event("s", 0, attestation(Local))).unwrap();
    let err = store
        .query(&Query {
            limit: 5000,
            ..Query::default()
        })
        .unwrap_err();
    assert!(err.to_string().contains("limit 5000"), "{err}");
    let err = store
        .query(&Query {
            since_ms: Some(5),
            until_ms: Some(5),
            ..Query::default()
        })
        .unwrap_err();
    assert!(err.to_string().contains("since_ms"), "{err}");
    let err = store
        .query(&Query {
            cursor: Some("zz".into()),
            ..Query::default()
        })
        .unwrap_err();
    assert!(matches!(err, AuditError::BadCursor(_)), "{err}");
    // A cursor issued for other filters is refused.
    for i in 0..3 {
        store
            .append(&event(
                "s",
                i,
                tool_call(&format!("c{i}"), "run_bash", Local, CallStatus::Started),
            ))
            .unwrap();
    }
    let page = store
        .query(&Query {
            limit: 1,
            ..Query::default()
        })
        .unwrap();
    let err = store
        .query(&Query {
            limit: 1,
            tool: Some("run_bash".into()),
            cursor: page.next,
            ..Query::default()
        })
        .unwrap_err();
    assert!(err.to_string().contains("different filters"), "{err}");
}

/// Time bounds read through the narrow `(seq, time_ms)` index: the rows and their order must
/// be exactly what the whole trail says, page after page, also when the clock went backwards
/// between rows (times not in `seq` order), alone and with a text filter and with an indexed
/// filter beside them; the export too.
#[test]
fn time_bounds_select_exactly_their_rows_in_order_when_the_clock_went_backwards() {
    let (_dir, mut store) = temp_store();
    // Times jump around: seq i+3 at 1000 + (i * 37) % 101 (seqs 1 and 2 open the sessions).
    let time = |i: i64| 1000 + (i * 37) % 101;
    let opened = [
        event("a", 0, attestation(Local)),
        event("b", 0, attestation(Local)),
    ];
    let batch: Vec<_> = opened
        .into_iter()
        .chain((0..300).map(|i| {
            let tool = if i % 4 == 0 { "write_file" } else { "run_bash" };
            event(
                if i % 2 == 0 { "a" } else { "b" },
                time(i),
                tool_call(&format!("c{i}"), tool, Local, CallStatus::Finished),
            )
        }))
        .collect();
    store.append_batch(&batch).unwrap();
    let mut all: Vec<(i64, i64, String, String)> = vec![
        (1, 0, "a".to_owned(), String::new()),
        (2, 0, "b".to_owned(), String::new()),
    ];
    all.extend((0..300).map(|i| {
        (
            i + 3,
            time(i),
            if i % 2 == 0 { "a" } else { "b" }.to_owned(),
            if i % 4 == 0 { "write_file" } else { "run_bash" }.to_owned(),
        )
    }));
    let walk = |query: Query| -> Vec<i64> {
        let mut query = Query { limit: 7, ..query };
        let mut seen = Vec::new();
        loop {
            let page = store.query(&query).unwrap();
            seen.extend(seqs(&page));
            match page.next {
                Some(next) => query.cursor = Some(next),
                None => return seen,
            }
        }
    };
    type Row = (i64, i64, String, String);
    type Keep = Box<dyn Fn(&Row) -> bool>;
    let cases: Vec<(Query, Keep)> = vec![
        (
            Query {
                until_ms: Some(1050),
                ..Query::default()
            },
            Box::new(|r: &Row| r.1 < 1050),
        ),
        (
            Query {
                until_ms: Some(1),
                ..Query::default()
            },
            Box::new(|r: &Row| r.1 < 1),
        ),
        (
            Query {
                since_ms: Some(1090),
                ..Query::default()
            },
            Box::new(|r: &Row| r.1 >= 1090),
        ),
        (
            Query {
                since_ms: Some(1020),
                until_ms: Some(1030),
                ..Query::default()
            },
            Box::new(|r: &Row| (1020..1030).contains(&r.1)),
        ),
        (
            Query {
                until_ms: Some(1050),
                text: Some("WRITE_FILE".into()),
                ..Query::default()
            },
            Box::new(|r: &Row| r.1 < 1050 && r.3 == "write_file"),
        ),
        (
            Query {
                until_ms: Some(1050),
                session_id: Some("b".into()),
                ..Query::default()
            },
            Box::new(|r: &Row| r.1 < 1050 && r.2 == "b"),
        ),
        (
            Query {
                until_ms: Some(900),
                ..Query::default()
            },
            Box::new(|r: &Row| r.1 < 900),
        ),
    ];
    for (query, keep) in cases {
        let mut expected: Vec<i64> = all.iter().filter(|r| keep(r)).map(|r| r.0).collect();
        expected.reverse();
        assert_eq!(walk(query.clone()), expected, "{query:?}");
        let mut exported = Vec::new();
        store.export_jsonl(&query, &mut exported).unwrap();
        let exported: Vec<i64> = String::from_utf8(exported)
            .unwrap()
            .lines()
            .map(|line| {
                serde_json::from_str::<serde_json::Value>(line).unwrap()["seq"]
                    .as_i64()
                    .unwrap()
            })
            .collect();
        expected.reverse();
        assert_eq!(exported, expected, "export of {query:?}");
    }
}
