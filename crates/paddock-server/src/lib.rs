//! # paddock-server
//!
//! Paddock's HTTP/WebSocket API over the host crate ([`paddock_host::Host`]): one module per
//! resource under [`routes`], one error mapping ([`errors`]), the auth and exposure guard
//! ([`auth`]), TLS for non-loopback addresses, the OpenAPI document ([`openapi`]) and the
//! TypeScript types of every payload (`bindings/`), both generated and checked in.
//!
//! [`Server::bind`] binds (refusing a non-loopback address without TLS unless told it is
//! insecure), creates the token on first start, and [`Server::run`] serves until the
//! shutdown future resolves: then it stops accepting, closes event sockets, closes every
//! session (running calls cancelled and committed, sandboxes torn down) and waits for open
//! requests a moment.

pub mod api;
pub mod assets;
pub mod auth;
pub mod errors;
pub mod extract;
pub mod openapi;
pub mod routes;
pub mod state;
mod tls;

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use paddock_host::Host;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

pub use crate::assets::EmbeddedUi;
use crate::assets::StaticAssets;
use crate::auth::{ApiToken, Exposure, Tickets, TokenError};
use crate::state::{AppState, EventSocketStats};

/// The TLS certificate chain and key (PEM files).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsFiles {
    pub cert: PathBuf,
    pub key: PathBuf,
}

/// How `paddock up` serves.
#[derive(Clone)]
pub struct ServerConfig {
    pub listen: SocketAddr,
    pub tls: Option<TlsFiles>,
    /// Serve a non-loopback address without TLS (warned about on every start).
    pub insecure_remote: bool,
    /// Host names clients use besides the address itself (e.g. the machine's DNS name).
    pub names: Vec<String>,
    /// The web UI's files, when this build has them.
    pub assets: Option<Arc<dyn StaticAssets>>,
    /// Origins of pages served elsewhere that call this server (the desktop app's webview,
    /// `tauri://localhost`); only an embedding front end sets them, never `paddock up`.
    pub cross_origins: Vec<String>,
    /// A token made for this process and kept in memory only, instead of the machine's token
    /// file (the desktop app, whose window is the only client).
    pub process_token: bool,
}

impl ServerConfig {
    pub fn loopback(port: u16) -> Self {
        Self {
            listen: SocketAddr::from(([127, 0, 0, 1], port)),
            tls: None,
            insecure_remote: false,
            names: Vec::new(),
            assets: None,
            cross_origins: Vec::new(),
            process_token: false,
        }
    }
}

/// Why the server cannot start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error(
        "refusing to serve {addr} without TLS: it is not a loopback address, so the token and \
         every session would cross the network in clear text. Give --tls-cert and --tls-key \
         (PEM files), or --insecure-remote if the network itself is private and you accept it"
    )]
    RemoteWithoutTls { addr: SocketAddr },
    #[error(
        "serving {addr} (every address) needs the host names clients will use (--name HOST), \
         so the Host check can tell this server's requests from a DNS-rebinding page's"
    )]
    UnnamedWildcard { addr: SocketAddr },
    #[error("TLS: {0}")]
    Tls(String),
    #[error("binding {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Token(#[from] TokenError),
}

/// A bound server, ready to [`run`](Server::run).
pub struct Server {
    listener: TcpListener,
    tls: Option<tokio_rustls::TlsAcceptor>,
    state: AppState,
    url: String,
    token_file: PathBuf,
    warnings: Vec<String>,
}

/// The host names a server at `addr` answers to.
fn served_names(addr: SocketAddr, extra: &[String]) -> Vec<String> {
    let literal = match addr.ip() {
        IpAddr::V4(ip) => ip.to_string(),
        IpAddr::V6(ip) => format!("[{ip}]"),
    };
    let mut names = Vec::new();
    if !addr.ip().is_unspecified() {
        names.push(literal);
    }
    if addr.ip().is_loopback() {
        names.push("localhost".to_owned());
    }
    names.extend(extra.iter().cloned());
    names
}

