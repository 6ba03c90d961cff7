//! What the fake server remembers about each request.

use serde_json::Value;

use super::render::WireFormat;

/// The value recorded in place of an API key header.
pub const REDACTED: &str = "[redacted]";

/// One request as the server received it. The key headers (`x-api-key`, `authorization`)
/// are recorded as [`REDACTED`]; whether the right key was sent is in `api_key_sent` and
/// `api_key_accepted`.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedRequest {
    /// 0-based position among all requests this server received.
    pub index: usize,
    pub method: String,
    pub path: String,
    /// `HTTP/1.1` or `HTTP/2.0`.
    pub http_version: String,
    /// `None` for a path that is neither vendor's endpoint.
    pub format: Option<WireFormat>,
    /// Lower-case names, in arrival order, key values redacted.
    pub headers: Vec<(String, String)>,
    /// The JSON body (`Value::Null` if it was not JSON).
    pub body: Value,
    /// A key header was present (`x-api-key` for Anthropic, `Authorization: Bearer` for
    /// OpenAI).
    pub api_key_sent: bool,
    /// The key matched the one the server requires (always `true` when it requires none).
    pub api_key_accepted: bool,
}

impl RecordedRequest {
    /// The first value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(key, _)| *key == name)
            .map(|(_, value)| value.as_str())
    }
}

/// How the response body of a request ended, as the server saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamOutcome {
    /// Everything scripted was handed to the connection and the body was closed.
    Completed,
    /// The script broke the connection ([`super::Reply::drop_after`]).
    ServerDropped,
    /// The client closed the connection before the body was complete (cancellation, a
    /// timeout, or a client that stopped reading).
    ClientDisconnected { after_chunks: usize },
}
