//! TLS on a non-loopback address: the server with a self-signed certificate (generated here)
//! on every address; a rustls client that trusts the certificate completes the handshake and
//! makes an authenticated request and a WebSocket; a client that does not trust it, and a
//! plain-HTTP request to the TLS port, get nothing.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is a failed test"
)]

use crate::common;

use std::net::SocketAddr;
use std::sync::Arc;

use common::{TestServer, temp_dir};
use futures::StreamExt;
use paddock_server::{ServerConfig, TlsFiles};
use protocol::{Event, EventMsg};
use rustls::pki_types::{CertificateDer, ServerName};
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tokio_rustls::client::TlsStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::protocol::Message;

const NAME: &str = "paddock.test";

/// A self-signed certificate for [`NAME`], written as PEM files; returns its DER form.
fn self_signed(dir: &std::path::Path) -> (TlsFiles, CertificateDer<'static>) {
    let issued = rcgen::generate_simple_self_signed(vec![NAME.to_owned()]).unwrap();
    let files = TlsFiles {
        cert: dir.join("cert.pem"),
        key: dir.join("key.pem"),
    };
    std::fs::write(&files.cert, issued.cert.pem()).unwrap();
    std::fs::write(&files.key, issued.signing_key.serialize_pem()).unwrap();
    (files, issued.cert.der().clone())
}

/// A rustls client trusting `trusted` only (nothing, when `None`).
fn connector(trusted: Option<&CertificateDer<'static>>) -> TlsConnector {
    let mut roots = rustls::RootCertStore::empty();
    if let Some(cert) = trusted {
        roots.add(cert.clone()).unwrap();
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    TlsConnector::from(Arc::new(config))
}

async fn handshake(
    addr: SocketAddr,
    connector: &TlsConnector,
) -> std::io::Result<TlsStream<TcpStream>> {
    let tcp = TcpStream::connect(addr).await.unwrap();
    connector
        .connect(ServerName::try_from(NAME).unwrap(), tcp)
        .await
}

/// Everything the peer sends until it closes (or the connection fails).
async fn read_all(mut stream: impl AsyncRead + Unpin) -> Vec<u8> {
    let mut bytes = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        match tokio::time::timeout(common::WAIT, stream.read(&mut buf)).await {
            Ok(Ok(n)) if n > 0 => bytes.extend_from_slice(&buf[..n]),
            _ => return bytes,
        }
    }
}

/// One HTTP/1.1 request over `stream`; returns the status and the body.
async fn request(
    mut stream: impl AsyncRead + AsyncWrite + Unpin,
    port: u16,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: Option<&Value>,
) -> (u16, String) {
    let body = body.map(Value::to_string).unwrap_or_default();
    let auth = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {NAME}:{port}\r\n{auth}Content-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.flush().await.unwrap();
    let response = String::from_utf8(read_all(stream).await).unwrap();
    let status = response
        .strip_prefix("HTTP/1.1 ")
        .and_then(|rest| rest.get(..3))
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP response: {response:?}"));
    let body = response
        .split_once("\r\n\r\n")
        .map(|(_, body)| body.to_owned())
        .unwrap_or_default();
    (status, body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tls_server_on_every_address_serves_only_clients_that_trust_its_certificate() {
    common::set_model_key();
    let pki = temp_dir();
    let (files, cert) = self_signed(pki.path());
    let mut config = ServerConfig::loopback(0);
    config.listen = "0.0.0.0:0".parse().unwrap();
    config.names = vec![NAME.to_owned()];
    config.tls = Some(files);
    let server = TestServer::start_serving("", config).await;
    assert!(server.base.starts_with("https://"), "{}", server.base);
    let port = server.addr.port();
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let trusting = connector(Some(&cert));

    // A client that trusts the certificate: refused without the token, served with it.
    let stream = handshake(addr, &trusting).await.unwrap();
    let (status, _) = request(stream, port, "GET", "/v1/sessions", None, None).await;
    assert_eq!(status, 401);
    let stream = handshake(addr, &trusting).await.unwrap();
    let (status, body) = request(
        stream,
        port,
        "GET",
        "/v1/sessions",
        Some(&server.token),
        None,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let work = temp_dir();
    let work_path = work.path().canonicalize().unwrap();
    let stream = handshake(addr, &trusting).await.unwrap();
    let (status, body) = request(
        stream,
        port,
        "POST",
        "/v1/sessions",
        Some(&server.token),
        Some(&json!({"folders": [{"path": work_path, "access": "read_write"}]})),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    let created: Value = serde_json::from_str(&body).unwrap();
    let session = created["id"].as_str().unwrap();

    // The session's events over a WebSocket inside TLS.
    let stream = handshake(addr, &trusting).await.unwrap();
    let mut ws_request = format!("wss://{NAME}:{port}/v1/sessions/{session}/events?after=0")
        .into_client_request()
        .unwrap();
    ws_request.headers_mut().insert(
        "Authorization",
        format!("Bearer {}", server.token).parse().unwrap(),
    );
    let (mut socket, _) = tokio_tungstenite::client_async(ws_request, stream)
        .await
        .unwrap();
    let first = loop {
        match tokio::time::timeout(common::WAIT, socket.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap()
        {
            Message::Text(text) => break serde_json::from_str::<Event>(&text).unwrap(),
            _ => continue,
        }
    };
    assert!(
        matches!(first.msg, EventMsg::SessionCreated { .. }),
        "{first:?}"
    );

    // A client that does not trust the certificate fails the handshake.
    let refused = handshake(addr, &connector(None)).await.unwrap_err();
    assert!(
        refused.to_string().contains("UnknownIssuer"),
        "refused for the certificate: {refused}"
    );
    // Another self-signed certificate for the same name is not this one.
    let other = temp_dir();
    let (_, other_cert) = self_signed(other.path());
    let refused = handshake(addr, &connector(Some(&other_cert)))
        .await
        .unwrap_err();
    assert!(
        refused.to_string().contains("invalid peer certificate"),
        "{refused}"
    );

    // Plain HTTP to the TLS port gets no HTTP answer.
    let mut plain = TcpStream::connect(addr).await.unwrap();
    plain
        .write_all(
            format!(
                "GET /v1/sessions HTTP/1.1\r\nHost: {NAME}:{port}\r\nAuthorization: Bearer {}\r\n\r\n",
                server.token
            )
            .as_bytes(),
        )
        .await
        .unwrap();
    let answer = read_all(plain).await;
    assert!(
        !answer.starts_with(b"HTTP/"),
        "plain HTTP was answered: {:?}",
        String::from_utf8_lossy(&answer)
    );
    assert!(
        !String::from_utf8_lossy(&answer).contains("session"),
        "nothing of the API crossed in clear"
    );
    drop(socket);
    server.stop().await;
}
