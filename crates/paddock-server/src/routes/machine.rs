//! The machine: whether it can build its wall (with the fix for each failed check), a check
//! that builds a throwaway one and shows its attestation, the setup
//! that fixes it (a plan of exact changes, then applying that plan), what its sandbox settings
//! offer (profiles and their hosts, credential rows, secrets), whether a folder can be
//! granted, and the server's health.

use axum::Json;
use axum::Router;
use axum::extract::State;
use axum::routing::{get, post};
use paddock_host::{
    FolderCheck, SandboxCatalog, SandboxCheck, SetupOutcome, SetupPlan, SetupRequest,
};
use protocol::MachineSandboxStatus;

use crate::api::{FolderParams, Health, StatusParams};
use crate::errors::{ApiResult, ErrorBody};
use crate::extract::{ApiJson, ApiQuery};
use crate::state::AppState;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/health", get(health))
        .route("/v1/machine/sandbox", get(sandbox))
        .route("/v1/machine/sandbox/check", post(check))
        .route("/v1/machine/setup", get(setup_plan).post(setup_apply))
        .route("/v1/machine/sandbox/catalog", get(catalog))
        .route("/v1/machine/folder", get(folder))
}

/// The server answers (and the token works).
#[utoipa::path(get, path = "/v1/health", tag = "machine",
    responses((status = 200, body = Health)))]
pub async fn health(State(state): State<AppState>) -> Json<Health> {
    Json(Health {
        status: "ok".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        state_dir: state.host.paths().state_dir.display().to_string(),
    })
}

/// The wall's checks (the configured one, or `?provider=`).
#[utoipa::path(get, path = "/v1/machine/sandbox", tag = "machine", params(StatusParams),
    responses((status = 200, body = MachineSandboxStatus)))]
pub async fn sandbox(
    State(state): State<AppState>,
    ApiQuery(params): ApiQuery<StatusParams>,
) -> ApiResult<Json<MachineSandboxStatus>> {
    Ok(Json(state.host.sandbox_status(params.provider).await?))
}

/// Builds a throwaway sandbox with the wall (the configured one, or `?provider=`) on an empty
/// folder, reads its attestation from inside, runs one command through it and tears it down.
/// A wall that cannot be built is answered `200` with `passed: false` and the reason in
/// `refused`.
#[utoipa::path(post, path = "/v1/machine/sandbox/check", tag = "machine", params(StatusParams),
    responses((status = 200, body = SandboxCheck), (status = 400, body = ErrorBody)))]
pub async fn check(
    State(state): State<AppState>,
    ApiQuery(params): ApiQuery<StatusParams>,
) -> ApiResult<Json<SandboxCheck>> {
    Ok(Json(
        state
            .host
            .sandbox_check(params.provider, &|step: String| {
                tracing::debug!("sandbox check: {step}");
            })
            .await?,
    ))
}

/// What setup would change to make the wall (the configured one, or `?provider=`) work:
/// each step's exact diff or command, and which are left to the user (root). Nothing is
/// changed.
#[utoipa::path(get, path = "/v1/machine/setup", tag = "machine", params(StatusParams),
    responses((status = 200, body = SetupPlan)))]
pub async fn setup_plan(
    State(state): State<AppState>,
    ApiQuery(params): ApiQuery<StatusParams>,
) -> ApiResult<Json<SetupPlan>> {
    let provider = params.provider.unwrap_or(state.host.config().provider);
    Ok(Json(state.host.setup_plan(provider).await?))
}

/// Makes the plan's automatic steps (or those named): only when the plan is still the one
/// shown (its `fingerprint`), else `409 setup_changed`. Files are backed up first; nothing
/// is run as root.
#[utoipa::path(post, path = "/v1/machine/setup", tag = "machine", request_body = SetupRequest,
    responses((status = 200, body = SetupOutcome), (status = 400, body = ErrorBody),
        (status = 409, body = ErrorBody)))]
pub async fn setup_apply(
    State(state): State<AppState>,
    ApiJson(request): ApiJson<SetupRequest>,
) -> ApiResult<Json<SetupOutcome>> {
    Ok(Json(state.host.setup_apply(request).await?))
}

/// What Settings ▸ Sandbox offers: the network profiles with the hosts each includes, the
/// credential-share rows (built-in and custom, and which are on for every session), and the
/// secrets a session may be given.
#[utoipa::path(get, path = "/v1/machine/sandbox/catalog", tag = "machine",
    responses((status = 200, body = SandboxCatalog)))]
pub async fn catalog(State(state): State<AppState>) -> ApiResult<Json<SandboxCatalog>> {
    Ok(Json(state.host.sandbox_catalog().await?))
}

/// Whether a path can be granted to a session: an absolute path of an existing folder (the
/// answer names the folder it resolves to, or what is wrong).
#[utoipa::path(get, path = "/v1/machine/folder", tag = "machine", params(FolderParams),
    responses((status = 200, body = FolderCheck)))]
pub async fn folder(
    State(state): State<AppState>,
    ApiQuery(params): ApiQuery<FolderParams>,
) -> Json<FolderCheck> {
    Json(state.host.check_folder_path(&params.path))
}
