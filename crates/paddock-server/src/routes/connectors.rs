//! Connectors (MCP servers on the host): list with status, add or edit (the token goes to
//! the key store, never the config), remove, enable, disable, test, the tools a server exposes.

use axum::Json;
use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{get, post};
use paddock_host::{ConnectorInfo, ConnectorTestReport, ConnectorToolInfo};

use crate::api::ConnectorRequest;
use crate::errors::{ApiError, ApiResult, ErrorBody};
use crate::extract::{ApiJson, ApiPath};
use crate::state::AppState;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/connectors", get(list))
        .route("/v1/connectors/{name}", get(show).put(put).delete(remove))
        .route("/v1/connectors/{name}/enable", post(enable))
        .route("/v1/connectors/{name}/disable", post(disable))
        .route("/v1/connectors/{name}/test", post(test))
        .route("/v1/connectors/{name}/tools", get(tools))
}

/// Every configured connector with its state.
#[utoipa::path(get, path = "/v1/connectors", tag = "connectors",
    responses((status = 200, body = Vec<ConnectorInfo>)))]
pub async fn list(State(state): State<AppState>) -> Json<Vec<ConnectorInfo>> {
    Json(state.host.connectors())
}

/// One connector.
#[utoipa::path(get, path = "/v1/connectors/{name}", tag = "connectors",
    responses((status = 200, body = ConnectorInfo), (status = 404, body = ErrorBody)))]
pub async fn show(
    State(state): State<AppState>,
    ApiPath(name): ApiPath<String>,
) -> ApiResult<Json<ConnectorInfo>> {
    Ok(Json(state.host.connector(&name)?))
}

/// Adds the connector, or replaces it; `token` (optional) is stored in the key store.
#[utoipa::path(put, path = "/v1/connectors/{name}", tag = "connectors",
    request_body = ConnectorRequest,
    responses((status = 200, body = ConnectorInfo), (status = 400, body = ErrorBody)))]
pub async fn put(
    State(state): State<AppState>,
    ApiPath(name): ApiPath<String>,
    ApiJson(request): ApiJson<ConnectorRequest>,
) -> ApiResult<Json<ConnectorInfo>> {
    if request.config.name != name {
        return Err(ApiError::bad_request(
            "invalid_request",
            format!(
                "the body names connector `{}` but the path `{name}`",
                request.config.name
            ),
        ));
    }
    Ok(Json(
        state
            .host
            .put_connector(request.config, request.token)
            .await?,
    ))
}

/// Removes the connector: its entry leaves the machine config (comments kept), its server
/// stops, and its token is deleted from the key store.
#[utoipa::path(delete, path = "/v1/connectors/{name}", tag = "connectors",
    responses((status = 204), (status = 404, body = ErrorBody)))]
pub async fn remove(
    State(state): State<AppState>,
    ApiPath(name): ApiPath<String>,
) -> ApiResult<StatusCode> {
    state.host.remove_connector(&name).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Turns the connector on.
#[utoipa::path(post, path = "/v1/connectors/{name}/enable", tag = "connectors",
    responses((status = 200, body = ConnectorInfo), (status = 404, body = ErrorBody)))]
pub async fn enable(
    State(state): State<AppState>,
    ApiPath(name): ApiPath<String>,
) -> ApiResult<Json<ConnectorInfo>> {
    Ok(Json(state.host.set_connector_enabled(&name, true).await?))
}

/// Turns the connector off (its tools leave new model requests).
#[utoipa::path(post, path = "/v1/connectors/{name}/disable", tag = "connectors",
    responses((status = 200, body = ConnectorInfo), (status = 404, body = ErrorBody)))]
pub async fn disable(
    State(state): State<AppState>,
    ApiPath(name): ApiPath<String>,
) -> ApiResult<Json<ConnectorInfo>> {
    Ok(Json(state.host.set_connector_enabled(&name, false).await?))
}

/// Starts the connector apart from the running one, lists its tools, stops it.
#[utoipa::path(post, path = "/v1/connectors/{name}/test", tag = "connectors",
    responses((status = 200, body = ConnectorTestReport), (status = 404, body = ErrorBody)))]
pub async fn test(
    State(state): State<AppState>,
    ApiPath(name): ApiPath<String>,
) -> ApiResult<Json<ConnectorTestReport>> {
    Ok(Json(state.host.test_connector(&name).await?))
}

/// The tools the connector's server exposes, with their names for the model and risks.
#[utoipa::path(get, path = "/v1/connectors/{name}/tools", tag = "connectors",
    responses((status = 200, body = Vec<ConnectorToolInfo>), (status = 404, body = ErrorBody),
        (status = 502, body = ErrorBody)))]
pub async fn tools(
    State(state): State<AppState>,
    ApiPath(name): ApiPath<String>,
) -> ApiResult<Json<Vec<ConnectorToolInfo>>> {
    Ok(Json(state.host.connector_tools(&name).await?))
}
