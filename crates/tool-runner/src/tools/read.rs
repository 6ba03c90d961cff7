//! `read_file` (numbered text lines) and `read_bytes` (exact byte ranges).

use std::fmt::Write as _;
use std::io::Read;
use std::os::unix::fs::FileExt;

use tool_protocol::{Data, ErrorCode, ReadBytes, ReadBytesResult, ReadFile, ReadFileResult};

use super::CallContext;
use super::entry::open_regular;
use crate::error::ToolError;
use crate::path_guard::Options;

/// Lines `read_file` returns when the call names no limit.
pub const DEFAULT_LINES: u64 = 2000;
/// Files larger than this are refused by `read_file` (use `read_bytes` or `grep`).
pub const MAX_READ_FILE_BYTES: u64 = 32 * 1024 * 1024;
/// Most content bytes one `read_file` result carries; later lines are left for another call.
pub const MAX_CONTENT_BYTES: usize = 1024 * 1024;
/// Lines longer than this many bytes are cut.
pub const MAX_LINE_BYTES: usize = 2000;
/// The bytes scanned for NUL to call a file binary.
const BINARY_SNIFF_BYTES: usize = 8192;
/// Default and largest `read_bytes` length.
pub const MAX_READ_BYTES: u64 = 4 * 1024 * 1024;

