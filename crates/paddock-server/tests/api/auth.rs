//! Attacks on the API's door, each refused: no token, a wrong one, the token in the query
//! string, a foreign `Origin`, a foreign `Host` (DNS rebinding), an oversized body, a
//! WebSocket without auth (or with a used or another session's ticket), a non-loopback
//! address without TLS. And the token file is owner-only. Error bodies are snapshots: what a
//! client (and a person) reads.

#![allow(clippy::unwrap_used, reason = "test code: a panic is a failed test")]

use crate::common;

use std::os::unix::fs::PermissionsExt;

use common::{TestServer, temp_dir};
use paddock_host::{Host, HostOptions};
use paddock_server::auth::BODY_LIMIT;
use paddock_server::{ServeError, Server, ServerConfig};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

async fn body(response: reqwest::Response) -> (u16, Value) {
    let status = response.status().as_u16();
    (status, response.json().await.unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_without_the_right_token_are_refused() {
    let server = TestServer::start().await;
    let client = &server.client;
    let url = server.url("/v1/sessions");

    let (status, none) = body(client.get(&url).send().await.unwrap()).await;
    assert_eq!(status, 401);
    insta::assert_json_snapshot!("no_token", none);

    let wrong = "0".repeat(64);
    let (status, refused) = body(client.get(&url).bearer_auth(&wrong).send().await.unwrap()).await;
    assert_eq!(
        (status, &refused),
        (401, &none),
        "same answer for a wrong token"
    );
    let almost = format!("{}x", &server.token[..63]);
    let (status, _) = body(client.get(&url).bearer_auth(&almost).send().await.unwrap()).await;
    assert_eq!(status, 401);
    let (status, _) = body(
        client
            .get(&url)
            .header("Authorization", format!("Basic {}", server.token))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 401, "only a bearer token counts");

    // The token in a URL is refused even when the header is right too.
    let leaked = format!("{url}?token={}", server.token);
    let (status, in_url) = body(
        client
            .get(&leaked)
            .bearer_auth(&server.token)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 400);
    insta::assert_json_snapshot!("token_in_url", in_url);
    let (status, _) = body(
        client
            .get(format!("{url}?access_token={}", server.token))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 400);

    // Static paths need no token but reveal nothing; unknown API paths still need one.
    let front = client.get(server.url("/")).send().await.unwrap();
    assert_eq!(front.status().as_u16(), 200);
    let (status, _) = body(client.get(server.url("/v1/nothing")).send().await.unwrap()).await;
    assert_eq!(status, 401);
    let listed = server.call(server.get("/v1/sessions"), 200).await;
    assert_eq!(listed, json!([]));
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn foreign_origins_and_hosts_are_refused_even_with_the_token() {
    let server = TestServer::start().await;
    let url = server.url("/v1/health");
    let (status, origin) = body(
        server
            .get("/v1/health")
            .header("Origin", "http://evil.example")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 403);
    insta::assert_json_snapshot!("foreign_origin", origin);
    // A DNS-rebinding page: the browser sends the attacker's name as Host.
    let (status, host) = body(
        server
            .client
            .get(&url)
            .bearer_auth(&server.token)
            .header(
                "Host",
                format!("rebind.evil.example:{}", server.addr.port()),
            )
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 403);
    insta::assert_json_snapshot!("foreign_host", host);
    // The served origin and localhost are accepted.
    let port = server.addr.port();
    for origin in [
        format!("http://127.0.0.1:{port}"),
        format!("http://localhost:{port}"),
    ] {
        let ok = server
            .get("/v1/health")
            .header("Origin", origin)
            .send()
            .await
            .unwrap();
        assert_eq!(ok.status().as_u16(), 200);
    }
    let ok = server
        .get("/v1/health")
        .header("Host", format!("localhost:{port}"))
        .send()
        .await
        .unwrap();
    assert_eq!(ok.status().as_u16(), 200);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_and_malformed_bodies_are_refused_with_json_errors() {
    let server = TestServer::start().await;
    // A body over the limit, declared with its length and sent chunked. The client sends one
    // byte past the limit and then holds the rest back, as a slow client would: the server
    // must answer 413 from what it has read, and the client reads that answer (sending the
    // whole body would race the server's close with a broken pipe on the client's side).
    let big =
        serde_json::to_vec(&json!({"folders": [], "model": "x".repeat(2 * 1024 * 1024)})).unwrap();
    let (status, too_large) =
        past_the_limit(&server, &big[..BODY_LIMIT + 1], Some(big.len())).await;
    assert_eq!(status, 413);
    insta::assert_json_snapshot!("body_too_large", too_large);
    // Without a Content-Length (chunked), the limit holds too.
    let spaces = vec![b' '; BODY_LIMIT + 1];
    let (status, chunked) = past_the_limit(&server, &spaces, None).await;
    assert_eq!(status, 413);
    assert_eq!(chunked["code"], "body_too_large", "{chunked}");

    let (status, wrong_field) = body(
        server
            .post("/v1/sessions", &json!({"folders": [{"path": 3}]}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(wrong_field["code"], "invalid_json");
    assert!(
        wrong_field["message"].as_str().unwrap().contains("folders"),
        "{wrong_field}"
    );
    let (status, no_folders) = body(
        server
            .post("/v1/sessions", &json!({}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 400);
    insta::assert_json_snapshot!("no_folders", no_folders);
    let (status, method) = body(
        server
            .client
            .delete(server.url("/v1/sessions"))
            .bearer_auth(&server.token)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 405);
    assert_eq!(method["code"], "method_not_allowed");
    let (status, missing) = body(
        server
            .get("/v1/sessions/no-such-session")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 404);
    insta::assert_json_snapshot!("session_not_found", missing);
    // A path parameter of the wrong type is a JSON error too (axum's own is plain text).
    let not_a_number = server.get("/v1/audit/abc").send().await.unwrap();
    assert_eq!(
        not_a_number.headers()["content-type"],
        "application/json",
        "a bad path parameter must be answered in JSON"
    );
    let (status, not_a_number) = body(not_a_number).await;
    assert_eq!(status, 400);
    insta::assert_json_snapshot!("invalid_path", not_a_number);
    server.stop().await;
}

/// Sends a request whose body goes past the limit over a plain TCP connection: the head (with
/// `declared` as the Content-Length, else chunked), then `sent`, and then nothing more while
/// the connection stays open, as a slow client would. Returns the status and the JSON body of
/// the server's answer, read before the server closes the connection.
async fn past_the_limit(server: &TestServer, sent: &[u8], declared: Option<usize>) -> (u16, Value) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    let framing = match declared {
        Some(length) => format!("Content-Length: {length}"),
        None => "Transfer-Encoding: chunked".to_string(),
    };
    let head = format!(
        "POST /v1/sessions HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {}\r\n\
         Content-Type: application/json\r\n{framing}\r\n\r\n",
        server.addr, server.token
    );
    let mut request = head.into_bytes();
    if declared.is_some() {
        request.extend_from_slice(sent);
    } else {
        for chunk in sent.chunks(64 * 1024) {
            request.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
            request.extend_from_slice(chunk);
            request.extend_from_slice(b"\r\n");
        }
    }
    let (mut reader, mut writer) = stream.split();
    let write = async {
        // The server may answer and close before it has read all of this; that is its right.
        let _ = writer.write_all(&request).await;
        std::future::pending::<()>().await
    };
    let mut answer = Vec::new();
    let read = async {
        let mut buffer = [0u8; 8192];
        loop {
            match reader.read(&mut buffer).await {
                Ok(0) | Err(_) => break,
                Ok(n) => answer.extend_from_slice(&buffer[..n]),
            }
            if complete_response(&answer) {
                break;
            }
        }
    };
    tokio::select! {
        () = write => unreachable!("the writer never finishes"),
        () = read => {}
    }
    let text = String::from_utf8_lossy(&answer).into_owned();
    let (head, body) = text
        .split_once("\r\n\r\n")
        .unwrap_or_else(|| panic!("no complete answer: {text:?}"));
    let status: u16 = head
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("no status line: {head:?}"));
    let json = serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body:?}"));
    (status, json)
}

/// Whether `answer` holds a response head and a body of its declared Content-Length.
fn complete_response(answer: &[u8]) -> bool {
    let text = String::from_utf8_lossy(answer);
    let Some((head, body)) = text.split_once("\r\n\r\n") else {
        return false;
    };
    head.lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse::<usize>().ok())?
        })
        .is_some_and(|length| body.len() >= length)
}

async fn ticket(server: &TestServer, session: &str) -> String {
    let answer = server
        .call(
            server.post(
                &format!("/v1/sessions/{session}/events/ticket"),
                &Value::Null,
            ),
            200,
        )
        .await;
    answer["ticket"].as_str().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_websocket_without_auth_or_with_a_spent_ticket_is_refused() {
    let server = TestServer::start().await;
    let work = temp_dir();
    let session = server
        .create_session(
            &[(&work.path().canonicalize().unwrap(), "read_write")],
            "ask",
        )
        .await;
    let other = server
        .create_session(
            &[(&work.path().canonicalize().unwrap(), "read_write")],
            "ask",
        )
        .await;
    let addr = server.addr;
    let socket = |query: String| {
        let url = format!("ws://{addr}/v1/sessions/{session}/events?{query}");
        async move {
            match tokio_tungstenite::connect_async(url.into_client_request().unwrap()).await {
                Ok(_) => 101,
                Err(tokio_tungstenite::tungstenite::Error::Http(response)) => {
                    response.status().as_u16()
                }
                Err(e) => panic!("{e}"),
            }
        }
    };
    assert_eq!(socket("after=0".into()).await, 401, "no auth");
    assert_eq!(socket("after=0&ticket=made-up".into()).await, 401);
    assert_eq!(
        socket(format!("after=0&token={}", server.token)).await,
        400,
        "never the token in the URL"
    );
    let foreign = ticket(&server, &other).await;
    assert_eq!(
        socket(format!("after=0&ticket={foreign}")).await,
        401,
        "another session's ticket"
    );
    let good = ticket(&server, &session).await;
    assert_eq!(socket(format!("after=0&ticket={good}")).await, 101);
    assert_eq!(
        socket(format!("after=0&ticket={good}")).await,
        401,
        "a ticket is single use"
    );
    // A client that can set headers may use the bearer token.
    let mut request = format!("ws://{}/v1/sessions/{session}/events", server.addr)
        .into_client_request()
        .unwrap();
    request.headers_mut().insert(
        "Authorization",
        format!("Bearer {}", server.token).parse().unwrap(),
    );
    assert!(tokio_tungstenite::connect_async(request).await.is_ok());
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_non_loopback_address_needs_tls_and_the_token_file_is_owner_only() {
    let root = temp_dir();
    let paths = paddock_host::paths::Paths::under(root.path());
    let host = Host::open(HostOptions::new(paths.clone())).await.unwrap();
    let mut config = ServerConfig::loopback(0);
    config.listen = "0.0.0.0:0".parse().unwrap();
    config.names = vec!["paddock.example".into()];
    let Err(refused) = Server::bind(host.clone(), config.clone()).await else {
        panic!("a non-loopback address without TLS was served")
    };
    assert!(matches!(refused, ServeError::RemoteWithoutTls { .. }));
    insta::assert_snapshot!(
        "remote_without_tls",
        refused.to_string().replace("0.0.0.0:0", "ADDR")
    );
    assert!(
        !paths.api_token_file().exists(),
        "nothing is created for a refused start"
    );
    // --insecure-remote serves it, loudly.
    config.insecure_remote = true;
    let server = Server::bind(host.clone(), config).await.unwrap();
    assert!(
        server.warnings().iter().any(|w| w.contains("WITHOUT TLS")),
        "{:?}",
        server.warnings()
    );
    let mode = std::fs::metadata(paths.api_token_file())
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    assert_eq!(server.token().len(), 64);
    drop(server);
    // A token file others can read is refused at start.
    std::fs::set_permissions(
        paths.api_token_file(),
        std::fs::Permissions::from_mode(0o644),
    )
    .unwrap();
    let Err(refused) = Server::bind(host, ServerConfig::loopback(0)).await else {
        panic!("a readable token file was used")
    };
    let refused = refused.to_string();
    assert!(refused.contains("chmod 600"), "{refused}");
}
