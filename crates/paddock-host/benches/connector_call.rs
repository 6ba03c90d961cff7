//! `cargo bench -p paddock-host --bench connector_call`: a connector tool call through the
//! host against a direct `rmcp` client call to the same MCP server.
//!
//! Both sides call `lookup` (the read-only tool of the MCP test server, the
//! `mcp-test-server` binary over stdio), interleaved round by round in one run:
//!
//! - direct: one `rmcp` client session with its own server process; per call, `tools/call`
//!   sent until its answer is back.
//! - host: a real `Host` (machine config with the server as the `[[connectors]]` entry
//!   `tracker`, its token from the file key store), one session in `bypass` mode, driven by
//!   the fake model server (real HTTP, Anthropic wire) answering each step with a line of text
//!   and one `lookup`. Per call = from the step's `assistant_message` (committed, then
//!   delivered, just before the host takes the call up) to the call's `tool_call_finished`
//!   as the host's event stream delivers them: the tool looked up and its input checked, the
//!   approval gate (bypass: no prompt), the call's request, approval and start committed to
//!   the audit trail and the event log, the MCP round trip through the connector's
//!   supervisor, the result cleaned of secrets, and `tool_call_finished` committed to both.
//!   The model's requests are outside it; the whole step (finished to finished, one fake
//!   model request included) is printed too. Two hosts take turns: the audit trail's default
//!   durability (`flushed`) and `full` (an fsync per commit).
//!
//! `PADDOCK_BENCH_ROUNDS` (default 10) × `PADDOCK_BENCH_CALLS` (default 20) calls per side.

// A bench binary reports on stdout by design.
#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::time::{Duration, Instant};

use model_client::{ApiKey, KeyStore, KeyStoreKind};
use paddock_host::paths::Paths;
use paddock_host::{Host, HostOptions, NewSession};
use protocol::{ApprovalMode, EventMsg, FolderAccess, FolderGrant};
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt, service::RunningService};
use serde_json::json;
use test_support::model_server::{FakeModelServer, Reply, sse};

const TOKEN: &str = "tok-bench-connector-secret-0123456789";
const WAIT: Duration = Duration::from_secs(60);

