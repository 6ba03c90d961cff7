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

/// Runs a python attack against the runner (its pid is `$PPID` of the bash that runs it);
/// the script prints `ESCAPED …` when an attack worked and `refused …` otherwise.
async fn attack(sandbox: &dyn Sandbox, name: &str, script: &str) -> String {
    let command = format!("python3 - \"$PPID\" <<'PY'\n{PRELUDE}\n{script}\nPY");
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

const PRELUDE: &str = r#"
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
runner = int(sys.argv[1])
def call(nr, *args):
    rc = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) for a in args])
    return rc, ctypes.get_errno()
NR = {"pidfd_open": 434, "pidfd_getfd": 438, "pidfd_send_signal": 424, "kill": 62,
      "tkill": 200, "tgkill": 234, "rt_sigqueueinfo": 129}
"#;

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
