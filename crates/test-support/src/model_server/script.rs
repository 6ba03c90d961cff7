//! What a test scripts the fake server to answer: [`Reply`]s made of vendor-neutral
//! [`ScriptEvent`]s, rendered per request into the wire format the request used.

use std::time::Duration;

use serde_json::Value;

/// One step of a scripted streamed answer. Build them with the functions of [`sse`].
#[derive(Debug, Clone, PartialEq)]
pub enum ScriptEvent {
    /// A text delta.
    Text(String),
    /// A whole tool call: start, its JSON input in three fragments, end.
    ToolUse {
        id: String,
        name: String,
        input: Value,
    },
    /// The start of a tool call whose input follows in [`ScriptEvent::ToolArgs`] (for
    /// interleaving several calls).
    ToolStart { id: String, name: String },
    /// A fragment of a started tool call's JSON input (need not be valid JSON by itself).
    ToolArgs { id: String, fragment: String },
    /// The end of a started tool call.
    ToolEnd { id: String },
    /// The token counts the stream reports (Anthropic: in `message_start` and
    /// `message_delta`; OpenAI: a final usage chunk when the request asked for one).
    Usage {
        input_tokens: u64,
        output_tokens: u64,
    },
    /// The end of the message with an Anthropic-style stop reason (`end_turn`, `tool_use`,
    /// `max_tokens`, `stop_sequence`, or anything else verbatim); rendered for OpenAI as
    /// `finish_reason` `stop` / `tool_calls` / `length` / `stop` / verbatim, then `[DONE]`.
    Stop(String),
    /// An error event inside the stream (Anthropic `event: error`; OpenAI `{"error":…}`).
    Error { kind: String, message: String },
    /// Bytes sent verbatim (a comment, garbage, a half event).
    Raw(String),
}

/// Builders for [`ScriptEvent`]s: `sse::text("hi")`, `sse::tool_use(id, name, json)`,
/// `sse::stop("tool_use")`.
pub mod sse {
    use super::ScriptEvent;
    use serde_json::Value;

    pub fn text(text: impl Into<String>) -> ScriptEvent {
        ScriptEvent::Text(text.into())
    }

    pub fn tool_use(id: impl Into<String>, name: impl Into<String>, input: Value) -> ScriptEvent {
        ScriptEvent::ToolUse {
            id: id.into(),
            name: name.into(),
            input,
        }
    }

    pub fn tool_start(id: impl Into<String>, name: impl Into<String>) -> ScriptEvent {
        ScriptEvent::ToolStart {
            id: id.into(),
            name: name.into(),
        }
    }

    pub fn tool_args(id: impl Into<String>, fragment: impl Into<String>) -> ScriptEvent {
        ScriptEvent::ToolArgs {
            id: id.into(),
            fragment: fragment.into(),
        }
    }

    pub fn tool_end(id: impl Into<String>) -> ScriptEvent {
        ScriptEvent::ToolEnd { id: id.into() }
    }

    pub fn usage(input_tokens: u64, output_tokens: u64) -> ScriptEvent {
        ScriptEvent::Usage {
            input_tokens,
            output_tokens,
        }
    }

    pub fn stop(reason: impl Into<String>) -> ScriptEvent {
        ScriptEvent::Stop(reason.into())
    }

    pub fn error(kind: impl Into<String>, message: impl Into<String>) -> ScriptEvent {
        ScriptEvent::Error {
            kind: kind.into(),
            message: message.into(),
        }
    }

    pub fn raw(bytes: impl Into<String>) -> ScriptEvent {
        ScriptEvent::Raw(bytes.into())
    }
}

