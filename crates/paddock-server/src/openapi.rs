//! The OpenAPI document, generated from the handlers' annotations and the types' schemas.
//! It is checked in (`openapi.json`); `tests/generated.rs` fails when it drifts.

use axum::Json;
use utoipa::OpenApi;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};

use crate::routes::{
    approvals, audit, connectors, events, grants, machine, models, network, sessions, settings,
    turns,
};

struct BearerToken;

impl utoipa::Modify for BearerToken {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "token",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
    }
}

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Paddock API",
        description = "Sessions of AI agents whose tools run in a sandbox. Every request needs \
                       `Authorization: Bearer <token>` (the token file is in the state folder); \
                       errors are `{code, message}`. Events: a WebSocket per session, see \
                       docs/api.md.",
        license(name = "Apache-2.0")
    ),
    security(("token" = [])),
    modifiers(&BearerToken),
    paths(
        sessions::list, sessions::create, sessions::show, sessions::resume, sessions::close,
        turns::send, turns::interrupt,
        grants::grant, grants::revoke,
        approvals::inbox, approvals::of_session, approvals::decide, approvals::standing,
        approvals::revoke,
        network::denials, network::rules, network::decide_rule, network::allow,
        settings::read, settings::update, settings::save_credential, settings::remove_credential,
        machine::health, machine::sandbox, machine::check, machine::setup_plan, machine::setup_apply,
        machine::catalog, machine::folder,
        audit::query, audit::show, audit::export, audit::verify,
        models::providers, models::key_status, models::key_store, models::store_key,
        models::delete_key, models::test_key, models::test, models::store_secret,
        connectors::list, connectors::show, connectors::put, connectors::remove, connectors::enable,
        connectors::disable, connectors::test, connectors::tools,
        events::ticket, events::socket,
    ),
    components(schemas(protocol::Event, protocol::EventMsg))
)]
pub struct ApiDoc;

/// The document as served and checked in.
pub fn json() -> String {
    ApiDoc::openapi()
        .to_pretty_json()
        .unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
}

/// `GET /v1/openapi.json`.
pub async fn document() -> Json<utoipa::openapi::OpenApi> {
    Json(ApiDoc::openapi())
}
