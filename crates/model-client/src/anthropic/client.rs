//! The Anthropic transport: `POST {base}/v1/messages` with `x-api-key` and
//! `anthropic-version`.

use async_trait::async_trait;
use reqwest::header::{HeaderMap, HeaderValue};
use tokio_util::sync::CancellationToken;

use super::format::{AnthropicDecoder, request_body};
use crate::client::{ModelClient, ModelStream};
use crate::config::ClientConfig;
use crate::error::ModelError;
use crate::transport::{Transport, secret_header};
use crate::types::{ModelRequest, Vendor};

/// Anthropic's API origin.
pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
/// The API version this crate speaks.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// A client of the Anthropic Messages API.
#[derive(Debug)]
pub struct AnthropicClient {
    transport: Transport,
}

impl AnthropicClient {
    /// Fails if the base URL is not an http(s) URL or no key is given (Anthropic always
    /// needs one).
    pub fn new(config: &ClientConfig) -> Result<Self, ModelError> {
        Ok(Self {
            transport: Transport::new(config, "/v1/messages", auth_headers(config)?)?,
        })
    }
}

/// `x-api-key` (sensitive) and `anthropic-version`; Anthropic always needs a key.
pub(crate) fn auth_headers(config: &ClientConfig) -> Result<HeaderMap, ModelError> {
    let key = config.api_key.as_ref().ok_or_else(|| ModelError::Auth {
        status: 401,
        message: "no API key is configured for Anthropic".to_owned(),
    })?;
    let mut headers = HeaderMap::new();
    headers.insert("x-api-key", secret_header(key.expose_secret())?);
    headers.insert(
        "anthropic-version",
        HeaderValue::from_static(ANTHROPIC_VERSION),
    );
    Ok(headers)
}

#[async_trait]
impl ModelClient for AnthropicClient {
    fn vendor(&self) -> Vendor {
        Vendor::Anthropic
    }

    async fn stream(
        &self,
        request: ModelRequest,
        cancel: CancellationToken,
    ) -> Result<ModelStream, ModelError> {
        request.validate()?;
        if let Some(temperature) = request.temperature
            && temperature > 1.0
        {
            return Err(ModelError::InvalidRequest {
                message: format!("Anthropic accepts a temperature of 0 to 1, not {temperature}"),
            });
        }
        let body = serde_json::to_vec(&request_body(&request)).map_err(|error| {
            ModelError::InvalidRequest {
                message: format!("the request could not be encoded: {error}"),
            }
        })?;
        self.transport
            .post_stream(body.into(), Box::new(AnthropicDecoder::default()), cancel)
            .await
    }
}
