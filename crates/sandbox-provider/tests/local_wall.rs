//! The local wall end to end: it starts, attests itself from inside, serves calls, and leaves
//! nothing behind.

mod support;

use sandbox_provider::Sandbox;
use support::*;

#[tokio::test(flavor = "multi_thread")]
async fn starts_attests_and_cleans_up() {
    let w = world();
    let sandbox = w.start().await;
    let attestation = sandbox.attestation();
    assert!(attestation.passed(), "{attestation:#?}");
    assert_eq!(attestation.enforcement, protocol::EnforcementLevel::Local);
    assert!(attestation.config_hash.starts_with("sha256:"));
    let names: Vec<&str> = attestation
        .canaries
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    for expected in [
        "home_absent",
        "outside_read_refused",
        "outside_write_refused",
        "read_only_grant_refuses_write",
        "landlock_enforced",
        "proxy_refuses_unlisted_host",
        "no_new_privs",
        "seccomp_filter",
        "no_capabilities",
        "grants_reachable",
        "network_loopback_only",
    ] {
        assert!(
            names.contains(&expected),
            "{expected} missing from {names:?}"
        );
    }
    let r = bash(sandbox.as_ref(), "id -u; pwd; echo hello > note.txt").await;
    assert_eq!(r.exit_code, Some(0), "{}", stderr(&r));
    let dir = sandbox.host_dir().to_path_buf();
    assert!(dir.is_dir());
    sandbox.close().await.unwrap();
    assert!(!dir.exists(), "the wall's folder outlived it");
    assert_eq!(
        std::fs::read_to_string(w.work().join("note.txt")).unwrap(),
        "hello\n"
    );
}
