//! `run_bash`: `bash -c COMMAND` in its own process group, with streamed and capped output, a
//! timeout and cancel that kill the whole group (grandchildren included).
//!
//! After the command exits, its output pipes may still be held open by a background process it
//! started. The runner waits a short grace for them to close, then kills the process group,
//! waits one more grace, and finally stops reading: a process that escaped the group (`setsid`)
//! and kept the pipe cannot hang the call. A background process that redirected its output
//! elsewhere is left running, as a shell would.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use tool_protocol::{Data, Encoding, ErrorCode, RunBash, RunBashResult, Stream};

use super::CallContext;
use super::capture::{Capture, incomplete_suffix};
use crate::call::OutputSink;
use crate::error::ToolError;
use crate::path_guard::Options;

/// How long the pipes may stay open after the command exited, before the group is killed.
const PIPE_GRACE: Duration = Duration::from_millis(250);
/// Bytes read from a pipe at a time (also the largest `output` frame).
const READ_CHUNK: usize = 32 * 1024;

/// The captures of both streams; `closed` once the result is being built, after which the
/// readers neither capture nor send.
struct Shared {
    stdout: Capture,
    stderr: Capture,
    closed: bool,
}

impl Shared {
    fn capture(&mut self, stream: Stream) -> &mut Capture {
        match stream {
            Stream::Stderr => &mut self.stderr,
            _ => &mut self.stdout,
        }
    }
}

type SharedRef = Arc<Mutex<Shared>>;

fn lock(shared: &SharedRef) -> std::sync::MutexGuard<'_, Shared> {
    shared.lock().unwrap_or_else(PoisonError::into_inner)
}

pub fn run_bash(ctx: &CallContext<'_>, args: &RunBash) -> Result<RunBashResult, ToolError> {
    let timeout = timeout(ctx, args)?;
    let cap = args
        .max_output_bytes
        .unwrap_or(ctx.limits.default_output_bytes);
    if cap > ctx.limits.max_output_bytes {
        return Err(ToolError::bad_args(
            "max_output_bytes",
            format!(
                "{cap} is over the limit of {} bytes per stream",
                ctx.limits.max_output_bytes
            ),
        ));
    }
    let cap = usize::try_from(cap).unwrap_or(usize::MAX);
    let command = command(ctx, args)?;
    let shared: SharedRef = Arc::new(Mutex::new(Shared {
        stdout: Capture::new(cap),
        stderr: Capture::new(cap),
        closed: false,
    }));
    // The threads that read the pipes and wait for the exit are started before the command:
    // a command that fills the sandbox's process limit at once (a fork bomb) must not leave
    // the runner unable to start them.
    let (done_tx, done_rx) = mpsc::channel();
    let stdout_pipe = spawn_reader(Stream::Stdout, &shared, ctx.output, cap, &done_tx);
    let stderr_pipe = spawn_reader(Stream::Stderr, &shared, ctx.output, cap, &done_tx);
    drop(done_tx);
    let (child_tx, child_rx) = mpsc::channel::<Child>();
    let (exit_tx, exit_rx) = mpsc::channel();
    thread::Builder::new()
        .name("bash-wait".into())
        .spawn(move || {
            if let Ok(child) = child_rx.recv() {
                let _ = exit_tx.send(crate::confine::wait(child));
            }
        })
        .map_err(|e| ToolError::internal(format!("cannot start a thread: {e}")))?;

    let started = Instant::now();
    let mut child = crate::confine::spawn(command)
        .map_err(|e| ToolError::new(ErrorCode::Io, format!("cannot start bash: {e}")))?;
    ctx.control.set_process_group(child.id());

    let mut readers = 0;
    for (pipe, reader) in [
        (child.stdout.take().map(OwnedFd::from), stdout_pipe),
        (child.stderr.take().map(OwnedFd::from), stderr_pipe),
    ] {
        if let (Some(pipe), Some(reader)) = (pipe, reader)
            && reader.send(File::from(pipe)).is_ok()
        {
            readers += 1;
        }
    }
    if let (Some(mut pipe), Some(stdin)) = (child.stdin.take(), &args.stdin) {
        let bytes = stdin.as_bytes().to_vec();
        // A command that never reads its stdin makes this fail with EPIPE once it exits.
        let _ = thread::Builder::new()
            .name("bash-stdin".into())
            .spawn(move || pipe.write_all(&bytes));
    }
    child_tx
        .send(child)
        .map_err(|_| ToolError::internal("run_bash: the waiting thread vanished"))?;

    let (status, timed_out) = wait_for_exit(ctx, &exit_rx, started + timeout)?;
    let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    let mut open_pipes = readers;
    if !wait_for_readers(&done_rx, &mut open_pipes) {
        ctx.control.kill_process_group();
        wait_for_readers(&done_rx, &mut open_pipes);
    }
    ctx.control.clear_process_group();

    let mut shared = lock(&shared);
    shared.closed = true;
    if ctx.control.is_cancelled() {
        return Err(ToolError::cancelled());
    }
    let (stdout, stdout_dropped) = shared.stdout.finish();
    let (stderr, stderr_dropped) = shared.stderr.finish();
    Ok(RunBashResult {
        exit_code: status.code().map(i64::from),
        signal: status.signal().map(i64::from),
        timed_out,
        duration_ms,
        stdout: Data::from_bytes(stdout),
        stderr: Data::from_bytes(stderr),
        stdout_dropped,
        stderr_dropped,
    })
}

