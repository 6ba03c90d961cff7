//! Frames: what the host sends ([`HostFrame`]) and what the runner sends ([`RunnerFrame`]).
//!
//! ```text
//! runner → host  {"type":"hello","protocol":1,"build_id":"…","roots":[…],"cwd":"…","pid":42}
//! host → runner  {"type":"call","id":"7","tool":"read_file","args":{"path":"a.txt"}}
//! runner → host  {"type":"output","id":"7","stream":"stdout","chunk":{"encoding":"utf8","data":"…"}}
//! runner → host  {"type":"result","id":"7","tool":"read_file","result":{…}}
//! runner → host  {"type":"error","id":"7","code":"outside_roots","message":"…"}
//! host → runner  {"type":"cancel","id":"7"}
//! host → runner  {"type":"shutdown"}
//! ```
//!
//! Calls run concurrently and finish in any order; every call ends with exactly one `result`
//! or `error` frame carrying its id. An `error` whose id is absent answers a line whose id could
//! not be read. A `cancel` for an id not in flight is ignored (the call already ended).

use crate::convert::{FieldError, FromJson, ObjectReader, ToJson};
use crate::data::{Data, Encoding};
use crate::error::ErrorCode;
use crate::framing::Line;
use crate::json::Value;
use crate::tools::{ToolName, ToolRequest, ToolResult};
use crate::{wire_enum, wire_struct};

/// The protocol version. Host and runner must match exactly.
pub const PROTOCOL_VERSION: u64 = 1;

wire_enum! {
    /// Whether a granted folder may be changed.
    pub enum RootMode {
        ReadWrite = "rw",
        ReadOnly = "ro",
    }
}

wire_enum! {
    /// Which stream an `output` frame belongs to.
    pub enum Stream {
        Stdout = "stdout",
        Stderr = "stderr",
        /// File bytes of a `download`.
        Data = "data",
    }
}

wire_struct! {
    /// A folder the runner serves.
    pub struct Root {
        pub path: String,
        pub mode: RootMode,
    }
}

wire_struct! {
    /// The runner's first frame on every connection.
    pub struct Hello {
        pub protocol: u64,
        /// Identifies the runner build (a hash of its executable).
        pub build_id: String,
        pub roots: Vec<Root>,
        /// The folder relative paths resolve against.
        pub cwd: String,
        pub pid: u64,
    }
}

impl Hello {
    /// Refuses a runner that speaks another protocol version, saying which versions met.
    pub fn check_version(&self) -> Result<(), String> {
        if self.protocol == PROTOCOL_VERSION {
            Ok(())
        } else {
            Err(format!(
                "tool-runner {} speaks protocol version {}, but this host speaks version {}; \
                 install the tool-runner that ships with this Paddock build",
                self.build_id, self.protocol, PROTOCOL_VERSION
            ))
        }
    }
}

/// A tool call: an id unique among the calls in flight, and the tool's arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    pub id: String,
    pub request: ToolRequest,
}

/// A frame from the host to the runner.
#[derive(Debug, Clone, PartialEq)]
pub enum HostFrame {
    Call(Call),
    Cancel { id: String },
    Shutdown,
}

/// A frame from the runner to the host.
#[derive(Debug, Clone, PartialEq)]
pub enum RunnerFrame {
    Hello(Hello),
    Output {
        id: String,
        stream: Stream,
        chunk: Data,
    },
    Result {
        id: String,
        result: ToolResult,
    },
    Error {
        id: Option<String>,
        code: ErrorCode,
        message: String,
    },
}

/// A line that is not a usable frame: the code and message to answer it with, and the call id
/// when it could be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameError {
    pub id: Option<String>,
    pub code: ErrorCode,
    pub message: String,
}

impl std::fmt::Display for FrameError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for FrameError {}

