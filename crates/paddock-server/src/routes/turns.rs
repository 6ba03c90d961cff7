//! Turns: send the user's next message, interrupt the running turn.

use axum::Json;
use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::post;
use protocol::Op;

use crate::api::{Accepted, TurnRequest};
use crate::errors::{ApiResult, ErrorBody};
use crate::extract::{ApiJson, ApiPath};
use crate::state::AppState;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/sessions/{id}/turns", post(send))
        .route("/v1/sessions/{id}/interrupt", post(interrupt))
}

/// Sends the user's next message; the turn's progress arrives as events.
#[utoipa::path(post, path = "/v1/sessions/{id}/turns", tag = "turns", request_body = TurnRequest,
    responses((status = 202, body = Accepted), (status = 409, body = ErrorBody)))]
pub async fn send(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
    ApiJson(request): ApiJson<TurnRequest>,
) -> ApiResult<(StatusCode, Json<Accepted>)> {
    let submission_id = state
        .host
        .submit_op(&id, Op::UserTurn { text: request.text })
        .await?;
    Ok((
        StatusCode::ACCEPTED,
        Json(Accepted {
            submission_id: Some(submission_id),
        }),
    ))
}

/// Cancels the running turn: the model stream, running calls and waiting approvals.
#[utoipa::path(post, path = "/v1/sessions/{id}/interrupt", tag = "turns",
    responses((status = 202, body = Accepted), (status = 409, body = ErrorBody)))]
pub async fn interrupt(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<(StatusCode, Json<Accepted>)> {
    let submission_id = state.host.submit_op(&id, Op::Interrupt).await?;
    Ok((
        StatusCode::ACCEPTED,
        Json(Accepted {
            submission_id: Some(submission_id),
        }),
    ))
}
