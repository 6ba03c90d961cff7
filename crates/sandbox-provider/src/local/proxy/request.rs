//! Reading and parsing the one request head the proxy serves per connection: `CONNECT
//! host:port` or an absolute-form plain-HTTP request (`GET http://host/path HTTP/1.1`).

use tokio::io::{AsyncRead, AsyncReadExt};

use paddock_wall::bridge::{PREAMBLE_PREFIX, parse_preamble};

use super::token::BridgeToken;

/// The longest request head the proxy reads.
pub const MAX_HEAD_BYTES: usize = 64 * 1024;

/// What the client asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// `CONNECT host:port`: a tunnel.
    Connect,
    /// A plain-HTTP request in absolute form; `origin_head` is the head to send upstream
    /// (origin-form request line, proxy headers removed, `Connection: close`).
    Forward { origin_head: String },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub target: Target,
    pub host: String,
    pub port: u16,
    /// The program that connected, as the wall's own bridge reported it (`None`: unknown).
    pub program: Option<String>,
}

/// Why a request head was refused before any policy was asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BadRequest {
    /// Malformed: answered with 400.
    Malformed(String),
    /// Well-formed but contradicts itself (`Host` header vs target): answered with 403 and
    /// recorded as a denial.
    HostMismatch {
        host: String,
        port: u16,
        header: String,
    },
}

/// What the first line of a connection said about its program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Preamble {
    /// No preamble: a client that did not come through the bridge.
    Absent,
    /// The wall's bridge, with the program it found (`None`: it could not tell).
    Bridge(Option<String>),
    /// A preamble without the wall's token: a command claiming to be the bridge.
    Forged,
}

impl Preamble {
    /// The program to record: only the bridge's word counts.
    pub fn program(&self) -> Option<String> {
        match self {
            Preamble::Bridge(program) => program.clone(),
            Preamble::Absent | Preamble::Forged => None,
        }
    }
}

/// Reads the optional bridge preamble and the request head; returns them with any bytes read
/// past the head (the start of a body or of tunnelled data). A preamble is the bridge's only
/// when it carries `token`.
pub async fn read_head<R: AsyncRead + Unpin>(
    reader: &mut R,
    token: Option<&BridgeToken>,
) -> std::io::Result<(Preamble, String, Vec<u8>)> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 4096];
    let mut preamble = Preamble::Absent;
    let mut first_line = true;
    loop {
        if first_line && buf.starts_with(PREAMBLE_PREFIX.as_bytes()) {
            if let Some(end) = buf.iter().position(|&b| b == b'\n') {
                let line = String::from_utf8_lossy(&buf[PREAMBLE_PREFIX.len()..end]).into_owned();
                preamble = match parse_preamble(&line) {
                    Some((presented, program))
                        if token.is_some_and(|token| token.matches(presented)) =>
                    {
                        Preamble::Bridge(program.map(str::to_owned))
                    }
                    _ => Preamble::Forged,
                };
                buf.drain(..=end);
                first_line = false;
            }
        } else if buf.len() >= PREAMBLE_PREFIX.len()
            || !PREAMBLE_PREFIX.as_bytes().starts_with(&buf)
        {
            first_line = false;
        }
        if let Some(end) = find(&buf, b"\r\n\r\n") {
            let rest = buf.split_off(end + 4);
            let head = String::from_utf8(buf).map_err(|_| {
                std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    "the request head is not UTF-8",
                )
            })?;
            return Ok((preamble, head, rest));
        }
        if buf.len() > MAX_HEAD_BYTES {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("the request head is longer than {MAX_HEAD_BYTES} bytes"),
            ));
        }
        let n = reader.read(&mut chunk).await?;
        if n == 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "the connection ended before a request head",
            ));
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Splits `host:port` (IPv6 in brackets); `default_port` applies when no port is given.
pub fn split_authority(
    authority: &str,
    default_port: Option<u16>,
) -> Result<(String, u16), String> {
    let bad = |why: &str| format!("`{authority}` is not a valid host and port: {why}");
    if authority.is_empty() || authority.contains('@') {
        return Err(bad("empty or carrying user information"));
    }
    let (host, port) = if let Some(rest) = authority.strip_prefix('[') {
        let (host, after) = rest.split_once(']').ok_or_else(|| bad("`[` without `]`"))?;
        (host.to_owned(), after.strip_prefix(':'))
    } else {
        match authority.rsplit_once(':') {
            Some((host, port)) if !host.contains(':') => (host.to_owned(), Some(port)),
            Some(_) => return Err(bad("an IPv6 address must be in brackets")),
            None => (authority.to_owned(), None),
        }
    };
    if host.is_empty()
        || !host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | ':'))
    {
        return Err(bad("the host has characters no host name has"));
    }
    let port = match port {
        Some(p) => p
            .parse::<u16>()
            .ok()
            .filter(|p| *p != 0)
            .ok_or_else(|| bad("invalid port"))?,
        None => default_port.ok_or_else(|| bad("a port is required"))?,
    };
    Ok((host.trim_end_matches('.').to_ascii_lowercase(), port))
}

