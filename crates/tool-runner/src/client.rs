//! A blocking protocol client: speaks `tool-protocol` to a runner over any byte stream. The
//! self-check, the integration tests and the benchmark drive the real runner with it; the
//! host has its own async client in `sandbox-provider`.

use std::collections::HashMap;
use std::fmt;
use std::io::{BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::Duration;

use tool_protocol::{
    Call, Data, ErrorCode, Hello, HostFrame, LineReader, RunnerFrame, Stream, ToolRequest,
    ToolResult,
};

/// Why the client could not talk to the runner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientError(pub String);

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ClientError {}

fn client_error(what: &str, e: impl fmt::Display) -> ClientError {
    ClientError(format!("{what}: {e}"))
}

/// A call's final `error` frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallError {
    pub code: ErrorCode,
    pub message: String,
}

/// Everything a call produced.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    /// `output` frames, in order.
    pub outputs: Vec<(Stream, Data)>,
    pub outcome: Result<ToolResult, CallError>,
}

impl Reply {
    /// The bytes of every `output` frame of `stream`, concatenated.
    pub fn output_bytes(&self, stream: Stream) -> Vec<u8> {
        self.outputs
            .iter()
            .filter(|(s, _)| *s == stream)
            .flat_map(|(_, data)| data.as_bytes().iter().copied())
            .collect()
    }
}

type Routes = Arc<Mutex<HashMap<String, Sender<RunnerFrame>>>>;

/// A connection to a runner.
pub struct Client {
    writer: Mutex<Box<dyn Write + Send>>,
    routes: Routes,
    unrouted: Mutex<Receiver<RunnerFrame>>,
    hello: Hello,
    next_id: AtomicU64,
}

/// A call that was sent; [`PendingCall::wait`] collects its frames.
pub struct PendingCall {
    pub id: String,
    frames: Receiver<RunnerFrame>,
}

impl Client {
    /// Reads the runner's `hello` from `input` and starts routing its frames by call id.
    pub fn new(
        input: impl Read + Send + 'static,
        output: impl Write + Send + 'static,
    ) -> Result<Self, ClientError> {
        let mut lines = LineReader::new(BufReader::with_capacity(256 * 1024, input));
        let first = lines
            .next_line()
            .map_err(|e| client_error("reading hello", e))?
            .ok_or_else(|| ClientError("the runner closed the stream before hello".into()))?;
        let hello = match RunnerFrame::decode(&first) {
            Ok(RunnerFrame::Hello(hello)) => hello,
            Ok(other) => return Err(ClientError(format!("expected hello, got {other:?}"))),
            Err(e) => return Err(client_error("reading hello", e)),
        };
        hello.check_version().map_err(ClientError)?;
        let routes: Routes = Arc::default();
        let (unrouted_tx, unrouted) = mpsc::channel();
        let reader_routes = Arc::clone(&routes);
        thread::Builder::new()
            .name("client-reader".into())
            .spawn(move || route_frames(lines, &reader_routes, &unrouted_tx))
            .map_err(|e| client_error("starting the reader", e))?;
        Ok(Self {
            writer: Mutex::new(Box::new(output)),
            routes,
            unrouted: Mutex::new(unrouted),
            hello,
            next_id: AtomicU64::new(1),
        })
    }

