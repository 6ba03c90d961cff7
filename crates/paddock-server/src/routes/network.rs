//! A session's network: the connections its sandbox refused, the rules the wall drafted from
//! them (OpenShell), and allowing a host for the session or the whole machine.

use axum::Json;
use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{get, post};
use paddock_host::DeniedConnection;
use protocol::DraftedRule;

use crate::api::{Accepted, AllowHostRequest, HostScope, RuleDecisionRequest};
use crate::errors::{ApiResult, ErrorBody};
use crate::extract::{ApiJson, ApiPath};
use crate::state::AppState;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/sessions/{id}/network/denials", get(denials))
        .route("/v1/sessions/{id}/network/rules", get(rules))
        .route(
            "/v1/sessions/{id}/network/rules/{rule_id}",
            post(decide_rule),
        )
        .route("/v1/sessions/{id}/network/allow", post(allow))
}

/// The connections the session's sandbox refused, newest first.
#[utoipa::path(get, path = "/v1/sessions/{id}/network/denials", tag = "network",
    responses((status = 200, body = Vec<DeniedConnection>), (status = 404, body = ErrorBody)))]
pub async fn denials(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<Vec<DeniedConnection>>> {
    Ok(Json(state.host.network_denials(&id).await?))
}

/// The rules the running sandbox drafted from denied connections (OpenShell only; other
/// walls answer `unsupported`).
#[utoipa::path(get, path = "/v1/sessions/{id}/network/rules", tag = "network",
    responses((status = 200, body = Vec<DraftedRule>), (status = 409, body = ErrorBody)))]
pub async fn rules(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<Vec<DraftedRule>>> {
    Ok(Json(state.host.drafted_rules(&id).await?))
}

/// Approves or rejects a drafted rule (recorded as `network_rule_decided`).
#[utoipa::path(post, path = "/v1/sessions/{id}/network/rules/{rule_id}", tag = "network",
    request_body = RuleDecisionRequest,
    responses((status = 200, body = DraftedRule), (status = 400, body = ErrorBody),
        (status = 409, body = ErrorBody)))]
pub async fn decide_rule(
    State(state): State<AppState>,
    ApiPath((id, rule_id)): ApiPath<(String, String)>,
    ApiJson(request): ApiJson<RuleDecisionRequest>,
) -> ApiResult<Json<DraftedRule>> {
    Ok(Json(
        state
            .host
            .decide_drafted_rule(&id, &rule_id, request.approve, request.reason)
            .await?,
    ))
}

/// Allows a host for the rest of the session, or on this machine (every new session, and this
/// one).
#[utoipa::path(post, path = "/v1/sessions/{id}/network/allow", tag = "network",
    request_body = AllowHostRequest,
    responses((status = 202, body = Accepted), (status = 400, body = ErrorBody)))]
pub async fn allow(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
    ApiJson(request): ApiJson<AllowHostRequest>,
) -> ApiResult<(StatusCode, Json<Accepted>)> {
    match request.scope {
        HostScope::Session => {
            state
                .host
                .allow_host_for_session(&id, &request.host)
                .await?
        }
        HostScope::Machine => {
            state
                .host
                .allow_host_on_machine(&request.host, Some(&id))
                .await?;
        }
    }
    Ok((
        StatusCode::ACCEPTED,
        Json(Accepted {
            submission_id: None,
        }),
    ))
}
