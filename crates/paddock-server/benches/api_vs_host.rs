//! `cargo bench -p paddock-server --bench api_vs_host`: 16 concurrent sessions × 200 tool
//! calls each, driven once through the host crate directly and once through the server's
//! API (HTTP to start them, a WebSocket each to follow them), in the same run, on the local
//! wall with the real tool-runner and the fake model server (real HTTP).
//!
//! Per call: the time between two consecutive `tool_call_finished` events of a session as its
//! client receives them (model request, approval, the call in the wall, the durable commits,
//! delivery). Printed: p50 and p99 of each path and the p50 ratio (target ≤ 1.3), and the
//! proof that nothing was lost or duplicated (audit rows = calls, every durable event once).
//! `PADDOCK_BENCH_SESSIONS` and `PADDOCK_BENCH_CALLS` change the size.

// A bench binary reports on stdout by design.
#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use futures::StreamExt;
use paddock_host::paths::Paths;
use paddock_host::wiring::Helpers;
use paddock_host::{Host, HostOptions, NewSession};
use paddock_server::{Server, ServerConfig};
use protocol::{ApprovalMode, Event, EventMsg, FolderAccess, FolderGrant};
use serde_json::{Value, json};
use test_support::model_server::{FakeModelServer, Reply};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::protocol::Message;

