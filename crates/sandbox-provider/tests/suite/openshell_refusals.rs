//! Fail closed: every condition under which the OpenShell wall cannot be trusted refuses the
//! session with its reason and the diagnose command, and never falls back. Also the other
//! auth modes (plaintext, OIDC bearer checked by the double) and `status()`.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a panic is a failed test with a line number"
)]

use crate::openshell_support;

use std::time::Duration;

use openshell_proto::v1::ServiceStatus;
use openshell_support::{Auth, Harness, OIDC_TOKEN, bash, bash_result};
use sandbox_policy::SecretSpec;
use sandbox_provider::openshell::{OpenShellProvider, SessionOptions};
use sandbox_provider::{ProviderError, SandboxProvider};
use tokio_util::sync::CancellationToken;

async fn refusal(provider: &OpenShellProvider, h: &Harness) -> ProviderError {
    match provider.start(&h.request(false), &|_| {}).await {
        Ok(sandbox) => panic!("a session started: {}", sandbox.id()),
        Err(e) => e,
    }
}

fn assert_unavailable(err: &ProviderError, reason: &str) {
    assert!(matches!(err, ProviderError::Unavailable { .. }), "{err:?}");
    let text = err.to_string();
    assert!(text.contains(reason), "{text}");
    assert!(text.contains("paddock machine sandbox status"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_gateway_refuses_the_session() {
    let h = Harness::start(Auth::Mtls).await;
    let env = h.environment(&[("OPENSHELL_GATEWAY_ENDPOINT", "http://127.0.0.1:9")]);
    let provider = OpenShellProvider::new(h.config(env));
    let err = refusal(&provider, &h).await;
    assert_unavailable(&err, "cannot be reached");
    assert!(h.double.sandbox_names().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_registered_gateway_refuses_with_the_command_that_registers_one() {
    let h = Harness::start(Auth::Mtls).await;
    std::fs::remove_file(h.xdg.join("openshell/active_gateway")).unwrap();
    let provider = h.provider();
    let err = refusal(&provider, &h).await;
    assert_unavailable(&err, "openshell gateway add");
    let status = provider.status().await;
    assert!(!status.ready());
    assert!(
        status
            .failure_summary()
            .contains("fix: openshell gateway add"),
        "{}",
        status.failure_summary()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unhealthy_gateway_refuses_the_session() {
    let h = Harness::start(Auth::Mtls).await;
    h.double.set_health(ServiceStatus::Degraded);
    let provider = h.provider();
    let err = refusal(&provider, &h).await;
    assert_unavailable(&err, "SERVICE_STATUS_DEGRADED");
    let status = provider.status().await;
    let health = status.checks.iter().find(|c| c.name == "health").unwrap();
    assert!(!health.ok && health.fix.is_some(), "{health:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_credentials_refuse_the_session() {
    let h = Harness::start(Auth::Mtls).await;
    h.double.reject_credentials(true);
    let provider = h.provider();
    let err = refusal(&provider, &h).await;
    assert_unavailable(&err, "did not accept Paddock's credentials");
    let status = provider.status().await;
    let auth = status
        .checks
        .iter()
        .find(|c| c.name == "authentication")
        .unwrap();
    assert!(!auth.ok, "{auth:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_without_its_certificate_is_refused() {
    let h = Harness::start(Auth::Mtls).await;
    let mtls = h.xdg.join("openshell/gateways/double/mtls");
    std::fs::remove_file(mtls.join("tls.key")).unwrap();
    // Discovery refuses an incomplete bundle for an mTLS registration...
    let err = refusal(&h.provider(), &h).await;
    assert_unavailable(&err, "bundle is incomplete");
    // ...and the gateway refuses a TLS client that shows no certificate.
    let env = h.environment(&[("OPENSHELL_GATEWAY_ENDPOINT", &h.double.endpoint())]);
    let provider = OpenShellProvider::new(h.config(env));
    let err = refusal(&provider, &h).await;
    assert!(matches!(err, ProviderError::Unavailable { .. }), "{err:?}");
    assert!(h.double.sandbox_names().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bind_mounts_disabled_refuse_with_the_settings_that_fix_it() {
    for (allow_driver_config, enable_bind_mounts) in [(false, true), (true, false)] {
        let h = Harness::start_with(Auth::Mtls, |c| {
            c.allow_driver_config = allow_driver_config;
            c.enable_bind_mounts = enable_bind_mounts;
        })
        .await;
        let err = refusal(&h.provider(), &h).await;
        assert_unavailable(&err, "does not allow bind mounts");
        assert!(
            err.to_string().contains("enable_bind_mounts = true"),
            "{err}"
        );
        assert!(h.double.sandbox_names().is_empty());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_canary_refuses_the_session_and_removes_the_sandbox() {
    let h = Harness::start(Auth::Mtls).await;
    // A wall with a hole: the sandbox may read the host folder holding the sentinel.
    h.double.expose_paths(&[&h.state.display().to_string()]);
    let err = refusal(&h.provider(), &h).await;
    assert!(
        matches!(err, ProviderError::AttestationFailed { .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("outside_read_refused"), "{err}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        h.double.sandbox_names().is_empty(),
        "the refused sandbox was deleted"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shadowed_mount_is_caught_by_folder_verification() {
    let h = Harness::start(Auth::Mtls).await;
    for folder in [&h.rw, &h.ro] {
        h.double.shadow_mounts(&[&folder.display().to_string()]);
        let err = refusal(&h.provider(), &h).await;
        assert!(
            matches!(err, ProviderError::AttestationFailed { .. }),
            "{err:?}"
        );
        let text = err.to_string();
        assert!(
            text.contains(&format!("grant_verified:{}", folder.display())),
            "{text}"
        );
        assert!(text.contains("shadowed"), "{text}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secret_missing_on_the_host_is_an_error_naming_it() {
    let h = Harness::start(Auth::Mtls).await;
    let provider = h.provider();
    let options = SessionOptions {
        secrets: vec![SecretSpec::new("PADDOCK_TEST_TOKEN", &["api.example.com"]).unwrap()],
        keep: None,
    };
    let err = provider
        .start_session(&h.request(false), &options, &|_| {})
        .await
        .unwrap_err();
    assert!(matches!(err, ProviderError::InvalidRequest(_)), "{err:?}");
    assert!(err.to_string().contains("PADDOCK_TEST_TOKEN"), "{err}");
    assert!(h.double.providers().is_empty() && h.double.sandbox_names().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plaintext_and_oidc_gateways_work_and_the_bearer_is_checked() {
    let plain = Harness::start(Auth::Plaintext).await;
    let provider = plain.provider();
    let status = provider.status().await;
    assert!(status.ready(), "{}", status.failure_summary());
    let gateway = status.checks.iter().find(|c| c.name == "gateway").unwrap();
    assert!(
        gateway.detail.contains("http://127.0.0.1") && gateway.detail.contains("plaintext"),
        "{gateway:?}"
    );

    let oidc = Harness::start(Auth::Oidc).await;
    let provider = oidc.provider();
    let status = provider.status().await;
    assert!(status.ready(), "{}", status.failure_summary());
    assert!(
        !format!("{status:?}").contains(OIDC_TOKEN),
        "the token never shows"
    );
    let sandbox = provider.start(&oidc.request(false), &|_| {}).await.unwrap();
    let outcome = sandbox
        .call(bash("echo over-oidc"), None, &CancellationToken::new())
        .await;
    assert_eq!(bash_result(&outcome).0.trim(), "over-oidc");
    sandbox.close().await.unwrap();

    // A wrong token is refused by the gateway, and the refusal does not echo it.
    let token_file = oidc.xdg.join("openshell/gateways/double/oidc_token.json");
    std::fs::write(&token_file, r#"{"access_token":"wrong-token-PLANTED"}"#).unwrap();
    let err = refusal(&oidc.provider(), &oidc).await;
    assert_unavailable(&err, "did not accept Paddock's credentials");
    assert!(!err.to_string().contains("PLANTED"), "{err}");
}
