//! The proxy environment, honored: `HTTPS_PROXY` / `https_proxy` tunnel TLS end to end
//! through `TestConnectProxy` (which sees `CONNECT host:port` and TLS records, never the
//! key), `NO_PROXY` bypasses it, and a refusing proxy gives an error quoting its answer.
//! Each client half runs in a child process with its own environment (see
//! `child_process`); the parent owns the servers and inspects what they saw.

use model_client::{ModelError, Vendor, connect};
use pretty_assertions::assert_eq;
use test_support::model_server::{AcceptedConnection, FakeModelServer, TestConnectProxy};

use crate::child_process::{self, ChildTarget};
use crate::common::{self, KEY, assert_no_key};

/// A TLS server that requires the key and has one greeting scripted, and its CA file.
async fn tls_server() -> (FakeModelServer, tempfile::TempDir, std::path::PathBuf) {
    let server = FakeModelServer::start_tls().await.unwrap();
    server.require_api_key(KEY);
    server.push(common::greeting_reply());
    let (folder, ca) = common::ca_file(server.ca_pem().unwrap());
    (server, folder, ca)
}

fn target(server: &FakeModelServer, vendor: Vendor, ca: &std::path::Path) -> ChildTarget {
    ChildTarget {
        base_url: match vendor {
            Vendor::Anthropic => server.anthropic_base_url(),
            Vendor::OpenAiCompatible => server.openai_base_url(),
        },
        vendor,
        ca_file: Some(ca.to_owned()),
    }
}

/// The child half of the tests whose turn must succeed.
async fn greeting_in_child() {
    let target = child_process::target();
    let client = connect(target.vendor, &child_process::config(&target)).unwrap();
    common::assert_greeting_turn(client.as_ref()).await;
}

