//! An incremental parser for `text/event-stream` (Server-Sent Events), shared by both vendors.
//!
//! Bytes arrive in arbitrary chunks: a line, a CRLF pair or a UTF-8 character may be split
//! between two chunks. The parser follows the WHATWG event-stream rules: lines end in LF, CR
//! or CRLF; a blank line dispatches the event; `:` starts a comment; several `data:` lines join
//! with `\n`; one space after the colon is dropped; a leading byte-order mark is ignored; an
//! event cut off by the end of the stream is discarded.

/// The longest line or event accepted; longer input is a protocol error, not unbounded memory.
pub const MAX_EVENT_BYTES: usize = 16 * 1024 * 1024;

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` name; `None` for the default type (`message`).
    pub event: Option<String>,
    /// The `data:` lines joined with `\n`.
    pub data: String,
}

/// Why the byte stream is not a valid event stream.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SseError {
    #[error("event stream line {line} is not valid UTF-8")]
    InvalidUtf8 { line: u64 },
    #[error("event stream line {line} or its event exceeds {MAX_EVENT_BYTES} bytes")]
    TooLong { line: u64 },
}

/// The parser's state between chunks.
#[derive(Debug, Default)]
pub struct SseParser {
    line: Vec<u8>,
    line_number: u64,
    after_cr: bool,
    event: Option<String>,
    data: String,
    has_data: bool,
}

impl SseParser {
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds one chunk; complete events are appended to `out`.
    pub fn push(&mut self, chunk: &[u8], out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        let mut rest = chunk;
        if rest.is_empty() {
            return Ok(());
        }
        if self.after_cr {
            self.after_cr = false;
            if let Some(stripped) = rest.strip_prefix(b"\n") {
                rest = stripped;
            }
        }
        while let Some(end) = rest.iter().position(|&b| b == b'\n' || b == b'\r') {
            self.append_to_line(&rest[..end])?;
            self.complete_line(out)?;
            if rest[end] == b'\r' {
                match rest.get(end + 1) {
                    Some(b'\n') => rest = &rest[end + 2..],
                    Some(_) => rest = &rest[end + 1..],
                    None => {
                        self.after_cr = true;
                        rest = &[];
                    }
                }
            } else {
                rest = &rest[end + 1..];
            }
        }
        self.append_to_line(rest)
    }

    /// Ends the stream. Per the event-stream rules an event without its closing blank line
    /// is not dispatched; returns whether such an incomplete event (or line) was dropped.
    pub fn finish(&mut self) -> bool {
        let dropped = !self.line.is_empty() || self.has_data;
        *self = Self::default();
        dropped
    }

    fn append_to_line(&mut self, bytes: &[u8]) -> Result<(), SseError> {
        if self.line.len() + bytes.len() > MAX_EVENT_BYTES {
            return Err(SseError::TooLong {
                line: self.line_number + 1,
            });
        }
        self.line.extend_from_slice(bytes);
        Ok(())
    }

    fn complete_line(&mut self, out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        self.line_number += 1;
        let mut bytes = std::mem::take(&mut self.line);
        if self.line_number == 1 && bytes.starts_with("\u{feff}".as_bytes()) {
            bytes.drain(..3);
        }
        let line = String::from_utf8(bytes).map_err(|_| SseError::InvalidUtf8 {
            line: self.line_number,
        })?;
        if line.is_empty() {
            self.dispatch(out);
            return Ok(());
        }
        if line.starts_with(':') {
            return Ok(());
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line.as_str(), ""),
        };
        match field {
            "event" => self.event = (!value.is_empty()).then(|| value.to_owned()),
            "data" => {
                if self.data.len() + value.len() + 1 > MAX_EVENT_BYTES {
                    return Err(SseError::TooLong {
                        line: self.line_number,
                    });
                }
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            // `id` and `retry` matter to browsers reconnecting; a model stream is never resumed.
            _ => {}
        }
        Ok(())
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        let event = self.event.take();
        if self.has_data {
            self.has_data = false;
            out.push(SseEvent {
                event,
                data: std::mem::take(&mut self.data),
            });
        }
    }
}

#[cfg(test)]
#[path = "sse_tests.rs"]
mod tests;
