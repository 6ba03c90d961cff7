//! The seam for the web UI: `paddock up` will serve an embedded build of `ui/` at `/`. The
//! server asks a [`StaticAssets`] for each non-API path; without one, `/` says what this is.
//! Static files need no token (the page then asks the user for it, or the desktop shell
//! injects it); they still pass the Host and Origin checks.

use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::errors::ApiError;
use crate::state::AppState;

/// One static file.
pub struct Asset {
    pub content_type: &'static str,
    pub bytes: std::borrow::Cow<'static, [u8]>,
}

/// Where the UI's files come from (an embedded bundle, a folder in development).
pub trait StaticAssets: Send + Sync {
    /// The file at `path` (`/`, `/assets/app.js`, …); `None` when there is none.
    fn get(&self, path: &str) -> Option<Asset>;
}

/// Answers every path outside `/v1`.
pub async fn fallback(State(state): State<AppState>, request: Request) -> Response {
    let path = request.uri().path();
    if path == "/v1" || path.starts_with("/v1/") {
        return ApiError::not_found(format!("no API route {} {path}", request.method()))
            .into_response();
    }
    if let Some(asset) = state.assets.as_ref().and_then(|a| a.get(path)) {
        return (
            [(header::CONTENT_TYPE, asset.content_type)],
            asset.bytes.into_owned(),
        )
            .into_response();
    }
    if path == "/" {
        return (
            StatusCode::OK,
            [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
            "Paddock API. Resources are under /v1 (OpenAPI: GET /v1/openapi.json); every \
             request needs `Authorization: Bearer <token>`.\n",
        )
            .into_response();
    }
    ApiError::not_found(format!("nothing at {path}")).into_response()
}
