//! The TLS listener, driven by a raw rustls client: the CA it hands out is the one that
//! signed its certificate, ALPN picks the protocol, and every connection is recorded.

use std::sync::Arc;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tokio_rustls::rustls;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, ServerName};

use super::AcceptedConnection;
use crate::model_server::FakeModelServer;
use crate::pki::TestCa;

fn connector(ca_pem: &str, alpn: &[&[u8]]) -> TlsConnector {
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(ca_pem.as_bytes()) {
        roots.add(cert.unwrap()).unwrap();
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = alpn.iter().map(|protocol| protocol.to_vec()).collect();
    TlsConnector::from(Arc::new(config))
}

#[tokio::test]
async fn an_http1_only_client_is_served_http1_over_tls() {
    let server = FakeModelServer::start_tls().await.unwrap();
    assert!(server.openai_base_url().starts_with("https://127.0.0.1:"));
    let tcp = TcpStream::connect(server.addr()).await.unwrap();
    let name = ServerName::try_from("localhost").unwrap();
    let mut tls = connector(server.ca_pem().unwrap(), &[b"http/1.1"])
        .connect(name, tcp)
        .await
        .unwrap();
    assert_eq!(tls.get_ref().1.alpn_protocol(), Some(&b"http/1.1"[..]));
    tls.write_all(b"GET /elsewhere HTTP/1.1\r\nhost: fake\r\nconnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut response = String::new();
    // The server closes without a TLS close_notify; what arrived before is what counts.
    let _ = tls.read_to_string(&mut response).await;
    assert!(response.starts_with("HTTP/1.1 404"), "{response}");
    assert_eq!(
        server.connections(),
        vec![AcceptedConnection::Tls {
            alpn: Some("http/1.1".to_owned())
        }]
    );
    assert_eq!(server.requests()[0].http_version, "HTTP/1.1");
    assert_eq!(server.take_violations().len(), 1);
}

#[tokio::test]
async fn a_client_trusting_another_ca_fails_the_handshake_and_it_is_recorded() {
    let server = FakeModelServer::start_tls().await.unwrap();
    let other = TestCa::new("other-ca");
    let tcp = TcpStream::connect(server.addr()).await.unwrap();
    let name = ServerName::try_from("127.0.0.1").unwrap();
    let refused = connector(other.cert_pem(), &[b"h2"])
        .connect(name, tcp)
        .await;
    assert!(refused.is_err());
    let connections = server
        .settled_connections(std::time::Duration::from_secs(5))
        .await;
    assert!(
        matches!(&connections[..], [AcceptedConnection::TlsFailed { error }] if !error.is_empty()),
        "{connections:?}"
    );
    assert_eq!(server.request_count(), 0);
}

#[tokio::test]
async fn a_certificate_for_other_names_is_refused_for_localhost() {
    let server = FakeModelServer::start_tls_for_names(&["model-server.invalid"])
        .await
        .unwrap();
    let ca = server.ca_pem().unwrap().to_owned();
    let tcp = TcpStream::connect(server.addr()).await.unwrap();
    let refused = connector(&ca, &[b"h2"])
        .connect(ServerName::try_from("localhost").unwrap(), tcp)
        .await;
    assert!(refused.is_err());
    let tcp = TcpStream::connect(server.addr()).await.unwrap();
    let accepted = connector(&ca, &[b"h2"])
        .connect(ServerName::try_from("model-server.invalid").unwrap(), tcp)
        .await
        .unwrap();
    assert_eq!(accepted.get_ref().1.alpn_protocol(), Some(&b"h2"[..]));
}

#[tokio::test]
async fn a_plain_server_has_no_ca_and_records_plain_connections() {
    let server = FakeModelServer::start().await.unwrap();
    assert_eq!(server.ca_pem(), None);
    assert!(server.anthropic_base_url().starts_with("http://"));
    let mut tcp = TcpStream::connect(server.addr()).await.unwrap();
    tcp.write_all(b"GET /elsewhere HTTP/1.1\r\nhost: fake\r\nconnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut response = String::new();
    tcp.read_to_string(&mut response).await.unwrap();
    assert!(response.starts_with("HTTP/1.1 404"), "{response}");
    assert_eq!(server.connections(), vec![AcceptedConnection::Plain]);
    assert_eq!(server.take_violations().len(), 1);
}
