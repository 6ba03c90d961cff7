//! The web UI at `/`: the server asks a [`StaticAssets`] for each path outside `/v1`
//! ([`EmbeddedUi`] is the build embedded by `paddock-ui-assets`); without one, `/` says what
//! this is. Static files need no token (the page then signs in with the token from the
//! address's fragment, or asks for it); they still pass the Host and Origin checks.
//!
//! Every file is served with its strong ETag (a matching `If-None-Match` is answered 304 with
//! no body), its cache policy (content-hashed files forever, the entry page revalidated), and
//! the UI's content security policy, the same one the desktop app's webview enforces.

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::errors::ApiError;
use crate::state::AppState;

/// One static file.
pub struct Asset {
    pub content_type: &'static str,
    pub bytes: std::borrow::Cow<'static, [u8]>,
    /// A strong validator (quoted), when the source has one.
    pub etag: Option<&'static str>,
    pub cache_control: &'static str,
}

/// Where the UI's files come from (an embedded bundle, a folder in development).
pub trait StaticAssets: Send + Sync {
    /// The file for `path` (`/`, `/assets/app.js`, `/sessions/abc` → the entry page, …);
    /// `None` when there is none.
    fn get(&self, path: &str) -> Option<Asset>;
}

/// The web UI embedded in this binary at build time (`ui/dist`).
pub struct EmbeddedUi;

impl StaticAssets for EmbeddedUi {
    fn get(&self, path: &str) -> Option<Asset> {
        paddock_ui_assets::resolve(path).map(|asset| Asset {
            content_type: asset.content_type,
            bytes: std::borrow::Cow::Borrowed(asset.body),
            etag: Some(asset.etag),
            cache_control: asset.cache_control(),
        })
    }
}

/// Whether an `If-None-Match` header value names `etag` (weak comparison, as RFC 9110
/// requires for `If-None-Match`; `*` matches).
fn not_modified(headers: &HeaderMap, etag: &str) -> bool {
    headers
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .map(str::trim)
        .any(|candidate| {
            candidate == "*" || candidate.strip_prefix("W/").unwrap_or(candidate) == etag
        })
}

/// Answers every path outside `/v1`.
pub async fn fallback(State(state): State<AppState>, request: Request) -> Response {
    let path = request.uri().path();
    if path == "/v1" || path.starts_with("/v1/") {
        return ApiError::not_found(format!("no API route {} {path}", request.method()))
            .into_response();
    }
    if let Some(asset) = state.assets.as_ref().and_then(|a| a.get(path)) {
        return serve(request.headers(), asset);
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

fn serve(request: &HeaderMap, asset: Asset) -> Response {
    let fresh = asset.etag.is_some_and(|etag| not_modified(request, etag));
    let mut response = if fresh {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        (
            [(header::CONTENT_TYPE, asset.content_type)],
            asset.bytes.into_owned(),
        )
            .into_response()
    };
    let headers = response.headers_mut();
    if let Some(etag) = asset.etag.and_then(|e| HeaderValue::from_str(e).ok()) {
        headers.insert(header::ETAG, etag);
    }
    headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static(asset.cache_control),
    );
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(paddock_ui_assets::CONTENT_SECURITY_POLICY),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    response
}
