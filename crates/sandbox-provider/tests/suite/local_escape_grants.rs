//! Escape suite, granted folders that change between the grant and the wall's start: a granted
//! folder (or a folder above it) replaced by a symbolic link before a resume or a live grant
//! change, and a swap racing the start. Every attack must end in a refusal naming the folder,
//! or in a wall that shows exactly the folder that was granted.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed set-up step fails the test"
)]

use crate::support;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use protocol::{FolderAccess, FolderGrant};
use sandbox_provider::Sandbox;
use support::*;

fn q(path: &Path) -> String {
    sandbox_provider::local::sh_quote(&path.display().to_string())
}

/// Moves the granted `work` folder aside and puts a symbolic link to `target` in its place.
fn replace_with_link(w: &World, target: &str) {
    std::fs::rename(w.work(), w.root.path().join("work.real")).unwrap();
    std::os::unix::fs::symlink(target, w.work()).unwrap();
}

/// The relative links of the issue: a never-granted sibling, the host's `/etc` (the excess `..`
/// stop at `/`) and the host's `/tmp` (the parent of the test's folder), with what each attack
/// tries inside the wall and how its success shows.
struct LinkAttack {
    name: &'static str,
    target: &'static str,
    /// Run inside; prints `ESCAPED` when the link was followed.
    command: fn(&World) -> String,
}

fn attacks() -> Vec<LinkAttack> {
    vec![
        LinkAttack {
            name: "sibling",
            target: "outside",
            command: |w| {
                format!(
                    "grep -q OUTSIDE-SECRET {}/secret.txt && echo ESCAPED",
                    q(&w.work())
                )
            },
        },
        LinkAttack {
            name: "host /etc",
            target: "../../../../../../../../etc",
            command: |w| {
                format!(
                    "grep -q '^root:x:0:0:' {}/passwd && echo ESCAPED",
                    q(&w.work())
                )
            },
        },
        LinkAttack {
            name: "host /tmp read-write",
            target: "..",
            command: |w| {
                let name = w.root.path().file_name().unwrap().to_string_lossy();
                format!(
                    "[ -d {}/{name} ] && echo ESCAPED > {}/paddock-escaped-{name} && echo ESCAPED",
                    q(&w.work()),
                    q(&w.work())
                )
            },
        },
    ]
}

/// What a start that followed the link let a command do, or `None` when it was refused.
async fn outcome(
    w: &World,
    attack: &LinkAttack,
    started: Result<Arc<sandbox_provider::local::LocalSandbox>, sandbox_provider::ProviderError>,
) -> Option<String> {
    match started {
        Ok(sandbox) => {
            let r = bash(sandbox.as_ref(), &(attack.command)(w)).await;
            sandbox.close().await.unwrap();
            Some(format!("{}{}", stdout(&r), stderr(&r)))
        }
        Err(e) => {
            let text = e.to_string();
            assert!(
                text.contains(&w.work().display().to_string()) && text.contains("symbolic link"),
                "{}: the refusal does not name the folder and the link: {text}",
                attack.name
            );
            None
        }
    }
}

