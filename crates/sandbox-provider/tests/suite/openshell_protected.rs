//! Files the host runs later on the OpenShell wall, against the gateway double over mTLS: the
//! create request carries them as read-only bind mounts over the read-write folder (and the
//! git directory bound onto itself), so the plantings fail inside; what a command creates is
//! caught by the sweep; git still commits.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is a failed test"
)]

use crate::openshell_support;

use std::path::Path;
use std::process::Command;

use openshell_support::{Auth, Harness, OWNER, bash, bash_result};
use protocol::ProtectedAction;
use sandbox_provider::Sandbox;
use sandbox_provider::openshell::SessionOptions;
use test_support::gateway_double::Mount;
use tokio_util::sync::CancellationToken;

fn git(repo: &Path, args: &[&str]) {
    let out = Command::new("git")
        .arg("-C")
        .arg(repo)
        // The folder belongs to the sandbox's user, not to the root running this test.
        .args(["-c", "safe.directory=*"])
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "User")
        .env("GIT_AUTHOR_EMAIL", "user@example.com")
        .env("GIT_COMMITTER_NAME", "User")
        .env("GIT_COMMITTER_EMAIL", "user@example.com")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

fn chown_tree(path: &Path) {
    let out = Command::new("chown")
        .args(["-R", &format!("{OWNER}:{OWNER}")])
        .arg(path)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protected_paths_are_read_only_bind_mounts_on_the_openshell_wall() {
    let h = Harness::start(Auth::Mtls).await;
    git(&h.rw, &["init", "-q", "-b", "main"]);
    git(&h.rw, &["commit", "-q", "--allow-empty", "-m", "first"]);
    std::fs::write(h.rw.join(".bashrc"), "original\n").unwrap();
    chown_tree(&h.rw);
    let provider = h.provider();
    let sandbox = provider
        .start_session(&h.request(false), &SessionOptions::default(), &|_| {})
        .await
        .unwrap();

    // The request the gateway received mounts them.
    let mounts = h.double.mounts(sandbox.id());
    let rw = h.rw.display().to_string();
    for (path, read_only) in [
        (format!("{rw}/.git"), false),
        (format!("{rw}/.git/config"), true),
        (format!("{rw}/.git/hooks"), true),
        (format!("{rw}/.bashrc"), true),
    ] {
        let mount = Mount::Bind {
            source: path.clone(),
            target: path,
            read_only,
        };
        assert!(mounts.contains(&mount), "{mount:?} in {mounts:#?}");
    }
    // Each was compared from inside with what the host pinned, and none is writable there.
    let canaries = &sandbox.attestation().canaries;
    for path in [".git", ".git/config", ".git/hooks", ".bashrc"] {
        let name = format!("protected_pinned:{rw}/{path}");
        assert!(
            canaries.iter().any(|c| c.name == name && c.passed),
            "{name} in {canaries:#?}"
        );
    }
    assert!(
        canaries
            .iter()
            .any(|c| c.name == "protected_read_only" && c.passed && c.detail.contains("refuse")),
        "{canaries:#?}"
    );

    let cancel = CancellationToken::new();
    for command in [
        "git -C . config core.fsmonitor 'touch /tmp/x #'",
        "d=.git; echo '#!/bin/sh' > \"$d/hooks/pre-commit\"",
        "echo planted >> .bashrc",
        "mv .git .git-old",
    ] {
        let outcome = sandbox.call(bash(command), None, &cancel).await;
        let (said, code) = bash_result(&outcome);
        assert_ne!(code, Some(0), "{command}: {said}");
        assert!(
            said.contains("Read-only file system")
                || said.contains("could not lock config file")
                || said.contains("Device or resource busy"),
            "{command}: {said}"
        );
    }
    let commit = sandbox
        .call(
            bash(
                "echo x > a.txt && git add a.txt && git -c user.name=a -c user.email=a@x commit -q -m two && git log --oneline | wc -l",
            ),
            None,
            &cancel,
        )
        .await;
    let (said, code) = bash_result(&commit);
    assert_eq!((said.trim(), code), ("2", Some(0)), "{said}");

    let outcome = sandbox
        .call(
            bash("mkdir -p .cursor && echo x > .cursor/mcp.json"),
            None,
            &cancel,
        )
        .await;
    assert_eq!(bash_result(&outcome).1, Some(0));
    let protected = sandbox.protected().unwrap().clone();
    let changes = tokio::task::spawn_blocking(move || protected.sweep())
        .await
        .unwrap();
    assert_eq!(changes.len(), 1, "{changes:#?}");
    assert_eq!(changes[0].path, h.rw.join(".cursor"));
    assert_eq!(changes[0].action, ProtectedAction::Quarantined);
    sandbox.close().await.unwrap();
    assert_eq!(
        std::fs::read_to_string(h.rw.join(".bashrc")).unwrap(),
        "original\n"
    );
    let config = std::fs::read_to_string(h.rw.join(".git/config")).unwrap();
    assert!(!config.contains("fsmonitor"), "{config}");
    assert!(!h.rw.join(".git/hooks/pre-commit").exists());
}

/// A protected path swapped for a link after the host pinned it (the gateway already holds the
/// create request) and before the gateway mounts it (the double holds its launch until then): the
/// gateway mounts by path and follows the link, so only the identity check from inside can
/// see it, and it refuses the session. Both targets: a never-granted sibling and the host's
/// `/etc`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_protected_path_swapped_after_the_pin_is_caught_from_inside() {
    for (name, target) in [
        ("the sibling", "../../sibling"),
        (
            "host /etc",
            "../../../../../../../../../../../../../../../../etc",
        ),
    ] {
        let h = Harness::start(Auth::Mtls).await;
        git(&h.rw, &["init", "-q", "-b", "main"]);
        let sibling = h.root.path().join("sibling");
        std::fs::create_dir(&sibling).unwrap();
        std::fs::write(sibling.join("secret.txt"), "SIBLING-SECRET\n").unwrap();
        chown_tree(&h.rw);
        chown_tree(&sibling);
        // Held until the swap is made (a fixed delay can be overrun on a loaded machine).
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
                "{name}: the start ended before the gateway saw it"
            );
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        let hooks = h.rw.join(".git/hooks");
        std::fs::rename(&hooks, h.rw.join(".git/hooks.real")).unwrap();
        std::os::unix::fs::symlink(target, &hooks).unwrap();
        h.double.release_launches();
        match start.await.unwrap() {
            Ok(sandbox) => {
                let outcome = sandbox
                    .call(
                        bash(&format!(
                            "cat {h}/secret.txt; ls {h}/passwd; touch {h}/planted",
                            h = hooks.display()
                        )),
                        None,
                        &CancellationToken::new(),
                    )
                    .await;
                let seen = bash_result(&outcome).0;
                sandbox.close().await.unwrap();
                panic!("{name}: the sandbox started with the swapped path mounted: {seen}");
            }
            Err(e) => {
                // Caught from inside; or, for `/etc`, the double's bubblewrap cannot even
                // place the mount (the link leads out of its new root) and the sandbox never
                // becomes ready: nothing ran either way.
                let text = e.to_string();
                let inside = matches!(e, sandbox_provider::ProviderError::AttestationFailed { .. })
                    && text.contains(&format!("protected_pinned:{}", hooks.display()));
                let never_ready = name == "host /etc"
                    && (text.contains("sandbox is not ready")
                        || text.contains("did not become ready"));
                assert!(inside || never_ready, "{name}: {text}");
                assert!(inside || name != "the sibling", "{name}: {text}");
            }
        }
        assert!(!sibling.join("planted").exists());
    }
}
