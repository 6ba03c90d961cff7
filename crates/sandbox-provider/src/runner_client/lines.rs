//! Async JSON Lines reading with the protocol's hard line limit (the async twin of
//! `tool_protocol::LineReader`, which is blocking).
//!
//! Bytes are read straight into the line buffer (no second buffer to copy out of), and a line is
//! handed out as a borrowed slice, so the download path touches each byte once before decoding.
//!
//! The fuzz target `runner_lines` compiles this file on its own (with `lines_model.rs`, its
//! reference model): keep its imports to std, tokio, memchr and tool-protocol.

use std::io;

use tokio::io::{AsyncRead, AsyncReadExt};
use tool_protocol::{Line, MAX_LINE_BYTES};

/// How much room each read asks for.
const READ_CHUNK: usize = 1 << 20;

/// One line from the stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RawLine<'a> {
    /// The line's bytes, without `\n` or a trailing `\r`; not yet checked for UTF-8.
    Bytes(&'a [u8]),
    /// A line over the limit; its bytes were counted and dropped.
    TooLong { len: usize },
}

/// Reads lines from a byte stream.
#[derive(Debug)]
pub struct FrameReader<R> {
    inner: R,
    buf: Vec<u8>,
    /// Where the next line starts in `buf`.
    start: usize,
    /// How far `buf` was searched for a newline.
    scanned: usize,
    /// Bytes of an over-long line dropped so far.
    dropped: usize,
    /// The longest line handed out; longer ones are [`RawLine::TooLong`].
    limit: usize,
}

impl<R: AsyncRead + Unpin> FrameReader<R> {
    /// A reader with the protocol's limit, [`MAX_LINE_BYTES`].
    pub fn new(inner: R) -> Self {
        Self::with_limit(inner, MAX_LINE_BYTES)
    }

    /// A reader whose lines may be at most `limit` bytes (the fuzz target uses small limits).
    pub fn with_limit(inner: R, limit: usize) -> Self {
        Self {
            inner,
            buf: Vec::new(),
            start: 0,
            scanned: 0,
            dropped: 0,
            limit,
        }
    }

    /// The next line; `None` at end of stream. A final line without `\n` is still returned.
    pub async fn next_line(&mut self) -> io::Result<Option<RawLine<'_>>> {
        if self.start > 0 {
            self.buf.drain(..self.start);
            self.scanned -= self.start;
            self.start = 0;
        }
        loop {
            if let Some(pos) = memchr::memchr(b'\n', &self.buf[self.scanned..]) {
                let end = self.scanned + pos;
                self.start = end + 1;
                self.scanned = self.start;
                let len = std::mem::take(&mut self.dropped) + end;
                if len > self.limit {
                    return Ok(Some(RawLine::TooLong { len }));
                }
                let line = &self.buf[..end];
                return Ok(Some(RawLine::Bytes(
                    line.strip_suffix(b"\r").unwrap_or(line),
                )));
            }
            self.scanned = self.buf.len();
            if self.dropped + self.buf.len() > self.limit {
                // Over the limit: count the bytes, keep none.
                self.dropped += self.buf.len();
                self.buf.clear();
                self.scanned = 0;
            }
            // No read needs room for more than one line past the limit (small limits are
            // the fuzz target's; the protocol's is far above a chunk).
            self.buf
                .reserve(READ_CHUNK.min(self.limit.saturating_add(1)));
            if self.inner.read_buf(&mut self.buf).await? == 0 {
                let len = std::mem::take(&mut self.dropped) + self.buf.len();
                if len == 0 {
                    return Ok(None);
                }
                self.start = self.buf.len();
                self.scanned = self.start;
                if len > self.limit {
                    return Ok(Some(RawLine::TooLong { len }));
                }
                let line = &self.buf[..];
                return Ok(Some(RawLine::Bytes(
                    line.strip_suffix(b"\r").unwrap_or(line),
                )));
            }
        }
    }
}

/// A line as text, or where its UTF-8 breaks.
pub fn to_line(raw: RawLine<'_>) -> Line {
    match raw {
        RawLine::TooLong { len } => Line::TooLong { len },
        RawLine::Bytes(bytes) => match std::str::from_utf8(bytes) {
            Ok(text) => Line::Text(text.to_owned()),
            Err(e) => Line::NotUtf8 {
                offset: e.valid_up_to(),
            },
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn all_lines(input: Vec<u8>) -> Vec<Line> {
        let mut reader = FrameReader::new(&input[..]);
        let mut out = Vec::new();
        while let Some(raw) = reader.next_line().await.unwrap() {
            out.push(to_line(raw));
        }
        out
    }

    #[tokio::test]
    async fn reads_lines_and_flags_oversized_ones() {
        let mut input = b"one\r\n".to_vec();
        input.extend(std::iter::repeat_n(b'x', MAX_LINE_BYTES + 1));
        input.extend_from_slice(b"\n\xffbad\nlast");
        assert_eq!(
            all_lines(input).await,
            vec![
                Line::Text("one".into()),
                Line::TooLong {
                    len: MAX_LINE_BYTES + 1
                },
                Line::NotUtf8 { offset: 0 },
                Line::Text("last".into()),
            ]
        );
    }

    #[tokio::test]
    async fn the_limit_is_inclusive_and_empty_lines_survive() {
        let mut input = vec![b'y'; MAX_LINE_BYTES];
        input.extend_from_slice(b"\n\n");
        let lines = all_lines(input).await;
        assert_eq!(lines.len(), 2);
        assert!(matches!(&lines[0], Line::Text(t) if t.len() == MAX_LINE_BYTES));
        assert_eq!(lines[1], Line::Text(String::new()));
    }

    #[tokio::test]
    async fn an_oversized_final_line_without_newline_is_reported() {
        let input = vec![b'z'; MAX_LINE_BYTES + 10];
        assert_eq!(
            all_lines(input).await,
            vec![Line::TooLong {
                len: MAX_LINE_BYTES + 10
            }]
        );
    }
}
