//! `TestConnectProxy`: a test double of an HTTPS proxy (HTTP `CONNECT`, RFC 9110 §9.3.6) on
//! 127.0.0.1. It records every request it receives (method, target, headers) and the bytes a
//! client sends through each tunnel, so a test can prove what a proxy gets to see. It either
//! opens tunnels or refuses every request with a fixed status.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

use super::listen::serve_until;

/// The longest request head the proxy reads.
const MAX_HEAD_BYTES: usize = 16 * 1024;
/// The most tunneled client bytes recorded per tunnel.
const MAX_RECORDED_TUNNEL_BYTES: usize = 256 * 1024;

/// One request the proxy received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectAttempt {
    /// `CONNECT` for a tunnel; anything else is refused with 405.
    pub method: String,
    /// The request target: `host:port` for `CONNECT`.
    pub target: String,
    /// Header names (lower-case) and values, in arrival order.
    pub headers: Vec<(String, String)>,
    /// The status the proxy answered.
    pub status: u16,
    /// The first bytes the client sent through the tunnel (at most 256 KiB).
    pub tunneled_from_client: Vec<u8>,
}

/// The proxy double. Dropping it stops it and closes every tunnel.
pub struct TestConnectProxy {
    addr: SocketAddr,
    attempts: Arc<Mutex<Vec<ConnectAttempt>>>,
    shutdown: CancellationToken,
}

#[derive(Clone)]
enum Behaviour {
    Tunnel,
    Refuse { status: u16, reason: String },
}

impl TestConnectProxy {
    /// A proxy that opens every `CONNECT` tunnel it is asked for.
    pub async fn start() -> std::io::Result<Self> {
        Self::listen(Behaviour::Tunnel).await
    }

    /// A proxy that answers every request with `status reason` (e.g. `403 Forbidden`) and
    /// closes the connection.
    pub async fn start_refusing(status: u16, reason: &str) -> std::io::Result<Self> {
        Self::listen(Behaviour::Refuse {
            status,
            reason: reason.to_owned(),
        })
        .await
    }

    async fn listen(behaviour: Behaviour) -> std::io::Result<Self> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let attempts = Arc::new(Mutex::new(Vec::new()));
        let shutdown = CancellationToken::new();
        tokio::spawn(accept_loop(
            listener,
            behaviour,
            Arc::clone(&attempts),
            shutdown.clone(),
        ));
        Ok(Self {
            addr,
            attempts,
            shutdown,
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The proxy URL for `HTTPS_PROXY` (`http://127.0.0.1:PORT`).
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request received so far, with the tunneled bytes recorded so far.
    pub fn attempts(&self) -> Vec<ConnectAttempt> {
        lock(&self.attempts).clone()
    }
}

impl Drop for TestConnectProxy {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

fn lock(attempts: &Mutex<Vec<ConnectAttempt>>) -> MutexGuard<'_, Vec<ConnectAttempt>> {
    attempts
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

async fn accept_loop(
    listener: TcpListener,
    behaviour: Behaviour,
    attempts: Arc<Mutex<Vec<ConnectAttempt>>>,
    shutdown: CancellationToken,
) {
    serve_until(listener, shutdown, move |stream| {
        let attempts = Arc::clone(&attempts);
        let behaviour = behaviour.clone();
        // A client that leaves mid-request is a scenario, not a proxy error.
        async move {
            let _ = serve(stream, behaviour, attempts).await;
        }
    })
    .await;
}

/// A parsed request head and whatever the client sent after it.
struct Head {
    method: String,
    target: String,
    headers: Vec<(String, String)>,
    rest: Vec<u8>,
}

async fn read_head(stream: &mut TcpStream) -> std::io::Result<Option<Head>> {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 2048];
    let end = loop {
        if let Some(end) = buffer.windows(4).position(|window| window == b"\r\n\r\n") {
            break end;
        }
        if buffer.len() > MAX_HEAD_BYTES {
            return Ok(None);
        }
        let read = stream.read(&mut chunk).await?;
        if read == 0 {
            return Ok(None);
        }
        buffer.extend_from_slice(&chunk[..read]);
    };
    let text = String::from_utf8_lossy(&buffer[..end]).into_owned();
    let mut lines = text.split("\r\n");
    let mut request_line = lines.next().unwrap_or("").split(' ');
    let method = request_line.next().unwrap_or("").to_owned();
    let target = request_line.next().unwrap_or("").to_owned();
    let headers = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_owned()))
        .collect();
    Ok(Some(Head {
        method,
        target,
        headers,
        rest: buffer[end + 4..].to_vec(),
    }))
}

async fn serve(
    mut client: TcpStream,
    behaviour: Behaviour,
    attempts: Arc<Mutex<Vec<ConnectAttempt>>>,
) -> std::io::Result<()> {
    let Some(head) = read_head(&mut client).await? else {
        return Ok(());
    };
    let answer = |status: u16, reason: &str| {
        format!("HTTP/1.1 {status} {reason}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
    };
    let upstream = match (&behaviour, head.method.as_str()) {
        (Behaviour::Refuse { status, reason }, _) => Err((*status, answer(*status, reason))),
        (Behaviour::Tunnel, "CONNECT") => match TcpStream::connect(&head.target).await {
            Ok(upstream) => Ok(upstream),
            Err(_) => Err((502, answer(502, "Bad Gateway"))),
        },
        (Behaviour::Tunnel, _) => Err((405, answer(405, "Method Not Allowed"))),
    };
    let status = match &upstream {
        Ok(_) => 200,
        Err((status, _)) => *status,
    };
    let index = {
        let mut attempts = lock(&attempts);
        attempts.push(ConnectAttempt {
            method: head.method,
            target: head.target,
            headers: head.headers,
            status,
            tunneled_from_client: Vec::new(),
        });
        attempts.len() - 1
    };
    let upstream = match upstream {
        Ok(upstream) => upstream,
        Err((_, text)) => {
            client.write_all(text.as_bytes()).await?;
            return client.shutdown().await;
        }
    };
    client
        .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
        .await?;
    tunnel(client, upstream, head.rest, index, attempts).await
}

/// Copies both ways until either side closes, recording what the client sends.
async fn tunnel(
    client: TcpStream,
    upstream: TcpStream,
    already_read: Vec<u8>,
    index: usize,
    attempts: Arc<Mutex<Vec<ConnectAttempt>>>,
) -> std::io::Result<()> {
    let (mut client_read, mut client_write) = client.into_split();
    let (mut upstream_read, mut upstream_write) = upstream.into_split();
    let record = move |bytes: &[u8]| {
        if let Some(attempt) = lock(&attempts).get_mut(index) {
            let room = MAX_RECORDED_TUNNEL_BYTES.saturating_sub(attempt.tunneled_from_client.len());
            let take = bytes.len().min(room);
            attempt
                .tunneled_from_client
                .extend_from_slice(&bytes[..take]);
        }
    };
    let outbound = async move {
        record(&already_read);
        upstream_write.write_all(&already_read).await?;
        let mut chunk = vec![0u8; 16 * 1024];
        loop {
            let read = client_read.read(&mut chunk).await?;
            if read == 0 {
                return upstream_write.shutdown().await;
            }
            record(&chunk[..read]);
            upstream_write.write_all(&chunk[..read]).await?;
        }
    };
    let inbound = async move {
        tokio::io::copy(&mut upstream_read, &mut client_write).await?;
        client_write.shutdown().await
    };
    let (outbound, inbound) = tokio::join!(outbound, inbound);
    outbound.and(inbound)
}

#[cfg(test)]
#[path = "connect_proxy_tests.rs"]
mod tests;
