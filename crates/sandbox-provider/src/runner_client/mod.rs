//! The host side of `tool-protocol`: one connection to a tool-runner, many calls in flight.
//!
//! A reader task routes every frame to the call it belongs to; a writer task serialises frames
//! so lines never interleave. Every provider (direct, local, openshell) reaches its runner through
//! a [`RunnerConnection`]; only the byte stream under it differs.

mod lines;
#[cfg(test)]
mod lines_model;

use lines::{FrameReader, RawLine};

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;
use tool_protocol::base64;
use tool_protocol::checksum::Crc32c;
use tool_protocol::{
    Call, Data, Download, DownloadResult, ErrorCode, Hello, HostFrame, RunnerFrame, Stat, Stream,
    ToolRequest, ToolResult, Upload, UploadResult,
};

/// Bytes per download frame: the protocol's maximum, fewest frames per file.
const DOWNLOAD_CHUNK_BYTES: u64 = 4 << 20;

/// The most a download reserves up front from the file's announced size: the size comes from
/// the runner, which a hostile command may have taken over, so larger files grow the buffer as
/// their bytes arrive.
const MAX_PREALLOCATION: usize = 8 << 20;

/// The largest file a download accepts, announced or received.
pub const MAX_DOWNLOAD_BYTES: u64 = 1 << 30;

/// How long the host waits for a cancelled call's final frame before giving up on it.
const CANCEL_GRACE: Duration = Duration::from_secs(5);

/// A chunk of a call's output, as it arrives.
#[derive(Debug, Clone, PartialEq)]
pub struct OutputChunk {
    pub stream: Stream,
    pub chunk: Data,
}

/// Why opening a connection to a runner failed.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    #[error("the tool-runner closed the connection before sending its hello")]
    NoHello,
    #[error("the tool-runner's first frame was not a hello: {0}")]
    BadHello(String),
    #[error("{0}")]
    VersionMismatch(String),
    #[error("no hello from the tool-runner within {0:?}")]
    Timeout(Duration),
    #[error("reading the tool-runner's hello: {0}")]
    Io(#[from] std::io::Error),
}

/// Why a call did not produce a result.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CallError {
    /// The runner refused or failed the call; the message names the path or field.
    #[error("{code}: {message}")]
    Tool { code: ErrorCode, message: String },
    /// The call was cancelled and the runner confirmed it.
    #[error("the call was cancelled")]
    Cancelled,
    /// The connection to the runner ended before the call did.
    #[error("the connection to the tool-runner was lost: {0}")]
    Disconnected(String),
    /// The runner answered with something that does not fit the call.
    #[error("the tool-runner broke the protocol: {0}")]
    Protocol(String),
}

type CallReply = Result<ToolResult, CallError>;

/// A download's bytes, decoded by the reader straight out of each frame's base64.
#[derive(Default)]
struct DownloadBuffer {
    bytes: Vec<u8>,
    crc: Crc32c,
}

/// How a call ended, with its download bytes when it was a download.
struct Finished {
    reply: CallReply,
    download: Option<DownloadBuffer>,
}

struct PendingCall {
    output: Option<mpsc::UnboundedSender<OutputChunk>>,
    download: Option<DownloadBuffer>,
    done: oneshot::Sender<Finished>,
}

impl PendingCall {
    fn finish(self, reply: CallReply) {
        let _ = self.done.send(Finished {
            reply,
            download: self.download,
        });
    }
}

#[derive(Default)]
struct Shared {
    calls: Mutex<HashMap<String, PendingCall>>,
    /// Set once the reader has stopped; new calls fail at once with this reason.
    closed: Mutex<Option<String>>,
}

