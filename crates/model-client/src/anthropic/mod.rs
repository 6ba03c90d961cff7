//! The Anthropic Messages API: `client` is the transport, `format` the wire format.

mod client;
mod format;

pub(crate) use client::auth_headers;
pub use client::{ANTHROPIC_VERSION, AnthropicClient, DEFAULT_BASE_URL};
