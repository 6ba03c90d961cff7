//! Renders scripted events into each vendor's SSE wire format, and error bodies.

use std::collections::HashMap;

use serde_json::{Value, json};

use super::script::ScriptEvent;

/// The wire format a request used, known from its path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WireFormat {
    /// `POST /v1/messages`.
    Anthropic,
    /// `POST /v1/chat/completions`.
    OpenAi,
}

/// A rendered stream: the preamble, then one chunk per script event (possibly empty).
pub(crate) struct Rendered {
    pub preamble: String,
    pub chunks: Vec<String>,
}

/// The vendor's JSON error body.
pub(crate) fn error_body(
    format: WireFormat,
    kind: &str,
    code: Option<&str>,
    message: &str,
) -> String {
    match format {
        WireFormat::Anthropic => {
            json!({ "type": "error", "error": { "type": kind, "message": message } })
        }
        WireFormat::OpenAi => json!({
            "error": { "message": message, "type": kind, "param": null, "code": code }
        }),
    }
    .to_string()
}

pub(crate) fn render_stream(
    format: WireFormat,
    events: &[ScriptEvent],
    model: &str,
    include_usage: bool,
) -> Rendered {
    let (input_tokens, output_tokens) = events
        .iter()
        .rev()
        .find_map(|event| match event {
            ScriptEvent::Usage {
                input_tokens,
                output_tokens,
            } => Some((*input_tokens, *output_tokens)),
            _ => None,
        })
        .unwrap_or((0, 0));
    match format {
        WireFormat::Anthropic => {
            let mut renderer = AnthropicRenderer {
                output_tokens,
                ..AnthropicRenderer::default()
            };
            Rendered {
                preamble: renderer.preamble(model, input_tokens),
                chunks: events.iter().map(|e| renderer.render(e)).collect(),
            }
        }
        WireFormat::OpenAi => {
            let mut renderer = OpenAiRenderer {
                model: model.to_owned(),
                usage: include_usage.then_some((input_tokens, output_tokens)),
                tool_indexes: HashMap::new(),
            };
            Rendered {
                preamble: renderer.chunk(&json!({ "role": "assistant", "content": "" }), None),
                chunks: events.iter().map(|e| renderer.render(e)).collect(),
            }
        }
    }
}

/// Splits a tool input's JSON text in three fragments, as models stream it.
fn fragments(input: &Value) -> Vec<String> {
    let text = input.to_string();
    let chars: Vec<char> = text.chars().collect();
    let third = chars.len().div_ceil(3).max(1);
    chars
        .chunks(third)
        .map(|chunk| chunk.iter().collect())
        .collect()
}

fn sse_frame(event: &str, data: &Value) -> String {
    format!("event: {event}\ndata: {data}\n\n")
}

#[derive(Default)]
struct AnthropicRenderer {
    next_index: u64,
    open_text: Option<u64>,
    open_tools: HashMap<String, u64>,
    output_tokens: u64,
}

impl AnthropicRenderer {
    fn preamble(&self, model: &str, input_tokens: u64) -> String {
        let start = json!({
            "type": "message_start",
            "message": {
                "id": "msg_fake_0001", "type": "message", "role": "assistant",
                "model": model, "content": [], "stop_reason": null, "stop_sequence": null,
                "usage": { "input_tokens": input_tokens, "output_tokens": 1 },
            },
        });
        sse_frame("message_start", &start) + &sse_frame("ping", &json!({ "type": "ping" }))
    }

    fn render(&mut self, event: &ScriptEvent) -> String {
        match event {
            ScriptEvent::Text(text) => {
                let mut out = String::new();
                let index = match self.open_text {
                    Some(index) => index,
                    None => {
                        let index = self.take_index();
                        self.open_text = Some(index);
                        out += &sse_frame(
                            "content_block_start",
                            &json!({ "type": "content_block_start", "index": index,
                                     "content_block": { "type": "text", "text": "" } }),
                        );
                        index
                    }
                };
                out + &sse_frame(
                    "content_block_delta",
                    &json!({ "type": "content_block_delta", "index": index,
                             "delta": { "type": "text_delta", "text": text } }),
                )
            }
            ScriptEvent::ToolUse { id, name, input } => {
                let mut out = self.tool_start(id, name);
                for fragment in fragments(input) {
                    out += &self.tool_args(id, &fragment);
                }
                out + &self.tool_end(id)
            }
            ScriptEvent::ToolStart { id, name } => self.tool_start(id, name),
            ScriptEvent::ToolArgs { id, fragment } => self.tool_args(id, fragment),
            ScriptEvent::ToolEnd { id } => self.tool_end(id),
            ScriptEvent::Usage { .. } => String::new(),
            ScriptEvent::Stop(reason) => {
                let mut out = self.close_text();
                let mut open: Vec<(String, u64)> = self.open_tools.drain().collect();
                open.sort_by_key(|(_, index)| *index);
                for (_, index) in open {
                    out += &block_stop(index);
                }
                out += &sse_frame(
                    "message_delta",
                    &json!({ "type": "message_delta",
                             "delta": { "stop_reason": reason, "stop_sequence": null },
                             "usage": { "output_tokens": self.output_tokens } }),
                );
                out + &sse_frame("message_stop", &json!({ "type": "message_stop" }))
            }
            ScriptEvent::Error { kind, message } => sse_frame(
                "error",
                &json!({ "type": "error", "error": { "type": kind, "message": message } }),
            ),
            ScriptEvent::Raw(bytes) => bytes.clone(),
        }
    }

