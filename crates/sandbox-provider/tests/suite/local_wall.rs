//! The local wall end to end: it starts, attests itself from inside, serves calls, and leaves
//! nothing behind.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed set-up step fails the test"
)]

use crate::support;

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
    // What tools need from the system is there: certificates, name files, an interpreter.
    let r = bash(
        sandbox.as_ref(),
        "test -r /etc/ssl/certs/ca-certificates.crt && cat /etc/hosts > /dev/null && \
         python3 -c 'import ssl; ssl.create_default_context(); print(\"tls ok\")'",
    )
    .await;
    assert_eq!(stdout(&r), "tls ok\n", "{}", stderr(&r));
    let dir = sandbox.host_dir().to_path_buf();
    assert!(dir.is_dir());
    sandbox.close().await.unwrap();
    assert!(!dir.exists(), "the wall's folder outlived it");
    assert_eq!(
        std::fs::read_to_string(w.work().join("note.txt")).unwrap(),
        "hello\n"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_state_folder_deep_under_a_long_home_still_works() {
    // Socket paths under it are far longer than a socket address holds (107 bytes).
    let w = world_with(WorldOptions {
        state_depth: 6,
        ..WorldOptions::default()
    });
    let sandbox = w.start().await;
    let dir = sandbox.host_dir().to_path_buf();
    assert!(
        dir.join("proxy/proxy.sock").as_os_str().len() > 150,
        "{}",
        dir.display()
    );
    assert!(
        sandbox.attestation().passed(),
        "{:#?}",
        sandbox.attestation()
    );
    let r = bash(sandbox.as_ref(), "echo through > note.txt && cat note.txt").await;
    assert_eq!(stdout(&r), "through\n", "{}", stderr(&r));
    sandbox.close().await.unwrap();
    assert!(!dir.exists(), "the wall's folder outlived it");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failed_canary_refuses_the_session() {
    let w = world();
    // A machine whose "home" is a folder every wall mounts: the home canary must fail.
    let mut config = w.provider.config().clone();
    config.user_home = "/usr".into();
    let provider = sandbox_provider::local::LocalProvider::new(config.clone());
    let err = provider
        .start_local(&w.request(&[]), &|_| {})
        .await
        .err()
        .unwrap();
    let message = err.to_string();
    assert!(
        matches!(
            err,
            sandbox_provider::ProviderError::AttestationFailed { .. }
        ),
        "{message}"
    );
    assert!(message.contains("home_absent"), "{message}");
    // The synthesized /etc (`etc-cache`) is shared by every wall and stays.
    let left: Vec<_> = std::fs::read_dir(&config.state_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name != "etc-cache")
        .collect();
    assert!(left.is_empty(), "a refused wall left its folder: {left:?}");
}

/// The sessions a live process runs, as the host's leases would say.
struct Live(&'static [&'static str]);

impl sandbox_provider::SessionOwners for Live {
    fn is_live(&self, session_id: &str) -> bool {
        self.0.contains(&session_id)
    }
}

/// Orphans are the walls whose session no live process runs, whatever pid their folder is
/// named after: a wall named after a pid that does not exist here (a live Paddock in another
/// PID namespace sharing the state folder) is kept while its session is live, and one named
/// after a live pid (this very process, standing for a dead Paddock's reused pid) is reaped
/// when its session is not. Reaping by "is /proc/<pid> there" got both wrong.
#[tokio::test(flavor = "multi_thread")]
async fn orphaned_wall_folders_are_reaped_by_session_never_by_pid() {
    use sandbox_provider::SandboxProvider;
    let w = world();
    let state = w.provider.config().state_dir.clone();
    let orphan = state.join("wall-0-old-session-0");
    std::fs::create_dir_all(orphan.join("home/.ssh")).unwrap();
    std::fs::write(orphan.join("home/.ssh/id_ed25519"), "stale copy").unwrap();
    let reused = state.join(format!("wall-{}-dead-session-0", std::process::id()));
    std::fs::create_dir_all(reused.join("home")).unwrap();
    let elsewhere = state.join("wall-0-live-elsewhere-0");
    std::fs::create_dir_all(elsewhere.join("home")).unwrap();
    std::fs::write(elsewhere.join("owner"), "live-elsewhere\n").unwrap();
    let live = w.start().await;
    let mut reaped = w
        .provider
        .reap_orphans(&Live(&["live-elsewhere"]))
        .await
        .unwrap();
    reaped.sort();
    let reused_name = reused.file_name().unwrap().to_str().unwrap().to_owned();
    assert_eq!(reaped, ["wall-0-old-session-0", reused_name.as_str()]);
    assert!(!orphan.exists() && !reused.exists());
    assert!(elsewhere.exists(), "a live session's wall was reaped");
    assert!(
        live.host_dir().exists(),
        "this process's own wall was reaped"
    );
    // The owner record names the session, and nothing inside can reach it.
    assert_eq!(
        std::fs::read_to_string(live.host_dir().join("owner")).unwrap(),
        format!("{}\n", w.request(&[]).session_id)
    );
    live.close().await.unwrap();
}