impl Shared {
    fn calls(&self) -> std::sync::MutexGuard<'_, HashMap<String, PendingCall>> {
        self.calls.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn closed(&self) -> Option<String> {
        self.closed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn close(&self, reason: &str) {
        *self.closed.lock().unwrap_or_else(PoisonError::into_inner) = Some(reason.to_owned());
        for (_, call) in self.calls().drain() {
            call.finish(Err(CallError::Disconnected(reason.to_owned())));
        }
    }
}

/// One live connection to a tool-runner.
pub struct RunnerConnection {
    hello: Hello,
    outgoing: mpsc::UnboundedSender<String>,
    shared: Arc<Shared>,
    next_id: AtomicU64,
    ended: CancellationToken,
}

impl std::fmt::Debug for RunnerConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunnerConnection")
            .field("build_id", &self.hello.build_id)
            .field("pid", &self.hello.pid)
            .finish_non_exhaustive()
    }
}

impl RunnerConnection {
    /// Reads the runner's hello (refusing another protocol version) and starts serving calls.
    pub async fn open<R, W>(reader: R, writer: W, timeout: Duration) -> Result<Self, ConnectError>
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let mut reader = FrameReader::new(reader);
        let first = tokio::time::timeout(timeout, reader.next_line())
            .await
            .map_err(|_| ConnectError::Timeout(timeout))??
            .map(lines::to_line)
            .ok_or(ConnectError::NoHello)?;
        let hello = match RunnerFrame::decode(&first) {
            Ok(RunnerFrame::Hello(hello)) => hello,
            Ok(other) => return Err(ConnectError::BadHello(format!("{other:?}"))),
            Err(e) => return Err(ConnectError::BadHello(e.to_string())),
        };
        hello
            .check_version()
            .map_err(ConnectError::VersionMismatch)?;

