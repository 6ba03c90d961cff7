//! Granted folders that change between the grant and the sandbox's start, on the OpenShell
//! wall (the gateway double mounts by path, as the real gateway does): a grant replaced by a
//! link (to a never-granted sibling, the host's `/etc`, the host's `/tmp`) before a resume or a
//! live grant change is refused by the host, and a swap after the host pinned the folder but
//! before the gateway mounted it is caught from inside (the folder the runner finds is not the
//! one pinned) and refuses the session.

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

/// The link targets of the local wall's suite: a never-granted sibling, the host's `/etc` and
/// the host's `/tmp` (the excess `..` stop at `/`), each with what a command inside runs to
/// show it followed the link (prints `ESCAPED`).
struct LinkAttack {
    name: &'static str,
    target: &'static str,
    command: fn(&Harness, &str) -> String,
}

const UP: &str = "../../../../../../../../../../../../../../../..";

fn attacks() -> Vec<LinkAttack> {
    vec![
        LinkAttack {
            name: "sibling",
            target: "sibling",
            command: |h, _| {
                format!(
                    "grep -q SIBLING-SECRET {}/secret.txt && echo ESCAPED",
                    h.rw.display()
                )
            },
        },
        LinkAttack {
            name: "host /etc",
            target: "../../../../../../../../../../../../../../../../etc",
            command: |h, _| format!("[ -f {}/passwd ] && echo ESCAPED", h.rw.display()),
        },
        LinkAttack {
            name: "host /tmp",
            target: "../../../../../../../../../../../../../../../../tmp",
            command: |h, marker| format!("[ -d {}/{marker} ] && echo ESCAPED", h.rw.display()),
        },
    ]
}

/// A folder of the host's `/tmp` that only the `/tmp` link shows at the grant's path.
fn tmp_marker() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("paddock-grant-marker-")
        .tempdir_in("/tmp")
        .unwrap()
}

fn marker_name(marker: &tempfile::TempDir) -> String {
    marker
        .path()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

/// Moves the read-write grant aside and links its name to `target` (a relative link).
fn replace_with_link(h: &Harness, target: &str) {
    std::fs::rename(&h.rw, h.root.path().join("work.real")).unwrap();
    std::os::unix::fs::symlink(target, &h.rw).unwrap();
}

async fn run_inside(sandbox: &dyn Sandbox, command: &str) -> String {
    let outcome = sandbox
        .call(bash(command), None, &CancellationToken::new())
        .await;
    bash_result(&outcome).0
}

fn assert_names_the_link(h: &Harness, attack: &LinkAttack, err: &ProviderError) {
    let text = err.to_string();
    assert!(
        text.contains(&h.rw.display().to_string()) && text.contains("symbolic link"),
        "{}: {text}",
        attack.name
    );
}

#[test]
fn the_link_targets_name_what_they_say() {
    assert_eq!(
        std::fs::canonicalize(format!("{}/{UP}/etc", env!("CARGO_TARGET_TMPDIR"))).unwrap(),
        PathBuf::from("/etc")
    );
    for attack in attacks().iter().skip(1) {
        assert!(attack.target.starts_with(UP), "{}", attack.name);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grant_replaced_by_a_link_is_refused_on_resume() {
    for attack in attacks() {
        let h = Harness::start(Auth::Mtls).await;
        sibling(&h);
        let marker = tmp_marker();
        replace_with_link(&h, attack.target);
        let provider = h.provider();
        let options = SessionOptions::default();
        match provider
            .start_session(&h.request(false), &options, &|_| {})
            .await
        {
            Ok(sandbox) => {
                let seen = run_inside(
                    sandbox.as_ref(),
                    &(attack.command)(&h, &marker_name(&marker)),
                )
                .await;
                sandbox.close().await.unwrap();
                panic!(
                    "{}: the resumed sandbox followed the link: {seen}",
                    attack.name
                );
            }
            Err(e) => assert_names_the_link(&h, &attack, &e),
        }
        assert!(
            h.double.sandbox_names().is_empty(),
            "{}: a sandbox was created for a refused grant",
            attack.name
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grant_replaced_by_a_link_is_refused_on_a_grant_change() {
    for attack in attacks() {
        let h = Harness::start(Auth::Mtls).await;
        sibling(&h);
        let marker = tmp_marker();
        let provider = h.provider();
        let options = SessionOptions::default();
        let request = h.request(false);
        let old = provider
            .start_session(&request, &options, &|_| {})
            .await
            .unwrap();
        replace_with_link(&h, attack.target);
        match provider.recreate(&old, &request, &options, &|_| {}).await {
            Ok((sandbox, _note)) => {
                let seen = run_inside(
                    sandbox.as_ref(),
                    &(attack.command)(&h, &marker_name(&marker)),
                )
                .await;
                sandbox.close().await.unwrap();
                panic!(
                    "{}: the recreated sandbox followed the link: {seen}",
                    attack.name
                );
            }
            Err(e) => assert_names_the_link(&h, &attack, &e),
        }
    }
}

/// The swap lands after the host pinned the folder (the gateway already holds the create
/// request) and before the gateway mounts it (the double holds its launch until the swap is
/// made): only the
/// identity check from inside can see it. A link out of the double's new root (`/etc`, `/tmp`)
/// may instead keep its bubblewrap from placing the mount at all, so the sandbox never becomes
/// ready: nothing runs either way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_swap_after_the_pin_is_caught_from_inside() {
    for attack in attacks() {
        let h = Harness::start(Auth::Mtls).await;
        sibling(&h);
        let marker = tmp_marker();
        // Held until the swap is made: a fixed delay can be overrun on a loaded machine, and a
        // swap during the double's launch tests bubblewrap, not Paddock.
        h.double.hold_launches();
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
                "{}: the start ended before the gateway saw it",
                attack.name
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        replace_with_link(&h, attack.target);
        h.double.release_launches();
        match start.await.unwrap() {
            Ok(sandbox) => {
                let seen = run_inside(
                    sandbox.as_ref(),
                    &(attack.command)(&h, &marker_name(&marker)),
                )
                .await;
                sandbox.close().await.unwrap();
                panic!(
                    "{}: the sandbox mounted the swapped folder: {seen}",
                    attack.name
                );
            }
            Err(e) => {
                let text = e.to_string();
                let inside = matches!(e, ProviderError::AttestationFailed { .. })
                    && text.contains(&format!("grant_pinned:{}", h.rw.display()))
                    && text.contains("not the folder that was granted");
                let never_ready = attack.name != "sibling"
                    && (text.contains("sandbox is not ready")
                        || text.contains("did not become ready"));
                assert!(inside || never_ready, "{}: {text}", attack.name);
            }
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
