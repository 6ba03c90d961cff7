//! The protected files' host side on real folders: what the start walk finds and mounts, what
//! sweeps catch and undo (and what they leave alone), and approved writes made on the host.

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};
use std::process::Command;

use protocol::{FolderAccess, FolderGrant, NetworkProfileName};
use tool_protocol::{Data, Delete, EditFile, WriteFile};

use super::*;

struct Fixture {
    work: tempfile::TempDir,
    state: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Self {
        Self {
            work: tempfile::tempdir().unwrap(),
            state: tempfile::tempdir().unwrap(),
        }
    }

    fn root(&self) -> PathBuf {
        self.work.path().canonicalize().unwrap()
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.root().join(relative)
    }

    fn write(&self, relative: &str, text: &str) {
        let path = self.path(relative);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }

    fn git(&self, folder: &str, args: &[&str]) {
        let out = Command::new("git")
            .arg("-C")
            .arg(self.path(folder))
            .args(args)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
    }

    fn request(&self, extra: &[(&str, FolderAccess)]) -> SandboxRequest {
        let mut folders = vec![FolderGrant {
            path: self.root().display().to_string(),
            access: FolderAccess::ReadWrite,
        }];
        folders.extend(extra.iter().map(|(p, access)| FolderGrant {
            path: self.path(p).display().to_string(),
            access: *access,
        }));
        SandboxRequest {
            session_id: "s".into(),
            folders,
            cwd: self.root().display().to_string(),
            network_profile: NetworkProfileName::Strict,
            extra_hosts: Vec::new(),
            credentials: Vec::new(),
        }
    }

    fn start(&self) -> ProtectedFiles {
        self.start_with(&[])
    }

    fn start_with(&self, extra: &[(&str, FolderAccess)]) -> ProtectedFiles {
        let list = Arc::new(ProtectedList::builtin().unwrap());
        ProtectedFiles::start(
            list,
            &self.request(extra),
            self.state.path().join("quarantine"),
            true,
        )
    }
}

fn mounted(files: &ProtectedFiles) -> Vec<(String, bool)> {
    files
        .mounts()
        .into_iter()
        .map(|m| (m.path.display().to_string(), m.read_only))
        .collect()
}

#[test]
fn the_start_walk_finds_and_mounts_what_exists() {
    let f = Fixture::new();
    f.git("", &["init", "-q"]);
    f.write(".bashrc", "x");
    f.write(".vscode/settings.json", "{}");
    f.write("sub/deeper/.envrc", "x");
    f.write("a/b/c/d/.bashrc", "too deep for folder entries");
    fs::create_dir_all(f.path("nested/repo")).unwrap();
    f.git("nested/repo", &["init", "-q"]);
    f.git(
        "nested/repo",
        &["config", "core.hooksPath", "../../githooks"],
    );
    fs::create_dir(f.path("githooks")).unwrap();
    f.write("ro/.bashrc", "read-only grant: never walked");
    let files = f.start_with(&[("ro", FolderAccess::ReadOnly)]);
    let root = f.root().display().to_string();
    let mounts = mounted(&files);
    let expect = |rel: &str, read_only: bool| {
        let path = format!("{root}/{rel}");
        assert!(
            mounts.contains(&(path.clone(), read_only)),
            "{path} {read_only} in {mounts:#?}"
        );
    };
    expect(".git", false);
    expect("nested/repo/.git", false);
    expect(".git/config", true);
    expect(".git/hooks", true);
    expect(".git/info", true);
    expect(".bashrc", true);
    expect(".vscode", true);
    expect("sub/deeper/.envrc", true);
    expect("nested/repo/.git/config", true);
    expect("githooks", true);
    assert!(!mounts.iter().any(|(p, _)| p.ends_with("a/b/c/d/.bashrc")));
    assert!(!mounts.iter().any(|(p, _)| p.contains("/ro/")));
    // Parents come before what is mounted inside them.
    let git = mounts
        .iter()
        .position(|m| m.0 == format!("{root}/.git"))
        .unwrap();
    let config = mounts
        .iter()
        .position(|m| m.0 == format!("{root}/.git/config"))
        .unwrap();
    assert!(git < config);
    // Nothing changed: a sweep finds nothing and costs nothing.
    assert!(files.sweep().is_empty());
    let paths = files.paths();
    assert!(paths.iter().any(|(p, _)| p == &format!("{root}/githooks")));
}

