//! Who may call the API, and from where.
//!
//! * **Token.** A random 256-bit token, created on first start in the state folder, owner-only
//!   (`0600`; a file others can read is refused). Every request carries it as
//!   `Authorization: Bearer <token>`, compared in constant time. A token in a URL's query is
//!   refused outright (URLs end up in logs and histories).
//! * **WebSocket.** Browsers cannot set headers on a WebSocket, so a client first asks for a
//!   ticket (`POST …/events/ticket`, with the token) and opens the socket with
//!   `?ticket=…`: single use, bound to the session, valid for 30 seconds. Clients that can set
//!   headers may send the bearer token instead.
//! * **Exposure.** The `Host` header must name a host this server serves (a DNS-rebinding page
//!   in a browser sends its own name) and an `Origin`, when sent, must be the served origin,
//!   or one of the cross origins the embedding front end named (the desktop app's webview,
//!   whose page is not served by this server): only those get CORS answers, and a preflight
//!   from them is answered without the token (it carries none); the request itself still
//!   needs it. Bodies are limited to [`BODY_LIMIT`] bytes.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use subtle::ConstantTimeEq;

use crate::errors::{ApiError, body_too_large};
use crate::state::AppState;

/// The largest request body accepted, in bytes.
pub const BODY_LIMIT: usize = 1024 * 1024;

/// How long a WebSocket ticket stays valid.
pub const TICKET_LIFETIME: Duration = Duration::from_secs(30);

/// Why the token could not be had.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    #[error(
        "refusing to use the API token file {path}: its permissions are {mode:04o}, so other \
         users could read it; fix it with `chmod 600 {path}` (or delete it to get a new token)"
    )]
    Insecure { path: String, mode: u32 },
    #[error("refusing to use the API token file {path}: it belongs to another user (uid {owner})")]
    NotOurs { path: String, owner: u32 },
    #[error("the API token file {path} is damaged; delete it to get a new token")]
    Damaged { path: String },
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
}

/// `n` random bytes from the kernel, as lowercase hex.
pub fn random_hex(bytes: usize) -> Result<String, std::io::Error> {
    let mut buffer = vec![0u8; bytes];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut buffer)?;
    Ok(buffer.iter().map(|b| format!("{b:02x}")).collect())
}

/// The API token: read from `path`, or created there (`0600`) on first start.
pub struct ApiToken(String);

impl std::fmt::Debug for ApiToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApiToken([redacted])")
    }
}

impl ApiToken {
    pub fn load_or_create(path: &Path) -> Result<Self, TokenError> {
        let shown = path.display().to_string();
        let io = |context: &str, source| TokenError::Io {
            context: format!("{context} {shown}"),
            source,
        };
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| io("creating the folder of", e))?;
        }
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(path)
        {
            Ok(mut file) => {
                let token = random_hex(32).map_err(|e| io("reading randomness for", e))?;
                file.write_all(format!("{token}\n").as_bytes())
                    .map_err(|e| io("writing", e))?;
                file.sync_all().map_err(|e| io("writing", e))?;
                return Ok(Self(token));
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(io("creating", e)),
        }
        let metadata = std::fs::metadata(path).map_err(|e| io("reading", e))?;
        let mode = metadata.permissions().mode() & 0o777;
        if mode & 0o077 != 0 {
            return Err(TokenError::Insecure { path: shown, mode });
        }
        let me = std::fs::metadata("/proc/self")
            .map(|m| m.uid())
            .unwrap_or(metadata.uid());
        if metadata.uid() != me {
            return Err(TokenError::NotOurs {
                path: shown,
                owner: metadata.uid(),
            });
        }
        let text = std::fs::read_to_string(path).map_err(|e| io("reading", e))?;
        let token = text.trim();
        if token.len() != 64 || !token.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(TokenError::Damaged { path: shown });
        }
        Ok(Self(token.to_owned()))
    }

    /// A token made for this process only, never written anywhere (the desktop app's
    /// in-process server: only its own window is handed it).
    pub fn for_this_process() -> Result<Self, TokenError> {
        random_hex(32).map(Self).map_err(|source| TokenError::Io {
            context: "reading randomness for the API token".into(),
            source,
        })
    }

    /// True when `offered` is the token (constant time in its contents).
    pub fn matches(&self, offered: &str) -> bool {
        offered.len() == self.0.len() && bool::from(offered.as_bytes().ct_eq(self.0.as_bytes()))
    }

    /// The token itself, for a client in this process (tests, the desktop shell).
    pub fn expose(&self) -> &str {
        &self.0
    }
}

