//! One module per resource; each gives its routes, merged here into the API's router.

pub mod approvals;
pub mod audit;
pub mod connectors;
pub mod events;
pub mod grants;
pub mod machine;
pub mod models;
pub mod network;
pub mod sessions;
pub mod settings;
pub mod turns;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::get;

use crate::auth::{BODY_LIMIT, guard};
use crate::state::AppState;

async fn method_not_allowed(request: axum::extract::Request) -> crate::errors::ApiError {
    crate::errors::ApiError::new(
        http::StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        format!(
            "{} is not a method of {} (see GET /v1/openapi.json)",
            request.method(),
            request.uri().path()
        ),
    )
}

/// A handler that panics is answered `500 internal` in JSON, like every other error, and the
/// panic is logged; without this the connection would close with no answer at all.
async fn answer_panics(
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    caught(next.run(request)).await
}

async fn caught(
    handler: impl Future<Output = axum::response::Response>,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    use futures::FutureExt;
    match std::panic::AssertUnwindSafe(handler).catch_unwind().await {
        Ok(response) => response,
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            tracing::error!(panic = %what, "a request handler panicked");
            crate::errors::ApiError::new(
                http::StatusCode::INTERNAL_SERVER_ERROR,
                "internal",
                "the server failed while answering this request (its log has the cause)",
            )
            .into_response()
        }
    }
}

/// The whole API (and the static-asset seam), behind the auth and exposure guard.
pub fn router(state: AppState) -> Router {
    Router::new()
        .merge(sessions::routes())
        .merge(turns::routes())
        .merge(grants::routes())
        .merge(approvals::routes())
        .merge(network::routes())
        .merge(settings::routes())
        .merge(machine::routes())
        .merge(audit::routes())
        .merge(models::routes())
        .merge(connectors::routes())
        .merge(events::routes())
        .route("/v1/openapi.json", get(crate::openapi::document))
        .fallback(crate::assets::fallback)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(axum::middleware::from_fn(answer_panics))
        .layer(DefaultBodyLimit::max(BODY_LIMIT))
        .layer(axum::middleware::from_fn_with_state(state.clone(), guard))
        .with_state(state)
}

#[cfg(test)]
mod tests {
    use axum::response::IntoResponse;
    use http_body_util::BodyExt;

    use super::caught;

    #[tokio::test]
    async fn a_panicking_handler_is_answered_in_json_without_its_message() {
        let response = caught(async {
            panic!("the secret sk-ant-PLANTED must not reach the client");
        })
        .await;
        assert_eq!(response.status(), 500);
        let body = response.into_body().collect().await.unwrap().to_bytes();
        let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(body["code"], "internal");
        assert!(!body.to_string().contains("PLANTED"), "{body}");
    }

    #[tokio::test]
    async fn an_answer_passes_through_untouched() {
        let response = caught(async { (http::StatusCode::CREATED, "made").into_response() }).await;
        assert_eq!(response.status(), 201);
    }
}
