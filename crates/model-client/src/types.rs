//! Vendor-neutral request, response and stream-event types.
//!
//! The agent speaks only these; each vendor module translates them to and from its wire format.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::ModelError;

/// The two wire formats this crate speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Vendor {
    /// The Anthropic Messages API (`POST {base}/v1/messages`).
    Anthropic,
    /// The OpenAI Chat Completions API and the servers that copy it (OpenRouter, Ollama,
    /// LM Studio, vLLM): `POST {base}/chat/completions`.
    OpenAiCompatible,
}

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    User,
    Assistant,
}

/// One piece of a message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    /// Plain text.
    Text { text: String },
    /// The model asks for a tool to run (only in assistant messages).
    ToolUse {
        id: String,
        name: String,
        input: Value,
    },
    /// The answer to a [`ContentBlock::ToolUse`] of the previous assistant message (only in
    /// user messages).
    ToolResult {
        tool_use_id: String,
        content: String,
        is_error: bool,
    },
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text { text: text.into() }
    }
}

/// One turn of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub content: Vec<ContentBlock>,
}

impl Message {
    /// A user message holding one text block.
    pub fn user_text(text: impl Into<String>) -> Self {
        Self {
            role: Role::User,
            content: vec![ContentBlock::text(text)],
        }
    }

    /// An assistant message holding one text block.
    pub fn assistant_text(text: impl Into<String>) -> Self {
        Self {
            role: Role::Assistant,
            content: vec![ContentBlock::text(text)],
        }
    }
}

/// A tool the model may call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// A JSON Schema of `"type": "object"` describing the tool's input.
    pub input_schema: Value,
}

/// One request to a model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelRequest {
    /// The vendor's model id, e.g. `claude-sonnet-4-5` or `llama3.2`.
    pub model: String,
    pub system: Option<String>,
    pub messages: Vec<Message>,
    pub tools: Vec<ToolSpec>,
    pub max_tokens: u32,
    pub temperature: Option<f32>,
    pub stop_sequences: Vec<String>,
}

impl ModelRequest {
    /// A request with no system prompt, no tools, no temperature and no stop sequences.
    pub fn new(model: impl Into<String>, messages: Vec<Message>, max_tokens: u32) -> Self {
        Self {
            model: model.into(),
            system: None,
            messages,
            tools: Vec::new(),
            max_tokens,
            temperature: None,
            stop_sequences: Vec::new(),
        }
    }

    /// Checks what every vendor requires, so a bad request fails here with a clear message
    /// instead of as a vendor's 400.
    pub fn validate(&self) -> Result<(), ModelError> {
        let invalid = |message: String| Err(ModelError::InvalidRequest { message });
        if self.model.trim().is_empty() {
            return invalid("the model id is empty".to_owned());
        }
        if self.messages.is_empty() {
            return invalid("a request needs at least one message".to_owned());
        }
        if self.max_tokens == 0 {
            return invalid("max_tokens must be at least 1".to_owned());
        }
        if let Some(temperature) = self.temperature
            && !(temperature.is_finite() && (0.0..=2.0).contains(&temperature))
        {
            return invalid(format!("temperature {temperature} is outside 0 to 2"));
        }
        let mut names = std::collections::HashSet::new();
        for tool in &self.tools {
            let name_ok = (1..=64).contains(&tool.name.len())
                && tool
                    .name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
            if !name_ok {
                return invalid(format!(
                    "tool name `{}` must be 1 to 64 letters, digits, `_` or `-`",
                    tool.name
                ));
            }
            if !names.insert(tool.name.as_str()) {
                return invalid(format!("two tools are named `{}`", tool.name));
            }
            if tool.input_schema.get("type").and_then(Value::as_str) != Some("object") {
                return invalid(format!(
                    "the input schema of tool `{}` must be a JSON object schema with \
                     \"type\": \"object\"",
                    tool.name
                ));
            }
        }
        Ok(())
    }
}

/// Why the model stopped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The model finished its answer.
    EndTurn,
    /// The model waits for the results of the tool calls it made.
    ToolUse,
    /// The answer hit `max_tokens`.
    MaxTokens,
    /// The answer hit one of the request's stop sequences.
    StopSequence,
    /// A reason this crate does not name (the vendor's word, e.g. `refusal`, `content_filter`).
    Other(String),
}

/// Token counts of one response.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Input tokens read from the vendor's prompt cache, when it reports them.
    pub cache_read_input_tokens: Option<u64>,
    /// Input tokens written to the vendor's prompt cache, when it reports them.
    pub cache_creation_input_tokens: Option<u64>,
}

/// One event of a streamed response, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelEvent {
    /// More of the answer's text.
    TextDelta { text: String },
    /// The model began a tool call.
    ToolCallStarted { id: String, name: String },
    /// A fragment of a tool call's JSON input (fragments concatenate to the whole input).
    ToolCallInputDelta { id: String, partial_json: String },
    /// A tool call is complete. `input` is its parsed JSON object, or — when the model's
    /// arguments are not a JSON object — the raw text and the parse error, so the caller can
    /// answer the call with an error and let the model try again (the stream goes on).
    ToolCallComplete {
        id: String,
        name: String,
        input: Result<Value, InvalidToolInput>,
    },
    /// Token counts (the last one of a stream holds the totals).
    Usage(Usage),
    /// The last event of a successful stream.
    MessageStop { stop_reason: StopReason },
}

/// Tool-call arguments that are not a JSON object, exactly as the model sent them.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{error}")]
pub struct InvalidToolInput {
    /// The concatenated argument text the model streamed.
    pub raw: String,
    /// Why it is not a JSON object (the parser's message).
    pub error: String,
}

impl InvalidToolInput {
    /// Parses the accumulated arguments of a tool call: `empty` when there are none, else a
    /// JSON object; anything else (broken JSON, an array, a string) is kept with the reason.
    pub fn parse(raw: &str, empty: Value) -> Result<Value, InvalidToolInput> {
        if raw.trim().is_empty() {
            return Ok(empty);
        }
        match serde_json::from_str::<Value>(raw) {
            Ok(value @ Value::Object(_)) => Ok(value),
            Ok(other) => Err(InvalidToolInput {
                raw: raw.to_owned(),
                error: format!("expected a JSON object, got {}", json_kind(&other)),
            }),
            Err(error) => Err(InvalidToolInput {
                raw: raw.to_owned(),
                error: error.to_string(),
            }),
        }
    }
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A whole response, as [`crate::ModelClient::complete`] collects it from the stream.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelResponse {
    /// Text and tool-use blocks, in the order the model produced them.
    pub content: Vec<ContentBlock>,
    pub stop_reason: StopReason,
    pub usage: Usage,
}

impl ModelResponse {
    /// All text blocks joined.
    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter_map(|block| match block {
                ContentBlock::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect()
    }
}
