//! Which proxy a request goes through, and what that proxy says when a tunnel fails.
//!
//! reqwest reads the proxy environment (`HTTPS_PROXY`/`https_proxy`, `HTTP_PROXY`,
//! `ALL_PROXY`, `NO_PROXY`) when a client is built and tunnels `https://` requests with
//! `CONNECT host:port`, so the proxy sees the destination but never the request (the key
//! travels inside TLS). When the tunnel fails, reqwest only says it was "unsuccessful"; to
//! name the proxy's answer, [`ProxyRoute::ask`] repeats the `CONNECT` (host and port only,
//! plus the proxy's own credentials from its URL) and reads the status line.

use std::time::Duration;

use http::HeaderValue;
use hyper_util::client::proxy::matcher::Matcher;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The longest status line kept from a proxy's answer.
const MAX_STATUS_LINE: usize = 200;

/// The proxy an endpoint is reached through.
#[derive(Clone)]
pub(crate) struct ProxyRoute {
    /// `scheme://host:port`, never the credentials.
    pub(crate) proxy: String,
    /// `host:port` of the endpoint (what `CONNECT` asks for).
    pub(crate) target: String,
    /// Whether requests are tunneled (`https://` endpoints through an `http://` proxy).
    tunnels: bool,
    proxy_host: String,
    proxy_port: u16,
    /// `Proxy-Authorization` from the proxy URL's user and password.
    authorization: Option<HeaderValue>,
}

impl std::fmt::Debug for ProxyRoute {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProxyRoute")
            .field("proxy", &self.proxy)
            .field("target", &self.target)
            .finish_non_exhaustive()
    }
}

/// What a proxy answered a `CONNECT`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ProxyAnswer {
    /// `200`: the proxy opens the tunnel, so it is not what failed.
    Tunnels,
    /// Anything else, as its status line (`HTTP/1.1 403 Forbidden`).
    Refuses(String),
    /// No answer: why the proxy could not be asked.
    Silent(String),
}

impl ProxyRoute {
    /// The proxy the environment names for `url` right now (the same matcher reqwest uses
    /// when it builds a client), or `None` for a direct connection.
    pub(crate) fn from_environment(url: &reqwest::Url) -> Option<Self> {
        let uri: http::Uri = url.as_str().parse().ok()?;
        let intercept = Matcher::from_system().intercept(&uri)?;
        let proxy_uri = intercept.uri();
        let proxy_scheme = proxy_uri.scheme_str().unwrap_or("http").to_owned();
        let proxy_host = proxy_uri.host()?.to_owned();
        let proxy_port =
            proxy_uri
                .port_u16()
                .unwrap_or(if proxy_scheme == "https" { 443 } else { 80 });
        let target_host = url.host_str()?;
        let target_port = url.port_or_known_default()?;
        Some(Self {
            proxy: format!("{proxy_scheme}://{proxy_host}:{proxy_port}"),
            target: format!("{target_host}:{target_port}"),
            tunnels: url.scheme() == "https" && proxy_scheme == "http",
            proxy_host,
            proxy_port,
            authorization: intercept.basic_auth().cloned(),
        })
    }

    /// Asks the proxy for the same tunnel (nothing is sent through it) and reports its
    /// answer; each step waits at most `wait`. Only for tunneling routes.
    pub(crate) async fn ask(&self, wait: Duration) -> Option<ProxyAnswer> {
        if !self.tunnels {
            return None;
        }
        Some(
            match tokio::time::timeout(wait * 2, self.connect_once(wait)).await {
                Ok(answer) => answer,
                Err(_) => ProxyAnswer::Silent(format!("no answer within {:?}", wait * 2)),
            },
        )
    }

    async fn connect_once(&self, wait: Duration) -> ProxyAnswer {
        let connect = TcpStream::connect((self.proxy_host.as_str(), self.proxy_port));
        let mut stream = match tokio::time::timeout(wait, connect).await {
            Ok(Ok(stream)) => stream,
            Ok(Err(error)) => return ProxyAnswer::Silent(format!("cannot connect: {error}")),
            Err(_) => return ProxyAnswer::Silent(format!("cannot connect within {wait:?}")),
        };
        let mut head = format!(
            "CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n",
            target = self.target
        )
        .into_bytes();
        if let Some(authorization) = &self.authorization {
            head.extend_from_slice(b"Proxy-Authorization: ");
            head.extend_from_slice(authorization.as_bytes());
            head.extend_from_slice(b"\r\n");
        }
        head.extend_from_slice(b"\r\n");
        if let Err(error) = stream.write_all(&head).await {
            return ProxyAnswer::Silent(format!("the request could not be sent: {error}"));
        }
        let mut answer = Vec::new();
        let mut chunk = [0u8; 256];
        while !answer.contains(&b'\n') && answer.len() < MAX_STATUS_LINE {
            match stream.read(&mut chunk).await {
                Ok(0) => break,
                Ok(read) => answer.extend_from_slice(&chunk[..read]),
                Err(error) => return ProxyAnswer::Silent(format!("the answer broke: {error}")),
            }
        }
        status_answer(&answer)
    }
}

/// Reads a proxy's status line; `200` means it tunnels.
fn status_answer(answer: &[u8]) -> ProxyAnswer {
    let line: String = String::from_utf8_lossy(answer)
        .lines()
        .next()
        .unwrap_or("")
        .chars()
        .filter(|c| !c.is_control())
        .take(MAX_STATUS_LINE)
        .collect();
    if line.is_empty() {
        return ProxyAnswer::Silent("it closed the connection without an answer".to_owned());
    }
    let status = line.split(' ').nth(1);
    if line.starts_with("HTTP/") && status == Some("200") {
        ProxyAnswer::Tunnels
    } else {
        ProxyAnswer::Refuses(line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_line_other_than_200_is_a_refusal_quoted_whole() {
        assert_eq!(
            status_answer(b"HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n"),
            ProxyAnswer::Refuses("HTTP/1.1 403 Forbidden".to_owned())
        );
        assert_eq!(
            status_answer(b"HTTP/1.1 200 Connection established\r\n\r\n"),
            ProxyAnswer::Tunnels
        );
        assert_eq!(
            status_answer(b"SSH-2.0-OpenSSH\r\n"),
            ProxyAnswer::Refuses("SSH-2.0-OpenSSH".to_owned())
        );
        assert!(matches!(status_answer(b""), ProxyAnswer::Silent(_)));
    }

    #[test]
    fn control_characters_in_an_answer_are_dropped() {
        assert_eq!(
            status_answer(b"HTTP/1.1 403 \x1b[31mNo\x07\r\n"),
            ProxyAnswer::Refuses("HTTP/1.1 403 [31mNo".to_owned())
        );
    }
}
