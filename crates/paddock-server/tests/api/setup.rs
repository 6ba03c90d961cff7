//! Setup through the API, as the desktop UI runs it: the plan (each step's exact change),
//! applying that plan by its fingerprint (the machine config edited keeping its comments,
//! backed up), a second plan with nothing left, and a stale plan refused.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is a failed test"
)]

use crate::common;

use common::TestServer;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_setup_plan_is_shown_applied_by_its_fingerprint_and_then_empty() {
    let server = TestServer::start().await;
    let plan = server
        .call(server.get("/v1/machine/setup?provider=direct"), 200)
        .await;
    assert_eq!(plan["provider"], "direct");
    assert_eq!(plan["selected"], false);
    let steps = plan["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 1, "{plan:#}");
    assert_eq!(steps[0]["id"], "select-provider");
    assert_eq!(steps[0]["action"]["kind"], "edit_file");
    let diff = steps[0]["action"]["diff"].as_str().unwrap();
    assert!(
        diff.contains("+[sandbox]\n+provider = \"direct\""),
        "{diff}"
    );

    let apply = |fingerprint: &serde_json::Value| {
        server.post(
            "/v1/machine/setup",
            &json!({"provider": "direct", "fingerprint": fingerprint}),
        )
    };
    let outcome = server.call(apply(&plan["fingerprint"]), 200).await;
    assert_eq!(
        outcome["applied"][0]["id"], "select-provider",
        "{outcome:#}"
    );
    assert!(outcome["applied"][0]["backup"].is_string());
    assert_eq!(outcome["after"]["selected"], true);
    assert_eq!(outcome["after"]["steps"], json!([]));
    let written = std::fs::read_to_string(server.paths.config_file()).unwrap();
    assert!(written.starts_with("# Test machine.\n"), "{written}");
    assert!(
        written.ends_with("[sandbox]\nprovider = \"direct\"\n"),
        "{written}"
    );

    let again = server
        .call(server.get("/v1/machine/setup?provider=direct"), 200)
        .await;
    assert_eq!(again["steps"], json!([]));
    let stale = server.call(apply(&plan["fingerprint"]), 409).await;
    assert_eq!(stale["code"], "setup_changed");
    let unknown = server
        .call(
            server.post(
                "/v1/machine/setup",
                &json!({"provider": "direct", "fingerprint": again["fingerprint"], "steps": ["nope"]}),
            ),
            400,
        )
        .await;
    assert_eq!(unknown["code"], "invalid_request", "{unknown}");
}
