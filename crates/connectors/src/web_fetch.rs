//! The built-in `web_fetch`: an HTTP GET, from the host, of a URL the session's network
//! allow-list allows. Every hop (the first request and each redirect) is checked by name
//! against the allow-list, then resolved, and every address it resolves to is checked
//! (loopback, link-local such as cloud metadata, private and reserved addresses are refused
//! unless the allow-list's rules name them); the connection goes only to the addresses
//! checked. No proxy from the environment is used (a proxy would resolve names itself).
//! The body is capped in size and the whole fetch in time; HTML becomes readable text.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use futures::future::BoxFuture;
use reqwest::Url;
use sandbox_policy::{Decision, NetworkAllowList};
use serde_json::{Value, json};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// Resolves a host name to addresses. The system's resolver in production; tests inject
/// their own answers (a name that resolves to a private address).
pub trait Resolver: Send + Sync {
    fn resolve(&self, host: &str, port: u16) -> BoxFuture<'static, Result<Vec<IpAddr>, String>>;
}

/// The system's resolver (`getaddrinfo` through tokio).
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemResolver;

impl Resolver for SystemResolver {
    fn resolve(&self, host: &str, port: u16) -> BoxFuture<'static, Result<Vec<IpAddr>, String>> {
        let target = format!("{host}:{port}");
        Box::pin(async move {
            let addrs = tokio::net::lookup_host(target)
                .await
                .map_err(|e| e.to_string())?;
            Ok(addrs.map(|a| a.ip()).collect())
        })
    }
}

/// Limits of one fetch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebFetchOptions {
    /// Largest body read, in bytes; a larger one is refused.
    pub max_bytes: usize,
    /// The whole fetch (every hop, the body) must finish within this.
    pub timeout: Duration,
    pub max_redirects: u32,
    /// Loopback ports the user serves documentation on (`[web_fetch] local_ports`): the only
    /// loopback destinations a fetch may reach, and only when the allow-list allows the
    /// host by name.
    pub local_ports: Vec<u16>,
}

impl Default for WebFetchOptions {
    fn default() -> Self {
        Self {
            max_bytes: 2 * 1024 * 1024,
            timeout: Duration::from_secs(20),
            max_redirects: 5,
            local_ports: Vec::new(),
        }
    }
}

/// Why a fetch was refused or failed. Each names the URL or host it is about.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WebFetchError {
    #[error("`{url}` is not a URL web_fetch can fetch: {reason}")]
    BadUrl { url: String, reason: String },
    #[error("`{url}` is refused: {reason}")]
    NotAllowed { url: String, reason: String },
    #[error("`{host}` could not be resolved: {reason}")]
    Resolve { host: String, reason: String },
    #[error("`{url}` is refused after resolving `{host}`: {reason}")]
    AddressRefused {
        url: String,
        host: String,
        reason: String,
    },
    #[error("more than {0} redirects")]
    TooManyRedirects(u32),
    #[error("the body of `{url}` is larger than the {limit} bytes web_fetch reads")]
    TooLarge { url: String, limit: usize },
    #[error("fetching `{url}` took longer than {secs}s and was abandoned")]
    TimedOut { url: String, secs: u64 },
    #[error("`{url}` answered {status}")]
    Status { url: String, status: u16 },
    #[error("`{url}` is {content_type}, which web_fetch does not read (text, HTML, JSON, XML)")]
    Unsupported { url: String, content_type: String },
    #[error("fetching `{url}` failed: {reason}")]
    Http { url: String, reason: String },
    #[error("cancelled")]
    Cancelled,
}

/// A fetched page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetched {
    /// The URL the body came from (after redirects).
    pub url: String,
    pub content_type: String,
    /// The body as readable text.
    pub text: String,
}

/// The fetcher of one session: its allow-list, resolver and limits.
#[derive(Clone)]
pub struct WebFetch {
    allow: NetworkAllowList,
    resolver: Arc<dyn Resolver>,
    options: WebFetchOptions,
}

impl std::fmt::Debug for WebFetch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebFetch")
            .field("profile", &self.allow.profile())
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

