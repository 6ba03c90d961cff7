//! Escape suite, protected paths swapped for links while a wall starts: the host finds the
//! protected paths of a read-write grant (here a repository's `.git`, bound onto itself, and
//! its `hooks`, mounted read-only) by a walk before bubblewrap runs, and another writer of the
//! grant on the host flips one of them with a symbolic link to the host's `/etc` or to a
//! never-granted sibling. Every start must be refused or show the wall's own `/etc` and never
//! the sibling: the link's target is never mounted.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed set-up step fails the test"
)]

use crate::support;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use sandbox_provider::Sandbox;
use support::*;

fn q(path: &Path) -> String {
    sandbox_provider::local::sh_quote(&path.display().to_string())
}

/// `..` up to `/` from `folder`, then `rest`: a relative link that, placed in `folder`, names
/// `/rest` on the host (and the same path inside the wall's own tree).
fn up_to_root(folder: &Path, rest: &str) -> String {
    let depth = folder.components().count() - 1;
    format!("{}{rest}", "../".repeat(depth))
}

struct Swap {
    name: &'static str,
    /// The protected path flipped with the link.
    path: fn(&World) -> PathBuf,
    /// The link's text.
    target: fn(&World) -> String,
}

fn swaps() -> Vec<Swap> {
    vec![
        Swap {
            name: "hooks (read-only) for host /etc",
            path: |w| w.work().join(".git/hooks"),
            target: |w| up_to_root(&w.work().join(".git"), "etc"),
        },
        Swap {
            name: "hooks (read-only) for the sibling",
            path: |w| w.work().join(".git/hooks"),
            target: |_| "../../outside".into(),
        },
        Swap {
            name: ".git (bound read-write) for host /etc",
            path: |w| w.work().join(".git"),
            target: |w| up_to_root(&w.work(), "etc"),
        },
        Swap {
            name: ".git (bound read-write) for the sibling",
            path: |w| w.work().join(".git"),
            target: |_| "../outside".into(),
        },
    ]
}

/// Prints `ESCAPED …` when the wall shows the host's `/etc` or the sibling anywhere a mount
/// could have put it. Each file is read once: the swapper still runs, and the path may be the
/// link (to the wall's own `/etc`, whose `passwd` names `paddock`) or the folder between two
/// looks.
fn look(w: &World) -> String {
    let work = w.work();
    format!(
        "grep -qs '^paddock:' /etc/passwd || echo 'ESCAPED: /etc is not the wall s own'
for f in {hooks}/passwd {git}/passwd; do
  seen=$(cat \"$f\" 2>/dev/null)
  case \"$seen\" in *root:*) case \"$seen\" in *paddock:*) ;;
    *) echo \"ESCAPED: the host's /etc at $f\" ;; esac ;; esac
done
cat {hooks}/secret.txt {git}/secret.txt {outside}/secret.txt 2>/dev/null \
  | grep -q OUTSIDE-SECRET && echo 'ESCAPED: the sibling'
true",
        hooks = q(&work.join(".git/hooks")),
        git = q(&work.join(".git")),
        outside = q(&w.outside()),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn a_protected_path_swapped_for_a_link_racing_the_start_is_never_mounted() {
    let mut escapes = Vec::new();
    for swap in swaps() {
        let w = world();
        let git = std::process::Command::new("git")
            .args(["init", "-q"])
            .arg(w.work())
            .status()
            .expect("git is needed");
        assert!(git.success());
        std::fs::write(w.work().join(".git/hooks/marker"), "HOOKS\n").unwrap();
        let path = (swap.path)(&w);
        let link = w.root.path().join("swap.link");
        std::os::unix::fs::symlink((swap.target)(&w), &link).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let flipper = {
            let stop = stop.clone();
            let (a, b) = (path.clone(), link.clone());
            std::thread::spawn(move || {
                use std::ffi::CString;
                use std::os::unix::ffi::OsStrExt;
                let a = CString::new(a.as_os_str().as_bytes()).unwrap();
                let b = CString::new(b.as_os_str().as_bytes()).unwrap();
                let mut flips = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    // SAFETY: two valid NUL-terminated paths; renameat2 touches nothing else.
                    let rc = unsafe {
                        libc::renameat2(
                            libc::AT_FDCWD,
                            a.as_ptr(),
                            libc::AT_FDCWD,
                            b.as_ptr(),
                            libc::RENAME_EXCHANGE,
                        )
                    };
                    assert_eq!(rc, 0, "{}", std::io::Error::last_os_error());
                    flips += 1;
                }
                flips
            })
        };
        let (mut started, mut refused, mut leaked) = (0, 0, Vec::new());
        for _ in 0..30 {
            match w.provider.start_local(&w.request(&[]), &|_| {}).await {
                Ok(sandbox) => {
                    started += 1;
                    let r = bash(sandbox.as_ref(), &look(&w)).await;
                    let seen = format!("{}{}", stdout(&r), stderr(&r));
                    if seen.contains("ESCAPED") {
                        leaked.push(seen);
                    }
                    sandbox.close().await.unwrap();
                }
                Err(e) => {
                    let text = e.to_string();
                    assert!(
                        text.contains(&w.work().display().to_string()),
                        "{}: a refusal that does not name the folder: {text}",
                        swap.name
                    );
                    refused += 1;
                }
            }
        }
        stop.store(true, Ordering::Relaxed);
        let flips = flipper.join().unwrap();
        assert!(flips > 30, "{}: the swapper did not run", swap.name);
        assert_eq!(started + refused, 30);
        assert!(
            started > 0,
            "{}: no wall started ({refused} refused)",
            swap.name
        );
        if !leaked.is_empty() {
            escapes.push(format!(
                "{}: {} of {started} walls mounted the link's target ({refused} refused): \
                 {leaked:?}",
                swap.name,
                leaked.len()
            ));
        }
    }
    assert!(escapes.is_empty(), "{escapes:#?}");
}
