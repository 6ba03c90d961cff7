//! The `fake-model-server` process as the browser and desktop tests drive it: its address on
//! the first line, a scripted reply queued from stdin (acknowledged), a real Anthropic
//! streaming request answered with it, a bad line refused without harm, a clean exit when
//! stdin closes.

#![allow(clippy::unwrap_used, reason = "test code: a panic is a failed test")]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

fn post(base_url: &str, body: &Value) -> String {
    let authority = base_url.trim_start_matches("http://").trim_end_matches('/');
    let body = body.to_string();
    let mut stream = TcpStream::connect(authority).unwrap();
    write!(
        stream,
        "POST /v1/messages HTTP/1.1\r\nHost: {authority}\r\nx-api-key: test\r\n\
         anthropic-version: 2023-06-01\r\ncontent-type: application/json\r\n\
         content-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    answer
}

#[test]
fn a_scripted_reply_from_stdin_answers_a_real_streaming_request() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_fake-model-server"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    let mut next = |stdout: &mut BufReader<_>| -> Value {
        line.clear();
        stdout.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap()
    };
    let ready = next(&mut stdout);
    let base = ready["anthropic_base_url"].as_str().unwrap().to_owned();
    assert!(base.starts_with("http://127.0.0.1:"), "{ready}");

    writeln!(stdin, "not json").unwrap();
    assert!(
        next(&mut stdout)["error"]
            .as_str()
            .unwrap()
            .starts_with("not JSON")
    );
    let script = json!({"marker": "task-42", "events": [
        {"text": "Hello from the script."}, {"stop": "end_turn"}]});
    writeln!(stdin, "{script}").unwrap();
    assert_eq!(next(&mut stdout), json!({"queued": 1}));

    let answer = post(
        &base,
        &json!({"model": "m", "max_tokens": 16, "stream": true,
                "messages": [{"role": "user", "content": "please do task-42"}]}),
    );
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains("text/event-stream"), "{answer}");
    assert!(answer.contains("Hello from the script."), "{answer}");
    assert!(answer.contains("end_turn"), "{answer}");

    drop(stdin);
    assert!(child.wait().unwrap().success());
}
