//! Serving one connection: the request, the policy's answer, the tunnel or the forwarded
//! request, and the refusals (`403` by policy, `503` over a limit).

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use protocol::NetworkDenial;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;

use super::limits::REFUSAL_HEAD_TIMEOUT;
use super::request::{self, BadRequest, Preamble, Target};
use super::{Decision, ProxyConfig};
use crate::attestation::now_ms;

const HEAD_TIMEOUT: Duration = Duration::from_secs(30);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Serves one client connection (any byte stream; the unix socket in production).
pub async fn serve_connection<S>(mut client: S, config: &ProxyConfig)
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let token = config.bridge_token.as_ref();
    let (preamble, head, leftover) =
        match tokio::time::timeout(HEAD_TIMEOUT, request::read_head(&mut client, token)).await {
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
    warn_if_forged(&preamble);
    let program = preamble.program();
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

fn warn_if_forged(preamble: &Preamble) {
    if *preamble == Preamble::Forged {
        tracing::warn!(
            "a connection to the wall's proxy claimed to come from the bridge without the wall's token; its program is recorded as unknown"
        );
    }
}

/// Which limit refused a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Limit {
    /// The wall's own: this many connections were open.
    Wall(usize),
    /// The descriptors every proxy of the process may hold were in use.
    Host,
}

impl std::fmt::Display for Limit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Limit::Wall(n) => write!(
                f,
                "the sandbox already has {n} connections open through the proxy, its limit"
            ),
            Limit::Host => {
                f.write_str("the host's sandbox proxies hold every file descriptor they may use")
            }
        }
    }
}

/// Answers a connection over a limit with `503` naming the limit, after reading its request
/// (briefly) so the answer reaches the client; a request that could be read is recorded as a
/// denial (rule [`NetworkDenial::CONNECTION_LIMIT_RULE`]).
pub(super) async fn refuse_over_limit<S>(mut client: S, config: &ProxyConfig, limit: Limit)
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let token = config.bridge_token.as_ref();
    let read = tokio::time::timeout(REFUSAL_HEAD_TIMEOUT, request::read_head(&mut client, token));
    if let Ok(Ok((preamble, head, _))) = read.await {
        warn_if_forged(&preamble);
        let program = preamble.program();
        let target = match request::parse(&head, program.clone()) {
            Ok(request) => Some((request.host, request.port)),
            Err(BadRequest::HostMismatch { host, port, .. }) => Some((host, port)),
            Err(BadRequest::Malformed(_)) => None,
        };
        if let Some((host, port)) = target {
            config.denials.record(NetworkDenial {
                host,
                port,
                binary: program,
                reason: limit.to_string(),
                rule: Some(NetworkDenial::CONNECTION_LIMIT_RULE.to_owned()),
                time_ms: now_ms(),
            });
        }
    }
    let advice = match limit {
        Limit::Wall(_) => "close connections the sandbox no longer needs and retry",
        Limit::Host => "retry later",
    };
    let body = format!(
        "paddock: the sandbox's network proxy refused this connection: {limit}; {advice}.\n"
    );
    let _ = respond(&mut client, 503, "Service Unavailable", &body).await;
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
