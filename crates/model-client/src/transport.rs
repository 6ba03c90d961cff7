//! The HTTP side shared by both vendors: one POST with retries before the body starts,
//! timeouts, cancellation, and vendor errors mapped to [`ModelError`].

use std::time::{Duration, SystemTime};

use bytes::Bytes;
use reqwest::header::{self, HeaderMap, HeaderValue};
use tokio_util::sync::CancellationToken;

use crate::api_error;
use crate::client::ModelStream;
use crate::config::{ClientConfig, Timeouts};
use crate::error::{ModelError, TimeoutPhase, proxy_status_is_server_error};
use crate::keys::ApiKey;
use crate::proxy::{ProxyAnswer, ProxyRoute};
use crate::retry::{self, RetryPolicy};
use crate::stream::{self, StreamDecoder, describe_reqwest_error};
use crate::tls;

/// The most of an error body that is read.
const MAX_ERROR_BODY_BYTES: usize = 64 * 1024;

/// One endpoint, its headers (the key among them, marked sensitive) and its policies.
#[derive(Debug)]
pub(crate) struct Transport {
    http: reqwest::Client,
    url: String,
    /// The endpoint's host, as certificate errors name it.
    host: String,
    /// The proxy the environment named when the client was built, if any.
    proxy: Option<ProxyRoute>,
    headers: HeaderMap,
    secret: Option<ApiKey>,
    timeouts: Timeouts,
    retry: RetryPolicy,
}

/// A failed attempt: the error, whether sending again may help, and the wait the server
/// asked for.
struct Failure {
    error: ModelError,
    retryable: bool,
    requested_delay: Option<Duration>,
}

impl Failure {
    fn final_error(error: ModelError) -> Self {
        Self {
            error,
            retryable: false,
            requested_delay: None,
        }
    }
}

