//! The event socket: a client that drops mid-turn and reconnects with `after` = the last
//! `seq` it saw gets every durable event exactly once (live-only fragments are not replayed),
//! in order; replay after any number matches the log.

#![allow(clippy::unwrap_used, reason = "test code: a panic is a failed test")]

mod common;

use std::collections::BTreeMap;

use common::{TestServer, temp_dir};
use protocol::{Event, EventMsg};
use serde_json::json;
use test_support::model_server::{Reply, sse};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_reconnects_with_after_gets_every_event_exactly_once() {
    let server = TestServer::start().await;
    let work = temp_dir();
    let work_path = work.path().canonicalize().unwrap();
    const STEPS: usize = 6;
    for step in 0..STEPS {
        server.model.push(Reply::stream([
            sse::text(format!("Step {step}: ")),
            sse::text("running it."),
            sse::tool_use(
                format!("call_{step}"),
                "run_bash",
                json!({"command": format!("sleep 0.2; echo step {step}")}),
            ),
            sse::stop("tool_use"),
        ]));
    }
    server.model.push(Reply::stream([
        sse::text("All done."),
        sse::stop("end_turn"),
    ]));
    let session = server
        .create_session(&[(&work_path, "read_write")], "bypass")
        .await;

    let mut first = server.events(&session, 0).await;
    server.send_turn(&session, "run the steps").await;
    let before = first
        .until(|m| matches!(m, EventMsg::ToolCallFinished { call_id, .. } if call_id == "call_1"))
        .await;
    // Dropped mid-turn, without a goodbye (the TCP connection just goes).
    drop(first);
    let last_seen = before.last().unwrap().seq;
    // The turn goes on meanwhile.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let mut second = server.events(&session, last_seen).await;
    let after = second
        .until(|m| matches!(m, EventMsg::TurnFinished { .. }))
        .await;

    let received: Vec<&Event> = before.iter().chain(&after).collect();
    let seqs: Vec<u64> = received.iter().map(|e| e.seq).collect();
    assert!(
        seqs.windows(2).all(|w| w[0] < w[1]),
        "in order, none twice: {seqs:?}"
    );
    // Every durable event of the session up to the end of the turn, from a fresh replay.
    let mut replay = server.events(&session, 0).await;
    let all = replay
        .until(|m| matches!(m, EventMsg::TurnFinished { .. }))
        .await;
    assert!(
        all.iter().all(Event::is_durable),
        "a replay holds durable events only"
    );
    let mut count: BTreeMap<u64, usize> = BTreeMap::new();
    for event in received.iter().filter(|e| e.is_durable()) {
        *count.entry(event.seq).or_default() += 1;
    }
    let missing: Vec<&Event> = all.iter().filter(|e| !count.contains_key(&e.seq)).collect();
    assert!(
        missing.is_empty(),
        "lost across the reconnect: {missing:#?}"
    );
    assert_eq!(
        count.len(),
        all.len(),
        "every durable event received once: {count:?}"
    );
    for event in &all {
        let got = received.iter().find(|e| e.seq == event.seq).unwrap();
        assert_eq!(*got, event, "the replayed event is the one sent live");
    }
    let finished = all
        .iter()
        .filter(|e| matches!(e.msg, EventMsg::ToolCallFinished { .. }))
        .count();
    assert_eq!(finished, STEPS);
    // Live-only fragments were sent live (before the drop), never replayed.
    assert!(
        before
            .iter()
            .any(|e| matches!(e.msg, EventMsg::ModelTextDelta { .. }))
    );

    // Replay after any number: exactly the logged events after it.
    let middle = all[all.len() / 2].seq;
    let mut partial = server.events(&session, middle).await;
    let tail = partial
        .until(|m| matches!(m, EventMsg::TurnFinished { .. }))
        .await;
    let expected: Vec<&Event> = all.iter().filter(|e| e.seq > middle).collect();
    assert_eq!(tail.iter().collect::<Vec<_>>(), expected);
    server.stop().await;
}
