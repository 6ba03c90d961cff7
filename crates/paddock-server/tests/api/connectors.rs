//! The connectors resource over real TCP: add a stdio MCP server (the test server) with its
//! token, list it (with its entry, for editing), its tools, test, disable, remove (the token
//! deleted too); unknown names and bad entries refused; no answer carries the token.

#![allow(clippy::unwrap_used, reason = "test code: a panic is a failed test")]

use crate::common;

use common::TestServer;
use serde_json::json;

const TOKEN: &str = "tok-PLANTED-api-connector-0123456789";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connectors_are_added_listed_tested_disabled_and_removed_through_the_api() {
    // The file key store, in the test's own folder.
    let keys = common::temp_dir();
    // SAFETY: set before the server starts threads that read the environment.
    unsafe { std::env::set_var("XDG_STATE_HOME", keys.path()) };
    let server = TestServer::start_with_config("").await;
    std::fs::write(
        server.paths.config_file(),
        format!(
            "{}key_store = \"file\"\n",
            std::fs::read_to_string(server.paths.config_file())
                .unwrap()
                .replace("key_store = \"env\"\n", "")
        ),
    )
    .unwrap();
    let command = test_support::binaries::mcp_test_server();
    let entry = json!({
        "config": {
            "name": "tracker",
            "transport": "stdio",
            "command": command,
            "env": {"MCP_TEST_TOKEN": "{secret}"},
        },
        "token": TOKEN,
    });
    let put = |body: &serde_json::Value, name: &str| {
        server
            .client
            .put(server.url(&format!("/v1/connectors/{name}")))
            .bearer_auth(&server.token)
            .json(body)
    };
    let added = server.call(put(&entry, "tracker"), 200).await;
    assert_eq!(added["name"], "tracker");
    assert_eq!(
        added["sends"],
        json!([{"name": "MCP_TEST_TOKEN", "carries_token": true}])
    );
    // The entry comes back as the config holds it, for front ends to edit: `{secret}` where
    // the token goes, never the token.
    assert_eq!(
        added["config"],
        json!({
            "name": "tracker",
            "transport": "stdio",
            "enabled": true,
            "command": command,
            "env": {"MCP_TEST_TOKEN": "{secret}"},
        })
    );
    // The entry is in the machine config, the token is not.
    let file = std::fs::read_to_string(server.paths.config_file()).unwrap();
    assert!(file.contains("[[connectors]]") && file.contains("MCP_TEST_TOKEN = \"{secret}\""));
    assert!(!file.contains(TOKEN));

    let tools = server
        .call(server.get("/v1/connectors/tracker/tools"), 200)
        .await;
    let delete = tools
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "delete_item")
        .unwrap();
    assert_eq!(delete["model_name"], "mcp__tracker__delete_item");
    assert_eq!(delete["risk"], "destructive");
    let listed = server.call(server.get("/v1/connectors"), 200).await;
    assert_eq!(listed[0]["status"], "running");
    assert_eq!(listed[0]["tools"], 5);

    let report = server
        .call(
            server.post("/v1/connectors/tracker/test", &json!(null)),
            200,
        )
        .await;
    assert_eq!(report["ok"], true, "{report}");

    let disabled = server
        .call(
            server.post("/v1/connectors/tracker/disable", &json!(null)),
            200,
        )
        .await;
    assert_eq!(disabled["enabled"], false);
    assert_eq!(disabled["status"], "disabled");

    // Refusals: an unknown connector, a token written into the entry, a name mismatch.
    let missing = server.call(server.get("/v1/connectors/nope"), 404).await;
    assert_eq!(missing["code"], "connector_not_found");
    let mut pasted = entry.clone();
    pasted["config"]["env"]["MCP_TEST_TOKEN"] = json!(TOKEN);
    let refused = server.call(put(&pasted, "tracker"), 400).await;
    assert_eq!(refused["code"], "invalid_setting");
    assert!(
        refused["message"]
            .as_str()
            .unwrap()
            .contains("env.MCP_TEST_TOKEN")
    );
    assert!(!refused.to_string().contains(TOKEN));
    server.call(put(&entry, "other"), 400).await;

    for answer in [added, tools, listed, report, disabled] {
        assert!(!answer.to_string().contains(TOKEN));
    }

    // Removed while running (enabled again, its tools listed): gone from the list and the
    // config, its token gone from the key store; a second removal is a 404.
    server
        .call(
            server.post("/v1/connectors/tracker/enable", &json!(null)),
            200,
        )
        .await;
    server
        .call(server.get("/v1/connectors/tracker/tools"), 200)
        .await;
    let secrets = keys.path().join("paddock").join("secrets.toml");
    assert!(std::fs::read_to_string(&secrets).unwrap().contains(TOKEN));
    let remove = || {
        server
            .client
            .delete(server.url("/v1/connectors/tracker"))
            .bearer_auth(&server.token)
    };
    assert_eq!(server.call(remove(), 204).await, serde_json::Value::Null);
    assert_eq!(
        server.call(server.get("/v1/connectors"), 200).await,
        json!([])
    );
    let file = std::fs::read_to_string(server.paths.config_file()).unwrap();
    assert!(
        !file.contains("[[connectors]]") && !file.contains("tracker"),
        "{file}"
    );
    assert!(!std::fs::read_to_string(&secrets).unwrap().contains(TOKEN));
    let again = server.call(remove(), 404).await;
    assert_eq!(again["code"], "connector_not_found");
}
