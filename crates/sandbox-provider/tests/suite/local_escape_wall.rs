//! Escape suite, the wall's own parts: the host's `/etc` beyond what programs need, set-id
//! files planted in a grant for another account on the host, and the skeleton of folders
//! leading to the grants. Each attack runs through the real runner inside the local wall.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed set-up step fails the test"
)]

use crate::support;

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};

use protocol::{FolderAccess, FolderGrant};
use sandbox_provider::{Sandbox, SandboxRequest};
use support::*;

fn q(path: &Path) -> String {
    sandbox_provider::local::sh_quote(&path.display().to_string())
}

/// A root-only file in the host's `/etc`, removed when dropped.
struct EtcFile(PathBuf);

impl EtcFile {
    fn plant(name: &str, text: &str) -> Self {
        let path = PathBuf::from("/etc").join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(&path, text).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        Self(path)
    }
}

impl Drop for EtcFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// A root-only folder (0700) in the host's `/etc` holding a file others could read, removed
/// whole when dropped.
struct EtcFolder(PathBuf);

impl EtcFolder {
    fn plant(name: &str, text: &str) -> Self {
        let path = PathBuf::from("/etc").join(name);
        std::fs::create_dir(&path).unwrap();
        std::fs::write(path.join("inside.pem"), text).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o700)).unwrap();
        Self(path)
    }
}

impl Drop for EtcFolder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Running as root on root's folders, the sandbox's processes are host uid 0 (1000 inside):
/// a root-only file inside a folder `/etc` shows (`ssl/certs`), or a root-only folder there,
/// would be theirs to read in a copy that kept modes. Neither is copied.
#[tokio::test(flavor = "multi_thread")]
async fn root_only_entries_inside_an_allowed_etc_folder_are_absent() {
    let name = format!("paddock-root-only-{}", std::process::id());
    let file = EtcFile::plant(&format!("ssl/certs/{name}"), "ROOT-ONLY-SECRET\n");
    let folder = EtcFolder::plant(&format!("ssl/certs/{name}.d"), "ROOT-ONLY-SECRET\n");
    let w = world();
    let s = w.start().await;
    let r = bash(
        s.as_ref(),
        &format!(
            "echo owner $(id -u) $(stat -c %u /usr); \
             cat /etc/ssl/certs/{name} /etc/ssl/certs/{name}.d/inside.pem; \
             ls /etc/ssl/certs | grep -c . ; ls -d /etc/ssl/certs/{name}*"
        ),
    )
    .await;
    s.close().await.unwrap();
    drop((file, folder));
    let out = format!("{}{}", stdout(&r), stderr(&r));
    // The sandbox's processes are host root (seen as 1000 inside): root's files are theirs.
    let seen = stdout(&r);
    let owner: Vec<&str> = seen
        .lines()
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    assert!(
        owner.len() == 3 && owner[1] == owner[2],
        "the sandbox must own root's files for this attack: {out}"
    );
    assert!(!out.contains("ROOT-ONLY-SECRET"), "{out}");
    for path in [
        format!("/etc/ssl/certs/{name}:"),
        format!("/etc/ssl/certs/{name}.d/inside.pem:"),
    ] {
        assert!(
            out.contains(&format!("{path} No such file")),
            "{path} is there: {out}"
        );
    }
    // The rest of the folder is there: the certificates others may read.
    let listed: usize = stdout(&r)
        .lines()
        .nth(1)
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0);
    assert!(listed > 10, "the certificates are missing: {out}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_root_only_etc_file_is_absent() {
    let name = format!("paddock-root-only-{}", std::process::id());
    let planted = EtcFile::plant(&name, "ROOT-ONLY-SECRET\n");
    let nested = EtcFile::plant(&format!("default/{name}"), "ROOT-ONLY-SECRET\n");
    let w = world();
    let s = w.start().await;
    let r = bash(
        s.as_ref(),
        &format!("cat /etc/{name} /etc/default/{name}; ls /etc"),
    )
    .await;
    let out = format!("{}{}", stdout(&r), stderr(&r));
    assert!(!out.contains("ROOT-ONLY-SECRET"), "{out}");
    assert!(out.contains(&format!("/etc/{name}: No such file")), "{out}");
    let listing = stdout(&r);
    let listed: Vec<&str> = listing.lines().collect();
    for absent in [
        "shadow",
        "gshadow",
        "sudoers",
        "default",
        "security",
        "machine-id",
    ] {
        assert!(
            !listed.contains(&absent),
            "/etc/{absent} is there: {listed:?}"
        );
    }
    // The allowed entries are there and ordinary tools work.
    let r = bash(
        s.as_ref(),
        "ls /etc/ssl/certs | head -1 && getent passwd paddock && git --version && \
         python3 -c 'import ssl; print(ssl.get_default_verify_paths().cafile)' && \
         ssh -G example.com | grep -c '^hostname'",
    )
    .await;
    assert_eq!(r.exit_code, Some(0), "{}{}", stdout(&r), stderr(&r));
    s.close().await.unwrap();
    drop((planted, nested));
}