        let shared = Arc::new(Shared::default());
        let ended = CancellationToken::new();
        let (outgoing, outgoing_rx) = mpsc::unbounded_channel();
        tokio::spawn(write_frames(writer, outgoing_rx, ended.clone()));
        tokio::spawn(read_frames(reader, shared.clone(), ended.clone()));
        Ok(Self {
            hello,
            outgoing,
            shared,
            next_id: AtomicU64::new(1),
            ended,
        })
    }

    /// What the runner announced: protocol, build, roots, working folder.
    pub fn hello(&self) -> &Hello {
        &self.hello
    }

    /// Resolves when the connection has ended (the runner exited or the stream broke).
    pub async fn ended(&self) {
        self.ended.cancelled().await;
    }

    pub fn is_open(&self) -> bool {
        !self.ended.is_cancelled()
    }

    /// Runs one tool call. Output chunks go to `output` as they arrive. When `cancel` fires the
    /// runner is told to stop the call (killing its process group) and the call ends with
    /// [`CallError::Cancelled`].
    pub async fn call(
        &self,
        request: ToolRequest,
        output: Option<mpsc::UnboundedSender<OutputChunk>>,
        cancel: &CancellationToken,
    ) -> Result<ToolResult, CallError> {
        self.call_collecting(request, output, None, cancel)
            .await
            .reply
    }

    async fn call_collecting(
        &self,
        request: ToolRequest,
        output: Option<mpsc::UnboundedSender<OutputChunk>>,
        download: Option<DownloadBuffer>,
        cancel: &CancellationToken,
    ) -> Finished {
        let id = format!("c{}", self.next_id.fetch_add(1, Ordering::Relaxed));
        let (done, mut done_rx) = oneshot::channel();
        let early_end = |reply| Finished {
            reply: Err(reply),
            download: None,
        };
        {
            let mut calls = self.shared.calls();
            if let Some(reason) = self.shared.closed() {
                return early_end(CallError::Disconnected(reason));
            }
            calls.insert(
                id.clone(),
                PendingCall {
                    output,
                    download,
                    done,
                },
            );
        }
        let frame = HostFrame::Call(Call {
            id: id.clone(),
            request,
        });
        if self.outgoing.send(frame.encode()).is_err() {
            self.shared.calls().remove(&id);
            return early_end(CallError::Disconnected("the writer has stopped".into()));
        }
        tokio::select! {
            finished = &mut done_rx => flatten(finished),
            () = cancel.cancelled() => {
                let _ = self.outgoing.send(HostFrame::Cancel { id: id.clone() }.encode());
                match tokio::time::timeout(CANCEL_GRACE, &mut done_rx).await {
                    Ok(finished) => {
                        let mut finished = flatten(finished);
                        if let Err(CallError::Tool { code: ErrorCode::Cancelled, .. }) =
                            finished.reply
                        {
                            finished.reply = Err(CallError::Cancelled);
                        }
                        finished
                    }
                    Err(_) => {
                        self.shared.calls().remove(&id);
                        early_end(CallError::Protocol(format!(
                            "call {id} was cancelled but the runner did not confirm within {CANCEL_GRACE:?}"
                        )))
                    }
                }
            }
        }
    }

    /// Tells the runner to stop (a `serve` runner exits, a `stdio` runner ends its connection)
    /// and waits up to `grace` for the connection to end.
    pub async fn shutdown(&self, grace: Duration) {
        if self.outgoing.send(HostFrame::Shutdown.encode()).is_ok() {
            let _ = tokio::time::timeout(grace, self.ended.cancelled()).await;
        }
        self.ended.cancel();
    }

    /// Downloads one file, verifying its length and checksum. The chunks are decoded by the
    /// connection's reader straight into one buffer (no frame objects, no channel hop).
    pub async fn download(
        &self,
        path: &str,
        cancel: &CancellationToken,
    ) -> Result<(Vec<u8>, DownloadResult), CallError> {
        // Knowing the size up front saves the buffer's regrowth (copies and page faults); a
        // file that changes meanwhile is still caught by the size and checksum check below.
        let expected = match self
            .call(
                Stat {
                    path: path.to_owned(),
                }
                .into(),
                None,
                cancel,
            )
            .await?
        {
            ToolResult::Stat(stat) => stat.size,
            _ => 0,
        };
        if expected > MAX_DOWNLOAD_BYTES {
            return Err(CallError::Protocol(format!(
                "download of {path}: the file is {expected} bytes, over the limit of \
                 {MAX_DOWNLOAD_BYTES} bytes"
            )));
        }
        let expected = usize::try_from(expected).unwrap_or(0);
        let buffer = DownloadBuffer {
            bytes: Vec::with_capacity(expected.min(MAX_PREALLOCATION)),
            crc: Crc32c::new(),
        };
        let request = Download {
            path: path.to_owned(),
            chunk_bytes: Some(DOWNLOAD_CHUNK_BYTES),
        };
        let finished = self
            .call_collecting(request.into(), None, Some(buffer), cancel)
            .await;
        let buffer = finished.download.unwrap_or_default();
        match finished.reply? {
            ToolResult::Download(done) => {
                let checksum = buffer.crc.to_wire();
                if done.size != buffer.bytes.len() as u64 || done.checksum != checksum {
                    return Err(CallError::Protocol(format!(
                        "download of {path} arrived damaged: runner sent {} bytes ({}), host got {} ({checksum})",
                        done.size,
                        done.checksum,
                        buffer.bytes.len(),
                    )));
                }
                Ok((buffer.bytes, done))
            }
            other => Err(unexpected("download", &other)),
        }
    }

    /// Uploads one file in chunks; it appears atomically once length and checksum match.
    pub async fn upload(
        &self,
        path: &str,
        bytes: &[u8],
        chunk_bytes: usize,
        cancel: &CancellationToken,
    ) -> Result<UploadResult, CallError> {
        let transfer = format!(
            "t{}-{}",
            std::process::id(),
            self.next_id.fetch_add(1, Ordering::Relaxed)
        );
        let checksum = tool_protocol::checksum::checksum(bytes);
        let chunks: Vec<&[u8]> = if bytes.is_empty() {
            vec![&[]]
        } else {
            bytes.chunks(chunk_bytes.max(1)).collect()
        };
        let mut offset = 0u64;
        let mut last_result = None;
        for (i, chunk) in chunks.iter().enumerate() {
            let last = i + 1 == chunks.len();
            let request = Upload {
                path: path.to_owned(),
                transfer: transfer.clone(),
                offset,
                data: Data::binary(chunk.to_vec()),
                last,
                size: last.then_some(bytes.len() as u64),
                checksum: last.then(|| checksum.clone()),
            };
            match self.call(request.into(), None, cancel).await? {
                ToolResult::Upload(result) => last_result = Some(result),
                other => return Err(unexpected("upload", &other)),
            }
            offset += chunk.len() as u64;
        }
        last_result.ok_or_else(|| CallError::Protocol("upload sent no chunk".into()))
    }
}

