//! Turns a vendor's error (an HTTP status and JSON body, or an error event inside a stream)
//! into a [`ModelError`]. Both vendors and their imitators are handled here: Anthropic's
//! `{"type":"error","error":{"type","message"}}`, OpenAI's `{"error":{"message","type",
//! "code"}}` and the `{"error":"text"}` some local servers send.

use std::time::Duration;

use serde_json::Value;

use crate::error::ModelError;

/// The longest vendor message kept in an error.
const MAX_MESSAGE_CHARS: usize = 2000;

/// What a vendor said went wrong.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct VendorError {
    /// `authentication_error`, `invalid_request_error`, `overloaded_error`, …
    pub kind: Option<String>,
    /// OpenAI's `code`, e.g. `context_length_exceeded`.
    pub code: Option<String>,
    pub message: String,
}

impl VendorError {
    /// Reads an error object from the JSON value of a body or event; `None` if it has none.
    pub fn from_json(value: &Value) -> Option<Self> {
        let error = value.get("error")?;
        if let Some(text) = error.as_str() {
            return Some(Self {
                message: text.to_owned(),
                ..Self::default()
            });
        }
        let text = |key: &str| match error.get(key) {
            Some(Value::String(s)) => Some(s.clone()),
            Some(Value::Number(n)) => Some(n.to_string()),
            _ => None,
        };
        Some(Self {
            kind: text("type"),
            code: text("code"),
            message: text("message").unwrap_or_default(),
        })
    }

    /// Reads an error body; a body that is not a JSON error becomes the message itself.
    pub fn from_body(body: &str) -> Self {
        serde_json::from_str::<Value>(body)
            .ok()
            .and_then(|value| Self::from_json(&value))
            .unwrap_or_else(|| Self {
                message: body.trim().to_owned(),
                ..Self::default()
            })
    }

    /// `kind: message`, shortened to a sane length.
    fn describe(&self) -> String {
        let mut text = match (&self.kind, self.message.is_empty()) {
            (Some(kind), false) => format!("{kind}: {}", self.message),
            (Some(kind), true) => kind.clone(),
            (None, false) => self.message.clone(),
            (None, true) => "no error message".to_owned(),
        };
        if text.chars().count() > MAX_MESSAGE_CHARS {
            text = text.chars().take(MAX_MESSAGE_CHARS).collect::<String>() + "…";
        }
        text
    }

    fn is(&self, kind: &str) -> bool {
        self.kind.as_deref() == Some(kind) || self.code.as_deref() == Some(kind)
    }

    fn is_context_too_long(&self) -> bool {
        if self.is("context_length_exceeded") || self.is("request_too_large") {
            return true;
        }
        let message = self.message.to_ascii_lowercase();
        [
            "prompt is too long",
            "context length",
            "context window",
            "maximum context",
            "too many tokens",
            "input is too long",
        ]
        .iter()
        .any(|needle| message.contains(needle))
    }
}

/// Whether a response with this status may succeed if the request is sent again.
pub(crate) fn status_is_retryable(status: u16) -> bool {
    matches!(status, 408 | 429 | 500..=599)
}

/// The error for a non-success HTTP response.
pub(crate) fn from_status(status: u16, body: &str, retry_after: Option<Duration>) -> ModelError {
    let vendor = VendorError::from_body(body);
    let message = vendor.describe();
    match status {
        401 | 403 => ModelError::Auth { status, message },
        429 => ModelError::RateLimited {
            retry_after,
            message,
        },
        529 => ModelError::Overloaded { message },
        _ if vendor.is("overloaded_error") => ModelError::Overloaded { message },
        413 => ModelError::ContextTooLong { message },
        400..=499 if vendor.is_context_too_long() => ModelError::ContextTooLong { message },
        400..=499 => ModelError::BadRequest { status, message },
        _ => ModelError::Server {
            status: Some(status),
            message,
        },
    }
}

/// The error for an error event inside a stream that had started (no HTTP status).
pub(crate) fn from_stream_error(vendor: &VendorError) -> ModelError {
    let message = vendor.describe();
    if vendor.is("overloaded_error") {
        ModelError::Overloaded { message }
    } else if vendor.is("rate_limit_error") || vendor.is("rate_limit_exceeded") {
        ModelError::RateLimited {
            retry_after: None,
            message,
        }
    } else if vendor.is("authentication_error") || vendor.is("permission_error") {
        ModelError::Auth {
            status: 401,
            message,
        }
    } else if vendor.is_context_too_long() {
        ModelError::ContextTooLong { message }
    } else if vendor.is("invalid_request_error") {
        ModelError::BadRequest {
            status: 400,
            message,
        }
    } else {
        ModelError::Server {
            status: None,
            message,
        }
    }
}

#[cfg(test)]
#[path = "api_error_tests.rs"]
mod tests;
