//! 64 MiB `download` through the host's real path (`RunnerConnection::download`, the tool-runner
//! in stdio mode as the direct provider starts it) against a raw pipe (`cat FILE` read to
//! memory), measured in the same run, interleaved. Target: at least 50 % of the pipe's throughput.
//!
//! `cargo bench -p sandbox-provider --bench runner_download` (`PADDOCK_TOOL_RUNNER` names the
//! runner; `cargo xtask bench` sets it to the static release build).

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::io::Read;
use std::process::Stdio;
use std::time::{Duration, Instant};

use sandbox_provider::RunnerConnection;
use tokio_util::sync::CancellationToken;

const SIZE: usize = 64 << 20;
const ROUNDS: usize = 9;

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort_unstable();
    times[times.len() / 2]
}

fn mib_per_s(d: Duration) -> f64 {
    (SIZE as f64 / (1 << 20) as f64) / d.as_secs_f64()
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let folder = tempfile::TempDir::new().unwrap();
    let file = folder.path().join("big.bin");
    let bytes: Vec<u8> = (0..SIZE as u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 11) as u8)
        .collect();
    std::fs::write(&file, &bytes).unwrap();
    let runner = test_support::binaries::tool_runner();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let root = folder.path().to_str().unwrap().to_owned();
    let (connection, _child) = runtime.block_on(async {
        let mut child = tokio::process::Command::new(&runner)
            .args(["stdio", "--root", &format!("{root}:rw"), "--cwd", &root])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let connection = RunnerConnection::open(stdout, stdin, Duration::from_secs(10))
            .await
            .unwrap();
        (connection, child)
    });
    let cancel = CancellationToken::new();
    let mut ours = Vec::new();
    let mut pipe = Vec::new();
    for _ in 0..ROUNDS {
        let started = Instant::now();
        let (got, _) = runtime
            .block_on(connection.download("big.bin", &cancel))
            .unwrap();
        ours.push(started.elapsed());
        assert_eq!(got.len(), SIZE);

        let started = Instant::now();
        let mut child = std::process::Command::new("cat")
            .arg(&file)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut received = Vec::with_capacity(SIZE);
        child
            .stdout
            .take()
            .unwrap()
            .read_to_end(&mut received)
            .unwrap();
        child.wait().unwrap();
        pipe.push(started.elapsed());
        assert_eq!(received.len(), SIZE);
    }
    let best = |times: &[Duration]| times.iter().copied().min().unwrap_or_default();
    let (ours_best, pipe_best) = (best(&ours), best(&pipe));
    let (ours, pipe) = (median(ours), median(pipe));
    println!("download 64 MiB through RunnerConnection (median of {ROUNDS}, interleaved with cat)");
    println!(
        "  RunnerConnection::download  {:>7.1} ms  {:>6.0} MiB/s",
        ours.as_secs_f64() * 1e3,
        mib_per_s(ours)
    );
    println!(
        "  raw pipe (cat)              {:>7.1} ms  {:>6.0} MiB/s",
        pipe.as_secs_f64() * 1e3,
        mib_per_s(pipe)
    );
    println!(
        "  download / raw pipe         {:.0} % of the pipe's throughput (medians); best rounds {:.1} ms vs {:.1} ms: {:.0} %",
        100.0 * pipe.as_secs_f64() / ours.as_secs_f64(),
        ours_best.as_secs_f64() * 1e3,
        pipe_best.as_secs_f64() * 1e3,
        100.0 * pipe_best.as_secs_f64() / ours_best.as_secs_f64()
    );
}