impl Drop for RunnerConnection {
    fn drop(&mut self) {
        self.ended.cancel();
    }
}

fn flatten(finished: Result<Finished, oneshot::error::RecvError>) -> Finished {
    finished.unwrap_or_else(|_| Finished {
        reply: Err(CallError::Disconnected("the reader has stopped".into())),
        download: None,
    })
}

fn unexpected(tool: &str, result: &ToolResult) -> CallError {
    CallError::Protocol(format!(
        "a {tool} call was answered with a {} result",
        result.name()
    ))
}

async fn write_frames<W: AsyncWrite + Unpin>(
    mut writer: W,
    mut frames: mpsc::UnboundedReceiver<String>,
    ended: CancellationToken,
) {
    loop {
        let line = tokio::select! {
            line = frames.recv() => line,
            () = ended.cancelled() => None,
        };
        let Some(line) = line else { break };
        if let Err(e) = writer.write_all(line.as_bytes()).await {
            tracing::warn!(error = %e, "writing to the tool-runner failed");
            ended.cancel();
            break;
        }
        // Flush only when nothing else is queued: batches frames under load.
        if frames.is_empty()
            && let Err(e) = writer.flush().await
        {
            tracing::warn!(error = %e, "flushing to the tool-runner failed");
            ended.cancel();
            break;
        }
    }
    let _ = writer.shutdown().await;
}

async fn read_frames<R: AsyncRead + Unpin>(
    mut reader: FrameReader<R>,
    shared: Arc<Shared>,
    ended: CancellationToken,
) {
    let reason = loop {
        let raw = tokio::select! {
            raw = reader.next_line() => raw,
            () = ended.cancelled() => break "the connection was closed".to_owned(),
        };
        let line = match raw {
            Ok(Some(raw)) => {
                // Download chunks (and other base64 output) skip the UTF-8 pass and the tree.
                if let RawLine::Bytes(bytes) = raw
                    && let Some((id, stream, data)) = RunnerFrame::output_parts(bytes)
                {
                    route_encoded_output(&shared, id, stream, data);
                    continue;
                }
                lines::to_line(raw)
            }
            Ok(None) => break "the tool-runner closed the connection".to_owned(),
            Err(e) => break format!("reading from the tool-runner failed: {e}"),
        };
        match RunnerFrame::decode(&line) {
            Ok(frame) => route(&shared, frame),
            Err(e) => {
                tracing::warn!(code = %e.code, message = %e.message, "unreadable frame from the tool-runner");
                if let Some(id) = e.id
                    && let Some(call) = shared.calls().remove(&id)
                {
                    call.finish(Err(CallError::Protocol(e.message)));
                }
            }
        }
    };
    ended.cancel();
    shared.close(&reason);
}

