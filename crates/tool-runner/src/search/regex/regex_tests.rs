//! The regex engine against a table of patterns, inputs and expected matches; refusals with
//! their messages; and the pathological patterns that prove the engine does not backtrack.

use super::*;

/// `(pattern, case_insensitive, input, expected leftmost-first match as (start, text))`.
type Case = (
    &'static str,
    bool,
    &'static str,
    Option<(usize, &'static str)>,
);

const CASES: &[Case] = &[
    // Literals, the dot, anchors.
    ("abc", false, "xxabcxx", Some((2, "abc"))),
    ("abc", false, "ab", None),
    ("", false, "anything", Some((0, ""))),
    ("a.c", false, "abc", Some((0, "abc"))),
    ("a.c", false, "a\u{e9}c", Some((0, "a\u{e9}c"))),
    ("a..c", false, "a\u{e9}c", None),
    ("^abc", false, "abcd", Some((0, "abc"))),
    ("^abc", false, "xabc", None),
    ("abc$", false, "xabc", Some((1, "abc"))),
    ("abc$", false, "abcx", None),
    ("^$", false, "", Some((0, ""))),
    ("^$", false, "x", None),
    ("^.*$", false, "abc", Some((0, "abc"))),
    ("a$|b", false, "ab", Some((1, "b"))),
    ("x*$", false, "abxx", Some((2, "xx"))),
    (".", false, "\u{1F600}", Some((0, "\u{1F600}"))),
    ("^.$", false, "\u{1F600}", Some((0, "\u{1F600}"))),
    ("^..$", false, "\u{e9}", None),
    (
        "\u{1F600}+",
        false,
        "x\u{1F600}\u{1F600}",
        Some((1, "\u{1F600}\u{1F600}")),
    ),
    // Repetition, greedy and lazy.
    ("a*", false, "aaa", Some((0, "aaa"))),
    ("a*", false, "baaa", Some((0, ""))),
    ("a+", false, "baaa", Some((1, "aaa"))),
    ("ab?c", false, "ac", Some((0, "ac"))),
    ("ab?c", false, "abbc", None),
    ("a{3}", false, "aaaa", Some((0, "aaa"))),
    ("a{3}", false, "aa", None),
    ("a{2,}", false, "aaaaa", Some((0, "aaaaa"))),
    ("a{2,3}", false, "aaaaa", Some((0, "aaa"))),
    ("a{,2}b", false, "aaab", Some((1, "aab"))),
    ("a{0}b", false, "ab", Some((1, "b"))),
    ("x{1,1}", false, "x", Some((0, "x"))),
    ("a+?", false, "aaa", Some((0, "a"))),
    ("a*?b", false, "aaab", Some((0, "aaab"))),
    ("a{2,4}?", false, "aaaa", Some((0, "aa"))),
    ("a??b", false, "ab", Some((0, "ab"))),
    ("a**", false, "aa", Some((0, "aa"))),
    (".*", false, "abc", Some((0, "abc"))),
    (
        "\\d{3}-\\d{4}",
        false,
        "call 555-1234 now",
        Some((5, "555-1234")),
    ),
    // Bracket classes.
    ("[abc]+", false, "xxcabz", Some((2, "cab"))),
    ("[a-z]+", false, "ABCdefGHI", Some((3, "def"))),
    ("[^a-z]+", false, "abcDEF1ghi", Some((3, "DEF1"))),
    ("[]a]+", false, "x]a]", Some((1, "]a]"))),
    ("[^]a]", false, "]]ab", Some((3, "b"))),
    ("[a-]+", false, "b-a-", Some((1, "-a-"))),
    ("[-a]+", false, "b-a", Some((1, "-a"))),
    ("[[:digit:]]+", false, "ab123c", Some((2, "123"))),
    (
        "[[:alpha:][:digit:]]+",
        false,
        "--ab12--",
        Some((2, "ab12")),
    ),
    ("[[:space:]]", false, "a b", Some((1, " "))),
    ("[[:alpha:]]", false, "1", None),
    ("[\\d.]+", false, "v1.2.3", Some((1, "1.2.3"))),
    ("[\\]]", false, "a]", Some((1, "]"))),
    ("[\u{e9}-\u{ea}]", false, "e\u{e9}x", Some((1, "\u{e9}"))),
    ("[^x]", false, "\u{e9}", Some((0, "\u{e9}"))),
    ("[0-9a-fA-F]+", false, "0xDEADbeef", Some((0, "0"))),
    // Escapes and shorthand classes.
    ("\\d+", false, "abc 42 def", Some((4, "42"))),
    ("\\D+", false, "12ab34", Some((2, "ab"))),
    ("\\w+", false, "  hello_world!  ", Some((2, "hello_world"))),
    ("\\w+", false, "\u{e7}a va", Some((0, "\u{e7}a"))),
    ("\\W+", false, "ab, cd", Some((2, ", "))),
    ("\\s+", false, "a \t b", Some((1, " \t "))),
    ("\\S+", false, "  xy  ", Some((2, "xy"))),
    ("a\\.b", false, "a.b", Some((0, "a.b"))),
    ("a\\.b", false, "axb", None),
    ("\\(x\\)", false, "f(x)", Some((1, "(x)"))),
    ("\\x41\\x{42}", false, "zAB", Some((1, "AB"))),
    ("\\t", false, "a\tb", Some((1, "\t"))),
    ("\\$5", false, "cost $5", Some((5, "$5"))),
    ("a\\+", false, "a+", Some((0, "a+"))),
    ("{", false, "a{b", Some((1, "{"))),
    ("a{b", false, "a{b", Some((0, "a{b"))),
    ("a{,}", false, "a{,}", Some((0, "a{,}"))),
    ("}", false, "}", Some((0, "}"))),
    ("]", false, "]", Some((0, "]"))),
    // Word assertions.
    ("\\bcat\\b", false, "concat cat", Some((7, "cat"))),
    ("\\bcat\\b", false, "concatenate", None),
    ("\\Bcat", false, "concat", Some((3, "cat"))),
    ("\\<foo", false, "afoo foo", Some((5, "foo"))),
    ("foo\\>", false, "foobar foo", Some((7, "foo"))),
    ("\\b", false, "", None),
    ("\\B", false, "", Some((0, ""))),
    ("\\b\u{e9}", false, "caf\u{e9} \u{e9}", Some((6, "\u{e9}"))),
    // Alternation and groups.
    ("cat|dog", false, "hotdog", Some((3, "dog"))),
    ("cat|dog", false, "bird", None),
    ("(a|ab)(c|bcd)", false, "abcd", Some((0, "abcd"))),
    ("(?:ab)+", false, "xababab", Some((1, "ababab"))),
    ("(a|b)*c", false, "abbac", Some((0, "abbac"))),
    ("a|", false, "b", Some((0, ""))),
    ("(|a)b", false, "ab", Some((0, "ab"))),
    ("(foo|foobar)", false, "foobar", Some((0, "foo"))),
    ("(?P<name>x)y", false, "xy", Some((0, "xy"))),
    ("(?<n>x)y", false, "xy", Some((0, "xy"))),
    ("((a))", false, "a", Some((0, "a"))),
    ("()", false, "abc", Some((0, ""))),
    ("(a|aa)*c", false, "aaaac", Some((0, "aaaac"))),
    ("(x+x+)+y", false, "xxxxxxxxxxy", Some((0, "xxxxxxxxxxy"))),
    ("(a*)*b", false, "aaaa", None),
    // Case-insensitive matching.
    ("(?i)hello", false, "HeLLo", Some((0, "HeLLo"))),
    ("hello", true, "HELLO", Some((0, "HELLO"))),
    ("(?-i)hello", true, "HELLO", None),
    ("(?i)[a-c]+", false, "xABCx", Some((1, "ABC"))),
    ("(?i:a)b", false, "Ab", Some((0, "Ab"))),
    ("(?i:a)b", false, "AB", None),
    ("a(?i)b", false, "aB", Some((0, "aB"))),
    ("(?i)\u{3c3}", false, "\u{3a3}", Some((0, "\u{3a3}"))),
    ("(?i)[^a]", false, "A", None),
    (
        "(?i)stra\u{df}e",
        false,
        "STRA\u{df}E",
        Some((0, "STRA\u{df}E")),
    ),
    ("(?i)\\bFOO\\b", false, "a foo b", Some((2, "foo"))),
    (
        "(?i)\u{e9}t\u{e9}",
        false,
        "\u{c9}T\u{c9}",
        Some((0, "\u{c9}T\u{c9}")),
    ),
    // The engine is line-oriented: a newline is never matched.
    ("a\\nb", false, "a\nb", None),
    ("a[^x]b", false, "a\nb", None),
    ("^b", false, "a\nb", Some((2, "b"))),
    ("a$", false, "a\nb", Some((0, "a"))),
];

fn compile(pattern: &str, case_insensitive: bool) -> Regex {
    Regex::with_options(pattern, RegexOptions { case_insensitive })
        .unwrap_or_else(|e| panic!("{pattern:?} should compile: {e}"))
}

#[test]
fn the_table_has_enough_cases() {
    assert!(CASES.len() >= 80, "{} cases", CASES.len());
}

#[test]
fn pike_vm_finds_the_expected_leftmost_first_match() {
    for &(pattern, ci, input, expected) in CASES {
        let regex = compile(pattern, ci);
        let found = regex.find(input).map(|range| (range.start, &input[range]));
        assert_eq!(found, expected, "pattern {pattern:?} on {input:?}");
    }
}

#[test]
fn lazy_dfa_agrees_on_whether_each_line_matches() {
    for &(pattern, ci, input, expected) in CASES {
        let regex = compile(pattern, ci);
        assert_eq!(
            regex.is_match(input),
            expected.is_some(),
            "pattern {pattern:?} on {input:?}"
        );
        // The line-at-a-time entry point (no prefilter) agrees for single-line inputs.
        if !input.contains('\n') {
            let mut searcher = regex.line_searcher();
            assert_eq!(
                searcher.is_match_line(input.as_bytes()),
                expected.is_some(),
                "pattern {pattern:?} on line {input:?}"
            );
        }
    }
}

#[test]
fn matching_lines_reports_each_matching_line_once() {
    let text = "fn main() {\n    let x = 1;\n}\nfn helper() {}\n\nfn\n";
    let regex = compile(r"^fn \w+\(", false);
    let mut searcher = regex.line_searcher();
    let lines: Vec<&str> = searcher
        .matching_lines(text.as_bytes())
        .map(|r| &text[r])
        .collect();
    assert_eq!(lines, ["fn main() {", "fn helper() {}"]);

    let empty_lines = compile("^$", false);
    let mut searcher = empty_lines.line_searcher();
    let found: Vec<_> = searcher.matching_lines(text.as_bytes()).collect();
    let empty_line = text.find("\n\n").map(|at| at + 1).unwrap();
    assert_eq!(
        found,
        vec![empty_line..empty_line],
        "only the one empty line, not a phantom one at the end"
    );

    let unterminated = "alpha\nbeta";
    let regex = compile("a$", false);
    let mut searcher = regex.line_searcher();
    let lines: Vec<&str> = searcher
        .matching_lines(unterminated.as_bytes())
        .map(|r| &unterminated[r])
        .collect();
    assert_eq!(lines, ["alpha", "beta"]);
}

#[test]
fn prefilter_alternatives_each_find_their_lines() {
    let text = "one TODO\ntwo\nthree FIXME\nfour todo\nFIXME and TODO\n";
    let regex = compile("TODO|FIXME", false);
    assert_eq!(regex.prefilter_strings(), ["TODO", "FIXME"]);
    let mut searcher = regex.line_searcher();
    let lines: Vec<&str> = searcher
        .matching_lines(text.as_bytes())
        .map(|r| &text[r])
        .collect();
    assert_eq!(lines, ["one TODO", "three FIXME", "FIXME and TODO"]);

    let insensitive = compile("todo", true);
    let mut searcher = insensitive.line_searcher();
    let count = searcher.matching_lines(text.as_bytes()).count();
    assert_eq!(count, 3);
}

#[test]
fn invalid_utf8_bytes_count_as_one_replacement_character_each() {
    let regex = compile("^a.b$", false);
    let mut searcher = regex.line_searcher();
    assert!(searcher.is_match_line(b"a\xFFb"));
    assert!(!searcher.is_match_line(b"a\xFF\xFEb"));
    let two = compile("^a..b$", false);
    assert!(two.line_searcher().is_match_line(b"a\xFF\xFEb"));
    assert!(
        compile("\u{FFFD}", false)
            .line_searcher()
            .is_match_line(b"x\xC3")
    );
    // Found by fuzzing: the prefilter must not scan for U+FFFD's own bytes, or it misses
    // the invalid bytes that also decode to it.
    for pattern in ["\u{FFFD}", "x\u{FFFD}y", "[a\u{FFFD}]"] {
        let regex = compile(pattern, false);
        let text = b"x\xFFy\n";
        let mut searcher = regex.line_searcher();
        assert_eq!(searcher.matching_lines(text).count(), 1, "{pattern:?}");
        let plain = regex.clone().without_prefilter();
        assert_eq!(plain.line_searcher().matching_lines(text).count(), 1);
    }
}

/// `(pattern, expected message)`.
const ERRORS: &[(&str, &str)] = &[
    ("(abc", "unclosed group at 0"),
    ("abcde(fg", "unclosed group at 5"),
    ("(a(b)", "unclosed group at 0"),
    ("a)", "unmatched `)` at 1"),
    ("[abc", "unclosed character class at 0"),
    ("x[^", "unclosed character class at 1"),
    ("[z-a]", "class range `z-a` is reversed at 1"),
    ("*a", "repetition operator with nothing to repeat at 0"),
    ("a|*", "repetition operator with nothing to repeat at 2"),
    ("(+)", "repetition operator with nothing to repeat at 1"),
    ("^*", "repetition operator with nothing to repeat at 1"),
    ("{2}", "repetition operator with nothing to repeat at 0"),
    (
        "a{2,1}",
        "repetition `{2,1}` has its minimum above its maximum at 1",
    ),
    (
        "a{1001}",
        "repetition count 1001 exceeds the limit of 1000 at 1",
    ),
    (
        "a{99999999999999999999}",
        "repetition count 18446744073709551615 exceeds the limit of 1000 at 1",
    ),
    ("a{2", "unclosed repetition `{` at 1"),
    ("a{2,x}", "unclosed repetition `{` at 1"),
    ("abc\\", "pattern ends with a lone backslash at 3"),
    ("\\q", "unknown escape `\\q` at 0"),
    ("[\\q]", "unknown escape `\\q` at 1"),
    ("(a)\\1", "backreferences are not supported at 3"),
    ("\\xZZ", "invalid hexadecimal escape at 0"),
    ("\\x{110000}", "invalid hexadecimal escape at 0"),
    ("\\x{41", "invalid hexadecimal escape at 0"),
    ("(?x)", "unknown flag `x` at 2"),
    ("(?=a)", "unknown flag `=` at 2"),
    ("(?i", "unclosed flag group `(?` at 0"),
    ("[[:foo:]]", "unknown POSIX class `[:foo:]` at 1"),
];

#[test]
fn invalid_patterns_are_refused_with_position_and_reason() {
    for &(pattern, message) in ERRORS {
        match Regex::new(pattern) {
            Ok(_) => panic!("{pattern:?} should be refused"),
            Err(error) => assert_eq!(error.to_string(), message, "pattern {pattern:?}"),
        }
    }
}

#[test]
fn nesting_and_size_limits_are_enforced() {
    let deep = format!("{}a{}", "(".repeat(200), ")".repeat(200));
    let error = Regex::new(&deep).err().map(|e| e.to_string());
    assert_eq!(
        error.as_deref(),
        Some("groups nested deeper than 128 at 128")
    );
    let nested_ok = format!("{}a{}", "(".repeat(100), ")".repeat(100));
    assert!(Regex::new(&nested_ok).is_ok());

    let huge = Regex::new("((a{1000}){1000}){1000}").err();
    assert_eq!(
        huge.as_ref().map(|e| &e.kind),
        Some(&RegexErrorKind::TooLarge)
    );
    assert_eq!(
        huge.map(|e| e.to_string()).as_deref(),
        Some("pattern too large: its repetitions compile to more than 100000 instructions")
    );
    // Many huge case-folded classes compile quickly (folding costs per cased character).
    let classes = "(?i)[\\x{0}-\\x{1FFFE}]".repeat(200);
    assert!(Regex::new(&classes).is_ok());
    let large_but_allowed = compile("(a{100}){100}", false);
    assert!(large_but_allowed.program.len() > 10_000);
    let counted = compile("^(a{30}){30}$", false);
    let input = "a".repeat(900);
    assert!(counted.is_match(&input));
    assert!(!counted.is_match(&input[1..]));
}

/// Pathological patterns for backtracking engines: each must be answered by visiting each
/// (position, instruction) pair a bounded number of times.
#[test]
fn pathological_patterns_run_in_linear_time() {
    let many_a = "a".repeat(30_000);
    let many_x = "x".repeat(30_000);
    let cases: [(&str, &str, bool); 5] = [
        ("(a*)*b", &many_a, false),
        ("(a|aa)*b", &many_a, false),
        ("(x+x+)+y", &many_x, false),
        ("^(a?){50}a{50}$", &many_a[..50], true),
        ("(.*)*(.*)*(.*)*z", &many_a, false),
    ];
    for (pattern, input, expected) in cases {
        let regex = compile(pattern, false);
        let program_size = regex.program.len() as u64;
        let positions = input.len() as u64 + 1;

        let mut pike = PikeVm::new(&regex.program);
        assert_eq!(pike.find(input.as_bytes()).is_some(), expected, "{pattern}");
        assert!(
            pike.steps <= positions * program_size,
            "{pattern}: Pike VM took {} steps for {positions} positions × {program_size} \
             instructions",
            pike.steps
        );

        let mut searcher = regex.line_searcher();
        assert_eq!(
            searcher.is_match_line(input.as_bytes()),
            expected,
            "{pattern}"
        );
        let (dfa_steps, _) = searcher.dfa_steps();
        assert!(
            dfa_steps <= positions * program_size,
            "{pattern}: the DFA took {dfa_steps} steps"
        );
    }
}

#[test]
fn the_dfa_cache_is_emptied_and_rebuilt_when_full_without_changing_answers() {
    // `(a|b)*a(a|b){19}c` needs one DFA state per 20-letter window: far more than the cache
    // holds, so it is emptied while scanning; answers must not change.
    let regex = compile("(a|b)*a(a|b){19}c", false);
    let mut text = String::new();
    let mut seed: u32 = 12345;
    for _ in 0..50_000 {
        seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        text.push(if (seed >> 16) & 1 == 0 { 'a' } else { 'b' });
    }
    // A match needs an `a` exactly 20 letters before the final `c`.
    text.replace_range(text.len() - 20..text.len() - 19, "a");
    let mut searcher = regex.line_searcher();
    assert!(!searcher.is_match_line(text.as_bytes()));
    let with_c = format!("{text}c");
    assert!(searcher.is_match_line(with_c.as_bytes()));
    assert!(regex.find(&with_c).is_some());
    let mut wrong = text.clone();
    wrong.replace_range(text.len() - 20..text.len() - 19, "b");
    let wrong_c = format!("{wrong}c");
    assert_eq!(
        searcher.is_match_line(wrong_c.as_bytes()),
        regex.find(&wrong_c).is_some()
    );
    let (_, clears) = searcher.dfa_steps();
    assert!(
        clears > 0,
        "the cache should have been emptied at least once"
    );
}
