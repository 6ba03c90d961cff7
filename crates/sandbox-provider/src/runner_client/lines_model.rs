//! The host's async line reader ([`FrameReader`]) against a plain model of JSON Lines
//! splitting, on a stream delivered in chunks of arbitrary sizes. The fuzz target
//! `runner_lines` calls [`check`] (it compiles this file and `lines.rs` on their own), and the
//! checked-in corpus runs through it as a test.
//!
//! The model: the stream split at each `\n`; the piece after a final `\n` (or an empty stream)
//! is no line; a piece longer than the limit (counting a final `\r`) is `TooLong` with its
//! length, any other piece is its bytes without one final `\r`.

use std::future::Future;
use std::io;
use std::pin::{Pin, pin};
use std::task::{Context, Poll, Waker};

use tokio::io::{AsyncRead, ReadBuf};
use tool_protocol::{Line, MAX_LINE_BYTES};

use super::lines::{FrameReader, RawLine, to_line};

/// A line as the model sees it (owned, to compare).
#[derive(Debug, PartialEq, Eq)]
enum ModelLine {
    Bytes(Vec<u8>),
    TooLong(usize),
}

/// Checks the reader against the model; panics on a difference.
///
/// Input layout: byte 0 is the line limit (1–255 bytes; 0 means the protocol's,
/// [`MAX_LINE_BYTES`]), byte 1 seeds the sizes of the chunks the stream arrives in (1–64
/// bytes each), the rest is the stream.
pub(crate) fn check(data: &[u8]) {
    let [limit, seed, stream @ ..] = data else {
        return;
    };
    let limit = match *limit {
        0 => MAX_LINE_BYTES,
        bytes => usize::from(bytes),
    };
    let mut reader = FrameReader::with_limit(Chunked::new(stream, *seed), limit);
    let mut read = Vec::new();
    while let Some(raw) = ready(reader.next_line()).expect("an in-memory stream cannot fail") {
        assert_eq!(to_line(raw), expected_line(raw), "to_line of {raw:?}");
        read.push(match raw {
            RawLine::Bytes(bytes) => ModelLine::Bytes(bytes.to_vec()),
            RawLine::TooLong { len } => ModelLine::TooLong(len),
        });
    }
    assert_eq!(read, model(stream, limit), "limit {limit}, seed {seed}");
}

/// The lines of `stream` by the model in the module documentation.
fn model(stream: &[u8], limit: usize) -> Vec<ModelLine> {
    let mut pieces: Vec<&[u8]> = stream.split(|&b| b == b'\n').collect();
    if pieces.last().is_some_and(|last| last.is_empty()) {
        pieces.pop();
    }
    pieces
        .into_iter()
        .map(|piece| {
            if piece.len() > limit {
                ModelLine::TooLong(piece.len())
            } else {
                ModelLine::Bytes(piece.strip_suffix(b"\r").unwrap_or(piece).to_vec())
            }
        })
        .collect()
}

/// What `to_line` should make of a raw line.
fn expected_line(raw: RawLine<'_>) -> Line {
    match raw {
        RawLine::TooLong { len } => Line::TooLong { len },
        RawLine::Bytes(bytes) => match String::from_utf8(bytes.to_vec()) {
            Ok(text) => Line::Text(text),
            Err(e) => Line::NotUtf8 {
                offset: e.utf8_error().valid_up_to(),
            },
        },
    }
}

/// Polls a future that never waits (every read of [`Chunked`] is ready) to its end.
fn ready<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    match future
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
    {
        Poll::Ready(output) => output,
        Poll::Pending => panic!("an in-memory stream never waits"),
    }
}

/// A byte stream that hands out its bytes in chunks of 1–64 bytes, sizes drawn from a seed.
struct Chunked<'a> {
    rest: &'a [u8],
    state: u64,
}

impl<'a> Chunked<'a> {
    fn new(stream: &'a [u8], seed: u8) -> Self {
        Self {
            rest: stream,
            state: (u64::from(seed) << 32) | 0x9E37_79B9,
        }
    }
}

impl AsyncRead for Chunked<'_> {
    fn poll_read(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        this.state ^= this.state << 13;
        this.state ^= this.state >> 7;
        this.state ^= this.state << 17;
        let size = 1 + (this.state % 64) as usize;
        let n = size.min(this.rest.len()).min(buf.remaining());
        let (chunk, rest) = this.rest.split_at(n);
        buf.put_slice(chunk);
        this.rest = rest;
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    #[test]
    fn the_model_splits_like_json_lines() {
        let lines = model(b"one\r\ntoo long line\n\n\xffx\r\nlast\r", 8);
        assert_eq!(
            lines,
            [
                ModelLine::Bytes(b"one".to_vec()),
                ModelLine::TooLong(13),
                ModelLine::Bytes(Vec::new()),
                ModelLine::Bytes(b"\xffx".to_vec()),
                ModelLine::Bytes(b"last".to_vec()),
            ]
        );
        assert_eq!(model(b"", 8), []);
        assert_eq!(model(b"\n", 8), [ModelLine::Bytes(Vec::new())]);
        // The limit counts a final `\r`: eight bytes and a `\r` are too long for 8.
        assert_eq!(model(b"12345678\r\n", 8), [ModelLine::TooLong(9)]);
    }

    #[test]
    fn the_reader_agrees_with_the_model_at_every_limit_and_chunking() {
        let stream = b"a\r\n\nbb\rcc\nover the limit here\n\xe2\x82\n\r\rtail".to_vec();
        for limit in 0..=24u8 {
            for seed in 0..=16u8 {
                let mut data = vec![limit, seed];
                data.extend_from_slice(&stream);
                check(&data);
            }
        }
    }

    #[test]
    fn the_fuzz_corpus_keeps_its_invariants() {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/runner_lines");
        let mut inputs: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|entry| entry.unwrap().path())
            .collect();
        inputs.sort();
        assert!(
            inputs.len() >= 10,
            "the runner_lines corpus is nearly empty"
        );
        for input in inputs {
            let bytes = std::fs::read(&input).unwrap();
            let outcome = std::panic::catch_unwind(|| check(&bytes));
            assert!(outcome.is_ok(), "{} broke an invariant", input.display());
        }
    }
}