/// A base64 `output` frame: decoded into the call's download buffer, or handed to its output
/// channel. Bad base64 fails the call (the runner never writes it).
fn route_encoded_output(shared: &Shared, id: &str, stream: Stream, data: &[u8]) {
    let mut calls = shared.calls();
    let Some(call) = calls.get_mut(id) else {
        return;
    };
    let over_limit = match (&call.download, stream) {
        (Some(buffer), Stream::Data) => {
            (buffer.bytes.len() + data.len() / 4 * 3) as u64 > MAX_DOWNLOAD_BYTES
        }
        _ => false,
    };
    if over_limit {
        if let Some(call) = calls.remove(id) {
            call.finish(Err(CallError::Protocol(format!(
                "download of call {id} grew over the limit of {MAX_DOWNLOAD_BYTES} bytes"
            ))));
        }
        return;
    }
    let decoded = match (&mut call.download, stream) {
        (Some(buffer), Stream::Data) => {
            let start = buffer.bytes.len();
            base64::decode_slice_into(data, &mut buffer.bytes)
                .map(|()| buffer.crc.update(&buffer.bytes[start..]))
        }
        _ => {
            let mut bytes = Vec::with_capacity(data.len() / 4 * 3);
            base64::decode_slice_into(data, &mut bytes).map(|()| {
                if let Some(sink) = &call.output {
                    let _ = sink.send(OutputChunk {
                        stream,
                        chunk: Data::Bytes(bytes),
                    });
                }
            })
        }
    };
    if let Err(e) = decoded
        && let Some(call) = calls.remove(id)
    {
        call.finish(Err(CallError::Protocol(format!(
            "output of call {id} is not base64: {e}"
        ))));
    }
}

fn route(shared: &Shared, frame: RunnerFrame) {
    match frame {
        RunnerFrame::Output { id, stream, chunk } => {
            if let Some(sink) = shared.calls().get(&id).and_then(|c| c.output.as_ref()) {
                let _ = sink.send(OutputChunk { stream, chunk });
            }
        }
        RunnerFrame::Result { id, result } => {
            if let Some(call) = shared.calls().remove(&id) {
                call.finish(Ok(result));
            }
        }
        RunnerFrame::Error {
            id: Some(id),
            code,
            message,
        } => {
            if let Some(call) = shared.calls().remove(&id) {
                call.finish(Err(CallError::Tool { code, message }));
            }
        }
        RunnerFrame::Error {
            id: None,
            code,
            message,
        } => {
            tracing::warn!(%code, %message, "the tool-runner refused a frame without an id");
        }
        RunnerFrame::Hello(_) => {
            tracing::warn!("the tool-runner sent a second hello; ignored");
        }
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncWriteExt;

    use super::*;

    /// A peer that writes `first` as its opening line (the real runner always speaks
    /// [`tool_protocol::PROTOCOL_VERSION`], so other versions can only come from a script).
    async fn open_with_first_line(first: &str) -> Result<RunnerConnection, ConnectError> {
        let (host_side, mut peer) = tokio::io::duplex(4096);
        peer.write_all(first.as_bytes()).await.unwrap();
        let (read, write) = tokio::io::split(host_side);
        RunnerConnection::open(read, write, Duration::from_secs(2)).await
    }

    #[tokio::test]
    async fn another_protocol_version_is_refused_naming_both() {
        let hello = "{\"type\":\"hello\",\"protocol\":99,\"build_id\":\"crc32c:00000000\",\"roots\":[],\"cwd\":\"/\",\"pid\":7}\n";
        let err = open_with_first_line(hello).await.unwrap_err();
        let message = err.to_string();
        assert!(matches!(err, ConnectError::VersionMismatch(_)), "{err:?}");
        assert!(message.contains("protocol version 99"), "{message}");
        assert!(
            message.contains(&format!(
                "this host speaks version {}",
                tool_protocol::PROTOCOL_VERSION
            )),
            "{message}"
        );
    }

    #[tokio::test]
    async fn a_first_frame_that_is_not_hello_is_refused() {
        let err = open_with_first_line("{\"type\":\"shutdown\"}\n")
            .await
            .unwrap_err();
        assert!(matches!(err, ConnectError::BadHello(_)), "{err:?}");
        let err = open_with_first_line("not json\n").await.unwrap_err();
        assert!(err.to_string().contains("not JSON"), "{err}");
    }
}