/// Parses a request head.
pub fn parse(head: &str, program: Option<String>) -> Result<Request, BadRequest> {
    let malformed = |why: String| BadRequest::Malformed(why);
    let mut lines = head.split("\r\n");
    let request_line = lines.next().unwrap_or_default();
    let mut parts = request_line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(malformed(format!(
            "malformed request line {request_line:?}"
        )));
    };
    if !version.starts_with("HTTP/1.") {
        return Err(malformed(format!("unsupported HTTP version {version:?}")));
    }
    let headers: Vec<(&str, &str)> = lines
        .filter(|l| !l.is_empty())
        .map(|l| {
            l.split_once(':')
                .map(|(n, v)| (n.trim(), v.trim()))
                .ok_or_else(|| malformed(format!("malformed header line {l:?}")))
        })
        .collect::<Result<_, _>>()?;
    let host_headers: Vec<&str> = headers
        .iter()
        .filter(|(n, _)| n.eq_ignore_ascii_case("host"))
        .map(|(_, v)| *v)
        .collect();
    if host_headers.len() > 1 {
        return Err(malformed("more than one Host header".into()));
    }

    if method.eq_ignore_ascii_case("CONNECT") {
        let (host, port) = split_authority(target, None).map_err(malformed)?;
        return Ok(Request {
            target: Target::Connect,
            host,
            port,
            program,
        });
    }
    let Some(rest) = target.strip_prefix("http://").or_else(|| {
        target
            .get(..7)
            .filter(|s| s.eq_ignore_ascii_case("http://"))
            .map(|_| &target[7..])
    }) else {
        return Err(malformed(format!(
            "the proxy serves CONNECT and absolute http:// requests only, not {target:?}"
        )));
    };
    let (authority, path) = match rest.find(['/', '?']) {
        Some(i) if rest.as_bytes()[i] == b'/' => (&rest[..i], rest[i..].to_owned()),
        Some(i) => (&rest[..i], format!("/{}", &rest[i..])),
        None => (rest, "/".to_owned()),
    };
    let (host, port) = split_authority(authority, Some(80)).map_err(malformed)?;
    if let Some(header) = host_headers.first() {
        let matches = split_authority(header, Some(80)).is_ok_and(|(h, p)| h == host && p == port);
        if !matches {
            return Err(BadRequest::HostMismatch {
                host,
                port,
                header: (*header).to_owned(),
            });
        }
    }
    let mut origin_head = format!("{method} {path} {version}\r\n");
    if host_headers.is_empty() {
        origin_head.push_str(&format!("Host: {authority}\r\n"));
    }
    for (name, value) in &headers {
        let drop = [
            "proxy-connection",
            "proxy-authorization",
            "connection",
            "keep-alive",
        ]
        .iter()
        .any(|d| name.eq_ignore_ascii_case(d));
        if !drop {
            origin_head.push_str(&format!("{name}: {value}\r\n"));
        }
    }
    origin_head.push_str("Connection: close\r\n\r\n");
    Ok(Request {
        target: Target::Forward { origin_head },
        host,
        port,
        program,
    })
}

#[cfg(test)]
#[path = "request_tests.rs"]
mod tests;