/// The tool's name, description and input schema, as offered to the model.
pub fn tool_spec() -> (&'static str, &'static str, Value) {
    (
        crate::naming::WEB_FETCH,
        "Fetch a web page or text document over HTTP(S) GET from the host (outside the \
         sandbox) and return it as readable text. Only hosts the session's network profile \
         allows can be fetched; every call needs the user's approval.",
        json!({
            "type": "object",
            "properties": {
                "url": {"type": "string", "description": "The http or https URL to fetch."}
            },
            "required": ["url"],
            "additionalProperties": false
        }),
    )
}

impl WebFetch {
    pub fn new(
        allow: NetworkAllowList,
        resolver: Arc<dyn Resolver>,
        options: WebFetchOptions,
    ) -> Self {
        Self {
            allow,
            resolver,
            options,
        }
    }

    pub fn options(&self) -> &WebFetchOptions {
        &self.options
    }

    /// Fetches `url`, following at most `max_redirects` redirects, each checked again.
    pub async fn fetch(
        &self,
        url: &str,
        cancel: &CancellationToken,
    ) -> Result<Fetched, WebFetchError> {
        let deadline = Instant::now() + self.options.timeout;
        tokio::select! {
            () = cancel.cancelled() => Err(WebFetchError::Cancelled),
            result = self.fetch_until(url, deadline) => result,
        }
    }

    async fn fetch_until(&self, url: &str, deadline: Instant) -> Result<Fetched, WebFetchError> {
        let mut current = parse(url)?;
        let mut hops = 0;
        loop {
            let response = self.hop(&current, deadline).await?;
            if response.status().is_redirection()
                && let Some(location) = response.headers().get(http::header::LOCATION)
            {
                hops += 1;
                if hops > self.options.max_redirects {
                    return Err(WebFetchError::TooManyRedirects(self.options.max_redirects));
                }
                let location = location.to_str().unwrap_or_default().to_owned();
                current = current.join(&location).map_err(|e| WebFetchError::BadUrl {
                    url: location.clone(),
                    reason: format!("the redirect's target is not a URL: {e}"),
                })?;
                check_scheme(&current)?;
                continue;
            }
            return self.read(current, response, deadline).await;
        }
    }

    /// Checks one hop's destination and sends the request to the checked addresses only.
    async fn hop(&self, url: &Url, deadline: Instant) -> Result<reqwest::Response, WebFetchError> {
        let shown = url.as_str().to_owned();
        let host = url.host_str().unwrap_or_default().to_owned();
        let port = url.port_or_known_default().unwrap_or(80);
        let bare = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_owned();
        if let Decision::Denied { reason } = self.allow.check_host(&bare, port) {
            return Err(WebFetchError::NotAllowed { url: shown, reason });
        }
        let addrs = match bare.parse::<IpAddr>() {
            Ok(ip) => vec![ip],
            Err(_) => {
                let resolving = self.resolver.resolve(&bare, port);
                let resolved = tokio::time::timeout_at(deadline, resolving)
                    .await
                    .map_err(|_| self.timed_out(&shown))?;
                resolved.map_err(|reason| WebFetchError::Resolve {
                    host: bare.clone(),
                    reason,
                })?
            }
        };
        if addrs.is_empty() {
            return Err(WebFetchError::Resolve {
                host: bare,
                reason: "no addresses".into(),
            });
        }
        // Every address must pass: a name that resolves to a public and a private address is
        // refused, not raced.
        for ip in &addrs {
            if ip.is_loopback() && self.options.local_ports.contains(&port) {
                continue;
            }
            if let Decision::Denied { reason } = self.allow.check_ip(&bare, port, *ip) {
                return Err(WebFetchError::AddressRefused {
                    url: shown,
                    host: bare,
                    reason,
                });
            }
        }
        let sockets: Vec<SocketAddr> = addrs.iter().map(|ip| SocketAddr::new(*ip, port)).collect();
        let client = crate::tls::builder(false)
            .map_err(|e| WebFetchError::Http {
                url: shown.clone(),
                reason: e.to_string(),
            })?
            .redirect(reqwest::redirect::Policy::none())
            .resolve_to_addrs(&bare, &sockets)
            .build()
            .map_err(|e| WebFetchError::Http {
                url: shown.clone(),
                reason: e.to_string(),
            })?;
        let sending = client
            .get(url.clone())
            .header(
                http::header::ACCEPT,
                "text/html, text/plain, application/json, */*;q=0.5",
            )
            .send();
        tokio::time::timeout_at(deadline, sending)
            .await
            .map_err(|_| self.timed_out(&shown))?
            .map_err(|e| WebFetchError::Http {
                url: shown,
                reason: describe(&e),
            })
    }