impl FrameError {
    fn new(id: Option<String>, code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            id,
            code,
            message: message.into(),
        }
    }

    fn field(id: Option<String>, code: ErrorCode, e: &FieldError) -> Self {
        Self::new(id, code, e.to_string())
    }

    /// The runner frame that answers this error.
    pub fn to_frame(&self) -> RunnerFrame {
        RunnerFrame::Error {
            id: self.id.clone(),
            code: self.code,
            message: self.message.clone(),
        }
    }
}

fn object(members: Vec<(&str, Value)>) -> Value {
    Value::Object(
        members
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect(),
    )
}

/// Turns a line from the stream into JSON, or the error that answers it.
fn parse_line(line: &Line) -> Result<Value, FrameError> {
    match line {
        Line::Text(text) => Value::parse(text).map_err(|e| {
            FrameError::new(None, ErrorCode::BadJson, format!("line is not JSON: {e}"))
        }),
        Line::TooLong { len } => Err(FrameError::new(
            None,
            ErrorCode::LineTooLong,
            format!(
                "line of {len} bytes is longer than the limit of {} bytes",
                crate::framing::MAX_LINE_BYTES
            ),
        )),
        Line::NotUtf8 { offset } => Err(FrameError::new(
            None,
            ErrorCode::BadUtf8,
            format!("line is not UTF-8 (first bad byte at offset {offset})"),
        )),
    }
}

fn frame_type(value: &Value) -> Result<&str, FrameError> {
    match value {
        Value::Object(_) => value.get("type").and_then(Value::as_str).ok_or_else(|| {
            FrameError::new(
                None,
                ErrorCode::BadFrame,
                "`type`: missing field or not a string",
            )
        }),
        other => Err(FrameError::new(
            None,
            ErrorCode::BadFrame,
            format!("a frame must be a JSON object, got {}", other.kind()),
        )),
    }
}

impl HostFrame {
    /// The frame as one line, `\n` included.
    pub fn encode(&self) -> String {
        let value = match self {
            HostFrame::Call(call) => object(vec![
                ("type", "call".into()),
                ("id", call.id.as_str().into()),
                ("tool", call.request.name().to_json()),
                ("args", call.request.args_json()),
            ]),
            HostFrame::Cancel { id } => {
                object(vec![("type", "cancel".into()), ("id", id.as_str().into())])
            }
            HostFrame::Shutdown => object(vec![("type", "shutdown".into())]),
        };
        let mut line = value.to_json_string();
        line.push('\n');
        line
    }

    /// Reads a host frame from a line. On failure the error carries the call id whenever the
    /// line had a readable one, so the runner can answer that call.
    pub fn decode(line: &Line) -> Result<HostFrame, FrameError> {
        let value = parse_line(line)?;
        let kind = frame_type(&value)?;
        let id = value.get("id").and_then(Value::as_str).map(str::to_owned);
        let mut reader = ObjectReader::new(&value, "")
            .map_err(|e| FrameError::field(None, ErrorCode::BadFrame, &e))?;
        let bad_frame = |e: FieldError| FrameError::field(id.clone(), ErrorCode::BadFrame, &e);
        let _: String = reader.field("type").map_err(bad_frame)?;
        let frame = match kind {
            "call" => {
                let id: String = reader.field("id").map_err(bad_frame)?;
                let tool: String = reader.field("tool").map_err(bad_frame)?;
                let name = ToolName::from_wire(&tool).ok_or_else(|| {
                    FrameError::new(
                        Some(id.clone()),
                        ErrorCode::UnknownTool,
                        format!("unknown tool `{tool}`"),
                    )
                })?;
                let args: Value = reader.field("args").map_err(bad_frame)?;
                reader.finish().map_err(bad_frame)?;
                let request = ToolRequest::from_args(name, &args)
                    .map_err(|e| FrameError::field(Some(id.clone()), ErrorCode::BadArgs, &e))?;
                return Ok(HostFrame::Call(Call { id, request }));
            }
            "cancel" => HostFrame::Cancel {
                id: reader.field("id").map_err(bad_frame)?,
            },
            "shutdown" => HostFrame::Shutdown,
            other => {
                return Err(FrameError::new(
                    id,
                    ErrorCode::UnknownType,
                    format!("unknown frame type `{other}`"),
                ));
            }
        };
        reader.finish().map_err(bad_frame)?;
        Ok(frame)
    }
}

