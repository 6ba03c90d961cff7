use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::AtomicBool;

use tool_protocol::ErrorCode;

use super::*;
use crate::search::test_dir::TestDir;

fn args(pattern: &str) -> Grep {
    Grep {
        pattern: pattern.to_owned(),
        path: None,
        include: None,
        exclude: None,
        case_insensitive: None,
        context: None,
        max_matches: None,
    }
}

fn run(base: &Path, args: &Grep) -> GrepResult {
    grep(base, args, &AtomicBool::new(false)).unwrap_or_else(|e| panic!("grep failed: {e}"))
}

/// `(path relative to base, line number, line)` of each match.
fn found(base: &Path, result: &GrepResult) -> Vec<(String, u64, String)> {
    result
        .matches
        .iter()
        .map(|m| {
            let relative = Path::new(&m.path)
                .strip_prefix(base)
                .unwrap_or_else(|_| panic!("{} is not below {}", m.path, base.display()))
                .to_string_lossy()
                .into_owned();
            (relative, m.line_number, m.line.clone())
        })
        .collect()
}

fn triple(path: &str, line: u64, text: &str) -> (String, u64, String) {
    (path.to_owned(), line, text.to_owned())
}

#[test]
fn finds_matching_lines_with_absolute_paths_in_walk_order() {
    let dir = TestDir::new("grep-basic");
    dir.write("b.txt", "nothing here\nneedle one\n");
    dir.write("a/z.txt", "needle two\nno\nneedle three");
    dir.write("a-c.txt", "a needle\n");
    let result = run(dir.path(), &args("needle"));
    assert_eq!(
        found(dir.path(), &result),
        [
            triple("a/z.txt", 1, "needle two"),
            triple("a/z.txt", 3, "needle three"),
            triple("a-c.txt", 1, "a needle"),
            triple("b.txt", 2, "needle one"),
        ]
    );
    assert!(Path::new(&result.matches[0].path).is_absolute());
    assert_eq!(result.files_searched, 3);
    assert_eq!(result.files_skipped_binary, 0);
    assert!(!result.truncated);
}

#[test]
fn regex_and_case_insensitive_searches() {
    let dir = TestDir::new("grep-regex");
    dir.write(
        "src.rs",
        "fn main() {}\nfn helper(x: u32) {}\nlet f = fnx;\nFN SHOUT()\n",
    );
    let result = run(dir.path(), &args(r"^fn \w+\("));
    assert_eq!(
        found(dir.path(), &result),
        [
            triple("src.rs", 1, "fn main() {}"),
            triple("src.rs", 2, "fn helper(x: u32) {}"),
        ]
    );
    let mut insensitive = args(r"^fn \w+\(");
    insensitive.case_insensitive = Some(true);
    assert_eq!(run(dir.path(), &insensitive).matches.len(), 3);
}

#[test]
fn context_lines_are_merged_like_grep_c() {
    let dir = TestDir::new("grep-context");
    let lines: Vec<String> = (1..=20)
        .map(|n| {
            if [5, 7, 15, 16].contains(&n) {
                format!("line {n} MATCH")
            } else {
                format!("line {n}")
            }
        })
        .collect();
    let file = dir.write("f.txt", lines.join("\n") + "\n");
    let mut with_context = args("MATCH");
    with_context.context = Some(2);
    let result = run(dir.path(), &with_context);
    let shape: Vec<(u64, Vec<String>, Vec<String>)> = result
        .matches
        .iter()
        .map(|m| (m.line_number, m.before.clone(), m.after.clone()))
        .collect();
    let l = |n: u64| format!("line {n}");
    assert_eq!(
        shape,
        [
            (5, vec![l(3), l(4)], vec![l(6)]),
            (7, vec![], vec![l(8), l(9)]),
            (15, vec![l(13), l(14)], vec![]),
            (16, vec![], vec![l(17), l(18)]),
        ]
    );

    // GNU grep prints the same set of lines, each once.
    let output = Command::new("/usr/bin/grep")
        .args(["-n", "-C", "2", "MATCH"])
        .arg(&file)
        .output()
        .expect("GNU grep is the oracle for context merging");
    let gnu_lines: Vec<u64> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| line.split([':', '-']).next()?.parse().ok())
        .collect();
    let mut ours = Vec::new();
    for m in &result.matches {
        let first = m.line_number - m.before.len() as u64;
        ours.extend(first..=m.line_number + m.after.len() as u64);
    }
    assert_eq!(ours, gnu_lines);
}