    /// Reads the body within the size and time limits and turns it into text.
    async fn read(
        &self,
        url: Url,
        response: reqwest::Response,
        deadline: Instant,
    ) -> Result<Fetched, WebFetchError> {
        let shown = url.as_str().to_owned();
        let status = response.status();
        if !status.is_success() {
            return Err(WebFetchError::Status {
                url: shown,
                status: status.as_u16(),
            });
        }
        let limit = self.options.max_bytes;
        if response.content_length().is_some_and(|n| n > limit as u64) {
            return Err(WebFetchError::TooLarge { url: shown, limit });
        }
        let content_type = response
            .headers()
            .get(http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("text/plain")
            .to_ascii_lowercase();
        let kind = content_type
            .split(';')
            .next()
            .unwrap_or_default()
            .trim()
            .to_owned();
        let is_html = kind == "text/html" || kind == "application/xhtml+xml";
        let readable = is_html
            || kind.starts_with("text/")
            || kind == "application/json"
            || kind.ends_with("+json")
            || kind.ends_with("xml");
        if !readable {
            return Err(WebFetchError::Unsupported {
                url: shown,
                content_type: kind,
            });
        }
        let mut body = Vec::new();
        let mut stream = response.bytes_stream();
        loop {
            let next = tokio::time::timeout_at(deadline, stream.next())
                .await
                .map_err(|_| self.timed_out(&shown))?;
            let Some(chunk) = next else { break };
            let chunk = chunk.map_err(|e| WebFetchError::Http {
                url: shown.clone(),
                reason: describe(&e),
            })?;
            if body.len() + chunk.len() > limit {
                return Err(WebFetchError::TooLarge { url: shown, limit });
            }
            body.extend_from_slice(&chunk);
        }
        let text = if is_html {
            html2text::from_read(body.as_slice(), 100)
                .unwrap_or_else(|_| String::from_utf8_lossy(&body).into_owned())
        } else {
            String::from_utf8_lossy(&body).into_owned()
        };
        Ok(Fetched {
            url: shown,
            content_type: kind,
            text,
        })
    }

    fn timed_out(&self, url: &str) -> WebFetchError {
        WebFetchError::TimedOut {
            url: url.to_owned(),
            secs: self.options.timeout.as_secs().max(1),
        }
    }
}

fn parse(url: &str) -> Result<Url, WebFetchError> {
    let parsed = Url::parse(url.trim()).map_err(|e| WebFetchError::BadUrl {
        url: url.to_owned(),
        reason: e.to_string(),
    })?;
    check_scheme(&parsed)?;
    Ok(parsed)
}

fn check_scheme(url: &Url) -> Result<(), WebFetchError> {
    let bad = |reason: &str| {
        Err(WebFetchError::BadUrl {
            url: url.as_str().to_owned(),
            reason: reason.to_owned(),
        })
    };
    if !matches!(url.scheme(), "http" | "https") {
        return bad("only http and https are fetched");
    }
    if url.host_str().is_none_or(str::is_empty) {
        return bad("it names no host");
    }
    if !url.username().is_empty() || url.password().is_some() {
        return bad("a URL with credentials is not fetched");
    }
    Ok(())
}

/// A reqwest error with its causes (the top line alone is often "error sending request").
fn describe(error: &reqwest::Error) -> String {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// What the model reads for a fetched page.
pub fn render(fetched: &Fetched) -> String {
    format!(
        "URL: {}\nContent-Type: {}\n\n{}",
        fetched.url, fetched.content_type, fetched.text
    )
}
