//! A machine folder shared by real `paddock` processes (`up` and `run`s), the fake model
//! server in place of the model API, and clients of the real API (HTTP and WebSocket).

#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is a failed test; each test binary uses part of it"
)]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use futures::StreamExt;
use protocol::{Event, EventMsg};
use serde_json::Value;
use test_support::model_server::FakeModelServer;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::protocol::Message;

pub const KEY: &str = "sk-ant-PLANTED-up-key-0123456789abcdef";
pub const WAIT: Duration = Duration::from_secs(120);

/// One machine: config, state and home folders under cargo's target `tmp`.
pub struct Machine {
    pub root: tempfile::TempDir,
}

impl Machine {
    pub fn new(model: &FakeModelServer, extra_config: &str) -> Self {
        let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("paddock-up-tests");
        std::fs::create_dir_all(&base).unwrap();
        let root = tempfile::Builder::new()
            .prefix("m")
            .tempdir_in(base)
            .unwrap();
        std::fs::create_dir_all(root.path().join("config/paddock")).unwrap();
        std::fs::create_dir_all(root.path().join("home")).unwrap();
        let config = format!(
            "[models]\nprovider = \"anthropic\"\nmodel = \"claude-test\"\nbase_url = \"{}\"\nkey_store = \"env\"\n{extra_config}",
            model.anthropic_base_url()
        );
        std::fs::write(root.path().join("config/paddock/config.toml"), config).unwrap();
        Self { root }
    }

    pub fn state(&self) -> PathBuf {
        self.root.path().join("state/paddock")
    }

    /// A folder to grant sessions.
    pub fn folder(&self, name: &str) -> PathBuf {
        let path = self.root.path().join("work").join(name);
        std::fs::create_dir_all(&path).unwrap();
        path.canonicalize().unwrap()
    }

    pub fn command(&self, args: &[&str]) -> tokio::process::Command {
        self.command_via(&[], args)
    }

