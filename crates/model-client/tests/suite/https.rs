//! Both vendors over HTTPS against the fake server behind TLS: a trusted CA gives a full
//! streamed turn over HTTP/2; an untrusted CA or a certificate for another name is refused
//! once, with a typed error naming the host and never the key; a bad extra CA file is a
//! configuration error naming the file.

use model_client::anthropic::AnthropicClient;
use model_client::openai::OpenAiClient;
use model_client::{ClientConfig, ModelClient, ModelError, Vendor, connect};
use pretty_assertions::assert_eq;
use std::time::Duration;
use test_support::model_server::{AcceptedConnection, FakeModelServer};
use test_support::pki::TestCa;

use crate::child_process::{self, ChildTarget};
use crate::common::{self, KEY, assert_no_key};

/// A TLS server that requires the key and has one greeting scripted.
async fn tls_server() -> FakeModelServer {
    let server = FakeModelServer::start_tls().await.unwrap();
    server.require_api_key(KEY);
    server.push(common::greeting_reply());
    server
}

fn config_trusting(base_url: String, ca_file: &std::path::Path) -> ClientConfig {
    let mut config = common::config(base_url);
    config.extra_ca_file = Some(ca_file.to_owned());
    config
}

/// The one connection was TLS with ALPN `h2`, and the request arrived over HTTP/2 with the
/// right key.
fn assert_one_h2_request(server: &FakeModelServer) {
    assert_eq!(
        server.connections(),
        vec![AcceptedConnection::Tls {
            alpn: Some("h2".to_owned())
        }]
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].http_version, "HTTP/2.0");
    assert!(requests[0].api_key_sent && requests[0].api_key_accepted);
}

#[tokio::test]
async fn an_anthropic_turn_streams_over_https_on_http2() {
    let server = tls_server().await;
    let (_folder, ca) = common::ca_file(server.ca_pem().unwrap());
    assert!(
        server
            .anthropic_base_url()
            .starts_with("https://127.0.0.1:")
    );
    let client = AnthropicClient::new(&config_trusting(server.anthropic_base_url(), &ca)).unwrap();
    common::assert_greeting_turn(&client).await;
    assert_one_h2_request(&server);
    assert_eq!(server.requests()[0].path, "/v1/messages");
}

#[tokio::test]
async fn an_openai_turn_streams_over_https_on_http2() {
    let server = tls_server().await;
    let (_folder, ca) = common::ca_file(server.ca_pem().unwrap());
    let client = OpenAiClient::new(&config_trusting(server.openai_base_url(), &ca)).unwrap();
    common::assert_greeting_turn(&client).await;
    assert_one_h2_request(&server);
    assert_eq!(server.requests()[0].path, "/v1/chat/completions");
}

/// Sends one request that must fail before any HTTP exchange; returns the error.
async fn refused(client: &dyn ModelClient) -> ModelError {
    match client
        .stream(common::request(), model_client::CancellationToken::new())
        .await
    {
        Ok(_) => panic!("the request was accepted"),
        Err(error) => error,
    }
}

/// One TCP connection, its handshake aborted by the client, no HTTP request: the refusal
/// was not retried (the client's policy allows 3 retries).
async fn assert_refused_once(server: &FakeModelServer) {
    assert_eq!(server.connections().len(), 1, "the refusal was retried");
    let connections = server.settled_connections(Duration::from_secs(5)).await;
    assert!(
        matches!(&connections[..], [AcceptedConnection::TlsFailed { .. }]),
        "{connections:?}"
    );
    assert_eq!(server.request_count(), 0);
    assert_eq!(server.remaining_replies(), 1);
}

#[tokio::test]
async fn a_certificate_from_an_untrusted_ca_is_refused_once_naming_the_host() {
    let server = tls_server().await;
    // Trust a CA, just not the server's.
    let unrelated = TestCa::new("unrelated-ca");
    let (_folder, ca) = common::ca_file(unrelated.cert_pem());
    for vendor in [Vendor::Anthropic, Vendor::OpenAiCompatible] {
        let base_url = match vendor {
            Vendor::Anthropic => server.anthropic_base_url(),
            Vendor::OpenAiCompatible => server.openai_base_url(),
        };
        let client = connect(vendor, &config_trusting(base_url, &ca)).unwrap();
        let before = server.connections().len();
        let error = refused(client.as_ref()).await;
        let ModelError::Certificate { host, reason } = &error else {
            panic!("expected a certificate refusal, got {error:?}");
        };
        assert_eq!(host, "127.0.0.1");
        assert!(
            reason.contains("not signed by a trusted certificate authority"),
            "{reason}"
        );
        let text = error.to_string();
        assert!(
            text.contains("certificate of 127.0.0.1 was not trusted"),
            "{text}"
        );
        assert!(!error.is_transient());
        assert_no_key(&error);
        assert_eq!(server.connections().len(), before + 1, "retried: {error}");
    }
    let connections = server.settled_connections(Duration::from_secs(5)).await;
    assert!(
        connections
            .iter()
            .all(|c| matches!(c, AcceptedConnection::TlsFailed { .. })),
        "{connections:?}"
    );
    assert_eq!(server.request_count(), 0);
}