/// The hosts and origins this server answers for.
#[derive(Debug, Clone)]
pub struct Exposure {
    /// Accepted `Host` header values (`127.0.0.1:8080`, `localhost:8080`, …), lowercase.
    pub hosts: Vec<String>,
    /// Accepted `Origin` values (`http://127.0.0.1:8080`, …), lowercase.
    pub origins: Vec<String>,
    /// Origins of pages served elsewhere that may call this server (the desktop app's
    /// webview); answered with CORS headers. Empty for `paddock up`.
    pub cross_origins: Vec<String>,
}

impl Exposure {
    /// For a server at `port` under `names` (host names or IP literals; IPv6 in brackets).
    pub fn new(names: &[String], port: u16, tls: bool) -> Self {
        let scheme = if tls { "https" } else { "http" };
        let mut hosts = Vec::new();
        let mut origins = Vec::new();
        for name in names {
            let name = name.to_ascii_lowercase();
            hosts.push(format!("{name}:{port}"));
            origins.push(format!("{scheme}://{name}:{port}"));
            let default_port = if tls { 443 } else { 80 };
            if port == default_port {
                hosts.push(name.clone());
                origins.push(format!("{scheme}://{name}"));
            }
        }
        Self {
            hosts,
            origins,
            cross_origins: Vec::new(),
        }
    }

    /// These exposure rules plus `origins` as cross origins (lowercase).
    pub fn with_cross_origins(mut self, origins: &[String]) -> Self {
        self.cross_origins = origins.iter().map(|o| o.to_ascii_lowercase()).collect();
        self
    }
}

/// Single-use WebSocket tickets.
#[derive(Default)]
pub struct Tickets {
    issued: Mutex<HashMap<String, (String, Instant)>>,
}

impl Tickets {
    /// A new ticket for `session_id`.
    pub fn issue(&self, session_id: &str) -> Result<String, std::io::Error> {
        let ticket = random_hex(16)?;
        let mut issued = self.issued.lock().unwrap_or_else(PoisonError::into_inner);
        issued.retain(|_, (_, at)| at.elapsed() < TICKET_LIFETIME);
        issued.insert(ticket.clone(), (session_id.to_owned(), Instant::now()));
        Ok(ticket)
    }

    /// Uses up a ticket: true when it was issued for `session_id` and is still valid.
    pub fn redeem(&self, ticket: &str, session_id: &str) -> bool {
        let taken = self
            .issued
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(ticket);
        matches!(taken, Some((session, at)) if session == session_id && at.elapsed() < TICKET_LIFETIME)
    }
}

/// The request's query parameter names.
fn query_names(query: &str) -> impl Iterator<Item = &str> {
    query
        .split('&')
        .map(|pair| pair.split_once('=').map_or(pair, |(name, _)| name))
}

fn header_text<'a>(headers: &'a HeaderMap, name: &header::HeaderName) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// True when the request carries the bearer token.
pub fn has_token(state: &AppState, headers: &HeaderMap) -> bool {
    header_text(headers, &header::AUTHORIZATION)
        .and_then(|value| value.strip_prefix("Bearer "))
        .is_some_and(|offered| state.token.matches(offered.trim()))
}

fn unauthorized() -> Response {
    let mut response = ApiError::new(
        StatusCode::UNAUTHORIZED,
        "unauthorized",
        "send the API token as `Authorization: Bearer <token>` (`paddock up` printed where the \
         token file is)",
    )
    .into_response();
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        http::HeaderValue::from_static("Bearer"),
    );
    response
}

