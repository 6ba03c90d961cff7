//! The local wall's costs, measured against direct mode in the same run:
//! * wall start, attestation included (target: p50 ≤ 100 ms), and the same wall without its
//!   resource limits (no cgroup), to show what the limits cost, and the floor of any bubblewrap
//!   sandbox: a bare `bwrap` (new namespaces, `/` read-only) running `true`; the folder is a
//!   git repository with editor settings (so the protected-files walk and mounts are included),
//!   and the local start on a plain folder is timed against it, interleaved;
//! * the local start on a large grant ([`LARGE_FOLDERS`] folders of [`LARGE_FILES_PER_FOLDER`]
//!   files, a git repository at its top), interleaved with the plain folder: what the start's
//!   protected-files walk (every folder walked and watched) and set-id sweep (every entry
//!   looked at) cost on a grant of that size;
//! * a small `read_file` through the wall vs through a direct runner (target: within 20 %).
//!
//! `cargo bench -p sandbox-provider --bench local_wall` (set `PADDOCK_TOOL_RUNNER` and
//! `PADDOCK_WALL` to use prebuilt binaries; otherwise they are built). `-- --smoke` (as
//! `cargo xtask bench-smoke` runs it) takes fewer samples and prints the start's ratio to the
//! bare `bwrap` on a `ratio:` line for the smoke to check.

#![allow(clippy::print_stdout, reason = "a bench binary reports on stdout")]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a bench aborts on any failure"
)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use protocol::{FolderAccess, FolderGrant, NetworkProfileName};
use sandbox_provider::direct::DirectProvider;
use sandbox_provider::local::resources::{Amount, CgroupSupport, LimitSettings};
use sandbox_provider::local::{AllowListSource, LocalConfig, LocalProvider};
use sandbox_provider::{Sandbox, SandboxProvider, SandboxRequest};
use tokio_util::sync::CancellationToken;
use tool_protocol::{ReadFile, ToolRequest};

/// The large grant: folders (20 at the top, the rest below them) and files in each.
const LARGE_FOLDERS: usize = 2_000;
const LARGE_FILES_PER_FOLDER: usize = 10;

