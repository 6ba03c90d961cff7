use super::*;
use crate::types::Message;
use pretty_assertions::assert_eq;

fn chunk(data: &Value) -> SseEvent {
    SseEvent {
        event: None,
        data: data.to_string(),
    }
}

fn delta(delta: &Value, finish: Option<&str>) -> Value {
    json!({ "choices": [{ "index": 0, "delta": delta, "finish_reason": finish }] })
}

fn decode_all(chunks: Vec<Value>) -> (OpenAiDecoder, Vec<ModelEvent>, Result<bool, ModelError>) {
    let mut decoder = OpenAiDecoder::default();
    let mut out = Vec::new();
    let mut last = Ok(false);
    for data in chunks {
        last = decoder.decode(chunk(&data), &mut out);
        if !matches!(last, Ok(false)) {
            break;
        }
    }
    (decoder, out, last)
}

#[test]
fn argument_fragments_before_the_id_and_a_split_name_are_replayed_once_started() {
    let (mut decoder, mut out, last) = decode_all(vec![
        delta(
            &json!({ "tool_calls": [{ "index": 0, "function": { "name": "read_", "arguments": "{\"pa" } }] }),
            None,
        ),
        delta(
            &json!({ "tool_calls": [{ "index": 0, "id": "call_1", "function": { "name": "file", "arguments": "th\":1}" } }] }),
            None,
        ),
        delta(&json!({}), Some("tool_calls")),
    ]);
    assert_eq!(last, Ok(false));
    decoder.finish(&mut out).unwrap();
    assert_eq!(
        out,
        vec![
            ModelEvent::ToolCallStarted {
                id: "call_1".to_owned(),
                name: "read_file".to_owned()
            },
            ModelEvent::ToolCallInputDelta {
                id: "call_1".to_owned(),
                partial_json: "{\"path\":1}".to_owned()
            },
            ModelEvent::ToolCallComplete {
                id: "call_1".to_owned(),
                name: "read_file".to_owned(),
                input: Ok(json!({ "path": 1 })),
            },
            ModelEvent::MessageStop {
                stop_reason: StopReason::ToolUse
            },
        ]
    );
}

#[test]
fn other_choices_are_ignored_and_cached_tokens_are_read() {
    let (mut decoder, mut out, last) = decode_all(vec![
        json!({ "choices": [
            { "index": 1, "delta": { "content": "other" }, "finish_reason": null },
            { "index": 0, "delta": { "content": "mine" }, "finish_reason": "stop" },
        ] }),
        json!({ "choices": [], "usage": { "prompt_tokens": 50, "completion_tokens": 2,
                "prompt_tokens_details": { "cached_tokens": 32 } } }),
    ]);
    assert_eq!(last, Ok(false));
    let done = SseEvent {
        event: None,
        data: " [DONE]".to_owned(),
    };
    assert_eq!(decoder.decode(done, &mut out), Ok(true));
    assert_eq!(
        out,
        vec![
            ModelEvent::TextDelta {
                text: "mine".to_owned()
            },
            ModelEvent::Usage(Usage {
                input_tokens: 50,
                output_tokens: 2,
                cache_read_input_tokens: Some(32),
                cache_creation_input_tokens: None,
            }),
            ModelEvent::MessageStop {
                stop_reason: StopReason::EndTurn
            },
        ]
    );
}

#[test]
fn a_tool_call_that_changes_its_id_or_has_no_name_is_a_protocol_error() {
    let (_, _, last) = decode_all(vec![
        delta(
            &json!({ "tool_calls": [{ "index": 0, "id": "a", "function": { "name": "f" } }] }),
            None,
        ),
        delta(&json!({ "tool_calls": [{ "index": 0, "id": "b" }] }), None),
    ]);
    assert!(
        matches!(&last, Err(ModelError::Protocol { message }) if message.contains("changed its id")),
        "{last:?}"
    );
    let (_, _, last) = decode_all(vec![
        delta(
            &json!({ "tool_calls": [{ "index": 0, "id": "a", "function": { "arguments": "{}" } }] }),
            None,
        ),
        delta(&json!({}), Some("tool_calls")),
    ]);
    assert!(
        matches!(&last, Err(ModelError::Protocol { message }) if message.contains("no function name")),
        "{last:?}"
    );
}

#[test]
fn a_string_error_object_is_mapped() {
    let (_, _, last) = decode_all(vec![json!({ "error": "model is loading" })]);
    assert!(
        matches!(&last, Err(ModelError::Server { status: None, message }) if message == "model is loading"),
        "{last:?}"
    );
}

#[test]
fn user_turns_mixing_tool_results_and_text_put_the_results_first() {
    let request = ModelRequest::new(
        "m",
        vec![
            Message::user_text("go"),
            Message {
                role: Role::Assistant,
                content: vec![ContentBlock::ToolUse {
                    id: "c1".to_owned(),
                    name: "f".to_owned(),
                    input: json!({}),
                }],
            },
            Message {
                role: Role::User,
                content: vec![
                    ContentBlock::text("and also"),
                    ContentBlock::ToolResult {
                        tool_use_id: "c1".to_owned(),
                        content: "done".to_owned(),
                        is_error: false,
                    },
                    ContentBlock::text("this"),
                ],
            },
        ],
        9,
    );
    let body = request_body(&request, &OpenAiOptions::default());
    assert_eq!(
        body["messages"],
        json!([
            { "role": "user", "content": "go" },
            { "role": "assistant", "content": null, "tool_calls": [
                { "id": "c1", "type": "function", "function": { "name": "f", "arguments": "{}" } },
            ] },
            { "role": "tool", "tool_call_id": "c1", "content": "done" },
            { "role": "user", "content": "and also\n\nthis" },
        ])
    );
}
