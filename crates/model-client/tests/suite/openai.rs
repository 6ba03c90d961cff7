//! The OpenAI-compatible client against the fake server.

use model_client::openai::{MaxTokensField, OpenAiClient, OpenAiOptions};
use model_client::{
    CancellationToken, ContentBlock, InvalidToolInput, ModelClient, ModelError, ModelEvent,
    StopReason, Usage,
};
use pretty_assertions::assert_eq;
use serde_json::json;
use test_support::model_server::{FakeModelServer, REDACTED, Reply, WireFormat, sse};

use crate::common::{self, KEY, assert_no_key, drain};

async fn server_and_client() -> (FakeModelServer, OpenAiClient) {
    let server = FakeModelServer::start().await.unwrap();
    server.require_api_key(KEY);
    let client = OpenAiClient::new(&common::config(server.openai_base_url())).unwrap();
    (server, client)
}

#[tokio::test]
async fn streams_text_and_the_final_usage_chunk() {
    let (server, client) = server_and_client().await;
    server.push(
        Reply::stream([
            sse::text("Hel"),
            sse::text("lo \u{1f30d}"),
            sse::usage(30, 4),
            sse::stop("end_turn"),
        ])
        .in_pieces(5),
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
                text: "lo \u{1f30d}".to_owned()
            },
            ModelEvent::Usage(Usage {
                input_tokens: 30,
                output_tokens: 4,
                ..Usage::default()
            }),
            ModelEvent::MessageStop {
                stop_reason: StopReason::EndTurn
            },
        ]
    );
    let recorded = &server.requests()[0];
    assert_eq!(recorded.path, "/v1/chat/completions");
    assert_eq!(recorded.format, Some(WireFormat::OpenAi));
    assert!(recorded.api_key_sent && recorded.api_key_accepted);
    assert_eq!(recorded.header("authorization"), Some(REDACTED));
    assert_eq!(
        recorded.body,
        json!({
            "model": "test-model",
            "stream": true,
            "stream_options": { "include_usage": true },
            "max_tokens": 256,
            "messages": [
                { "role": "system", "content": "You are a careful assistant." },
                { "role": "user", "content": "Hi there" },
            ],
            "tools": [
                {
                    "type": "function",
                    "function": {
                        "name": "read_file",
                        "description": "Reads a file of the workspace.",
                        "parameters": {
                            "type": "object",
                            "properties": { "path": { "type": "string" } },
                            "required": ["path"],
                        },
                    },
                },
                {
                    "type": "function",
                    "function": {
                        "name": "list_dir",
                        "description": "Lists a folder.",
                        "parameters": { "type": "object", "properties": { "path": { "type": "string" } } },
                    },
                },
            ],
        })
    );
}

#[tokio::test]
async fn assembles_tool_calls_whose_fragments_interleave_across_chunks() {
    let (server, client) = server_and_client().await;
    server.push(Reply::stream([
        sse::tool_start("call_a", "read_file"),
        sse::tool_start("call_b", "list_dir"),
        sse::tool_args("call_b", "{\"path\""),
        sse::tool_args("call_a", "{\"path\": \"a"),
        sse::tool_args("call_b", ": \".\"}"),
        sse::tool_args("call_a", ".txt\"}"),
        sse::stop("tool_use"),
    ]));
    let stream = client
        .stream(common::request(), CancellationToken::new())
        .await
        .unwrap();
    let (events, error) = drain(stream).await;
    assert_eq!(error, None);
    let complete: Vec<&ModelEvent> = events
        .iter()
        .filter(|e| matches!(e, ModelEvent::ToolCallComplete { .. }))
        .collect();
    assert_eq!(
        complete,
        vec![
            &ModelEvent::ToolCallComplete {
                id: "call_a".to_owned(),
                name: "read_file".to_owned(),
                input: Ok(json!({ "path": "a.txt" })),
            },
            &ModelEvent::ToolCallComplete {
                id: "call_b".to_owned(),
                name: "list_dir".to_owned(),
                input: Ok(json!({ "path": "." })),
            },
        ]
    );
    assert_eq!(
        events[..2],
        [
            ModelEvent::ToolCallStarted {
                id: "call_a".to_owned(),
                name: "read_file".to_owned()
            },
            ModelEvent::ToolCallStarted {
                id: "call_b".to_owned(),
                name: "list_dir".to_owned()
            },
        ]
    );
    assert_eq!(
        events.last(),
        Some(&ModelEvent::MessageStop {
            stop_reason: StopReason::ToolUse
        })
    );
    let fragments_of_a: String = events
        .iter()
        .filter_map(|e| match e {
            ModelEvent::ToolCallInputDelta { id, partial_json } if id == "call_a" => {
                Some(partial_json.as_str())
            }
            _ => None,
        })
        .collect();
    assert_eq!(fragments_of_a, "{\"path\": \"a.txt\"}");
}

