//! How a client reaches its API: base URL, key, timeouts, retries, extra trusted CAs.

use std::path::PathBuf;
use std::time::Duration;

use crate::keys::ApiKey;
use crate::retry::RetryPolicy;

/// The three waits of a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Timeouts {
    /// Opening the TCP and TLS connection.
    pub connect: Duration,
    /// From sending the request (connection included) to the response head. Local servers
    /// may load a model before answering, so this is generous by default.
    pub first_byte: Duration,
    /// The longest silence between two chunks of a streamed body once it started.
    pub idle: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Self {
            connect: Duration::from_secs(10),
            first_byte: Duration::from_secs(300),
            idle: Duration::from_secs(120),
        }
    }
}

/// Everything a vendor client needs to reach its API.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// For Anthropic the origin (`https://api.anthropic.com`; the client appends
    /// `/v1/messages`); for OpenAI-compatible servers the API root including its version
    /// (`https://api.openai.com/v1`, `http://localhost:11434/v1`; the client appends
    /// `/chat/completions`).
    pub base_url: String,
    /// `None` for local servers that take no key.
    pub api_key: Option<ApiKey>,
    pub timeouts: Timeouts,
    pub retry: RetryPolicy,
    /// A PEM file of CA certificates to trust in addition to the system's roots (a
    /// corporate CA whose proxy re-signs TLS, or a private model server's CA). A file that
    /// cannot be read or holds no certificate is a [`crate::ModelError::Config`] naming it.
    pub extra_ca_file: Option<PathBuf>,
}

impl ClientConfig {
    /// Default timeouts and retries.
    pub fn new(base_url: impl Into<String>, api_key: Option<ApiKey>) -> Self {
        Self {
            base_url: base_url.into(),
            api_key,
            timeouts: Timeouts::default(),
            retry: RetryPolicy::default(),
            extra_ca_file: None,
        }
    }

    /// The endpoint URL: `base_url` without trailing slashes, then `path`.
    pub(crate) fn endpoint(&self, path: &str) -> String {
        format!("{}{path}", self.base_url.trim_end_matches('/'))
    }
}