fn cleanup_tmp_marker(w: &World) {
    let name = w.root.path().file_name().unwrap().to_string_lossy();
    let marker = w
        .root
        .path()
        .parent()
        .unwrap()
        .join(format!("paddock-escaped-{name}"));
    let planted = exists(&marker);
    let _ = std::fs::remove_file(&marker);
    assert!(!planted, "a file was planted in the host's /tmp");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_grant_replaced_by_a_link_is_refused_on_resume() {
    for attack in attacks() {
        let w = world();
        replace_with_link(&w, attack.target);
        let started = w.provider.start_local(&w.request(&[]), &|_| {}).await;
        let seen = outcome(&w, &attack, started).await;
        cleanup_tmp_marker(&w);
        assert_eq!(
            seen, None,
            "{}: the resumed wall followed the link",
            attack.name
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_grant_replaced_by_a_link_is_refused_on_a_grant_change() {
    for attack in attacks() {
        let w = world();
        let old = w.start().await;
        replace_with_link(&w, attack.target);
        // The live change adds a folder; the swapped grant is still in the request.
        let extra = w.root.path().join("extra");
        std::fs::create_dir(&extra).unwrap();
        let mut request = w.request(&[]);
        request.folders.push(FolderGrant {
            path: extra.display().to_string(),
            access: FolderAccess::ReadOnly,
        });
        let started = w
            .provider
            .restart(old.as_ref(), &request, &|_| {})
            .await
            .map(|(sandbox, _note)| sandbox);
        let seen = outcome(&w, &attack, started).await;
        cleanup_tmp_marker(&w);
        assert_eq!(
            seen, None,
            "{}: the restarted wall followed the link",
            attack.name
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_folder_above_the_grant_replaced_by_a_link_is_refused() {
    let w = world();
    let nested = w.root.path().join("outer/inner");
    std::fs::create_dir_all(&nested).unwrap();
    std::fs::create_dir_all(w.outside().join("inner")).unwrap();
    std::fs::write(w.outside().join("inner/secret.txt"), "OUTSIDE-SECRET\n").unwrap();
    let mut request = w.request(&[]);
    request.folders.push(FolderGrant {
        path: nested.display().to_string(),
        access: FolderAccess::ReadOnly,
    });
    std::fs::rename(
        w.root.path().join("outer"),
        w.root.path().join("outer.real"),
    )
    .unwrap();
    std::os::unix::fs::symlink("outside", w.root.path().join("outer")).unwrap();
    match w.provider.start_local(&request, &|_| {}).await {
        Ok(sandbox) => {
            let r = bash(sandbox.as_ref(), &format!("cat {}/secret.txt", q(&nested))).await;
            sandbox.close().await.unwrap();
            panic!("the wall followed the link above the grant: {}", stdout(&r));
        }
        Err(e) => {
            let text = e.to_string();
            assert!(
                text.contains(&nested.display().to_string()) && text.contains("symbolic link"),
                "{text}"
            );
        }
    }
}

/// Flips `work` between the granted folder and a link to the never-granted sibling (an atomic
/// exchange of two names) while walls start: every wall that starts must show the granted
/// folder (its marker file), never the sibling's secret. Every fifth state is held 150 ms
/// (longer than a start; the folder and the link in turn) and the others 0.5 to 2 ms, and the
/// starts are spread out, so some see one state throughout and others a swap in the middle:
/// some walls must start (30 refusals would prove nothing about what a started wall mounts).
#[tokio::test(flavor = "multi_thread")]
async fn a_swap_racing_the_start_never_wins() {
    let w = world();
    std::fs::write(w.work().join("marker.txt"), "GRANTED\n").unwrap();
    let link = w.root.path().join("work.link");
    std::os::unix::fs::symlink("outside", &link).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let flipper = {
        let stop = stop.clone();
        let (a, b) = (w.work(), link.clone());
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
                let hold = if flips.is_multiple_of(5) {
                    150_000
                } else {
                    (flips % 5) * 500
                };
                std::thread::sleep(std::time::Duration::from_micros(hold));
            }
            flips
        })
    };
    let (mut started, mut refused, mut leaked) = (0, 0, Vec::new());
    for _ in 0..30 {
        match w.provider.start_local(&w.request(&[]), &|_| {}).await {
            Ok(sandbox) => {
                started += 1;
                let r = bash(
                    sandbox.as_ref(),
                    &format!(
                        "cat {work}/marker.txt {work}/secret.txt 2>/dev/null; true",
                        work = q(&w.work())
                    ),
                )
                .await;
                if stdout(&r).contains("OUTSIDE-SECRET") {
                    leaked.push(stdout(&r));
                }
                sandbox.close().await.unwrap();
            }
            Err(e) => {
                assert!(
                    e.to_string().contains(&w.work().display().to_string()),
                    "a refusal that does not name the folder: {e}"
                );
                refused += 1;
            }
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    stop.store(true, Ordering::Relaxed);
    let flips = flipper.join().unwrap();
    assert!(flips > 30, "the swapper did not run ({flips} flips)");
    assert_eq!(started + refused, 30);
    // Walls that never started prove nothing about what a started one mounts.
    assert!(started > 0, "no wall started ({refused} refused)");
    assert!(
        leaked.is_empty(),
        "{} of {started} walls showed the sibling ({refused} refused): {leaked:?}",
        leaked.len()
    );
}