impl RunnerFrame {
    /// The frame as one line, `\n` included.
    pub fn encode(&self) -> String {
        let value = match self {
            RunnerFrame::Hello(hello) => {
                let mut members = vec![("type".to_owned(), Value::from("hello"))];
                if let Value::Object(rest) = hello.to_json() {
                    members.extend(rest);
                }
                Value::Object(members)
            }
            RunnerFrame::Output { id, stream, chunk } => object(vec![
                ("type", "output".into()),
                ("id", id.as_str().into()),
                ("stream", stream.to_json()),
                ("chunk", chunk.to_json()),
            ]),
            RunnerFrame::Result { id, result } => object(vec![
                ("type", "result".into()),
                ("id", id.as_str().into()),
                ("tool", result.name().to_json()),
                ("result", result.value_json()),
            ]),
            RunnerFrame::Error { id, code, message } => {
                let mut members = vec![("type", "error".into())];
                if let Some(id) = id {
                    members.push(("id", id.as_str().into()));
                }
                members.push(("code", code.to_json()));
                members.push(("message", message.as_str().into()));
                object(members)
            }
        };
        let mut line = value.to_json_string();
        line.push('\n');
        line
    }

    /// Appends one `output` frame to `out`: byte for byte what [`RunnerFrame::encode`] writes
    /// for `Output { id, stream, chunk }`, without building a JSON tree (the download hot
    /// path). `Encoding::Utf8` applies only when `bytes` are UTF-8; otherwise they go base64.
    pub fn encode_output_into(
        id: &str,
        stream: Stream,
        bytes: &[u8],
        encoding: Encoding,
        out: &mut Vec<u8>,
    ) {
        let mut head = String::with_capacity(80 + id.len());
        head.push_str("{\"type\":\"output\",\"id\":");
        crate::json::write_string(id, &mut head);
        head.push_str(",\"stream\":\"");
        head.push_str(stream.as_str());
        head.push_str("\",\"chunk\":{\"encoding\":");
        let text = match encoding {
            Encoding::Utf8 => std::str::from_utf8(bytes).ok(),
            Encoding::Base64 => None,
        };
        match text {
            Some(text) => {
                head.push_str("\"utf8\",\"data\":");
                crate::json::write_string(text, &mut head);
                out.extend_from_slice(head.as_bytes());
            }
            None => {
                head.push_str("\"base64\",\"data\":\"");
                out.reserve(head.len() + crate::base64::encoded_len(bytes.len()) + 4);
                out.extend_from_slice(head.as_bytes());
                crate::base64::encode_into_vec(bytes, out);
                out.push(b'"');
            }
        }
        out.extend_from_slice(b"}}\n");
    }

    /// Reads a runner frame from a line (the host side).
    pub fn decode(line: &Line) -> Result<RunnerFrame, FrameError> {
        if let Line::Text(text) = line
            && let Some(frame) = decode_canonical_output(text)
        {
            return Ok(frame);
        }
        let value = parse_line(line)?;
        let kind = frame_type(&value)?;
        let id = value.get("id").and_then(Value::as_str).map(str::to_owned);
        let bad_frame = |e: FieldError| FrameError::field(id.clone(), ErrorCode::BadFrame, &e);
        let mut reader = ObjectReader::new(&value, "").map_err(bad_frame)?;
        let _: String = reader.field("type").map_err(bad_frame)?;
        let frame = match kind {
            "hello" => {
                // Hello's members sit beside `type`; read them as the Hello struct.
                let members: Vec<(String, Value)> = match &value {
                    Value::Object(m) => m.iter().filter(|(k, _)| k != "type").cloned().collect(),
                    _ => Vec::new(),
                };
                let hello = Hello::from_json(&Value::Object(members), "").map_err(bad_frame)?;
                return Ok(RunnerFrame::Hello(hello));
            }
            "output" => RunnerFrame::Output {
                id: reader.field("id").map_err(bad_frame)?,
                stream: reader.field("stream").map_err(bad_frame)?,
                chunk: reader.field("chunk").map_err(bad_frame)?,
            },
            "result" => {
                let id: String = reader.field("id").map_err(bad_frame)?;
                let name: ToolName = reader.field("tool").map_err(bad_frame)?;
                let value: Value = reader.field("result").map_err(bad_frame)?;
                RunnerFrame::Result {
                    result: ToolResult::from_value(name, &value).map_err(bad_frame)?,
                    id,
                }
            }
            "error" => RunnerFrame::Error {
                id: reader.field("id").map_err(bad_frame)?,
                code: reader.field("code").map_err(bad_frame)?,
                message: reader.field("message").map_err(bad_frame)?,
            },
            other => {
                return Err(FrameError::new(
                    id,
                    ErrorCode::UnknownType,
                    format!("unknown frame type `{other}`"),
                ));
            }
        };
        reader.finish().map_err(bad_frame)?;
        Ok(frame)
    }
}

