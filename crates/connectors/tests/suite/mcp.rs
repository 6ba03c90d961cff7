//! The MCP client against real MCP servers written for the tests (`test_support::mcp_server`):
//! one over stdio (a child process), one over streamable HTTP. Discovery, calls, errors,
//! crash and restart, change notifications, and where the token goes.

#![allow(clippy::unwrap_used, reason = "test code: a panic is a failed test")]

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use paddock_connectors::config::ConnectorConfig;
use paddock_connectors::supervisor::{Connector, Status, SupervisorOptions, TokenSource};
use paddock_connectors::{ConnectorError, Risk, Secret, TransportKind};
use serde_json::json;
use test_support::mcp_server::HttpMcpServer;
use tokio_util::sync::CancellationToken;

const TOKEN: &str = "tok-PLANTED-connector-0123456789";
const WAIT: Duration = Duration::from_secs(30);

fn stdio_config(token_env: bool) -> ConnectorConfig {
    let mut env = BTreeMap::new();
    if token_env {
        env.insert("MCP_TEST_TOKEN".to_owned(), "{secret}".to_owned());
    }
    ConnectorConfig {
        name: "tracker".into(),
        transport: TransportKind::Stdio,
        enabled: true,
        command: Some(
            test_support::binaries::mcp_test_server()
                .display()
                .to_string(),
        ),
        args: Vec::new(),
        env,
        url: None,
        headers: BTreeMap::new(),
        risk: BTreeMap::new(),
    }
}

fn http_config(url: &str) -> ConnectorConfig {
    ConnectorConfig {
        name: "docs".into(),
        transport: TransportKind::StreamableHttp,
        enabled: true,
        command: None,
        args: Vec::new(),
        env: BTreeMap::new(),
        url: Some(url.to_owned()),
        headers: BTreeMap::from([("Authorization".to_owned(), "Bearer {secret}".to_owned())]),
        risk: BTreeMap::new(),
    }
}

fn tokens() -> TokenSource {
    Arc::new(|_name: &str| Ok(Secret::new(TOKEN)))
}

fn options() -> SupervisorOptions {
    SupervisorOptions {
        backoff_base: Duration::from_millis(50),
        backoff_max: Duration::from_millis(200),
        ..SupervisorOptions::default()
    }
}

fn connector(config: ConnectorConfig) -> (Arc<Connector>, Arc<Mutex<Vec<String>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = Arc::clone(&seen);
    let on_token = Arc::new(move |s: &Secret| record.lock().unwrap().push(s.expose().to_owned()));
    (Connector::new(config, tokens(), on_token, options()), seen)
}

