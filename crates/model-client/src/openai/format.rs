//! The Chat Completions wire format: the request body, and the chunks of a streamed response
//! (`choices[0].delta.content`, `delta.tool_calls[]` fragments keyed by `index`,
//! `finish_reason`, a final `usage` chunk, `[DONE]`).

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::client::{MaxTokensField, OpenAiOptions};
use crate::api_error::{self, VendorError};
use crate::error::ModelError;
use crate::sse::SseEvent;
use crate::stream::StreamDecoder;
use crate::types::{
    ContentBlock, InvalidToolInput, ModelEvent, ModelRequest, Role, StopReason, Usage,
};

/// Prefix of a tool result that reports a failure (the format has no `is_error`).
pub(crate) const TOOL_ERROR_PREFIX: &str = "Error: ";

/// The JSON body of a streamed `POST /chat/completions`.
pub(crate) fn request_body(request: &ModelRequest, options: &OpenAiOptions) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(request.model));
    body.insert("stream".into(), json!(true));
    if options.include_usage {
        body.insert("stream_options".into(), json!({ "include_usage": true }));
    }
    let max_tokens_key = match options.max_tokens_field {
        MaxTokensField::MaxTokens => "max_tokens",
        MaxTokensField::MaxCompletionTokens => "max_completion_tokens",
    };
    body.insert(max_tokens_key.into(), json!(request.max_tokens));
    let mut messages = Vec::new();
    if let Some(system) = request.system.as_deref().filter(|s| !s.is_empty()) {
        messages.push(json!({ "role": "system", "content": system }));
    }
    for message in &request.messages {
        match message.role {
            Role::User => push_user(&mut messages, &message.content),
            Role::Assistant => messages.push(assistant(&message.content)),
        }
    }
    body.insert("messages".into(), Value::Array(messages));
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "type": "function",
                    "function": {
                        "name": tool.name,
                        "description": tool.description,
                        "parameters": tool.input_schema,
                    },
                })
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    if let Some(temperature) = request.temperature {
        body.insert("temperature".into(), json!(temperature));
    }
    if !request.stop_sequences.is_empty() {
        body.insert("stop".into(), json!(request.stop_sequences));
    }
    Value::Object(body)
}

/// A user turn: its tool results first (as `tool` messages, which must directly follow the
/// assistant's `tool_calls`), then its text as one `user` message.
fn push_user(messages: &mut Vec<Value>, content: &[ContentBlock]) {
    let mut text = String::new();
    for block in content {
        match block {
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                is_error,
            } => {
                let content = if *is_error {
                    format!("{TOOL_ERROR_PREFIX}{content}")
                } else {
                    content.clone()
                };
                messages.push(
                    json!({ "role": "tool", "tool_call_id": tool_use_id, "content": content }),
                );
            }
            ContentBlock::Text { text: part } => join_text(&mut text, part),
            ContentBlock::ToolUse { .. } => {}
        }
    }
    if !text.is_empty() {
        messages.push(json!({ "role": "user", "content": text }));
    }
}

fn assistant(content: &[ContentBlock]) -> Value {
    let mut text = String::new();
    let mut tool_calls = Vec::new();
    for block in content {
        match block {
            ContentBlock::Text { text: part } => join_text(&mut text, part),
            ContentBlock::ToolUse { id, name, input } => tool_calls.push(json!({
                "id": id,
                "type": "function",
                "function": { "name": name, "arguments": input.to_string() },
            })),
            ContentBlock::ToolResult { .. } => {}
        }
    }
    let mut message = Map::new();
    message.insert("role".into(), json!("assistant"));
    message.insert(
        "content".into(),
        if text.is_empty() {
            Value::Null
        } else {
            json!(text)
        },
    );
    if !tool_calls.is_empty() {
        message.insert("tool_calls".into(), Value::Array(tool_calls));
    }
    Value::Object(message)
}

fn join_text(text: &mut String, part: &str) {
    if part.is_empty() {
        return;
    }
    if !text.is_empty() {
        text.push_str("\n\n");
    }
    text.push_str(part);
}

#[derive(Default)]
struct ToolCall {
    id: Option<String>,
    name: String,
    arguments: String,
    started: bool,
}

/// Decodes the chunks of one streamed completion.
#[derive(Default)]
pub(crate) struct OpenAiDecoder {
    tool_calls: BTreeMap<u64, ToolCall>,
    stop_reason: Option<StopReason>,
}