pub fn read_file(ctx: &CallContext<'_>, args: &ReadFile) -> Result<ReadFileResult, ToolError> {
    let offset = args.offset.unwrap_or(1);
    if offset == 0 {
        return Err(ToolError::bad_args("offset", "lines are numbered from 1"));
    }
    let limit = args.limit.unwrap_or(DEFAULT_LINES);
    if limit == 0 {
        return Err(ToolError::bad_args("limit", "must be at least 1"));
    }
    let resolved = ctx.guard.resolve("path", &args.path, Options::FOLLOW)?;
    let (mut file, meta) = open_regular(&resolved)?;
    let path = resolved.display();
    if meta.len() > MAX_READ_FILE_BYTES {
        return Err(ToolError::new(
            ErrorCode::TooLarge,
            format!(
                "{path}: {} bytes is over read_file's limit of {MAX_READ_FILE_BYTES} bytes; \
                 use read_bytes for ranges or grep to find lines",
                meta.len()
            ),
        ));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    // Read at most one byte past the limit, in case the file grew since it was measured.
    (&mut file)
        .take(MAX_READ_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| ToolError::io(&path, &e))?;
    let size = bytes.len() as u64;
    let sniff = &bytes[..bytes.len().min(BINARY_SNIFF_BYTES)];
    let text = match std::str::from_utf8(&bytes) {
        Ok(text) if !sniff.contains(&0) && size <= MAX_READ_FILE_BYTES => text,
        _ => {
            return Err(ToolError::new(
                ErrorCode::BinaryFile,
                format!("{path}: binary file ({size} bytes), not text; use read_bytes to read it"),
            ));
        }
    };
    Ok(number_lines(path, text, offset, limit, size))
}

/// Formats the requested lines `cat -n` style.
fn number_lines(path: String, text: &str, offset: u64, limit: u64, size: u64) -> ReadFileResult {
    // A final newline ends the last line; it does not start another one.
    let body = text.strip_suffix('\n').unwrap_or(text);
    let total_lines = if text.is_empty() {
        0
    } else {
        body.split('\n').count() as u64
    };
    let mut content = String::new();
    let mut returned = 0u64;
    let mut cut = false;
    let skip = usize::try_from(offset - 1).unwrap_or(usize::MAX);
    let lines = (!text.is_empty())
        .then(|| body.split('\n'))
        .into_iter()
        .flatten();
    for (index, line) in lines.enumerate().skip(skip) {
        if returned == limit {
            break;
        }
        let (shown, dropped) = cut_line(line);
        let before = content.len();
        push_line_number(&mut content, index as u64 + 1);
        content.push_str(shown);
        if dropped > 0 {
            cut = true;
            // Writing into a String cannot fail.
            let _ = write!(content, "[… {dropped} bytes cut …]");
        }
        content.push('\n');
        if content.len() > MAX_CONTENT_BYTES && returned > 0 {
            content.truncate(before);
            break;
        }
        returned += 1;
    }
    let last_returned = offset - 1 + returned;
    ReadFileResult {
        path,
        content,
        start_line: offset,
        lines_returned: returned,
        total_lines,
        truncated: cut || last_returned < total_lines,
        size,
    }
}

/// Appends `n` right-aligned in six columns and a tab (`cat -n`), without the formatting
/// machinery: this runs once per line of every `read_file`.
fn push_line_number(content: &mut String, n: u64) {
    let mut digits = [b' '; 20];
    let mut start = digits.len();
    let mut rest = n;
    loop {
        start -= 1;
        digits[start] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    let start = start.min(digits.len() - 6);
    for &b in &digits[start..] {
        content.push(char::from(b));
    }
    content.push('\t');
}

/// The line cut to [`MAX_LINE_BYTES`] on a character boundary, and the bytes cut off.
fn cut_line(line: &str) -> (&str, usize) {
    if line.len() <= MAX_LINE_BYTES {
        return (line, 0);
    }
    let mut end = MAX_LINE_BYTES;
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    (&line[..end], line.len() - end)
}

pub fn read_bytes(ctx: &CallContext<'_>, args: &ReadBytes) -> Result<ReadBytesResult, ToolError> {
    let offset = args.offset.unwrap_or(0);
    let length = args.length.unwrap_or(MAX_READ_BYTES);
    if length > MAX_READ_BYTES {
        return Err(ToolError::bad_args(
            "length",
            format!("{length} is over the limit of {MAX_READ_BYTES} bytes per call"),
        ));
    }
    let resolved = ctx.guard.resolve("path", &args.path, Options::FOLLOW)?;
    let (file, meta) = open_regular(&resolved)?;
    let size = meta.len();
    let want = length.min(size.saturating_sub(offset));
    let mut buf = vec![0u8; usize::try_from(want).unwrap_or(0)];
    let mut filled = 0;
    while filled < buf.len() {
        let n = file
            .read_at(&mut buf[filled..], offset + filled as u64)
            .map_err(|e| ToolError::io(resolved.display(), &e))?;
        if n == 0 {
            break;
        }
        filled += n;
    }
    buf.truncate(filled);
    let end = offset + filled as u64;
    Ok(ReadBytesResult {
        path: resolved.display(),
        offset,
        data: Data::binary(buf),
        size,
        eof: end >= size,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbered(text: &str, offset: u64, limit: u64) -> ReadFileResult {
        number_lines("/p/f".into(), text, offset, limit, text.len() as u64)
    }

    #[test]
    fn numbers_lines_like_cat_n() {
        let got = numbered("a\nb\nc\n", 2, 1);
        assert_eq!(got.content, "     2\tb\n");
        assert_eq!(
            (got.start_line, got.lines_returned, got.total_lines),
            (2, 1, 3)
        );
        assert!(got.truncated);
        let all = numbered("a\nb", 1, 10);
        assert_eq!(all.content, "     1\ta\n     2\tb\n");
        assert!(!all.truncated);
    }

    #[test]
    fn line_numbers_match_the_formatting_machinery() {
        for n in [1, 9, 10, 99_999, 999_999, 1_000_000, 123_456_789, u64::MAX] {
            let mut fast = String::new();
            push_line_number(&mut fast, n);
            assert_eq!(fast, format!("{n:>6}\t"));
        }
    }

    #[test]
    fn counts_lines_at_the_edges() {
        assert_eq!(numbered("", 1, 10).total_lines, 0);
        assert_eq!(numbered("", 1, 10).content, "");
        assert_eq!(numbered("\n", 1, 10).total_lines, 1);
        assert_eq!(numbered("\n", 1, 10).content, "     1\t\n");
        let past = numbered("a\n", 5, 10);
        assert_eq!((past.lines_returned, past.content.as_str()), (0, ""));
    }

    #[test]
    fn cuts_long_lines_on_a_character_boundary() {
        let line = "é".repeat(1500); // 3000 bytes
        let got = numbered(&line, 1, 1);
        assert!(got.truncated);
        assert!(
            got.content.ends_with("[… 1000 bytes cut …]\n"),
            "{}",
            got.content
        );
        let shifted = format!("a{line}");
        let (shown, dropped) = cut_line(&shifted);
        assert_eq!((shown.len(), dropped), (1999, 1002));
    }

    #[test]
    fn stops_at_the_content_budget() {
        let line = "x".repeat(1000);
        let text = format!("{line}\n").repeat(2000);
        let got = numbered(&text, 1, 5000);
        assert!(got.content.len() <= MAX_CONTENT_BYTES);
        assert!(got.truncated);
        assert_eq!(got.lines_returned, got.content.lines().count() as u64);
    }
}
