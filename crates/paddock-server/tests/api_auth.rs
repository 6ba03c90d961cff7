//! Attacks on the API's door, each refused: no token, a wrong one, the token in the query
//! string, a foreign `Origin`, a foreign `Host` (DNS rebinding), an oversized body, a
//! WebSocket without auth (or with a used or another session's ticket), a non-loopback
//! address without TLS. And the token file is owner-only. Error bodies are snapshots: what a
//! client (and a person) reads.

#![allow(clippy::unwrap_used, reason = "test code: a panic is a failed test")]

mod common;

use std::os::unix::fs::PermissionsExt;

use common::{TestServer, temp_dir};
use paddock_host::{Host, HostOptions};
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
    let big = json!({"folders": [], "model": "x".repeat(2 * 1024 * 1024)});
    let (status, too_large) = body(server.post("/v1/sessions", &big).send().await.unwrap()).await;
    assert_eq!(status, 413);
    insta::assert_json_snapshot!("body_too_large", too_large);
    // Without a Content-Length (chunked), the limit holds too.
    let chunks =
        futures::stream::iter((0..40).map(|_| Ok::<_, std::io::Error>(vec![b' '; 64 * 1024])));
    let response = server
        .client
        .post(server.url("/v1/sessions"))
        .bearer_auth(&server.token)
        .header("Content-Type", "application/json")
        .body(reqwest::Body::wrap_stream(chunks))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 413);

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
    server.stop().await;
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
