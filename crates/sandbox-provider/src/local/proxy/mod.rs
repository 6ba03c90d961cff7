//! The host-side allow-list proxy of the local wall.
//!
//! It listens on a unix socket that is bind-mounted into the sandbox, where the bridge of
//! `paddock-wall` forwards `127.0.0.1:<port>` to it. Per connection it serves one request:
//! `CONNECT host:port` (a tunnel) or an absolute-form plain-HTTP request. It asks the session's
//! [`EgressPolicy`] about the name, resolves the name itself, asks again about every address,
//! and connects only to an allowed address. A refusal is answered with `403` and a body naming
//! the host and the policy, and recorded as a [`NetworkDenial`].

mod denials;
mod policy;
mod request;
mod resolver;

use std::net::{IpAddr, SocketAddr};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use protocol::NetworkDenial;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpStream, UnixListener};
use tokio_util::sync::CancellationToken;

pub use denials::DenialLog;
pub use policy::{Decision, EgressPolicy, ExplicitAddress, WithExplicitAddresses};
pub use request::{BadRequest, Request, Target};
pub use resolver::{Resolver, StaticResolver, SystemResolver};

use crate::attestation::now_ms;
use crate::socket_address::SocketAddress;

const HEAD_TIMEOUT: Duration = Duration::from_secs(30);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// What one proxy serves.
#[derive(Debug, Clone)]
pub struct ProxyConfig {
    pub policy: Arc<dyn EgressPolicy>,
    pub resolver: Arc<dyn Resolver>,
    pub denials: DenialLog,
}

/// Binds the proxy's socket at `path` (of any length) and serves it until `stop` fires.
pub fn start(
    path: &Path,
    config: ProxyConfig,
    stop: CancellationToken,
) -> std::io::Result<tokio::task::JoinHandle<()>> {
    let listener = UnixListener::bind(SocketAddress::new(path)?.path())?;
    Ok(tokio::spawn(async move {
        loop {
            let stream = tokio::select! {
                () = stop.cancelled() => break,
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => stream,
                    Err(e) => {
                        tracing::warn!(error = %e, "the wall's proxy stopped accepting");
                        break;
                    }
                },
            };
            let config = config.clone();
            let stop = stop.clone();
            tokio::spawn(async move {
                tokio::select! {
                    () = stop.cancelled() => {}
                    () = serve_connection(stream, &config) => {}
                }
            });
        }
    }))
}

/// Serves one client connection (any byte stream; the unix socket in production).
pub async fn serve_connection<S>(mut client: S, config: &ProxyConfig)
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let (program, head, leftover) =
        match tokio::time::timeout(HEAD_TIMEOUT, request::read_head(&mut client)).await {
            Ok(Ok(read)) => read,
            Ok(Err(e)) => {
                let _ = respond(
                    &mut client,
                    400,
                    "Bad Request",
                    &format!("paddock proxy: {e}\n"),
                )
                .await;
                return;
            }
            Err(_) => return,
        };
    let request = match request::parse(&head, program.clone()) {
        Ok(request) => request,
        Err(BadRequest::Malformed(why)) => {
            let _ = respond(
                &mut client,
                400,
                "Bad Request",
                &format!("paddock proxy: {why}\n"),
            )
            .await;
            return;
        }
        Err(BadRequest::HostMismatch { host, port, header }) => {
            let reason = format!(
                "the Host header `{header}` does not match the request target `{host}:{port}`"
            );
            refuse(
                &mut client,
                config,
                &host,
                port,
                program,
                reason,
                "engine:host-header",
            )
            .await;
            return;
        }
    };
    let (host, port) = (request.host.clone(), request.port);
    if let Decision::Denied { reason } = config.policy.check_host(&host, port) {
        let rule = format!("policy:{}", config.policy.profile());
        refuse(
            &mut client,
            config,
            &host,
            port,
            request.program,
            reason,
            &rule,
        )
        .await;
        return;
    }
    let addresses = match host.parse::<IpAddr>() {
        Ok(ip) => vec![ip],
        Err(_) => match config.resolver.resolve(&host, port).await {
            Ok(addresses) if !addresses.is_empty() => addresses,
            Ok(_) | Err(_) => {
                let body = format!("paddock proxy: `{host}` could not be resolved\n");
                let _ = respond(&mut client, 502, "Bad Gateway", &body).await;
                return;
            }
        },
    };
    let mut allowed = Vec::new();
    let mut first_refusal = None;
    for ip in addresses {
        match config.policy.check_ip(&host, port, ip) {
            Decision::Allowed { .. } => allowed.push(SocketAddr::new(ip, port)),
            Decision::Denied { reason } => {
                first_refusal.get_or_insert(reason);
            }
        }
    }
    if allowed.is_empty() {
        let reason = first_refusal.unwrap_or_else(|| "no address to connect to".into());
        refuse(
            &mut client,
            config,
            &host,
            port,
            request.program,
            reason,
            "engine:address",
        )
        .await;
        return;
    }
    let Some(mut upstream) = connect_any(&allowed).await else {
        let body = format!("paddock proxy: could not connect to `{host}:{port}`\n");
        let _ = respond(&mut client, 502, "Bad Gateway", &body).await;
        return;
    };
    let started = match &request.target {
        Target::Connect => client
            .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
            .await
            .is_ok(),
        Target::Forward { origin_head } => upstream.write_all(origin_head.as_bytes()).await.is_ok(),
    };
    if !started || (!leftover.is_empty() && upstream.write_all(&leftover).await.is_err()) {
        return;
    }
    let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
}

async fn connect_any(addresses: &[SocketAddr]) -> Option<TcpStream> {
    for address in addresses {
        if let Ok(Ok(stream)) =
            tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(address)).await
        {
            let _ = stream.set_nodelay(true);
            return Some(stream);
        }
    }
    None
}

/// Records the denial, then answers 403 (recording first, so a tool call that saw the 403 is
/// sure to find its denial).
async fn refuse<S: AsyncWrite + Unpin>(
    client: &mut S,
    config: &ProxyConfig,
    host: &str,
    port: u16,
    program: Option<String>,
    reason: String,
    rule: &str,
) {
    let denial = NetworkDenial {
        host: host.to_owned(),
        port,
        binary: program,
        reason,
        rule: Some(rule.to_owned()),
        time_ms: now_ms(),
    };
    let body = format!(
        "paddock: blocked by the sandbox's network policy (profile {}): {host}:{port}: {}\n",
        config.policy.profile(),
        denial.reason
    );
    tracing::info!(host, port, rule, reason = %denial.reason, "the wall's proxy refused a connection");
    config.denials.record(denial);
    let _ = respond(client, 403, "Forbidden", &body).await;
}

async fn respond<S: AsyncWrite + Unpin>(
    client: &mut S,
    status: u16,
    phrase: &str,
    body: &str,
) -> std::io::Result<()> {
    let response = format!(
        "HTTP/1.1 {status} {phrase}\r\nContent-Type: text/plain; charset=utf-8\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    client.write_all(response.as_bytes()).await?;
    client.shutdown().await
}

#[cfg(test)]
#[path = "proxy_tests.rs"]
mod tests;