/// Runs the greeting turn of test `name` for `vendor` in a child process whose environment
/// `env` gives (from the proxy's URL); returns the server and the proxy to inspect.
async fn greet_through_proxy(
    name: &str,
    vendor: Vendor,
    env: impl FnOnce(String) -> Vec<(&'static str, String)>,
) -> (FakeModelServer, TestConnectProxy) {
    let (server, _folder, ca) = tls_server().await;
    let proxy = TestConnectProxy::start().await.unwrap();
    child_process::run_child(name, &target(&server, vendor, &ca), &env(proxy.url())).await;
    (server, proxy)
}

/// The proxy saw exactly one `CONNECT` to the server, without any credential of ours, and
/// only TLS records went through the tunnel; the server got the key over HTTP/2.
fn assert_tunneled_once(proxy: &TestConnectProxy, server: &FakeModelServer) {
    let attempts = proxy.attempts();
    assert_eq!(attempts.len(), 1, "{attempts:?}");
    let attempt = &attempts[0];
    assert_eq!(attempt.method, "CONNECT");
    assert_eq!(attempt.target, server.addr().to_string());
    assert_eq!(attempt.status, 200);
    for (name, value) in &attempt.headers {
        assert!(
            !matches!(name.as_str(), "authorization" | "x-api-key") && !value.contains(KEY),
            "the proxy was sent {name}: {value}"
        );
    }
    let tunneled = &attempt.tunneled_from_client;
    // A TLS handshake record (content type 22) opens the tunnel.
    assert_eq!(tunneled.first(), Some(&0x16), "not TLS: {tunneled:?}");
    assert!(
        !tunneled
            .windows(KEY.len())
            .any(|window| window == KEY.as_bytes()),
        "the key crossed the proxy in clear"
    );
    assert_eq!(
        server.connections(),
        vec![AcceptedConnection::Tls {
            alpn: Some("h2".to_owned())
        }]
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert!(requests[0].api_key_accepted);
}

#[tokio::test]
async fn https_proxy_tunnels_an_anthropic_turn_end_to_end() {
    if child_process::is_child() {
        return greeting_in_child().await;
    }
    let (server, proxy) = greet_through_proxy(
        "proxy::https_proxy_tunnels_an_anthropic_turn_end_to_end",
        Vendor::Anthropic,
        |url| vec![("HTTPS_PROXY", url)],
    )
    .await;
    assert_tunneled_once(&proxy, &server);
}

#[tokio::test]
async fn lower_case_https_proxy_tunnels_an_openai_turn_end_to_end() {
    if child_process::is_child() {
        return greeting_in_child().await;
    }
    let (server, proxy) = greet_through_proxy(
        "proxy::lower_case_https_proxy_tunnels_an_openai_turn_end_to_end",
        Vendor::OpenAiCompatible,
        |url| vec![("https_proxy", url)],
    )
    .await;
    assert_tunneled_once(&proxy, &server);
}

#[tokio::test]
async fn no_proxy_bypasses_the_proxy() {
    if child_process::is_child() {
        return greeting_in_child().await;
    }
    let (server, proxy) = greet_through_proxy(
        "proxy::no_proxy_bypasses_the_proxy",
        Vendor::Anthropic,
        |url| {
            vec![
                ("HTTPS_PROXY", url),
                ("NO_PROXY", "example.com,127.0.0.1".to_owned()),
            ]
        },
    )
    .await;
    assert_eq!(proxy.attempts(), vec![]);
    assert_eq!(server.request_count(), 1);
}

const PROXY_URL: &str = "MODEL_CLIENT_TEST_PROXY_URL";

#[tokio::test]
async fn a_refusing_proxy_gives_an_error_quoting_its_answer() {
    if child_process::is_child() {
        let target = child_process::target();
        let client = connect(target.vendor, &child_process::config(&target)).unwrap();
        let Err(error) = client
            .stream(common::request(), model_client::CancellationToken::new())
            .await
        else {
            panic!("the refusing proxy let the request through");
        };
        let proxy_url = std::env::var(PROXY_URL).unwrap();
        let ModelError::Proxy {
            proxy,
            target: tunnel_target,
            answer,
        } = &error
        else {
            panic!("expected a proxy refusal, got {error:?}");
        };
        assert_eq!(proxy, &proxy_url);
        assert_eq!(
            Some(tunnel_target.as_str()),
            target.base_url.strip_prefix("https://")
        );
        assert_eq!(answer, "HTTP/1.1 403 Forbidden");
        let text = error.to_string();
        assert!(
            text.contains(&format!("the proxy {proxy_url} refused"))
                && text.contains("`HTTP/1.1 403 Forbidden`"),
            "{text}"
        );
        assert!(!error.is_transient());
        assert_no_key(&error);
        return;
    }
    let (server, _folder, ca) = tls_server().await;
    let proxy = TestConnectProxy::start_refusing(403, "Forbidden")
        .await
        .unwrap();
    child_process::run_child(
        "proxy::a_refusing_proxy_gives_an_error_quoting_its_answer",
        &target(&server, Vendor::Anthropic, &ca),
        &[("HTTPS_PROXY", proxy.url()), (PROXY_URL, proxy.url())],
    )
    .await;
    // reqwest's CONNECT, then the one that reads the answer; no retries, no key.
    let attempts = proxy.attempts();
    assert_eq!(attempts.len(), 2, "{attempts:?}");
    for attempt in &attempts {
        assert_eq!(attempt.method, "CONNECT");
        assert_eq!(attempt.target, server.addr().to_string());
        assert_eq!(attempt.status, 403);
        assert!(
            attempt
                .headers
                .iter()
                .all(|(name, value)| name != "x-api-key"
                    && name != "authorization"
                    && !value.contains(KEY)),
            "{attempt:?}"
        );
    }
    assert_eq!(server.connections(), vec![]);
}

/// Everything the client logs at TRACE (its own events, and its dependencies' through the
/// `log` bridge: reqwest, hyper-util, h2, rustls) during a proxied HTTPS turn that is
/// retried after a vendor error quoting the key, then succeeds: the key never appears.
#[tokio::test]
async fn the_key_never_reaches_the_logs() {
    if child_process::is_child() {
        tracing_subscriber::fmt()
            .with_max_level(tracing::Level::TRACE)
            .with_writer(std::io::stderr)
            .with_ansi(false)
            .try_init()
            .unwrap();
        return greeting_in_child().await;
    }
    let server = FakeModelServer::start_tls().await.unwrap();
    server.require_api_key(KEY);
    server.push(test_support::model_server::Reply::error(
        500,
        "api_error",
        format!("internal error while checking key {KEY}"),
    ));
    server.push(common::greeting_reply());
    let (_folder, ca) = common::ca_file(server.ca_pem().unwrap());
    let proxy = TestConnectProxy::start().await.unwrap();
    let output = child_process::run_child(
        "proxy::the_key_never_reaches_the_logs",
        &target(&server, Vendor::OpenAiCompatible, &ca),
        &[("HTTPS_PROXY", proxy.url())],
    )
    .await;
    let logs = format!("{}{}", output.stdout, output.stderr);
    // The logs are real: the retry warning (with the scrubbed vendor message) and the
    // dependencies' TRACE lines are there.
    assert!(
        logs.contains("retrying") && logs.contains("internal error while checking key [redacted]"),
        "{logs}"
    );
    assert!(logs.contains("TRACE"), "{logs}");
    assert!(!logs.contains(KEY), "the key reached the logs:\n{logs}");
    assert_eq!(server.request_count(), 2);
}

const PROXY_SECRET: &str = "proxy-pass-93e1";

/// Credentials in the proxy URL go to the proxy (both `CONNECT`s) and nowhere else.
#[tokio::test]
async fn proxy_credentials_reach_the_proxy_but_not_the_error() {
    if child_process::is_child() {
        let target = child_process::target();
        let client = connect(target.vendor, &child_process::config(&target)).unwrap();
        let Err(error) = client
            .stream(common::request(), model_client::CancellationToken::new())
            .await
        else {
            panic!("the refusing proxy let the request through");
        };
        let ModelError::Proxy { proxy, answer, .. } = &error else {
            panic!("expected a proxy refusal, got {error:?}");
        };
        assert!(!proxy.contains("paddock-user"), "{proxy}");
        assert_eq!(answer, "HTTP/1.1 407 Proxy Authentication Required");
        let text = format!("{error} {error:?}");
        assert!(!text.contains(PROXY_SECRET), "{text}");
        assert_no_key(&error);
        return;
    }
    let (server, _folder, ca) = tls_server().await;
    let proxy = TestConnectProxy::start_refusing(407, "Proxy Authentication Required")
        .await
        .unwrap();
    let url = format!("http://paddock-user:{PROXY_SECRET}@{}", proxy.addr());
    child_process::run_child(
        "proxy::proxy_credentials_reach_the_proxy_but_not_the_error",
        &target(&server, Vendor::Anthropic, &ca),
        &[("HTTPS_PROXY", url)],
    )
    .await;
    let attempts = proxy.attempts();
    assert_eq!(attempts.len(), 2, "{attempts:?}");
    // base64("paddock-user:proxy-pass-93e1")
    let expected = "Basic cGFkZG9jay11c2VyOnByb3h5LXBhc3MtOTNlMQ==";
    for attempt in &attempts {
        let authorization = attempt
            .headers
            .iter()
            .find(|(name, _)| name == "proxy-authorization")
            .map(|(_, value)| value.as_str());
        assert_eq!(authorization, Some(expected), "{attempt:?}");
    }
}

/// A proxy that is not listening: a transient network error that names it.
#[tokio::test]
async fn an_unreachable_proxy_is_a_network_error_naming_it() {
    if child_process::is_child() {
        let target = child_process::target();
        let mut config = child_process::config(&target);
        config.retry.max_retries = 0;
        let client = connect(target.vendor, &config).unwrap();
        let Err(error) = client
            .stream(common::request(), model_client::CancellationToken::new())
            .await
        else {
            panic!("a request went through a proxy that does not exist");
        };
        let proxy_url = std::env::var(PROXY_URL).unwrap();
        let ModelError::Network { message } = &error else {
            panic!("expected a network error, got {error:?}");
        };
        assert!(
            message.contains(&format!("the proxy {proxy_url} did not answer")),
            "{message}"
        );
        assert!(error.is_transient());
        assert_no_key(&error);
        return;
    }
    let (server, _folder, ca) = tls_server().await;
    // A port that was just free: bind, note it, close.
    let closed = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap()
        .local_addr()
        .unwrap();
    let url = format!("http://{closed}");
    child_process::run_child(
        "proxy::an_unreachable_proxy_is_a_network_error_naming_it",
        &target(&server, Vendor::Anthropic, &ca),
        &[("HTTPS_PROXY", url.clone()), (PROXY_URL, url)],
    )
    .await;
    assert_eq!(server.connections(), vec![]);
}
