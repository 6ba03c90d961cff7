//! The network side through the double's real proxy: denials parsed from the OCSF log and
//! pinned on the command that hit them, drafted rules approved and rejected (stale review
//! tokens refused), a host added live, secrets as providers with placeholders inside, and
//! orphans reaped by label; a session starts on each network profile (the proxy canary asks
//! for a port no profile allows).

#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a panic is a failed test with a line number"
)]

use crate::openshell_support;

use std::collections::BTreeMap;

use openshell_support::{Auth, Harness, bash, bash_result};
use sandbox_policy::SecretSpec;
use sandbox_provider::openshell::{OpenShellConfig, OpenShellProvider, SessionOptions};
use sandbox_provider::{ProviderError, Sandbox, SandboxProvider, ToolCallOutcome};
use tokio_util::sync::CancellationToken;

async fn run(sandbox: &dyn Sandbox, command: &str) -> ToolCallOutcome {
    sandbox
        .call(bash(command), None, &CancellationToken::new())
        .await
}

fn curl(host: &str, port: u16) -> String {
    format!("curl -fsS --max-time 10 http://{host}:{port}/")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blocked_host_comes_back_as_a_denial_on_the_command_that_tried_it() {
    let h = Harness::start(Auth::Mtls).await;
    let provider = h.provider();
    let sandbox = provider.start(&h.request(true), &|_| {}).await.unwrap();

    let allowed = run(&*sandbox, &curl("allowed.test", h.web_port)).await;
    let (out, code) = bash_result(&allowed);
    assert_eq!((out.as_str(), code), ("hello from allowed.test", Some(0)));
    assert!(allowed.denials.is_empty(), "{:?}", allowed.denials);

    let blocked = run(&*sandbox, &curl("blocked.test", 8080)).await;
    let (out, code) = bash_result(&blocked);
    assert_ne!(code, Some(0), "{out}");
    assert_eq!(blocked.denials.len(), 1, "{:?}", blocked.denials);
    let denial = &blocked.denials[0];
    assert_eq!((denial.host.as_str(), denial.port), ("blocked.test", 8080));
    assert_eq!(denial.binary.as_deref(), Some("/usr/bin/curl"));
    assert_eq!(denial.reason, "no matching policy");
    assert_eq!(
        denial.model_notice(),
        "[blocked by the sandbox's network policy: /usr/bin/curl tried blocked.test:8080. This is not a network fault; ask the user to allow it.]"
    );
    let logged: Vec<String> = h
        .double
        .logs(sandbox.id())
        .into_iter()
        .filter(|l| l.level == "OCSF")
        .map(|l| l.message)
        .collect();
    assert!(
        logged
            .iter()
            .any(|l| l.starts_with("NET:OPEN [MED] DENIED /usr/bin/curl(")
                && l.contains(
                    "-> blocked.test:8080 [policy:- engine:opa] [reason:no matching policy]"
                )),
        "{logged:?}"
    );

    // Another program is named as itself: the OCSF record's process.
    let python = run(
        &*sandbox,
        "python3 -c \"import urllib.request as u; u.urlopen('http://blocked.test:8081/', timeout=10)\"",
    )
    .await;
    assert_eq!(python.denials.len(), 1, "{:?}", python.denials);
    let named = python.denials[0].binary.clone().unwrap_or_default();
    assert!(
        named.starts_with("/usr/bin/python3"),
        "the denial names {named:?}"
    );
    assert!(
        python.denials[0]
            .model_notice()
            .contains(&format!("{named} tried blocked.test:8081")),
        "{:?}",
        python.denials[0]
    );

    let quiet = run(&*sandbox, "echo no network here").await;
    assert!(
        quiet.denials.is_empty(),
        "an earlier denial is not pinned on a later command: {:?}",
        quiet.denials
    );
    sandbox.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drafted_rules_are_approved_with_fresh_tokens_and_rejected_with_a_reason() {
    let h = Harness::start(Auth::Mtls).await;
    let provider = h.provider();
    let sandbox = provider
        .start_session(&h.request(false), &SessionOptions::default(), &|_| {})
        .await
        .unwrap();
    let later = curl("later.test", h.web_port);
    assert_eq!(run(&*sandbox, &later).await.denials.len(), 1);
    assert_eq!(
        run(&*sandbox, &curl("blocked.test", 81))
            .await
            .denials
            .len(),
        1
    );

    let pending = sandbox.pending_rules().await.unwrap();
    let find = |host: &str| {
        pending
            .iter()
            .find(|r| r.hosts.iter().any(|h| h.starts_with(host)))
            .cloned()
            .unwrap()
    };
    let (later_rule, blocked_rule) = (find("later.test"), find("blocked.test"));
    assert_eq!(later_rule.hosts, [format!("later.test:{}", h.web_port)]);
    assert_eq!(later_rule.binary, "/usr/bin/curl");
    assert!(!later_rule.review_token.is_empty());

    let version = sandbox.approve_rule(&later_rule).await.unwrap();
    assert!(version >= 2, "{version}");
    let after = run(&*sandbox, &later).await;
    assert_eq!(
        bash_result(&after),
        ("hello from allowed.test".to_owned(), Some(0))
    );
    assert!(after.denials.is_empty());

    // The policy changed since `blocked_rule` was listed: its token is stale.
    let stale = sandbox.approve_rule(&blocked_rule).await.unwrap_err();
    assert!(
        matches!(stale, ProviderError::InvalidRequest(_)),
        "{stale:?}"
    );
    assert!(
        stale.to_string().contains("list the pending rules again"),
        "{stale}"
    );
    let fresh = sandbox.pending_rules().await.unwrap();
    let blocked_rule = fresh.iter().find(|r| r.id == blocked_rule.id).unwrap();
    sandbox
        .reject_rule(blocked_rule, "not needed for this task")
        .await
        .unwrap();
    let left = sandbox.pending_rules().await.unwrap();
    assert!(
        left.iter()
            .all(|r| r.id != blocked_rule.id && r.id != later_rule.id),
        "{left:?}"
    );
    sandbox.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_added_to_the_live_policy_works_at_once_in_this_sandbox_only() {
    let h = Harness::start(Auth::Mtls).await;
    let provider = h.provider();
    let sandbox = provider
        .start_session(&h.request(false), &SessionOptions::default(), &|_| {})
        .await
        .unwrap();
    let other = curl("other.test", h.web_port);
    assert_eq!(run(&*sandbox, &other).await.denials.len(), 1);
    let version = sandbox
        .allow_host(&format!("other.test:{}", h.web_port))
        .await
        .unwrap();
    let outcome = run(&*sandbox, &other).await;
    assert_eq!(
        bash_result(&outcome),
        ("hello from allowed.test".to_owned(), Some(0))
    );
    let live = sandbox.live_policy().await.unwrap();
    assert_eq!(live.version, version);
    let rule = &live.policy.unwrap().network_policies[&format!("user_other_test_{}", h.web_port)];
    assert_eq!(rule.endpoints[0].host, "other.test");
    assert_eq!(h.double.update_scopes(), [false], "never the global policy");
    assert!(matches!(
        sandbox.allow_host("*").await,
        Err(ProviderError::InvalidRequest(_))
    ));
    sandbox.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secrets_become_providers_and_only_placeholders_enter_the_sandbox() {
    const VALUE: &str = "tok-PLANTED-secret-value-31337";
    let h = Harness::start(Auth::Mtls).await;
    let config = OpenShellConfig {
        secrets: vec![SecretSpec::new("PADDOCK_TEST_TOKEN", &["api.example.com"]).unwrap()],
        ..h.config(h.environment(&[("PADDOCK_TEST_TOKEN", VALUE)]))
    };
    let provider = OpenShellProvider::new(config);
    let (lines, sink) = openshell_support::progress_log();
    let sandbox = provider
        .start_session(&h.request(false), &SessionOptions::default(), &sink)
        .await
        .unwrap();
    let providers = h.double.providers();
    assert_eq!(providers.len(), 1);
    let stored = &providers[0];
    assert_eq!(
        stored.credentials["PADDOCK_TEST_TOKEN"], VALUE,
        "the gateway holds the value"
    );
    let name = stored.metadata.as_ref().unwrap().name.clone();
    assert!(name.starts_with(sandbox.id()), "{name}");

    let outcome = run(
        &*sandbox,
        "echo \"$PADDOCK_TEST_TOKEN\"; env | grep -c 'PLANTED' || true",
    )
    .await;
    let (out, _) = bash_result(&outcome);
    assert_eq!(out, "openshell:resolve:env:PADDOCK_TEST_TOKEN\n0\n");
    let shown = format!("{:?} {:?}", lines.lock().unwrap(), sandbox.attestation());
    assert!(
        !shown.contains(VALUE),
        "the value never shows in progress or attestation"
    );

    sandbox.close().await.unwrap();
    assert!(
        h.double.providers().is_empty(),
        "the provider is deleted with the sandbox"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn orphans_of_this_machine_are_reaped_by_label_across_pages() {
    let h = Harness::start(Auth::Mtls).await;
    let labels = |machine: &str, keep: bool, session: &str| {
        let mut labels = BTreeMap::from([
            ("paddock.machine".to_owned(), machine.to_owned()),
            ("paddock.session".to_owned(), session.to_owned()),
        ]);
        if keep {
            labels.insert("paddock.keep".to_owned(), "true".to_owned());
        }
        labels
    };
    let mut orphans: Vec<String> = (0..105).map(|i| format!("pd-orphan-{i:03}")).collect();
    for (i, name) in orphans.iter().enumerate() {
        h.double
            .adopt_foreign_sandbox(name, labels("test-machine", false, &format!("dead-{i}")));
    }
    h.double
        .adopt_foreign_sandbox("pd-kept", labels("test-machine", true, "dead-kept"));
    h.double
        .adopt_foreign_sandbox("pd-elsewhere", labels("other-machine", false, "dead-x"));
    // A session another live Paddock process runs on this machine: its sandbox is not an
    // orphan, whatever its label says.
    h.double
        .adopt_foreign_sandbox("pd-live", labels("test-machine", false, "live-session"));
    struct OneLive;
    impl sandbox_provider::SessionOwners for OneLive {
        fn is_live(&self, session_id: &str) -> bool {
            session_id == "live-session"
        }
    }
    let mut reaped = h.provider().reap_orphans(&OneLive).await.unwrap();
    reaped.sort();
    orphans.sort();
    assert_eq!(
        reaped, orphans,
        "all 105 (more than one page), nothing else"
    );
    assert_eq!(
        h.double.sandbox_names(),
        ["pd-elsewhere", "pd-kept", "pd-live"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_starts_on_every_network_profile() {
    use protocol::NetworkProfileName;
    let h = Harness::start(Auth::Mtls).await;
    let provider = h.provider();
    for profile in [
        NetworkProfileName::Strict,
        NetworkProfileName::Standard,
        NetworkProfileName::Open,
    ] {
        let mut request = h.request(false);
        request.network_profile = profile;
        let sandbox = match provider.start(&request, &|_| {}).await {
            Ok(sandbox) => sandbox,
            Err(e) => panic!("{profile:?}: the sandbox did not start: {e}"),
        };
        let (out, code) = bash_result(&run(sandbox.as_ref(), "echo started").await);
        assert_eq!((out.as_str(), code), ("started\n", Some(0)), "{profile:?}");
        sandbox.close().await.unwrap();
    }
}