/// The guard every request passes: exposure checks, then the token. Static assets (the web
/// UI, when one is served) need no token; the events socket may use a ticket instead.
pub async fn guard(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let headers = request.headers();
    let host = header_text(headers, &header::HOST).map(str::to_ascii_lowercase);
    if !host
        .as_ref()
        .is_some_and(|h| state.exposure.hosts.contains(h))
    {
        return ApiError::new(
            StatusCode::FORBIDDEN,
            "forbidden_host",
            "the Host header does not name this server (a page on another site may be \
             trying to reach it through DNS rebinding); use the address `paddock up` printed",
        )
        .into_response();
    }
    let origin = header_text(headers, &header::ORIGIN).map(str::to_ascii_lowercase);
    let cross_origin = origin
        .clone()
        .filter(|o| state.exposure.cross_origins.contains(o));
    if let Some(origin) = &origin
        && cross_origin.is_none()
        && !state.exposure.origins.contains(origin)
    {
        return ApiError::new(
            StatusCode::FORBIDDEN,
            "forbidden_origin",
            "requests from another site's pages are refused (the Origin header is not this \
             server's)",
        )
        .into_response();
    }
    let query = request.uri().query().unwrap_or_default();
    if query_names(query).any(|name| {
        let name = name.to_ascii_lowercase();
        name == "token" || name == "access_token" || name == "api_token"
    }) {
        return ApiError::bad_request(
            "token_in_url",
            "the API token must never be put in a URL (URLs are logged); send it as \
             `Authorization: Bearer <token>`, and use a ticket for WebSockets",
        )
        .into_response();
    }
    let length =
        header_text(headers, &header::CONTENT_LENGTH).and_then(|v| v.parse::<usize>().ok());
    if length.is_some_and(|length| length > BODY_LIMIT) {
        return body_too_large().into_response();
    }
    let path = request.uri().path();
    let is_api = path == "/v1" || path.starts_with("/v1/");
    let ticketed_socket =
        path.ends_with("/events") && query_names(query).any(|name| name == "ticket");
    if let Some(origin) = &cross_origin
        && request.method() == http::Method::OPTIONS
    {
        return with_cors(StatusCode::NO_CONTENT.into_response(), origin, true);
    }
    let response = if is_api && !ticketed_socket && !has_token(&state, headers) {
        unauthorized()
    } else {
        next.run(request).await
    };
    match &cross_origin {
        Some(origin) => with_cors(response, origin, false),
        None => response,
    }
}

/// `response` with the CORS headers that let the page at `origin` read it (and, for a
/// preflight, send the token and JSON bodies with every method the API has).
fn with_cors(mut response: Response, origin: &str, preflight: bool) -> Response {
    let headers = response.headers_mut();
    if let Ok(value) = http::HeaderValue::from_str(origin) {
        headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, value);
    }
    headers.insert(header::VARY, http::HeaderValue::from_static("Origin"));
    if preflight {
        headers.insert(
            header::ACCESS_CONTROL_ALLOW_METHODS,
            http::HeaderValue::from_static("GET, POST, PUT, PATCH, DELETE"),
        );
        headers.insert(
            header::ACCESS_CONTROL_ALLOW_HEADERS,
            http::HeaderValue::from_static("authorization, content-type"),
        );
        headers.insert(
            header::ACCESS_CONTROL_MAX_AGE,
            http::HeaderValue::from_static("600"),
        );
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_file_is_created_owner_only_and_a_readable_one_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state/api-token");
        let token = ApiToken::load_or_create(&path).unwrap();
        assert_eq!(token.expose().len(), 64);
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
        let again = ApiToken::load_or_create(&path).unwrap();
        assert!(again.matches(token.expose()));
        assert!(!again.matches(&token.expose()[..63]));
        assert!(!again.matches(&"0".repeat(64)));
        assert!(!format!("{again:?}").contains(token.expose()));

        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let refused = ApiToken::load_or_create(&path).unwrap_err().to_string();
        assert!(refused.contains("chmod 600"), "{refused}");
        assert!(!refused.contains(token.expose()));
    }

    #[test]
    fn tickets_are_single_use_and_bound_to_their_session() {
        let tickets = Tickets::default();
        let ticket = tickets.issue("s1").unwrap();
        assert!(!tickets.redeem(&ticket, "s2"), "another session's");
        let ticket = tickets.issue("s1").unwrap();
        assert!(tickets.redeem(&ticket, "s1"));
        assert!(!tickets.redeem(&ticket, "s1"), "used once");
        assert!(!tickets.redeem("made-up", "s1"));
    }
}