#[test]
fn context_stops_at_the_edges_of_the_file() {
    let dir = TestDir::new("grep-context-edges");
    dir.write("f.txt", "MATCH first\nsecond\nthird\nlast MATCH");
    let mut with_context = args("MATCH");
    with_context.context = Some(5);
    let result = run(dir.path(), &with_context);
    assert_eq!(result.matches.len(), 2);
    assert_eq!(result.matches[0].before, Vec::<String>::new());
    assert_eq!(result.matches[0].after, ["second", "third"]);
    assert_eq!(result.matches[1].before, Vec::<String>::new());
    assert_eq!(result.matches[1].after, Vec::<String>::new());
}

#[test]
fn max_matches_truncates_only_when_more_exist() {
    let dir = TestDir::new("grep-max");
    dir.write("a.txt", "hit\nhit\nhit\n");
    dir.write("b.txt", "hit\nhit\n");
    let mut limited = args("hit");
    limited.max_matches = Some(3);
    let result = run(dir.path(), &limited);
    assert_eq!(result.matches.len(), 3);
    assert!(result.truncated, "b.txt holds more matches");
    limited.max_matches = Some(5);
    let result = run(dir.path(), &limited);
    assert_eq!(result.matches.len(), 5);
    assert!(!result.truncated, "exactly five matches exist");
    limited.max_matches = Some(4);
    let result = run(dir.path(), &limited);
    assert_eq!(result.matches.len(), 4);
    assert!(result.truncated);
    assert_eq!(
        result.matches[3].path,
        dir.path().join("b.txt").to_string_lossy()
    );
}

#[test]
fn the_default_limit_is_500_matches() {
    let dir = TestDir::new("grep-default-max");
    dir.write("many.txt", "x\n".repeat(600));
    let result = run(dir.path(), &args("x"));
    assert_eq!(result.matches.len() as u64, DEFAULT_MAX_MATCHES);
    assert!(result.truncated);
}

#[test]
fn binary_files_are_skipped_and_counted() {
    let dir = TestDir::new("grep-binary");
    dir.write("image.bin", b"needle\0\x01\x02 needle");
    let mut late_nul = "needle\n".repeat(2000).into_bytes();
    late_nul.push(0);
    assert!(late_nul.len() > BINARY_PROBE_BYTES);
    dir.write("late-nul.txt", &late_nul);
    dir.write("text.txt", "needle\n");
    let mut all = args("needle");
    all.max_matches = Some(10_000);
    let result = run(dir.path(), &all);
    assert_eq!(result.files_skipped_binary, 1);
    assert_eq!(result.files_searched, 2);
    assert!(
        result
            .matches
            .iter()
            .all(|m| !m.path.ends_with("image.bin"))
    );
    assert_eq!(
        result
            .matches
            .iter()
            .filter(|m| m.path.ends_with("late-nul.txt"))
            .count(),
        2000,
        "a NUL after the first 8 KiB does not make a file binary"
    );
}