/// Runs `file -p -c 'id -u'` as `nobody` on the host (a bash copy keeps a set-uid euid with -p)
/// and returns what `id -u` printed. A run that cannot start fails the test: the check would
/// prove nothing (it needs root to become `nobody`, as the suite runs here and in CI).
fn euid_of_running_as_nobody(file: &Path) -> String {
    let out = std::process::Command::new(file)
        .args(["-p", "-c", "id -u"])
        .uid(65534)
        .gid(65534)
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "{} could not be run as nobody ({e}); this check needs the suite to run as root",
                file.display()
            )
        });
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn no_set_id_file_outlives_the_sandbox() {
    let w = world();
    for dir in [w.root.path(), &w.work()] {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let s = w.start().await;
    let work = q(&w.work());
    // Every way to ask for a set-id bit: chmod(1), the chmod/open/mkdir/mknod calls, install.
    let attempts = [
        format!("cp /bin/bash {work}/x && chmod u+s {work}/x"),
        format!("cp /bin/bash {work}/g && chmod g+s {work}/g"),
        format!("cp /bin/bash {work}/y && chmod 4755 {work}/y"),
        format!("install -m 4755 /bin/bash {work}/z"),
        format!("mkdir -m 2755 {work}/d"),
        format!(
            "python3 -c \"import os; fd = os.open('{}/o', os.O_CREAT | os.O_WRONLY, 0o4755); \
             os.write(fd, open('/bin/bash', 'rb').read()); os.fchmod(fd, 0o4755)\"",
            w.work().display()
        ),
        format!(
            "python3 -c \"import os; os.mknod('{}/n', 0o104755)\"",
            w.work().display()
        ),
    ];
    for attempt in &attempts {
        let r = bash(s.as_ref(), attempt).await;
        assert_ne!(
            r.exit_code,
            Some(0),
            "{attempt}: succeeded: {}{}",
            stdout(&r),
            stderr(&r)
        );
    }
    let r = bash(
        s.as_ref(),
        &format!("stat -c '%a %n' {work}/* 2>/dev/null; true"),
    )
    .await;
    s.close().await.unwrap();
    let mut planted = Vec::new();
    let mut run = Vec::new();
    for entry in std::fs::read_dir(w.work()).unwrap() {
        let path = entry.unwrap().path();
        let mode = std::fs::symlink_metadata(&path)
            .unwrap()
            .permissions()
            .mode();
        if mode & 0o6000 != 0 {
            planted.push(format!("{} {:o}", path.display(), mode));
        }
        // Every copy others may run is run as nobody and must stay nobody.
        if path.is_file() && mode & 0o001 != 0 {
            let euid = euid_of_running_as_nobody(&path);
            assert_eq!(
                euid,
                "65534",
                "{} ran as nobody with euid {euid:?}",
                path.display()
            );
            run.push(path.file_name().unwrap().to_string_lossy().into_owned());
        }
    }
    // The copies whose chmod was refused (`x`, `g`, `y`) are there and were run: the check
    // above cannot have passed for want of files.
    run.sort();
    for name in ["g", "x", "y"] {
        assert!(
            run.iter().any(|r| r == name),
            "{name} was not run as nobody: {run:?}"
        );
    }
    assert!(
        planted.is_empty(),
        "set-id files outlived the sandbox: {planted:?} (inside: {})",
        stdout(&r)
    );
}

/// Every system call that can set a set-id bit, each with a plain mode (which must work) and a
/// set-id mode (refused with `EPERM`; `openat2` answers `ENOSYS`): `open`, `openat` and `creat`
/// creating, `O_TMPFILE` then `linkat`, `mknod`, `mknodat`, `mkdir`, `mkdirat`, `chmod`,
/// `fchmod`, `fchmodat`, `fchmodat2`. No set-id file is left in the grant.
#[tokio::test(flavor = "multi_thread")]
async fn every_call_that_sets_a_set_id_bit_is_refused() {
    let w = world();
    let s = w.start().await;
    let dir = w.work().join("attempts");
    std::fs::create_dir(&dir).unwrap();
    let r = bash(
        s.as_ref(),
        &test_support::hostile::set_id_attacks(&dir.display().to_string()),
    )
    .await;
    s.close().await.unwrap();
    let out = format!("{}{}", stdout(&r), stderr(&r));
    assert!(!out.contains("ESCAPED"), "{out}");
    assert!(!out.contains("BROKEN"), "{out}");
    let checked: usize = out
        .lines()
        .find_map(|l| l.strip_prefix("checked "))
        .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| panic!("the attacks did not finish: {out}"));
    assert!(checked >= 20, "only {checked} calls tried: {out}");
    assert_eq!(set_id_files(&w.work()), Vec::<String>::new(), "{out}");
}