    /// `paddock ARGS` started by `wrapper` (a program and its arguments, the paddock binary
    /// appended), with this machine's environment.
    pub fn command_via(&self, wrapper: &[&str], args: &[&str]) -> tokio::process::Command {
        let paddock = env!("CARGO_BIN_EXE_paddock");
        let mut command = match wrapper.split_first() {
            None => tokio::process::Command::new(paddock),
            Some((program, rest)) => {
                let mut command = tokio::process::Command::new(program);
                command.args(rest).arg(paddock);
                command
            }
        };
        command
            .args(args)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.root.path().join("home"))
            .env("XDG_CONFIG_HOME", self.root.path().join("config"))
            .env("XDG_STATE_HOME", self.root.path().join("state"))
            .env("ANTHROPIC_API_KEY", KEY)
            .env("PADDOCK_TOOL_RUNNER", test_support::binaries::tool_runner())
            .env("PADDOCK_WALL", test_support::binaries::paddock_wall())
            .stdin(Stdio::null())
            .kill_on_drop(true);
        command
    }

    /// Starts `paddock up` on an ephemeral loopback port and waits until it is ready.
    pub async fn up(&self, log: &str) -> Up {
        self.up_with(log, &[]).await
    }

    /// [`Machine::up`] with more environment variables for the process.
    pub async fn up_with(&self, log: &str, env: &[(&str, &std::ffi::OsStr)]) -> Up {
        self.up_custom(log, &[], |command| {
            command.envs(env.iter().copied());
        })
        .await
    }

    /// [`Machine::up`] with more arguments after `up --listen 127.0.0.1:0`, and the command
    /// changed by `configure` (environment) before it starts.
    pub async fn up_custom(
        &self,
        log: &str,
        args: &[&str],
        configure: impl FnOnce(&mut tokio::process::Command),
    ) -> Up {
        let mut all = vec!["up", "--listen", "127.0.0.1:0"];
        all.extend_from_slice(args);
        let mut command = self.command(&all);
        configure(&mut command);
        self.up_command(log, command).await
    }

    /// `paddock up` as process `pid` of a PID namespace of its own (`unshare --pid`, which
    /// needs root): a live Paddock whose pid means nothing, or another process, here. The
    /// child is `unshare`; killing it kills the whole namespace (`--kill-child`).
    pub async fn up_in_pid_namespace(&self, log: &str, pid: u32) -> Up {
        use std::os::unix::fs::MetadataExt;
        assert_eq!(
            std::fs::metadata("/proc/self").unwrap().uid(),
            0,
            "this test runs `paddock up` in a PID namespace of its own with `unshare --pid`, \
             which needs root (as `cargo xtask ci` runs)"
        );
        // The namespace's first process (sh) sets the next pid, then starts paddock as a
        // child, which gets it.
        let script = format!("echo {} > /proc/sys/kernel/ns_last_pid && \"$@\"", pid - 1);
        let wrapper = [
            "unshare",
            "--pid",
            "--fork",
            "--mount-proc",
            "--kill-child",
            "sh",
            "-c",
            &script,
            "sh",
        ];
        let command = self.command_via(&wrapper, &["up", "--listen", "127.0.0.1:0"]);
        self.up_command(log, command).await
    }

    /// Starts a prepared `paddock up` command and waits until it is ready.
    pub async fn up_command(&self, log: &str, mut command: tokio::process::Command) -> Up {
        command
            .env("PADDOCK_LOG", log)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command.spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        let stderr = child.stderr.take().unwrap();
        let (log_tx, log_rx) = tokio::sync::mpsc::unbounded_channel();
        tokio::spawn(async move {
            let mut lines = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let _ = log_tx.send(line);
            }
        });
        let mut lines = BufReader::new(stdout).lines();
        let mut printed = Vec::new();
        let base = loop {
            let line = tokio::time::timeout(WAIT, lines.next_line())
                .await
                .expect("paddock up printed in time")
                .unwrap()
                .unwrap_or_else(|| panic!("paddock up ended: {printed:?}"));
            printed.push(line.clone());
            if line
                == "ready (Ctrl-C stops it; running sessions are closed and resume after a restart)"
            {
                break printed
                    .iter()
                    .find_map(|l| l.strip_prefix("Paddock is serving "))
                    .unwrap()
                    .to_owned();
            }
        };
        let rest = tokio::spawn(async move {
            let mut more = Vec::new();
            while let Ok(Some(line)) = lines.next_line().await {
                more.push(line);
            }
            more
        });
        let token = std::fs::read_to_string(self.state().join("api-token"))
            .unwrap()
            .trim()
            .to_owned();
        let _ = rustls::crypto::ring::default_provider().install_default();
        Up {
            child,
            base,
            token,
            printed,
            rest: Some(rest),
            log: log_rx,
            client: reqwest::Client::new(),
        }
    }
}

/// A running `paddock up`.
pub struct Up {
    pub child: tokio::process::Child,
    pub base: String,
    pub token: String,
    /// What it printed on stdout up to "ready".
    pub printed: Vec<String>,
    rest: Option<tokio::task::JoinHandle<Vec<String>>>,
    log: tokio::sync::mpsc::UnboundedReceiver<String>,
    pub client: reqwest::Client,
}

