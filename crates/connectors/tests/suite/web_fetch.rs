//! Attacks on `web_fetch`: each must be refused with an error that names what was refused.
//! A real HTTP server on loopback plays the allowed documentation host (`docs.test`, reached
//! through `[web_fetch] local_ports`); names resolve through an injected resolver, so a name
//! can be made to resolve to a private address.

#![allow(clippy::unwrap_used, reason = "test code: a panic is a failed test")]

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use paddock_connectors::web_fetch::{Resolver, WebFetch, WebFetchError, WebFetchOptions};
use sandbox_policy::{HostRule, NetworkAllowList, SandboxData};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

/// Answers from a fixed table, like a DNS server the attacker controls.
struct TableResolver(HashMap<String, IpAddr>);

impl Resolver for TableResolver {
    fn resolve(&self, host: &str, _port: u16) -> BoxFuture<'static, Result<Vec<IpAddr>, String>> {
        let answer = self
            .0
            .get(host)
            .map(|ip| vec![*ip])
            .ok_or_else(|| format!("no such host {host}"));
        Box::pin(async move { answer })
    }
}

/// A loopback HTTP/1.1 server answering by path.
async fn serve() -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            tokio::spawn(async move {
                let mut request = vec![0u8; 4096];
                let n = stream.read(&mut request).await.unwrap_or(0);
                let request = String::from_utf8_lossy(&request[..n]).into_owned();
                let path = request.split_whitespace().nth(1).unwrap_or("/").to_owned();
                let redirect = |to: String| {
                    format!("HTTP/1.1 302 Found\r\nLocation: {to}\r\nContent-Length: 0\r\n\r\n")
                };
                let head = match path.as_str() {
                    "/ok" => {
                        let body = "<html><body><h1>Guide</h1><p>Read me.</p></body></html>";
                        format!(
                            "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\r\n{body}",
                            body.len()
                        )
                    }
                    "/to-metadata" => redirect("http://169.254.169.254/latest/meta-data/".into()),
                    "/to-loopback" => redirect(format!("http://127.0.0.1:{port}/ok")),
                    "/to-outside" => redirect("https://outside.example/".into()),
                    "/to-private-name" => redirect("https://github.com/ok".into()),
                    "/big" => "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 100000\r\n\r\n".into(),
                    "/big-unsized" | "/slow" => {
                        "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n".into()
                    }
                    _ => "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n".into(),
                };
                if stream.write_all(head.as_bytes()).await.is_err() {
                    return;
                }
                match path.as_str() {
                    "/big" | "/big-unsized" => {
                        let _ = stream.write_all(&[b'x'; 100_000]).await;
                    }
                    "/slow" => loop {
                        tokio::time::sleep(Duration::from_millis(200)).await;
                        if stream.write_all(b"x").await.is_err() {
                            return;
                        }
                    },
                    _ => {}
                }
                let _ = stream.shutdown().await;
            });
        }
    });
    port
}

/// The `strict` profile (which names `github.com`) plus `docs.test` on the server's port.
fn fetcher(port: u16, options: &WebFetchOptions) -> WebFetch {
    let data = SandboxData::builtin().unwrap();
    let profile = data.profile_named("strict").unwrap();
    let extra: Vec<HostRule> = [format!("docs.test:{port}")]
        .iter()
        .map(|h| HostRule::parse_in("extra host", h).unwrap())
        .collect();
    let list = NetworkAllowList::resolve(profile, &extra, &[], &[], &data.companions).unwrap();
    let resolver = TableResolver(HashMap::from([
        ("docs.test".to_owned(), "127.0.0.1".parse().unwrap()),
        // A profile host whose DNS answer was poisoned to a private address.
        ("github.com".to_owned(), "10.0.0.7".parse().unwrap()),
        (
            "outside.example".to_owned(),
            "93.184.215.14".parse().unwrap(),
        ),
    ]));
    WebFetch::new(
        list,
        Arc::new(resolver),
        WebFetchOptions {
            local_ports: vec![port],
            max_bytes: 10_000,
            ..options.clone()
        },
    )
}

async fn fetch(port: u16, path: &str) -> Result<String, WebFetchError> {
    fetch_with(port, path, WebFetchOptions::default()).await
}

