//! The web UI as `paddock up` serves it (the build embedded in the binary), and the desktop
//! app's webview as a cross origin: what a browser is answered, and what is still refused.

#![allow(clippy::unwrap_used, reason = "test code: a panic is a failed test")]

use crate::common;

use std::sync::Arc;

use common::TestServer;
use paddock_server::{EmbeddedUi, ServerConfig};
use serde_json::Value;

const DESKTOP_ORIGIN: &str = "tauri://localhost";

fn with_ui() -> ServerConfig {
    let mut config = ServerConfig::loopback(0);
    config.assets = Some(Arc::new(EmbeddedUi));
    config
}

fn header(response: &reqwest::Response, name: &str) -> String {
    response
        .headers()
        .get(name)
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_embedded_ui_is_served_with_etags_its_policy_and_deep_links() {
    let server = TestServer::start_serving("", with_ui()).await;
    let client = &server.client;

    let page = client.get(server.url("/")).send().await.unwrap();
    assert_eq!(page.status().as_u16(), 200, "no token needed for the UI");
    assert_eq!(header(&page, "content-type"), "text/html; charset=utf-8");
    assert_eq!(
        header(&page, "content-security-policy"),
        paddock_ui_assets::CONTENT_SECURITY_POLICY
    );
    assert_eq!(header(&page, "cache-control"), "no-cache");
    assert_eq!(header(&page, "referrer-policy"), "no-referrer");
    let etag = header(&page, "etag");
    assert_eq!(etag, paddock_ui_assets::index().unwrap().etag);
    let html = page.text().await.unwrap();
    assert!(html.contains("<div id=\"root\">"), "{html}");

    // Revalidation: the same bytes answer 304 with no body.
    let again = client
        .get(server.url("/"))
        .header("If-None-Match", &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status().as_u16(), 304);
    assert_eq!(header(&again, "etag"), etag);
    assert!(again.bytes().await.unwrap().is_empty());
    let stale = client
        .get(server.url("/"))
        .header("If-None-Match", "\"sha256-stale\"")
        .send()
        .await
        .unwrap();
    assert_eq!(stale.status().as_u16(), 200);

    // A deep link loads the app; a content-hashed script is cached forever.
    let deep = client
        .get(server.url("/sessions/abc"))
        .send()
        .await
        .unwrap();
    assert_eq!(deep.status().as_u16(), 200);
    assert_eq!(header(&deep, "etag"), etag);
    let script = paddock_ui_assets::all()
        .iter()
        .find(|a| a.path.ends_with(".js") && a.immutable)
        .unwrap();
    let js = client
        .get(server.url(&format!("/{}", script.path)))
        .send()
        .await
        .unwrap();
    assert_eq!(js.status().as_u16(), 200);
    assert_eq!(
        header(&js, "cache-control"),
        "public, max-age=31536000, immutable"
    );
    assert_eq!(header(&js, "content-type"), script.content_type);

    // A missing asset is a JSON 404, never the entry page.
    let missing = client
        .get(server.url("/assets/gone-1234.js"))
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status().as_u16(), 404);
    let body: Value = missing.json().await.unwrap();
    assert_eq!(body["code"], "not_found");

    // The UI does not open the door: the API still needs the token, another site's page is
    // still refused, and `paddock up` does not answer the desktop webview's origin.
    let api = client.get(server.url("/v1/sessions")).send().await.unwrap();
    assert_eq!(api.status().as_u16(), 401);
    for origin in ["http://evil.example", DESKTOP_ORIGIN] {
        let refused = server
            .get("/v1/health")
            .header("Origin", origin)
            .send()
            .await
            .unwrap();
        assert_eq!(refused.status().as_u16(), 403, "{origin}");
        assert_eq!(header(&refused, "access-control-allow-origin"), "");
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_desktop_webview_is_a_cross_origin_only_where_the_desktop_serves() {
    let mut config = ServerConfig::loopback(0);
    config.cross_origins = vec![DESKTOP_ORIGIN.to_owned(), "http://tauri.localhost".into()];
    let server = TestServer::start_serving("", config).await;
    let client = &server.client;
    let url = server.url("/v1/sessions");

    // The preflight carries no token; it is answered, and says what may follow.
    let preflight = client
        .request(reqwest::Method::OPTIONS, &url)
        .header("Origin", DESKTOP_ORIGIN)
        .header("Access-Control-Request-Method", "POST")
        .header(
            "Access-Control-Request-Headers",
            "authorization, content-type",
        )
        .send()
        .await
        .unwrap();
    assert_eq!(preflight.status().as_u16(), 204);
    assert_eq!(
        header(&preflight, "access-control-allow-origin"),
        DESKTOP_ORIGIN
    );
    assert!(header(&preflight, "access-control-allow-headers").contains("authorization"));
    assert!(header(&preflight, "access-control-allow-methods").contains("PATCH"));

    // The request itself still needs the token; its refusal is readable by the page.
    let without = client
        .get(&url)
        .header("Origin", DESKTOP_ORIGIN)
        .send()
        .await
        .unwrap();
    assert_eq!(without.status().as_u16(), 401);
    assert_eq!(
        header(&without, "access-control-allow-origin"),
        DESKTOP_ORIGIN
    );
    let with = server
        .get("/v1/sessions")
        .header("Origin", "http://tauri.localhost")
        .send()
        .await
        .unwrap();
    assert_eq!(with.status().as_u16(), 200);
    assert_eq!(
        header(&with, "access-control-allow-origin"),
        "http://tauri.localhost"
    );
    assert_eq!(header(&with, "vary"), "Origin");

    // Any other origin is refused as before, preflight included.
    for method in [reqwest::Method::OPTIONS, reqwest::Method::GET] {
        let refused = client
            .request(method.clone(), &url)
            .bearer_auth(&server.token)
            .header("Origin", "http://evil.example")
            .send()
            .await
            .unwrap();
        assert_eq!(refused.status().as_u16(), 403, "{method}");
        assert_eq!(header(&refused, "access-control-allow-origin"), "");
    }
    // Same-origin requests get no CORS headers.
    let same = server.get("/v1/sessions").send().await.unwrap();
    assert_eq!(same.status().as_u16(), 200);
    assert_eq!(header(&same, "access-control-allow-origin"), "");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_process_token_is_never_written_and_the_token_file_does_not_open_that_server() {
    let mut config = ServerConfig::loopback(0);
    config.process_token = true;
    let server = TestServer::start_serving("", config).await;
    let token_file = server.paths.api_token_file();
    assert!(
        !token_file.exists(),
        "a process token must not be written to {}",
        token_file.display()
    );
    assert_eq!(server.token.len(), 64);
    let with = server.get("/v1/sessions").send().await.unwrap();
    assert_eq!(with.status().as_u16(), 200);

    // A token from the machine's file (as `paddock up` would have made) is not this server's.
    let file_token = paddock_server::auth::ApiToken::load_or_create(&token_file).unwrap();
    assert_ne!(file_token.expose(), server.token);
    let refused = server
        .client
        .get(server.url("/v1/sessions"))
        .bearer_auth(file_token.expose())
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status().as_u16(), 401);
    server.stop().await;
}