#[test]
fn long_lines_are_cut_with_a_marker_and_crlf_is_dropped() {
    let dir = TestDir::new("grep-long");
    let long = format!("{}needle{}", "x".repeat(3000), "y".repeat(1000));
    dir.write("long.txt", format!("{long}\r\nshort needle\r\n"));
    let result = run(dir.path(), &args("needle"));
    let cut = &result.matches[0].line;
    assert!(cut.starts_with(&"x".repeat(2000)));
    assert!(cut.ends_with("[… 2006 bytes cut …]"), "{}", &cut[2000..]);
    assert_eq!(result.matches[1].line, "short needle");
    // A multi-byte character straddling the cut is not split.
    dir.write("wide.txt", format!("needle!{}", "\u{e9}".repeat(2000)));
    let mut wide = args("needle");
    wide.include = Some(vec!["wide.txt".to_owned()]);
    let result = run(dir.path(), &wide);
    let line = &result.matches[0].line;
    let (kept, marker) = line.split_at(line.find('[').unwrap());
    assert_eq!(
        kept.len(),
        1999,
        "cut before byte 2000, inside a two-byte character"
    );
    assert_eq!(marker, "[… 2008 bytes cut …]");
}

#[test]
fn include_and_exclude_globs_filter_files_and_prune_folders() {
    let dir = TestDir::new("grep-filters");
    for file in [
        "main.rs",
        "src/lib.rs",
        "src/deep/mod.rs",
        "src/notes.md",
        "target/debug/gen.rs",
        "web/app.min.js",
        "web/app.js",
    ] {
        dir.write(file, "needle\n");
    }
    let paths = |include: &[&str], exclude: &[&str]| -> Vec<String> {
        let mut filtered = args("needle");
        filtered.include = Some(include.iter().map(|s| (*s).to_owned()).collect());
        filtered.exclude = Some(exclude.iter().map(|s| (*s).to_owned()).collect());
        let result = run(dir.path(), &filtered);
        found(dir.path(), &result)
            .into_iter()
            .map(|(p, _, _)| p)
            .collect()
    };
    assert_eq!(
        paths(&["*.rs"], &["target"]),
        ["main.rs", "src/deep/mod.rs", "src/lib.rs"]
    );
    assert_eq!(
        paths(&["src/**/*.rs"], &[]),
        ["src/deep/mod.rs", "src/lib.rs"]
    );
    assert_eq!(paths(&["*.js"], &["*.min.js"]), ["web/app.js"]);
    assert_eq!(paths(&["*.{md,js}"], &["web/"]), ["src/notes.md"]);
    assert_eq!(paths(&[], &["src", "target", "web"]), ["main.rs"]);
    // An include naming a folder takes everything below it.
    assert_eq!(
        paths(&["src"], &["*.md"]),
        ["src/deep/mod.rs", "src/lib.rs"]
    );
    assert_eq!(paths(&["web/"], &[]), ["web/app.js", "web/app.min.js"]);
}

#[test]
fn gitignored_files_are_not_searched() {
    let dir = TestDir::new("grep-gitignore");
    dir.write(".gitignore", "*.log\nbuild/\n!keep.log\n");
    for file in [
        "app.log",
        "keep.log",
        "build/out.txt",
        "src/main.rs",
        ".git/HEAD",
    ] {
        dir.write(file, "needle\n");
    }
    dir.write("src/.gitignore", "main.rs\n");
    let result = run(dir.path(), &args("needle"));
    let paths: Vec<String> = found(dir.path(), &result)
        .into_iter()
        .map(|(p, _, _)| p)
        .collect();
    assert_eq!(paths, ["keep.log"]);
}

#[test]
fn symbolic_links_are_never_read_or_entered() {
    let outside = TestDir::new("grep-outside");
    outside.write("secret.txt", "needle secret\n");
    let dir = TestDir::new("grep-links");
    dir.write("real.txt", "needle real\n");
    dir.symlink(outside.path(), "outside-folder");
    dir.symlink(outside.path().join("secret.txt"), "outside-file.txt");
    dir.symlink("real.txt", "inside-file.txt");
    dir.symlink(".", "self-loop");
    let result = run(dir.path(), &args("needle"));
    assert_eq!(
        found(dir.path(), &result),
        [triple("real.txt", 1, "needle real")]
    );
    assert_eq!(result.files_searched, 1);
}

