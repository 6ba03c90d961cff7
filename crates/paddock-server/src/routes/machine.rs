//! The machine: whether it can build its wall (with the fix for each failed check), and the
//! server's health.

use axum::Json;
use axum::Router;
use axum::extract::State;
use axum::routing::get;
use protocol::MachineSandboxStatus;

use crate::api::{Health, StatusParams};
use crate::errors::ApiResult;
use crate::extract::ApiQuery;
use crate::state::AppState;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/health", get(health))
        .route("/v1/machine/sandbox", get(sandbox))
}

/// The server answers (and the token works).
#[utoipa::path(get, path = "/v1/health", tag = "machine",
    responses((status = 200, body = Health)))]
pub async fn health(State(state): State<AppState>) -> Json<Health> {
    Json(Health {
        status: "ok".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        state_dir: state.host.paths().state_dir.display().to_string(),
    })
}

/// The wall's checks (the configured one, or `?provider=`).
#[utoipa::path(get, path = "/v1/machine/sandbox", tag = "machine", params(StatusParams),
    responses((status = 200, body = MachineSandboxStatus)))]
pub async fn sandbox(
    State(state): State<AppState>,
    ApiQuery(params): ApiQuery<StatusParams>,
) -> ApiResult<Json<MachineSandboxStatus>> {
    Ok(Json(state.host.sandbox_status(params.provider).await?))
}