/// Makes the large grant at `dir`: a git repository holding `LARGE_FOLDERS` folders of
/// `LARGE_FILES_PER_FOLDER` small files each.
fn large_grant(dir: &std::path::Path) {
    std::fs::create_dir(dir).unwrap();
    let out = std::process::Command::new("git")
        .args(["init", "-q"])
        .arg(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let tops = 20;
    for top in 0..tops {
        for sub in 0..LARGE_FOLDERS / tops {
            let folder = dir.join(format!("m{top}/d{sub}"));
            std::fs::create_dir_all(&folder).unwrap();
            for file in 0..LARGE_FILES_PER_FOLDER {
                std::fs::write(folder.join(format!("f{file}.rs")), "fn main() {}\n").unwrap();
            }
        }
    }
}

/// Times the local start on the large grant against the plain folder, interleaved (not in
/// the smoke: making 20,000 files and starting on them is no ratio the smoke checks).
async fn large_start(
    local: &dyn SandboxProvider,
    plain_request: &SandboxRequest,
    root: &std::path::Path,
    starts: usize,
) {
    let large = root.join("large");
    large_grant(&large);
    let large_request = SandboxRequest {
        folders: vec![FolderGrant {
            path: large.display().to_string(),
            access: FolderAccess::ReadWrite,
        }],
        cwd: large.display().to_string(),
        ..plain_request.clone()
    };
    let (mut plain_starts, mut large_starts) =
        time_local_starts(local, plain_request, &large_request, starts).await;
    let (p50, g50) = (
        percentile(&mut plain_starts, 0.5),
        percentile(&mut large_starts, 0.5),
    );
    let g95 = percentile(&mut large_starts, 0.95);
    println!(
        "local start on a large grant ({LARGE_FOLDERS} folders, {} files, a repository), \
         {starts} each, interleaved with the plain folder:",
        LARGE_FOLDERS * LARGE_FILES_PER_FOLDER
    );
    println!("  plain folder           p50 {:8.2} ms", ms(p50));
    println!(
        "  large grant            p50 {:8.2} ms   p95 {:8.2} ms (+{:.2} ms; target p50 <= \
         100 ms: {})",
        ms(g50),
        ms(g95),
        ms(g50) - ms(p50),
        if ms(g50) <= 100.0 { "met" } else { "MISSED" }
    );
}

/// Starts and calls per side: (full run, smoke run).
const STARTS: (usize, usize) = (30, 12);
const CALLS: (usize, usize) = (2000, 400);

fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    let index = ((samples.len() as f64 - 1.0) * p).round() as usize;
    samples[index]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Starts (and closes) a sandbox of each provider in turn, then a bare `bwrap`, so that load
/// from other processes on the machine falls on all of them alike. The last list of the result
/// holds the bare `bwrap` starts.
async fn time_starts(
    providers: &[&dyn SandboxProvider],
    request: &SandboxRequest,
    starts: usize,
) -> Vec<Vec<Duration>> {
    let mut samples = vec![Vec::new(); providers.len() + 1];
    for _ in 0..starts {
        for (provider, samples) in providers.iter().zip(samples.iter_mut()) {
            let started = Instant::now();
            let sandbox = provider.start(request, &|_| {}).await.unwrap();
            samples.push(started.elapsed());
            sandbox.close().await.unwrap();
        }
        let started = Instant::now();
        let status = tokio::process::Command::new("bwrap")
            .args(["--unshare-all", "--die-with-parent", "--ro-bind", "/", "/"])
            .args(["--proc", "/proc", "--dev", "/dev", "true"])
            .status()
            .await
            .unwrap();
        samples[providers.len()].push(started.elapsed());
        assert!(status.success(), "bare bwrap failed: {status}");
    }
    samples
}

/// Starts (and closes) the local wall on two folders in turn: what the second costs more is
/// what its contents cost (here: the protected-files walk and mounts of a repository).
async fn time_local_starts(
    local: &dyn SandboxProvider,
    plain: &SandboxRequest,
    project: &SandboxRequest,
    starts: usize,
) -> (Vec<Duration>, Vec<Duration>) {
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for _ in 0..starts {
        for (request, samples) in [(plain, &mut a), (project, &mut b)] {
            let started = Instant::now();
            let sandbox = local.start(request, &|_| {}).await.unwrap();
            samples.push(started.elapsed());
            sandbox.close().await.unwrap();
        }
    }
    (a, b)
}

/// Times one small read on each sandbox in turn, `CALLS` times.
async fn time_reads(
    direct: &dyn Sandbox,
    local: &dyn Sandbox,
    path: &str,
    calls: usize,
) -> (Vec<Duration>, Vec<Duration>) {
    let cancel = CancellationToken::new();
    let call = || {
        ToolRequest::ReadFile(ReadFile {
            path: path.to_owned(),
            offset: None,
            limit: None,
        })
    };
    for _ in 0..100 {
        direct.call(call(), None, &cancel).await.result.unwrap();
        local.call(call(), None, &cancel).await.result.unwrap();
    }
    let (mut d, mut l) = (Vec::with_capacity(calls), Vec::with_capacity(calls));
    for _ in 0..calls {
        for (sandbox, samples) in [(direct, &mut d), (local, &mut l)] {
            let started = Instant::now();
            sandbox.call(call(), None, &cancel).await.result.unwrap();
            samples.push(started.elapsed());
        }
    }
    (d, l)
}

fn main() {
    let smoke = std::env::args().any(|arg| arg == "--smoke");
    let (starts, calls) = if smoke {
        (STARTS.1, CALLS.1)
    } else {
        (STARTS.0, CALLS.0)
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let root = tempfile::tempdir().unwrap();
        let work = root.path().join("work");
        std::fs::create_dir(&work).unwrap();
        std::fs::create_dir(root.path().join("home")).unwrap();
        let file = work.join("small.txt");
        std::fs::write(&file, "a small file\n".repeat(20)).unwrap();
        // A project as users grant them: a repository with editor settings and an .envrc.
        let out = std::process::Command::new("git")
            .args(["init", "-q"])
            .arg(&work)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        std::fs::create_dir(work.join(".vscode")).unwrap();
        std::fs::write(work.join(".vscode/settings.json"), "{}").unwrap();
        std::fs::write(work.join(".envrc"), "export X=1\n").unwrap();
        let request = SandboxRequest {
            session_id: "bench".into(),
            folders: vec![FolderGrant {
                path: work.display().to_string(),
                access: FolderAccess::ReadWrite,
            }],
            cwd: work.display().to_string(),
            network_profile: NetworkProfileName::Strict,
            extra_hosts: Vec::new(),
            credentials: Vec::new(),
        };
        let runner = test_support::binaries::tool_runner();
        let local = LocalProvider::new(LocalConfig::new(
            runner.clone(),
            test_support::binaries::paddock_wall(),
            root.path().join("state"),
            root.path().join("home"),
            Arc::new(AllowListSource::builtin().unwrap()),
        ));
        let mut unlimited = LocalConfig::new(
            runner.clone(),
            test_support::binaries::paddock_wall(),
            root.path().join("state-unlimited"),
            root.path().join("home"),
            Arc::new(AllowListSource::builtin().unwrap()),
        );
        unlimited.cgroup_support = Some(CgroupSupport::Unavailable {
            why: "the bench measures the wall without limits".into(),
        });
        unlimited.limits = LimitSettings {
            processes: Amount::Unlimited,
            memory: Amount::Unlimited,
            swap: Amount::Unlimited,
            cpus: Amount::Unlimited,
        };
        let unlimited = LocalProvider::new(unlimited);
        let direct = DirectProvider::new(runner);

        let mut samples = time_starts(&[&direct, &local, &unlimited], &request, starts).await;
        let (d50, l50, u50, b50) = (
            percentile(&mut samples[0], 0.5),
            percentile(&mut samples[1], 0.5),
            percentile(&mut samples[2], 0.5),
            percentile(&mut samples[3], 0.5),
        );
        let mut local_starts = samples.swap_remove(1);
        let l95 = percentile(&mut local_starts, 0.95);
        println!("start (attestation included), {starts} starts each:");
        println!("  direct  p50 {:8.2} ms", ms(d50));
        println!("  bare bwrap running `true`, p50 {:8.2} ms", ms(b50));
        println!(
            "  local   p50 {:8.2} ms   p95 {:8.2} ms   (target p50 <= 100 ms: {})",
            ms(l50),
            ms(l95),
            if ms(l50) <= 100.0 { "met" } else { "MISSED" }
        );
        println!(
            "  ratio local/direct {:.2}, local/bare bwrap {:.2}",
            l50.as_secs_f64() / d50.as_secs_f64(),
            l50.as_secs_f64() / b50.as_secs_f64()
        );
        if smoke {
            println!(
                "ratio: local_wall.start_over_bare_bwrap = {:.2}",
                l50.as_secs_f64() / b50.as_secs_f64()
            );
        }
        let probe = local.start(&request, &|_| {}).await.unwrap();
        let mechanism = probe
            .attestation()
            .limits
            .as_ref()
            .map_or("none", |l| l.mechanism.as_str());
        probe.close().await.unwrap();
        println!("  local without resource limits p50 {:8.2} ms", ms(u50));
        println!(
            "  ratio with limits ({mechanism}) / without {:.2}",
            l50.as_secs_f64() / u50.as_secs_f64()
        );

        let plain = root.path().join("plain");
        std::fs::create_dir(&plain).unwrap();
        std::fs::write(plain.join("small.txt"), "a small file\n").unwrap();
        let plain_request = SandboxRequest {
            folders: vec![FolderGrant {
                path: plain.display().to_string(),
                access: FolderAccess::ReadWrite,
            }],
            cwd: plain.display().to_string(),
            ..request.clone()
        };
        let (mut plain_starts, mut project_starts) =
            time_local_starts(&local, &plain_request, &request, starts).await;
        let (p50, r50) = (
            percentile(&mut plain_starts, 0.5),
            percentile(&mut project_starts, 0.5),
        );
        println!("local start, {starts} each, interleaved:");
        println!("  plain folder           p50 {:8.2} ms", ms(p50));
        println!(
            "  repository (+ .vscode, .envrc: walked, 6 protected mounts) p50 {:8.2} ms (+{:.2} ms)",
            ms(r50),
            ms(r50) - ms(p50)
        );

        if !smoke {
            large_start(&local, &plain_request, root.path(), starts).await;
        }

        let path = file.display().to_string();
        let direct_sandbox = direct.start(&request, &|_| {}).await.unwrap();
        let local_sandbox = local.start(&request, &|_| {}).await.unwrap();
        let (mut direct_reads, mut local_reads) = time_reads(
            direct_sandbox.as_ref(),
            local_sandbox.as_ref(),
            &path,
            calls,
        )
        .await;
        let (d, l) = (
            percentile(&mut direct_reads, 0.5),
            percentile(&mut local_reads, 0.5),
        );
        println!("read_file of a 260-byte file, {calls} calls each on one persistent runner:");
        println!(
            "  direct  p50 {:8.1} µs   p95 {:8.1} µs",
            d.as_secs_f64() * 1e6,
            percentile(&mut direct_reads, 0.95).as_secs_f64() * 1e6
        );
        println!(
            "  local   p50 {:8.1} µs   p95 {:8.1} µs",
            l.as_secs_f64() * 1e6,
            percentile(&mut local_reads, 0.95).as_secs_f64() * 1e6
        );
        let ratio = l.as_secs_f64() / d.as_secs_f64();
        println!(
            "  ratio local/direct {ratio:.2} (target <= 1.20: {})",
            if ratio <= 1.2 { "met" } else { "MISSED" }
        );
        direct_sandbox.close().await.unwrap();
        local_sandbox.close().await.unwrap();
    });
}
