//! Escape suite, the runner: a command must not reach into the tool-runner that started it (its
//! file descriptors, memory and environment), nor signal it, its process group or every process
//! at once. Each attack runs through the real runner inside the local wall and must fail; the
//! runner must still answer afterwards. Needs bubblewrap and python3.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed set-up step fails the test"
)]

use crate::support;

use sandbox_provider::Sandbox;
use support::*;
use test_support::hostile::launch_forger;

/// Runs a python attack against the runner (its pid is `$PPID` of the bash that runs it);
/// the script prints `ESCAPED …` when an attack worked and `refused …` otherwise.
async fn attack(sandbox: &dyn Sandbox, name: &str, script: &str) -> String {
    let command = format!("python3 - \"$PPID\" <<'PY'\n{}\n{script}\nPY", prelude());
    let r = bash(sandbox, &command).await;
    let out = format!("{}{}", stdout(&r), stderr(&r));
    assert!(
        !out.contains("ESCAPED"),
        "{name}: the attack succeeded: {out}"
    );
    assert!(
        out.contains("refused"),
        "{name}: the attack did not run: {out}"
    );
    out
}

/// The attack scripts' shared start: `call(nr, *args)` and the system-call numbers of the
/// architecture the tests run on, taken from libc (python's `os` has no pidfd or tkill calls).
fn prelude() -> String {
    format!(
        r#"
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
runner = int(sys.argv[1])
def call(nr, *args):
    rc = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) for a in args])
    return rc, ctypes.get_errno()
NR = {{"pidfd_open": {}, "pidfd_getfd": {}, "pidfd_send_signal": {}, "kill": {},
      "tkill": {}, "tgkill": {}, "rt_sigqueueinfo": {}}}
