use super::*;

fn glob(pattern: &str) -> GlobPattern {
    GlobPattern::new(pattern).unwrap_or_else(|e| panic!("{pattern:?}: {e}"))
}

/// `(pattern, path, is_dir, expected)`.
const CASES: &[(&str, &str, bool, bool)] = &[
    ("*.rs", "main.rs", false, true),
    ("*.rs", "src/main.rs", false, false),
    ("*.rs", ".hidden.rs", false, true),
    ("src/*.rs", "src/lib.rs", false, true),
    ("src/*.rs", "src/a/lib.rs", false, false),
    ("src/*", "src", true, false),
    ("**/*.rs", "main.rs", false, true),
    ("**/*.rs", "a/b/c/main.rs", false, true),
    ("**/*.rs", "a/b/c/main.rs.bak", false, false),
    ("a/**/b", "a/b", false, true),
    ("a/**/b", "a/x/y/b", false, true),
    ("a/**/b", "a/x/y/c", false, false),
    ("a/**", "a", true, false),
    ("a/**", "a/x", false, true),
    ("a/**", "a/x/y/z", false, true),
    ("**", "anything/at/all", false, true),
    ("a**b", "axxb", false, true),
    ("a**b", "ax/xb", false, false),
    ("?.txt", "a.txt", false, true),
    ("?.txt", "ab.txt", false, false),
    ("?.txt", "\u{e9}.txt", false, true),
    ("[abc].md", "b.md", false, true),
    ("[abc].md", "d.md", false, false),
    ("[a-c]*", "cat", false, true),
    ("[!a-c]*", "cat", false, false),
    ("[^a-c]*", "dog", false, true),
    ("[]]x", "]x", false, true),
    ("[[:digit:]][[:digit:]]", "42", false, true),
    ("{src,tests}/*.rs", "tests/a.rs", false, true),
    ("{src,tests}/*.rs", "benches/a.rs", false, false),
    ("*.{js,ts}", "app.ts", false, true),
    ("*.{js,ts}", "app.tsx", false, false),
    ("{a,b{c,d}}", "bd", false, true),
    ("{a,b{c,d}}", "b", false, false),
    ("\\*", "*", false, true),
    ("\\*", "x", false, false),
    ("build/", "build", true, true),
    ("build/", "build", false, false),
    ("./src//*.rs", "src/main.rs", false, true),
    ("*a*b*c", "xaxxbxxc", false, true),
    ("*a*b*c", "xaxxcxxb", false, false),
    ("Makefile", "Makefile", false, true),
    ("Makefile", "makefile", false, false),
];

#[test]
fn globs_match_relative_paths() {
    for &(pattern, path, is_dir, expected) in CASES {
        assert_eq!(
            glob(pattern).matches(path, is_dir),
            expected,
            "{pattern:?} on {path:?} (dir: {is_dir})"
        );
    }
}

#[test]
fn escaping_patterns_are_refused() {
    for (pattern, reason) in [
        ("../x", "`..` component"),
        ("a/../../etc/passwd", "`..` component"),
        ("{..,src}/x", "`..` component"),
        ("/etc/*", "starts with `/`"),
        ("", "empty"),
        ("{a,b", "unclosed `{` at 0"),
        ("[ab", "unclosed `[`"),
        ("[z-a]", "reversed"),
        ("x\\", "lone `\\`"),
        (
            "{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}{o,p}{q,r}",
            "more than 256",
        ),
        ("[[:nope:]]", "unknown class"),
    ] {
        let error = GlobPattern::new(pattern).err();
        let message = error.map(|e| e.to_string()).unwrap_or_default();
        assert!(
            message.contains(reason),
            "{pattern:?} should be refused with {reason:?}, got {message:?}"
        );
    }
}

#[test]
fn gitignore_syntax_keeps_braces_literal() {
    let pattern = GlobPattern::with_syntax("{a,b}", Syntax::GITIGNORE).unwrap();
    assert!(pattern.matches("{a,b}", false));
    assert!(!pattern.matches("a", false));
}

#[test]
fn pruning_knows_which_folders_can_hold_matches() {
    let pattern = glob("src/*/mod.rs");
    assert!(pattern.could_match_inside(&[]));
    assert!(pattern.could_match_inside(&["src"]));
    assert!(pattern.could_match_inside(&["src", "search"]));
    assert!(!pattern.could_match_inside(&["src", "search", "deeper"]));
    assert!(!pattern.could_match_inside(&["docs"]));
    let deep = glob("**/*.rs");
    assert!(deep.could_match_inside(&["any", "folder", "at", "all"]));
}

#[test]
fn many_stars_do_not_explode() {
    // A backtracking matcher takes exponential time on this; ours is O(pattern × name).
    let pattern = glob(&"*a".repeat(30));
    let name = "a".repeat(29) + "b";
    assert!(!pattern.matches(&name, false));
    let deep = glob("**/a/".repeat(20).trim_end_matches('/'));
    let path = vec!["a"; 19].join("/") + "/b";
    assert!(!deep.matches(&path, false));
}
