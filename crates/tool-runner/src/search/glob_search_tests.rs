use std::sync::atomic::AtomicBool;

use tool_protocol::ErrorCode;

use super::*;
use crate::search::test_dir::TestDir;

fn args(pattern: &str) -> Glob {
    Glob {
        pattern: pattern.to_owned(),
        path: None,
        limit: None,
    }
}

/// The matches relative to `base` (each must be absolute and below it).
fn relative(base: &Path, result: &GlobResult) -> Vec<String> {
    result
        .matches
        .iter()
        .map(|m| {
            assert!(Path::new(m).is_absolute(), "{m}");
            Path::new(m)
                .strip_prefix(base)
                .unwrap_or_else(|_| panic!("{m} is not below {}", base.display()))
                .to_string_lossy()
                .into_owned()
        })
        .collect()
}

fn run(base: &Path, pattern: &str) -> Vec<String> {
    let result = glob(base, &args(pattern), &AtomicBool::new(false))
        .unwrap_or_else(|e| panic!("{pattern}: {e}"));
    assert!(!result.truncated);
    relative(base, &result)
}

fn tree() -> TestDir {
    let dir = TestDir::new("glob-tree");
    for file in [
        "Cargo.toml",
        "src/main.rs",
        "src/search/mod.rs",
        "src/search/glob.rs",
        "src/notes.md",
        "tests/it.rs",
        "ignored.rs",
        ".git/hooks/pre-commit.rs",
    ] {
        dir.write(file, "x");
    }
    dir.write(".gitignore", "ignored.rs\n");
    dir.mkdir("empty");
    dir
}

#[test]
fn matches_come_sorted_and_absolute_and_ignore_gitignore_but_not_git() {
    let dir = tree();
    assert_eq!(
        run(dir.path(), "**/*.rs"),
        [
            "ignored.rs",
            "src/main.rs",
            "src/search/glob.rs",
            "src/search/mod.rs",
            "tests/it.rs"
        ]
    );
    assert_eq!(run(dir.path(), "src/*.rs"), ["src/main.rs"]);
    assert_eq!(
        run(dir.path(), "src/*"),
        ["src/main.rs", "src/notes.md", "src/search"]
    );
    assert_eq!(run(dir.path(), "*/"), ["empty", "src", "tests"]);
    assert_eq!(
        run(dir.path(), "{src,tests}/**/*.{rs,md}"),
        [
            "src/main.rs",
            "src/notes.md",
            "src/search/glob.rs",
            "src/search/mod.rs",
            "tests/it.rs"
        ]
    );
    assert_eq!(run(dir.path(), "*.toml"), ["Cargo.toml"]);
    assert_eq!(run(dir.path(), "nothing*"), Vec::<String>::new());
}

#[test]
fn limit_truncates_in_sorted_order() {
    let dir = tree();
    let mut limited = args("**/*.rs");
    limited.limit = Some(2);
    let result = glob(dir.path(), &limited, &AtomicBool::new(false)).unwrap();
    assert_eq!(relative(dir.path(), &result), ["ignored.rs", "src/main.rs"]);
    assert!(result.truncated);
    limited.limit = Some(5);
    let result = glob(dir.path(), &limited, &AtomicBool::new(false)).unwrap();
    assert_eq!(result.matches.len(), 5);
    assert!(!result.truncated, "exactly five exist");
}

#[test]
fn links_are_listed_but_not_followed() {
    let outside = TestDir::new("glob-outside");
    outside.write("secret.rs", "x");
    let dir = TestDir::new("glob-links");
    dir.write("real.rs", "x");
    dir.symlink(outside.path(), "outside");
    dir.symlink(outside.path().join("secret.rs"), "linked.rs");
    assert_eq!(run(dir.path(), "**/*.rs"), ["linked.rs", "real.rs"]);
    assert_eq!(run(dir.path(), "outside/*"), Vec::<String>::new());
    assert_eq!(run(dir.path(), "outside"), ["outside"]);
}

#[test]
fn patterns_that_leave_the_base_are_refused() {
    let dir = tree();
    let cancel = AtomicBool::new(false);
    for pattern in ["../*", "src/../../etc/passwd", "/etc/*", "{..,src}/*", ""] {
        let error = glob(dir.path(), &args(pattern), &cancel).unwrap_err();
        assert_eq!(error.code(), ErrorCode::InvalidPattern, "{pattern:?}");
    }
    let error = glob(dir.path(), &args("../*"), &cancel).unwrap_err();
    assert!(
        error.to_string().contains("cannot leave its base folder"),
        "{error}"
    );
}

#[test]
fn a_base_that_is_not_a_folder_and_cancel_are_errors() {
    let dir = tree();
    let cancel = AtomicBool::new(false);
    let file = dir.path().join("Cargo.toml");
    let error = glob(&file, &args("*"), &cancel).unwrap_err();
    assert_eq!(error.code(), ErrorCode::NotADirectory);
    let error = glob(&dir.path().join("missing"), &args("*"), &cancel).unwrap_err();
    assert_eq!(error.code(), ErrorCode::NotFound);
    let cancelled = AtomicBool::new(true);
    let error = glob(dir.path(), &args("**"), &cancelled).unwrap_err();
    assert_eq!(error.code(), ErrorCode::Cancelled);
}