fn size(variable: &str, default: usize) -> usize {
    std::env::var(variable)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn script(model: &FakeModelServer, marker: &str, calls: usize) {
    for call in 0..calls {
        model.push_for(
            marker,
            Reply::tool_call(
                format!("c{call}"),
                "run_bash",
                json!({"command": format!("echo {call}")}),
            ),
        );
    }
    model.push_for(marker, Reply::final_text("done"));
}

struct Machine {
    _root: tempfile::TempDir,
    paths: Paths,
    folders: Vec<PathBuf>,
}

fn machine(model: &FakeModelServer, sessions: usize) -> Machine {
    let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("paddock-bench");
    std::fs::create_dir_all(&base).unwrap();
    let root = tempfile::Builder::new()
        .prefix("b")
        .tempdir_in(base)
        .unwrap();
    let paths = Paths::under(root.path());
    std::fs::create_dir_all(&paths.config_dir).unwrap();
    std::fs::write(
        paths.config_file(),
        format!(
            "[models]\nprovider = \"anthropic\"\nmodel = \"bench\"\nbase_url = \"{}\"\nkey_store = \"env\"\n",
            model.anthropic_base_url()
        ),
    )
    .unwrap();
    let folders = (0..sessions)
        .map(|n| {
            let folder = root.path().join(format!("work-{n}"));
            std::fs::create_dir_all(&folder).unwrap();
            folder.canonicalize().unwrap()
        })
        .collect();
    Machine {
        _root: root,
        paths,
        folders,
    }
}

async fn open_host(paths: &Paths) -> Host {
    let mut options = HostOptions::new(paths.clone());
    options.helpers = Some(Helpers {
        tool_runner: test_support::binaries::tool_runner(),
        paddock_wall: test_support::binaries::paddock_wall(),
    });
    options.max_steps = Some(10_000);
    Host::open(options).await.unwrap()
}

/// What one session's client saw.
struct Seen {
    gaps: Vec<Duration>,
    events: Vec<Event>,
}

fn record(seen: &mut Seen, last: &mut Option<Instant>, event: &Event) {
    if let EventMsg::ToolCallFinished { .. } = event.msg {
        let now = Instant::now();
        if let Some(previous) = last.replace(now) {
            seen.gaps.push(now - previous);
        }
    }
    seen.events.push(event.clone());
}

async fn through_host(paths: &Paths, folders: &[PathBuf], prefix: &str) -> (Vec<Seen>, Duration) {
    let host = open_host(paths).await;
    let started = Instant::now();
    let mut tasks = Vec::new();
    for (n, folder) in folders.iter().enumerate() {
        let host = host.clone();
        let folder = folder.clone();
        let marker = format!("[{prefix} session {n}]");
        tasks.push(tokio::spawn(async move {
            let info = host
                .create_session(NewSession {
                    folders: vec![FolderGrant {
                        path: folder.display().to_string(),
                        access: FolderAccess::ReadWrite,
                    }],
                    approval_mode: Some(ApprovalMode::Bypass),
                    ..NewSession::default()
                })
                .await
                .unwrap();
            let mut events = host.events(&info.id, 0);
            host.send_turn(&info.id, &marker).await.unwrap();
            let mut seen = Seen {
                gaps: Vec::new(),
                events: Vec::new(),
            };
            let mut last = None;
            loop {
                let event = events.next().await.unwrap().unwrap();
                record(&mut seen, &mut last, &event);
                if matches!(event.msg, EventMsg::TurnFinished { .. }) {
                    break;
                }
            }
            host.close_session(&info.id).await.unwrap();
            seen
        }));
    }
    let mut all = Vec::new();
    for task in tasks {
        all.push(task.await.unwrap());
    }
    (all, started.elapsed())
}

async fn through_api(paths: &Paths, folders: &[PathBuf], prefix: &str) -> (Vec<Seen>, Duration) {
    let host = open_host(paths).await;
    let server = Server::bind(host, ServerConfig::loopback(0)).await.unwrap();
    let (base, token, addr) = (
        server.url().to_owned(),
        server.token().to_owned(),
        server.local_addr().unwrap(),
    );
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(server.run(async {
        let _ = stopped.await;
    }));
    let client = reqwest::Client::new();
    let started = Instant::now();
    let mut tasks = Vec::new();
    for (n, folder) in folders.iter().enumerate() {
        let (client, base, token) = (client.clone(), base.clone(), token.clone());
        let folder = folder.clone();
        let marker = format!("[{prefix} session {n}]");
        tasks.push(tokio::spawn(async move {
            let info: Value = client
                .post(format!("{base}/v1/sessions"))
                .bearer_auth(&token)
                .json(&json!({"folders": [{"path": folder, "access": "read_write"}], "approval_mode": "bypass"}))
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            let id = info["id"].as_str().unwrap().to_owned();
            let mut request = format!("ws://{addr}/v1/sessions/{id}/events?after=0")
                .into_client_request()
                .unwrap();
            request
                .headers_mut()
                .insert("Authorization", format!("Bearer {token}").parse().unwrap());
            let (mut socket, _) = tokio_tungstenite::connect_async(request).await.unwrap();
            let answer = client
                .post(format!("{base}/v1/sessions/{id}/turns"))
                .bearer_auth(&token)
                .json(&json!({"text": marker}))
                .send()
                .await
                .unwrap();
            assert_eq!(answer.status().as_u16(), 202);
            let mut seen = Seen {
                gaps: Vec::new(),
                events: Vec::new(),
            };
            let mut last = None;
            while let Some(message) = socket.next().await {
                let Message::Text(text) = message.unwrap() else {
                    continue;
                };
                let event: Event = serde_json::from_str(&text).unwrap();
                record(&mut seen, &mut last, &event);
                if matches!(event.msg, EventMsg::TurnFinished { .. }) {
                    break;
                }
            }
            let closed = client
                .post(format!("{base}/v1/sessions/{id}/close"))
                .bearer_auth(&token)
                .send()
                .await
                .unwrap();
            assert_eq!(closed.status().as_u16(), 200);
            seen
        }));
    }
    let mut all = Vec::new();
    for task in tasks {
        all.push(task.await.unwrap());
    }
    let elapsed = started.elapsed();
    let _ = stop.send(());
    serving.await.unwrap();
    (all, elapsed)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}

/// Checks that nothing was lost or duplicated; returns the sorted per-call gaps.
fn check(name: &str, seen: &[Seen], calls: usize) -> Vec<Duration> {
    for (n, session) in seen.iter().enumerate() {
        let seqs: Vec<u64> = session.events.iter().map(|e| e.seq).collect();
        assert!(
            seqs.windows(2).all(|w| w[0] < w[1]),
            "{name} session {n}: out of order or twice"
        );
        let finished: BTreeSet<&str> = session
            .events
            .iter()
            .filter_map(|e| match &e.msg {
                EventMsg::ToolCallFinished { call_id, .. } => Some(call_id.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(finished.len(), calls, "{name} session {n}: calls lost");
    }
    let mut gaps: Vec<Duration> = seen.iter().flat_map(|s| s.gaps.iter().copied()).collect();
    gaps.sort();
    gaps
}

fn audit_rows(paths: &Paths) -> (usize, bool) {
    let store = audit_store::AuditStore::open(paths.audit_db()).unwrap();
    let mut query = audit_store::Query {
        kind: Some(audit_store::RecordKind::ToolCall),
        status: Some(audit_store::CallStatus::Finished),
        limit: audit_store::MAX_PAGE,
        ..audit_store::Query::default()
    };
    let mut rows = 0;
    loop {
        let page = store.query(&query).unwrap();
        rows += page.events.len();
        match page.next {
            Some(cursor) => query.cursor = Some(cursor),
            None => break,
        }
    }
    (rows, store.verify().unwrap().is_intact())
}

fn main() {
    // SAFETY: set before the runtime (and any other thread) starts.
    unsafe { std::env::set_var("ANTHROPIC_API_KEY", "bench-key-0123456789") };
    let _ = rustls::crypto::ring::default_provider().install_default();
    let sessions = size("PADDOCK_BENCH_SESSIONS", 16);
    let calls = size("PADDOCK_BENCH_CALLS", 200);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let model = FakeModelServer::start().await.unwrap();
        let machine = machine(&model, sessions);
        for n in 0..sessions {
            script(&model, &format!("[host session {n}]"), calls);
            script(&model, &format!("[api session {n}]"), calls);
        }
        println!("{sessions} sessions × {calls} tool calls, local wall, one state folder");
        let (host_seen, host_time) = through_host(&machine.paths, &machine.folders, "host").await;
        let host_gaps = check("host", &host_seen, calls);
        let (api_seen, api_time) = through_api(&machine.paths, &machine.folders, "api").await;
        let api_gaps = check("api", &api_seen, calls);
        let (rows, intact) = audit_rows(&machine.paths);
        let total = 2 * sessions * calls;
        println!(
            "audit rows of finished calls: {rows} (calls made: {total}); chain intact: {intact}"
        );
        assert_eq!(rows, total, "audit rows = calls");
        assert!(intact);
        let (h50, h99) = (percentile(&host_gaps, 0.5), percentile(&host_gaps, 0.99));
        let (a50, a99) = (percentile(&api_gaps, 0.5), percentile(&api_gaps, 0.99));
        println!(
            "host crate directly: p50 {:.2} ms, p99 {:.2} ms per call; {:.1} s in all",
            h50.as_secs_f64() * 1000.0,
            h99.as_secs_f64() * 1000.0,
            host_time.as_secs_f64()
        );
        println!(
            "server API + WebSocket: p50 {:.2} ms, p99 {:.2} ms per call; {:.1} s in all",
            a50.as_secs_f64() * 1000.0,
            a99.as_secs_f64() * 1000.0,
            api_time.as_secs_f64()
        );
        println!(
            "ratio API / host: p50 {:.2} (target ≤ 1.30), p99 {:.2}",
            a50.as_secs_f64() / h50.as_secs_f64(),
            a99.as_secs_f64() / h99.as_secs_f64()
        );
        println!("lost or duplicated events: 0 (checked per session)");
        assert_eq!(model.remaining_replies(), 0);
    });
}
