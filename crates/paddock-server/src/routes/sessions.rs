//! Sessions: create (with folders read-write or read-only), list, get, resume, close.

use axum::Json;
use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{get, post};
use paddock_host::{NewSession, SessionInfo};

use crate::api::ResumeRequest;
use crate::errors::{ApiResult, ErrorBody};
use crate::extract::{ApiJson, ApiPath};
use crate::state::AppState;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/sessions", get(list).post(create))
        .route("/v1/sessions/{id}", get(show))
        .route("/v1/sessions/{id}/resume", post(resume))
        .route("/v1/sessions/{id}/close", post(close))
}

/// Every stored session, most recently active first.
#[utoipa::path(get, path = "/v1/sessions", tag = "sessions",
    responses((status = 200, body = Vec<SessionInfo>)))]
pub async fn list(State(state): State<AppState>) -> ApiResult<Json<Vec<SessionInfo>>> {
    Ok(Json(state.host.list_sessions().await?))
}

/// Starts a session (no sandbox is built until a tool call needs one).
#[utoipa::path(post, path = "/v1/sessions", tag = "sessions", request_body = NewSession,
    responses((status = 201, body = SessionInfo), (status = 400, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "no model key (`model_key_missing`)")))]
pub async fn create(
    State(state): State<AppState>,
    ApiJson(request): ApiJson<NewSession>,
) -> ApiResult<(StatusCode, Json<SessionInfo>)> {
    let info = state.host.create_session(request).await?;
    if let Some(warning) = &info.warning {
        tracing::warn!(session = %info.id, "{warning}");
    }
    Ok((StatusCode::CREATED, Json(info)))
}

/// One session.
#[utoipa::path(get, path = "/v1/sessions/{id}", tag = "sessions",
    responses((status = 200, body = SessionInfo), (status = 404, body = ErrorBody)))]
pub async fn show(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<SessionInfo>> {
    Ok(Json(state.host.session(&id).await?))
}

/// Resumes a stored session in this server (its history, folders, settings, approvals).
#[utoipa::path(post, path = "/v1/sessions/{id}/resume", tag = "sessions",
    request_body = ResumeRequest,
    responses((status = 200, body = SessionInfo), (status = 409, body = ErrorBody)))]
pub async fn resume(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
    ApiJson(request): ApiJson<ResumeRequest>,
) -> ApiResult<Json<SessionInfo>> {
    Ok(Json(
        state.host.resume_session(&id, request.provider).await?,
    ))
}

/// Closes a running session: its turn is cancelled, its sandbox torn down; it stays stored.
#[utoipa::path(post, path = "/v1/sessions/{id}/close", tag = "sessions",
    responses((status = 200, body = SessionInfo), (status = 409, body = ErrorBody)))]
pub async fn close(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<SessionInfo>> {
    Ok(Json(state.host.close_session(&id).await?))
}
