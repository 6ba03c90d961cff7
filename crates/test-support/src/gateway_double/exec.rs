//! `ExecSandbox` and `ExecSandboxInteractive` as the gateway runs them: the argv shell-escaped
//! into `/bin/bash -lc` (or `-c` with `no_login_shell`), request variables as `K=V` prefixes,
//! `cd <workdir> &&`, the sandbox's cleared-and-rebuilt environment, `execution_timeout` ending
//! in exit 124 with an OK status, and FAILED_PRECONDITION until the sandbox is READY.

use std::process::Stdio;
use std::sync::PoisonError;
use std::time::Duration;

use openshell_proto::v1::{
    ExecSandboxEvent, ExecSandboxExit, ExecSandboxInput, ExecSandboxRequest, ExecSandboxStderr,
    ExecSandboxStdout, exec_sandbox_event, exec_sandbox_input,
};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::Child;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tokio_util::sync::CancellationToken;
use tonic::codegen::BoxStream;
use tonic::{Status, Streaming};

use super::launch::{WORKDIR, shell_quote};
use super::service::DoubleService;
use super::validate;

type Events = mpsc::Sender<Result<ExecSandboxEvent, Status>>;

/// The exit code reported when `execution_timeout` fired.
const TIMEOUT_EXIT: i32 = 124;

/// The `bash` command line: `[cd W &&] K=V … argv…`, each part shell-escaped.
fn command_line(request: &ExecSandboxRequest) -> Result<Vec<String>, Status> {
    if request.command.is_empty() {
        return Err(Status::invalid_argument("command is required"));
    }
    if request.command.len() > 1024
        || request
            .command
            .iter()
            .any(|a| a.len() > 32 * 1024 || a.contains('\0'))
    {
        return Err(Status::invalid_argument(
            "command: at most 1024 arguments of 32 KiB, no NUL",
        ));
    }
    let mut line = String::new();
    if !request.workdir.is_empty() {
        if request.workdir.contains(['\n', '\0']) || request.workdir.len() > 4096 {
            return Err(Status::invalid_argument(
                "workdir must be one line of at most 4096 bytes",
            ));
        }
        line.push_str(&format!("cd {} && ", shell_quote(&request.workdir)));
    }
    for (key, value) in &request.environment {
        let key_ok = key
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
            && key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
        if !key_ok {
            return Err(Status::invalid_argument(format!(
                "environment key {key:?} must match ^[A-Za-z_][A-Za-z0-9_]*$"
            )));
        }
        if value.contains(['\n', '\0']) || value.len() > 32 * 1024 {
            return Err(Status::invalid_argument(format!(
                "environment {key}: the value has a newline or NUL, or is over 32 KiB"
            )));
        }
        if key.starts_with("OPENSHELL_") {
            continue;
        }
        line.push_str(&format!("{key}={} ", shell_quote(value)));
    }
    line.push_str(
        &request
            .command
            .iter()
            .map(|a| shell_quote(a))
            .collect::<Vec<_>>()
            .join(" "),
    );
    let flag = if request.no_login_shell { "-c" } else { "-lc" };
    Ok(vec!["/bin/bash".into(), flag.into(), line])
}

fn spawn(
    service: &DoubleService,
    request: &ExecSandboxRequest,
    stdin: bool,
) -> Result<Child, Status> {
    validate::workspace(request.workspace_scope.as_ref())?;
    let layout = service.ready_layout(&request.sandbox)?;
    let argv = command_line(request)?;
    let mut command = layout
        .command(&argv, layout.env.clone(), WORKDIR)
        .map_err(|e| Status::internal(format!("preparing the exec: {e}")))?;
    if stdin {
        command.stdin(Stdio::piped());
    }
    command
        .spawn()
        .map_err(|e| Status::internal(format!("starting the exec: {e}")))
}

fn pump<R: AsyncRead + Unpin + Send + 'static>(
    mut reader: R,
    events: Events,
    stdout: bool,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            match reader.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    let data = buf[..n].to_vec();
                    let payload = if stdout {
                        exec_sandbox_event::Payload::Stdout(ExecSandboxStdout { data })
                    } else {
                        exec_sandbox_event::Payload::Stderr(ExecSandboxStderr { data })
                    };
                    if events
                        .send(Ok(ExecSandboxEvent {
                            payload: Some(payload),
                        }))
                        .await
                        .is_err()
                    {
                        break;
                    }
                }
            }
        }
    })
}