fn env_count(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn percentile(samples: &[Duration], p: f64) -> Duration {
    let mut sorted = samples.to_vec();
    sorted.sort();
    let rank = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[rank]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

struct Machine {
    _root: tempfile::TempDir,
    host: Host,
    model: FakeModelServer,
    session: String,
}

/// The key store both machines read (a file store under one `XDG_STATE_HOME`): the model key
/// and the connector's token.
fn store_keys() -> tempfile::TempDir {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let keys = tempfile::tempdir().unwrap();
    // SAFETY: set before any other thread of this process reads the environment.
    unsafe { std::env::set_var("XDG_STATE_HOME", keys.path()) };
    let store = KeyStore::open(KeyStoreKind::File).unwrap();
    store
        .set("anthropic", &ApiKey::new("sk-ant-bench-model-key").unwrap())
        .unwrap();
    store
        .set("connector-tracker", &ApiKey::new(TOKEN).unwrap())
        .unwrap();
    keys
}

/// A host whose audit trail has `durability` (`audit.durability`), with the MCP test server
/// as its connector `tracker` and one session in bypass mode.
async fn machine(durability: &str) -> Machine {
    let root = tempfile::tempdir().unwrap();
    let model = FakeModelServer::start().await.unwrap();
    let paths = Paths::under(root.path());
    std::fs::create_dir_all(&paths.config_dir).unwrap();
    std::fs::write(
        paths.config_file(),
        format!(
            "[models]\nprovider = \"anthropic\"\nmodel = \"claude-test\"\nbase_url = \"{}\"\nkey_store = \"file\"\n\n\
             [audit]\ndurability = \"{durability}\"\n\n\
             [[connectors]]\nname = \"tracker\"\ntransport = \"stdio\"\ncommand = \"{}\"\nenv = {{ MCP_TEST_TOKEN = \"{{secret}}\" }}\n",
            model.anthropic_base_url(),
            test_support::binaries::mcp_test_server().display()
        ),
    )
    .unwrap();
    let work = root.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let host = Host::open(HostOptions::new(paths)).await.unwrap();
    let session = host
        .create_session(NewSession {
            folders: vec![FolderGrant {
                path: work.display().to_string(),
                access: FolderAccess::ReadWrite,
            }],
            approval_mode: Some(ApprovalMode::Bypass),
            ..NewSession::default()
        })
        .await
        .unwrap()
        .id;
    Machine {
        _root: root,
        host,
        model,
        session,
    }
}

/// One turn of `calls` lookups, one per model step. Returns (requested → finished per call,
/// finished → finished per step).
async fn host_round(
    machine: &Machine,
    round: usize,
    calls: usize,
) -> (Vec<Duration>, Vec<Duration>) {
    for i in 0..calls {
        // A line of text before each call: its `assistant_message` is committed and delivered
        // just before the host takes the call up, so the span below starts where the host's
        // own work for the call does.
        machine.model.push(Reply::stream([
            sse::text(format!("looking up q{i}")),
            sse::tool_use(
                format!("toolu_{round}_{i}"),
                "mcp__tracker__lookup",
                json!({"query": format!("q{i}")}),
            ),
            sse::stop("tool_use"),
        ]));
    }
    machine.model.push(Reply::final_text("Done."));
    let after = machine.host.last_event_seq(&machine.session).await.unwrap();
    let mut events = machine.host.events(&machine.session, after);
    machine
        .host
        .send_turn(&machine.session, "look up")
        .await
        .unwrap();
    let mut taken_up: Option<Instant> = None;
    let mut per_call = Vec::new();
    let mut steps = Vec::new();
    let mut last_finished: Option<Instant> = None;
    loop {
        let event = tokio::time::timeout(WAIT, events.next())
            .await
            .expect("the turn went quiet")
            .unwrap()
            .unwrap();
        let now = Instant::now();
        match &event.msg {
            EventMsg::AssistantMessage { .. } => taken_up = Some(now),
            EventMsg::ToolCallAwaitingApproval { .. } => {
                panic!("bypass mode asked for an approval")
            }
            EventMsg::ToolCallFinished { status, .. } => {
                assert_eq!(
                    *status,
                    protocol::ToolCallStatus::Ok,
                    "the connector call failed: {event:?}"
                );
                let began = taken_up.take().expect("a step's text came before its call");
                per_call.push(now - began);
                if let Some(last) = last_finished {
                    steps.push(now - last);
                }
                last_finished = Some(now);
            }
            EventMsg::TurnFinished { .. } => break,
            _ => {}
        }
    }
    assert_eq!(per_call.len(), calls, "every scripted call finished");
    (per_call, steps)
}

async fn direct_client() -> RunningService<RoleClient, ()> {
    let mut command = tokio::process::Command::new(test_support::binaries::mcp_test_server());
    command.env("MCP_TEST_TOKEN", TOKEN).kill_on_drop(true);
    ().serve(TokioChildProcess::new(command).unwrap())
        .await
        .unwrap()
}

async fn direct_round(client: &RunningService<RoleClient, ()>, calls: usize) -> Vec<Duration> {
    let mut samples = Vec::with_capacity(calls);
    for i in 0..calls {
        let mut arguments = serde_json::Map::new();
        arguments.insert("query".into(), json!(format!("q{i}")));
        let params = CallToolRequestParams::new("lookup").with_arguments(arguments);
        let began = Instant::now();
        let result = client.call_tool(params).await.unwrap();
        samples.push(began.elapsed());
        assert_ne!(result.is_error, Some(true), "{result:?}");
    }
    samples
}

fn row(name: &str, samples: &[Duration]) -> (Duration, Duration) {
    let (p50, p99) = (percentile(samples, 0.5), percentile(samples, 0.99));
    println!(
        "{name:<58} p50 {:>8.3} ms   p99 {:>8.3} ms   (n = {})",
        ms(p50),
        ms(p99),
        samples.len()
    );
    (p50, p99)
}

/// The connector's finished rows in the audit trail (every page of its tool-call rows).
async fn finished_rows(machine: &Machine) -> usize {
    let mut query = audit_store::Query {
        tool: Some("mcp__tracker__lookup".into()),
        status: Some(audit_store::CallStatus::Finished),
        limit: 1000,
        ..audit_store::Query::default()
    };
    let mut rows = 0;
    loop {
        let page = machine.host.audit_query(query.clone()).await.unwrap();
        rows += page
            .events
            .iter()
            .filter(|e| {
                matches!(&e.record, audit_store::AuditRecord::ToolCall(call)
                    if call.connector.as_deref() == Some("tracker"))
            })
            .count();
        match page.next {
            Some(next) => query.cursor = Some(next),
            None => return rows,
        }
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let rounds = env_count("PADDOCK_BENCH_ROUNDS", 10);
    let calls = env_count("PADDOCK_BENCH_CALLS", 20);
    let server: PathBuf = test_support::binaries::mcp_test_server();
    println!("MCP test server: {}", server.display());
    let _keys = store_keys();
    // The default (`flushed`) and `full`, each its own host, state folder and server.
    let flushed = machine("flushed").await;
    let full = machine("full").await;
    let client = direct_client().await;
    // Warm-up: every server started, every path's first calls out of the way.
    host_round(&flushed, 0, 3).await;
    host_round(&full, 0, 3).await;
    direct_round(&client, 3).await;

    let mut direct = Vec::new();
    let (mut host, mut steps) = (Vec::new(), Vec::new());
    let mut host_full = Vec::new();
    for round in 1..=rounds {
        direct.extend(direct_round(&client, calls).await);
        let (per_call, step) = host_round(&flushed, round, calls).await;
        host.extend(per_call);
        steps.extend(step);
        host_full.extend(host_round(&full, round, calls).await.0);
    }
    let (direct_p50, direct_p99) = row("direct rmcp client `tools/call` (stdio)", &direct);
    let (host_p50, host_p99) = row(
        "host, audit `flushed` (default): call taken up -> finished",
        &host,
    );
    let (full_p50, full_p99) = row("host, audit `full`: call taken up -> finished", &host_full);
    row(
        "host, `flushed`: whole step (incl. one fake model request)",
        &steps,
    );
    let ratio = |a: Duration, b: Duration| a.as_secs_f64() / b.as_secs_f64();
    println!(
        "ratio host / direct, audit `flushed` (default): p50 {:.2}x (target <= 1.5x)   p99 {:.2}x",
        ratio(host_p50, direct_p50),
        ratio(host_p99, direct_p99)
    );
    println!(
        "ratio host / direct, audit `full`: p50 {:.2}x   p99 {:.2}x",
        ratio(full_p50, direct_p50),
        ratio(full_p99, direct_p99)
    );
    let expected = rounds * calls + 3;
    for (name, machine) in [("flushed", &flushed), ("full", &full)] {
        let rows = finished_rows(machine).await;
        println!(
            "audit trail ({name}): {rows} finished connector tool-call rows for {expected} host calls"
        );
        assert_eq!(rows, expected, "every call has its finished row");
    }
    drop(client);
    flushed.host.shutdown().await;
    full.host.shutdown().await;
}
