use std::os::unix::fs::symlink;
use std::path::Path;

use tool_protocol::{ErrorCode, RootMode};

use super::*;

struct Fixture {
    _dir: tempfile::TempDir,
    base: PathBuf,
}

/// base/rw (read-write root) with a.txt, sub/b.txt; base/ro (read-only root) with r.txt;
/// base/outside/secret.txt.
fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    for folder in ["rw/sub", "ro", "outside"] {
        std::fs::create_dir_all(base.join(folder)).unwrap();
    }
    std::fs::write(base.join("rw/a.txt"), "a").unwrap();
    std::fs::write(base.join("rw/sub/b.txt"), "b").unwrap();
    std::fs::write(base.join("ro/r.txt"), "r").unwrap();
    std::fs::write(base.join("outside/secret.txt"), "secret").unwrap();
    Fixture { _dir: dir, base }
}

impl Fixture {
    fn path(&self, rel: &str) -> String {
        self.base.join(rel).to_string_lossy().into_owned()
    }

    fn guard(&self) -> PathGuard {
        PathGuard::new(
            &[
                (self.path("rw"), RootMode::ReadWrite),
                (self.path("ro"), RootMode::ReadOnly),
            ],
            None,
        )
        .unwrap()
    }
}

fn code(result: Result<Resolved, ToolError>) -> ErrorCode {
    result.unwrap_err().code
}

#[test]
fn resolves_relative_and_absolute_paths_inside_roots() {
    let fx = fixture();
    let guard = fx.guard();
    assert_eq!(guard.cwd(), Path::new(&fx.path("rw")));
    let rel = guard.resolve("path", "sub/b.txt", Options::FOLLOW).unwrap();
    assert_eq!(rel.display(), fx.path("rw/sub/b.txt"));
    assert_eq!(rel.mode, RootMode::ReadWrite);
    assert!(rel.existing().unwrap().1.is_file());
    let abs = guard
        .resolve("path", &fx.path("ro/r.txt"), Options::FOLLOW)
        .unwrap();
    assert_eq!(abs.mode, RootMode::ReadOnly);
    assert_eq!(
        abs.require_writable().unwrap_err().message,
        format!("{}: in a read-only folder", fx.path("ro/r.txt"))
    );
}

#[test]
fn a_root_itself_resolves_as_root() {
    let fx = fixture();
    let guard = fx.guard();
    for input in [".", "sub/..", &fx.path("rw")] {
        let resolved = guard.resolve("path", input, Options::FOLLOW).unwrap();
        assert!(resolved.is_root(), "{input}");
        assert_eq!(resolved.display(), fx.path("rw"));
    }
}

#[test]
fn missing_final_name_is_an_entry_without_handle() {
    let fx = fixture();
    let resolved = fx
        .guard()
        .resolve("path", "sub/new.txt", Options::FOLLOW)
        .unwrap();
    assert_eq!(resolved.existing().unwrap_err().code, ErrorCode::NotFound);
    let missing_parent = fx.guard().resolve("path", "nope/new.txt", Options::FOLLOW);
    assert_eq!(code(missing_parent), ErrorCode::NotFound);
}

#[test]
fn dot_dot_escapes_are_refused() {
    let fx = fixture();
    let guard = fx.guard();
    for input in [
        "../outside/secret.txt",
        "sub/../../outside/secret.txt",
        "/etc/passwd",
    ] {
        let err = guard.resolve("path", input, Options::FOLLOW).unwrap_err();
        assert_eq!(err.code, ErrorCode::OutsideRoots, "{input}");
        assert_eq!(
            err.message,
            format!("{input}: outside the session's folders")
        );
    }
    // Leaving a root upward and coming back into another one is fine.
    let back = guard
        .resolve("path", "../ro/r.txt", Options::FOLLOW)
        .unwrap();
    assert_eq!(back.display(), fx.path("ro/r.txt"));
    assert_eq!(back.mode, RootMode::ReadOnly);
}

