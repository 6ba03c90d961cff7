//! Model keys through the API, as the desktop UI manages them: the key store's status (never
//! a key), a key tested against the provider's API (the fake model server, one GET) before it
//! is stored in the owner-only file store, a refused key not stored, the stored key tested,
//! deleted, and a second delete answered `key_not_found`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is a failed test"
)]

use crate::common;

use common::{MODEL_KEY, TestServer};
use serde_json::{Value, json};

const STORED_KEY: &str = "sk-ant-PLANTED-stored-key-fedcba9876543210";
const WRONG_KEY: &str = "sk-ant-PLANTED-wrong-key-0011223344556677";

fn anthropic(status: &Value) -> Value {
    status["providers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["provider"] == "anthropic")
        .cloned()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_are_tested_stored_listed_without_the_key_and_deleted() {
    let server = TestServer::start().await;
    // The file store lives under XDG_STATE_HOME: this test's own (nextest: one process each).
    let state = server.root.path().join("xdg-state");
    // SAFETY: the variable is read by the key store on blocking threads started later; no
    // thread reads the environment while it is set.
    unsafe { std::env::set_var("XDG_STATE_HOME", &state) };
    server.model.require_api_key(STORED_KEY);
    let mut seen = String::new();
    let settings = server
        .client
        .patch(server.url("/v1/settings"))
        .bearer_auth(&server.token)
        .json(&json!({"changes": {"models.key_store": "file"}}));
    server.call(settings, 200).await;

    let before = server.call(server.get("/v1/models/keys"), 200).await;
    assert_eq!(before["store"], "file");
    assert_eq!(before["usable"], true);
    assert_eq!(anthropic(&before)["present"], false);
    assert_eq!(anthropic(&before)["configured"], true);

    let put = |key: &str| {
        server
            .client
            .put(server.url("/v1/models/keys/anthropic"))
            .bearer_auth(&server.token)
            .json(&json!({ "key": key }))
    };
    let refused = server.call(put(WRONG_KEY), 400).await;
    assert_eq!(refused["code"], "key_refused", "{refused}");
    seen.push_str(&refused.to_string());
    let after_refusal = server.call(server.get("/v1/models/keys"), 200).await;
    assert_eq!(
        anthropic(&after_refusal)["present"],
        false,
        "a refused key is not stored"
    );

    let saved = server.call(put(STORED_KEY), 200).await;
    assert_eq!(saved["provider"], "anthropic");
    assert_eq!(saved["check"]["ok"], true, "{saved}");
    seen.push_str(&saved.to_string());
    let file = state.join("paddock/secrets.toml");
    assert!(std::fs::read_to_string(&file).unwrap().contains(STORED_KEY));

    let status = server.call(server.get("/v1/models/keys"), 200).await;
    assert_eq!(anthropic(&status)["present"], true);
    seen.push_str(&status.to_string());
    let tested = server
        .call(
            server.post("/v1/models/keys/anthropic/test", &json!({})),
            200,
        )
        .await;
    assert_eq!(tested["ok"], true, "{tested}");
    seen.push_str(&tested.to_string());
    let gets: Vec<bool> = server
        .model
        .requests()
        .iter()
        .filter(|r| r.method == "GET" && r.path == "/v1/models")
        .map(|r| r.api_key_accepted)
        .collect();
    assert_eq!(gets, [false, true, true], "refused, stored, tested");

    let delete = || {
        server
            .client
            .delete(server.url("/v1/models/keys/anthropic"))
            .bearer_auth(&server.token)
    };
    server.call(delete(), 204).await;
    let gone = server.call(delete(), 404).await;
    assert_eq!(gone["code"], "key_not_found");
    assert!(!std::fs::read_to_string(&file).unwrap().contains(STORED_KEY));
    let unknown = server
        .call(server.post("/v1/models/keys/nope/test", &json!({})), 400)
        .await;
    assert_eq!(unknown["code"], "invalid_request", "{unknown}");

    for key in [STORED_KEY, WRONG_KEY, MODEL_KEY] {
        assert!(!seen.contains(key), "an answer held a key: {seen}");
    }
}
