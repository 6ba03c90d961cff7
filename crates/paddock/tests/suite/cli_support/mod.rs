//! A machine for `paddock` subprocesses: its own config, state and home folders, and the
//! built binary run in it with a cleared environment (the planted model key, the static
//! tool-runner and the wall launcher passed in).

#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is a failed test; each test binary uses part of it"
)]

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use test_support::model_server::FakeModelServer;
use tokio::io::AsyncWriteExt;

/// The model key every run gets; tests assert it appears nowhere it must not.
pub const KEY: &str = "sk-ant-test-0123456789abcdef";

/// The environment of a `paddock` subprocess.
pub struct Machine {
    pub root: tempfile::TempDir,
}

impl Machine {
    /// A machine whose config file holds `config`.
    pub fn new(config: &str) -> Self {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("config/paddock")).unwrap();
        std::fs::create_dir_all(root.path().join("home")).unwrap();
        std::fs::write(root.path().join("config/paddock/config.toml"), config).unwrap();
        Self { root }
    }

    /// A machine whose models are the fake model server's.
    pub fn with_model(server: &FakeModelServer) -> Self {
        Self::new(&model_config(server))
    }

    /// Paddock's state folder on this machine.
    pub fn state_dir(&self) -> PathBuf {
        self.root.path().join("state/paddock")
    }

    pub fn command(&self, args: &[&str]) -> tokio::process::Command {
        let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_paddock"));
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

    /// `(exit code, stdout, stderr)` of `paddock ARGS`.
    pub async fn run(&self, args: &[&str]) -> (i32, String, String) {
        let output = tokio::time::timeout(Duration::from_secs(300), self.command(args).output())
            .await
            .expect("paddock finished in time")
            .unwrap();
        texts(&output)
    }

    /// `(exit code, stdout, stderr)` of `paddock ARGS` with `stdin` piped in.
    pub async fn run_with_stdin(&self, args: &[&str], stdin: &str) -> (i32, String, String) {
        let mut command = self.command(args);
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command.spawn().unwrap();
        let mut input = child.stdin.take().unwrap();
        input.write_all(stdin.as_bytes()).await.unwrap();
        drop(input);
        let output = tokio::time::timeout(Duration::from_secs(300), child.wait_with_output())
            .await
            .expect("paddock finished in time")
            .unwrap();
        texts(&output)
    }
}

fn texts(output: &std::process::Output) -> (i32, String, String) {
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// `[models]` pointing at the fake model server, the key from the environment.
pub fn model_config(server: &FakeModelServer) -> String {
    format!(
        "[models]\nprovider = \"anthropic\"\nmodel = \"claude-test\"\nbase_url = \"{}\"\nkey_store = \"env\"\n",
        server.anthropic_base_url()
    )
}
