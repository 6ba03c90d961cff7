//! Models and keys: the providers Paddock knows (and which have a key), storing a key or a
//! secret in the configured key store, testing the connection (never printing the key).

use axum::Json;
use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::{get, post, put};
use paddock_host::{ModelCheck, ModelProvider};

use crate::api::{KeyRequest, SecretRequest};
use crate::errors::{ApiResult, ErrorBody};
use crate::extract::ApiJson;
use crate::state::AppState;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/models/providers", get(providers))
        .route("/v1/models/keys/{provider}", put(store_key))
        .route("/v1/models/test", post(test))
        .route("/v1/secrets/{name}", put(store_secret))
}

/// The providers Paddock knows, and whether the key store holds a key for each.
#[utoipa::path(get, path = "/v1/models/providers", tag = "models",
    responses((status = 200, body = Vec<ModelProvider>)))]
pub async fn providers(State(state): State<AppState>) -> ApiResult<Json<Vec<ModelProvider>>> {
    Ok(Json(state.host.model_providers().await?))
}

/// Stores a provider's key in the configured key store (the `env` store is read-only).
#[utoipa::path(put, path = "/v1/models/keys/{provider}", tag = "models",
    request_body = KeyRequest,
    responses((status = 204), (status = 400, body = ErrorBody), (status = 500, body = ErrorBody)))]
pub async fn store_key(
    State(state): State<AppState>,
    Path(provider): Path<String>,
    ApiJson(request): ApiJson<KeyRequest>,
) -> ApiResult<StatusCode> {
    state.host.store_model_key(&provider, &request.key).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Tests the configured model with a one-token request.
#[utoipa::path(post, path = "/v1/models/test", tag = "models",
    responses((status = 200, body = ModelCheck)))]
pub async fn test(State(state): State<AppState>) -> Json<ModelCheck> {
    Json(state.host.test_model().await)
}

/// Stores the value of a secret offered to sessions (`sandbox.secrets`) in the key store.
#[utoipa::path(put, path = "/v1/secrets/{name}", tag = "models", request_body = SecretRequest,
    responses((status = 204), (status = 400, body = ErrorBody)))]
pub async fn store_secret(
    State(state): State<AppState>,
    Path(name): Path<String>,
    ApiJson(request): ApiJson<SecretRequest>,
) -> ApiResult<StatusCode> {
    state.host.store_secret(&name, &request.value).await?;
    Ok(StatusCode::NO_CONTENT)
}
