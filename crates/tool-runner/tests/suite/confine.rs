//! `serve` mode confines its commands by itself, with no wall around it (as on OpenShell, whose
//! supervisor's filter Paddock does not write): each attack runs through a real `serve` runner
//! and must be refused, and ordinary work (signalling one's own processes) must still work.
//! (Non-dumpability is attacked inside the wall, in sandbox-provider's `local_escape_runner`:
//! here the tests may run as root with every capability, which reads any `/proc/<pid>`.)

use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use tool_protocol::ToolResult;
use tool_runner::client::Client;

use super::harness::{Fixture, bash, exe};

struct Served {
    child: Child,
    client: Client,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(fx: &Fixture) -> Served {
    let socket = fx.base.join("confined.sock");
    let child = Command::new(exe())
        .args(["serve", "--socket"])
        .arg(&socket)
        .args(fx.root_args())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let stream = loop {
        if let Ok(stream) = UnixStream::connect(&socket) {
            break stream;
        }
        assert!(Instant::now() < deadline, "the runner never listened");
        thread::sleep(Duration::from_millis(10));
    };
    let client = Client::new(stream.try_clone().unwrap(), stream).unwrap();
    Served { child, client }
}

/// Runs `command` and returns (exit code, stdout + stderr).
fn run(served: &Served, command: &str) -> (Option<i64>, String) {
    match served.client.call(bash(command)).unwrap().outcome {
        Ok(ToolResult::RunBash(r)) => (
            r.exit_code,
            format!("{}{}", r.stdout.to_text_lossy(), r.stderr.to_text_lossy()),
        ),
        other => panic!("{command}: {other:?}"),
    }
}

fn python(script: &str) -> String {
    format!("python3 - \"$PPID\" <<'PY'\n{script}\nPY")
}

#[test]
fn set_id_bits_cannot_be_set() {
    let fx = Fixture::new();
    let served = serve(&fx);
    let work = fx.work_path("");
    for attempt in [
        format!("cp /bin/bash {work}/x && chmod u+s {work}/x"),
        format!("cp /bin/bash {work}/y && chmod 2755 {work}/y"),
        format!("mkdir -m 4755 {work}/d"),
        format!(
            "python3 -c \"import os; os.close(os.open('{work}/o', os.O_CREAT | os.O_WRONLY, 0o4755))\""
        ),
    ] {
        let (code, out) = run(&served, &attempt);
        assert_ne!(code, Some(0), "{attempt}: {out}");
    }
    for entry in std::fs::read_dir(Path::new(&work)).unwrap() {
        let path = entry.unwrap().path();
        let mode = std::os::unix::fs::MetadataExt::mode(&std::fs::metadata(&path).unwrap());
        assert_eq!(mode & 0o6000, 0, "{} has mode {mode:o}", path.display());
    }
}

#[test]
fn the_runner_cannot_be_reached_or_signalled() {
    let fx = Fixture::new();
    let served = serve(&fx);
    let (_, out) = run(
        &served,
        &python(
            r#"
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
runner = int(sys.argv[1])
worked = []
if libc.syscall(434, runner, 0) >= 0:
    worked.append("pidfd_open")
for sig in (0, 18):
    if libc.syscall(62, runner, sig) == 0:
        worked.append(("kill", sig))
    if libc.syscall(62, -1, sig) == 0:
        worked.append(("kill -1", sig))
    for tid in os.listdir(f"/proc/{runner}/task"):
        if libc.syscall(234, runner, int(tid), sig) == 0:
            worked.append(("tgkill", tid, sig))
        if libc.syscall(62, int(tid), sig) == 0:
            worked.append(("kill tid", tid, sig))
print("ESCAPED", worked) if worked else print("refused")
"#,
        ),
    );
    assert!(out.contains("refused") && !out.contains("ESCAPED"), "{out}");
    // A process one call started can be stopped by the next.
    let (_, pid) = run(&served, "sleep 60 >/dev/null 2>&1 & echo $!");
    let (code, out) = run(&served, &format!("kill {}", pid.trim()));
    assert_eq!(code, Some(0), "{out}");
}
