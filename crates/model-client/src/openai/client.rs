//! The Chat Completions transport: `POST {base}/chat/completions` with an optional
//! `Authorization: Bearer` key.

use async_trait::async_trait;
use reqwest::header::{AUTHORIZATION, HeaderMap};
use tokio_util::sync::CancellationToken;

use super::format::{OpenAiDecoder, request_body};
use crate::client::{ModelClient, ModelStream};
use crate::config::ClientConfig;
use crate::error::ModelError;
use crate::transport::{Transport, secret_header};
use crate::types::{ModelRequest, Vendor};

/// OpenAI's API root.
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

/// Which field carries `max_tokens`: OpenAI's newer models want `max_completion_tokens`;
/// most compatible servers know only `max_tokens`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum MaxTokensField {
    #[default]
    MaxTokens,
    MaxCompletionTokens,
}

/// Differences between Chat Completions servers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenAiOptions {
    pub max_tokens_field: MaxTokensField,
    /// Send `stream_options: {include_usage: true}` so the stream ends with token counts.
    pub include_usage: bool,
}

impl Default for OpenAiOptions {
    fn default() -> Self {
        Self {
            max_tokens_field: MaxTokensField::default(),
            include_usage: true,
        }
    }
}

/// A client of OpenAI Chat Completions or a compatible server.
#[derive(Debug)]
pub struct OpenAiClient {
    transport: Transport,
    options: OpenAiOptions,
}

impl OpenAiClient {
    /// Default options. The key is optional: local servers (Ollama, LM Studio) take none.
    pub fn new(config: &ClientConfig) -> Result<Self, ModelError> {
        Self::with_options(config, OpenAiOptions::default())
    }

    pub fn with_options(config: &ClientConfig, options: OpenAiOptions) -> Result<Self, ModelError> {
        Ok(Self {
            transport: Transport::new(config, "/chat/completions", auth_headers(config)?)?,
            options,
        })
    }
}

/// `Authorization: Bearer <key>` (sensitive) when there is a key.
pub(crate) fn auth_headers(config: &ClientConfig) -> Result<HeaderMap, ModelError> {
    let mut headers = HeaderMap::new();
    if let Some(key) = &config.api_key {
        headers.insert(
            AUTHORIZATION,
            secret_header(&format!("Bearer {}", key.expose_secret()))?,
        );
    }
    Ok(headers)
}

#[async_trait]
impl ModelClient for OpenAiClient {
    fn vendor(&self) -> Vendor {
        Vendor::OpenAiCompatible
    }

    async fn stream(
        &self,
        request: ModelRequest,
        cancel: CancellationToken,
    ) -> Result<ModelStream, ModelError> {
        request.validate()?;
        let body = serde_json::to_vec(&request_body(&request, &self.options)).map_err(|error| {
            ModelError::InvalidRequest {
                message: format!("the request could not be encoded: {error}"),
            }
        })?;
        self.transport
            .post_stream(body.into(), Box::new(OpenAiDecoder::default()), cancel)
            .await
    }
}
