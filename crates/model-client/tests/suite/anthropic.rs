//! The Anthropic Messages client against the fake server.

use model_client::anthropic::AnthropicClient;
use model_client::{
    CancellationToken, ContentBlock, InvalidToolInput, ModelClient, ModelError, ModelEvent,
    StopReason, Usage,
};
use pretty_assertions::assert_eq;
use serde_json::json;
use test_support::model_server::{
    FakeModelServer, REDACTED, Reply, StreamOutcome, WireFormat, sse,
};

use crate::common::{self, KEY, assert_no_key, drain};

async fn server_and_client() -> (FakeModelServer, AnthropicClient) {
    let server = FakeModelServer::start().await.unwrap();
    server.require_api_key(KEY);
    let client = AnthropicClient::new(&common::config(server.anthropic_base_url())).unwrap();
    (server, client)
}

#[tokio::test]
async fn streams_text_and_usage_split_across_small_reads() {
    let (server, client) = server_and_client().await;
    server.push(
        Reply::stream([
            sse::text("Hel"),
            sse::text("lo, w\u{f6}rld \u{1f30d}"),
            sse::usage(12, 5),
            sse::stop("end_turn"),
        ])
        .in_pieces(7),
    );
    let stream = client
        .stream(common::request(), CancellationToken::new())
        .await
        .unwrap();
    let (events, error) = drain(stream).await;
    assert_eq!(error, None);
    assert_eq!(
        events,
        vec![
            ModelEvent::TextDelta {
                text: "Hel".to_owned()
            },
            ModelEvent::TextDelta {
                text: "lo, w\u{f6}rld \u{1f30d}".to_owned()
            },
            ModelEvent::Usage(Usage {
                input_tokens: 12,
                output_tokens: 5,
                ..Usage::default()
            }),
            ModelEvent::MessageStop {
                stop_reason: StopReason::EndTurn
            },
        ]
    );

    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let recorded = &requests[0];
    assert_eq!(recorded.path, "/v1/messages");
    assert_eq!(recorded.format, Some(WireFormat::Anthropic));
    assert!(recorded.api_key_sent && recorded.api_key_accepted);
    assert_eq!(recorded.header("x-api-key"), Some(REDACTED));
    assert_eq!(recorded.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(recorded.header("accept"), Some("text/event-stream"));
    assert_eq!(
        recorded.body,
        json!({
            "model": "test-model",
            "max_tokens": 256,
            "stream": true,
            "system": "You are a careful assistant.",
            "messages": [{ "role": "user", "content": [{ "type": "text", "text": "Hi there" }] }],
            "tools": [
                {
                    "name": "read_file",
                    "description": "Reads a file of the workspace.",
                    "input_schema": {
                        "type": "object",
                        "properties": { "path": { "type": "string" } },
                        "required": ["path"],
                    },
                },
                {
                    "name": "list_dir",
                    "description": "Lists a folder.",
                    "input_schema": { "type": "object", "properties": { "path": { "type": "string" } } },
                },
            ],
        })
    );
}

#[tokio::test]
async fn assembles_interleaved_tool_calls_and_sends_their_results_back() {
    let (server, client) = server_and_client().await;
    server.push(Reply::stream([
        sse::text("Let me look."),
        sse::tool_start("toolu_1", "read_file"),
        sse::tool_start("toolu_2", "list_dir"),
        sse::tool_args("toolu_1", "{\"pa"),
        sse::tool_args("toolu_2", "{\"path\":"),
        sse::tool_args("toolu_1", "th\": \"a.txt\"}"),
        sse::tool_args("toolu_2", " \".\"}"),
        sse::tool_end("toolu_2"),
        sse::tool_end("toolu_1"),
        sse::stop("tool_use"),
    ]));
    let stream = client
        .stream(common::request(), CancellationToken::new())
        .await
        .unwrap();
    let (events, error) = drain(stream).await;
    assert_eq!(error, None);
    let delta = |id: &str, json: &str| ModelEvent::ToolCallInputDelta {
        id: id.to_owned(),
        partial_json: json.to_owned(),
    };
    assert_eq!(
        events,
        vec![
            ModelEvent::TextDelta {
                text: "Let me look.".to_owned()
            },
            ModelEvent::ToolCallStarted {
                id: "toolu_1".to_owned(),
                name: "read_file".to_owned()
            },
            ModelEvent::ToolCallStarted {
                id: "toolu_2".to_owned(),
                name: "list_dir".to_owned()
            },
            delta("toolu_1", "{\"pa"),
            delta("toolu_2", "{\"path\":"),
            delta("toolu_1", "th\": \"a.txt\"}"),
            delta("toolu_2", " \".\"}"),
            ModelEvent::ToolCallComplete {
                id: "toolu_2".to_owned(),
                name: "list_dir".to_owned(),
                input: Ok(json!({ "path": "." })),
            },
            ModelEvent::ToolCallComplete {
                id: "toolu_1".to_owned(),
                name: "read_file".to_owned(),
                input: Ok(json!({ "path": "a.txt" })),
            },
            ModelEvent::Usage(Usage::default()),
            ModelEvent::MessageStop {
                stop_reason: StopReason::ToolUse
            },
        ]
    );

    // The next turn carries the results; the server checks they answer the tool uses.
    server.push(Reply::stream([
        sse::text("a.txt says hello."),
        sse::stop("end_turn"),
    ]));
    let response = client
        .complete(
            common::request_with_tool_results(),
            CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(response.text(), "a.txt says hello.");
    let sent = &server.requests()[1].body["messages"];
    assert_eq!(
        sent[2],
        json!({
            "role": "user",
            "content": [
                { "type": "tool_result", "tool_use_id": "toolu_1", "content": "hello", "is_error": false },
                { "type": "tool_result", "tool_use_id": "toolu_2", "content": "permission denied", "is_error": true },
            ],
        })
    );
    assert_eq!(sent[1]["content"][1]["input"], json!({ "path": "a.txt" }));
}

#[tokio::test]
async fn complete_collects_text_and_tool_use_blocks() {
    let (server, client) = server_and_client().await;
    server.push(Reply::stream([
        sse::text("Reading "),
        sse::text("it."),
        sse::tool_use(
            "toolu_9",
            "read_file",
            json!({ "path": "notes/\u{e9}t\u{e9}.md" }),
        ),
        sse::usage(40, 17),
        sse::stop("tool_use"),
    ]));
    let response = client
        .complete(common::request(), CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(
        response.content,
        vec![
            ContentBlock::text("Reading it."),
            ContentBlock::ToolUse {
                id: "toolu_9".to_owned(),
                name: "read_file".to_owned(),
                input: json!({ "path": "notes/\u{e9}t\u{e9}.md" }),
            },
        ]
    );
    assert_eq!(response.stop_reason, StopReason::ToolUse);
    assert_eq!(
        (response.usage.input_tokens, response.usage.output_tokens),
        (40, 17)
    );
}

#[tokio::test]
async fn stop_reasons_are_mapped() {
    let (server, client) = server_and_client().await;
    let cases = [
        ("end_turn", StopReason::EndTurn),
        ("max_tokens", StopReason::MaxTokens),
        ("stop_sequence", StopReason::StopSequence),
        ("refusal", StopReason::Other("refusal".to_owned())),
    ];
    for (wire, expected) in cases {
        server.push(Reply::stream([sse::text("x"), sse::stop(wire)]));
        let response = client
            .complete(common::request(), CancellationToken::new())
            .await
            .unwrap();
        assert_eq!(response.stop_reason, expected, "{wire}");
    }
}

#[tokio::test]
async fn tool_input_that_is_not_json_is_a_clear_error() {
    let (server, client) = server_and_client().await;
    server.push(Reply::stream([
        sse::tool_start("toolu_bad", "read_file"),
        sse::tool_args("toolu_bad", "{\"path\": \"a.txt\""),
        sse::tool_end("toolu_bad"),
        sse::stop("tool_use"),
    ]));
    let error = client
        .complete(common::request(), CancellationToken::new())
        .await
        .unwrap_err();
    assert!(
        matches!(&error, ModelError::InvalidToolInput { id, name, .. } if id == "toolu_bad" && name == "read_file"),
        "{error:?}"
    );
    assert!(error.to_string().contains("read_file"), "{error}");
}

#[tokio::test]
async fn broken_tool_json_streams_as_a_completed_call_with_its_raw_text_and_the_stream_goes_on() {
    let (server, client) = server_and_client().await;
    server.push(Reply::stream([
        sse::tool_start("toolu_bad", "read_file"),
        sse::tool_args("toolu_bad", "{\"path\": \"a.txt\""),
        sse::tool_end("toolu_bad"),
        sse::tool_start("toolu_list", "list_dir"),
        sse::tool_args("toolu_list", "[\".\"]"),
        sse::tool_end("toolu_list"),
        sse::tool_use("toolu_ok", "read_file", json!({"path": "b.txt"})),
        sse::stop("tool_use"),
    ]));
    let stream = client
        .stream(common::request(), CancellationToken::new())
        .await
        .unwrap();
    let (events, error) = drain(stream).await;
    assert_eq!(error, None, "broken arguments do not end the stream");
    let complete: Vec<(&str, &Result<serde_json::Value, InvalidToolInput>)> = events
        .iter()
        .filter_map(|e| match e {
            ModelEvent::ToolCallComplete { id, input, .. } => Some((id.as_str(), input)),
            _ => None,
        })
        .collect();
    assert_eq!(complete.len(), 3, "{events:?}");
    let (id, Err(bad)) = complete[0] else {
        panic!("{complete:?}")
    };
    assert_eq!(id, "toolu_bad");
    assert_eq!(bad.raw, "{\"path\": \"a.txt\"");
    assert!(bad.error.contains("EOF"), "{}", bad.error);
    let (id, Err(not_object)) = complete[1] else {
        panic!("{complete:?}")
    };
    assert_eq!(id, "toolu_list");
    assert!(
        not_object.error.contains("an array"),
        "{}",
        not_object.error
    );
    assert_eq!(complete[2], ("toolu_ok", &Ok(json!({"path": "b.txt"}))));
    assert_eq!(
        events.last(),
        Some(&ModelEvent::MessageStop {
            stop_reason: StopReason::ToolUse
        })
    );
}

#[tokio::test]
async fn a_wrong_key_is_an_auth_error_without_the_key_and_is_not_retried() {
    let server = FakeModelServer::start().await.unwrap();
    server.require_api_key("sk-the-right-one");
    let client = AnthropicClient::new(&common::config(server.anthropic_base_url())).unwrap();
    let error = client
        .stream(common::request(), CancellationToken::new())
        .await
        .err()
        .unwrap();
    assert!(
        matches!(error, ModelError::Auth { status: 401, .. }),
        "{error:?}"
    );
    assert!(error.to_string().contains("invalid x-api-key"), "{error}");
    assert_no_key(&error);
    assert_eq!(server.request_count(), 1);
    assert!(server.requests()[0].api_key_sent);
    assert!(!server.requests()[0].api_key_accepted);
}

#[tokio::test]
async fn a_client_without_a_key_is_refused_before_sending() {
    let mut config = common::config("http://127.0.0.1:9".to_owned());
    config.api_key = None;
    let error = AnthropicClient::new(&config).unwrap_err();
    assert!(matches!(error, ModelError::Auth { .. }), "{error:?}");
}

#[tokio::test]
async fn prompt_too_long_maps_to_context_too_long() {
    let (server, client) = server_and_client().await;
    server.push(Reply::error(
        400,
        "invalid_request_error",
        "prompt is too long: 210000 tokens > 200000 maximum",
    ));
    let error = client
        .stream(common::request(), CancellationToken::new())
        .await
        .err()
        .unwrap();
    assert_eq!(
        error,
        ModelError::ContextTooLong {
            message: "invalid_request_error: prompt is too long: 210000 tokens > 200000 maximum"
                .to_owned()
        }
    );
    assert_eq!(server.request_count(), 1, "a 400 is not retried");
}

#[tokio::test]
async fn an_error_event_mid_stream_ends_the_stream_without_a_retry() {
    let (server, client) = server_and_client().await;
    server.push(Reply::stream([
        sse::text("Part"),
        sse::error("overloaded_error", "Overloaded"),
    ]));
    server.push(Reply::stream([
        sse::text("should never be sent"),
        sse::stop("end_turn"),
    ]));
    let stream = client
        .stream(common::request(), CancellationToken::new())
        .await
        .unwrap();
    let (events, error) = drain(stream).await;
    assert_eq!(
        events,
        vec![ModelEvent::TextDelta {
            text: "Part".to_owned()
        }]
    );
    assert_eq!(
        error,
        Some(ModelError::Overloaded {
            message: "overloaded_error: Overloaded".to_owned()
        })
    );
    assert_eq!(server.request_count(), 1);
    assert_eq!(server.remaining_replies(), 1);
}

#[tokio::test]
async fn malformed_sse_is_a_protocol_error() {
    let (server, client) = server_and_client().await;
    server.push(Reply::raw_stream([
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{}}\n\n",
        "event: content_block_start\ndata: {\"type\": \"content_block_start\", \"index\": 0, \n\n",
    ]));
    let stream = client
        .stream(common::request(), CancellationToken::new())
        .await
        .unwrap();
    let (events, error) = drain(stream).await;
    assert_eq!(events, vec![]);
    assert!(
        matches!(&error, Some(ModelError::Protocol { message }) if message.contains("content_block_start") && message.contains("not JSON")),
        "{error:?}"
    );
}

#[tokio::test]
async fn a_stream_that_ends_before_message_stop_is_a_protocol_error() {
    let (server, client) = server_and_client().await;
    server.push(Reply::raw_stream([
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{}}\n\n",
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"cut\"}}\n\n",
        "event: content_block_stop\ndata: {\"type\":\"content_block_st",
    ]));
    let stream = client
        .stream(common::request(), CancellationToken::new())
        .await
        .unwrap();
    let (events, error) = drain(stream).await;
    assert_eq!(
        events,
        vec![ModelEvent::TextDelta {
            text: "cut".to_owned()
        }]
    );
    assert!(
        matches!(&error, Some(ModelError::Protocol { message }) if message.contains("before message_stop") && message.contains("middle of an event")),
        "{error:?}"
    );
    assert_eq!(
        server
            .wait_for_outcome(0, std::time::Duration::from_secs(5))
            .await,
        Some(StreamOutcome::Completed)
    );
}

#[tokio::test]
async fn anthropic_temperature_above_one_is_refused_locally() {
    let (server, client) = server_and_client().await;
    let mut request = common::request();
    request.temperature = Some(1.5);
    let error = client
        .stream(request, CancellationToken::new())
        .await
        .err()
        .unwrap();
    assert!(
        matches!(error, ModelError::InvalidRequest { .. }),
        "{error:?}"
    );
    assert_eq!(server.request_count(), 0);
}
