//! From a response body to [`ModelEvent`]s: a reader task pulls chunks (enforcing the idle
//! timeout and cancellation, and dropping the connection the moment either fires), the
//! stream side parses SSE and hands events to the vendor's decoder.

use std::collections::VecDeque;
use std::time::Duration;

use bytes::Bytes;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::client::ModelStream;
use crate::error::{ModelError, TimeoutPhase};
use crate::keys::ApiKey;
use crate::sse::{SseEvent, SseParser};
use crate::types::ModelEvent;

/// Chunks buffered between the reader task and a slow consumer.
const CHUNK_BUFFER: usize = 16;

/// A vendor's translation of SSE events into model events.
pub(crate) trait StreamDecoder: Send + 'static {
    /// Handles one event, appending what it means to `out`. Returns `true` once the message
    /// is complete (nothing after it is read).
    fn decode(&mut self, event: SseEvent, out: &mut Vec<ModelEvent>) -> Result<bool, ModelError>;

    /// The body ended before `decode` returned `true`: either complete what can honestly be
    /// completed, or say what is missing.
    fn finish(&mut self, out: &mut Vec<ModelEvent>) -> Result<(), ModelError>;
}

/// Turns a successful response into a [`ModelStream`].
pub(crate) fn event_stream(
    response: reqwest::Response,
    decoder: Box<dyn StreamDecoder>,
    idle: Duration,
    cancel: CancellationToken,
    secret: Option<ApiKey>,
) -> ModelStream {
    let (sender, receiver) = mpsc::channel(CHUNK_BUFFER);
    tokio::spawn(read_body(response, sender, idle, cancel.clone()));
    let state = StreamState {
        receiver: Some(receiver),
        parser: SseParser::new(),
        decoder,
        pending: VecDeque::new(),
        cancel,
        secret,
        done: false,
    };
    Box::pin(futures::stream::unfold(state, next_item))
}

/// Describes a transport error without its URL, with its causes.
pub(crate) fn describe_reqwest_error(error: reqwest::Error) -> String {
    let error = error.without_url();
    let mut text = error.to_string();
    let mut source = std::error::Error::source(&error);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

async fn read_body(
    mut response: reqwest::Response,
    sender: mpsc::Sender<Result<Bytes, ModelError>>,
    idle: Duration,
    cancel: CancellationToken,
) {
    loop {
        let chunk = tokio::select! {
            biased;
            () = cancel.cancelled() => return,
            () = sender.closed() => return,
            chunk = tokio::time::timeout(idle, response.chunk()) => chunk,
        };
        let item = match chunk {
            Err(_) => Err(ModelError::Timeout {
                phase: TimeoutPhase::Idle,
                after: idle,
            }),
            Ok(Err(error)) => Err(ModelError::Network {
                message: format!(
                    "the response stream broke: {}",
                    describe_reqwest_error(error)
                ),
            }),
            Ok(Ok(None)) => return,
            Ok(Ok(Some(bytes))) => Ok(bytes),
        };
        let failed = item.is_err();
        tokio::select! {
            biased;
            () = cancel.cancelled() => return,
            sent = sender.send(item) => if sent.is_err() { return },
        }
        if failed {
            return;
        }
    }
    // Every return drops `response`, which closes the connection mid-body.
}

struct StreamState {
    /// `None` once the stream is finished; dropping it stops the reader task.
    receiver: Option<mpsc::Receiver<Result<Bytes, ModelError>>>,
    parser: SseParser,
    decoder: Box<dyn StreamDecoder>,
    pending: VecDeque<Result<ModelEvent, ModelError>>,
    cancel: CancellationToken,
    secret: Option<ApiKey>,
    done: bool,
}

async fn next_item(
    mut state: StreamState,
) -> Option<(Result<ModelEvent, ModelError>, StreamState)> {
    loop {
        if !state.done && state.cancel.is_cancelled() {
            state.pending.clear();
            state.fail(ModelError::Cancelled);
        }
        if let Some(item) = state.pending.pop_front() {
            return Some((item, state));
        }
        let receiver = state.receiver.as_mut()?;
        let message = tokio::select! {
            biased;
            () = state.cancel.cancelled() => continue,
            message = receiver.recv() => message,
        };
        match message {
            Some(Ok(bytes)) => state.feed(&bytes),
            Some(Err(error)) => state.fail(error),
            None => state.end_of_body(),
        }
    }
}

impl StreamState {
    fn close(&mut self) {
        self.receiver = None;
        self.done = true;
    }

    fn fail(&mut self, error: ModelError) {
        let secret = self.secret.as_ref().map(ApiKey::expose_secret);
        self.pending.push_back(Err(error.scrubbed(secret)));
        self.close();
    }

    fn feed(&mut self, bytes: &[u8]) {
        let mut events = Vec::new();
        let parsed = self.parser.push(bytes, &mut events);
        let mut out = Vec::new();
        for event in events {
            match self.decoder.decode(event, &mut out) {
                Ok(complete) => {
                    self.pending.extend(out.drain(..).map(Ok));
                    if complete {
                        self.close();
                        return;
                    }
                }
                Err(error) => {
                    self.pending.extend(out.drain(..).map(Ok));
                    self.fail(error);
                    return;
                }
            }
        }
        if let Err(error) = parsed {
            self.fail(ModelError::protocol(error.to_string()));
        }
    }

    fn end_of_body(&mut self) {
        let cut_off = self.parser.finish();
        let mut out = Vec::new();
        let finished = self.decoder.finish(&mut out);
        self.pending.extend(out.into_iter().map(Ok));
        match finished {
            Ok(()) => self.close(),
            Err(ModelError::Protocol { message }) if cut_off => self.fail(ModelError::protocol(
                format!("{message} (the body ended in the middle of an event)"),
            )),
            Err(error) => self.fail(error),
        }
    }
}
