//! The OpenAPI document (`openapi.json`) and the TypeScript types of every payload
//! (`bindings/`) are generated from the code and checked in; this test regenerates both and
//! fails with a diff when they drift. Update them with:
//!
//! `PADDOCK_UPDATE_BINDINGS=1 cargo test -p paddock-server --test generated`
//! (or `cargo xtask codegen`).

#![allow(clippy::unwrap_used, reason = "test code: a panic is a failed test")]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use ts_rs::{Config, TS};

const UPDATE: &str = "PADDOCK_UPDATE_BINDINGS=1 cargo test -p paddock-server --test generated";

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every request and response body of the API, and the event stream's frames.
fn generate(dir: &Path) {
    use paddock_server::api::*;
    let config = Config::new().with_out_dir(dir).with_large_int("number");
    macro_rules! export {
        ($($ty:ty),* $(,)?) => { $( <$ty>::export_all(&config).unwrap(); )* };
    }
    export!(
        Health,
        TurnRequest,
        Accepted,
        ResumeRequest,
        GrantRequest,
        RevokeRequest,
        DecisionRequest,
        StandingScope,
        RuleDecisionRequest,
        HostScope,
        AllowHostRequest,
        SettingsUpdate,
        KeyRequest,
        SecretRequest,
        ConnectorRequest,
        StatusParams,
        Ticket,
        EventsParams,
        AuditParams,
        FolderParams,
        CredentialEntryRequest,
        Connection,
        paddock_server::errors::ErrorBody,
        paddock_host::NewSession,
        paddock_host::SessionInfo,
        paddock_host::SessionState,
        paddock_host::PendingApproval,
        paddock_host::DeniedConnection,
        paddock_host::ModelProvider,
        paddock_host::ModelCheck,
        paddock_host::KeyStatus,
        paddock_host::KeySaved,
        paddock_host::KeyCheck,
        paddock_host::ConnectorInfo,
        paddock_host::SentName,
        paddock_host::ConnectorToolInfo,
        paddock_host::ConnectorTestReport,
        paddock_host::SettingsView,
        paddock_host::SettingValue,
        paddock_host::SandboxCatalog,
        paddock_host::FolderCheck,
        paddock_host::KeyStoreStatus,
        paddock_host::CredentialRow,
        audit_store::Page,
        paddock_host::AuditEntry,
        paddock_host::SetupPlan,
        paddock_host::SetupRequest,
        paddock_host::SetupOutcome,
        paddock_host::SandboxCheck,
        audit_store::VerifyReport,
        protocol::Event,
        protocol::StandingApproval,
        protocol::DraftedRule,
        protocol::MachineSandboxStatus,
        protocol::ApprovalDecision,
    );
}

fn read_dir(dir: &Path) -> BTreeMap<String, String> {
    let mut files = BTreeMap::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "ts") {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            files.insert(name, std::fs::read_to_string(&path).unwrap());
        }
    }
    files
}

fn updating() -> bool {
    std::env::var_os("PADDOCK_UPDATE_BINDINGS").is_some()
}

#[test]
fn checked_in_typescript_bindings_match_the_types() {
    let fresh = tempfile::tempdir().unwrap();
    generate(fresh.path());
    let generated = read_dir(fresh.path());
    assert!(generated.contains_key("SessionInfo.ts") && generated.contains_key("Event.ts"));
    let dir = crate_dir().join("bindings");
    if updating() {
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for (name, text) in &generated {
            std::fs::write(dir.join(name), text).unwrap();
        }
        return;
    }
    let checked_in = read_dir(&dir);
    let mut problems = Vec::new();
    for (name, text) in &generated {
        match checked_in.get(name) {
            None => problems.push(format!("bindings/{name} is missing")),
            Some(old) if old != text => problems.push(format!("bindings/{name} is out of date")),
            Some(_) => {}
        }
    }
    for name in checked_in.keys() {
        if !generated.contains_key(name) {
            problems.push(format!("bindings/{name} is no longer generated"));
        }
    }
    assert!(
        problems.is_empty(),
        "the TypeScript bindings drifted:\n  {}\nregenerate them with:\n  {UPDATE}",
        problems.join("\n  ")
    );
}

#[test]
fn checked_in_openapi_document_matches_the_code() {
    let generated = paddock_server::openapi::json();
    let path = crate_dir().join("openapi.json");
    if updating() {
        std::fs::write(&path, format!("{generated}\n")).unwrap();
        return;
    }
    let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        checked_in == format!("{generated}\n"),
        "openapi.json is out of date; regenerate it with:\n  {UPDATE}"
    );
    let document: serde_json::Value = serde_json::from_str(&generated).unwrap();
    let paths = document["paths"].as_object().unwrap();
    for path in [
        "/v1/sessions",
        "/v1/sessions/{id}/turns",
        "/v1/sessions/{id}/folders",
        "/v1/approvals",
        "/v1/sessions/{id}/network/rules",
        "/v1/settings",
        "/v1/machine/sandbox",
        "/v1/machine/sandbox/check",
        "/v1/audit",
        "/v1/models/providers",
        "/v1/sessions/{id}/events",
    ] {
        assert!(paths.contains_key(path), "{path} missing from the document");
    }
}

/// Schemas of the OpenAPI document that have no TypeScript file of their own because ts-rs
/// writes them into another type's binding: (schema, the binding that carries it, a piece of
/// that binding's text that is the inlined schema).
const INLINED: &[(&str, &str, &str)] = &[
    // `#[serde(flatten)]` into `BrokenRow`: the problem's variants are part of its type.
    (
        "ChainProblem",
        "BrokenRow.ts",
        "\"problem\": \"row_missing\", expected: number",
    ),
];

/// Every schema a client can meet in the OpenAPI document has a TypeScript type: a binding of
/// its own, or a place in another binding listed in [`INLINED`] (and nothing stale is listed
/// there).
#[test]
fn every_openapi_schema_has_a_typescript_binding() {
    let document: serde_json::Value =
        serde_json::from_str(&paddock_server::openapi::json()).unwrap();
    let schemas = document["components"]["schemas"].as_object().unwrap();
    assert!(schemas.len() > 50, "{} schemas", schemas.len());
    let fresh = tempfile::tempdir().unwrap();
    generate(fresh.path());
    let bindings = read_dir(fresh.path());
    let mut problems = Vec::new();
    for name in schemas.keys() {
        let own = format!("{name}.ts");
        let inlined = INLINED.iter().find(|(schema, _, _)| schema == name);
        match (bindings.contains_key(&own), inlined) {
            (true, None) => {}
            (true, Some(_)) => problems.push(format!(
                "{name} has its own binding now: take it out of INLINED"
            )),
            (false, None) => problems.push(format!(
                "{name} is in openapi.json but has no TypeScript binding: add it to \
                 `generate` (or to INLINED with the binding that carries it)"
            )),
            (false, Some((_, carrier, text))) => match bindings.get(*carrier) {
                Some(binding) if binding.contains(text) => {}
                Some(binding) => problems.push(format!(
                    "{name} is said to be inlined in {carrier}, which does not carry it: \
                     {binding}"
                )),
                None => problems.push(format!("{name}: {carrier} is not generated")),
            },
        }
    }
    for (schema, _, _) in INLINED {
        if !schemas.contains_key(*schema) {
            problems.push(format!(
                "INLINED lists {schema}, which openapi.json no longer has"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