async fn until(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + WAIT;
    while !check() {
        assert!(tokio::time::Instant::now() < deadline, "waited for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn discovery_and_calls(connector: &Arc<Connector>) {
    connector.ensure_started().await.unwrap();
    assert_eq!(connector.status(), Status::Running);
    let tools = connector.tools();
    let names: Vec<&str> = tools.iter().map(|t| t.tool.name.as_str()).collect();
    assert_eq!(
        names,
        ["lookup", "delete_item", "whoami", "add_tool", "crash"]
    );
    let lookup = tools.iter().find(|t| t.tool.name == "lookup").unwrap();
    assert_eq!(lookup.claimed, Risk::Read);
    assert_eq!(
        lookup.risk,
        Risk::Write,
        "a read-only claim does not lower the risk"
    );
    let delete = tools.iter().find(|t| t.tool.name == "delete_item").unwrap();
    assert_eq!(delete.risk, Risk::Destructive);
    let model_name = lookup.model_name.clone().unwrap();
    assert_eq!(model_name, format!("mcp__{}__lookup", connector.name()));

    let cancel = CancellationToken::new();
    let found = connector
        .call("lookup", &json!({"query": "rust"}), &cancel)
        .await
        .unwrap();
    assert_eq!(found.text, "found: rust");
    assert!(!found.is_error);
    // A JSON-RPC error from the server, and a tool result marked as an error.
    let failed = connector
        .call("lookup", &json!({"query": "fail"}), &cancel)
        .await
        .unwrap_err();
    assert!(
        matches!(&failed, ConnectorError::ServerError { message, .. } if message.contains("the index is unavailable")),
        "{failed:?}"
    );
    let tool_error = connector
        .call("lookup", &json!({"query": "tool-error"}), &cancel)
        .await
        .unwrap();
    assert!(tool_error.is_error);
    assert_eq!(tool_error.text, "no entry matches");
    let unknown = connector
        .call("nope", &json!({}), &cancel)
        .await
        .unwrap_err();
    assert_eq!(unknown, ConnectorError::UnknownTool("nope".into()));

    // The server announces a new tool: the list refreshes without a restart.
    connector
        .call("add_tool", &json!({}), &cancel)
        .await
        .unwrap();
    until("the refreshed tool list", || {
        connector.tools().iter().any(|t| t.tool.name == "extra")
    })
    .await;
    let extra = connector.call("extra", &json!({}), &cancel).await.unwrap();
    assert_eq!(extra.text, "extra ran");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_server_discovery_calls_errors_and_change_notification() {
    let (connector, _) = connector(stdio_config(false));
    discovery_and_calls(&connector).await;
    connector.stop().await;
    assert_eq!(connector.status(), Status::Stopped);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_server_discovery_calls_errors_and_change_notification() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let server = HttpMcpServer::start().await.unwrap();
    let (connector, _) = connector(http_config(&server.url()));
    discovery_and_calls(&connector).await;
    connector.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashed_stdio_server_is_restarted_and_answers_again() {
    let (connector, _) = connector(stdio_config(false));
    connector.ensure_started().await.unwrap();
    let first = connector.pid().unwrap();
    let cancel = CancellationToken::new();
    let crashed = connector.call("crash", &json!({}), &cancel).await;
    assert!(crashed.is_err(), "{crashed:?}");
    until("the restart", || {
        connector.restarts() == 1 && connector.status() == Status::Running
    })
    .await;
    let second = connector.pid().unwrap();
    assert_ne!(first, second);
    // The old process is gone, the new one answers.
    assert!(
        !std::path::Path::new(&format!("/proc/{first}")).exists() || {
            let stat = std::fs::read_to_string(format!("/proc/{first}/stat")).unwrap_or_default();
            stat.contains(") Z ")
        }
    );
    let found = connector
        .call("lookup", &json!({"query": "again"}), &cancel)
        .await
        .unwrap();
    assert_eq!(found.text, "found: again");
    connector.stop().await;
    until("the child to exit", || {
        !std::path::Path::new(&format!("/proc/{second}/cmdline")).exists()
            || std::fs::read_to_string(format!("/proc/{second}/stat"))
                .unwrap_or_default()
                .contains(") Z ")
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_cannot_start_is_reported_with_why() {
    let mut config = stdio_config(false);
    config.command = Some("/nonexistent/mcp-server".into());
    let (connector, _) = connector(config);
    let err = connector.ensure_started().await.unwrap_err();
    assert!(
        err.to_string()
            .contains("`/nonexistent/mcp-server` could not be started"),
        "{err}"
    );
    assert!(matches!(connector.status(), Status::Failed { .. }));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_stdio_token_is_in_the_childs_environment_only() {
    // SAFETY: set before any thread of this test reads the environment.
    unsafe { std::env::set_var("ANTHROPIC_API_KEY", "sk-host-only-key") };
    let (connector, seen) = connector(stdio_config(true));
    connector.ensure_started().await.unwrap();
    let pid = connector.pid().unwrap();
    let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap();
    let environ = String::from_utf8_lossy(&environ);
    assert!(environ.contains(&format!("MCP_TEST_TOKEN={TOKEN}")));
    assert!(
        !environ.contains("ANTHROPIC_API_KEY"),
        "the host's other secrets stay out"
    );
    // The host was handed the token to register for redaction before it was used.
    assert_eq!(seen.lock().unwrap().as_slice(), [TOKEN.to_owned()]);
    // Not in the host's own environment, not in the connector's config or debug output.
    assert!(std::env::vars().all(|(_, v)| !v.contains(TOKEN)));
    assert!(!format!("{:?}", connector.config()).contains(TOKEN));
    connector.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_http_token_is_in_the_requests_headers_only() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let server = HttpMcpServer::start().await.unwrap();
    let (connector, _) = connector(http_config(&server.url()));
    connector.ensure_started().await.unwrap();
    let headers = server.headers();
    assert!(!headers.is_empty());
    for request in &headers {
        let auth: Vec<&str> = request
            .iter()
            .filter(|(n, _)| n == "authorization")
            .map(|(_, v)| v.as_str())
            .collect();
        assert_eq!(auth, [format!("Bearer {TOKEN}").as_str()], "{request:?}");
    }
    connector.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_token_is_refused_before_the_server_starts() {
    let seen = Arc::new(Mutex::new(Vec::<String>::new()));
    let record = Arc::clone(&seen);
    let none: TokenSource = Arc::new(|_name: &str| Ok(None));
    let connector = Connector::new(
        stdio_config(true),
        none,
        Arc::new(move |s: &Secret| record.lock().unwrap().push(s.expose().to_owned())),
        options(),
    );
    let err = connector.ensure_started().await.unwrap_err();
    assert_eq!(err, ConnectorError::TokenMissing);
    assert!(connector.pid().is_none());
}
