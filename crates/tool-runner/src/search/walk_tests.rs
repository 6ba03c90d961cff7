use std::sync::atomic::AtomicBool;

use super::*;
use crate::search::test_dir::TestDir;

fn collect(base: &Path, options: WalkOptions) -> Vec<(String, EntryKind)> {
    let cancel = AtomicBool::new(false);
    let mut seen = Vec::new();
    walk(base, options, &cancel, |entry| {
        assert_eq!(entry.path, base.join(entry.relative));
        assert_eq!(entry.components.join("/"), entry.relative);
        seen.push((entry.relative.to_owned(), entry.kind));
        Visit::Continue
    })
    .unwrap();
    seen
}

fn names(entries: &[(String, EntryKind)]) -> Vec<&str> {
    entries.iter().map(|(name, _)| name.as_str()).collect()
}

#[test]
fn entries_come_sorted_folders_before_their_contents_and_git_is_skipped() {
    let dir = TestDir::new("walk-order");
    for file in [
        "z.txt",
        "a/b.txt",
        "a/c/d.txt",
        "a-b.txt",
        ".hidden",
        ".git/config",
    ] {
        dir.write(file, "x");
    }
    dir.write("sub/.git", "gitdir: elsewhere");
    let seen = collect(dir.path(), WalkOptions::default());
    assert_eq!(
        names(&seen),
        [
            ".hidden",
            "a",
            "a/b.txt",
            "a/c",
            "a/c/d.txt",
            "a-b.txt",
            "sub",
            "z.txt"
        ]
    );
    assert_eq!(seen[1].1, EntryKind::Dir);
    assert_eq!(seen[2].1, EntryKind::File);
}

#[test]
fn symbolic_links_are_reported_but_never_followed() {
    let outside = TestDir::new("walk-outside");
    outside.write("secret.txt", "secret");
    outside.write("nested/deeper.txt", "secret");
    let dir = TestDir::new("walk-links");
    dir.write("a/b.txt", "inside");
    dir.symlink(outside.path(), "link-to-outside-folder");
    dir.symlink(outside.path().join("secret.txt"), "link-to-outside-file");
    dir.symlink("a", "link-to-inside-folder");
    dir.symlink("a/b.txt", "link-to-inside-file");
    dir.symlink("../..", "a/link-to-grandparent");
    dir.symlink("missing", "dangling");
    dir.symlink("loop", "loop");
    let seen = collect(dir.path(), WalkOptions::default());
    assert_eq!(
        names(&seen),
        [
            "a",
            "a/b.txt",
            "a/link-to-grandparent",
            "dangling",
            "link-to-inside-file",
            "link-to-inside-folder",
            "link-to-outside-file",
            "link-to-outside-folder",
            "loop",
        ]
    );
    for (name, kind) in &seen {
        if name.contains("link") || name == "dangling" || name == "loop" {
            assert_eq!(*kind, EntryKind::Symlink, "{name}");
        }
    }
}

#[test]
fn a_base_link_is_followed_but_a_file_or_missing_base_is_refused() {
    let dir = TestDir::new("walk-base");
    dir.write("real/file.txt", "x");
    // The caller authorised the base (it may be `/proc/self/fd/<n>`): a link there is followed.
    let link = dir.symlink("real", "link");
    assert_eq!(names(&collect(&link, WalkOptions::default())), ["file.txt"]);

    let cancel = AtomicBool::new(false);
    let visit_nothing = |_: &Entry<'_>| -> Visit { panic!("nothing should be visited") };
    let file = dir.path().join("real/file.txt");
    let error = walk(&file, WalkOptions::default(), &cancel, visit_nothing).unwrap_err();
    assert_eq!(error.code(), tool_protocol::ErrorCode::NotADirectory);

    let missing = dir.path().join("missing");
    let error = walk(&missing, WalkOptions::default(), &cancel, visit_nothing).unwrap_err();
    assert_eq!(error.code(), tool_protocol::ErrorCode::NotFound);
}

#[test]
fn an_open_folder_handle_works_as_the_base() {
    let dir = TestDir::new("walk-proc-fd");
    dir.write("inside.txt", "x");
    let handle = File::open(dir.path()).unwrap();
    let base = PathBuf::from(format!("/proc/self/fd/{}", handle.as_raw_fd()));
    assert_eq!(
        names(&collect(&base, WalkOptions::default())),
        ["inside.txt"]
    );
}

#[test]
fn cancel_stops_the_walk_before_the_next_entry() {
    let dir = TestDir::new("walk-cancel");
    for i in 0..20 {
        dir.write(&format!("f{i:02}"), "x");
    }
    let cancel = AtomicBool::new(false);
    let mut visited = 0;
    let result = walk(dir.path(), WalkOptions::default(), &cancel, |_| {
        visited += 1;
        if visited == 5 {
            cancel.store(true, Ordering::Relaxed);
        }
        Visit::Continue
    });
    assert!(matches!(result, Err(SearchError::Cancelled)));
    assert_eq!(visited, 5);
}

#[test]
fn skip_dir_and_stop_are_obeyed() {
    let dir = TestDir::new("walk-control");
    for file in ["a/1", "a/2", "b/1", "c/1"] {
        dir.write(file, "x");
    }
    let cancel = AtomicBool::new(false);
    let mut seen = Vec::new();
    walk(dir.path(), WalkOptions::default(), &cancel, |entry| {
        seen.push(entry.relative.to_owned());
        match entry.relative {
            "a" => Visit::SkipDir,
            "b/1" => Visit::Stop,
            _ => Visit::Continue,
        }
    })
    .unwrap();
    assert_eq!(seen, ["a", "b", "b/1"]);
}

#[test]
fn nested_gitignores_and_negations_decide_what_is_walked() {
    let dir = TestDir::new("walk-gitignore");
    dir.write(
        ".gitignore",
        "*.log\nbuild/\n!important.log\n/top-only\n!build/keep.log\n",
    );
    for file in [
        "app.log",
        "important.log",
        "build/out.bin",
        "build/keep.log",
        "src/build.rs",
        "top-only",
        "src/top-only",
        "src/app.log",
        "src/x.tmp",
        "x.tmp",
        "src/deep/y.tmp",
        "src/deep/z.log",
    ] {
        dir.write(file, "x");
    }
    dir.write("src/.gitignore", "!app.log\n*.tmp\n");
    // A linked .gitignore is not followed: its rules (ignore everything) do not apply.
    let rules = TestDir::new("walk-gitignore-rules");
    rules.write("ignore-all", "*\n");
    dir.write("linked/kept.txt", "x");
    dir.symlink(rules.path().join("ignore-all"), "linked/.gitignore");

    let respecting = WalkOptions {
        respect_gitignore: true,
    };
    let seen = collect(dir.path(), respecting);
    assert_eq!(
        names(&seen),
        [
            ".gitignore",
            "important.log",
            "linked",
            "linked/.gitignore",
            "linked/kept.txt",
            "src",
            "src/.gitignore",
            "src/app.log",
            "src/build.rs",
            "src/deep",
            "src/top-only",
            "x.tmp",
        ]
    );
    // Without .gitignore handling everything is walked (but still not .git).
    let all = collect(dir.path(), WalkOptions::default());
    assert!(names(&all).contains(&"build/keep.log"));
    assert!(names(&all).contains(&"src/deep/z.log"));
}