#[test]
fn a_fifo_in_the_tree_does_not_block_the_search() {
    let dir = TestDir::new("grep-fifo");
    dir.write("a.txt", "needle\n");
    let status = Command::new("mkfifo")
        .arg(dir.path().join("pipe"))
        .status()
        .expect("mkfifo (coreutils) is needed for this test");
    assert!(status.success());
    let result = run(dir.path(), &args("needle"));
    assert_eq!(result.matches.len(), 1);
    assert_eq!(result.files_searched, 1);
}

#[test]
fn a_single_file_base_is_searched_directly() {
    let dir = TestDir::new("grep-single");
    let file = dir.write("one.txt", "alpha\nneedle\n");
    let result = run(&file, &args("needle"));
    assert_eq!(result.matches.len(), 1);
    assert_eq!(result.matches[0].path, file.to_string_lossy());
    assert_eq!(result.matches[0].line_number, 2);
    let mut excluded = args("needle");
    excluded.include = Some(vec!["*.rs".to_owned()]);
    let result = run(&file, &excluded);
    assert_eq!((result.matches.len(), result.files_searched), (0, 0));
}

#[test]
fn open_handles_work_as_bases() {
    let dir = TestDir::new("grep-proc-fd");
    let file = dir.write("sub/one.txt", "needle\n");
    let folder = fs::File::open(dir.path().join("sub")).unwrap();
    let opened = fs::File::open(&file).unwrap();
    let handle = |f: &fs::File| {
        PathBuf::from(format!(
            "/proc/self/fd/{}",
            std::os::fd::AsRawFd::as_raw_fd(f)
        ))
    };
    let through_folder = run(&handle(&folder), &args("needle"));
    assert_eq!(through_folder.matches.len(), 1);
    assert_eq!(
        through_folder.matches[0].path,
        handle(&folder).join("one.txt").to_string_lossy()
    );
    let through_file = run(&handle(&opened), &args("needle"));
    assert_eq!(through_file.matches.len(), 1);
    assert_eq!(through_file.files_searched, 1);
}

#[test]
fn bad_patterns_and_bases_are_refused_with_clear_errors() {
    let dir = TestDir::new("grep-errors");
    let cancel = AtomicBool::new(false);
    let error = grep(dir.path(), &args("(unclosed"), &cancel).unwrap_err();
    assert_eq!(error.code(), ErrorCode::InvalidPattern);
    assert_eq!(
        error.to_string(),
        "invalid pattern `(unclosed`: unclosed group at 0"
    );

    let mut escaping = args("x");
    escaping.include = Some(vec!["../*.txt".to_owned()]);
    let error = grep(dir.path(), &escaping, &cancel).unwrap_err();
    assert_eq!(error.code(), ErrorCode::InvalidPattern);
    assert!(error.to_string().contains("`..`"), "{error}");

    let error = grep(&dir.path().join("missing"), &args("x"), &cancel).unwrap_err();
    assert_eq!(error.code(), ErrorCode::NotFound);

    dir.write("a.txt", "x\n");
    let cancelled = AtomicBool::new(true);
    let error = grep(dir.path(), &args("x"), &cancelled).unwrap_err();
    assert_eq!(error.code(), ErrorCode::Cancelled);
}

#[test]
fn odd_inputs_are_handled() {
    let dir = TestDir::new("grep-odd");
    dir.write("no-newline.txt", "first\nlast needle");
    dir.write("invalid-utf8.txt", b"caf\xe9 needle\n");
    dir.write("empty.txt", "");
    let result = run(dir.path(), &args("needle"));
    assert_eq!(
        found(dir.path(), &result),
        [
            triple("invalid-utf8.txt", 1, "caf\u{FFFD} needle"),
            triple("no-newline.txt", 2, "last needle"),
        ]
    );
    assert_eq!(result.files_searched, 3);
    // The empty pattern matches every line (and an empty file has none).
    let everything = run(dir.path(), &args(""));
    assert_eq!(everything.matches.len(), 3);
}
