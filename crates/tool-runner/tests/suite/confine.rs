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
    serve_with(fx, &[])
}

/// `serve` on the fixture with its socket in `fx.base/socket/`, plus `extra` arguments.
fn serve_with(fx: &Fixture, extra: &[String]) -> Served {
    let folder = fx.base.join("socket");
    std::fs::create_dir_all(&folder).unwrap();
    let socket = folder.join("confined.sock");
    let child = Command::new(exe())
        .args(["serve", "--socket"])
        .arg(&socket)
        .args(fx.root_args())
        .args(extra)
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

/// This architecture's numbers of the calls `set_id_attacks.py` makes, as JSON.
fn set_id_syscalls() -> String {
    #[allow(unused_mut, reason = "x86_64 adds the older calls")]
    let mut calls = vec![
        ("openat", libc::SYS_openat),
        ("openat2", libc::SYS_openat2),
        ("linkat", libc::SYS_linkat),
        ("mknodat", libc::SYS_mknodat),
        ("mkdirat", libc::SYS_mkdirat),
        ("fchmod", libc::SYS_fchmod),
        ("fchmodat", libc::SYS_fchmodat),
        ("fchmodat2", libc::SYS_fchmodat2),
    ];
    #[cfg(target_arch = "x86_64")]
    calls.extend([
        ("open", libc::SYS_open),
        ("creat", libc::SYS_creat),
        ("mknod", libc::SYS_mknod),
        ("mkdir", libc::SYS_mkdir),
        ("chmod", libc::SYS_chmod),
    ]);
    let fields: Vec<String> = calls
        .iter()
        .map(|(name, nr)| format!("\"{name}\": {nr}"))
        .collect();
    format!("{{{}}}", fields.join(", "))
}

/// Every system call that can set a set-id bit, with a plain mode (which must work) and a
/// set-id one (refused with `EPERM`; `openat2` answers `ENOSYS`), through the runner's own
/// filter alone: no set-id file is left.
#[test]
fn every_call_that_sets_a_set_id_bit_is_refused() {
    let fx = Fixture::new();
    let served = serve(&fx);
    let dir = fx.work.join("attempts");
    std::fs::create_dir(&dir).unwrap();
    let (_, out) = run(
        &served,
        &format!(
            "python3 - '{}' '{}' <<'PY'\n{}\nPY",
            dir.display(),
            set_id_syscalls(),
            include_str!("set_id_attacks.py")
        ),
    );
    assert!(!out.contains("ESCAPED") && !out.contains("BROKEN"), "{out}");
    assert!(
        out.contains("checked "),
        "the attacks did not finish: {out}"
    );
    let mut stack = vec![dir];
    while let Some(folder) = stack.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let mode = std::os::unix::fs::MetadataExt::mode(&meta);
            if meta.is_dir() {
                stack.push(path);
            } else {
                assert_eq!(mode & 0o6000, 0, "{} has mode {mode:o}", path.display());
            }
        }
    }
}

/// With `--writable`, commands change entries only there: the socket's folder is fixed (the
/// socket can be neither moved, removed nor replaced, nothing can be made beside it), while
/// the writable folder works as before, moves between its folders included.
#[test]
fn commands_cannot_replace_the_socket_when_the_writable_folders_are_named() {
    let fx = Fixture::new();
    let served = serve_with(&fx, &["--writable".into(), fx.work.display().to_string()]);
    let folder = fx.base.join("socket");
    let socket = folder.join("confined.sock");
    for attempt in [
        format!("mv {} {}/moved", socket.display(), folder.display()),
        format!("mv {} {}/moved", socket.display(), fx.work.display()),
        format!("rm -f {}", socket.display()),
        format!(": > {}/beside", folder.display()),
        format!("ln -s /tmp/elsewhere {}/link", folder.display()),
        format!("mkdir {}/sub", folder.display()),
    ] {
        let (code, out) = run(&served, &attempt);
        assert_ne!(code, Some(0), "{attempt}: {out}");
        assert!(out.contains("Permission denied"), "{attempt}: {out}");
    }
    let names: Vec<String> = std::fs::read_dir(&folder)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["confined.sock"]);
    let work = fx.work.display();
    let (code, out) = run(
        &served,
        &format!(
            "mkdir -p {work}/d/e && : > {work}/d/f && mv {work}/d/f {work}/d/e/g && \
             ln -s g {work}/d/e/h && mv {work}/d {work}/moved && rm -r {work}/moved && echo ok"
        ),
    );
    assert_eq!((code, out.as_str()), (Some(0), "ok\n"));
}

#[test]
fn a_writable_folder_holding_the_socket_is_refused() {
    let fx = Fixture::new();
    let out = Command::new(exe())
        .args(["serve", "--socket"])
        .arg(fx.work.join("runner.sock"))
        .args(fx.root_args())
        .args(["--writable", &fx.base.display().to_string()])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "--writable {} holds the runner's socket folder",
            fx.base.display()
        )),
        "{stderr}"
    );
    assert!(!fx.work.join("runner.sock").exists());
}

#[test]
fn the_runner_cannot_be_reached_or_signalled() {
    let fx = Fixture::new();
    let served = serve(&fx);
    let (_, out) = run(
        &served,
        &python(&format!(
            r#"
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
runner = int(sys.argv[1])
PIDFD_OPEN, KILL, TGKILL = {}, {}, {}
worked = []
if libc.syscall(PIDFD_OPEN, runner, 0) >= 0:
    worked.append("pidfd_open")
for sig in (0, 18):
    if libc.syscall(KILL, runner, sig) == 0:
        worked.append(("kill", sig))
    if libc.syscall(KILL, -1, sig) == 0:
        worked.append(("kill -1", sig))
    for tid in os.listdir(f"/proc/{{runner}}/task"):
        if libc.syscall(TGKILL, runner, int(tid), sig) == 0:
            worked.append(("tgkill", tid, sig))
        if libc.syscall(KILL, int(tid), sig) == 0:
            worked.append(("kill tid", tid, sig))
print("ESCAPED", worked) if worked else print("refused")
"#,
            libc::SYS_pidfd_open,
            libc::SYS_kill,
            libc::SYS_tgkill
        )),
    );
    assert!(out.contains("refused") && !out.contains("ESCAPED"), "{out}");
    // A process one call started can be stopped by the next.
    let (_, pid) = run(&served, "sleep 60 >/dev/null 2>&1 & echo $!");
    let (code, out) = run(&served, &format!("kill {}", pid.trim()));
    assert_eq!(code, Some(0), "{out}");
}
