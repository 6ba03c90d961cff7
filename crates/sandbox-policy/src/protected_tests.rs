use super::*;

fn list() -> ProtectedList {
    ProtectedList::builtin().expect("config/protected.toml parses and passes its checks")
}

fn names(path: &str) -> Vec<&str> {
    path.split('/').filter(|n| !n.is_empty()).collect()
}

#[test]
fn the_shipped_list_holds_what_the_host_runs() {
    let list = list();
    let folder: Vec<String> = list
        .entries()
        .iter()
        .filter(|e| e.scope == ProtectedScope::Folder)
        .map(ProtectedEntry::path)
        .collect();
    for expected in [
        ".bashrc",
        ".bash_profile",
        ".bash_login",
        ".profile",
        ".zshrc",
        ".zprofile",
        ".zshenv",
        ".zlogin",
        ".envrc",
        ".gitconfig",
        ".gitmodules",
        ".git",
        ".vscode",
        ".idea",
        ".mcp.json",
        ".claude",
    ] {
        assert!(folder.contains(&expected.to_owned()), "{expected}");
    }
    let git: Vec<String> = list
        .entries()
        .iter()
        .filter(|e| e.scope == ProtectedScope::GitDir)
        .map(ProtectedEntry::path)
        .collect();
    assert_eq!(git, ["config", "config.worktree", "hooks", "info"]);
    assert_eq!(list.hooks_path().scope, ProtectedScope::HooksPath);
    assert!(list.entries().iter().all(|e| !e.reason.is_empty()));
    assert_eq!(list.describe().len(), list.entries().len());
}

#[test]
fn folder_entries_cover_their_contents_and_file_entries_only_files() {
    let list = list();
    let path = |p: &str| list.in_folder(&names(p), None).map(ProtectedEntry::path);
    assert_eq!(path(".vscode/tasks.json").as_deref(), Some(".vscode"));
    assert_eq!(path(".vscode").as_deref(), Some(".vscode"));
    assert_eq!(path(".config/git/config").as_deref(), Some(".config/git"));
    assert_eq!(path(".bashrc").as_deref(), Some(".bashrc"));
    assert_eq!(path(".bashrc/x"), None, "a file entry has no contents");
    assert_eq!(path("src/main.rs"), None);
    assert_eq!(path(".config/other"), None);
    // `.git` the file (a worktree's pointer) is protected; `.git` the folder is a repository.
    assert!(list.in_folder(&[".git"], Some(false)).is_some());
    assert!(list.in_folder(&[".git"], Some(true)).is_none());
    assert!(list.in_folder(&[".vscode"], Some(false)).is_none());
}

#[test]
fn git_entries_are_found_in_every_kind_of_git_directory() {
    let list = list();
    let hit = |p: &str| list.lexical(&names(p), None).map(ProtectedEntry::path);
    for (path, entry) in [
        (".git/config", "config"),
        (".git/hooks/pre-commit", "hooks"),
        (".git/hooks", "hooks"),
        (".git/info/attributes", "info"),
        ("sub/dir/.git/config", "config"),
        ("server.git/hooks/post-receive", "hooks"),
        (".git/modules/lib/config", "config"),
        (".git/modules/libs/nested/hooks/pre-commit", "hooks"),
        (".git/worktrees/feature/config.worktree", "config.worktree"),
        (".git/modules/lib/modules/inner/config", "config"),
    ] {
        assert_eq!(hit(path).as_deref(), Some(entry), "{path}");
    }
    for path in [
        ".git/HEAD",
        ".git/index",
        ".git/objects/ab/cdef",
        ".git/refs/heads/main",
        ".git/logs/HEAD",
        ".git/COMMIT_EDITMSG",
        ".git/ORIG_HEAD",
        ".git/packed-refs",
        ".git/rebase-merge/done",
        ".git/worktrees/feature/index",
        ".git/modules/lib/HEAD",
        "config",
        "hooks/pre-commit",
        "src/config",
    ] {
        assert_eq!(hit(path), None, "{path} stays writable");
    }
}

#[test]
fn folder_entries_are_looked_for_down_to_the_depth_limit() {
    let list = list();
    let limit = Some(list.limits.folder_depth);
    assert!(list.lexical(&names("a/b/c/.vscode/x"), limit).is_some());
    assert!(list.lexical(&names("a/b/c/d/.vscode/x"), limit).is_none());
    assert!(list.lexical(&names("a/b/c/d/.vscode/x"), None).is_some());
    // Git directories have no depth limit.
    assert!(
        list.lexical(&names("a/b/c/d/e/.git/hooks/x"), limit)
            .is_some()
    );
}

#[test]
fn globs_name_the_same_paths() {
    let globs = list().globs();
    let find = |glob: &str| globs.iter().any(|(g, _)| g == glob);
    for glob in [
        "**/.bashrc",
        "**/.vscode/**",
        "**/*.git/config",
        "**/*.git/hooks/**",
        "**/*.git/modules/**/config",
        "**/*.git/worktrees/*/config.worktree",
        "**/.git",
    ] {
        assert!(find(glob), "{glob} in {globs:?}");
    }
}

#[test]
fn new_repositories_keep_what_git_writes_and_lose_the_rest() {
    let list = list();
    let init = "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n";
    assert!(list.judge_new_config(init).is_clean());
    let clone = format!(
        "{init}[remote \"origin\"]\n\turl = https://github.com/o/r.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n[branch \"main\"]\n\tremote = origin\n\tmerge = refs/heads/main\n"
    );
    assert!(list.judge_new_config(&clone).is_clean());
    let planted = format!("{init}\tfsmonitor = touch /tmp/x\n\thooksPath = /p/planted\n");
    let judged = list.judge_new_config(&planted);
    assert_eq!(judged.removed, ["core.fsmonitor", "core.hookspath"]);
    assert_eq!(judged.kept, init);
    let modules = "[submodule \"lib\"]\n\tpath = lib\n\turl = https://example.com/lib.git\n";
    assert!(list.judge_new_gitmodules(modules).is_clean());
    let update = format!("{modules}\tupdate = !sh -c id\n");
    assert_eq!(
        list.judge_new_gitmodules(&update).removed,
        ["submodule.lib.update"]
    );
    assert!(list.hook_is_inert("pre-commit.sample"));
    assert!(!list.hook_is_inert("pre-commit"));
    assert!(list.info_file_is_inert("exclude"));
    assert!(!list.info_file_is_inert("attributes"));
}

#[test]
fn a_bad_list_is_refused_naming_the_entry() {
    let shipped = BUILTIN;
    let cases = [
        (
            shipped.replacen("path = \".bashrc\"", "path = \"../.bashrc\"", 1),
            "`..` is not a plain",
        ),
        (
            shipped.replacen("path = \".bashrc\"", "path = \"/etc/x\"", 1),
            "relative path",
        ),
        (
            shipped.replacen("kind = \"file\"", "kind = \"socket\"", 1),
            "kind `socket`",
        ),
        (
            shipped.replacen("path = \".zshrc\"", "path = \".bashrc\"", 1),
            "listed twice",
        ),
        (
            shipped.replacen("max_folders = 50000", "max_folders = 0", 1),
            "limits.max_folders",
        ),
        (
            shipped.replacen("\"core.bare\"", "\"core\"", 1),
            "new_repository.config_keys",
        ),
        (format!("{shipped}\n[surprise]\nx = 1\n"), "surprise"),
    ];
    for (text, expected) in cases {
        let error = ProtectedList::parse(&text).unwrap_err().to_string();
        assert!(error.contains(expected), "`{expected}` in {error}");
    }
}