"#,
        libc::SYS_pidfd_open,
        libc::SYS_pidfd_getfd,
        libc::SYS_pidfd_send_signal,
        libc::SYS_kill,
        libc::SYS_tkill,
        libc::SYS_tgkill,
        libc::SYS_rt_sigqueueinfo,
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn the_runner_s_descriptors_memory_and_environment_are_closed() {
    let w = world();
    let s = w.start().await;
    let s = s.as_ref();
    attack(
        s,
        "pidfd_getfd",
        r#"
rc, err = call(NR["pidfd_open"], runner, 0)
if rc < 0:
    print("refused pidfd_open", err)
else:
    got = [t for t in range(64) if call(NR["pidfd_getfd"], rc, t, 0)[0] >= 0]
    print("ESCAPED pidfd_getfd took", got) if got else print("refused pidfd_getfd", ctypes.get_errno())
"#,
    )
    .await;
    attack(
        s,
        "/proc/<runner>",
        r#"
taken = []
try:
    taken.append(("environ", open(f"/proc/{runner}/environ", "rb").read()[:40]))
except OSError as e:
    print("refused environ", e.errno)
try:
    links = [os.readlink(f"/proc/{runner}/fd/{n}") for n in os.listdir(f"/proc/{runner}/fd")]
    taken.append(("fd", links))
except OSError as e:
    print("refused fd", e.errno)
try:
    maps = open(f"/proc/{runner}/maps").read().splitlines()
    start = int(maps[0].split("-")[0], 16)
    with open(f"/proc/{runner}/mem", "rb") as mem:
        mem.seek(start)
        taken.append(("mem", mem.read(16)))
except OSError as e:
    print("refused mem", e.errno)
if taken:
    print("ESCAPED", taken)
"#,
    )
    .await;
    let r = bash(s, "echo still-here").await;
    assert_eq!(stdout(&r), "still-here\n");
    s.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn no_signal_reaches_the_runner() {
    let w = world();
    let s = w.start().await;
    let s = s.as_ref();
    // Signal 0 asks the kernel whether the signal would be delivered, without delivering it;
    // SIGCONT is harmless if it were. Each way must be refused.
    let out = attack(
        s,
        "signals",
        r#"
import fcntl, signal
pgid = int(open(f"/proc/{runner}/stat").read().rsplit(")", 1)[1].split()[2])
tids = [int(t) for t in os.listdir(f"/proc/{runner}/task")]
worked = []
for sig in (0, signal.SIGCONT):
    tries = [("kill pid", NR["kill"], (runner, sig)),
             ("kill group", NR["kill"], (-pgid, sig)),
             ("kill -1", NR["kill"], (-1, sig))]
    for tid in tids:
        tries += [("tgkill", NR["tgkill"], (runner, tid, sig)),
                  ("tkill", NR["tkill"], (tid, sig)),
                  ("kill tid", NR["kill"], (tid, sig))]
    for name, nr, args in tries:
        rc, err = call(nr, *args)
        if rc == 0:
            worked.append((name, args))
# A /proc folder is a pidfd for pidfd_send_signal.
fd = os.open(f"/proc/{runner}", os.O_RDONLY | os.O_DIRECTORY)
if call(NR["pidfd_send_signal"], fd, 0, 0, 0)[0] == 0:
    worked.append(("pidfd_send_signal", runner))
# SIGIO: a descriptor owned by the runner signals it when ready.
r, w = os.pipe()
try:
    fcntl.fcntl(r, fcntl.F_SETOWN, runner)
    worked.append(("F_SETOWN", runner))
except OSError as e:
    pass
try:
    fcntl.fcntl(r, fcntl.F_SETOWN, -pgid)
    worked.append(("F_SETOWN group", pgid))
except OSError as e:
    pass
print("ESCAPED", worked) if worked else print("refused every signal", len(tids), "threads")
"#,
    )
    .await;
    assert!(out.contains("refused every signal"), "{out}");
    // Killing for real: the runner survives and answers.
    let r = bash(s, "kill -9 $PPID; kill -9 -1; kill -STOP $PPID; echo tried").await;
    assert!(stdout(&r).contains("tried"), "{}", stderr(&r));
    let r = bash(s, "echo still-here").await;
    assert_eq!(stdout(&r), "still-here\n");
    // Processes a command starts can still be signalled by the next command.
    let r = bash(s, "sleep 60 >/dev/null 2>&1 & echo $!").await;
    let pid = stdout(&r).trim().to_owned();
    let r = bash(s, &format!("kill {pid} && echo killed")).await;
    assert_eq!(stdout(&r), "killed\n", "{}", stderr(&r));
    s.close().await.unwrap();
}

/// What a kernel before 6.12 (Landlock ABI < 6, which the wall accepts) leaves: no Landlock
/// signal scope. The runner is told to leave it out (its test knob), then a command sends
/// SIGSTOP and SIGKILL to every thread of the runner and to every number that is not a visible
/// process (a thread of some process), through every call that signals a thread group or a
/// thread, and through `SIGIO` of a pipe it owns with `F_SETSIG` set to SIGKILL; then to the
/// runner's group and to every process. The runner must still answer, and not be stopped.
#[tokio::test(flavor = "multi_thread")]
async fn no_signal_reaches_the_runner_without_a_landlock_signal_scope() {
    let w = world_with(WorldOptions {
        unscoped_signals: true,
        ..WorldOptions::default()
    });
    let s = w.start().await;
    let s = s.as_ref();
    let out = attack(
        s,
        "unscoped signals",
        r#"
import fcntl, signal, time
me = os.getpid()
tids = sorted(int(t) for t in os.listdir(f"/proc/{runner}/task"))
assert len(tids) >= 3, f"the runner shows {len(tids)} threads"
visible = {int(p) for p in os.listdir("/proc") if p.isdigit()}
hidden = [n for n in range(2, max(visible | set(tids)) + 64) if n not in visible]
class SigInfo(ctypes.Structure):
    _fields_ = [("signo", ctypes.c_int), ("errno", ctypes.c_int), ("code", ctypes.c_int),
                ("pad", ctypes.c_int), ("pid", ctypes.c_int), ("uid", ctypes.c_int),
                ("rest", ctypes.c_char * 104)]
F_SETSIG = 10
sent = 0
for sig in (signal.SIGSTOP, signal.SIGKILL):
    for tid in [t for t in tids + hidden if t != me]:
        info = SigInfo(signo=sig, code=-1, pid=me, uid=os.getuid())
        for nr, args in ((NR["kill"], (tid, sig)), (NR["tgkill"], (runner, tid, sig)),
                         (NR["tkill"], (tid, sig)),
                         (NR["rt_sigqueueinfo"], (tid, sig, ctypes.addressof(info)))):
            sent += call(nr, *args)[0] == 0
        r, w = os.pipe()
        try:
            fcntl.fcntl(r, fcntl.F_SETOWN, tid)
            fcntl.fcntl(r, F_SETSIG, signal.SIGKILL)
            fcntl.fcntl(r, fcntl.F_SETFL, os.O_ASYNC)
            os.write(w, b"x")
            sent += 1
        except OSError:
            pass
        os.close(r)
        os.close(w)
time.sleep(0.3)
state = open(f"/proc/{runner}/stat").read().rsplit(")", 1)[1].split()[0]
print("refused: the runner is", state, "after", sent, "signals to", len(tids), "threads and",
      len(hidden), "other numbers", flush=True)
if state == "T":
    print("ESCAPED: the runner is stopped")
pgid = int(open(f"/proc/{runner}/stat").read().rsplit(")", 1)[1].split()[2])
call(NR["kill"], -pgid, signal.SIGKILL)
call(NR["kill"], runner, signal.SIGKILL)
"#,
    )
    .await;
    // The kernel took signals aimed at the runner's threads (the filter does not know them):
    // what kept the runner alive is not a refusal of the call.
    let sent: usize = out
        .split("after ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count of signals sent: {out}"));
    assert!(sent > 0, "no signal reached the kernel's delivery: {out}");
    // A stopped runner would never answer: the call is bounded.
    let answer = tokio::time::timeout(
        std::time::Duration::from_secs(30),
        bash(s, "echo still-here"),
    )
    .await
    .expect("the runner did not answer after the signals");
    assert_eq!(stdout(&answer), "still-here\n");
    s.close().await.unwrap();
}