fn timeout(ctx: &CallContext<'_>, args: &RunBash) -> Result<Duration, ToolError> {
    let max = ctx.limits.max_timeout;
    match args.timeout_ms {
        None => Ok(ctx.limits.default_timeout.min(max)),
        Some(0) => Err(ToolError::bad_args("timeout_ms", "must be at least 1")),
        Some(ms) if u128::from(ms) > max.as_millis() => Err(ToolError::bad_args(
            "timeout_ms",
            format!(
                "{ms} is over this runner's ceiling of {} ms (--max-timeout-ms)",
                max.as_millis()
            ),
        )),
        Some(ms) => Ok(Duration::from_millis(ms)),
    }
}

/// Checks the arguments and builds the command: `bash -c`, a new process group, the working
/// folder resolved by the path guard.
fn command(ctx: &CallContext<'_>, args: &RunBash) -> Result<Command, ToolError> {
    if args.command.contains('\0') {
        return Err(ToolError::bad_args("command", "contains a NUL byte"));
    }
    for (key, value) in args.env.iter().flatten() {
        if key.is_empty() || key.contains(['=', '\0']) {
            return Err(ToolError::bad_args(
                "env",
                format!("{key:?} is not a valid variable name"),
            ));
        }
        if value.contains('\0') {
            return Err(ToolError::bad_args(
                "env",
                format!("the value of {key} contains a NUL byte"),
            ));
        }
    }
    let resolved = ctx
        .guard
        .resolve("cwd", args.cwd.as_deref().unwrap_or("."), Options::FOLLOW)?;
    let (_, meta) = resolved.existing()?;
    if !meta.is_dir() {
        return Err(ToolError::not_a_directory(resolved.display()));
    }
    let mut command = Command::new("bash");
    command
        .arg("-c")
        .arg(&args.command)
        .current_dir(&resolved.path)
        .env("PWD", &resolved.path)
        .stdin(if args.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    if let Some(env) = &args.env {
        command.envs(env);
    }
    Ok(command)
}

/// Waits for the command to exit, killing its group at the deadline. Returns the status and
/// whether the deadline passed.
fn wait_for_exit(
    ctx: &CallContext<'_>,
    exit_rx: &Receiver<std::io::Result<ExitStatus>>,
    deadline: Instant,
) -> Result<(ExitStatus, bool), ToolError> {
    let waited = match exit_rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
        Ok(waited) => (waited, false),
        Err(RecvTimeoutError::Timeout) => {
            ctx.control.kill_process_group();
            let waited = exit_rx
                .recv()
                .map_err(|_| ToolError::internal("run_bash: the waiting thread vanished"))?;
            (waited, true)
        }
        Err(RecvTimeoutError::Disconnected) => {
            return Err(ToolError::internal("run_bash: the waiting thread vanished"));
        }
    };
    let status = waited
        .0
        .map_err(|e| ToolError::new(ErrorCode::Io, format!("waiting for bash failed: {e}")))?;
    Ok((status, waited.1))
}

/// Waits up to [`PIPE_GRACE`] for the `open` readers to reach end of file; true when all did.
fn wait_for_readers(done_rx: &Receiver<()>, open: &mut usize) -> bool {
    let deadline = Instant::now() + PIPE_GRACE;
    while *open > 0 {
        match done_rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(()) => *open -= 1,
            Err(RecvTimeoutError::Disconnected) => return true,
            Err(RecvTimeoutError::Timeout) => return false,
        }
    }
    true
}