    fn take_index(&mut self) -> u64 {
        let index = self.next_index;
        self.next_index += 1;
        index
    }

    fn close_text(&mut self) -> String {
        self.open_text.take().map(block_stop).unwrap_or_default()
    }

    fn tool_start(&mut self, id: &str, name: &str) -> String {
        let out = self.close_text();
        let index = self.take_index();
        self.open_tools.insert(id.to_owned(), index);
        out + &sse_frame(
            "content_block_start",
            &json!({ "type": "content_block_start", "index": index,
                     "content_block": { "type": "tool_use", "id": id, "name": name, "input": {} } }),
        )
    }

    fn tool_args(&mut self, id: &str, fragment: &str) -> String {
        // An unknown id renders an index no block has, which a client must refuse.
        let index = self.open_tools.get(id).copied().unwrap_or(u64::MAX);
        sse_frame(
            "content_block_delta",
            &json!({ "type": "content_block_delta", "index": index,
                     "delta": { "type": "input_json_delta", "partial_json": fragment } }),
        )
    }

    fn tool_end(&mut self, id: &str) -> String {
        let index = self.open_tools.remove(id).unwrap_or(u64::MAX);
        block_stop(index)
    }
}

fn block_stop(index: u64) -> String {
    sse_frame(
        "content_block_stop",
        &json!({ "type": "content_block_stop", "index": index }),
    )
}

struct OpenAiRenderer {
    model: String,
    /// `Some` when the request asked for usage (`stream_options.include_usage`).
    usage: Option<(u64, u64)>,
    tool_indexes: HashMap<String, usize>,
}

impl OpenAiRenderer {
    fn chunk(&self, delta: &Value, finish_reason: Option<&str>) -> String {
        let chunk = json!({
            "id": "chatcmpl-fake-0001", "object": "chat.completion.chunk",
            "created": 1_700_000_000, "model": self.model,
            "choices": [{ "index": 0, "delta": delta, "finish_reason": finish_reason }],
        });
        format!("data: {chunk}\n\n")
    }

    fn render(&mut self, event: &ScriptEvent) -> String {
        match event {
            ScriptEvent::Text(text) => self.chunk(&json!({ "content": text }), None),
            ScriptEvent::ToolUse { id, name, input } => {
                let mut out = self.tool_start(id, name);
                for fragment in fragments(input) {
                    out += &self.tool_args(id, &fragment);
                }
                out
            }
            ScriptEvent::ToolStart { id, name } => self.tool_start(id, name),
            ScriptEvent::ToolArgs { id, fragment } => self.tool_args(id, fragment),
            ScriptEvent::ToolEnd { .. } | ScriptEvent::Usage { .. } => String::new(),
            ScriptEvent::Stop(reason) => {
                let finish = match reason.as_str() {
                    "end_turn" | "stop_sequence" => "stop",
                    "tool_use" => "tool_calls",
                    "max_tokens" => "length",
                    other => other,
                };
                let mut out = self.chunk(&json!({}), Some(finish));
                if let Some((input, output)) = self.usage {
                    let chunk = json!({
                        "id": "chatcmpl-fake-0001", "object": "chat.completion.chunk",
                        "created": 1_700_000_000, "model": self.model, "choices": [],
                        "usage": { "prompt_tokens": input, "completion_tokens": output,
                                   "total_tokens": input + output },
                    });
                    out += &format!("data: {chunk}\n\n");
                }
                out + "data: [DONE]\n\n"
            }
            ScriptEvent::Error { kind, message } => format!(
                "data: {}\n\n",
                json!({ "error": { "message": message, "type": kind, "code": kind } })
            ),
            ScriptEvent::Raw(bytes) => bytes.clone(),
        }
    }

    fn tool_start(&mut self, id: &str, name: &str) -> String {
        let index = self.tool_indexes.len();
        self.tool_indexes.insert(id.to_owned(), index);
        self.chunk(
            &json!({ "tool_calls": [{ "index": index, "id": id, "type": "function",
                                     "function": { "name": name, "arguments": "" } }] }),
            None,
        )
    }

    fn tool_args(&self, id: &str, fragment: &str) -> String {
        let index = self.tool_indexes.get(id).copied().unwrap_or(usize::MAX);
        self.chunk(
            &json!({ "tool_calls": [{ "index": index, "function": { "arguments": fragment } }] }),
            None,
        )
    }
}
