//! JSON Lines framing: one UTF-8 JSON object per `\n`-terminated line, at most
//! [`MAX_LINE_BYTES`] bytes. A bad line is reported and skipped; the stream goes on.

use std::io::{self, BufRead};

/// The longest line either side accepts, newline excluded.
pub const MAX_LINE_BYTES: usize = 8 * 1024 * 1024;

/// One line read from the stream, or why it could not be used.
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    /// A complete line (without its `\n`), valid UTF-8.
    Text(String),
    /// The line exceeded the limit; its bytes were discarded up to the next `\n`.
    TooLong { len: usize },
    /// The line was not UTF-8; `offset` is the first invalid byte.
    NotUtf8 { offset: usize },
}

/// Reads lines with a hard length limit, never buffering more than the limit.
#[derive(Debug)]
pub struct LineReader<R> {
    inner: R,
    limit: usize,
    buf: Vec<u8>,
}

impl<R: BufRead> LineReader<R> {
    pub fn new(inner: R) -> Self {
        Self::with_limit(inner, MAX_LINE_BYTES)
    }

    pub fn with_limit(inner: R, limit: usize) -> Self {
        Self {
            inner,
            limit,
            buf: Vec::new(),
        }
    }

    /// The next line, or `None` at end of stream. A final line without `\n` is still returned.
    pub fn next_line(&mut self) -> io::Result<Option<Line>> {
        self.buf.clear();
        // Bytes of the current line seen so far; past the limit they are counted, not kept.
        let mut total: usize = 0;
        loop {
            let available = match self.inner.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if available.is_empty() {
                return Ok(match total {
                    0 => None,
                    len if len > self.limit => Some(Line::TooLong { len }),
                    _ => Some(self.finish()),
                });
            }
            let newline = available.iter().position(|&b| b == b'\n');
            let take = newline.unwrap_or(available.len());
            total = total.saturating_add(take);
            if total > self.limit {
                if !self.buf.is_empty() {
                    self.buf = Vec::new();
                }
            } else {
                self.buf.extend_from_slice(&available[..take]);
            }
            self.inner.consume(take + usize::from(newline.is_some()));
            if newline.is_some() {
                return Ok(Some(if total > self.limit {
                    Line::TooLong { len: total }
                } else {
                    self.finish()
                }));
            }
        }
    }

    fn finish(&mut self) -> Line {
        if self.buf.last() == Some(&b'\r') {
            self.buf.pop();
        }
        match String::from_utf8(std::mem::take(&mut self.buf)) {
            Ok(text) => Line::Text(text),
            Err(e) => {
                let offset = e.utf8_error().valid_up_to();
                self.buf = e.into_bytes();
                Line::NotUtf8 { offset }
            }
        }
    }

    pub fn get_ref(&self) -> &R {
        &self.inner
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[u8], limit: usize) -> Vec<Line> {
        let mut reader = LineReader::with_limit(input, limit);
        let mut out = Vec::new();
        while let Some(line) = reader.next_line().unwrap() {
            out.push(line);
        }
        out
    }

    #[test]
    fn splits_lines_and_strips_cr() {
        assert_eq!(
            lines(b"a\r\nbc\n\nlast", 16),
            vec![
                Line::Text("a".into()),
                Line::Text("bc".into()),
                Line::Text(String::new()),
                Line::Text("last".into()),
            ]
        );
    }

    #[test]
    fn skips_an_oversized_line_and_goes_on() {
        let mut input = vec![b'x'; 40];
        input.extend_from_slice(b"\nok\n");
        let got = lines(&input, 10);
        assert!(matches!(got[0], Line::TooLong { len } if len > 10));
        assert_eq!(got[1], Line::Text("ok".into()));
        assert_eq!(got.len(), 2);
    }

    #[test]
    fn limit_is_inclusive() {
        assert_eq!(
            lines(b"0123456789\n", 10),
            vec![Line::Text("0123456789".into())]
        );
        assert!(matches!(
            lines(b"0123456789a\n", 10)[0],
            Line::TooLong { .. }
        ));
    }

    #[test]
    fn reports_invalid_utf8_with_offset() {
        assert_eq!(
            lines(b"ab\xffcd\nok\n", 100),
            vec![Line::NotUtf8 { offset: 2 }, Line::Text("ok".into())]
        );
    }

    #[test]
    fn oversized_across_small_reads() {
        // A BufReader with a tiny buffer forces the limit check across fill_buf calls.
        let mut input = vec![b'y'; 100];
        input.extend_from_slice(b"\nz\n");
        let reader = io::BufReader::with_capacity(7, &input[..]);
        let mut lines = LineReader::with_limit(reader, 50);
        assert!(matches!(
            lines.next_line().unwrap(),
            Some(Line::TooLong { len: 100 })
        ));
        assert_eq!(lines.next_line().unwrap(), Some(Line::Text("z".into())));
        assert_eq!(lines.next_line().unwrap(), None);
    }
}
