//! Models and keys: the providers Paddock knows (and which have a key), the key store's
//! status, storing (after testing), deleting and testing a key, storing a secret, testing the
//! model connection (never printing a key).

use axum::Json;
use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{get, post, put};
use paddock_host::{KeyCheck, KeySaved, KeyStatus, KeyStoreStatus, ModelCheck, ModelProvider};

use crate::api::{KeyRequest, SecretRequest};
use crate::errors::{ApiError, ApiResult, ErrorBody};
use crate::extract::{ApiJson, ApiPath};
use crate::state::AppState;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/models/providers", get(providers))
        .route("/v1/models/keys", get(key_status))
        .route(
            "/v1/models/keys/{provider}",
            put(store_key).delete(delete_key),
        )
        .route("/v1/models/keys/{provider}/test", post(test_key))
        .route("/v1/models/key-store", get(key_store))
        .route("/v1/models/test", post(test))
        .route("/v1/secrets/{name}", put(store_secret))
}

/// The providers Paddock knows, and whether the key store holds a key for each.
#[utoipa::path(get, path = "/v1/models/providers", tag = "models",
    responses((status = 200, body = Vec<ModelProvider>)))]
pub async fn providers(State(state): State<AppState>) -> ApiResult<Json<Vec<ModelProvider>>> {
    Ok(Json(state.host.model_providers().await?))
}

/// Where keys live and which providers have one (never a key).
#[utoipa::path(get, path = "/v1/models/keys", tag = "models",
    responses((status = 200, body = KeyStatus)))]
pub async fn key_status(State(state): State<AppState>) -> Json<KeyStatus> {
    Json(state.host.key_status().await)
}

/// The key store keys go to, and whether it can be used (a missing or locked keychain is
/// named with its fix; nothing falls back to another store).
#[utoipa::path(get, path = "/v1/models/key-store", tag = "models",
    responses((status = 200, body = KeyStoreStatus)))]
pub async fn key_store(State(state): State<AppState>) -> Json<KeyStoreStatus> {
    Json(state.host.key_store_status().await)
}

/// Tests a provider's key against its API (one authenticated GET: the model list, no tokens)
/// and stores it in the configured key store; a key the API refuses is not stored
/// (`key_refused`), and the `env` store is read-only. `"check": false` skips the test.
#[utoipa::path(put, path = "/v1/models/keys/{provider}", tag = "models",
    request_body = KeyRequest,
    responses((status = 200, body = KeySaved), (status = 400, body = ErrorBody),
        (status = 409, body = ErrorBody)))]
pub async fn store_key(
    State(state): State<AppState>,
    ApiPath(provider): ApiPath<String>,
    ApiJson(request): ApiJson<KeyRequest>,
) -> ApiResult<Json<KeySaved>> {
    let check = request.check.unwrap_or(true);
    Ok(Json(
        state
            .host
            .set_model_key(&provider, &request.key, check)
            .await?,
    ))
}

/// Removes a provider's key from the configured key store (`404 key_not_found` when it had
/// none).
#[utoipa::path(delete, path = "/v1/models/keys/{provider}", tag = "models",
    responses((status = 204), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn delete_key(
    State(state): State<AppState>,
    ApiPath(provider): ApiPath<String>,
) -> ApiResult<StatusCode> {
    if state.host.delete_model_key(&provider).await? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "key_not_found",
            format!("the key store holds no key for `{provider}`"),
        ))
    }
}

/// Tests the stored key of a provider against its API (one authenticated GET, no tokens).
#[utoipa::path(post, path = "/v1/models/keys/{provider}/test", tag = "models",
    responses((status = 200, body = KeyCheck), (status = 409, body = ErrorBody)))]
pub async fn test_key(
    State(state): State<AppState>,
    ApiPath(provider): ApiPath<String>,
) -> ApiResult<Json<KeyCheck>> {
    Ok(Json(state.host.test_model_key(&provider).await?))
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
    ApiPath(name): ApiPath<String>,
    ApiJson(request): ApiJson<SecretRequest>,
) -> ApiResult<StatusCode> {
    state.host.store_secret(&name, &request.value).await?;
    Ok(StatusCode::NO_CONTENT)
}
