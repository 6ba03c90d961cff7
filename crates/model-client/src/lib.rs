//! # model-client
//!
//! Streaming clients for model APIs behind one trait, [`ModelClient`]: the Anthropic Messages
//! API ([`anthropic`]) and OpenAI Chat Completions with everything compatible — OpenRouter,
//! Ollama, LM Studio, vLLM ([`openai`]). Requests, responses and stream events are
//! vendor-neutral ([`types`]); errors are typed ([`ModelError`]) and never hold a key.
//!
//! Keys live in a [`KeyStore`] (OS keychain, an owner-only file, or environment variables)
//! and travel as [`ApiKey`], which prints as `[redacted]`.

pub mod anthropic;
mod api_error;
pub mod client;
pub mod config;
pub mod error;
pub mod keys;
pub mod openai;
pub mod provider;
mod proxy;
pub mod retry;
pub mod sse;
mod stream;
mod tls;
mod transport;
pub mod types;

pub use client::{ModelClient, ModelStream, collect_response};
pub use config::{ClientConfig, Timeouts};
pub use error::{ModelError, TimeoutPhase};
pub use keys::{ApiKey, Environment, KeyStore, KeyStoreError, KeyStoreKind};
pub use provider::{
    KeyNeed, PROVIDERS, ProviderPreset, check_key, connect, default_key_check_path, preset,
};
pub use retry::RetryPolicy;
pub use tokio_util::sync::CancellationToken;
pub use types::{
    ContentBlock, InvalidToolInput, Message, ModelEvent, ModelRequest, ModelResponse, Role,
    StopReason, ToolSpec, Usage, Vendor,
};
