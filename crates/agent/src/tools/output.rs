//! From a runner's answer to the text the model reads, and the (longer) text the audit keeps.

use std::fmt::Write as _;

use protocol::NetworkDenial;
use sandbox_provider::CallError;
use tool_protocol::{FileKind, ToolResult};

/// What a tool call produced, rendered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderedResult {
    /// The whole text (before any cut).
    pub text: String,
    pub is_error: bool,
    pub exit_code: Option<i64>,
    pub timed_out: bool,
    pub duration_ms: Option<u64>,
}

fn kind_word(kind: FileKind) -> &'static str {
    kind.as_str()
}

/// Renders a successful result.
pub fn render_result(result: &ToolResult) -> RenderedResult {
    let mut exit_code = None;
    let mut timed_out = false;
    let mut duration_ms = None;
    let text = match result {
        ToolResult::RunBash(r) => {
            exit_code = r.exit_code;
            timed_out = r.timed_out;
            duration_ms = Some(r.duration_ms);
            let mut text = String::new();
            match (r.exit_code, r.signal) {
                (Some(code), _) => {
                    let _ = writeln!(text, "exit code: {code}");
                }
                (None, Some(signal)) => {
                    let _ = writeln!(text, "killed by signal {signal}");
                }
                (None, None) => text.push_str("no exit status\n"),
            }
            if r.timed_out {
                let _ = writeln!(
                    text,
                    "timed out after {} ms; the command was killed",
                    r.duration_ms
                );
            }
            append_stream(
                &mut text,
                "stdout",
                &r.stdout.to_text_lossy(),
                r.stdout_dropped,
            );
            append_stream(
                &mut text,
                "stderr",
                &r.stderr.to_text_lossy(),
                r.stderr_dropped,
            );
            text
        }
        ToolResult::ReadFile(r) => {
            let mut text = r.content.clone();
            if r.truncated {
                let _ = write!(
                    text,
                    "\n[showing lines {}-{} of {}; read on with offset {}]",
                    r.start_line,
                    r.start_line + r.lines_returned.saturating_sub(1),
                    r.total_lines,
                    r.start_line + r.lines_returned
                );
            }
            text
        }
        ToolResult::WriteFile(r) => format!(
            "{} {} ({} bytes)",
            if r.created { "created" } else { "replaced" },
            r.path,
            r.bytes_written
        ),
        ToolResult::EditFile(r) => format!(
            "replaced {} occurrence{} in {}",
            r.replacements,
            if r.replacements == 1 { "" } else { "s" },
            r.path
        ),
        ToolResult::Delete(r) => format!(
            "deleted {} ({}, {} entr{} removed)",
            r.path,
            kind_word(r.kind),
            r.removed,
            if r.removed == 1 { "y" } else { "ies" }
        ),
        ToolResult::ListDirectory(r) => {
            let mut text = format!("{}:\n", r.path);
            for entry in &r.entries {
                let _ = match entry.kind {
                    FileKind::Directory => writeln!(text, "{}/", entry.path),
                    FileKind::File => writeln!(text, "{} ({} bytes)", entry.path, entry.size),
                    other => writeln!(text, "{} ({})", entry.path, kind_word(other)),
                };
            }
            if r.entries.is_empty() {
                text.push_str("(empty)\n");
            }
            if r.truncated {
                text.push_str("[more entries not shown; raise limit]\n");
            }
            text
        }
        ToolResult::Glob(r) => {
            let mut text = r.matches.join("\n");
            if r.matches.is_empty() {
                text.push_str("no matches");
            }
            if r.truncated {
                text.push_str("\n[more matches not shown; raise limit]");
            }
            text
        }
        ToolResult::Grep(r) => {
            let mut text = String::new();
            for m in &r.matches {
                for line in &m.before {
                    let _ = writeln!(text, "{}-  {line}", m.path);
                }
                let _ = writeln!(text, "{}:{}: {}", m.path, m.line_number, m.line);
                for line in &m.after {
                    let _ = writeln!(text, "{}-  {line}", m.path);
                }
            }
            if r.matches.is_empty() {
                let _ = writeln!(text, "no matches in {} files", r.files_searched);
            }
            if r.truncated {
                text.push_str("[more matches not shown; raise max_matches]\n");
            }
            text
        }
        other => format!("{:?} finished", other.name().as_str()),
    };
    RenderedResult {
        text,
        is_error: false,
        exit_code,
        timed_out,
        duration_ms,
    }
}

fn append_stream(text: &mut String, name: &str, content: &str, dropped: u64) {
    if content.is_empty() && dropped == 0 {
        return;
    }
    let _ = writeln!(text, "[{name}]");
    text.push_str(content);
    if !content.ends_with('\n') {
        text.push('\n');
    }
    if dropped > 0 {
        let _ = writeln!(
            text,
            "[{dropped} bytes of {name} were dropped by the runner]"
        );
    }
}

/// Renders a failed call.
pub fn render_error(error: &CallError) -> RenderedResult {
    let text = match error {
        CallError::Tool { code, message } => format!("error ({code}): {message}"),
        CallError::Cancelled => "cancelled: the user interrupted this call".to_owned(),
        other => format!("error: {other}"),
    };
    RenderedResult {
        text,
        is_error: true,
        exit_code: None,
        timed_out: false,
        duration_ms: None,
    }
}

/// Appends each denial's notice, in the provider's exact words.
pub fn append_denials(text: &mut String, denials: &[NetworkDenial]) {
    for denial in denials {
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&denial.model_notice());
    }
}

/// Cuts `text` to at most `max_chars` characters, keeping its head and tail with a marker
/// between them. Returns the text and whether it was cut.
pub fn truncate_middle(text: &str, max_chars: usize) -> (String, bool) {
    let total = text.chars().count();
    if total <= max_chars {
        return (text.to_owned(), false);
    }
    let marker_room = 64.min(max_chars);
    let keep = max_chars - marker_room;
    let head_chars = keep / 2;
    let tail_chars = keep - head_chars;
    let head: String = text.chars().take(head_chars).collect();
    let tail: String = text.chars().skip(total - tail_chars).collect();
    let cut = total - head_chars - tail_chars;
    (format!("{head}\n[… {cut} characters cut …]\n{tail}"), true)
}

#[cfg(test)]
#[path = "output_tests.rs"]
mod tests;