impl Transport {
    /// `path` is appended to the base URL; `headers` are the vendor's (auth included).
    pub(crate) fn new(
        config: &ClientConfig,
        path: &str,
        headers: HeaderMap,
    ) -> Result<Self, ModelError> {
        let url = config.endpoint(path);
        let parsed = reqwest::Url::parse(&url).map_err(|error| ModelError::Config {
            message: format!("base URL `{}` is not a URL: {error}", config.base_url),
        })?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(ModelError::Config {
                message: format!(
                    "base URL `{}` must start with http:// or https://",
                    config.base_url
                ),
            });
        }
        if !parsed.username().is_empty() || parsed.password().is_some() {
            return Err(ModelError::Config {
                message: "the base URL must not hold credentials; keys belong in the key store"
                    .to_owned(),
            });
        }
        let mut headers = headers;
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        headers.insert(
            header::ACCEPT,
            HeaderValue::from_static("text/event-stream"),
        );
        // Built first, so the proxy route below reads the same environment reqwest read.
        let http = tls::http_client(config)?;
        Ok(Self {
            http,
            host: parsed.host_str().unwrap_or_default().to_owned(),
            proxy: ProxyRoute::from_environment(&parsed),
            url,
            headers,
            secret: config.api_key.clone(),
            timeouts: config.timeouts.clone(),
            retry: config.retry.clone(),
        })
    }

    /// POSTs `body` and streams the response through `decoder`.
    pub(crate) async fn post_stream(
        &self,
        body: Bytes,
        decoder: Box<dyn StreamDecoder>,
        cancel: CancellationToken,
    ) -> Result<ModelStream, ModelError> {
        let secret = self.secret.as_ref().map(ApiKey::expose_secret);
        let response = self
            .open(body, &cancel)
            .await
            .map_err(|error| error.scrubbed(secret))?;
        Ok(stream::event_stream(
            response,
            decoder,
            self.timeouts.idle,
            cancel,
            self.secret.clone(),
        ))
    }

    /// One GET of the endpoint, answered 2xx or not: the cheap authenticated request that
    /// tests a key (no retries, no body read beyond an error's).
    pub(crate) async fn get_succeeds(&self) -> Result<(), ModelError> {
        let secret = self.secret.as_ref().map(ApiKey::expose_secret);
        let cancel = CancellationToken::new();
        let mut headers = self.headers.clone();
        headers.remove(header::CONTENT_TYPE);
        headers.insert(header::ACCEPT, HeaderValue::from_static("application/json"));
        let budget = self.timeouts.first_byte;
        let sent = tokio::time::timeout(budget, self.http.get(&self.url).headers(headers).send())
            .await
            .map_err(|_| ModelError::Timeout {
                phase: TimeoutPhase::FirstByte,
                after: budget,
            })?;
        let response = match sent {
            Ok(response) => response,
            Err(error) => return Err(self.transport_failure(error).await.error.scrubbed(secret)),
        };
        let status = response.status();
        if status.is_success() {
            return Ok(());
        }
        let requested_delay = retry::requested_delay(response.headers(), SystemTime::now());
        let text = match self.read_error_body(response, &cancel).await {
            Ok(text) => text,
            Err(failure) => return Err(failure.error.scrubbed(secret)),
        };
        Err(api_error::from_status(status.as_u16(), &text, requested_delay).scrubbed(secret))
    }

    /// Sends until a successful response head arrives, a final error, or retries run out.
    async fn open(
        &self,
        body: Bytes,
        cancel: &CancellationToken,
    ) -> Result<reqwest::Response, ModelError> {
        let mut retries = 0;
        loop {
            let failure = match self.attempt(body.clone(), cancel).await {
                Ok(response) => return Ok(response),
                Err(failure) => failure,
            };
            if !failure.retryable || retries >= self.retry.max_retries {
                return Err(failure.error);
            }
            let delay = match failure.requested_delay {
                Some(requested) if requested > self.retry.max_retry_after => {
                    return Err(failure.error);
                }
                Some(requested) => requested,
                None => self.retry.backoff(retries),
            };
            tracing::warn!(
                retry = retries + 1,
                max_retries = self.retry.max_retries,
                delay_ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
                error = %failure.error.clone().scrubbed(self.secret.as_ref().map(ApiKey::expose_secret)),
                "model request failed before its response started; retrying"
            );
            tokio::select! {
                biased;
                () = cancel.cancelled() => return Err(ModelError::Cancelled),
                () = tokio::time::sleep(delay) => {}
            }
            retries += 1;
        }
    }

    async fn attempt(
        &self,
        body: Bytes,
        cancel: &CancellationToken,
    ) -> Result<reqwest::Response, Failure> {
        let request = self
            .http
            .post(&self.url)
            .headers(self.headers.clone())
            .body(body);
        let budget = self.timeouts.first_byte;
        let sent = tokio::select! {
            biased;
            () = cancel.cancelled() => return Err(Failure::final_error(ModelError::Cancelled)),
            sent = tokio::time::timeout(budget, request.send()) => sent,
        };
        let response = match sent {
            Err(_) => {
                return Err(Failure {
                    error: ModelError::Timeout {
                        phase: TimeoutPhase::FirstByte,
                        after: budget,
                    },
                    retryable: true,
                    requested_delay: None,
                });
            }
            Ok(Err(error)) => return Err(self.transport_failure(error).await),
            Ok(Ok(response)) => response,
        };
        let status = response.status();
        if status.is_success() {
            return self.check_event_stream(response, cancel).await;
        }
        let requested_delay = retry::requested_delay(response.headers(), SystemTime::now());
        let text = self.read_error_body(response, cancel).await?;
        Err(Failure {
            error: api_error::from_status(status.as_u16(), &text, requested_delay),
            retryable: api_error::status_is_retryable(status.as_u16()),
            requested_delay,
        })
    }

    async fn transport_failure(&self, error: reqwest::Error) -> Failure {
        if let Some(reason) = tls::refused_certificate(&error) {
            return Failure::final_error(ModelError::Certificate {
                host: self.host.clone(),
                reason,
            });
        }
        let connect = error.is_connect();
        let connect_timeout = connect && error.is_timeout();
        let builder = error.is_builder();
        let mut message = describe_reqwest_error(error);
        if connect
            && !connect_timeout
            && let Some(route) = &self.proxy
        {
            match route.ask(self.timeouts.connect).await {
                Some(ProxyAnswer::Refuses(answer)) => {
                    return Failure {
                        retryable: proxy_status_is_server_error(&answer),
                        error: ModelError::Proxy {
                            proxy: route.proxy.clone(),
                            target: route.target.clone(),
                            answer,
                        },
                        requested_delay: None,
                    };
                }
                Some(ProxyAnswer::Silent(why)) => {
                    message = format!(
                        "the proxy {} did not answer ({why}): {message}",
                        route.proxy
                    );
                }
                Some(ProxyAnswer::Tunnels) | None => {
                    message = format!("through the proxy {}: {message}", route.proxy);
                }
            }
        }
        let error = if connect_timeout {
            ModelError::Timeout {
                phase: TimeoutPhase::Connect,
                after: self.timeouts.connect,
            }
        } else if builder {
            ModelError::Config { message }
        } else {
            ModelError::Network { message }
        };
        Failure {
            retryable: !builder,
            error,
            requested_delay: None,
        }
    }

    /// A 2xx answer that is not an event stream is a protocol error (with the vendor's
    /// message, if the body is an error object).
    async fn check_event_stream(
        &self,
        response: reqwest::Response,
        cancel: &CancellationToken,
    ) -> Result<reqwest::Response, Failure> {
        let content_type = response
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        if content_type.is_empty() || content_type.starts_with("text/event-stream") {
            return Ok(response);
        }
        let text = self.read_error_body(response, cancel).await?;
        let vendor = api_error::VendorError::from_body(&text);
        Err(Failure::final_error(ModelError::protocol(format!(
            "expected an event stream but got `{content_type}`: {}",
            vendor.message.chars().take(500).collect::<String>()
        ))))
    }

    /// Reads at most [`MAX_ERROR_BODY_BYTES`] of an error body, within the first-byte budget.
    async fn read_error_body(
        &self,
        mut response: reqwest::Response,
        cancel: &CancellationToken,
    ) -> Result<String, Failure> {
        let mut body = Vec::new();
        let deadline = tokio::time::Instant::now() + self.timeouts.first_byte;
        while body.len() < MAX_ERROR_BODY_BYTES {
            let chunk = tokio::select! {
                biased;
                () = cancel.cancelled() => return Err(Failure::final_error(ModelError::Cancelled)),
                chunk = tokio::time::timeout_at(deadline, response.chunk()) => chunk,
            };
            match chunk {
                Ok(Ok(Some(bytes))) => body.extend_from_slice(&bytes),
                // A broken or slow error body still leaves the status to go by.
                Ok(Ok(None)) | Ok(Err(_)) | Err(_) => break,
            }
        }
        body.truncate(MAX_ERROR_BODY_BYTES);
        Ok(String::from_utf8_lossy(&body).into_owned())
    }
}

/// A header holding a secret: marked sensitive so HTTP internals never print it.
pub(crate) fn secret_header(value: &str) -> Result<HeaderValue, ModelError> {
    let mut value = HeaderValue::from_str(value).map_err(|_| ModelError::Config {
        message: "the API key cannot be sent in an HTTP header".to_owned(),
    })?;
    value.set_sensitive(true);
    Ok(value)
}
