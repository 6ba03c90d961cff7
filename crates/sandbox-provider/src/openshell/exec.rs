//! Commands inside a sandbox: `ExecSandbox` for one-off probes, and `ExecSandboxInteractive`
//! as a long-lived byte stream to the runner (`tool-runner attach`).
//!
//! `ExecSandbox` semantics: `execution_timeout` is always set and the client deadline is
//! `timeout + 10 s`; exit 124 after at least 90 % of the timeout means "timed out"; a stream
//! that ends (or fails UNAVAILABLE) before an exit status is a transport error, never exit 1.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use openshell_proto::default_workspace;
use openshell_proto::prost_types;
use openshell_proto::v1::{
    ExecSandboxInput, ExecSandboxRequest, exec_sandbox_event, exec_sandbox_input,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};
use tokio::sync::{mpsc, watch};
use tokio_stream::wrappers::ReceiverStream;

use super::gateway::Gateway;
use super::transport::{GatewayError, MAX_MESSAGE_BYTES, STDIN_CHUNK_BYTES};

/// How much longer than the command's own timeout the client waits.
const DEADLINE_SLACK: Duration = Duration::from_secs(10);
/// The exit status OpenShell reports when `execution_timeout` fired.
pub const TIMEOUT_EXIT: i32 = 124;
/// The in-memory pipe between the gRPC stream and the runner connection.
const PIPE_BYTES: usize = 1024 * 1024;

/// One `ExecSandbox` call.
#[derive(Debug, Clone, Default)]
pub struct ExecSpec {
    pub argv: Vec<String>,
    pub workdir: Option<String>,
    pub environment: BTreeMap<String, String>,
    /// The whole stdin (must fit one message).
    pub stdin: Vec<u8>,
    pub timeout: Duration,
}

/// What a finished command returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecOutcome {
    pub exit_code: i32,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// Exit 124 after at least 90 % of the timeout: the gateway's timeout fired.
    pub timed_out: bool,
}

fn duration(d: Duration) -> prost_types::Duration {
    prost_types::Duration {
        seconds: i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
        nanos: i32::try_from(d.subsec_nanos()).unwrap_or(0),
    }
}

fn request(sandbox: &str, spec: &ExecSpec) -> ExecSandboxRequest {
    ExecSandboxRequest {
        sandbox: sandbox.to_owned(),
        command: spec.argv.clone(),
        workdir: spec.workdir.clone().unwrap_or_default(),
        environment: spec.environment.clone(),
        stdin: spec.stdin.clone(),
        tty: false,
        no_login_shell: true,
        workspace_scope: Some(default_workspace()),
        execution_timeout: Some(duration(spec.timeout)),
        ..ExecSandboxRequest::default()
    }
}

/// True when exit 124 came from the gateway's timeout rather than the command itself.
pub fn is_timeout(exit_code: i32, elapsed: Duration, timeout: Duration) -> bool {
    exit_code == TIMEOUT_EXIT && elapsed.as_secs_f64() >= timeout.as_secs_f64() * 0.9
}

impl Gateway {
    /// Runs one command to completion and collects its output.
    pub async fn exec(&self, sandbox: &str, spec: &ExecSpec) -> Result<ExecOutcome, GatewayError> {
        if spec.timeout.is_zero() {
            return Err(GatewayError::Setup(
                "an exec needs a timeout (OpenShell runs it unbounded otherwise)".into(),
            ));
        }
        if spec.stdin.len() > MAX_MESSAGE_BYTES / 2 {
            return Err(GatewayError::Setup(format!(
                "{} bytes of stdin do not fit one message; stream them over an attached exec",
                spec.stdin.len()
            )));
        }
        let started = Instant::now();
        let deadline = spec.timeout + DEADLINE_SLACK;
        let run = async {
            let mut stream = self
                .client()
                .exec_sandbox(request(sandbox, spec))
                .await?
                .into_inner();
            let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
            let mut exit = None;
            while let Some(event) = stream.message().await? {
                match event.payload {
                    Some(exec_sandbox_event::Payload::Stdout(out)) => stdout.extend(out.data),
                    Some(exec_sandbox_event::Payload::Stderr(err)) => stderr.extend(err.data),
                    Some(exec_sandbox_event::Payload::Exit(done)) => exit = Some(done.exit_code),
                    None => {}
                }
            }
            let exit_code = exit.ok_or_else(|| {
                GatewayError::Transport(
                    "the exec stream ended before the command reported an exit status".into(),
                )
            })?;
            Ok::<_, GatewayError>(ExecOutcome {
                exit_code,
                stdout,
                stderr,
                timed_out: is_timeout(exit_code, started.elapsed(), spec.timeout),
            })
        };
        match tokio::time::timeout(deadline, run).await {
            Ok(outcome) => outcome,
            Err(_) => Err(GatewayError::Transport(format!(
                "no exit status within {deadline:?} (the command's timeout plus {DEADLINE_SLACK:?})"
            ))),
        }
    }