#[test]
fn submodules_and_linked_worktrees_are_protected_too() {
    let f = Fixture::new();
    fs::create_dir_all(f.path("lib-src")).unwrap();
    f.git("lib-src", &["init", "-q"]);
    let identity = ["-c", "user.name=u", "-c", "user.email=u@x"];
    let mut commit = identity.to_vec();
    commit.extend(["commit", "-q", "--allow-empty", "-m", "x"]);
    f.git("lib-src", &commit);
    fs::create_dir_all(f.path("app")).unwrap();
    f.git("app", &["init", "-q"]);
    f.git("app", &commit);
    let source = f.path("lib-src").display().to_string();
    f.git(
        "app",
        &[
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "-q",
            &source,
            "lib",
        ],
    );
    f.git("app", &["config", "extensions.worktreeConfig", "true"]);
    f.git("app", &["worktree", "add", "-q", "-b", "side", "../wt"]);
    f.git(
        "wt",
        &["config", "--worktree", "core.sparseCheckout", "false"],
    );
    let files = f.start();
    let mounts = mounted(&files);
    let root = f.root().display().to_string();
    for (rel, read_only) in [
        ("app/.git", false),
        ("app/.git/modules/lib/config", true),
        ("app/.git/modules/lib/hooks", true),
        ("app/.git/worktrees/wt/config.worktree", true),
        ("app/lib/.git", true),
        ("wt/.git", true),
        ("app/.gitmodules", true),
    ] {
        let path = format!("{root}/{rel}");
        assert!(
            mounts.contains(&(path.clone(), read_only)),
            "{path} {read_only} in {mounts:#?}"
        );
    }
}

#[test]
fn links_are_not_mounted_but_their_targets_in_a_grant_are() {
    let f = Fixture::new();
    f.write("dotfiles/bashrc", "x");
    symlink("dotfiles/bashrc", f.path(".bashrc")).unwrap();
    symlink("/etc/hostname", f.path(".profile")).unwrap();
    let files = f.start();
    let root = f.root().display().to_string();
    let mounts = mounted(&files);
    assert!(
        mounts.contains(&(format!("{root}/dotfiles/bashrc"), true)),
        "{mounts:?}"
    );
    assert!(
        !mounts
            .iter()
            .any(|(p, _)| p.ends_with("/.bashrc") || p.ends_with("/.profile"))
    );
    assert!(!mounts.iter().any(|(p, _)| p == "/etc/hostname"));

    // Replacing the link is caught and the link put back.
    fs::remove_file(f.path(".bashrc")).unwrap();
    fs::write(f.path(".bashrc"), "planted").unwrap();
    let changes = files.sweep();
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert_eq!(changes[0].action, ProtectedAction::Restored);
    assert_eq!(
        fs::read_link(f.path(".bashrc")).unwrap(),
        PathBuf::from("dotfiles/bashrc")
    );
    let kept = changes[0].quarantined_to.as_ref().unwrap();
    assert_eq!(fs::read_to_string(kept).unwrap(), "planted");
}

