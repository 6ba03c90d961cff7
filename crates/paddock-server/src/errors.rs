//! Every error the API returns: JSON `{"code", "message"}` with a status. Host errors are
//! mapped here, in one place; the server's own refusals (auth, exposure, bodies) too. A
//! message never carries a secret: host errors are written that way, and the server's own
//! never quote a header's value.

use axum::Json;
use axum::extract::rejection::{JsonRejection, PathRejection, QueryRejection};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use paddock_host::HostError;
use serde::{Deserialize, Serialize};

/// The body of every error response.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS, utoipa::ToSchema)]
pub struct ErrorBody {
    /// Stable: front ends branch on it (`session_not_found`, `unauthorized`, …).
    pub code: String,
    /// For people: what was wrong and, where there is one, the fix.
    pub message: String,
}

/// An error response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    pub status: StatusCode,
    pub body: ErrorBody,
}

impl ApiError {
    pub fn new(status: StatusCode, code: &str, message: impl Into<String>) -> Self {
        Self {
            status,
            body: ErrorBody {
                code: code.to_owned(),
                message: message.into(),
            },
        }
    }

    pub fn bad_request(code: &str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, code, message)
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, "not_found", message)
    }
}

/// The status of each host error code.
fn status_of(code: &str) -> StatusCode {
    match code {
        "invalid_request" | "invalid_setting" | "secret_refused" | "key_refused" => {
            StatusCode::BAD_REQUEST
        }
        "session_not_found" | "audit_row_not_found" | "connector_not_found" => {
            StatusCode::NOT_FOUND
        }
        "session_not_running"
        | "session_busy"
        | "approval_not_pending"
        | "unsupported"
        | "model_key_missing"
        | "key_store_failed"
        | "setup_changed" => StatusCode::CONFLICT,
        "model_unavailable" | "connector_failed" => StatusCode::BAD_GATEWAY,
        "sandbox_refused" | "store_busy" => StatusCode::SERVICE_UNAVAILABLE,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

impl From<HostError> for ApiError {
    fn from(error: HostError) -> Self {
        let code = error.code();
        let status = status_of(code);
        if status.is_server_error() {
            tracing::error!(code, "{error}");
        } else {
            tracing::debug!(code, "{error}");
        }
        Self::new(status, code, error.to_string())
    }
}

impl From<JsonRejection> for ApiError {
    fn from(rejection: JsonRejection) -> Self {
        match rejection {
            JsonRejection::MissingJsonContentType(_) => Self::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported_media_type",
                "send the body as JSON with `Content-Type: application/json`",
            ),
            JsonRejection::BytesRejection(_) => body_too_large(),
            // serde's message names the field and what was expected, never a value's text
            // beyond the type.
            other => Self::bad_request("invalid_json", other.body_text()),
        }
    }
}

impl From<QueryRejection> for ApiError {
    fn from(rejection: QueryRejection) -> Self {
        Self::bad_request("invalid_query", rejection.body_text())
    }
}

impl From<PathRejection> for ApiError {
    fn from(rejection: PathRejection) -> Self {
        match rejection {
            // A route matched without the parameters it declares: the server's own mistake.
            PathRejection::MissingPathParams(_) => Self::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal",
                rejection.body_text(),
            ),
            // axum's message names the parameter and the type it wanted.
            other => Self::bad_request("invalid_path", other.body_text()),
        }
    }
}

/// The refusal of a body over the limit.
pub fn body_too_large() -> ApiError {
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        "body_too_large",
        format!(
            "the request body is larger than {} bytes",
            crate::auth::BODY_LIMIT
        ),
    )
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, Json(self.body)).into_response()
    }
}

/// A handler's result.
pub type ApiResult<T> = Result<T, ApiError>;

#[cfg(test)]
#[path = "errors_tests.rs"]
mod tests;