#[tokio::test]
async fn a_certificate_for_another_host_name_is_refused_once() {
    let server = FakeModelServer::start_tls_for_names(&["model-server.invalid"])
        .await
        .unwrap();
    server.require_api_key(KEY);
    server.push(common::greeting_reply());
    let (_folder, ca) = common::ca_file(server.ca_pem().unwrap());
    let client = AnthropicClient::new(&config_trusting(server.anthropic_base_url(), &ca)).unwrap();
    let error = refused(&client).await;
    let ModelError::Certificate { host, reason } = &error else {
        panic!("expected a certificate refusal, got {error:?}");
    };
    assert_eq!(host, "127.0.0.1");
    assert!(reason.contains("not valid for this host name"), "{reason}");
    assert!(reason.contains("model-server.invalid"), "{reason}");
    assert!(!error.is_transient());
    assert_no_key(&error);
    assert_refused_once(&server).await;
}

#[tokio::test]
async fn a_plain_http_client_gets_no_answer_from_the_tls_server() {
    // The scheme decides: `http://` to a TLS port fails as a network error, not silently.
    let server = tls_server().await;
    let base_url = server.anthropic_base_url().replace("https://", "http://");
    let mut config = common::config(base_url);
    config.retry.max_retries = 0;
    let client = AnthropicClient::new(&config).unwrap();
    let error = refused(&client).await;
    assert!(matches!(error, ModelError::Network { .. }), "{error:?}");
    assert_no_key(&error);
    assert_eq!(server.request_count(), 0);
}

#[test]
fn a_missing_extra_ca_file_is_a_config_error_naming_it() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("corporate-ca.pem");
    let error = AnthropicClient::new(&config_trusting("https://example.com".into(), &path))
        .map(|_| ())
        .unwrap_err();
    let ModelError::Config { message } = &error else {
        panic!("{error:?}");
    };
    assert!(message.contains(&path.display().to_string()), "{message}");
    assert!(message.contains("cannot be read"), "{message}");
}

#[test]
fn an_extra_ca_file_without_certificates_is_a_config_error_naming_it() {
    let ca = TestCa::new("some-ca");
    let key_only = ca.issue_server("server", &["localhost"]).key_pem;
    for (name, text) in [
        ("empty.pem", String::new()),
        ("prose.pem", "this is not a certificate\n".to_owned()),
        ("key-only.pem", key_only),
    ] {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join(name);
        std::fs::write(&path, text).unwrap();
        let error = OpenAiClient::new(&config_trusting("https://example.com/v1".into(), &path))
            .map(|_| ())
            .unwrap_err();
        let ModelError::Config { message } = &error else {
            panic!("{name}: {error:?}");
        };
        assert!(message.contains(&path.display().to_string()), "{message}");
        assert!(
            message.contains("holds no certificate"),
            "{name}: {message}"
        );
    }
}

#[test]
fn a_corrupt_certificate_in_the_extra_ca_file_is_a_config_error_naming_it() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("broken.pem");
    // Valid base64, but not a certificate.
    std::fs::write(
        &path,
        "-----BEGIN CERTIFICATE-----\naGVsbG8gd29ybGQ=\n-----END CERTIFICATE-----\n",
    )
    .unwrap();
    let error = AnthropicClient::new(&config_trusting("https://example.com".into(), &path))
        .map(|_| ())
        .unwrap_err();
    let ModelError::Config { message } = &error else {
        panic!("{error:?}");
    };
    assert!(message.contains(&path.display().to_string()), "{message}");
}

/// Without `extra_ca_file`, the system's roots decide, and on Linux `SSL_CERT_FILE`
/// replaces them: pointing it at the server's CA makes the server trusted.
#[tokio::test]
async fn ssl_cert_file_chooses_the_system_roots() {
    if child_process::is_child() {
        let target = child_process::target();
        let client = connect(target.vendor, &child_process::config(&target)).unwrap();
        common::assert_greeting_turn(client.as_ref()).await;
        return;
    }
    let server = tls_server().await;
    let (_folder, ca) = common::ca_file(server.ca_pem().unwrap());
    let target = ChildTarget {
        base_url: server.anthropic_base_url(),
        vendor: Vendor::Anthropic,
        ca_file: None,
    };
    child_process::run_child(
        "https::ssl_cert_file_chooses_the_system_roots",
        &target,
        &[("SSL_CERT_FILE", ca.display().to_string())],
    )
    .await;
    assert_one_h2_request(&server);
}