/// Starts a thread that will capture the pipe it is sent; `None` when no thread could be
/// started (the stream is then not read).
fn spawn_reader(
    stream: Stream,
    shared: &SharedRef,
    output: &Arc<dyn OutputSink>,
    cap: usize,
    done: &Sender<()>,
) -> Option<Sender<File>> {
    let shared = Arc::clone(shared);
    let output = Arc::clone(output);
    let done = done.clone();
    let (pipe_tx, pipe_rx) = mpsc::channel::<File>();
    thread::Builder::new()
        .name("bash-output".into())
        .spawn(move || {
            if let Ok(pipe) = pipe_rx.recv() {
                read_stream(pipe, stream, &shared, output.as_ref(), cap);
                let _ = done.send(());
            }
        })
        .ok()
        .map(|_| pipe_tx)
}

/// Captures one pipe and streams its first `cap` bytes as `output` frames.
fn read_stream(
    mut pipe: impl Read,
    stream: Stream,
    shared: &SharedRef,
    output: &dyn OutputSink,
    cap: usize,
) {
    let mut buf = vec![0u8; READ_CHUNK];
    let mut streamer = Streamer {
        carry: Vec::new(),
        budget: cap,
    };
    loop {
        let n = match pipe.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        // Capture and send under the lock, so the result cannot overtake an output frame.
        let mut shared = lock(shared);
        if shared.closed {
            return;
        }
        shared.capture(stream).push(&buf[..n]);
        streamer.feed(&buf[..n], |bytes, encoding| {
            output.send(stream, bytes, encoding);
        });
    }
    let shared = lock(shared);
    if !shared.closed {
        streamer.finish(|bytes, encoding| {
            output.send(stream, bytes, encoding);
        });
    }
}

/// Turns pipe reads into `output` chunks: text when UTF-8 (a character split between reads
/// waits for its other bytes), base64 otherwise; at most `budget` bytes in all.
struct Streamer {
    carry: Vec<u8>,
    budget: usize,
}

impl Streamer {
    fn feed(&mut self, bytes: &[u8], mut emit: impl FnMut(&[u8], Encoding)) {
        let take = bytes.len().min(self.budget);
        if take == 0 {
            return;
        }
        self.budget -= take;
        self.carry.extend_from_slice(&bytes[..take]);
        let waiting = if self.budget == 0 {
            0
        } else {
            match std::str::from_utf8(&self.carry) {
                Ok(_) => 0,
                Err(e) if e.error_len().is_none() => incomplete_suffix(&self.carry),
                Err(_) => 0,
            }
        };
        let ready = self.carry.len() - waiting;
        if ready > 0 {
            let chunk = &self.carry[..ready];
            let encoding = if std::str::from_utf8(chunk).is_ok() {
                Encoding::Utf8
            } else {
                Encoding::Base64
            };
            emit(chunk, encoding);
            self.carry.drain(..ready);
        }
    }

    fn finish(&mut self, mut emit: impl FnMut(&[u8], Encoding)) {
        if !self.carry.is_empty() {
            emit(&self.carry, Encoding::Base64);
            self.carry.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream(reads: &[&[u8]], budget: usize) -> Vec<(Vec<u8>, Encoding)> {
        let mut out = Vec::new();
        let mut streamer = Streamer {
            carry: Vec::new(),
            budget,
        };
        for read in reads {
            streamer.feed(read, |b, e| out.push((b.to_vec(), e)));
        }
        streamer.finish(|b, e| out.push((b.to_vec(), e)));
        out
    }

    #[test]
    fn a_character_split_between_reads_stays_text() {
        let euro = "€".as_bytes();
        let got = stream(&[&[b'a', euro[0]], &euro[1..]], 100);
        assert_eq!(
            got,
            vec![
                (b"a".to_vec(), Encoding::Utf8),
                (euro.to_vec(), Encoding::Utf8)
            ]
        );
    }

    #[test]
    fn invalid_bytes_go_base64_and_the_budget_stops_streaming() {
        let got = stream(&[b"\xff\xfe", b"abcdef"], 5);
        assert_eq!(
            got,
            vec![
                (b"\xff\xfe".to_vec(), Encoding::Base64),
                (b"abc".to_vec(), Encoding::Utf8)
            ]
        );
    }
}
