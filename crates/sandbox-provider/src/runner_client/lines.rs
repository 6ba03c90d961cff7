//! Async JSON Lines reading with the protocol's hard line limit (the async twin of
//! `tool_protocol::LineReader`, which is blocking).

use std::io;

use tokio::io::{AsyncBufRead, AsyncBufReadExt};
use tool_protocol::{Line, MAX_LINE_BYTES};

/// Reads the next line; `None` at end of stream. Over-long lines are counted, not buffered.
pub async fn next_line<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    buf: &mut Vec<u8>,
) -> io::Result<Option<Line>> {
    buf.clear();
    let mut total: usize = 0;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(match total {
                0 => None,
                len if len > MAX_LINE_BYTES => Some(Line::TooLong { len }),
                _ => Some(finish(buf)),
            });
        }
        let newline = available.iter().position(|&b| b == b'\n');
        let take = newline.unwrap_or(available.len());
        total = total.saturating_add(take);
        if total > MAX_LINE_BYTES {
            buf.clear();
        } else {
            buf.extend_from_slice(&available[..take]);
        }
        reader.consume(take + usize::from(newline.is_some()));
        if newline.is_some() {
            return Ok(Some(if total > MAX_LINE_BYTES {
                Line::TooLong { len: total }
            } else {
                finish(buf)
            }));
        }
    }
}

fn finish(buf: &mut Vec<u8>) -> Line {
    if buf.last() == Some(&b'\r') {
        buf.pop();
    }
    match std::str::from_utf8(buf) {
        Ok(text) => Line::Text(text.to_owned()),
        Err(e) => Line::NotUtf8 {
            offset: e.valid_up_to(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn reads_lines_and_flags_oversized_ones() {
        let mut input = b"one\r\n".to_vec();
        input.extend(std::iter::repeat_n(b'x', MAX_LINE_BYTES + 1));
        input.extend_from_slice(b"\ntwo");
        let mut reader = tokio::io::BufReader::new(&input[..]);
        let mut buf = Vec::new();
        assert_eq!(
            next_line(&mut reader, &mut buf).await.unwrap(),
            Some(Line::Text("one".into()))
        );
        assert_eq!(
            next_line(&mut reader, &mut buf).await.unwrap(),
            Some(Line::TooLong {
                len: MAX_LINE_BYTES + 1
            })
        );
        assert_eq!(
            next_line(&mut reader, &mut buf).await.unwrap(),
            Some(Line::Text("two".into()))
        );
        assert_eq!(next_line(&mut reader, &mut buf).await.unwrap(), None);
    }
}
