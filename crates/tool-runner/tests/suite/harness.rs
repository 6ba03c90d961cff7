//! Fixtures and runner handles shared by the suite.

use std::collections::BTreeMap;
use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::thread;
use std::time::{Duration, Instant};

use tool_protocol::{ErrorCode, Line, RunBash, RunnerFrame, ToolRequest, ToolResult};
use tool_runner::client::{CallError, Client, Reply};

pub fn exe() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_tool-runner"))
}

/// A temporary tree: `work` (granted read-write), `reference` (granted read-only) and
/// `outside` (not granted, holding a secret).
pub struct Fixture {
    _dir: tempfile::TempDir,
    pub base: PathBuf,
    pub work: PathBuf,
    pub reference: PathBuf,
    pub outside: PathBuf,
}

pub const SECRET: &str = "TOP SECRET: outside the session\n";

impl Fixture {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(dir.path()).unwrap();
        let work = base.join("work");
        let reference = base.join("reference");
        let outside = base.join("outside");
        for folder in [&work, &reference, &outside] {
            fs::create_dir(folder).unwrap();
        }
        fs::write(work.join("a.txt"), "alpha\nbeta\ngamma\n").unwrap();
        fs::create_dir(work.join("sub")).unwrap();
        fs::write(work.join("sub/b.txt"), "bravo\n").unwrap();
        fs::write(reference.join("guide.md"), "# Guide\nread only\n").unwrap();
        fs::write(outside.join("secret.txt"), SECRET).unwrap();
        Fixture {
            _dir: dir,
            base,
            work,
            reference,
            outside,
        }
    }

    pub fn root_args(&self) -> Vec<String> {
        vec![
            "--root".into(),
            format!("{}:rw", self.work.display()),
            "--root".into(),
            format!("{}:ro", self.reference.display()),
        ]
    }

    /// Starts `tool-runner stdio` on this fixture.
    pub fn runner(&self) -> Runner {
        self.runner_with(&[])
    }

    pub fn runner_with(&self, extra: &[&str]) -> Runner {
        let mut args = self.root_args();
        args.extend(extra.iter().map(|s| (*s).to_owned()));
        let (client, child) = Client::spawn_stdio(&exe(), &args).unwrap();
        Runner { client, child }
    }

    pub fn work_path(&self, rel: &str) -> String {
        self.work.join(rel).display().to_string()
    }

    /// Every file under `outside` with its content (to prove nothing there changed).
    pub fn outside_snapshot(&self) -> BTreeMap<PathBuf, Vec<u8>> {
        snapshot(&self.outside)
    }

    pub fn reference_snapshot(&self) -> BTreeMap<PathBuf, Vec<u8>> {
        snapshot(&self.reference)
    }
}

fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        for entry in fs::read_dir(&folder).unwrap() {
            let entry = entry.unwrap();
            let meta = fs::symlink_metadata(entry.path()).unwrap();
            if meta.is_dir() {
                stack.push(entry.path());
                out.insert(entry.path(), b"<dir>".to_vec());
            } else if meta.is_file() {
                out.insert(entry.path(), fs::read(entry.path()).unwrap());
            } else {
                out.insert(entry.path(), b"<other>".to_vec());
            }
        }
    }
    out
}

/// A runner child with a client; killed on drop.
pub struct Runner {
    pub client: Client,
    pub child: Child,
}

impl Deref for Runner {
    type Target = Client;
    fn deref(&self) -> &Client {
        &self.client
    }
}

impl Drop for Runner {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Runner {
    /// Calls and expects a result.
    pub fn ok(&self, request: impl Into<ToolRequest>) -> ToolResult {
        let reply = self.call(request).unwrap();
        match reply.outcome {
            Ok(result) => result,
            Err(e) => panic!("expected a result, got {}: {}", e.code, e.message),
        }
    }

    /// Calls and expects an error.
    pub fn err(&self, request: impl Into<ToolRequest>) -> CallError {
        let request = request.into();
        let shown = format!("{request:?}");
        let reply: Reply = self.call(request).unwrap();
        match reply.outcome {
            Ok(result) => panic!("expected a refusal of {shown}, got {result:?}"),
            Err(e) => e,
        }
    }

    /// Calls and expects an error with `code`; returns the message.
    pub fn refused(&self, request: impl Into<ToolRequest>, code: ErrorCode) -> String {
        let e = self.err(request);
        assert_eq!(e.code, code, "message: {}", e.message);
        e.message
    }
}

pub fn bash(command: &str) -> RunBash {
    RunBash {
        command: command.into(),
        cwd: None,
        env: None,
        stdin: None,
        timeout_ms: None,
        max_output_bytes: None,
    }
}

/// A runner spoken to line by line, for ordering and malformed-input tests.
pub struct RawRunner {
    pub child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
}

impl RawRunner {
    pub fn start(fixture: &Fixture) -> Self {
        let mut child = Command::new(exe())
            .arg("stdio")
            .args(fixture.root_args())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut raw = RawRunner {
            child,
            stdin: Some(stdin),
            lines,
        };
        let hello = raw.next_frame();
        assert!(matches!(hello, RunnerFrame::Hello(_)), "{hello:?}");
        raw
    }

    pub fn send(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("input still open");
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    pub fn send_line(&mut self, line: &str) {
        self.send(format!("{line}\n").as_bytes());
    }

    /// Closes the runner's stdin.
    pub fn close_input(&mut self) {
        self.stdin = None;
    }

    /// Every line until the runner closes its stdout.
    pub fn rest(&mut self) -> Vec<String> {
        let mut rest = Vec::new();
        while let Ok(line) = self.lines.recv_timeout(Duration::from_secs(30)) {
            rest.push(line);
        }
        rest
    }

    /// The next raw line (every line must decode as a runner frame).
    pub fn next_line(&mut self) -> String {
        let line = self
            .lines
            .recv_timeout(Duration::from_secs(30))
            .expect("the runner answered in time");
        RunnerFrame::decode(&Line::Text(line.clone()))
            .unwrap_or_else(|e| panic!("stdout carried a line that is not a frame ({e}): {line}"));
        line
    }

    pub fn next_frame(&mut self) -> RunnerFrame {
        let line = self.next_line();
        RunnerFrame::decode(&Line::Text(line)).unwrap()
    }
}

impl Drop for RawRunner {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Waits until `pid` is gone (or a zombie), at most `limit`; true when it is.
pub fn process_gone(pid: u32, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    loop {
        match fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => return true,
            Ok(stat) => {
                // The state follows the command name in parentheses.
                let state = stat
                    .rsplit(')')
                    .next()
                    .and_then(|rest| rest.split_whitespace().next());
                if state == Some("Z") {
                    return true;
                }
            }
        }
        if Instant::now() > deadline {
            return false;
        }
        thread::sleep(Duration::from_millis(25));
    }
}

/// Reads a pid a test command wrote, waiting for the file to appear.
pub fn read_pid(path: &Path) -> u32 {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Ok(text) = fs::read_to_string(path)
            && let Ok(pid) = text.trim().parse()
        {
            return pid;
        }
        assert!(
            Instant::now() < deadline,
            "{} never appeared",
            path.display()
        );
        thread::sleep(Duration::from_millis(20));
    }
}