    /// Starts `exe stdio ARGS…` and connects to it. The child is returned so the caller decides
    /// its fate; its stderr is inherited.
    pub fn spawn_stdio(exe: &Path, args: &[String]) -> Result<(Self, Child), ClientError> {
        let mut child = Command::new(exe)
            .arg("stdio")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| client_error(&format!("starting {}", exe.display()), e))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(ClientError("the child has no pipes".into()));
        };
        Ok((Self::new(stdout, stdin)?, child))
    }

    pub fn hello(&self) -> &Hello {
        &self.hello
    }

    /// Writes raw bytes to the runner (for malformed-input tests).
    pub fn send_raw(&self, bytes: &[u8]) -> Result<(), ClientError> {
        let mut writer = self.writer.lock().unwrap_or_else(PoisonError::into_inner);
        writer
            .write_all(bytes)
            .and_then(|()| writer.flush())
            .map_err(|e| client_error("writing to the runner", e))
    }

    /// Sends a call with a fresh id.
    pub fn start(&self, request: impl Into<ToolRequest>) -> Result<PendingCall, ClientError> {
        let id = format!("c{}", self.next_id.fetch_add(1, Ordering::Relaxed));
        self.start_with_id(&id, request)
    }

    /// Sends a call with the given id.
    pub fn start_with_id(
        &self,
        id: &str,
        request: impl Into<ToolRequest>,
    ) -> Result<PendingCall, ClientError> {
        let (tx, frames) = mpsc::channel();
        self.routes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id.to_owned(), tx);
        let frame = HostFrame::Call(Call {
            id: id.to_owned(),
            request: request.into(),
        });
        self.send_raw(frame.encode().as_bytes())?;
        Ok(PendingCall {
            id: id.to_owned(),
            frames,
        })
    }

    /// Sends a call and waits for its end.
    pub fn call(&self, request: impl Into<ToolRequest>) -> Result<Reply, ClientError> {
        self.start(request)?.wait()
    }

    pub fn cancel(&self, id: &str) -> Result<(), ClientError> {
        self.send_raw(HostFrame::Cancel { id: id.to_owned() }.encode().as_bytes())
    }

    pub fn shutdown(&self) -> Result<(), ClientError> {
        self.send_raw(HostFrame::Shutdown.encode().as_bytes())
    }

    /// The next frame that belongs to no pending call (errors without an id, `duplicate_id`),
    /// waiting at most `limit`.
    pub fn next_unrouted(&self, limit: Duration) -> Option<RunnerFrame> {
        self.unrouted
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .recv_timeout(limit)
            .ok()
    }
}

impl PendingCall {
    /// Collects `output` frames until the call's `result` or `error`.
    pub fn wait(self) -> Result<Reply, ClientError> {
        self.wait_at_most(Duration::from_secs(3600))
    }

    pub fn wait_at_most(self, limit: Duration) -> Result<Reply, ClientError> {
        let mut outputs = Vec::new();
        loop {
            let frame = match self.frames.recv_timeout(limit) {
                Ok(frame) => frame,
                Err(RecvTimeoutError::Timeout) => {
                    return Err(ClientError(format!("call {} did not end in time", self.id)));
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(ClientError(format!(
                        "the connection ended before call {} did",
                        self.id
                    )));
                }
            };
            match frame {
                RunnerFrame::Output { stream, chunk, .. } => outputs.push((stream, chunk)),
                RunnerFrame::Result { result, .. } => {
                    return Ok(Reply {
                        outputs,
                        outcome: Ok(result),
                    });
                }
                RunnerFrame::Error { code, message, .. } => {
                    return Ok(Reply {
                        outputs,
                        outcome: Err(CallError { code, message }),
                    });
                }
                RunnerFrame::Hello(_) => {}
            }
        }
    }
}

fn route_frames(
    mut lines: LineReader<BufReader<impl Read>>,
    routes: &Routes,
    unrouted: &Sender<RunnerFrame>,
) {
    while let Ok(Some(line)) = lines.next_line() {
        let Ok(frame) = RunnerFrame::decode(&line) else {
            continue;
        };
        let (id, last) = match &frame {
            RunnerFrame::Output { id, .. } => (Some(id.clone()), false),
            RunnerFrame::Result { id, .. } => (Some(id.clone()), true),
            // A duplicate id error answers the second call; the first one goes on.
            RunnerFrame::Error {
                code: ErrorCode::DuplicateId,
                ..
            } => (None, false),
            RunnerFrame::Error { id, .. } => (id.clone(), true),
            RunnerFrame::Hello(_) => (None, false),
        };
        let mut routes = routes.lock().unwrap_or_else(PoisonError::into_inner);
        let route = id.as_ref().and_then(|id| {
            if last {
                routes.remove(id)
            } else {
                routes.get(id).cloned()
            }
        });
        drop(routes);
        match route {
            Some(route) => {
                let _ = route.send(frame);
            }
            None => {
                let _ = unrouted.send(frame);
            }
        }
    }
    // Dropping the routes' senders tells every waiting call the connection ended.
    routes
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clear();
}
