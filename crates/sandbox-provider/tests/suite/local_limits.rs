//! Resource limits per sandbox, through the real runner inside the real wall: processes past
//! the limit do not start, a fork bomb and a memory hog leave the host and another live session
//! working and the session itself recovers, a CPU hog is throttled, the limits in force are in
//! the attestation, and a wall's cgroup goes with it (orphans are reaped).
//!
//! The limits are set small for the tests; the kernel's own counters (`pids.events`,
//! `cpu.stat`) show that a limit was reached, not a clock.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed set-up step fails the test"
)]

use crate::support;

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use protocol::LimitMechanism;
use sandbox_provider::local::LocalSandbox;
use sandbox_provider::local::resources::{Amount, CgroupSupport, LimitSettings, WallCgroup};
use sandbox_provider::{Sandbox, SandboxProvider};
use support::*;
use tokio_util::sync::CancellationToken;
use tool_protocol::{RunBash, ToolRequest, ToolResult};

const PROCESSES: u64 = 128;
const MEMORY: u64 = 256 << 20;

fn small_limits() -> LimitSettings {
    LimitSettings {
        processes: Amount::Exactly(PROCESSES),
        memory: Amount::Exactly(MEMORY),
        swap: Amount::Exactly(0),
        cpus: Amount::Exactly(200),
    }
}

fn small() -> World {
    world_with(WorldOptions {
        limits: Some(small_limits()),
        ..WorldOptions::default()
    })
}

/// The folders of a wall's cgroup (one per cgroup v1 hierarchy).
fn cgroup_dirs(sandbox: &LocalSandbox) -> Vec<PathBuf> {
    sandbox
        .cgroup()
        .expect("this machine gives each wall a cgroup (cgroup v1 as root, or delegated v2)")
        .procs_files()
        .iter()
        .map(|p| p.parent().unwrap().to_path_buf())
        .collect()
}

/// A counter of a flat-keyed cgroup file (`pids.events`, `cpu.stat`) in any of the folders.
fn counter(dirs: &[PathBuf], file: &str, key: &str) -> Option<u64> {
    dirs.iter().find_map(|dir| {
        let text = std::fs::read_to_string(dir.join(file)).ok()?;
        text.lines().find_map(|l| {
            let (k, v) = l.split_once(' ')?;
            (k == key).then(|| v.trim().parse().ok()).flatten()
        })
    })
}

fn host_still_starts_processes() {
    let status = std::process::Command::new("true")
        .status()
        .expect("the host can start a process");
    assert!(status.success());
}

