//! `cargo bench -p paddock --bench turn_durability`: what the durability contract costs a turn.
//!
//! One session runs the same tool turn (model asks for `read_file`, then answers) again and
//! again over the fake model server (real HTTP) and the real tool-runner (`direct` provider),
//! with three sinks measured in the same run: no audit (the baseline), the audit store with
//! `synchronous=NORMAL`, and with `synchronous=FULL` (the default). Every durable event is
//! committed before the turn goes on, so the difference is the audit trail's cost per turn.
//! `PADDOCK_BENCH_TURNS` sets the turns per sink (default 60).

// A bench binary reports on stdout by design.
#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use agent::{
    AgentConfig, DiscardSink, EventBus, EventSink, InMemorySessionStore, Session, SessionDeps,
    ToolRegistry,
};
use audit_store::{AuditStore, Durability, OpenOptions};
use model_client::{ApiKey, ClientConfig, Vendor};
use paddock_host::audit_sink::AuditSink;
use protocol::{
    ApprovalMode, EventMsg, FolderAccess, FolderGrant, NetworkProfileName, Op, SessionSettings,
};
use sandbox_provider::direct::DirectProvider;
use serde_json::json;
use test_support::model_server::{FakeModelServer, Reply};

async fn turns(sink: Arc<dyn EventSink>, count: usize) -> Vec<Duration> {
    let server = FakeModelServer::start().await.unwrap();
    let work = tempfile::tempdir().unwrap();
    let work = work.path().canonicalize().unwrap();
    let file = work.join("data.txt");
    std::fs::write(&file, "line\n".repeat(100)).unwrap();
    let bus = EventBus::new(sink, 4096);
    let mut events = bus.subscribe();
    let client = ClientConfig::new(
        server.anthropic_base_url(),
        Some(ApiKey::new("bench-key").unwrap()),
    );
    let deps = SessionDeps {
        model: model_client::connect(Vendor::Anthropic, &client).unwrap(),
        provider: Arc::new(DirectProvider::new(test_support::binaries::tool_runner())),
        store: Arc::new(InMemorySessionStore::new()),
        bus,
        tools: ToolRegistry::sandbox_tools(),
        config: AgentConfig::new("bench"),
    };
    let settings = SessionSettings {
        folders: vec![FolderGrant {
            path: work.display().to_string(),
            access: FolderAccess::ReadWrite,
        }],
        cwd: None,
        network_profile: NetworkProfileName::Strict,
        extra_hosts: vec![],
        credentials: vec![],
        secrets: vec![],
        model: None,
        approval_mode: ApprovalMode::Ask,
    };
    let session = Session::start(deps, settings).await.unwrap();
    let mut times = Vec::with_capacity(count);
    // One warm-up turn builds the sandbox.
    for index in 0..=count {
        server.push(Reply::tool_call(
            format!("c{index}"),
            "read_file",
            json!({"path": file.display().to_string()}),
        ));
        server.push(Reply::final_text("ok"));
        let started = Instant::now();
        session
            .submit(Op::UserTurn {
                text: "read".into(),
            })
            .unwrap();
        loop {
            let event = events.recv().await.unwrap();
            if matches!(event.msg, EventMsg::TurnFinished { .. }) {
                break;
            }
        }
        if index > 0 {
            times.push(started.elapsed());
        }
    }
    session.submit(Op::Close).unwrap();
    session.closed().await;
    times
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn audit_sink(durability: Durability, dir: &std::path::Path) -> Arc<dyn EventSink> {
    let store = AuditStore::open_with(dir.join("audit.db"), &OpenOptions { durability }).unwrap();
    Arc::new(AuditSink::new(store))
}

fn main() {
    let count: usize = std::env::var("PADDOCK_BENCH_TURNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(60);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let normal_dir = tempfile::tempdir().unwrap();
    let full_dir = tempfile::tempdir().unwrap();
    let baseline = median(runtime.block_on(turns(Arc::new(DiscardSink), count)));
    let normal = median(runtime.block_on(turns(
        audit_sink(Durability::Normal, normal_dir.path()),
        count,
    )));
    let full =
        median(runtime.block_on(turns(audit_sink(Durability::Full, full_dir.path()), count)));
    println!("one tool turn (2 model requests, 1 read_file), median of {count} turns:");
    for (name, time) in [
        ("no audit (baseline)", baseline),
        ("audit, synchronous=NORMAL", normal),
        ("audit, synchronous=FULL", full),
    ] {
        println!(
            "  {name:<28} {:>8.2} ms  ratio {:.2}",
            time.as_secs_f64() * 1000.0,
            time.as_secs_f64() / baseline.as_secs_f64()
        );
    }
}
