//! One file of a `grep`: read it, find its matching lines, and turn them into matches with
//! their context. Each search thread owns a [`FileSearcher`] (its DFA cache and read buffer).

use std::fs;
use std::io::{self, Read};
use std::path::Path;

use tool_protocol::GrepMatch;

use super::grep::{BINARY_PROBE_BYTES, MAX_FILE_BYTES, MAX_LINE_BYTES};
use super::regex::memchr::{count_byte, find_byte, rfind_byte};
use super::regex::{LineSearcher, Regex};

/// What searching one file gave.
#[derive(Debug)]
pub(crate) enum FileOutcome {
    /// A NUL byte in its first [`BINARY_PROBE_BYTES`]: not searched.
    Binary,
    Searched(FileMatches),
}

/// The matching lines of one file, at most the searcher's `limit`.
#[derive(Debug, Default)]
pub(crate) struct FileMatches {
    pub(crate) matches: Vec<GrepMatch>,
    /// For each match, the after-context it gets when it is the last match reported, where
    /// that differs from `after` (the next match follows within the context, and the result
    /// stops before it): `after` stops at the next match; this one goes on through it.
    pub(crate) after_if_last: Vec<Option<Vec<String>>>,
    /// The file has more matching lines than `matches` holds.
    pub(crate) more: bool,
}

impl FileMatches {
    /// Keeps the first `count` matches, as if the search had stopped there.
    pub(crate) fn cut(&mut self, count: usize) {
        if count >= self.matches.len() {
            return;
        }
        self.matches.truncate(count);
        self.after_if_last.truncate(count);
        if let (Some(last), Some(Some(after))) = (self.matches.last_mut(), self.after_if_last.pop())
        {
            last.after = after;
        }
    }
}

/// Searches files for one pattern; reuse one per thread.
pub(crate) struct FileSearcher<'r> {
    searcher: LineSearcher<'r>,
    /// Reused for every file; grows to the largest file read.
    buf: Vec<u8>,
    /// Lines of context before and after each match.
    context: usize,
    /// The most matches one file gives: the call's `max_matches` plus one, so that the
    /// caller can tell whether more exist.
    limit: usize,
}

/// A matching line of the file being searched.
struct LineHit {
    number: u64,
    start: usize,
    end: usize,
}

impl<'r> FileSearcher<'r> {
    pub(crate) fn new(regex: &'r Regex, context: usize, max_matches: u64) -> Self {
        Self {
            searcher: regex.line_searcher(),
            buf: Vec::new(),
            context,
            limit: usize::try_from(max_matches)
                .unwrap_or(usize::MAX)
                .saturating_add(1),
        }
    }

    /// Reads `file` (opened from `path`) and finds its matching lines.
    pub(crate) fn search(&mut self, path: &Path, file: fs::File) -> io::Result<FileOutcome> {
        let Some(len) = self.read_text(file)? else {
            return Ok(FileOutcome::Binary);
        };
        let data = &self.buf[..len];
        let mut hits = Vec::new();
        let mut more = false;
        let mut line_number: u64 = 1;
        let mut counted_to = 0;
        for range in self.searcher.matching_lines(data) {
            if hits.len() >= self.limit {
                more = true;
                break;
            }
            line_number += count_byte(&data[counted_to..range.start], b'\n') as u64;
            counted_to = range.start;
            hits.push(LineHit {
                number: line_number,
                start: range.start,
                end: range.end,
            });
        }
        let mut found = FileMatches {
            more,
            ..FileMatches::default()
        };
        if !hits.is_empty() {
            append_matches(
                &mut found,
                &path.to_string_lossy(),
                data,
                &hits,
                self.context,
            );
        }
        Ok(FileOutcome::Searched(found))
    }

    /// Reads the file into `buf`: `None` when it is binary, else the number of bytes read.
    fn read_text(&mut self, mut file: fs::File) -> io::Result<Option<usize>> {
        let mut filled = 0;
        let mut probed = false;
        loop {
            if filled == self.buf.len() {
                if filled >= MAX_FILE_BYTES {
                    break;
                }
                let grown = (self.buf.len() * 2).clamp(64 << 10, MAX_FILE_BYTES);
                self.buf.resize(grown, 0);
            }
            match file.read(&mut self.buf[filled..]) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                // A FIFO opened without blocking has nothing to give.
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) => return Err(e),
            }
            if !probed && filled >= BINARY_PROBE_BYTES {
                probed = true;
                if self.buf[..BINARY_PROBE_BYTES].contains(&0) {
                    return Ok(None);
                }
            }
        }
        if !probed && self.buf[..filled].contains(&0) {
            return Ok(None);
        }
        Ok(Some(filled))
    }
}

/// Turns one file's hits into matches with their context, merged like `grep -C`.
fn append_matches(
    out: &mut FileMatches,
    path: &str,
    data: &[u8],
    hits: &[LineHit],
    context: usize,
) {
    // The last line number already reported, as a match or as context.
    let mut reported_until: u64 = 0;
    for (index, hit) in hits.iter().enumerate() {
        let mut before = Vec::new();
        let (mut start, mut number) = (hit.start, hit.number);
        while before.len() < context && number > 1 && number - 1 > reported_until {
            let end = start - 1;
            start = rfind_byte(data, end, b'\n').map_or(0, |nl| nl + 1);
            number -= 1;
            before.push(line_text(&data[start..end]));
        }
        before.reverse();

        let next_hit = hits.get(index + 1).map(|h| h.number);
        let (after, last_line) = after_context(data, hit, context, next_hit);
        let after_if_last = if next_hit.is_some() && after.len() < context {
            Some(after_context(data, hit, context, None).0).filter(|longer| *longer != after)
        } else {
            None
        };
        reported_until = last_line;

        out.matches.push(GrepMatch {
            path: path.to_owned(),
            line_number: hit.number,
            line: line_text(&data[hit.start..hit.end]),
            before,
            after,
        });
        out.after_if_last.push(after_if_last);
    }
}

/// Up to `context` lines after `hit`, stopping before the line `next_hit`; and the number of
/// the last line reported (the hit's or its last context line's).
fn after_context(
    data: &[u8],
    hit: &LineHit,
    context: usize,
    next_hit: Option<u64>,
) -> (Vec<String>, u64) {
    let mut after = Vec::new();
    let (mut end, mut number) = (hit.end, hit.number);
    while after.len() < context && end + 1 < data.len() && next_hit != Some(number + 1) {
        let start = end + 1;
        end = find_byte(data, start, b'\n').unwrap_or(data.len());
        number += 1;
        after.push(line_text(&data[start..end]));
    }
    (after, number)
}

/// A line as reported: without a final `\r`, lossily decoded, cut at [`MAX_LINE_BYTES`].
fn line_text(line: &[u8]) -> String {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let text = String::from_utf8_lossy(line);
    if text.len() <= MAX_LINE_BYTES {
        return text.into_owned();
    }
    let mut end = MAX_LINE_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}[… {} bytes cut …]", &text[..end], text.len() - end)
}
