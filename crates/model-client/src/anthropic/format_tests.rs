use super::*;
use crate::types::{Message, ToolSpec};
use pretty_assertions::assert_eq;

fn event(data: &Value) -> SseEvent {
    SseEvent {
        event: data.get("type").and_then(Value::as_str).map(str::to_owned),
        data: data.to_string(),
    }
}

fn start() -> Value {
    json!({ "type": "message_start", "message": { "usage": {
        "input_tokens": 10, "output_tokens": 1,
        "cache_read_input_tokens": 4, "cache_creation_input_tokens": 2 } } })
}

/// Feeds events until one fails or the message completes.
fn decode_all(events: Vec<Value>) -> (Vec<ModelEvent>, Result<bool, ModelError>) {
    let mut decoder = AnthropicDecoder::default();
    let mut out = Vec::new();
    let mut last = Ok(false);
    for data in events {
        last = decoder.decode(event(&data), &mut out);
        if !matches!(last, Ok(false)) {
            break;
        }
    }
    (out, last)
}

#[test]
fn text_in_block_start_thinking_blocks_and_cache_usage() {
    let (out, last) = decode_all(vec![
        start(),
        json!({ "type": "content_block_start", "index": 0, "content_block": { "type": "thinking", "thinking": "" } }),
        json!({ "type": "content_block_delta", "index": 0, "delta": { "type": "thinking_delta", "thinking": "hmm" } }),
        json!({ "type": "content_block_delta", "index": 0, "delta": { "type": "signature_delta", "signature": "x" } }),
        json!({ "type": "content_block_stop", "index": 0 }),
        json!({ "type": "content_block_start", "index": 1, "content_block": { "type": "text", "text": "Hello" } }),
        json!({ "type": "content_block_stop", "index": 1 }),
        json!({ "type": "some_future_event" }),
        json!({ "type": "message_delta", "delta": { "stop_reason": "end_turn" }, "usage": { "output_tokens": 9 } }),
        json!({ "type": "message_stop" }),
    ]);
    assert_eq!(last, Ok(true));
    assert_eq!(
        out,
        vec![
            ModelEvent::TextDelta {
                text: "Hello".to_owned()
            },
            ModelEvent::Usage(Usage {
                input_tokens: 10,
                output_tokens: 9,
                cache_read_input_tokens: Some(4),
                cache_creation_input_tokens: Some(2),
            }),
            ModelEvent::MessageStop {
                stop_reason: StopReason::EndTurn
            },
        ]
    );
}

#[test]
fn a_tool_use_without_deltas_keeps_its_initial_input() {
    let (out, last) = decode_all(vec![
        start(),
        json!({ "type": "content_block_start", "index": 0, "content_block": {
            "type": "tool_use", "id": "t1", "name": "now", "input": {} } }),
        json!({ "type": "content_block_stop", "index": 0 }),
    ]);
    assert_eq!(last, Ok(false));
    assert_eq!(
        out.last(),
        Some(&ModelEvent::ToolCallComplete {
            id: "t1".to_owned(),
            name: "now".to_owned(),
            input: Ok(json!({})),
        })
    );
}

#[test]
fn out_of_order_and_malformed_events_are_protocol_errors() {
    let cases: Vec<(Vec<Value>, &str)> = vec![
        (
            vec![
                json!({ "type": "content_block_start", "index": 0, "content_block": { "type": "text" } }),
            ],
            "before message_start",
        ),
        (
            vec![
                start(),
                json!({ "type": "content_block_delta", "index": 3, "delta": { "type": "text_delta", "text": "x" } }),
            ],
            "not open",
        ),
        (
            vec![
                start(),
                json!({ "type": "content_block_start", "index": 0, "content_block": { "type": "text" } }),
                json!({ "type": "content_block_delta", "index": 0, "delta": { "type": "input_json_delta", "partial_json": "{" } }),
            ],
            "of another kind",
        ),
        (
            vec![
                start(),
                json!({ "type": "content_block_start", "index": 0, "content_block": { "type": "tool_use", "name": "x" } }),
            ],
            "has no id",
        ),
        (
            vec![start(), json!({ "type": "message_stop" })],
            "without a stop_reason",
        ),
        (
            vec![
                start(),
                json!({ "type": "content_block_start", "index": 0, "content_block": { "type": "text" } }),
                json!({ "type": "message_delta", "delta": { "stop_reason": "end_turn" } }),
                json!({ "type": "message_stop" }),
            ],
            "still open",
        ),
        (
            vec![start(), json!({ "type": "content_block_stop" })],
            "without an index",
        ),
    ];
    for (events, expected) in cases {
        let (_, last) = decode_all(events);
        assert!(
            matches!(&last, Err(ModelError::Protocol { message }) if message.contains(expected)),
            "{expected}: {last:?}"
        );
    }
}

#[test]
fn finish_names_what_is_missing() {
    let mut decoder = AnthropicDecoder::default();
    let mut out = Vec::new();
    assert!(matches!(
        decoder.finish(&mut out),
        Err(ModelError::Protocol { message }) if message.contains("before message_start")
    ));
    decoder.decode(event(&start()), &mut out).unwrap();
    assert!(matches!(
        decoder.finish(&mut out),
        Err(ModelError::Protocol { message }) if message.contains("before message_stop")
    ));
}

#[test]
fn request_body_drops_empty_text_and_omits_unset_fields() {
    let mut request = ModelRequest::new(
        "claude-test",
        vec![Message {
            role: Role::User,
            content: vec![ContentBlock::text(""), ContentBlock::text("hi")],
        }],
        100,
    );
    assert_eq!(
        request_body(&request),
        json!({
            "model": "claude-test", "max_tokens": 100, "stream": true,
            "messages": [{ "role": "user", "content": [{ "type": "text", "text": "hi" }] }],
        })
    );
    request.temperature = Some(0.5);
    request.stop_sequences = vec!["END".to_owned()];
    request.tools = vec![ToolSpec {
        name: "t".to_owned(),
        description: "d".to_owned(),
        input_schema: json!({ "type": "object" }),
    }];
    let body = request_body(&request);
    assert_eq!(body["temperature"], json!(0.5));
    assert_eq!(body["stop_sequences"], json!(["END"]));
    assert_eq!(
        body["tools"][0]["input_schema"],
        json!({ "type": "object" })
    );
}