#[test]
fn a_new_repository_with_a_hook_and_a_planted_config_is_caught() {
    let f = Fixture::new();
    let files = f.start();
    fs::create_dir(f.path("fresh")).unwrap();
    f.git("fresh", &["init", "-q"]);
    f.git("fresh", &["config", "core.fsmonitor", "touch /tmp/planted"]);
    f.write(
        "fresh/.git/hooks/pre-commit",
        "#!/bin/sh\ntouch /tmp/planted\n",
    );
    let changes = files.sweep();
    let by_path = |rel: &str| {
        changes
            .iter()
            .find(|c| c.path == f.path(rel))
            .unwrap_or_else(|| panic!("{rel} in {changes:#?}"))
    };
    let hook = by_path("fresh/.git/hooks/pre-commit");
    assert_eq!(hook.action, ProtectedAction::Quarantined);
    assert!(!f.path("fresh/.git/hooks/pre-commit").exists());
    assert!(hook.quarantined_to.as_ref().unwrap().exists());
    let config = by_path("fresh/.git/config");
    assert_eq!(config.action, ProtectedAction::Sanitized);
    assert!(
        config.detail.contains("core.fsmonitor"),
        "{}",
        config.detail
    );
    let kept = fs::read_to_string(f.path("fresh/.git/config")).unwrap();
    assert!(!kept.contains("fsmonitor") && kept.contains("repositoryformatversion"));
    assert_eq!(
        changes.len(),
        2,
        "the sample hooks and info/exclude stay: {changes:#?}"
    );
    // The repository still works, and the next sweep has nothing to say.
    f.git("fresh", &["status"]);
    assert!(files.sweep().is_empty());

    // The kept configuration changed in place later (no new inode, no new entry) is written
    // back as it was.
    let clean = fs::read_to_string(f.path("fresh/.git/config")).unwrap();
    let mut planted = fs::OpenOptions::new()
        .append(true)
        .open(f.path("fresh/.git/config"))
        .unwrap();
    std::io::Write::write_all(&mut planted, b"[core]\n\tfsmonitor = touch /tmp/x\n").unwrap();
    drop(planted);
    let restored = files.sweep();
    assert_eq!(restored.len(), 1, "{restored:#?}");
    assert_eq!(restored[0].action, ProtectedAction::Restored);
    assert_eq!(
        fs::read_to_string(f.path("fresh/.git/config")).unwrap(),
        clean
    );
    assert!(files.sweep().is_empty());

    // A hook added later to the now-known repository is caught too.
    f.write("fresh/.git/hooks/post-checkout", "#!/bin/sh\n");
    let later = files.sweep();
    assert_eq!(later.len(), 1, "{later:#?}");
    assert_eq!(later[0].path, f.path("fresh/.git/hooks/post-checkout"));
}

#[test]
fn ordinary_repositories_made_during_a_session_are_left_alone() {
    let f = Fixture::new();
    f.git("", &["init", "-q"]);
    let files = f.start();
    fs::create_dir(f.path("clone-me")).unwrap();
    f.git("clone-me", &["init", "-q"]);
    f.git(
        "clone-me",
        &[
            "-c",
            "user.name=u",
            "-c",
            "user.email=u@x",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "x",
        ],
    );
    f.git(
        "",
        &[
            "clone",
            "-q",
            &f.path("clone-me").display().to_string(),
            "copy",
        ],
    );
    f.git("", &["worktree", "add", "-q", "-b", "side", "side"]);
    let changes = files.sweep();
    assert!(changes.is_empty(), "{changes:#?}");
}

#[test]
fn new_editor_and_shell_files_are_quarantined_whole() {
    let f = Fixture::new();
    let files = f.start();
    f.write(".vscode/tasks.json", "{}");
    f.write(".vscode/launch.json", "{}");
    f.write("sub/.envrc", "x");
    f.write("src/main.rs", "fn main() {}");
    let changes = files.sweep();
    let paths: Vec<&Path> = changes.iter().map(|c| c.path.as_path()).collect();
    assert_eq!(
        paths,
        [f.path(".vscode").as_path(), f.path("sub/.envrc").as_path()]
    );
    assert!(!f.path(".vscode").exists() && !f.path("sub/.envrc").exists());
    assert!(f.path("src/main.rs").exists());
    let moved = changes[0].quarantined_to.as_ref().unwrap();
    assert!(moved.join("tasks.json").exists() && moved.join("launch.json").exists());
}

#[test]
fn a_git_file_pointing_outside_the_grants_goes_and_one_inside_stays() {
    let f = Fixture::new();
    let files = f.start();
    fs::create_dir_all(f.path("outside-worktree")).unwrap();
    f.write("outside-worktree/.git", "gitdir: /tmp/somewhere-else\n");
    fs::create_dir_all(f.path("inside")).unwrap();
    f.git(
        "inside",
        &[
            "init",
            "-q",
            "--separate-git-dir",
            &f.path("store.git").display().to_string(),
        ],
    );
    let changes = files.sweep();
    assert_eq!(changes.len(), 1, "{changes:#?}");
    assert_eq!(changes[0].path, f.path("outside-worktree/.git"));
    assert!(f.path("inside/.git").is_file());
}

#[test]
fn a_folder_deleted_and_made_again_is_watched_again() {
    let f = Fixture::new();
    fs::create_dir(f.path("build")).unwrap();
    let files = f.start();
    fs::remove_dir(f.path("build")).unwrap();
    fs::create_dir(f.path("build")).unwrap();
    assert!(files.sweep().is_empty());
    f.write("build/.envrc", "x");
    let changes = files.sweep();
    assert_eq!(changes.len(), 1, "{changes:#?}");
    assert_eq!(changes[0].path, f.path("build/.envrc"));
}

