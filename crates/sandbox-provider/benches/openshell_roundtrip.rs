//! Tool-call round trip through an OpenShell sandbox (the gateway double, over real gRPC with
//! mTLS, processes inside the local wall): a `read_file` over the one attached
//! `ExecSandboxInteractive` stream, against the peers' pattern of one `ExecSandbox` running
//! `cat FILE` per call. Both are measured in the same run; the ratio is printed.
//!
//! `cargo bench -p sandbox-provider --bench openshell_roundtrip`; `-- --smoke` (as
//! `cargo xtask bench-smoke` runs it) takes fewer rounds and prints the ratio of the medians on
//! a `ratio:` line for the smoke to check.

#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    reason = "a bench binary: it prints its figures, and a panic is a failed run"
)]

#[path = "../tests/suite/openshell_support/mod.rs"]
mod openshell_support;

use std::time::{Duration, Instant};

use openshell_support::{Auth, Harness};
use sandbox_provider::SandboxProvider;
use sandbox_provider::openshell::ExecSpec;
use tokio_util::sync::CancellationToken;
use tool_protocol::{ReadFile, ToolRequest, ToolResult};

/// Warm-up rounds and measured rounds: (full run, smoke run).
const WARMUP: (usize, usize) = (10, 5);
const ROUNDS: (usize, usize) = (200, 40);

struct Figures {
    median: Duration,
    mean: Duration,
    p90: Duration,
}

fn figures(mut samples: Vec<Duration>) -> Figures {
    samples.sort();
    let total: Duration = samples.iter().sum();
    Figures {
        median: samples[samples.len() / 2],
        mean: total / u32::try_from(samples.len()).unwrap(),
        p90: samples[samples.len() * 9 / 10],
    }
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(run());
}

async fn run() {
    let smoke = std::env::args().any(|arg| arg == "--smoke");
    let (warmup, rounds) = if smoke {
        (WARMUP.1, ROUNDS.1)
    } else {
        (WARMUP.0, ROUNDS.0)
    };
    let h = Harness::start(Auth::Mtls).await;
    let file = h.rw.join("bench.txt");
    std::fs::write(&file, "one line of text for every round trip\n".repeat(20)).unwrap();
    let path = file.display().to_string();
    let provider = h.provider();
    let sandbox = provider.start(&h.request(false), &|_| {}).await.unwrap();
    let gateway = provider.gateway().await.unwrap();
    let cancel = CancellationToken::new();

    let attached = |path: String| {
        let sandbox = sandbox.clone();
        let cancel = cancel.clone();
        async move {
            let request = ToolRequest::ReadFile(ReadFile {
                path,
                offset: None,
                limit: None,
            });
            let outcome = sandbox.call(request, None, &cancel).await;
            assert!(
                matches!(outcome.result, Ok(ToolResult::ReadFile(_))),
                "{outcome:?}"
            );
        }
    };
    let per_exec = |path: String| {
        let gateway = gateway.clone();
        let name = sandbox_provider::Sandbox::id(&*sandbox).to_owned();
        async move {
            let spec = ExecSpec {
                argv: vec!["cat".into(), path],
                timeout: Duration::from_secs(30),
                ..ExecSpec::default()
            };
            let outcome = gateway.exec(&name, &spec).await.unwrap();
            assert_eq!(outcome.exit_code, 0);
        }
    };

    for _ in 0..warmup {
        attached(path.clone()).await;
        per_exec(path.clone()).await;
    }
    let mut attached_samples = Vec::with_capacity(rounds);
    let mut exec_samples = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let started = Instant::now();
        attached(path.clone()).await;
        attached_samples.push(started.elapsed());
        let started = Instant::now();
        per_exec(path.clone()).await;
        exec_samples.push(started.elapsed());
    }
    let a = figures(attached_samples);
    let e = figures(exec_samples);
    println!(
        "openshell tool-call round trip through the gateway double ({rounds} rounds, interleaved)"
    );
    println!("{:<40} {:>12} {:>12} {:>12}", "", "median", "mean", "p90");
    println!(
        "{:<40} {:>12.3?} {:>12.3?} {:>12.3?}",
        "attached stream (read_file)", a.median, a.mean, a.p90
    );
    println!(
        "{:<40} {:>12.3?} {:>12.3?} {:>12.3?}",
        "one ExecSandbox per call (cat FILE)", e.median, e.mean, e.p90
    );
    println!(
        "ratio (exec / attached): median {:.1}x, mean {:.1}x",
        e.median.as_secs_f64() / a.median.as_secs_f64(),
        e.mean.as_secs_f64() / a.mean.as_secs_f64()
    );
    if smoke {
        println!(
            "ratio: openshell.exec_over_attached = {:.2}",
            e.median.as_secs_f64() / a.median.as_secs_f64()
        );
    }
    sandbox_provider::Sandbox::close(&*sandbox).await.unwrap();
}