impl Up {
    pub async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&Value>,
        status: u16,
    ) -> Value {
        let mut request = self
            .client
            .request(method, format!("{}{path}", self.base))
            .bearer_auth(&self.token);
        if let Some(body) = body {
            request = request.json(body);
        }
        let response = request.send().await.unwrap();
        let got = response.status().as_u16();
        let text = response.text().await.unwrap();
        assert_eq!(got, status, "{path}: {text}");
        serde_json::from_str(&text).unwrap_or(Value::String(text))
    }

    pub async fn post(&self, path: &str, body: &Value, status: u16) -> Value {
        self.call(reqwest::Method::POST, path, Some(body), status)
            .await
    }

    pub async fn get(&self, path: &str) -> Value {
        self.call(reqwest::Method::GET, path, None, 200).await
    }

    /// A session's event socket (bearer header: this client can set headers).
    pub async fn events(&self, session: &str, after: u64) -> Socket {
        let url = format!(
            "{}/v1/sessions/{session}/events?after={after}",
            self.base.replace("http://", "ws://")
        );
        let mut request = url.into_client_request().unwrap();
        request.headers_mut().insert(
            "Authorization",
            format!("Bearer {}", self.token).parse().unwrap(),
        );
        let (socket, _) = tokio_tungstenite::connect_async(request).await.unwrap();
        Socket { socket }
    }

    /// Every log line so far.
    pub fn log_lines(&mut self) -> Vec<String> {
        let mut lines = Vec::new();
        while let Ok(line) = self.log.try_recv() {
            lines.push(line);
        }
        lines
    }

    /// SIGTERM, then waits; returns the stdout lines after "ready" and the exit status.
    pub async fn stop(self) -> (Vec<String>, std::process::ExitStatus) {
        let stopped = self.stop_with(libc::SIGTERM).await;
        (stopped.stdout, stopped.status)
    }

    /// Sends `signal` (SIGTERM as a service manager does, SIGINT as Ctrl-C does) and waits
    /// for the process to end; returns what it printed after "ready" and every stderr line.
    pub async fn stop_with(mut self, signal: i32) -> Stopped {
        let pid = i32::try_from(self.child.id().unwrap()).unwrap();
        // SAFETY: kill(2) on the child this test started; no memory is involved.
        unsafe { libc::kill(pid, signal) };
        let status = tokio::time::timeout(WAIT, self.child.wait())
            .await
            .expect("paddock up stopped in time")
            .unwrap();
        let stdout = self.rest.take().unwrap().await.unwrap();
        let mut stderr = Vec::new();
        // The reader ends at the pipe's end, closing the channel.
        while let Some(line) = tokio::time::timeout(WAIT, self.log.recv())
            .await
            .expect("stderr closed in time")
        {
            stderr.push(line);
        }
        Stopped {
            stdout,
            status,
            stderr,
        }
    }
}

/// How a `paddock up` ended.
pub struct Stopped {
    /// Stdout after "ready".
    pub stdout: Vec<String>,
    pub status: std::process::ExitStatus,
    /// Every stderr line not yet taken with [`Up::log_lines`].
    pub stderr: Vec<String>,
}

/// A session's events over the WebSocket.
pub struct Socket {
    socket: tokio_tungstenite::WebSocketStream<
        tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>,
    >,
}

impl Socket {
    pub async fn next(&mut self) -> Option<Event> {
        loop {
            let message = tokio::time::timeout(WAIT, self.socket.next())
                .await
                .expect("an event in time")?;
            match message.ok()? {
                Message::Text(text) => return Some(serde_json::from_str(&text).unwrap()),
                Message::Close(_) => return None,
                _ => {}
            }
        }
    }

    /// Closes the socket (a client that went away).
    pub async fn close(mut self) {
        use futures::SinkExt;
        let _ = self.socket.send(Message::Close(None)).await;
        let _ =
            tokio::time::timeout(WAIT, async { while self.socket.next().await.is_some() {} }).await;
    }

    pub async fn until(&mut self, until: impl Fn(&EventMsg) -> bool) -> Vec<Event> {
        let mut seen = Vec::new();
        loop {
            let event = self.next().await.expect("the socket stayed open");
            let done = until(&event.msg);
            seen.push(event);
            if done {
                return seen;
            }
        }
    }
}

/// The tool calls (`run_bash` echoes) of a conversation: `steps` model steps of `per_step`
/// calls each, then the final answer; scripted under `marker` (its first message).
pub fn script_calls(model: &FakeModelServer, marker: &str, steps: usize, per_step: usize) {
    use test_support::model_server::{Reply, sse};
    for step in 0..steps {
        let mut events = Vec::new();
        for call in 0..per_step {
            events.push(sse::tool_use(
                format!("c{step}_{call}"),
                "run_bash",
                serde_json::json!({"command": format!("echo {step}.{call}")}),
            ));
        }
        events.push(sse::stop("tool_use"));
        model.push_for(marker, Reply::stream(events));
    }
    model.push_for(marker, Reply::final_text("done"));
}

pub fn exists(path: &Path) -> bool {
    path.exists()
}
