//! The one error type of this crate. No variant ever carries an API key: vendor messages are
//! scrubbed of the key before they are stored (see [`scrub_secret`]).

use std::fmt;
use std::time::Duration;

/// Which wait ran out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeoutPhase {
    /// Opening the TCP (and TLS) connection.
    Connect,
    /// Waiting for the response head after the request was sent.
    FirstByte,
    /// Waiting for the next chunk of a response body that had started.
    Idle,
}

impl fmt::Display for TimeoutPhase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Connect => "connecting",
            Self::FirstByte => "waiting for the response to start",
            Self::Idle => "waiting for the next part of the streamed response",
        })
    }
}

/// Everything that can go wrong talking to a model.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// The API refused the key (HTTP 401/403) or no key was configured.
    #[error("the model API refused the credentials (HTTP {status}): {message}")]
    Auth { status: u16, message: String },
    /// HTTP 429 (or a rate-limit error inside a stream) that retries did not outlast.
    #[error("rate limited by the model API{}: {message}", RetryAfter(*retry_after))]
    RateLimited {
        retry_after: Option<Duration>,
        message: String,
    },
    /// The conversation does not fit the model's context window.
    #[error("the conversation is too long for the model's context window: {message}")]
    ContextTooLong { message: String },
    /// The API rejected the request (HTTP 4xx other than the above).
    #[error("the model API rejected the request (HTTP {status}): {message}")]
    BadRequest { status: u16, message: String },
    /// The API is overloaded (Anthropic HTTP 529 or an `overloaded_error` event).
    #[error("the model API is overloaded: {message}")]
    Overloaded { message: String },
    /// The API failed (HTTP 5xx, or an error event inside a stream when `status` is `None`).
    #[error("the model API failed{}: {message}", HttpStatus(*status))]
    Server {
        status: Option<u16>,
        message: String,
    },
    /// The connection failed or broke.
    #[error("network error talking to the model API: {message}")]
    Network { message: String },
    /// The server's TLS certificate was refused: not signed by a trusted CA, not valid for
    /// the host, expired… Not retried: the same certificate would be refused again.
    #[error("the TLS certificate of {host} was not trusted: {reason}")]
    Certificate { host: String, reason: String },
    /// The HTTPS proxy from the environment (`HTTPS_PROXY`, `ALL_PROXY`) refused to open a
    /// tunnel to the API. `proxy` is its URL without credentials, `answer` its status line
    /// (`HTTP/1.1 403 Forbidden`). Retried only when that status is 5xx.
    #[error("the proxy {proxy} refused to open a tunnel to {target}: it answered `{answer}`")]
    Proxy {
        proxy: String,
        target: String,
        answer: String,
    },
    /// A wait ran out.
    #[error("timed out after {after:?} {phase}")]
    Timeout {
        phase: TimeoutPhase,
        after: Duration,
    },
    /// The caller's cancellation token fired.
    #[error("the model request was cancelled")]
    Cancelled,
    /// The response was not what the wire format promises (malformed SSE or JSON, an event
    /// out of order, a stream that ended early).
    #[error("malformed response from the model API: {message}")]
    Protocol { message: String },
    /// The model produced tool-call arguments that are not a JSON object. Only
    /// [`crate::collect_response`] (and so `complete`) fails with it: a stream reports such a
    /// call as a `ToolCallComplete` whose input is an [`crate::InvalidToolInput`] and goes on.
    #[error("the model's input for tool `{name}` (call {id}) is not valid JSON: {message}")]
    InvalidToolInput {
        id: String,
        name: String,
        message: String,
    },
    /// The request was refused before sending it (e.g. an empty model id).
    #[error("invalid model request: {message}")]
    InvalidRequest { message: String },
    /// The client could not be built (e.g. a base URL that is not a URL).
    #[error("invalid model client configuration: {message}")]
    Config { message: String },
}

impl ModelError {
    /// Whether the same request may succeed if sent again later (rate limits, overload,
    /// server errors, network trouble, timeouts). The client already retries these before a
    /// response starts; this tells a caller whether retrying a whole turn makes sense.
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            Self::RateLimited { .. }
                | Self::Overloaded { .. }
                | Self::Server { .. }
                | Self::Network { .. }
                | Self::Timeout { .. }
        ) || matches!(self, Self::Proxy { answer, .. } if proxy_status_is_server_error(answer))
    }

    /// The same error with every occurrence of `secret` in its text replaced by `[redacted]`.
    pub(crate) fn scrubbed(self, secret: Option<&str>) -> Self {
        let clean = |message: String| scrub_secret(&message, secret);
        match self {
            Self::Auth { status, message } => Self::Auth {
                status,
                message: clean(message),
            },
            Self::RateLimited {
                retry_after,
                message,
            } => Self::RateLimited {
                retry_after,
                message: clean(message),
            },
            Self::ContextTooLong { message } => Self::ContextTooLong {
                message: clean(message),
            },
            Self::BadRequest { status, message } => Self::BadRequest {
                status,
                message: clean(message),
            },
            Self::Overloaded { message } => Self::Overloaded {
                message: clean(message),
            },
            Self::Server { status, message } => Self::Server {
                status,
                message: clean(message),
            },
            Self::Network { message } => Self::Network {
                message: clean(message),
            },
            Self::Protocol { message } => Self::Protocol {
                message: clean(message),
            },
            Self::InvalidToolInput { id, name, message } => Self::InvalidToolInput {
                id,
                name,
                message: clean(message),
            },
            Self::InvalidRequest { message } => Self::InvalidRequest {
                message: clean(message),
            },
            Self::Config { message } => Self::Config {
                message: clean(message),
            },
            Self::Certificate { host, reason } => Self::Certificate {
                host,
                reason: clean(reason),
            },
            Self::Proxy {
                proxy,
                target,
                answer,
            } => Self::Proxy {
                proxy,
                target,
                answer: clean(answer),
            },
            other @ (Self::Timeout { .. } | Self::Cancelled) => other,
        }
    }

    pub(crate) fn protocol(message: impl Into<String>) -> Self {
        Self::Protocol {
            message: message.into(),
        }
    }
}

/// Whether a proxy's status line (`HTTP/1.1 503 Service Unavailable`) is a 5xx.
pub(crate) fn proxy_status_is_server_error(status_line: &str) -> bool {
    status_line
        .split(' ')
        .nth(1)
        .is_some_and(|status| status.len() == 3 && status.starts_with('5'))
}

struct RetryAfter(Option<Duration>);

impl fmt::Display for RetryAfter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(after) => write!(f, " (retry after {after:?})"),
            None => Ok(()),
        }
    }
}

struct HttpStatus(Option<u16>);

impl fmt::Display for HttpStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(status) => write!(f, " (HTTP {status})"),
            None => Ok(()),
        }
    }
}

/// Replaces every occurrence of `secret` in `text` with `[redacted]`. Vendors sometimes echo
/// the key they refused; this keeps it out of errors and logs.
pub(crate) fn scrub_secret(text: &str, secret: Option<&str>) -> String {
    match secret {
        Some(secret) if !secret.is_empty() => text.replace(secret, "[redacted]"),
        _ => text.to_owned(),
    }
}