fn exit_event(code: i32) -> ExecSandboxEvent {
    ExecSandboxEvent {
        payload: Some(exec_sandbox_event::Payload::Exit(ExecSandboxExit {
            exit_code: code,
        })),
    }
}

fn code_of(status: std::io::Result<std::process::ExitStatus>) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status
        .ok()
        .and_then(|s| s.code().or_else(|| s.signal().map(|n| 128 + n)))
        .unwrap_or(1)
}

/// Waits for the child (up to `timeout`), drains its output, then sends the exit event.
async fn finish(
    mut child: Child,
    timeout: Option<Duration>,
    events: Events,
    readers: Vec<tokio::task::JoinHandle<()>>,
    cut: CancellationToken,
) {
    let waited = async {
        match timeout {
            Some(limit) => tokio::time::timeout(limit, child.wait()).await.ok(),
            None => Some(child.wait().await),
        }
    };
    let outcome = tokio::select! {
        status = waited => status,
        () = cut.cancelled() => {
            let _ = child.kill().await;
            let _ = events
                .send(Err(Status::unavailable("exec relay closed before the command reported an exit status")))
                .await;
            return;
        }
    };
    let code = match outcome {
        Some(status) => code_of(status),
        None => {
            let _ = child.kill().await;
            TIMEOUT_EXIT
        }
    };
    for reader in readers {
        let _ = tokio::time::timeout(Duration::from_secs(1), reader).await;
    }
    let _ = events.send(Ok(exit_event(code))).await;
}

pub fn exec(
    service: &DoubleService,
    request: &ExecSandboxRequest,
) -> Result<BoxStream<ExecSandboxEvent>, Status> {
    let mut child = spawn(service, request, !request.stdin.is_empty())?;
    let (tx, rx) = mpsc::channel(64);
    let mut readers = Vec::new();
    if let Some(out) = child.stdout.take() {
        readers.push(pump(out, tx.clone(), true));
    }
    if let Some(err) = child.stderr.take() {
        readers.push(pump(err, tx.clone(), false));
    }
    if let Some(mut stdin) = child.stdin.take() {
        let bytes = request.stdin.clone();
        tokio::spawn(async move {
            let _ = stdin.write_all(&bytes).await;
        });
    }
    let timeout = request.execution_timeout.map(|d| {
        Duration::from_secs(u64::try_from(d.seconds).unwrap_or(0))
            + Duration::from_nanos(u64::try_from(d.nanos).unwrap_or(0))
    });
    tokio::spawn(finish(
        child,
        timeout,
        tx,
        readers,
        CancellationToken::new(),
    ));
    Ok(Box::pin(ReceiverStream::new(rx)))
}

pub async fn interactive(
    service: &DoubleService,
    mut input: Streaming<ExecSandboxInput>,
) -> Result<BoxStream<ExecSandboxEvent>, Status> {
    let first = input
        .message()
        .await?
        .ok_or_else(|| Status::invalid_argument("the stream closed before its start message"))?;
    let Some(exec_sandbox_input::Payload::Start(request)) = first.payload else {
        return Err(Status::invalid_argument(
            "the first message must be `start`",
        ));
    };
    let mut child = spawn(service, &request, true)?;
    let cut = CancellationToken::new();
    service
        .knobs
        .attach_streams
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(cut.clone());
    let (tx, rx) = mpsc::channel(64);
    let mut readers = Vec::new();
    if let Some(out) = child.stdout.take() {
        readers.push(pump(out, tx.clone(), true));
    }
    if let Some(err) = child.stderr.take() {
        readers.push(pump(err, tx.clone(), false));
    }
    if let Some(mut stdin) = child.stdin.take() {
        let cut_input = cut.clone();
        tokio::spawn(async move {
            loop {
                let message = tokio::select! {
                    () = cut_input.cancelled() => break,
                    message = input.message() => message,
                };
                match message {
                    Ok(Some(ExecSandboxInput {
                        payload: Some(exec_sandbox_input::Payload::Stdin(bytes)),
                    })) => {
                        if stdin.write_all(&bytes).await.is_err() {
                            break;
                        }
                    }
                    Ok(Some(_)) => {}
                    // The client closed its side (or vanished): EOF on stdin.
                    Ok(None) | Err(_) => break,
                }
            }
            let _ = stdin.shutdown().await;
        });
    }
    tokio::spawn(finish(child, None, tx, readers, cut));
    Ok(Box::pin(ReceiverStream::new(rx)))
}
