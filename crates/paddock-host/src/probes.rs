//! How the host looks at the machine beyond its own files: the environment OpenShell's files
//! are found by, the local wall's kernel probes, and the programs it asks (`openshell
//! --version`, `docker image inspect`) or runs for the user (`docker pull`). Behind a trait, so
//! tests simulate a machine; production uses [`SystemMachine`].

use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use sandbox_provider::local::{HostProbes, SystemProbes};
use sandbox_provider::openshell::HostEnvironment;

/// How long a probe (`--version`, `image inspect`) may take before it counts as failed.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(20);

/// What a program printed and how it ended.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommandOutput {
    pub success: bool,
    /// The exit code (`None` when a signal ended it, or it ran past its time).
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl CommandOutput {
    /// The last lines of what it printed, for a report.
    pub fn tail(&self, lines: usize) -> String {
        let text = format!("{}{}", self.stdout, self.stderr);
        let all: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        all[all.len().saturating_sub(lines)..].join("\n")
    }
}

/// The machine as Paddock's setup and status see it.
pub trait MachineProbes: Send + Sync + std::fmt::Debug {
    /// The variables OpenShell discovery and the gateway's config file are found by.
    fn environment(&self) -> HostEnvironment;
    /// The local wall's kernel and bubblewrap probes.
    fn local(&self) -> Arc<dyn HostProbes>;
    /// Runs `program` with `args` as this user: never through a shell, never with `sudo`,
    /// stdin closed. `Err` when it cannot be started (not installed) or ran past `timeout`.
    fn run(
        &self,
        program: &str,
        args: &[String],
        timeout: Option<Duration>,
    ) -> Result<CommandOutput, String>;
}

/// The real machine: this process's environment, the kernel, real programs.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemMachine;

impl MachineProbes for SystemMachine {
    fn environment(&self) -> HostEnvironment {
        HostEnvironment::from_process()
    }

    fn local(&self) -> Arc<dyn HostProbes> {
        Arc::new(SystemProbes)
    }

    fn run(
        &self,
        program: &str,
        args: &[String],
        timeout: Option<Duration>,
    ) -> Result<CommandOutput, String> {
        run_program(program, args, timeout)
    }
}

/// Runs a program and collects its output, killing it after `timeout`.
pub fn run_program(
    program: &str,
    args: &[String],
    timeout: Option<Duration>,
) -> Result<CommandOutput, String> {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => format!("`{program}` is not installed (not on PATH)"),
            _ => format!("`{program}` could not be started: {e}"),
        })?;
    let reader = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut text = Vec::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_end(&mut text);
            }
            String::from_utf8_lossy(&text).into_owned()
        })
    };
    let stdout = reader(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let stderr = reader(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) => {}
            Err(e) => return Err(format!("waiting for `{program}`: {e}")),
        }
        if timeout.is_some_and(|limit| started.elapsed() > limit) {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!(
                "`{program}` did not finish within {} s",
                timeout.map_or(0, |t| t.as_secs())
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Ok(CommandOutput {
        success: status.success(),
        code: status.code(),
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    })
}