/// A grant larger than the set-id sweep looks at is not reported clean: the start's sweep
/// stops at its limit (lowered here from 200,000 to 10 entries), its check fails, and the
/// session is refused saying why; a grant within the limit starts.
#[tokio::test(flavor = "multi_thread")]
async fn a_set_id_sweep_cut_off_at_its_limit_refuses_the_start() {
    let w = world_with(WorldOptions {
        set_id_sweep_limit: Some(10),
        ..WorldOptions::default()
    });
    for i in 0..5 {
        std::fs::write(w.work().join(format!("f{i}")), "").unwrap();
    }
    let s = w.start().await;
    s.close().await.unwrap();
    std::fs::create_dir(w.work().join("more")).unwrap();
    for i in 0..20 {
        std::fs::write(w.work().join(format!("more/f{i}")), "").unwrap();
    }
    let refused = match w.provider.start_local(&w.request(&[]), &|_| {}).await {
        Ok(_) => panic!("a grant the sweep could not finish was reported clean"),
        Err(e) => e.to_string(),
    };
    assert!(
        refused.contains("set_id_files_stripped") && refused.contains("stopped after 10 entries"),
        "{refused}"
    );
}

/// Files below `dir` (following no link) with a set-uid or set-gid bit.
fn set_id_files(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let meta = std::fs::symlink_metadata(&path).unwrap();
        if meta.is_dir() {
            found.extend(set_id_files(&path));
        } else if meta.permissions().mode() & 0o6000 != 0 {
            found.push(format!(
                "{} {:o}",
                path.display(),
                meta.permissions().mode()
            ));
        }
    }
    found
}

/// A folder of this test's under `base` on the host, made with `base` when it is missing;
/// removed when dropped (with `base`'s missing ancestors, if the test made them).
struct HostFolder {
    dir: Option<tempfile::TempDir>,
    made: Option<PathBuf>,
}