/// How a streamed reply ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ending {
    /// Every event is sent and the body closes normally.
    Complete,
    /// After this many events the connection is broken (no clean end of the body).
    DropAfter(usize),
    /// After this many events the server sends nothing more and waits for the client to
    /// leave.
    StallAfter(usize),
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ReplyBody {
    /// A vendor stream: a preamble (`message_start` / the role chunk), then the events.
    Script(Vec<ScriptEvent>),
    /// Exactly these chunks, no preamble, as `text/event-stream`.
    RawStream(Vec<String>),
    /// The vendor's JSON error body with this status.
    Error {
        status: u16,
        kind: String,
        code: Option<String>,
        message: String,
    },
    /// Any status, content type and body.
    Raw {
        status: u16,
        content_type: String,
        body: String,
    },
}

/// One scripted answer, consumed by one request.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    pub(crate) body: ReplyBody,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) delay: Duration,
    pub(crate) gap: Duration,
    pub(crate) ending: Ending,
    pub(crate) piece_size: Option<usize>,
}

impl Reply {
    fn with_body(body: ReplyBody) -> Self {
        Self {
            body,
            headers: Vec::new(),
            delay: Duration::ZERO,
            gap: Duration::ZERO,
            ending: Ending::Complete,
            piece_size: None,
        }
    }

    /// A 200 event stream in the request's wire format.
    pub fn stream(events: impl IntoIterator<Item = ScriptEvent>) -> Self {
        Self::with_body(ReplyBody::Script(events.into_iter().collect()))
    }

    /// A model step that asks for one tool call and stops for its result.
    pub fn tool_call(id: impl Into<String>, name: impl Into<String>, input: Value) -> Self {
        Self::stream([sse::tool_use(id, name, input), sse::stop("tool_use")])
    }

    /// A model step that answers `text` and ends the turn.
    pub fn final_text(text: impl Into<String>) -> Self {
        Self::stream([sse::text(text), sse::stop("end_turn")])
    }

    /// A 200 `text/event-stream` of exactly these chunks (for malformed streams).
    pub fn raw_stream<S: Into<String>>(chunks: impl IntoIterator<Item = S>) -> Self {
        Self::with_body(ReplyBody::RawStream(
            chunks.into_iter().map(Into::into).collect(),
        ))
    }

    /// An error status with the vendor's JSON error body (`kind` is Anthropic's
    /// `error.type`, and OpenAI's `error.type` and `error.code`).
    pub fn error(status: u16, kind: impl Into<String>, message: impl Into<String>) -> Self {
        let kind = kind.into();
        Self::with_body(ReplyBody::Error {
            status,
            code: Some(kind.clone()),
            kind,
            message: message.into(),
        })
    }

    /// Like [`Reply::error`] with a distinct OpenAI `code` (e.g. type
    /// `invalid_request_error`, code `context_length_exceeded`).
    pub fn error_with_code(
        status: u16,
        kind: impl Into<String>,
        code: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Self::with_body(ReplyBody::Error {
            status,
            kind: kind.into(),
            code: Some(code.into()),
            message: message.into(),
        })
    }

    /// Any status, content type and body.
    pub fn raw(status: u16, content_type: impl Into<String>, body: impl Into<String>) -> Self {
        Self::with_body(ReplyBody::Raw {
            status,
            content_type: content_type.into(),
            body: body.into(),
        })
    }

    /// Adds a response header (e.g. `retry-after`).
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Waits this long before sending the response head.
    pub fn delay(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }

    /// Waits this long between two events (or raw chunks).
    pub fn gap(mut self, gap: Duration) -> Self {
        self.gap = gap;
        self
    }

    /// Sends `events` events (after the preamble), then breaks the connection.
    pub fn drop_after(mut self, events: usize) -> Self {
        self.ending = Ending::DropAfter(events);
        self
    }

    /// Sends `events` events (after the preamble), then goes silent until the client leaves.
    pub fn stall_after(mut self, events: usize) -> Self {
        self.ending = Ending::StallAfter(events);
        self
    }

    /// Writes every chunk in pieces of at most `bytes` bytes, each flushed on its own, so
    /// lines and UTF-8 characters arrive split.
    pub fn in_pieces(mut self, bytes: usize) -> Self {
        self.piece_size = Some(bytes.max(1));
        self
    }
}
