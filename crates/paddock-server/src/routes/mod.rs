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
        .layer(DefaultBodyLimit::max(BODY_LIMIT))
        .layer(axum::middleware::from_fn_with_state(state.clone(), guard))
        .with_state(state)
}
