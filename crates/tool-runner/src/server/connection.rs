//! One connection: reads frames, starts calls, answers malformed lines.

use std::io::{BufReader, Read, Write};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex, PoisonError};

use tool_protocol::{
    Call, Data, Encoding, ErrorCode, HostFrame, LineReader, MAX_LINE_BYTES, RunnerFrame, Stream,
    ToolRequest, ToolResult,
};

use super::calls::Calls;
use super::writer::{FrameSender, FrameWriter};
use super::{Ending, Runner, SHUTDOWN_GRACE};
use crate::call::OutputSink;
use crate::error::ToolError;
use crate::tools::transfer::Transfers;
use crate::tools::{self, CallContext};

pub(super) fn serve(
    runner: &Arc<Runner>,
    calls: &Arc<Calls>,
    input: impl Read,
    output: impl Write + Send + 'static,
) -> Ending {
    let on_broken = Arc::clone(calls);
    let Ok(writer) = FrameWriter::start(output, move || on_broken.cancel_all()) else {
        return Ending::OutputClosed;
    };
    let Some(sender) = writer.sender() else {
        return Ending::OutputClosed;
    };
    sender.send(&RunnerFrame::Hello(runner.hello()));
    let mut connection = Connection {
        runner,
        calls,
        sender,
        transfers: Transfers::new(),
    };
    let ending = connection.read_frames(input);
    match ending {
        Ending::Eof => {
            calls.wait_idle(None);
        }
        Ending::Shutdown | Ending::OutputClosed => {
            calls.cancel_all();
            calls.wait_idle(Some(SHUTDOWN_GRACE));
        }
    }
    drop(connection);
    writer.finish(Some(SHUTDOWN_GRACE));
    ending
}

struct Connection<'a> {
    runner: &'a Arc<Runner>,
    calls: &'a Arc<Calls>,
    sender: FrameSender,
    transfers: Transfers,
}

impl Connection<'_> {
    fn read_frames(&mut self, input: impl Read) -> Ending {
        let mut lines = LineReader::new(BufReader::with_capacity(256 * 1024, input));
        loop {
            if self.sender.is_broken() {
                return Ending::OutputClosed;
            }
            let Ok(Some(line)) = lines.next_line() else {
                return Ending::Eof;
            };
            match HostFrame::decode(&line) {
                Ok(HostFrame::Call(call)) => self.start(call),
                Ok(HostFrame::Cancel { id }) => self.calls.cancel(&id),
                Ok(HostFrame::Shutdown) => return Ending::Shutdown,
                Err(e) => {
                    self.sender.send(&e.to_frame());
                }
            }
        }
    }

    fn start(&mut self, call: Call) {
        let Call { id, request } = call;
        let Some(control) = self.calls.begin(&id) else {
            self.sender.send(&RunnerFrame::Error {
                message: format!("call id `{id}` is already in flight"),
                id: Some(id),
                code: ErrorCode::DuplicateId,
            });
            return;
        };
        if let ToolRequest::Upload(args) = &request {
            // Chunks of a transfer must apply in arrival order: run them here, one by one.
            let outcome = self
                .transfers
                .upload(self.runner.guard(), args)
                .map(ToolResult::from);
            self.calls.end(&id);
            send_outcome(&self.sender, &id, outcome);
            return;
        }
        let runner = Arc::clone(self.runner);
        let calls = Arc::clone(self.calls);
        let sender = self.sender.clone();
        self.runner.pool.submit(move || {
            let sink = Arc::new(CallSink {
                id: id.clone(),
                sender: Mutex::new(Some(sender.clone())),
            });
            let output: Arc<dyn OutputSink> = Arc::clone(&sink) as Arc<dyn OutputSink>;
            let tool = request.name();
            let ctx = CallContext {
                guard: &runner.guard,
                limits: &runner.limits,
                control: &control,
                output: &output,
            };
            let outcome = catch_unwind(AssertUnwindSafe(|| tools::run(&ctx, request)))
                .unwrap_or_else(|_| Err(ToolError::internal(format!("the {tool} tool panicked"))));
            // Nothing may follow the final frame: close the sink first.
            sink.close();
            calls.end(&id);
            send_outcome(&sender, &id, outcome);
        });
    }
}

/// The `output` frames of one call. Closed when the call ends, so a stray thread of the call
/// (a reader of a pipe an escaped process still holds) can neither send nor keep the writer
/// alive.
struct CallSink {
    id: String,
    sender: Mutex<Option<FrameSender>>,
}

impl CallSink {
    fn close(&self) {
        *self.sender.lock().unwrap_or_else(PoisonError::into_inner) = None;
    }
}

impl OutputSink for CallSink {
    fn send(&self, stream: Stream, bytes: &[u8], encoding: Encoding) -> bool {
        let sender = self
            .sender
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let Some(sender) = sender else {
            return false;
        };
        // The fast encoder (no JSON tree, the same bytes), into a recycled buffer.
        let mut line = sender.buffer();
        RunnerFrame::encode_output_into(&self.id, stream, bytes, encoding, &mut line);
        sender.send_line(line)
    }
}

fn send_outcome(sender: &FrameSender, id: &str, outcome: Result<ToolResult, ToolError>) {
    let line = match outcome {
        Ok(result) => encode_result(id, result),
        Err(e) => error_line(id, e),
    };
    sender.send_line(line.into_bytes());
}

fn error_line(id: &str, e: ToolError) -> String {
    RunnerFrame::Error {
        id: Some(id.to_owned()),
        code: e.code,
        message: e.message,
    }
    .encode()
}

/// The `result` frame, kept under the line limit: command output that escapes badly as JSON
/// text is sent as base64 instead, and a result still too large becomes a `too_large` error.
fn encode_result(id: &str, result: ToolResult) -> String {
    let frame = RunnerFrame::Result {
        id: id.to_owned(),
        result,
    };
    let line = frame.encode();
    if line.len() <= MAX_LINE_BYTES {
        return line;
    }
    let len = line.len();
    if let RunnerFrame::Result {
        result: ToolResult::RunBash(mut bash),
        ..
    } = frame
    {
        bash.stdout = Data::Bytes(bash.stdout.into_bytes());
        bash.stderr = Data::Bytes(bash.stderr.into_bytes());
        let line = RunnerFrame::Result {
            id: id.to_owned(),
            result: bash.into(),
        }
        .encode();
        if line.len() <= MAX_LINE_BYTES {
            return line;
        }
    }
    error_line(
        id,
        ToolError::new(
            ErrorCode::TooLarge,
            format!(
                "the result is {len} bytes, over the {MAX_LINE_BYTES}-byte frame limit; \
                 ask for less (a smaller limit, depth or range)"
            ),
        ),
    )
}