    /// Starts `argv` with streamed stdin and returns the two ends of its byte stream: write
    /// to `input` (chunked into `stdin` messages), read its stdout from `output`. Closing
    /// `input` closes the command's stdin; `output` ends when the stream does (for whatever
    /// reason: [`Attached::ended`] tells which).
    pub async fn attach(&self, sandbox: &str, argv: Vec<String>) -> Result<Attached, GatewayError> {
        let start = ExecSandboxRequest {
            sandbox: sandbox.to_owned(),
            command: argv,
            no_login_shell: true,
            tty: false,
            workspace_scope: Some(default_workspace()),
            ..ExecSandboxRequest::default()
        };
        let (tx, rx) = mpsc::channel::<ExecSandboxInput>(16);
        tx.send(ExecSandboxInput {
            payload: Some(exec_sandbox_input::Payload::Start(start)),
        })
        .await
        .map_err(|_| GatewayError::Setup("the attach stream closed at once".into()))?;
        let mut events = self
            .client()
            .exec_sandbox_interactive(ReceiverStream::new(rx))
            .await?
            .into_inner();

        let (input, mut input_pump) = tokio::io::duplex(PIPE_BYTES);
        let (mut output_pump, output) = tokio::io::duplex(PIPE_BYTES);
        let (ended_tx, ended) = watch::channel(None::<String>);

        tokio::spawn(async move {
            let mut buf = vec![0u8; STDIN_CHUNK_BYTES];
            loop {
                match input_pump.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        let message = ExecSandboxInput {
                            payload: Some(exec_sandbox_input::Payload::Stdin(buf[..n].to_vec())),
                        };
                        if tx.send(message).await.is_err() {
                            break;
                        }
                    }
                }
            }
            // Dropping the sender ends the client stream: EOF on the command's stdin.
        });
        tokio::spawn(async move {
            let reason = loop {
                match events.message().await {
                    Ok(Some(event)) => match event.payload {
                        Some(exec_sandbox_event::Payload::Stdout(out))
                            if output_pump.write_all(&out.data).await.is_err() =>
                        {
                            break "the host stopped reading".to_owned();
                        }
                        Some(exec_sandbox_event::Payload::Stdout(_)) => {}
                        Some(exec_sandbox_event::Payload::Stderr(err)) => {
                            tracing::debug!(
                                target: "tool_runner",
                                "attach: {}",
                                String::from_utf8_lossy(&err.data).trim_end()
                            );
                        }
                        Some(exec_sandbox_event::Payload::Exit(done)) => {
                            break format!("the attach command exited with {}", done.exit_code);
                        }
                        None => {}
                    },
                    Ok(None) => break "the attach stream ended".to_owned(),
                    Err(status) => break GatewayError::from_status(&status).to_string(),
                }
            };
            tracing::debug!(%reason, "attach stream over");
            let _ = output_pump.shutdown().await;
            let _ = ended_tx.send(Some(reason));
        });
        Ok(Attached {
            input,
            output,
            ended,
        })
    }
}

/// The two ends of an attached command's byte stream.
#[derive(Debug)]
pub struct Attached {
    /// Bytes written here become the command's stdin.
    pub input: DuplexStream,
    /// The command's stdout.
    pub output: DuplexStream,
    ended: watch::Receiver<Option<String>>,
}

impl Attached {
    /// Why the stream ended, once it has.
    pub fn ended(&self) -> watch::Receiver<Option<String>> {
        self.ended.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_124_is_a_timeout_only_near_the_deadline() {
        let timeout = Duration::from_secs(10);
        assert!(is_timeout(124, Duration::from_secs(9), timeout));
        assert!(is_timeout(124, Duration::from_secs(12), timeout));
        assert!(!is_timeout(124, Duration::from_secs(2), timeout));
        assert!(!is_timeout(1, Duration::from_secs(10), timeout));
    }

    #[test]
    fn requests_always_carry_a_timeout_and_skip_the_login_shell() {
        let spec = ExecSpec {
            argv: vec!["cat".into(), "/etc/hostname".into()],
            timeout: Duration::from_millis(1500),
            ..ExecSpec::default()
        };
        let wire = request("pd-1", &spec);
        let timeout = wire.execution_timeout.unwrap();
        assert_eq!((timeout.seconds, timeout.nanos), (1, 500_000_000));
        assert!(wire.no_login_shell);
        assert_eq!(wire.workspace_scope, Some(default_workspace()));
        assert_eq!(wire.command, ["cat", "/etc/hostname"]);
    }
}
