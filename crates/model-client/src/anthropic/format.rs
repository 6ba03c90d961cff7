//! The Anthropic Messages wire format: the request body, and the SSE events of a streamed
//! response (`message_start`, `content_block_start` / `_delta` / `_stop` with `text_delta`
//! and `input_json_delta`, `message_delta`, `message_stop`, `ping`, `error`).

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use crate::api_error::{self, VendorError};
use crate::error::ModelError;
use crate::sse::SseEvent;
use crate::stream::StreamDecoder;
use crate::types::{
    ContentBlock, InvalidToolInput, ModelEvent, ModelRequest, Role, StopReason, Usage,
};

/// The JSON body of a streamed `POST /v1/messages`.
pub(crate) fn request_body(request: &ModelRequest) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(request.model));
    body.insert("max_tokens".into(), json!(request.max_tokens));
    body.insert("stream".into(), json!(true));
    if let Some(system) = request.system.as_deref().filter(|s| !s.is_empty()) {
        body.insert("system".into(), json!(system));
    }
    let messages: Vec<Value> = request
        .messages
        .iter()
        .map(|message| {
            json!({
                "role": match message.role { Role::User => "user", Role::Assistant => "assistant" },
                "content": message.content.iter().filter_map(content_block).collect::<Vec<_>>(),
            })
        })
        .collect();
    body.insert("messages".into(), Value::Array(messages));
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "name": tool.name,
                    "description": tool.description,
                    "input_schema": tool.input_schema,
                })
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    if let Some(temperature) = request.temperature {
        body.insert("temperature".into(), json!(temperature));
    }
    if !request.stop_sequences.is_empty() {
        body.insert("stop_sequences".into(), json!(request.stop_sequences));
    }
    Value::Object(body)
}

/// One content block on the wire; empty text blocks are dropped (the API refuses them).
fn content_block(block: &ContentBlock) -> Option<Value> {
    Some(match block {
        ContentBlock::Text { text } if text.is_empty() => return None,
        ContentBlock::Text { text } => json!({ "type": "text", "text": text }),
        ContentBlock::ToolUse { id, name, input } => {
            json!({ "type": "tool_use", "id": id, "name": name, "input": input })
        }
        ContentBlock::ToolResult {
            tool_use_id,
            content,
            is_error,
        } => json!({
            "type": "tool_result",
            "tool_use_id": tool_use_id,
            "content": content,
            "is_error": is_error,
        }),
    })
}

enum Block {
    Text,
    ToolUse {
        id: String,
        name: String,
        json: String,
        initial: Value,
    },
    /// A block kind this crate does not surface (thinking, server tools, …).
    Other,
}

/// Decodes the events of one streamed message.
#[derive(Default)]
pub(crate) struct AnthropicDecoder {
    started: bool,
    blocks: HashMap<u64, Block>,
    usage: Usage,
    stop_reason: Option<StopReason>,
}

impl StreamDecoder for AnthropicDecoder {
    fn decode(&mut self, event: SseEvent, out: &mut Vec<ModelEvent>) -> Result<bool, ModelError> {
        let value: Value = serde_json::from_str(&event.data).map_err(|error| {
            ModelError::protocol(format!(
                "event `{}` is not JSON: {error}",
                event.event.as_deref().unwrap_or("message")
            ))
        })?;
        let kind = value
            .get("type")
            .and_then(Value::as_str)
            .or(event.event.as_deref())
            .unwrap_or("")
            .to_owned();
        if kind == "error" {
            let vendor = VendorError::from_json(&value).unwrap_or_default();
            return Err(api_error::from_stream_error(&vendor));
        }
        if kind == "ping" {
            return Ok(false);
        }
        if kind == "message_start" {
            self.started = true;
            if let Some(usage) = value.pointer("/message/usage") {
                merge_usage(&mut self.usage, usage);
            }
            return Ok(false);
        }
        if !self.started {
            return Err(ModelError::protocol(format!(
                "event `{kind}` arrived before message_start"
            )));
        }
        match kind.as_str() {
            "content_block_start" => self.block_start(&value, out)?,
            "content_block_delta" => self.block_delta(&value, out)?,
            "content_block_stop" => self.block_stop(&value, out)?,
            "message_delta" => {
                if let Some(reason) = value.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.stop_reason = Some(stop_reason(reason));
                }
                if let Some(usage) = value.get("usage") {
                    merge_usage(&mut self.usage, usage);
                    out.push(ModelEvent::Usage(self.usage));
                }
            }
            "message_stop" => {
                if !self.blocks.is_empty() {
                    return Err(ModelError::protocol(
                        "message_stop arrived while a content block was still open",
                    ));
                }
                let stop_reason = self.stop_reason.take().ok_or_else(|| {
                    ModelError::protocol("message_stop arrived without a stop_reason")
                })?;
                out.push(ModelEvent::MessageStop { stop_reason });
                return Ok(true);
            }
            // New event types may be added to the API; they are not errors.
            _ => {}
        }
        Ok(false)
    }

    fn finish(&mut self, _out: &mut Vec<ModelEvent>) -> Result<(), ModelError> {
        Err(ModelError::protocol(if self.started {
            "the stream ended before message_stop"
        } else {
            "the stream ended before message_start"
        }))
    }
}