impl HostFolder {
    fn under(base: &Path) -> Self {
        let made = base
            .ancestors()
            .take_while(|a| !a.exists())
            .last()
            .map(Path::to_path_buf);
        std::fs::create_dir_all(base).unwrap();
        let dir = tempfile::Builder::new()
            .prefix("paddock-skeleton-")
            .tempdir_in(base)
            .unwrap();
        Self {
            dir: Some(dir),
            made,
        }
    }

    fn path(&self) -> &Path {
        self.dir.as_ref().unwrap().path()
    }
}

impl Drop for HostFolder {
    fn drop(&mut self) {
        drop(self.dir.take());
        if let Some(made) = &self.made {
            let _ = std::fs::remove_dir_all(made);
        }
    }
}

/// Grants two folders deep in the wall's own writable folders, `/tmp` and the wall's home
/// (`/home/paddock` inside), whatever `$TMPDIR` says: the folders above them are the wall's
/// skeleton, which a command can neither move, empty nor add to.
#[tokio::test(flavor = "multi_thread")]
async fn the_skeleton_above_the_grants_cannot_be_moved() {
    let w = world();
    let in_tmp = HostFolder::under(Path::new("/tmp"));
    let in_home = HostFolder::under(Path::new(sandbox_provider::local::HOME_INSIDE));
    let grants: Vec<(PathBuf, PathBuf)> = [&in_tmp, &in_home]
        .iter()
        .map(|top| {
            let work = top.path().join("work");
            std::fs::create_dir(&work).unwrap();
            std::fs::write(work.join("kept.txt"), "kept\n").unwrap();
            (top.path().to_path_buf(), work)
        })
        .collect();
    let request = SandboxRequest {
        folders: grants
            .iter()
            .map(|(_, work)| FolderGrant {
                path: work.display().to_string(),
                access: FolderAccess::ReadWrite,
            })
            .collect(),
        cwd: grants[0].1.display().to_string(),
        ..w.request(&[])
    };
    let s = match w.provider.start_local(&request, &|_| {}).await {
        Ok(s) => s,
        Err(e) => panic!("the wall did not start: {e}"),
    };
    for (top, work) in &grants {
        let base = top.parent().unwrap();
        let r = bash(
            s.as_ref(),
            &format!(
                "cd /; mv {top} {moved}; rmdir {work}; mv {work} {top}/elsewhere; \
                 mkdir {top}/new && echo CREATED; true",
                top = q(top),
                moved = q(&base.join("moved")),
                work = q(work)
            ),
        )
        .await;
        assert!(!stdout(&r).contains("CREATED"), "{}", stdout(&r));
        let r = bash(s.as_ref(), &format!("cat {}/kept.txt", q(work))).await;
        assert_eq!(stdout(&r), "kept\n", "{}: {}", work.display(), stderr(&r));
    }
    let r = bash(s.as_ref(), "pwd && echo still-working").await;
    assert_eq!(
        stdout(&r),
        format!("{}\nstill-working\n", grants[0].1.display()),
        "{}",
        stderr(&r)
    );
    s.close().await.unwrap();
    for (top, work) in &grants {
        assert!(work.join("kept.txt").is_file(), "{} moved", top.display());
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn set_id_files_in_a_grant_are_stripped_at_start_and_at_close() {
    let w = world();
    let plant = |name: &str| {
        let path = w.work().join(name);
        std::fs::copy("/bin/true", &path).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o4755)).unwrap();
        path
    };
    let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o7777;
    // Left by an earlier wall (or placed from outside): found before this one starts.
    let before = plant("left-behind");
    let s = w.start().await;
    assert_eq!(mode(&before), 0o755);
    let canary = s
        .attestation()
        .canaries
        .iter()
        .find(|c| c.name == "set_id_files_stripped")
        .expect("the sweep is in the attestation");
    assert!(
        canary.passed && canary.detail.contains("left-behind (was 4755)"),
        "{canary:?}"
    );
    // Placed while the session runs: gone when it closes.
    let during = plant("during");
    s.close().await.unwrap();
    assert_eq!(mode(&during), 0o755);
}
