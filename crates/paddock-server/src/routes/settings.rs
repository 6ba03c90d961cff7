//! The machine's settings: read; change (validated as a whole, written back keeping the
//! user's comments and order; an error names the key and writes nothing).

use axum::Json;
use axum::Router;
use axum::extract::State;
use axum::routing::get;
use paddock_host::SettingsView;

use crate::api::SettingsUpdate;
use crate::errors::{ApiResult, ErrorBody};
use crate::extract::ApiJson;
use crate::state::AppState;

pub fn routes() -> Router<AppState> {
    Router::new().route("/v1/settings", get(read).patch(update))
}

/// The settings in force and which the user's file sets.
#[utoipa::path(get, path = "/v1/settings", tag = "settings",
    responses((status = 200, body = SettingsView)))]
pub async fn read(State(state): State<AppState>) -> ApiResult<Json<SettingsView>> {
    Ok(Json(state.host.settings()?))
}

/// Changes settings; new sessions use them (running ones keep theirs).
#[utoipa::path(patch, path = "/v1/settings", tag = "settings", request_body = SettingsUpdate,
    responses((status = 200, body = SettingsView), (status = 400, body = ErrorBody)))]
pub async fn update(
    State(state): State<AppState>,
    ApiJson(request): ApiJson<SettingsUpdate>,
) -> ApiResult<Json<SettingsView>> {
    Ok(Json(
        state
            .host
            .update_settings(request.changes.into_iter().collect())
            .await?,
    ))
}
