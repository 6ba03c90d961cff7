//! GNU `grep -E` as an oracle: on the syntax both understand, the same lines must match.
//!
//! Where the two differ by design, the patterns are left out: GNU has no `\d`, lazy
//! repetition or `(?i)`; it reads a backslash inside brackets literally; and its `.` does not
//! match a byte that is not UTF-8 (ours sees U+FFFD there).

use std::process::Command;

use super::*;
use crate::search::test_dir::TestDir;

const GNU_GREP: &str = "/usr/bin/grep";

const LINES: &[&str] = &[
    "foo bar",
    "the foo is here",
    "bar",
    "",
    "abc",
    "a-c and axxxc",
    "color colour colr",
    "abbbc ac",
    "xx xxx xxxx",
    "version 1.2.3",
    "UPPER lower Mixed",
    "cats and dogs",
    "this is it",
    "island mist",
    "then theory other",
    "singing ring",
    "mail bob@example.com now",
    "two  spaces",
    "   ",
    "# comment",
    "  # indented comment",
    "caf\u{e9} au lait",
    "na\u{ef}ve approach",
    "12345",
    "ab",
    "(paren) [bracket] {brace}",
    "a.b",
    "x]y",
    "a-b",
    "bbbc",
    "ababy xy",
    "$var = 1;",
    "qatar Iraq",
    "int x; float y;",
    "tab\there",
    "h\u{e9}llo w\u{f6}rld",
    "\u{65e5}\u{672c}\u{8a9e}\u{306e}\u{30c6}\u{30ad}\u{30b9}\u{30c8}",
    "MiXeD CaSe FOO",
    "CAF\u{c9} AU LAIT",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab",
];

const PATTERNS: &[&str] = &[
    "foo",
    "^foo",
    "bar$",
    "^$",
    "a.c",
    "a.*c",
    "colou?r",
    "ab+c",
    "x{2,3}",
    "^x{2}( |$)",
    "[0-9]+",
    "[^a-z ]",
    "[[:upper:]][[:lower:]]+",
    "(cat|dog)s?",
    "\\bis\\b",
    "\\Bis",
    "\\<the",
    "ing\\>",
    "\\w+@\\w+\\.com",
    "\\s{2,}",
    "^\\s*$",
    "^[[:space:]]*#",
    "caf.",
    "na.ve",
    "^.{5}$",
    "^.{1,3}$",
    "(a|b)*c",
    "((ab)+|x)y",
    "[]x]",
    "[a-]",
    "a{0,2}b",
    "\\.",
    "\\(",
    "[.]",
    "[[:punct:]]+",
    "[[:alpha:]]+[[:digit:]]",
    "\u{e9}",
    "[\u{e9}\u{f6}]",
    "^[^\u{e9}]*$",
    "(ab|a)(bc|c)",
    "x*",
    "\\W\\w",
    "^\\S+$",
    "int|float|double",
    "\\$[a-z]+",
    "q[^u]",
    "^.{8}$",
    "\\w\\b",
    "(a*)*b",
    "^(a|aa)+b$",
    "[[:alnum:]_]+\\(",
    "o\\b|\\bf",
    "t[[:blank:]]",
];

const CASE_INSENSITIVE_PATTERNS: &[&str] = &[
    "foo",
    "mixed",
    "[a-c]+x",
    "caf\u{e9}",
    "^the",
    "upper|LOWER",
    "\\bcase\\b",
];

/// The 1-based numbers of the lines GNU grep reports.
fn gnu_matches(file: &std::path::Path, pattern: &str, ignore_case: bool) -> Vec<usize> {
    let mut command = Command::new(GNU_GREP);
    command.env("LC_ALL", "C.UTF-8").args(["-E", "-n", "-a"]);
    if ignore_case {
        command.arg("-i");
    }
    let output = command
        .arg("-e")
        .arg(pattern)
        .arg(file)
        .output()
        .unwrap_or_else(|e| {
            panic!("the oracle {GNU_GREP} must be installed (apt-get install grep): {e}")
        });
    assert!(
        output.status.code() == Some(0) || output.status.code() == Some(1),
        "GNU grep failed on {pattern:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| line.split(':').next()?.parse().ok())
        .collect()
}

fn our_matches(text: &str, pattern: &str, ignore_case: bool) -> Vec<usize> {
    let regex = Regex::with_options(
        pattern,
        RegexOptions {
            case_insensitive: ignore_case,
        },
    )
    .unwrap_or_else(|e| panic!("{pattern:?}: {e}"));
    let mut searcher = regex.line_searcher();
    searcher
        .matching_lines(text.as_bytes())
        .map(|range| text[..range.start].matches('\n').count() + 1)
        .collect()
}

#[test]
fn matching_lines_agree_with_gnu_grep_extended_syntax() {
    let dir = TestDir::new("oracle");
    let text = format!("{}\n", LINES.join("\n"));
    let file = dir.write("lines.txt", &text);
    let mut compared = 0;
    for (patterns, ignore_case) in [(PATTERNS, false), (CASE_INSENSITIVE_PATTERNS, true)] {
        for pattern in patterns {
            let expected = gnu_matches(&file, pattern, ignore_case);
            let ours = our_matches(&text, pattern, ignore_case);
            assert_eq!(
                ours, expected,
                "pattern {pattern:?} (ignore case: {ignore_case}): our lines vs GNU grep's"
            );
            compared += 1;
        }
    }
    assert_eq!(compared, PATTERNS.len() + CASE_INSENSITIVE_PATTERNS.len());
}
