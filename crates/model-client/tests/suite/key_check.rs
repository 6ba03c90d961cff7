//! `check_key`: one authenticated GET that spends no tokens, against the fake server over real
//! HTTP, for both wire formats: a right key passes, a wrong one is `Auth` without the key in
//! the error, an unreachable API is a network error.

use model_client::{ApiKey, ModelError, Vendor, check_key, default_key_check_path, preset};
use test_support::model_server::FakeModelServer;

use crate::common::{KEY, config};

#[tokio::test]
async fn a_right_key_passes_with_one_get_of_the_model_list_for_both_vendors() {
    let server = FakeModelServer::start().await.unwrap();
    server.require_api_key(KEY);
    let anthropic = preset("anthropic").unwrap();
    check_key(
        Vendor::Anthropic,
        &config(server.anthropic_base_url()),
        anthropic.key_check_path,
    )
    .await
    .unwrap();
    let openai = preset("openai").unwrap();
    check_key(
        Vendor::OpenAiCompatible,
        &config(server.openai_base_url()),
        openai.key_check_path,
    )
    .await
    .unwrap();
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "{requests:#?}");
    for request in &requests {
        assert_eq!(
            (request.method.as_str(), request.path.as_str()),
            ("GET", "/v1/models")
        );
        assert!(
            request.api_key_sent && request.api_key_accepted,
            "{request:#?}"
        );
    }
    assert_eq!(requests[0].header("x-api-key"), Some("[redacted]"));
    assert!(requests[0].header("anthropic-version").is_some());
    assert_eq!(requests[1].header("authorization"), Some("[redacted]"));
}

#[tokio::test]
async fn a_refused_key_is_an_auth_error_that_never_holds_the_key() {
    let server = FakeModelServer::start().await.unwrap();
    server.require_api_key("sk-the-right-one-0000");
    for (vendor, base) in [
        (Vendor::Anthropic, server.anthropic_base_url()),
        (Vendor::OpenAiCompatible, server.openai_base_url()),
    ] {
        let error = check_key(vendor, &config(base), default_key_check_path(vendor))
            .await
            .unwrap_err();
        assert!(
            matches!(error, ModelError::Auth { status: 401, .. }),
            "{error:?}"
        );
        let text = format!("{error} {error:?}");
        // The fake OpenAI server quotes the presented key in its error body, as OpenAI does.
        assert!(!text.contains(KEY), "the key leaked into the error: {text}");
    }
}

#[tokio::test]
async fn openrouter_is_checked_on_its_key_record_and_an_unreachable_api_is_a_network_error() {
    assert_eq!(preset("openrouter").unwrap().key_check_path, "/key");
    let server = FakeModelServer::start().await.unwrap();
    check_key(
        Vendor::OpenAiCompatible,
        &config(server.openai_base_url()),
        "/key",
    )
    .await
    .unwrap();
    assert_eq!(server.requests()[0].path, "/v1/key");

    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let mut unreachable = config(format!("http://127.0.0.1:{port}/v1"));
    unreachable.api_key = Some(ApiKey::new(KEY).unwrap());
    let error = check_key(Vendor::OpenAiCompatible, &unreachable, "/models")
        .await
        .unwrap_err();
    assert!(matches!(error, ModelError::Network { .. }), "{error:?}");
    assert!(!error.to_string().contains(KEY));
}