#[tokio::test]
async fn tool_results_become_tool_messages_right_after_the_calls() {
    let (server, client) = server_and_client().await;
    server.push(Reply::final_text("Done."));
    let response = client
        .complete(
            common::request_with_tool_results(),
            CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(response.content, vec![ContentBlock::text("Done.")]);
    let messages = &server.requests()[0].body["messages"];
    assert_eq!(
        messages[2],
        json!({
            "role": "assistant",
            "content": "Let me look.",
            "tool_calls": [
                { "id": "toolu_1", "type": "function", "function": { "name": "read_file", "arguments": "{\"path\":\"a.txt\"}" } },
                { "id": "toolu_2", "type": "function", "function": { "name": "list_dir", "arguments": "{\"path\":\".\"}" } },
            ],
        })
    );
    assert_eq!(
        messages[3],
        json!({ "role": "tool", "tool_call_id": "toolu_1", "content": "hello" })
    );
    assert_eq!(
        messages[4],
        json!({ "role": "tool", "tool_call_id": "toolu_2", "content": "Error: permission denied" })
    );
    assert_eq!(messages.as_array().map(Vec::len), Some(5));
}

#[tokio::test]
async fn a_local_server_needs_no_key_and_gets_none() {
    let server = FakeModelServer::start().await.unwrap();
    let mut config = common::config(server.openai_base_url());
    config.api_key = None;
    let options = OpenAiOptions {
        max_tokens_field: MaxTokensField::MaxCompletionTokens,
        include_usage: false,
    };
    let client = OpenAiClient::with_options(&config, options).unwrap();
    server.push(Reply::stream([
        sse::text("hi"),
        sse::usage(1, 1),
        sse::stop("end_turn"),
    ]));
    let response = client
        .complete(common::request(), CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(response.text(), "hi");
    assert_eq!(response.usage, Usage::default(), "no usage was asked for");
    let recorded = &server.requests()[0];
    assert!(!recorded.api_key_sent);
    assert_eq!(recorded.header("authorization"), None);
    assert_eq!(recorded.body["max_completion_tokens"], json!(256));
    assert_eq!(recorded.body.get("stream_options"), None);
}

#[tokio::test]
async fn finish_reasons_are_mapped() {
    let (server, client) = server_and_client().await;
    for (script, expected) in [
        ("max_tokens", StopReason::MaxTokens),
        ("end_turn", StopReason::EndTurn),
        (
            "content_filter",
            StopReason::Other("content_filter".to_owned()),
        ),
    ] {
        server.push(Reply::stream([sse::text("x"), sse::stop(script)]));
        let response = client
            .complete(common::request(), CancellationToken::new())
            .await
            .unwrap();
        assert_eq!(response.stop_reason, expected, "{script}");
    }
}

#[tokio::test]
async fn a_refused_key_echoed_by_the_server_never_reaches_the_error() {
    let server = FakeModelServer::start().await.unwrap();
    server.require_api_key("sk-the-right-one");
    let client = OpenAiClient::new(&common::config(server.openai_base_url())).unwrap();
    let error = client
        .stream(common::request(), CancellationToken::new())
        .await
        .err()
        .unwrap();
    assert!(
        matches!(error, ModelError::Auth { status: 401, .. }),
        "{error:?}"
    );
    let text = error.to_string();
    assert!(
        text.contains("Incorrect API key provided: [redacted]"),
        "{text}"
    );
    assert_no_key(&error);
    assert_eq!(server.request_count(), 1);
}

#[tokio::test]
async fn context_length_exceeded_maps_to_context_too_long() {
    let (server, client) = server_and_client().await;
    server.push(Reply::error_with_code(
        400,
        "invalid_request_error",
        "context_length_exceeded",
        "This model's maximum context length is 8192 tokens. However, your messages resulted in 9001 tokens.",
    ));
    let error = client
        .stream(common::request(), CancellationToken::new())
        .await
        .err()
        .unwrap();
    assert!(
        matches!(&error, ModelError::ContextTooLong { message } if message.contains("8192")),
        "{error:?}"
    );
}

#[tokio::test]
async fn an_error_object_mid_stream_is_mapped() {
    let (server, client) = server_and_client().await;
    server.push(Reply::stream([
        sse::text("so far"),
        sse::error("rate_limit_exceeded", "slow down"),
    ]));
    let stream = client
        .stream(common::request(), CancellationToken::new())
        .await
        .unwrap();
    let (events, error) = drain(stream).await;
    assert_eq!(
        events,
        vec![ModelEvent::TextDelta {
            text: "so far".to_owned()
        }]
    );
    assert!(
        matches!(&error, Some(ModelError::RateLimited { retry_after: None, message }) if message.contains("slow down")),
        "{error:?}"
    );
    assert_eq!(server.request_count(), 1);
}

#[tokio::test]
async fn a_stream_closed_after_its_finish_reason_without_done_still_completes() {
    let (server, client) = server_and_client().await;
    server.push(Reply::raw_stream([
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"},\"finish_reason\":null}]}\n\n",
        ": server keep-alive\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
    ]));
    let response = client
        .complete(common::request(), CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(response.text(), "ok");
    assert_eq!(response.stop_reason, StopReason::EndTurn);
}

#[tokio::test]
async fn tool_calls_sent_whole_without_index_are_accepted() {
    let (server, client) = server_and_client().await;
    server.push(Reply::raw_stream([
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"read_file\",\"arguments\":\"{\\\"path\\\":\\\"x\\\"}\"}},{\"id\":\"call_2\",\"type\":\"function\",\"function\":{\"name\":\"list_dir\",\"arguments\":\"\"}}]},\"finish_reason\":null}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n",
    ]));
    let response = client
        .complete(common::request(), CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(
        response.content,
        vec![
            ContentBlock::ToolUse {
                id: "call_1".to_owned(),
                name: "read_file".to_owned(),
                input: json!({ "path": "x" }),
            },
            ContentBlock::ToolUse {
                id: "call_2".to_owned(),
                name: "list_dir".to_owned(),
                input: json!({}),
            },
        ]
    );
}

#[tokio::test]
async fn malformed_chunks_are_protocol_errors() {
    let cases: [(&str, &str); 3] = [
        ("data: {\"choices\": [\n\n", "not JSON"),
        ("data: [DONE]\n\n", "before any finish_reason"),
        (
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"},\"finish_reason\":null}]}\n\n",
            "ended before a finish_reason",
        ),
    ];
    for (body, expected) in cases {
        let (server, client) = server_and_client().await;
        server.push(Reply::raw_stream([body]));
        let error = client
            .complete(common::request(), CancellationToken::new())
            .await
            .unwrap_err();
        assert!(
            matches!(&error, ModelError::Protocol { message } if message.contains(expected)),
            "{body:?}: {error:?}"
        );
    }
}

#[tokio::test]
async fn invalid_tool_arguments_name_the_tool() {
    let (server, client) = server_and_client().await;
    server.push(Reply::stream([
        sse::tool_start("call_x", "read_file"),
        sse::tool_args("call_x", "{path: a.txt}"),
        sse::stop("tool_use"),
    ]));
    let error = client
        .complete(common::request(), CancellationToken::new())
        .await
        .unwrap_err();
    assert!(
        matches!(&error, ModelError::InvalidToolInput { id, name, .. } if id == "call_x" && name == "read_file"),
        "{error:?}"
    );
}

#[tokio::test]
async fn broken_tool_arguments_stream_as_a_completed_call_with_their_raw_text() {
    let (server, client) = server_and_client().await;
    server.push(Reply::stream([
        sse::tool_start("call_x", "read_file"),
        sse::tool_args("call_x", "{path: a.txt}"),
        sse::tool_start("call_y", "list_dir"),
        sse::tool_args("call_y", "{\"path\": \".\"}"),
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
    assert_eq!(complete.len(), 2, "{events:?}");
    let (id, Err(bad)) = complete[0] else {
        panic!("{complete:?}")
    };
    assert_eq!(id, "call_x");
    assert_eq!(bad.raw, "{path: a.txt}");
    assert!(bad.error.contains("key must be a string"), "{}", bad.error);
    assert_eq!(complete[1], ("call_y", &Ok(json!({"path": "."}))));
    assert_eq!(
        events.last(),
        Some(&ModelEvent::MessageStop {
            stop_reason: StopReason::ToolUse
        })
    );
}