/// The runner is the first process of the wall's PID namespace, so what a command leaves
/// running is re-parented to it when the command ends: it must reap them, or their zombies
/// would fill the sandbox's process limit.
#[tokio::test(flavor = "multi_thread")]
async fn the_runner_is_the_namespace_s_first_process_and_reaps_what_commands_leave() {
    let w = world();
    let s = w.start().await;
    let s = s.as_ref();
    let r = bash(s, "echo $PPID").await;
    assert_eq!(stdout(&r), "1\n", "{}", stderr(&r));
    let r = bash(
        s,
        "for i in $(seq 20); do (sleep 0.2 >/dev/null 2>&1 &); done; echo left",
    )
    .await;
    assert_eq!(stdout(&r), "left\n", "{}", stderr(&r));
    let r = bash(
        s,
        "sleep 1; for f in /proc/[0-9]*/stat; do read -r line < $f && echo \"$line\"; done \
         | awk '{ s = $0; sub(/.*\\) /, \"\", s); split(s, f, \" \"); \
                  if (f[1] == \"Z\") z++; if (f[2] == 1) o++ } \
                END { print \"zombies\", z + 0, \"children-of-1\", o + 0 }'",
    )
    .await;
    let out = stdout(&r);
    assert!(out.starts_with("zombies 0 "), "{out}{}", stderr(&r));
    s.close().await.unwrap();
}

/// The runner's socket folder is not the commands' to change: a command that moves the
/// socket away (or removes it) and listens at its path in the runner's place is refused each
/// step (the host keeps its one connection to the runner on this wall, but OpenShell's host
/// attaches anew by path after a lost stream: `openshell_runner.rs`).
#[tokio::test(flavor = "multi_thread")]
async fn a_command_cannot_take_the_runner_s_socket() {
    let w = world();
    let s = w.start().await;
    let s = s.as_ref();
    let log = w.work().join("forger.log").display().to_string();
    let r = bash(s, &launch_forger(&log, "/run/paddock/runner/runner.sock")).await;
    let said = format!("{}{}", stdout(&r), stderr(&r));
    assert!(
        said.contains("copied hello"),
        "the forger did not run: {said}"
    );
    for refused in ["refused rename", "refused unlink", "refused bind"] {
        assert!(said.contains(refused), "{refused} missing: {said}");
    }
    let r = bash(s, "echo still-here").await;
    assert_eq!(stdout(&r), "still-here\n");
    s.close().await.unwrap();
}
