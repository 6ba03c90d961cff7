//! Folder grants of a live session: add (or change access), revoke. A live sandbox is rebuilt
//! and the agent told its shell state was lost (`folder_granted`, `sandbox_recreated`).

use axum::Json;
use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::post;
use protocol::{FolderGrant, Op};

use crate::api::{Accepted, GrantRequest, RevokeRequest};
use crate::errors::{ApiResult, ErrorBody};
use crate::extract::{ApiJson, ApiPath};
use crate::state::AppState;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/sessions/{id}/folders", post(grant))
        .route("/v1/sessions/{id}/folders/revoke", post(revoke))
}

/// Grants a folder to a live session.
#[utoipa::path(post, path = "/v1/sessions/{id}/folders", tag = "grants",
    request_body = GrantRequest,
    responses((status = 202, body = Accepted), (status = 400, body = ErrorBody)))]
pub async fn grant(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
    ApiJson(request): ApiJson<GrantRequest>,
) -> ApiResult<(StatusCode, Json<Accepted>)> {
    let grant = FolderGrant {
        path: request.path,
        access: request.access,
    };
    let submission_id = state.host.submit_op(&id, Op::GrantFolder { grant }).await?;
    Ok((
        StatusCode::ACCEPTED,
        Json(Accepted {
            submission_id: Some(submission_id),
        }),
    ))
}

/// Takes a folder away from a live session.
#[utoipa::path(post, path = "/v1/sessions/{id}/folders/revoke", tag = "grants",
    request_body = RevokeRequest,
    responses((status = 202, body = Accepted), (status = 400, body = ErrorBody)))]
pub async fn revoke(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
    ApiJson(request): ApiJson<RevokeRequest>,
) -> ApiResult<(StatusCode, Json<Accepted>)> {
    let submission_id = state
        .host
        .submit_op(&id, Op::RevokeFolder { path: request.path })
        .await?;
    Ok((
        StatusCode::ACCEPTED,
        Json(Accepted {
            submission_id: Some(submission_id),
        }),
    ))
}