impl AnthropicDecoder {
    fn block_start(&mut self, value: &Value, out: &mut Vec<ModelEvent>) -> Result<(), ModelError> {
        let index = block_index(value)?;
        let block = value.get("content_block").unwrap_or(&Value::Null);
        let block = match block.get("type").and_then(Value::as_str) {
            Some("text") => {
                if let Some(text) = block.get("text").and_then(Value::as_str)
                    && !text.is_empty()
                {
                    out.push(ModelEvent::TextDelta {
                        text: text.to_owned(),
                    });
                }
                Block::Text
            }
            Some("tool_use") => {
                let field = |name: &str| {
                    block
                        .get(name)
                        .and_then(Value::as_str)
                        .filter(|s| !s.is_empty())
                        .map(str::to_owned)
                        .ok_or_else(|| {
                            ModelError::protocol(format!("tool_use block {index} has no {name}"))
                        })
                };
                let (id, name) = (field("id")?, field("name")?);
                out.push(ModelEvent::ToolCallStarted {
                    id: id.clone(),
                    name: name.clone(),
                });
                Block::ToolUse {
                    id,
                    name,
                    json: String::new(),
                    initial: block.get("input").cloned().unwrap_or_else(|| json!({})),
                }
            }
            _ => Block::Other,
        };
        if self.blocks.insert(index, block).is_some() {
            return Err(ModelError::protocol(format!(
                "content block {index} started twice"
            )));
        }
        Ok(())
    }

    fn block_delta(&mut self, value: &Value, out: &mut Vec<ModelEvent>) -> Result<(), ModelError> {
        let index = block_index(value)?;
        let block = self.blocks.get_mut(&index).ok_or_else(|| {
            ModelError::protocol(format!(
                "delta for content block {index}, which is not open"
            ))
        })?;
        let delta = value.get("delta").unwrap_or(&Value::Null);
        let text_of = |key: &str| {
            delta
                .get(key)
                .and_then(Value::as_str)
                .map(str::to_owned)
                .ok_or_else(|| ModelError::protocol(format!("delta of block {index} has no {key}")))
        };
        match (delta.get("type").and_then(Value::as_str), block) {
            (Some("text_delta"), Block::Text) => {
                out.push(ModelEvent::TextDelta {
                    text: text_of("text")?,
                });
            }
            (Some("input_json_delta"), Block::ToolUse { id, json, .. }) => {
                let partial_json = text_of("partial_json")?;
                json.push_str(&partial_json);
                out.push(ModelEvent::ToolCallInputDelta {
                    id: id.clone(),
                    partial_json,
                });
            }
            (Some(kind @ ("text_delta" | "input_json_delta")), _) => {
                return Err(ModelError::protocol(format!(
                    "{kind} for content block {index}, which is of another kind"
                )));
            }
            _ => {}
        }
        Ok(())
    }

    fn block_stop(&mut self, value: &Value, out: &mut Vec<ModelEvent>) -> Result<(), ModelError> {
        let index = block_index(value)?;
        match self.blocks.remove(&index) {
            None => Err(ModelError::protocol(format!(
                "content_block_stop for block {index}, which is not open"
            ))),
            Some(Block::ToolUse {
                id,
                name,
                json,
                initial,
            }) => {
                let input = InvalidToolInput::parse(&json, initial);
                out.push(ModelEvent::ToolCallComplete { id, name, input });
                Ok(())
            }
            Some(Block::Text | Block::Other) => Ok(()),
        }
    }
}

fn block_index(value: &Value) -> Result<u64, ModelError> {
    value
        .get("index")
        .and_then(Value::as_u64)
        .ok_or_else(|| ModelError::protocol("content block event without an index"))
}

fn merge_usage(usage: &mut Usage, value: &Value) {
    let number = |key: &str| value.get(key).and_then(Value::as_u64);
    if let Some(n) = number("input_tokens") {
        usage.input_tokens = n;
    }
    if let Some(n) = number("output_tokens") {
        usage.output_tokens = n;
    }
    if let Some(n) = number("cache_read_input_tokens") {
        usage.cache_read_input_tokens = Some(n);
    }
    if let Some(n) = number("cache_creation_input_tokens") {
        usage.cache_creation_input_tokens = Some(n);
    }
}

fn stop_reason(reason: &str) -> StopReason {
    match reason {
        "end_turn" => StopReason::EndTurn,
        "tool_use" => StopReason::ToolUse,
        "max_tokens" => StopReason::MaxTokens,
        "stop_sequence" => StopReason::StopSequence,
        other => StopReason::Other(other.to_owned()),
    }
}

#[cfg(test)]
#[path = "format_tests.rs"]
mod tests;
