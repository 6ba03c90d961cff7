//! OpenAI Chat Completions and the servers that copy it (OpenRouter, Ollama, LM Studio,
//! vLLM): `client` is the transport, `format` the wire format.

mod client;
mod format;

pub(crate) use client::auth_headers;
pub use client::{DEFAULT_BASE_URL, MaxTokensField, OpenAiClient, OpenAiOptions};
