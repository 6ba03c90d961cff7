//! The machine's settings: read; change (validated as a whole, written back keeping the
//! user's comments and order; an error names the key and writes nothing); custom
//! credential-share entries added, changed and removed the same way.

use axum::Json;
use axum::Router;
use axum::extract::State;
use axum::routing::{get, put};
use paddock_host::{CredentialRow, CustomCredential, SettingsView};

use crate::api::{CredentialEntryRequest, SettingsUpdate};
use crate::errors::{ApiResult, ErrorBody};
use crate::extract::{ApiJson, ApiPath};
use crate::state::AppState;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/settings", get(read).patch(update))
        .route(
            "/v1/settings/credentials/{name}",
            put(save_credential).delete(remove_credential),
        )
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

/// Adds a custom credential-share entry, or changes the one of that name (each field checked;
/// the error names the field); answers every row.
#[utoipa::path(put, path = "/v1/settings/credentials/{name}", tag = "settings",
    request_body = CredentialEntryRequest,
    responses((status = 200, body = Vec<CredentialRow>), (status = 400, body = ErrorBody)))]
pub async fn save_credential(
    State(state): State<AppState>,
    ApiPath(name): ApiPath<String>,
    ApiJson(request): ApiJson<CredentialEntryRequest>,
) -> ApiResult<Json<Vec<CredentialRow>>> {
    let entry = CustomCredential {
        name,
        source: request.source,
        hosts: request.hosts,
    };
    Ok(Json(state.host.save_custom_credential(&entry)?))
}

/// Removes a custom credential-share entry (and turns it off for every session).
#[utoipa::path(delete, path = "/v1/settings/credentials/{name}", tag = "settings",
    responses((status = 200, body = Vec<CredentialRow>), (status = 400, body = ErrorBody)))]
pub async fn remove_credential(
    State(state): State<AppState>,
    ApiPath(name): ApiPath<String>,
) -> ApiResult<Json<Vec<CredentialRow>>> {
    Ok(Json(state.host.remove_custom_credential(&name)?))
}