async fn alive(sandbox: &dyn Sandbox, who: &str) {
    let r = bash(sandbox, "echo alive").await;
    assert_eq!(
        stdout(&r),
        "alive\n",
        "{who} does not answer: {}",
        stderr(&r)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_limits_in_force_are_in_the_attestation_and_go_with_the_wall() {
    let w = small();
    let s = w.start().await;
    let attestation = s.attestation();
    let canary = attestation
        .canaries
        .iter()
        .find(|c| c.name == "resource_limits")
        .expect("the resource_limits canary ran");
    assert!(canary.passed, "{canary:?}");
    let limits = attestation.limits.clone().expect("the limits are recorded");
    assert!(
        matches!(
            limits.mechanism,
            LimitMechanism::CgroupV1 | LimitMechanism::CgroupV2
        ),
        "{limits:?}"
    );
    assert_eq!(
        (limits.processes, limits.memory_bytes, limits.cpu_millis),
        (Some(PROCESSES), Some(MEMORY), Some(200)),
        "{limits:?}"
    );
    let dirs = cgroup_dirs(&s);
    assert!(dirs.iter().all(|d| d.is_dir()), "{dirs:?}");
    s.close().await.unwrap();
    assert!(
        dirs.iter().all(|d| !d.exists()),
        "the wall's cgroup outlived it: {dirs:?}"
    );
}

/// Forks up to 400 sleeping children; prints `started refused`.
const FORK_400: &str = r#"python3 - <<'PY'
import os, time
pids, refused = [], 0
for _ in range(400):
    try:
        pid = os.fork()
    except OSError:
        refused += 1
        continue
    if pid == 0:
        time.sleep(60)
        os._exit(0)
    pids.append(pid)
print(len(pids), refused)
for pid in pids:
    os.kill(pid, 9)
for pid in pids:
    os.waitpid(pid, 0)
PY"#;

#[tokio::test(flavor = "multi_thread")]
async fn processes_beyond_the_limit_do_not_start() {
    let w = small();
    let s = w.start().await;
    let r = bash(&*s, FORK_400).await;
    let out = stdout(&r);
    let (started, refused) = out
        .trim()
        .split_once(' ')
        .unwrap_or_else(|| panic!("{out} {}", stderr(&r)));
    let (started, refused): (u64, u64) = (started.parse().unwrap(), refused.parse().unwrap());
    assert!(
        refused > 0 && started < PROCESSES,
        "{started} processes started and {refused} were refused"
    );
    alive(&*s, "the session after its processes were refused").await;
    s.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_fork_bomb_leaves_the_host_and_another_session_working() {
    let w = small();
    let bombing = w.start().await;
    let other = w.start().await;
    let dirs = cgroup_dirs(&bombing);
    let bomb = tokio::spawn({
        let bombing = bombing.clone();
        async move {
            bombing
                .call(
                    ToolRequest::RunBash(RunBash {
                        command: "bomb() { bomb | bomb & }; bomb".into(),
                        cwd: None,
                        env: None,
                        stdin: None,
                        timeout_ms: Some(15_000),
                        max_output_bytes: Some(4096),
                    }),
                    None,
                    &CancellationToken::new(),
                )
                .await
        }
    });
    // The bomb has run into the limit: the kernel counted refused forks.
    let started = Instant::now();
    while counter(&dirs, "pids.events", "max").unwrap_or(0) == 0 {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the bomb never reached the process limit"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    host_still_starts_processes();
    alive(&*other, "another session during the fork bomb").await;

    // The runner kills the call's process group once the shell is gone and its output is
    // still held: the bomb ends with its call.
    let outcome = bomb.await.unwrap();
    assert!(
        matches!(outcome.result, Ok(ToolResult::RunBash(_))),
        "{:?}",
        outcome.result
    );
    alive(&*bombing, "the session after its fork bomb").await;
    host_still_starts_processes();
    bombing.close().await.unwrap();
    other.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_memory_hog_is_stopped_at_the_limit() {
    let w = small();
    let hog = w.start().await;
    let other = w.start().await;
    let r = bash(
        &*hog,
        "python3 -c \"b = b'x' * (768 << 20); print('ALLOCATED', len(b))\"",
    )
    .await;
    assert!(
        !stdout(&r).contains("ALLOCATED") && r.exit_code != Some(0),
        "768 MiB were allocated under a 256 MiB limit: {} {}",
        stdout(&r),
        stderr(&r)
    );
    host_still_starts_processes();
    alive(&*other, "another session after the memory hog").await;
    alive(&*hog, "the session after its memory hog").await;
    hog.close().await.unwrap();
    other.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cpu_hog_is_throttled_to_its_share() {
    let w = small();
    let s = w.start().await;
    let dirs = cgroup_dirs(&s);
    let before = counter(&dirs, "cpu.stat", "nr_throttled").expect("cpu.stat is there");
    let r = bash(&*s, "timeout 2 sh -c 'while :; do :; done'; echo spun").await;
    assert_eq!(stdout(&r), "spun\n", "{}", stderr(&r));
    let after = counter(&dirs, "cpu.stat", "nr_throttled").unwrap();
    assert!(
        after > before,
        "a busy loop under 0.2 CPUs was never throttled ({before} → {after})"
    );
    s.close().await.unwrap();
}

/// An orphaned wall's cgroup goes with its folder, the processes left in it killed; a wall
/// cgroup with no folder in this state folder (another state folder's wall, perhaps of a live
/// Paddock) is left alone.
#[tokio::test(flavor = "multi_thread")]
async fn orphaned_cgroups_are_reaped_with_their_processes() {
    let w = small();
    let state = w.provider.config().state_dir.clone();
    // nextest runs each test in its own process: the pid keeps the names apart.
    let unique = std::process::id();
    let folder = format!("wall-{unique}-orphan-0");
    std::fs::create_dir_all(state.join(&folder)).unwrap();
    let name = format!("paddock-{folder}");
    let foreign = format!("paddock-wall-{unique}-another-state-folder-0");
    let support = CgroupSupport::this_process();
    let limits = LimitSettings::default()
        .resolve(sandbox_provider::local::resources::MachineSize::this_machine().unwrap());
    let (orphan, _) = WallCgroup::create(&support, &name, &limits).unwrap();
    let (kept, _) = WallCgroup::create(&support, &foreign, &limits).unwrap();
    let mut left_behind = std::process::Command::new("sleep")
        .arg("600")
        .spawn()
        .unwrap();
    for procs in orphan.procs_files() {
        std::fs::write(procs, left_behind.id().to_string()).unwrap();
    }
    let reaped = w
        .provider
        .reap_orphans(&sandbox_provider::NoLiveSessions)
        .await
        .unwrap();
    assert!(
        reaped.contains(&name) && reaped.contains(&folder),
        "{reaped:?}"
    );
    assert!(!state.join(&folder).exists());
    assert!(orphan.procs_files().iter().all(|p| !p.exists()));
    assert!(!left_behind.wait().unwrap().success());
    assert!(
        kept.procs_files().iter().all(|p| p.exists()),
        "another state folder's wall cgroup was reaped: {reaped:?}"
    );
    kept.remove().unwrap();
}

/// Without a cgroup the launcher's per-process limits hold: each process's memory, and (for a
/// sandbox that does not run as host root) the sandbox's processes, counted in its own user
/// namespace.
#[tokio::test(flavor = "multi_thread")]
async fn without_a_cgroup_each_process_is_limited() {
    let w = world_with(WorldOptions {
        limits: Some(small_limits()),
        cgroups: Some(CgroupSupport::Unavailable {
            why: "the test takes the cgroups away".into(),
        }),
        ..WorldOptions::default()
    });
    if std::fs::metadata("/proc/self").unwrap().uid() == 0 {
        // As root: give the folders to another user, so the sandbox runs as that user (the
        // kernel exempts root's processes from RLIMIT_NPROC).
        std::fs::set_permissions(w.root.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        for dir in [w.work(), w.docs()] {
            std::os::unix::fs::chown(&dir, Some(4321), Some(4321)).unwrap();
        }
    }
    let s = w.start().await;
    let limits = s.attestation().limits.clone().unwrap();
    assert_eq!(limits.mechanism, LimitMechanism::Rlimit, "{limits:?}");
    assert_eq!(
        (limits.processes, limits.memory_bytes, limits.cpu_millis),
        (Some(PROCESSES), Some(MEMORY), None)
    );
    assert!(
        limits.detail.contains("the test takes the cgroups away")
            && limits.detail.contains("CPU is not limited"),
        "{}",
        limits.detail
    );
    assert!(s.cgroup().is_none());

    let r = bash(&*s, FORK_400).await;
    let out = stdout(&r);
    let (started, refused) = out
        .trim()
        .split_once(' ')
        .unwrap_or_else(|| panic!("{out} {}", stderr(&r)));
    let (started, refused): (u64, u64) = (started.parse().unwrap(), refused.parse().unwrap());
    assert!(
        refused > 0 && started < PROCESSES,
        "{started} processes started and {refused} were refused"
    );
    let r = bash(
        &*s,
        "python3 -c \"b = b'x' * (768 << 20); print('ALLOCATED', len(b))\"",
    )
    .await;
    assert!(
        !stdout(&r).contains("ALLOCATED") && stderr(&r).contains("MemoryError"),
        "{} {}",
        stdout(&r),
        stderr(&r)
    );
    alive(&*s, "the session after its limits were hit").await;
    s.close().await.unwrap();
}

/// Before the wall stopped it, every later command failed with "cannot start bash: Resource
/// temporarily unavailable".
pub const GRABBER: &str = test_support::hostile::PROCESS_GRABBER;

fn bash_call(command: &str) -> ToolRequest {
    ToolRequest::RunBash(RunBash {
        command: command.into(),
        cwd: None,
        env: None,
        stdin: None,
        timeout_ms: Some(20_000),
        max_output_bytes: None,
    })
}

/// Processes left running that hold the sandbox at its process limit are stopped by the wall,
/// which says so in the call's notes; the session goes on.
#[tokio::test(flavor = "multi_thread")]
async fn processes_holding_the_limit_are_stopped_and_the_session_told() {
    let w = small();
    let s = w.start().await;
    let dirs = cgroup_dirs(&s);
    let cancel = CancellationToken::new();
    let grabbed = s.call(bash_call(GRABBER), None, &cancel).await;
    match &grabbed.result {
        Ok(ToolResult::RunBash(r)) => assert_eq!(stdout(r), "started\n", "{r:?}"),
        other => panic!("{other:?}"),
    }
    assert!(
        counter(&dirs, "pids.events", "max").unwrap_or(0) > 0,
        "the grabber never reached the process limit"
    );
    host_still_starts_processes();
    let next = s.call(bash_call("echo alive"), None, &cancel).await;
    match &next.result {
        Ok(ToolResult::RunBash(r)) => assert_eq!(stdout(r), "alive\n", "{r:?}"),
        other => panic!("the session is wedged: {other:?}"),
    }
    let notes: Vec<&String> = grabbed.notes.iter().chain(&next.notes).collect();
    assert!(
        notes.iter().any(|n| n.contains(&format!(
            "the sandbox reached its limit of {PROCESSES} processes"
        )) && n.contains("Paddock stopped the")),
        "the session was not told: {notes:?}"
    );
    alive(&*s, "the session after its processes were stopped").await;
    s.close().await.unwrap();
}