async fn fetch_with(
    port: u16,
    path: &str,
    options: WebFetchOptions,
) -> Result<String, WebFetchError> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    fetcher(port, &options)
        .fetch(
            &format!("http://docs.test:{port}{path}"),
            &CancellationToken::new(),
        )
        .await
        .map(|f| f.text)
}

#[tokio::test]
async fn an_allowed_page_is_fetched_as_text() {
    let port = serve().await;
    let text = fetch(port, "/ok").await.unwrap();
    assert!(
        text.contains("Guide") && text.contains("Read me."),
        "{text}"
    );
    assert!(!text.contains("<p>"), "HTML becomes text: {text}");
}

#[tokio::test]
async fn a_redirect_to_the_metadata_address_is_refused() {
    let port = serve().await;
    let err = fetch(port, "/to-metadata").await.unwrap_err();
    assert!(matches!(err, WebFetchError::NotAllowed { .. }), "{err:?}");
    assert!(
        err.to_string()
            .contains("`http://169.254.169.254/latest/meta-data/` is refused"),
        "{err}"
    );
}

#[tokio::test]
async fn a_redirect_to_loopback_is_refused() {
    let port = serve().await;
    let err = fetch(port, "/to-loopback").await.unwrap_err();
    assert!(matches!(err, WebFetchError::NotAllowed { .. }), "{err:?}");
    assert!(
        err.to_string()
            .contains(&format!("`http://127.0.0.1:{port}/ok` is refused")),
        "{err}"
    );
}

#[tokio::test]
async fn a_redirect_outside_the_profile_is_refused() {
    let port = serve().await;
    let err = fetch(port, "/to-outside").await.unwrap_err();
    assert!(matches!(err, WebFetchError::NotAllowed { .. }), "{err:?}");
    assert!(
        err.to_string()
            .contains("`https://outside.example/` is refused"),
        "{err}"
    );
}

#[tokio::test]
async fn a_name_resolving_to_a_private_address_is_refused() {
    let port = serve().await;
    // Directly, and as a redirect's target.
    let direct = fetcher(port, &WebFetchOptions::default())
        .fetch("https://github.com/ok", &CancellationToken::new())
        .await
        .unwrap_err();
    let redirected = fetch(port, "/to-private-name").await.unwrap_err();
    for err in [direct, redirected] {
        assert!(
            matches!(err, WebFetchError::AddressRefused { .. }),
            "{err:?}"
        );
        let text = err.to_string();
        assert!(text.contains("after resolving `github.com`"), "{text}");
        assert!(text.contains("10.0.0.7"), "{text}");
    }
}

#[tokio::test]
async fn an_oversized_body_is_refused_with_or_without_a_length() {
    let port = serve().await;
    for path in ["/big", "/big-unsized"] {
        let err = fetch(port, path).await.unwrap_err();
        assert!(
            matches!(err, WebFetchError::TooLarge { limit: 10_000, .. }),
            "{path}: {err:?}"
        );
        assert!(
            err.to_string().contains("larger than the 10000 bytes"),
            "{err}"
        );
    }
}

#[tokio::test]
async fn a_slow_body_is_abandoned_at_the_time_limit() {
    let port = serve().await;
    let options = WebFetchOptions {
        timeout: Duration::from_secs(1),
        ..WebFetchOptions::default()
    };
    let err = fetch_with(port, "/slow", options).await.unwrap_err();
    assert!(
        matches!(err, WebFetchError::TimedOut { secs: 1, .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("took longer than 1s"), "{err}");
}

#[tokio::test]
async fn urls_it_never_fetches_are_refused_before_any_connection() {
    let port = serve().await;
    let fetcher = fetcher(port, &WebFetchOptions::default());
    for url in [
        "file:///etc/passwd",
        "ftp://docs.test/x",
        "http://user:pw@docs.test/",
        "not a url",
    ] {
        let err = fetcher
            .fetch(url, &CancellationToken::new())
            .await
            .unwrap_err();
        assert!(
            matches!(err, WebFetchError::BadUrl { .. }),
            "{url}: {err:?}"
        );
    }
}
