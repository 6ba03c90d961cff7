//! `fake-model-server`: the [`FakeModelServer`] test double as a process, for tests that are
//! not Rust (the web UI's end-to-end tests in a real browser, the desktop app's smoke test).
//! It speaks the real Anthropic Messages and OpenAI Chat Completions APIs over HTTP on
//! `127.0.0.1`; it is a double, never a production path.
//!
//! Protocol (JSON lines):
//! * stdout, first line: `{"anthropic_base_url": "...", "openai_base_url": "..."}`.
//! * stdin, one reply per line, for the next request (or, with `marker`, the next request of
//!   the conversation whose messages contain it):
//!   `{"marker": "task-7", "gap_ms": 30, "events": [{"text": "Writing it."},
//!   {"tool_use": {"id": "t1", "name": "write_file", "input": {...}}}, {"stop": "tool_use"}]}`.
//!   Each line is answered on stdout with `{"queued": N}` (replies waiting), so a test knows
//!   the script is in place before it sends the prompt. A line that is not a reply is
//!   answered with `{"error": "..."}` and changes nothing.
//! * stdin closed: the server stops; request invariant violations (a malformed request from
//!   the client under test) are printed on stderr and the exit status is 1.

// The process's output is its interface.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::io::{BufRead, Write};
use std::process::ExitCode;
use std::time::Duration;

use serde_json::{Value, json};
use test_support::model_server::{FakeModelServer, Reply, ScriptEvent, sse};

/// One scripted event of a stdin line.
fn event(value: &Value) -> Result<ScriptEvent, String> {
    if let Some(text) = value.get("text").and_then(Value::as_str) {
        return Ok(sse::text(text));
    }
    if let Some(call) = value.get("tool_use") {
        let field = |name: &str| {
            call.get(name)
                .and_then(Value::as_str)
                .ok_or_else(|| format!("tool_use needs a text `{name}`"))
        };
        let input = call.get("input").cloned().unwrap_or_else(|| json!({}));
        return Ok(sse::tool_use(field("id")?, field("name")?, input));
    }
    if let Some(reason) = value.get("stop").and_then(Value::as_str) {
        return Ok(sse::stop(reason));
    }
    Err(format!(
        "an event is {{\"text\"}}, {{\"tool_use\"}} or {{\"stop\"}}, not {value}"
    ))
}

/// A stdin line as a reply and its optional marker.
fn reply(line: &str) -> Result<(Option<String>, Reply), String> {
    let value: Value = serde_json::from_str(line).map_err(|e| format!("not JSON: {e}"))?;
    let events = value
        .get("events")
        .and_then(Value::as_array)
        .ok_or("a reply needs `events`, a list")?
        .iter()
        .map(event)
        .collect::<Result<Vec<_>, _>>()?;
    let mut reply = Reply::stream(events);
    if let Some(gap) = value.get("gap_ms").and_then(Value::as_u64) {
        reply = reply.gap(Duration::from_millis(gap));
    }
    let marker = value
        .get("marker")
        .and_then(Value::as_str)
        .map(str::to_owned);
    Ok((marker, reply))
}

fn say(value: &Value) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{value}");
    let _ = out.flush();
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let server = match FakeModelServer::start().await {
        Ok(server) => server,
        Err(e) => {
            eprintln!("fake-model-server: cannot listen on 127.0.0.1: {e}");
            return ExitCode::FAILURE;
        }
    };
    say(&json!({
        "anthropic_base_url": server.anthropic_base_url(),
        "openai_base_url": server.openai_base_url(),
    }));
    // stdin is read on a thread of its own (blocking reads), lines handed over a channel.
    let (sender, mut lines) = tokio::sync::mpsc::unbounded_channel::<String>();
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            if sender.send(line).is_err() {
                break;
            }
        }
    });
    while let Some(line) = lines.recv().await {
        if line.trim().is_empty() {
            continue;
        }
        match reply(&line) {
            Ok((Some(marker), reply)) => {
                server.push_for(&marker, reply);
            }
            Ok((None, reply)) => {
                server.push(reply);
            }
            Err(problem) => {
                say(&json!({ "error": problem }));
                continue;
            }
        }
        say(&json!({ "queued": server.remaining_replies() }));
    }
    let violations = server.take_violations();
    if violations.is_empty() {
        ExitCode::SUCCESS
    } else {
        for violation in &violations {
            eprintln!("fake-model-server: request invariant violated: {violation}");
        }
        ExitCode::FAILURE
    }
}