#[test]
fn an_overflowing_or_unwatched_change_is_still_found_by_a_walk() {
    let f = Fixture::new();
    let files = f.start();
    fs::create_dir(f.path("a")).unwrap();
    fs::rename(f.path("a"), f.path("b")).unwrap();
    f.write("b/.idea/workspace.xml", "x");
    let changes = files.sweep();
    assert_eq!(changes.len(), 1, "{changes:#?}");
    assert_eq!(changes[0].path, f.path("b/.idea"));
}

#[test]
fn approved_writes_are_made_in_place_without_following_links() {
    let f = Fixture::new();
    f.write(".bashrc", "old\n");
    f.write("real/x", "");
    symlink("real", f.path(".vscode")).unwrap();
    let files = f.start();
    let inode = fs::metadata(f.path(".bashrc")).unwrap().ino();
    let write = |path: &str, text: &str| {
        files.write(&ToolRequest::WriteFile(WriteFile {
            path: f.path(path).display().to_string(),
            content: Data::Text(text.into()),
            create_parents: None,
        }))
    };
    write(".bashrc", "new\n").unwrap();
    assert_eq!(fs::read_to_string(f.path(".bashrc")).unwrap(), "new\n");
    assert_eq!(
        fs::metadata(f.path(".bashrc")).unwrap().ino(),
        inode,
        "changed in place, so a read-only mount of the file shows it"
    );
    let edited = files
        .write(&ToolRequest::EditFile(EditFile {
            path: f.path(".bashrc").display().to_string(),
            old_string: "new".into(),
            new_string: "edited".into(),
            replace_all: None,
        }))
        .unwrap();
    assert!(matches!(edited, ToolResult::EditFile(r) if r.replacements == 1));
    assert_eq!(fs::read_to_string(f.path(".bashrc")).unwrap(), "edited\n");

    let refused = write(".vscode/settings.json", "{}")
        .unwrap_err()
        .to_string();
    assert!(refused.contains("symbolic link"), "{refused}");
    assert!(!f.path("real/settings.json").exists());
    let outside = write("../elsewhere/.bashrc", "x").unwrap_err().to_string();
    assert!(outside.contains("read-write folders"), "{outside}");

    // A new protected file written with approval is part of the baseline, not planted.
    write(".claude/settings.json", "{}").unwrap();
    assert!(files.sweep().is_empty());
    assert!(f.path(".claude/settings.json").exists());
    // ... but what a command adds next to it later is caught.
    f.write(".claude/commands/x.md", "planted");
    let changes = files.sweep();
    assert_eq!(changes.len(), 1, "{changes:#?}");
    assert_eq!(changes[0].path, f.path(".claude/commands"));

    // Changed in place by a command (it is not mounted): written back as approved.
    fs::write(f.path(".claude/settings.json"), "{\"hooks\": \"planted\"}").unwrap();
    let changes = files.sweep();
    assert_eq!(changes.len(), 1, "{changes:#?}");
    assert_eq!(changes[0].action, ProtectedAction::Restored);
    assert_eq!(
        fs::read_to_string(f.path(".claude/settings.json")).unwrap(),
        "{}"
    );
    // Replaced whole (it is not mounted: it was made during the session): judged as new.
    fs::remove_dir_all(f.path(".claude")).unwrap();
    f.write(".claude/settings.json", "{\"hooks\": \"planted\"}");
    let changes = files.sweep();
    assert_eq!(changes.len(), 1, "{changes:#?}");
    assert_eq!(changes[0].path, f.path(".claude"));
    write(".claude/settings.json", "{}").unwrap();
    files
        .write(&ToolRequest::Delete(Delete {
            path: f.path(".claude").display().to_string(),
            recursive: Some(true),
        }))
        .unwrap();
    assert!(!f.path(".claude").exists());
    let hook = f.path(".git/hooks");
    assert!(!hook.exists());
    assert_eq!(
        fs::metadata(f.path(".bashrc"))
            .unwrap()
            .permissions()
            .mode()
            & 0o111,
        0
    );
}
