//! The modes as processes: `serve` with `attach` relays over a real unix socket, parent-death
//! detection, socket hygiene, usage errors and the self-check.

use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use tool_protocol::{Data, ErrorCode, ReadFile, ToolResult, WriteFile};
use tool_runner::client::Client;

use super::harness::{Fixture, bash, exe, process_gone};

struct Server {
    child: Child,
    socket: PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Waits until a runner accepts connections on `socket`.
fn wait_for_socket(socket: &Path) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while UnixStream::connect(socket).is_err() {
        assert!(Instant::now() < deadline, "the runner never listened");
        thread::sleep(Duration::from_millis(10));
    }
}

fn serve(fx: &Fixture) -> Server {
    let socket = fx.base.join("runner.sock");
    let child = Command::new(exe())
        .args(["serve", "--socket"])
        .arg(&socket)
        .args(fx.root_args())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_socket(&socket);
    Server { child, socket }
}

/// An `attach` relay process with a client on its stdio.
fn attach(socket: &Path) -> (Client, Child) {
    let mut child = Command::new(exe())
        .args(["attach", "--socket"])
        .arg(socket)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let (stdin, stdout) = (child.stdin.take().unwrap(), child.stdout.take().unwrap());
    (Client::new(stdout, stdin).unwrap(), child)
}

fn read(path: &str) -> ReadFile {
    ReadFile {
        path: path.into(),
        offset: None,
        limit: None,
    }
}

#[test]
fn serve_answers_several_attach_relays_and_direct_connections_at_once() {
    let fx = Fixture::new();
    let server = serve(&fx);
    let (first, mut first_relay) = attach(&server.socket);
    let (second, mut second_relay) = attach(&server.socket);
    let stream = UnixStream::connect(&server.socket).unwrap();
    let direct = Client::new(stream.try_clone().unwrap(), stream).unwrap();
    assert_eq!(first.hello(), direct.hello());
    assert_eq!(first.hello().pid, u64::from(server.child.id()));

    // A long call on the first relay; the others go on meanwhile, and cancelling it there
    // touches nothing else.
    let long = first.start(bash("sleep 30")).unwrap();
    let written = second
        .call(WriteFile {
            path: "from-second.txt".into(),
            content: Data::from("two"),
            create_parents: None,
        })
        .unwrap();
    assert!(written.outcome.is_ok());
    let seen = direct.call(read("from-second.txt")).unwrap();
    assert!(matches!(seen.outcome, Ok(ToolResult::ReadFile(r)) if r.content == "     1\ttwo\n"));
    first.cancel(&long.id).unwrap();
    assert_eq!(
        long.wait_at_most(Duration::from_secs(20))
            .unwrap()
            .outcome
            .unwrap_err()
            .code,
        ErrorCode::Cancelled
    );

    // Closing a relay ends only that relay.
    drop(second);
    assert!(second_relay.wait().unwrap().success());
    assert!(direct.call(read("a.txt")).unwrap().outcome.is_ok());

    // `shutdown` through a relay stops the server and removes its socket.
    first.shutdown().unwrap();
    let mut server = server;
    let status = server.child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    assert!(first_relay.wait().unwrap().success());
    assert!(!server.socket.exists());
}

#[test]
fn serve_exits_when_its_parent_goes_away() {
    let fx = Fixture::new();
    let socket = fx.base.join("orphan.sock");
    let pid_file = fx.base.join("runner.pid");
    // A parent shell starts the runner, reports its pid, and waits for it.
    let mut parent = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "{exe} serve --socket {sock} --root {root}:rw </dev/null >/dev/null 2>&1 & echo $! > {pid}; wait",
            exe = exe().display(),
            sock = socket.display(),
            root = fx.work.display(),
            pid = pid_file.display()
        ))
        .spawn()
        .unwrap();
    wait_for_socket(&socket);
    let runner = super::harness::read_pid(&pid_file);
    assert!(!process_gone(runner, Duration::from_millis(200)));
    parent.kill().unwrap();
    parent.wait().unwrap();
    assert!(
        process_gone(runner, Duration::from_secs(10)),
        "the runner outlived its parent"
    );
}

#[test]
fn serve_can_be_tied_to_its_stdin() {
    let fx = Fixture::new();
    let socket = fx.base.join("stdin.sock");
    let mut child = Command::new(exe())
        .args(["serve", "--exit-on-stdin-eof", "--socket"])
        .arg(&socket)
        .args(fx.root_args())
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_socket(&socket);
    drop(child.stdin.take());
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    assert!(!socket.exists());
}

#[test]
fn a_stale_socket_is_replaced_but_a_live_one_is_kept() {
    let fx = Fixture::new();
    let server = serve(&fx);
    let second = Command::new(exe())
        .args(["serve", "--socket"])
        .arg(&server.socket)
        .args(fx.root_args())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!second.status.success());
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(
        stderr.contains("another runner is serving here"),
        "{stderr}"
    );
    assert!(second.stdout.is_empty(), "stdout carries only frames");

    // Kill the first one hard: its socket file stays behind, stale. A new runner replaces it.
    let socket = server.socket.clone();
    drop(server);
    assert!(socket.exists());
    let replacement = serve(&fx);
    let stream = UnixStream::connect(&replacement.socket).unwrap();
    let client = Client::new(stream.try_clone().unwrap(), stream).unwrap();
    assert_eq!(client.hello().pid, u64::from(replacement.child.id()));
}

#[test]
fn usage_errors_exit_2_with_a_message_on_stderr() {
    let fx = Fixture::new();
    let cases = [
        (vec!["stdio".to_owned()], "stdio needs at least one --root"),
        (
            vec![
                "serve".into(),
                "--root".into(),
                format!("{}:rw", fx.work.display()),
            ],
            "serve needs --socket PATH",
        ),
        (vec!["warp".into()], "unknown mode `warp`"),
    ];
    for (args, needle) in cases {
        let out = Command::new(exe()).args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(needle), "{stderr}");
        assert!(out.stdout.is_empty());
    }
    let missing = Command::new(exe())
        .args(["stdio", "--root", "/definitely/not/here:rw"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&missing.stderr);
    assert!(
        stderr.contains("/definitely/not/here: cannot open the folder"),
        "{stderr}"
    );
    let nowhere = Command::new(exe())
        .args(["attach", "--socket"])
        .arg(fx.base.join("nobody.sock"))
        .output()
        .unwrap();
    assert_eq!(nowhere.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&nowhere.stderr).contains("cannot connect"));
}

#[test]
fn self_check_passes_and_reports_every_tool() {
    let out = Command::new(exe()).arg("self-check").output().unwrap();
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{report}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for tool in [
        "write_file",
        "read_file",
        "edit_file",
        "read_bytes",
        "stat",
        "list_directory",
        "run_bash",
        "upload+download",
        "glob",
        "grep",
        "cancel",
        "delete",
        "refuse outside",
    ] {
        assert!(
            report.contains(&format!("ok    {tool}")),
            "{tool} missing:\n{report}"
        );
    }
    assert!(report.contains("checks passed"), "{report}");
}
