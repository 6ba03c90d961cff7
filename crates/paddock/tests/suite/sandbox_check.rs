//! `paddock machine sandbox check` as a user runs it: the built binary builds a real local wall,
//! prints the attestation from inside and tears it down; an unusable provider is refused.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Stdio;
use std::time::Duration;

async fn paddock(home: &tempfile::TempDir, args: &[&str]) -> (i32, String) {
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_paddock"))
        .args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home.path().join("home"))
        .env("XDG_CONFIG_HOME", home.path().join("config"))
        .env("XDG_STATE_HOME", home.path().join("state"))
        .env("PADDOCK_TOOL_RUNNER", test_support::binaries::tool_runner())
        .env("PADDOCK_WALL", test_support::binaries::paddock_wall())
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output();
    let output = tokio::time::timeout(Duration::from_secs(120), output)
        .await
        .expect("paddock finished in time")
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.code().unwrap_or(-1), text)
}

#[tokio::test]
async fn check_builds_attests_and_removes_a_local_wall() {
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join("home")).unwrap();
    let (code, text) = paddock(&home, &["machine", "sandbox", "check"]).await;
    assert_eq!(code, 0, "{text}");
    for canary in [
        "home_absent",
        "outside_read_refused",
        "outside_write_refused",
        "landlock_enforced",
        "proxy_refuses_unlisted_host",
        "no_new_privs",
        "seccomp_filter",
    ] {
        assert!(
            text.contains(&format!("[ok] {canary}:")),
            "{canary} missing in:\n{text}"
        );
    }
    assert!(!text.contains("[FAIL]"), "{text}");
    assert!(text.contains("enforcement: local"), "{text}");
    assert!(text.contains("inside: uid "), "{text}");
    assert!(text.contains("the granted folder takes writes"), "{text}");
    assert!(text.contains("check passed"), "{text}");
    // Nothing of the throwaway sandbox is left behind.
    let checks = home.path().join("state/paddock/checks");
    let left: Vec<_> = std::fs::read_dir(&checks)
        .map(|entries| entries.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[tokio::test]
async fn check_refuses_a_provider_that_cannot_be_built() {
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join("home")).unwrap();
    std::fs::create_dir_all(home.path().join("config/paddock")).unwrap();
    let digest = "0".repeat(64);
    std::fs::write(
        home.path().join("config/paddock/config.toml"),
        format!("[openshell]\nimage = \"registry.example/base@sha256:{digest}\"\n"),
    )
    .unwrap();
    // No OpenShell gateway is registered in this HOME: the session is refused, never run open.
    let (code, text) = paddock(
        &home,
        &["machine", "sandbox", "check", "--provider", "openshell"],
    )
    .await;
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("REFUSED") || text.contains("refused"),
        "{text}"
    );
    assert!(text.contains("paddock machine sandbox status"), "{text}");
    assert!(!text.contains("check passed"), "{text}");
}
