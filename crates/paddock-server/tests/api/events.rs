//! The event socket: a client that drops mid-turn and reconnects with `after` = the last
//! `seq` it saw gets every durable event exactly once (live-only fragments are not replayed),
//! in order; replay after any number matches the log.

#![allow(clippy::unwrap_used, reason = "test code: a panic is a failed test")]

use crate::common;

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

/// Opens the session's event socket over a TCP connection with a small receive buffer, and
/// never reads it (the caller decides when).
async fn unread_socket(
    server: &TestServer,
    session: &str,
) -> tokio_tungstenite::WebSocketStream<tokio::net::TcpStream> {
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let stream = socket.connect(server.addr).await.unwrap();
    let mut request = format!("ws://{}/v1/sessions/{session}/events?after=0", server.addr)
        .into_client_request()
        .unwrap();
    request.headers_mut().insert(
        "Authorization",
        format!("Bearer {}", server.token).parse().unwrap(),
    );
    let (socket, _) = tokio_tungstenite::client_async(request, stream)
        .await
        .unwrap();
    socket
}

/// Waits (up to the harness's bound) until `done` holds.
async fn eventually(what: &str, done: impl Fn() -> bool) {
    let waited = tokio::time::timeout(common::WAIT, async {
        while !done() {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    })
    .await;
    assert!(waited.is_ok(), "never happened: {what}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_stops_reading_is_disconnected_and_catches_up_from_the_log() {
    use futures::StreamExt;
    use tokio_tungstenite::tungstenite::protocol::Message;

    let server = TestServer::start().await;
    let work = temp_dir();
    let work_path = work.path().canonicalize().unwrap();
    // Each call streams 256 KiB on stdout and on stderr (the default capture cap), 20 MiB in
    // all: far more output frames than the slow client's queue and TCP buffers hold.
    const CALLS: usize = 40;
    for call in 0..CALLS {
        server.model.push(Reply::tool_call(
                format!("loud_{call}"),
                "run_bash",
                json!({"command": "head -c 300000 /dev/zero | tr '\\0' a; head -c 300000 /dev/zero | tr '\\0' b >&2"}),
            ));
    }
    server.model.push(Reply::final_text("Loud."));
    let session = server
        .create_session(&[(&work_path, "read_write")], "bypass")
        .await;

    let mut slow = unread_socket(&server, &session).await;
    let mut fast = server.events(&session, 0).await;
    eventually("both sockets open", || server.sockets.open() == 2).await;
    server.send_turn(&session, "be loud").await;
    let mut fast_seen = Vec::new();
    loop {
        let Some(event) = fast.next().await else {
            panic!(
                "the reading client was disconnected ({} too slow) after {} events",
                server.sockets.disconnected_too_slow(),
                fast_seen.len()
            );
        };
        let done = matches!(event.msg, EventMsg::TurnFinished { .. });
        fast_seen.push(event);
        if done {
            break;
        }
    }

    // The server dropped the slow client (its queue filled) before it read a single frame,
    // and kept serving the other one.
    eventually("the slow client is disconnected", || {
        server.sockets.disconnected_too_slow() == 1 && server.sockets.open() == 1
    })
    .await;
    assert_eq!(
        fast_seen
            .iter()
            .filter(|e| matches!(e.msg, EventMsg::ToolCallFinished { .. }))
            .count(),
        CALLS,
        "the reading client got every call"
    );

    // What reached the slow client before the cut, then the end of its connection.
    let mut slow_seen: Vec<Event> = Vec::new();
    while let Ok(Some(Ok(message))) = tokio::time::timeout(common::WAIT, slow.next()).await {
        match message {
            Message::Text(text) => slow_seen.push(serde_json::from_str(&text).unwrap()),
            Message::Close(_) => break,
            _ => {}
        }
    }
    assert!(!slow_seen.is_empty(), "the slow client got a first part");
    assert!(
        !slow_seen
            .iter()
            .any(|e| matches!(e.msg, EventMsg::TurnFinished { .. })),
        "the slow client was cut off before the end of the turn"
    );
    let last = slow_seen.last().unwrap().seq;
    let mut again = server.events(&session, last).await;
    let rest = again
        .until(|m| matches!(m, EventMsg::TurnFinished { .. }))
        .await;

    let mut replay = server.events(&session, 0).await;
    let all = replay
        .until(|m| matches!(m, EventMsg::TurnFinished { .. }))
        .await;
    let mut count: BTreeMap<u64, usize> = BTreeMap::new();
    for event in slow_seen.iter().chain(&rest).filter(|e| e.is_durable()) {
        *count.entry(event.seq).or_default() += 1;
    }
    assert!(
        count.values().all(|&n| n == 1),
        "none twice across the reconnect"
    );
    let expected: Vec<u64> = all.iter().map(|e| e.seq).collect();
    assert_eq!(
        count.keys().copied().collect::<Vec<_>>(),
        expected,
        "every durable event once"
    );
    let fast_durable: Vec<u64> = fast_seen
        .iter()
        .filter(|e| e.is_durable())
        .map(|e| e.seq)
        .collect();
    assert_eq!(fast_durable, expected, "the reading client missed nothing");
    server.stop().await;
}
