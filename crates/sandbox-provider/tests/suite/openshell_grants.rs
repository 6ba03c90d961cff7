//! Granted folders that change between the grant and the sandbox's start, on the OpenShell
//! wall (the gateway double mounts by path, as the real gateway does): a grant replaced by a
//! link before a resume or a live grant change is refused by the host, and a swap after the
//! host pinned the folder but before the gateway mounted it is caught from inside (the folder
//! the runner finds is not the one pinned) and refuses the session.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a panic is a failed test with a line number"
)]

use crate::openshell_support;

use std::path::PathBuf;
use std::time::Duration;

use openshell_support::{Auth, Harness, OWNER, bash, bash_result};
use sandbox_provider::openshell::SessionOptions;
use sandbox_provider::{ProviderError, Sandbox};
use tokio_util::sync::CancellationToken;

/// A never-granted sibling of the read-write grant, holding a secret the sandbox user can read.
fn sibling(h: &Harness) -> PathBuf {
    let sibling = h.root.path().join("sibling");
    std::fs::create_dir(&sibling).unwrap();
    std::fs::write(sibling.join("secret.txt"), "SIBLING-SECRET\n").unwrap();
    std::os::unix::fs::chown(&sibling, Some(OWNER), Some(OWNER)).unwrap();
    std::os::unix::fs::chown(sibling.join("secret.txt"), Some(OWNER), Some(OWNER)).unwrap();
    sibling
}

/// Moves the read-write grant aside and links its name to the sibling (a relative link).
fn replace_with_link(h: &Harness) {
    std::fs::rename(&h.rw, h.root.path().join("work.real")).unwrap();
    std::os::unix::fs::symlink("sibling", &h.rw).unwrap();
}

async fn read_secret(sandbox: &dyn Sandbox, h: &Harness) -> String {
    let outcome = sandbox
        .call(
            bash(&format!("cat {}/secret.txt", h.rw.display())),
            None,
            &CancellationToken::new(),
        )
        .await;
    bash_result(&outcome).0
}

fn assert_names_the_link(h: &Harness, err: &ProviderError) {
    let text = err.to_string();
    assert!(
        text.contains(&h.rw.display().to_string()) && text.contains("symbolic link"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grant_replaced_by_a_link_is_refused_on_resume() {
    let h = Harness::start(Auth::Mtls).await;
    sibling(&h);
    replace_with_link(&h);
    let provider = h.provider();
    let options = SessionOptions::default();
    match provider
        .start_session(&h.request(false), &options, &|_| {})
        .await
    {
        Ok(sandbox) => {
            let seen = read_secret(sandbox.as_ref(), &h).await;
            sandbox.close().await.unwrap();
            panic!("the resumed sandbox followed the link: {seen}");
        }
        Err(e) => assert_names_the_link(&h, &e),
    }
    assert!(
        h.double.sandbox_names().is_empty(),
        "a sandbox was created for a refused grant"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grant_replaced_by_a_link_is_refused_on_a_grant_change() {
    let h = Harness::start(Auth::Mtls).await;
    sibling(&h);
    let provider = h.provider();
    let options = SessionOptions::default();
    let request = h.request(false);
    let old = provider
        .start_session(&request, &options, &|_| {})
        .await
        .unwrap();
    replace_with_link(&h);
    match provider.recreate(&old, &request, &options, &|_| {}).await {
        Ok((sandbox, _note)) => {
            let seen = read_secret(sandbox.as_ref(), &h).await;
            sandbox.close().await.unwrap();
            panic!("the recreated sandbox followed the link: {seen}");
        }
        Err(e) => assert_names_the_link(&h, &e),
    }
}

/// The swap lands after the host pinned the folder (the gateway already holds the create
/// request) and before the gateway mounts it (the double waits before it launches): only the
/// identity check from inside can see it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_swap_after_the_pin_is_caught_from_inside() {
    let h = Harness::start(Auth::Mtls).await;
    sibling(&h);
    h.double.set_ready_delay(Duration::from_secs(2));
    let provider = h.provider();
    let request = h.request(false);
    let start = {
        let (provider, request) = (provider.clone(), request.clone());
        tokio::spawn(async move {
            provider
                .start_session(&request, &SessionOptions::default(), &|_| {})
                .await
        })
    };
    while h.double.sandbox_names().is_empty() {
        assert!(
            !start.is_finished(),
            "the start ended before the gateway saw it"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    replace_with_link(&h);
    match start.await.unwrap() {
        Ok(sandbox) => {
            let seen = read_secret(sandbox.as_ref(), &h).await;
            sandbox.close().await.unwrap();
            panic!("the sandbox mounted the swapped folder: {seen}");
        }
        Err(e) => {
            let text = e.to_string();
            assert!(
                matches!(e, ProviderError::AttestationFailed { .. })
                    && text.contains(&format!("grant_pinned:{}", h.rw.display()))
                    && text.contains("not the folder that was granted"),
                "{text}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn set_id_files_in_a_grant_are_stripped_at_start_and_at_close() {
    use std::os::unix::fs::PermissionsExt;
    let h = Harness::start(Auth::Mtls).await;
    let plant = |name: &str| {
        let path = h.rw.join(name);
        std::fs::copy("/bin/true", &path).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o4755)).unwrap();
        path
    };
    let mode =
        |path: &std::path::Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o7777;
    let before = plant("left-behind");
    let provider = h.provider();
    let sandbox = provider
        .start_session(&h.request(false), &SessionOptions::default(), &|_| {})
        .await
        .unwrap();
    assert_eq!(mode(&before), 0o755);
    let canary = sandbox
        .attestation()
        .canaries
        .iter()
        .find(|c| c.name == "set_id_files_stripped")
        .expect("the sweep is in the attestation");
    assert!(
        canary.detail.contains("left-behind (was 4755)"),
        "{canary:?}"
    );
    // Set-id bits cannot be set from inside (the runner's filter), and one placed from
    // outside while the session runs is gone at close.
    let outcome = sandbox
        .call(
            bash(&format!(
                "cp /bin/bash {rw}/x && chmod u+s {rw}/x",
                rw = h.rw.display()
            )),
            None,
            &CancellationToken::new(),
        )
        .await;
    let (out, code) = bash_result(&outcome);
    assert_ne!(code, Some(0), "chmod u+s worked inside: {out}");
    let during = plant("during");
    sandbox.close().await.unwrap();
    assert_eq!(mode(&during), 0o755);
    assert_eq!(mode(&h.rw.join("x")) & 0o6000, 0);
}