impl StreamDecoder for OpenAiDecoder {
    fn decode(&mut self, event: SseEvent, out: &mut Vec<ModelEvent>) -> Result<bool, ModelError> {
        if event.data.trim() == "[DONE]" {
            let Some(stop_reason) = self.stop_reason.take() else {
                return Err(ModelError::protocol(
                    "[DONE] arrived before any finish_reason",
                ));
            };
            self.complete_tool_calls(out)?;
            out.push(ModelEvent::MessageStop { stop_reason });
            return Ok(true);
        }
        let value: Value = serde_json::from_str(&event.data)
            .map_err(|error| ModelError::protocol(format!("a chunk is not JSON: {error}")))?;
        if let Some(vendor) = VendorError::from_json(&value) {
            return Err(api_error::from_stream_error(&vendor));
        }
        if let Some(usage) = value.get("usage").filter(|u| u.is_object()) {
            out.push(ModelEvent::Usage(read_usage(usage)));
        }
        let choices = value.get("choices").and_then(Value::as_array);
        let first = choices
            .into_iter()
            .flatten()
            .find(|choice| choice.get("index").and_then(Value::as_u64).unwrap_or(0) == 0);
        let Some(choice) = first else {
            return Ok(false);
        };
        let delta = choice.get("delta").unwrap_or(&Value::Null);
        if let Some(text) = delta.get("content").and_then(Value::as_str)
            && !text.is_empty()
        {
            out.push(ModelEvent::TextDelta {
                text: text.to_owned(),
            });
        }
        if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
            for call in calls {
                self.tool_call_fragment(call, out)?;
            }
        }
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            self.stop_reason = Some(stop_reason(reason));
            self.complete_tool_calls(out)?;
        }
        Ok(false)
    }

    /// Some compatible servers close the stream without `[DONE]`; once a finish_reason has
    /// arrived the message is complete anyway.
    fn finish(&mut self, out: &mut Vec<ModelEvent>) -> Result<(), ModelError> {
        let Some(stop_reason) = self.stop_reason.take() else {
            return Err(ModelError::protocol(
                "the stream ended before a finish_reason",
            ));
        };
        self.complete_tool_calls(out)?;
        out.push(ModelEvent::MessageStop { stop_reason });
        Ok(())
    }
}

impl OpenAiDecoder {
    fn tool_call_fragment(
        &mut self,
        call: &Value,
        out: &mut Vec<ModelEvent>,
    ) -> Result<(), ModelError> {
        // Servers that send each call whole in one chunk sometimes omit `index`.
        let index = match call.get("index").and_then(Value::as_u64) {
            Some(index) => index,
            None => self
                .tool_calls
                .keys()
                .next_back()
                .map_or(0, |last| last + 1),
        };
        let entry = self.tool_calls.entry(index).or_default();
        if let Some(id) = call
            .get("id")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
        {
            match &entry.id {
                Some(known) if known != id => {
                    return Err(ModelError::protocol(format!(
                        "tool call {index} changed its id from `{known}` to `{id}`"
                    )));
                }
                _ => entry.id = Some(id.to_owned()),
            }
        }
        let function = call.get("function").unwrap_or(&Value::Null);
        if let Some(name) = function.get("name").and_then(Value::as_str) {
            entry.name.push_str(name);
        }
        let fragment = function
            .get("arguments")
            .and_then(Value::as_str)
            .unwrap_or("");
        entry.arguments.push_str(fragment);
        if entry.started {
            if !fragment.is_empty()
                && let Some(id) = &entry.id
            {
                out.push(ModelEvent::ToolCallInputDelta {
                    id: id.clone(),
                    partial_json: fragment.to_owned(),
                });
            }
        } else if let Some(id) = entry.id.clone()
            && !entry.name.is_empty()
        {
            start(entry, id, out);
        }
        Ok(())
    }

    fn complete_tool_calls(&mut self, out: &mut Vec<ModelEvent>) -> Result<(), ModelError> {
        for (index, mut call) in std::mem::take(&mut self.tool_calls) {
            if call.name.is_empty() {
                return Err(ModelError::protocol(format!(
                    "tool call {index} has no function name"
                )));
            }
            let id = call.id.clone().unwrap_or_else(|| format!("call_{index}"));
            if !call.started {
                start(&mut call, id.clone(), out);
            }
            let input = InvalidToolInput::parse(&call.arguments, json!({}));
            out.push(ModelEvent::ToolCallComplete {
                id,
                name: call.name,
                input,
            });
        }
        Ok(())
    }
}

/// Announces a call and replays the argument fragments that arrived before its id and name.
fn start(call: &mut ToolCall, id: String, out: &mut Vec<ModelEvent>) {
    call.started = true;
    out.push(ModelEvent::ToolCallStarted {
        id: id.clone(),
        name: call.name.clone(),
    });
    if !call.arguments.is_empty() {
        out.push(ModelEvent::ToolCallInputDelta {
            id,
            partial_json: call.arguments.clone(),
        });
    }
}

fn read_usage(value: &Value) -> Usage {
    let number = |pointer: &str| value.pointer(pointer).and_then(Value::as_u64);
    Usage {
        input_tokens: number("/prompt_tokens").unwrap_or(0),
        output_tokens: number("/completion_tokens").unwrap_or(0),
        cache_read_input_tokens: number("/prompt_tokens_details/cached_tokens"),
        cache_creation_input_tokens: None,
    }
}

fn stop_reason(reason: &str) -> StopReason {
    match reason {
        "stop" => StopReason::EndTurn,
        "tool_calls" | "function_call" => StopReason::ToolUse,
        "length" => StopReason::MaxTokens,
        other => StopReason::Other(other.to_owned()),
    }
}

#[cfg(test)]
#[path = "format_tests.rs"]
mod tests;
