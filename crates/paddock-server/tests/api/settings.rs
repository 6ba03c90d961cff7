//! What Settings ▸ Sandbox and Settings ▸ Models read and change through the API: the
//! catalog (profiles with their hosts, credential rows, secrets), machine-wide credential
//! rows and custom entries written to `config.toml` keeping the user's comments, each bad
//! field named, folder checks for the new-session picker, and the key store's status.

#![allow(clippy::unwrap_used, reason = "test code: a panic is a failed test")]

use crate::common;

use common::TestServer;
use serde_json::{Value, json};

const COMMENTED: &str = "# Set up by hand; keep this note.\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_catalog_lists_profiles_with_their_hosts_credential_rows_and_secrets() {
    let server = TestServer::start().await;
    let catalog = server
        .call(server.get("/v1/machine/sandbox/catalog"), 200)
        .await;
    let profiles: Vec<&str> = catalog["profiles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(profiles, ["strict", "standard", "open"]);
    let strict = &catalog["profiles"][0];
    let hosts: Vec<&str> = strict["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h.as_str().unwrap())
        .collect();
    assert!(hosts.contains(&"github.com:443"), "{hosts:?}");
    assert!(strict["addresses"].is_null());
    assert_eq!(strict["companions"][0]["host"], "github.com");
    let standard = catalog["profiles"][1]["hosts"].as_array().unwrap();
    assert!(
        standard.len() > hosts.len(),
        "standard includes strict's hosts and more"
    );
    assert!(
        catalog["profiles"][2]["addresses"]
            .as_str()
            .unwrap()
            .contains("ports 80 and 443")
    );
    let rows = catalog["credentials"].as_array().unwrap();
    assert_eq!(rows.len(), 4);
    assert!(
        rows.iter()
            .all(|r| r["enabled"] == false && r["builtin"] == true)
    );
    let github = catalog["secrets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "GITHUB_TOKEN")
        .unwrap();
    assert_eq!(github["offered"], false);
    // The env key store reads the variable of the secret's own name.
    let in_env = std::env::var_os("GITHUB_TOKEN").is_some_and(|v| !v.is_empty());
    assert_eq!(github["has_value"], in_env);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn credential_rows_and_custom_entries_are_written_keeping_comments() {
    let server = TestServer::start().await;
    let file = server.paths.config_file();
    let original = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, format!("{COMMENTED}{original}")).unwrap();

    // A built-in row switched on for every session: a setting like any other.
    let view = server
        .call(
            server.client.patch(server.url("/v1/settings")).bearer_auth(&server.token).json(
                &json!({"changes": {"sandbox.credentials": ["gh"], "sandbox.network_profile": "standard"}}),
            ),
            200,
        )
        .await;
    assert_eq!(view["values"]["sandbox.credentials"], json!(["gh"]));
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.starts_with(COMMENTED), "{text}");
    assert!(text.contains("credentials = [\"gh\"]"), "{text}");
    assert!(text.contains("network_profile = \"standard\""), "{text}");

    // A custom entry: each bad field named, nothing written.
    let put = |name: &str, body: Value| {
        server
            .client
            .put(server.url(&format!("/v1/settings/credentials/{name}")))
            .bearer_auth(&server.token)
            .json(&body)
    };
    let bad_host = server
        .call(
            put(
                "deploy",
                json!({"source": ".config/deploy", "hosts": ["api.deploy.example", "no spaces"]}),
            ),
            400,
        )
        .await;
    assert_eq!(bad_host["code"], "invalid_request");
    assert!(
        bad_host["message"]
            .as_str()
            .unwrap()
            .starts_with("hosts[1]:"),
        "{bad_host}"
    );
    let bad_source = server
        .call(
            put(
                "deploy",
                json!({"source": "/etc/shadow", "hosts": ["a.example"]}),
            ),
            400,
        )
        .await;
    assert!(
        bad_source["message"]
            .as_str()
            .unwrap()
            .starts_with("source:"),
        "{bad_source}"
    );
    let bad_name = server
        .call(
            put("ssh", json!({"source": ".x", "hosts": ["a.example"]})),
            400,
        )
        .await;
    assert!(
        bad_name["message"].as_str().unwrap().starts_with("name:"),
        "{bad_name}"
    );
    assert!(!std::fs::read_to_string(&file).unwrap().contains("deploy"));

    let rows = server
        .call(
            put(
                "deploy",
                json!({"source": ".config/deploy", "hosts": ["api.deploy.example:8443"]}),
            ),
            200,
        )
        .await;
    let custom = rows.as_array().unwrap().last().unwrap();
    assert_eq!(custom["name"], "deploy");
    assert_eq!(custom["builtin"], false);
    assert_eq!(custom["hosts"], json!(["api.deploy.example:8443"]));
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.starts_with(COMMENTED), "{text}");
    assert!(
        text.contains("[[sandbox_credentials]]\nname = \"deploy\""),
        "{text}"
    );

    // Removed: gone from the file and from every row.
    let rows = server
        .call(
            server
                .client
                .delete(server.url("/v1/settings/credentials/deploy"))
                .bearer_auth(&server.token),
            200,
        )
        .await;
    assert_eq!(rows.as_array().unwrap().len(), 4);
    assert!(!std::fs::read_to_string(&file).unwrap().contains("deploy"));
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn folder_checks_name_the_problem_and_the_key_store_reports_itself() {
    let server = TestServer::start().await;
    let folder = common::temp_dir();
    let canonical = folder.path().canonicalize().unwrap();
    let check = |path: String| {
        let url =
            reqwest::Url::parse_with_params(&server.url("/v1/machine/folder"), &[("path", path)])
                .unwrap();
        server.client.get(url).bearer_auth(&server.token)
    };
    let ok = server
        .call(check(folder.path().display().to_string()), 200)
        .await;
    assert_eq!(ok["canonical"], canonical.display().to_string());
    assert_eq!(ok["problem"], Value::Null);
    for (path, problem) in [
        ("relative/path".to_owned(), "is not an absolute path"),
        ("/no/such/folder".to_owned(), "does not exist"),
        (
            canonical.join("file.txt").display().to_string(),
            "is not a folder",
        ),
    ] {
        if problem == "is not a folder" {
            std::fs::write(&path, "x").unwrap();
        }
        let refused = server.call(check(path.clone()), 200).await;
        assert_eq!(refused["canonical"], Value::Null, "{path}");
        assert!(
            refused["problem"].as_str().unwrap().ends_with(problem),
            "{refused}"
        );
    }

    let store = server.call(server.get("/v1/models/key-store"), 200).await;
    assert_eq!(store["kind"], "env");
    assert_eq!(store["writable"], false);
    assert_eq!(store["problem"], Value::Null);
    server.stop().await;
}