/// The download hot path of [`RunnerFrame::decode`]: an `output` frame with base64 data,
/// written exactly as [`RunnerFrame::encode`] writes it, is read without a JSON tree. Anything
/// else (escapes in the id, other member order, whitespace, bad base64) returns `None` and
/// takes the general path, so results and errors are the same either way.
fn decode_canonical_output(text: &str) -> Option<RunnerFrame> {
    let (id, stream, data) = canonical_output_parts(text.as_bytes())?;
    let mut bytes = Vec::new();
    crate::base64::decode_slice_into(data, &mut bytes).ok()?;
    Some(RunnerFrame::Output {
        id: id.to_owned(),
        stream,
        chunk: Data::Bytes(bytes),
    })
}

/// The id, stream and base64 text of a canonical base64 `output` line.
fn canonical_output_parts(line: &[u8]) -> Option<(&str, Stream, &[u8])> {
    let rest = line.strip_prefix(b"{\"type\":\"output\",\"id\":\"")?;
    let end = rest.iter().position(|&b| b == b'"')?;
    let (id, rest) = (&rest[..end], &rest[end + 1..]);
    if id.iter().any(|&b| b < 0x20 || b == b'\\' || b == 0x7f) {
        return None;
    }
    let id = std::str::from_utf8(id).ok()?;
    let rest = rest.strip_prefix(b",\"stream\":\"")?;
    let end = rest.iter().position(|&b| b == b'"')?;
    let stream = Stream::from_wire(std::str::from_utf8(&rest[..end]).ok()?)?;
    let data = rest[end + 1..]
        .strip_prefix(b",\"chunk\":{\"encoding\":\"base64\",\"data\":\"")?
        .strip_suffix(b"\"}}")?;
    Some((id, stream, data))
}

impl RunnerFrame {
    /// The host's download path: for an `output` line written by the runner (canonical, base64;
    /// without its newline), appends the chunk's bytes to `out` without an intermediate buffer
    /// and returns the call id and stream. The line need not have been checked for UTF-8. Any
    /// other line returns `None` and leaves `out` unchanged; read it with
    /// [`RunnerFrame::decode`].
    pub fn append_output_bytes<'a>(line: &'a [u8], out: &mut Vec<u8>) -> Option<(&'a str, Stream)> {
        let (id, stream, data) = canonical_output_parts(line)?;
        crate::base64::decode_slice_into(data, out).ok()?;
        Some((id, stream))
    }

    /// The call id, stream and still-encoded base64 data of a canonical base64 `output` line,
    /// so a host can pick the buffer to decode into by call id. Any other line returns `None`.
    pub fn output_parts(line: &[u8]) -> Option<(&str, Stream, &[u8])> {
        canonical_output_parts(line)
    }
}

/// A raw JSON value is itself a valid field type (used for `args` and `result`).
impl FromJson for Value {
    fn from_json(value: &Value, _path: &str) -> Result<Self, FieldError> {
        Ok(value.clone())
    }
}
