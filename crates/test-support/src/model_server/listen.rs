//! Accepting connections: plain HTTP, or TLS with a per-server CA. Either way hyper-util's
//! `auto` builder serves HTTP/2 when the client speaks it (ALPN `h2` under TLS) and HTTP/1.1
//! otherwise. Every accepted connection is recorded, with its TLS handshake's outcome.

use std::sync::Arc;

use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_util::sync::CancellationToken;

use super::{Shared, serve};
use crate::pki::TestCa;

/// One TCP connection the server accepted, in accept order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AcceptedConnection {
    /// A plain-HTTP server's connection.
    Plain,
    /// The TLS handshake has not finished (or the client left before finishing it).
    TlsHandshaking,
    /// The handshake completed; `alpn` is the protocol both sides agreed on (`h2`,
    /// `http/1.1`), `None` when the client offered none.
    Tls { alpn: Option<String> },
    /// The handshake failed (an untrusting client aborts it with an alert).
    TlsFailed { error: String },
}

impl AcceptedConnection {
    /// The negotiated ALPN protocol of a completed TLS handshake.
    pub fn alpn(&self) -> Option<&str> {
        match self {
            Self::Tls { alpn } => alpn.as_deref(),
            _ => None,
        }
    }
}

/// A TLS server identity: the acceptor and the CA a client must trust.
pub(super) struct TlsIdentity {
    pub(super) acceptor: TlsAcceptor,
    pub(super) ca_pem: String,
}

impl TlsIdentity {
    /// A fresh CA and a server certificate valid for exactly `names`; ALPN `h2` then
    /// `http/1.1`.
    pub(super) fn generate(names: &[&str]) -> std::io::Result<Self> {
        let ca = TestCa::new("paddock-test-model-ca");
        let issued = ca.issue_server("fake-model-server", names);
        let invalid = |what: &str, error: &dyn std::fmt::Display| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("FakeModelServer TLS ({what}): {error}"),
            )
        };
        let chain = CertificateDer::pem_slice_iter(issued.cert_pem.as_bytes())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| invalid("certificate", &e))?;
        let key = PrivateKeyDer::from_pem_slice(issued.key_pem.as_bytes())
            .map_err(|e| invalid("key", &e))?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| invalid("protocol versions", &e))?
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .map_err(|e| invalid("certificate", &e))?;
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        Ok(Self {
            acceptor: TlsAcceptor::from(Arc::new(config)),
            ca_pem: ca.cert_pem().to_owned(),
        })
    }
}

pub(super) async fn accept_loop(
    listener: TcpListener,
    tls: Option<TlsAcceptor>,
    shared: Arc<Shared>,
    shutdown: CancellationToken,
) {
    serve_until(listener, shutdown, move |stream| {
        let shared = Arc::clone(&shared);
        let tls = tls.clone();
        async move {
            let Some(acceptor) = tls else {
                shared.record_connection(AcceptedConnection::Plain);
                return serve_http(stream, shared).await;
            };
            let index = shared.record_connection(AcceptedConnection::TlsHandshaking);
            match acceptor.accept(stream).await {
                Ok(stream) => {
                    let alpn = stream
                        .get_ref()
                        .1
                        .alpn_protocol()
                        .map(|protocol| String::from_utf8_lossy(protocol).into_owned());
                    shared.update_connection(index, AcceptedConnection::Tls { alpn });
                    serve_http(stream, shared).await;
                }
                Err(error) => shared.update_connection(
                    index,
                    AcceptedConnection::TlsFailed {
                        error: error.to_string(),
                    },
                ),
            }
        }
    })
    .await;
}

/// Accepts connections on `listener` until `shutdown` fires, serving each with `serve`.
/// Dropping the set when the loop ends aborts every open connection.
pub(super) async fn serve_until<F, Fut>(
    listener: TcpListener,
    shutdown: CancellationToken,
    serve: F,
) where
    F: Fn(TcpStream) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            () = shutdown.cancelled() => return,
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                connections.spawn(serve(stream));
            }
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
}

async fn serve_http<S>(stream: S, shared: Arc<Shared>)
where
    S: AsyncRead + AsyncWrite + Send + Unpin + 'static,
{
    let service = service_fn(move |request| serve::handle(request, Arc::clone(&shared)));
    // A client that breaks the connection is a scenario, not a server error.
    let _ = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
        .serve_connection(TokioIo::new(stream), service)
        .await;
}

#[cfg(test)]
#[path = "listen_tests.rs"]
mod tests;
