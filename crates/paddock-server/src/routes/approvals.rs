//! Approvals: the inbox of every session's waiting calls (first answer wins), one session's,
//! answering one; standing approvals listed and revoked.

use axum::Json;
use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{delete, get, post};
use paddock_host::PendingApproval;
use protocol::{Op, StandingApproval};

use crate::api::{DecisionRequest, StandingScope};
use crate::errors::{ApiResult, ErrorBody};
use crate::extract::{ApiJson, ApiPath, ApiQuery};
use crate::state::AppState;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/approvals", get(inbox))
        .route("/v1/approvals/standing", get(standing))
        .route("/v1/approvals/standing/{approval_id}", delete(revoke))
        .route("/v1/sessions/{id}/approvals", get(of_session))
        .route("/v1/sessions/{id}/approvals/{call_id}", post(decide))
}

/// Every waiting call of every running session, oldest first.
#[utoipa::path(get, path = "/v1/approvals", tag = "approvals",
    responses((status = 200, body = Vec<PendingApproval>)))]
pub async fn inbox(State(state): State<AppState>) -> Json<Vec<PendingApproval>> {
    Json(state.host.pending_approvals(None))
}

/// One session's waiting calls.
#[utoipa::path(get, path = "/v1/sessions/{id}/approvals", tag = "approvals",
    responses((status = 200, body = Vec<PendingApproval>)))]
pub async fn of_session(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<Vec<PendingApproval>>> {
    state.host.session(&id).await?;
    Ok(Json(state.host.pending_approvals(Some(&id))))
}

/// Answers a waiting call: once, session, always, or deny with a reason. The first answer
/// wins; a second is `approval_not_pending`.
#[utoipa::path(post, path = "/v1/sessions/{id}/approvals/{call_id}", tag = "approvals",
    request_body = DecisionRequest,
    responses((status = 204), (status = 409, body = ErrorBody)))]
pub async fn decide(
    State(state): State<AppState>,
    ApiPath((id, call_id)): ApiPath<(String, String)>,
    ApiJson(request): ApiJson<DecisionRequest>,
) -> ApiResult<StatusCode> {
    let op = Op::Approval {
        call_id,
        decision: request.decision,
    };
    state.host.submit_op(&id, op).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// The machine's `always` approvals, or a session's `session` ones (`?session=ID`).
#[utoipa::path(get, path = "/v1/approvals/standing", tag = "approvals", params(StandingScope),
    responses((status = 200, body = Vec<StandingApproval>)))]
pub async fn standing(
    State(state): State<AppState>,
    ApiQuery(scope): ApiQuery<StandingScope>,
) -> ApiResult<Json<Vec<StandingApproval>>> {
    Ok(Json(
        state
            .host
            .standing_approvals(scope.session.as_deref())
            .await?,
    ))
}

/// Withdraws a standing approval; calls it covered ask again.
#[utoipa::path(delete, path = "/v1/approvals/standing/{approval_id}", tag = "approvals",
    params(StandingScope),
    responses((status = 200, body = StandingApproval), (status = 400, body = ErrorBody)))]
pub async fn revoke(
    State(state): State<AppState>,
    ApiPath(approval_id): ApiPath<String>,
    ApiQuery(scope): ApiQuery<StandingScope>,
) -> ApiResult<Json<StandingApproval>> {
    Ok(Json(
        state
            .host
            .revoke_standing_approval(&approval_id, scope.session.as_deref())
            .await?,
    ))
}