#[test]
fn symlinks_are_followed_only_while_they_stay_inside() {
    let fx = fixture();
    symlink("sub/b.txt", fx.base.join("rw/inner")).unwrap();
    symlink(fx.base.join("outside"), fx.base.join("rw/out_dir")).unwrap();
    symlink("/etc/passwd", fx.base.join("rw/passwd")).unwrap();
    symlink("../ro", fx.base.join("rw/to_ro")).unwrap();
    let guard = fx.guard();
    let inner = guard.resolve("path", "inner", Options::FOLLOW).unwrap();
    assert_eq!(inner.display(), fx.path("rw/sub/b.txt"));
    let kept = guard.resolve("path", "inner", Options::KEEP_LINK).unwrap();
    assert!(kept.existing().unwrap().1.file_type().is_symlink());
    assert_eq!(kept.display(), fx.path("rw/inner"));
    for input in ["out_dir/secret.txt", "passwd"] {
        let err = guard.resolve("path", input, Options::FOLLOW).unwrap_err();
        assert_eq!(err.code, ErrorCode::OutsideRoots, "{input}");
        assert!(
            err.message.contains("a symbolic link leads to"),
            "{}",
            err.message
        );
    }
    // The link itself may be stat'ed and deleted: it lives inside the root.
    assert!(guard.resolve("path", "passwd", Options::KEEP_LINK).is_ok());
    // Through a symlink into the read-only root, the read-only mode applies.
    let via = guard
        .resolve("path", "to_ro/r.txt", Options::FOLLOW)
        .unwrap();
    assert_eq!(via.display(), fx.path("ro/r.txt"));
    assert_eq!(via.mode, RootMode::ReadOnly);
}

#[test]
fn symlink_loops_end_with_an_error() {
    let fx = fixture();
    symlink("loop_b", fx.base.join("rw/loop_a")).unwrap();
    symlink("loop_a", fx.base.join("rw/loop_b")).unwrap();
    let err = fx
        .guard()
        .resolve("path", "loop_a/x", Options::FOLLOW)
        .unwrap_err();
    assert_eq!(err.message, "loop_a/x: too many levels of symbolic links");
}

#[test]
fn nested_read_only_root_is_recognised_by_identity() {
    let fx = fixture();
    std::fs::create_dir(fx.base.join("rw/vendor")).unwrap();
    let guard = PathGuard::new(
        &[
            (fx.path("rw"), RootMode::ReadWrite),
            (fx.path("rw/vendor"), RootMode::ReadOnly),
        ],
        None,
    )
    .unwrap();
    for input in ["vendor/x", "sub/../vendor/x"] {
        let resolved = guard.resolve("path", input, Options::FOLLOW).unwrap();
        assert_eq!(resolved.mode, RootMode::ReadOnly, "{input}");
    }
    symlink("vendor", fx.base.join("rw/alias")).unwrap();
    let alias = guard.resolve("path", "alias", Options::FOLLOW).unwrap();
    assert!(alias.is_root());
    assert_eq!(alias.mode, RootMode::ReadOnly);
}

#[test]
fn create_parents_makes_folders_only_in_read_write_roots() {
    let fx = fixture();
    let guard = fx.guard();
    let made = guard
        .resolve("path", "x/y/z.txt", Options::CREATE_PARENTS)
        .unwrap();
    assert_eq!(made.display(), fx.path("rw/x/y/z.txt"));
    assert!(fx.base.join("rw/x/y").is_dir());
    let refused = guard.resolve("path", &fx.path("ro/new/f.txt"), Options::CREATE_PARENTS);
    assert_eq!(code(refused), ErrorCode::ReadOnly);
    assert!(!fx.base.join("ro/new").exists());
}

#[test]
fn a_file_in_the_middle_is_not_a_folder() {
    let fx = fixture();
    let err = fx.guard().resolve("path", "a.txt/x", Options::FOLLOW);
    assert_eq!(code(err), ErrorCode::NotADirectory);
}

#[test]
fn bad_configuration_is_refused_with_the_reason() {
    let fx = fixture();
    let cases = [
        (
            vec![],
            "--root: at least one folder must be granted".to_owned(),
        ),
        (
            vec![("rel".to_owned(), RootMode::ReadWrite)],
            "rel: a granted folder must be an absolute path".to_owned(),
        ),
        (
            vec![(fx.path("rw/../outside"), RootMode::ReadWrite)],
            format!(
                "{}: a granted folder must not contain `..`",
                fx.path("rw/../outside")
            ),
        ),
    ];
    for (roots, message) in cases {
        assert_eq!(
            PathGuard::new(&roots, None).unwrap_err().to_string(),
            message
        );
    }
    let roots = [(fx.path("rw"), RootMode::ReadWrite)];
    let outside_cwd = PathGuard::new(&roots, Some(&fx.path("outside"))).unwrap_err();
    assert!(
        outside_cwd
            .problem
            .contains("outside the session's folders")
    );
    let cwd = PathGuard::new(&roots, Some(&fx.path("rw/sub"))).unwrap();
    assert_eq!(cwd.cwd(), Path::new(&fx.path("rw/sub")));
}