impl Server {
    /// Binds the address and prepares the token, the exposure rules and TLS.
    pub async fn bind(host: Host, config: ServerConfig) -> Result<Self, ServeError> {
        let addr = config.listen;
        let remote = !addr.ip().is_loopback();
        let mut warnings = Vec::new();
        if remote && config.tls.is_none() {
            if !config.insecure_remote {
                return Err(ServeError::RemoteWithoutTls { addr });
            }
            warnings.push(format!(
                "WARNING: serving {addr} WITHOUT TLS (--insecure-remote): the API token and \
                 every session cross the network in clear text"
            ));
        }
        if addr.ip().is_unspecified() && config.names.is_empty() {
            return Err(ServeError::UnnamedWildcard { addr });
        }
        let tls = config.tls.as_ref().map(tls::acceptor).transpose()?;
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|source| ServeError::Bind { addr, source })?;
        let local = listener
            .local_addr()
            .map_err(|source| ServeError::Bind { addr, source })?;
        let token_file = host.paths().api_token_file();
        let token = if config.process_token {
            ApiToken::for_this_process()?
        } else {
            ApiToken::load_or_create(&token_file)?
        };
        let names = served_names(local, &config.names);
        let exposure = Exposure::new(&names, local.port(), tls.is_some())
            .with_cross_origins(&config.cross_origins);
        let scheme = if tls.is_some() { "https" } else { "http" };
        let url = format!(
            "{scheme}://{}:{}",
            names
                .first()
                .cloned()
                .unwrap_or_else(|| local.ip().to_string()),
            local.port()
        );
        if host.config().provider == protocol::ProviderKind::Direct {
            warnings.push(format!(
                "WARNING: the configured wall is `direct`: {}",
                sandbox_provider_warning()
            ));
        }
        let state = AppState {
            host,
            token: Arc::new(token),
            exposure: Arc::new(exposure),
            tickets: Arc::new(Tickets::default()),
            assets: config.assets,
            shutdown: CancellationToken::new(),
            event_sockets: Arc::default(),
        };
        Ok(Self {
            listener,
            tls,
            state,
            url,
            token_file,
            warnings,
        })
    }

    /// The base URL clients use (`http://127.0.0.1:8420`).
    pub fn url(&self) -> &str {
        &self.url
    }

    pub fn local_addr(&self) -> Option<SocketAddr> {
        self.listener.local_addr().ok()
    }

    /// Where the API token is (owner-only).
    pub fn token_file(&self) -> &PathBuf {
        &self.token_file
    }

    /// Warnings to show at start (no TLS on a remote address, the `direct` wall).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The event sockets' counters (open sockets, clients disconnected for being too slow).
    pub fn event_sockets(&self) -> Arc<EventSocketStats> {
        Arc::clone(&self.state.event_sockets)
    }

    /// The token, for a client in this process (tests; the desktop shell).
    pub fn token(&self) -> &str {
        self.state.token.expose()
    }

    /// Serves until `shutdown` resolves, then shuts down gracefully.
    pub async fn run(self, shutdown: impl Future<Output = ()>) {
        let router = routes::router(self.state.clone());
        let stop = CancellationToken::new();
        let connections = tokio_util::task::TaskTracker::new();
        tokio::pin!(shutdown);
        loop {
            let accepted = tokio::select! {
                () = &mut shutdown => break,
                accepted = self.listener.accept() => accepted,
            };
            let (stream, peer) = match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    tracing::warn!("accepting a connection failed: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            };
            let service = TowerToHyperService::new(router.clone());
            let tls = self.tls.clone();
            let stop = stop.clone();
            connections.spawn(async move {
                let _ = stream.set_nodelay(true);
                match tls {
                    None => serve_connection(TokioIo::new(stream), service, stop).await,
                    Some(acceptor) => match acceptor.accept(stream).await {
                        Ok(stream) => serve_connection(TokioIo::new(stream), service, stop).await,
                        Err(e) => tracing::debug!(%peer, "TLS handshake failed: {e}"),
                    },
                }
            });
        }
        drop(self.listener);
        tracing::info!("shutting down: closing event sockets and sessions");
        self.state.shutdown.cancel();
        self.state.host.shutdown().await;
        stop.cancel();
        connections.close();
        if tokio::time::timeout(Duration::from_secs(5), connections.wait())
            .await
            .is_err()
        {
            tracing::warn!("some connections were still open after 5 s; leaving them");
        }
    }
}

fn sandbox_provider_warning() -> &'static str {
    "no wall: every session's commands run with your user's rights (choose `local` or \
     `openshell` in the settings)"
}

async fn serve_connection<I>(
    io: TokioIo<I>,
    service: TowerToHyperService<axum::Router>,
    stop: CancellationToken,
) where
    I: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let connection = hyper::server::conn::http1::Builder::new()
        .serve_connection(io, service)
        .with_upgrades();
    tokio::pin!(connection);
    tokio::select! {
        result = connection.as_mut() => {
            if let Err(e) = result {
                tracing::debug!("a connection ended: {e}");
            }
        }
        () = stop.cancelled() => {
            connection.as_mut().graceful_shutdown();
            let _ = connection.await;
        }
    }
}
