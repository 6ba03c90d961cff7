//! The durable per-session event log: events read back in order after any number, a retried
//! append accepted, a number reused with other content refused, and several processes'
//! connections appending at once without losing an event.

#![allow(clippy::unwrap_used, reason = "test code: a panic is a failed test")]

use std::os::unix::fs::PermissionsExt;

use protocol::{Event, EventMsg};
use session_store::SqliteEventLog;

fn event(session: &str, seq: u64, text: &str) -> Event {
    Event {
        seq,
        session_id: session.into(),
        turn_id: None,
        time_ms: 1_000 + seq as i64,
        msg: EventMsg::AssistantMessage { text: text.into() },
    }
}

#[tokio::test]
async fn events_read_back_after_any_number_and_numbers_are_never_reused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.db");
    let log = SqliteEventLog::open(&path).unwrap();
    assert_eq!(
        std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
        0o600
    );
    assert_eq!(log.last_seq("a").await.unwrap(), None);
    for seq in [1, 2, 4, 7] {
        log.append(&event("a", seq, &format!("a{seq}")))
            .await
            .unwrap();
    }
    log.append(&event("b", 1, "b1")).await.unwrap();
    let after = |n| {
        let log = log.clone();
        async move {
            log.after("a", n, 100)
                .await
                .unwrap()
                .into_iter()
                .map(|e| e.seq)
                .collect::<Vec<_>>()
        }
    };
    assert_eq!(after(0).await, vec![1, 2, 4, 7]);
    assert_eq!(after(2).await, vec![4, 7]);
    assert_eq!(after(3).await, vec![4, 7]);
    assert_eq!(after(7).await, Vec::<u64>::new());
    assert_eq!(log.after("a", 0, 2).await.unwrap().len(), 2);
    assert_eq!(log.last_seq("a").await.unwrap(), Some(7));
    assert_eq!(log.last_seq("b").await.unwrap(), Some(1));

    // A retried append of the same event is accepted; a reused number is not.
    log.append(&event("a", 4, "a4")).await.unwrap();
    let refused = log.append(&event("a", 4, "other")).await.unwrap_err();
    assert!(refused.to_string().contains("already logged"), "{refused}");
    assert_eq!(
        log.after("a", 3, 1).await.unwrap()[0].msg,
        EventMsg::AssistantMessage { text: "a4".into() }
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn several_connections_append_at_once_and_nothing_is_lost() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.db");
    let mut writers = Vec::new();
    for writer in 0..6 {
        let path = path.clone();
        writers.push(tokio::spawn(async move {
            // Each writer its own connection, as each process would have.
            let log = SqliteEventLog::open(&path).unwrap();
            let session = format!("s{writer}");
            for seq in 1..=150 {
                log.append(&event(&session, seq, "x")).await.unwrap();
            }
        }));
    }
    for writer in writers {
        writer.await.unwrap();
    }
    let log = SqliteEventLog::open(&path).unwrap();
    for writer in 0..6 {
        let session = format!("s{writer}");
        let mut seen = Vec::new();
        let mut after = 0;
        loop {
            let page = log.after(&session, after, 64).await.unwrap();
            let Some(last) = page.last() else { break };
            after = last.seq;
            seen.extend(page.iter().map(|e| e.seq));
        }
        assert_eq!(seen, (1..=150).collect::<Vec<_>>(), "{session}");
    }
}
