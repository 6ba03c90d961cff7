//! The double itself, driven with hand-written HTTP/1.1 over a real socket.

use super::*;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Sends one request and returns the whole raw response (the server closes the connection).
async fn post(
    server: &FakeModelServer,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> String {
    let mut stream = TcpStream::connect(server.addr()).await.unwrap();
    let mut request = format!(
        "POST {path} HTTP/1.1\r\nhost: fake\r\ncontent-type: application/json\r\n\
         content-length: {}\r\nconnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = Vec::new();
    stream.read_to_end(&mut response).await.unwrap();
    String::from_utf8(response).unwrap()
}

fn anthropic_body() -> String {
    json!({ "model": "m", "max_tokens": 5, "stream": true,
            "messages": [{ "role": "user", "content": "hi" }] })
    .to_string()
}

fn openai_body(include_usage: bool) -> String {
    let mut body = json!({ "model": "gpt-fake", "stream": true,
                           "messages": [{ "role": "user", "content": "hi" }] });
    if include_usage {
        body["stream_options"] = json!({ "include_usage": true });
    }
    body.to_string()
}

/// The body of a chunked response, with the chunk-size lines removed.
fn dechunk(response: &str) -> String {
    let body = response
        .split_once("\r\n\r\n")
        .map(|(_, b)| b)
        .unwrap_or("");
    let mut out = String::new();
    let mut rest = body;
    while let Some((size, after)) = rest.split_once("\r\n") {
        let size = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if size == 0 {
            break;
        }
        out.push_str(&after[..size]);
        rest = &after[size + 2..];
    }
    out
}

#[tokio::test]
async fn renders_an_anthropic_stream() {
    let server = FakeModelServer::start().await.unwrap();
    server.push(Reply::stream([
        sse::text("Hi"),
        sse::tool_use("t1", "read_file", json!({ "path": "a" })),
        sse::usage(7, 3),
        stop("tool_use"),
    ]));
    let response = post(
        &server,
        "/v1/messages",
        &[("x-api-key", "k")],
        &anthropic_body(),
    )
    .await;
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    assert!(
        response.contains("content-type: text/event-stream"),
        "{response}"
    );
    let body = dechunk(&response);
    let names: Vec<&str> = body
        .lines()
        .filter_map(|line| line.strip_prefix("event: "))
        .collect();
    assert_eq!(
        names,
        [
            "message_start",
            "ping",
            "content_block_start",
            "content_block_delta",
            "content_block_stop",
            "content_block_start",
            "content_block_delta",
            "content_block_delta",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop",
        ]
    );
    assert!(body.contains(r#""input_tokens":7"#), "{body}");
    assert!(body.contains(r#""stop_reason":"tool_use""#), "{body}");
    let fragments: String = body
        .lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .filter_map(|data| serde_json::from_str::<Value>(data).ok())
        .filter_map(|event| {
            event
                .pointer("/delta/partial_json")
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
        .collect();
    assert_eq!(fragments, r#"{"path":"a"}"#);
    assert_eq!(
        server.wait_for_outcome(0, Duration::from_secs(5)).await,
        Some(StreamOutcome::Completed)
    );
}

#[tokio::test]
async fn renders_openai_chunks_with_usage_only_when_asked() {
    let server = FakeModelServer::start().await.unwrap();
    for _ in 0..2 {
        server.push(Reply::stream([
            sse::text("Hi"),
            sse::usage(7, 3),
            stop("end_turn"),
        ]));
    }
    let with = dechunk(&post(&server, "/v1/chat/completions", &[], &openai_body(true)).await);
    let without = dechunk(&post(&server, "/v1/chat/completions", &[], &openai_body(false)).await);
    assert!(with.contains(r#""finish_reason":"stop""#), "{with}");
    assert!(with.contains(r#""prompt_tokens":7"#), "{with}");
    assert!(with.trim_end().ends_with("data: [DONE]"), "{with}");
    assert!(!without.contains("prompt_tokens"), "{without}");
    assert!(without.contains(r#""model":"gpt-fake""#), "{without}");
}

#[tokio::test]
async fn records_requests_with_the_key_redacted() {
    let server = FakeModelServer::start().await.unwrap();
    server.require_api_key("sk-right");
    server.push(Reply::stream([stop("end_turn")]));
    post(
        &server,
        "/v1/chat/completions",
        &[("authorization", "Bearer sk-right")],
        &openai_body(true),
    )
    .await;
    let refused = post(
        &server,
        "/v1/messages",
        &[("x-api-key", "sk-wrong")],
        &anthropic_body(),
    )
    .await;
    assert!(refused.starts_with("HTTP/1.1 401"), "{refused}");
    assert!(refused.contains("authentication_error"), "{refused}");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].header("Authorization"), Some(REDACTED));
    assert!(requests[0].api_key_sent && requests[0].api_key_accepted);
    assert_eq!(requests[1].header("x-api-key"), Some(REDACTED));
    assert!(requests[1].api_key_sent && !requests[1].api_key_accepted);
    let printed = format!("{requests:?}");
    assert!(
        !printed.contains("sk-right") && !printed.contains("sk-wrong"),
        "{printed}"
    );
    assert_eq!(server.remaining_replies(), 0);
}

#[tokio::test]
async fn a_request_breaking_an_invariant_gets_a_400_and_is_recorded() {
    let server = FakeModelServer::start().await.unwrap();
    server.push(Reply::stream([stop("end_turn")]));
    let body = json!({ "model": "m", "max_tokens": 5, "stream": true, "messages": [
        { "role": "user", "content": [{ "type": "tool_result", "tool_use_id": "t1", "content": "x" }] },
    ] });
    let response = post(&server, "/v1/messages", &[], &body.to_string()).await;
    assert!(response.starts_with("HTTP/1.1 400"), "{response}");
    assert!(response.contains("FakeModelServer"), "{response}");
    let violations = server.take_violations();
    assert_eq!(violations.len(), 1, "{violations:?}");
    assert!(
        violations[0].contains("orphan tool result"),
        "{violations:?}"
    );
    assert_eq!(
        server.remaining_replies(),
        1,
        "a refused request consumes no reply"
    );
}

#[tokio::test]
async fn a_request_without_a_scripted_reply_or_on_an_unknown_path_is_a_violation() {
    let server = FakeModelServer::start().await.unwrap();
    let response = post(&server, "/v1/messages", &[], &anthropic_body()).await;
    assert!(response.starts_with("HTTP/1.1 500"), "{response}");
    let response = post(&server, "/v1/complete", &[], "{}").await;
    assert!(response.starts_with("HTTP/1.1 404"), "{response}");
    let violations = server.take_violations();
    assert!(
        violations[0].contains("no scripted reply left"),
        "{violations:?}"
    );
    assert!(
        violations[1].contains("unexpected POST /v1/complete"),
        "{violations:?}"
    );
}

#[tokio::test]
#[should_panic(expected = "request invariant violation")]
async fn dropping_a_server_with_violations_fails_the_test() {
    let server = FakeModelServer::start().await.unwrap();
    post(&server, "/v1/messages", &[], "not json").await;
    drop(server);
}

#[tokio::test]
async fn error_replies_carry_headers_and_the_vendor_body() {
    let server = FakeModelServer::start().await.unwrap();
    server.push(Reply::error(429, "rate_limit_error", "slow").header("retry-after", "7"));
    let response = post(&server, "/v1/messages", &[], &anthropic_body()).await;
    assert!(response.starts_with("HTTP/1.1 429"), "{response}");
    assert!(response.contains("retry-after: 7"), "{response}");
    assert!(
        response
            .contains(r#"{"error":{"message":"slow","type":"rate_limit_error"},"type":"error"}"#),
        "{response}"
    );
}

#[tokio::test]
async fn a_client_that_leaves_a_stalled_stream_is_observed() {
    let server = FakeModelServer::start().await.unwrap();
    server.push(Reply::stream([sse::text("a"), stop("end_turn")]).stall_after(1));
    let mut stream = TcpStream::connect(server.addr()).await.unwrap();
    let body = anthropic_body();
    let request = format!(
        "POST /v1/messages HTTP/1.1\r\nhost: fake\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut buffer = vec![0u8; 4096];
    let mut received = String::new();
    while !received.contains("text_delta") {
        let n = stream.read(&mut buffer).await.unwrap();
        assert!(n > 0, "the stream ended early: {received}");
        received.push_str(&String::from_utf8_lossy(&buffer[..n]));
    }
    assert_eq!(
        server.wait_for_outcome(0, Duration::from_millis(200)).await,
        None,
        "the stream is stalled, not finished"
    );
    drop(stream);
    assert!(matches!(
        server.wait_for_outcome(0, Duration::from_secs(5)).await,
        Some(StreamOutcome::ClientDisconnected { .. })
    ));
}
