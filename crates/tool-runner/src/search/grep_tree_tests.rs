//! The threaded tree search against the walking thread alone, and against GNU grep.

use std::fs::File;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use tool_protocol::GrepResult;

use super::*;
use crate::search::MAX_LINE_BYTES;
use crate::search::grep::PathFilter;
use crate::search::regex::RegexOptions;
use crate::search::test_dir::TestDir;

/// A deterministic xorshift generator.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

const WORDS: &[&str] = &[
    "alpha", "beta", "needle", "neeedle", "NEEDLE", "x", "é", "über", "{", "}", "//", "42", "-",
];

/// A tree of a few hundred files, more than several batches, with every kind of file the
/// search treats specially: binary (a NUL up front), CRLF lines, no final newline, empty,
/// larger than the first read buffer (64 KiB), a 100 KB line, ignored by `.gitignore`, a link,
/// and `.git`. Matches fall at every offset of the 8-byte words the scans work in.
fn tree() -> TestDir {
    let dir = TestDir::new("grep-tree");
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    dir.write(".gitignore", "*.skip\n");
    dir.write(".git/HEAD", "needle\n");
    for index in 0..300u64 {
        let folder = match index % 7 {
            0 => String::new(),
            1 => "a-c/".to_owned(),
            2 => format!("a/b{}/", index % 3),
            3 => format!("a/b{}/c/", index % 2),
            4 => "Z/".to_owned(),
            5 => "a/".to_owned(),
            _ => format!("deep/{}/{}/", index % 4, index % 5),
        };
        let mut text = String::new();
        if index % 97 == 1 {
            // About 70 KB: more than the first read buffer.
            for line in 0..6000 {
                text.push_str(if line % 999 == 0 {
                    "a needle\n"
                } else {
                    "filler line\n"
                });
            }
        }
        let lines = if index % 23 == 0 { 0 } else { rng.below(30) };
        let crlf = index % 5 == 0;
        for line in 0..lines {
            text.push_str(&" ".repeat(rng.below(17) as usize));
            for word in 0..rng.below(9) {
                if word > 0 {
                    text.push(' ');
                }
                text.push_str(WORDS[rng.below(WORDS.len() as u64) as usize]);
            }
            if line + 1 < lines || index % 3 != 0 {
                text.push_str(if crlf { "\r\n" } else { "\n" });
            }
        }
        let name = match index % 41 {
            7 => format!("{index}.skip"),
            8 => {
                dir.write(&format!("{folder}{index}.bin"), format!("\0{text}"));
                continue;
            }
            9 => {
                let long = format!("{}needle{}\n", "y".repeat(60_000), "z".repeat(40_000));
                text.push_str(&long);
                format!("{index}.long")
            }
            _ => format!("f{index}.txt"),
        };
        dir.write(&format!("{folder}{name}"), text);
    }
    std::os::unix::fs::symlink(dir.path().join("f2.txt"), dir.path().join("link.txt")).unwrap();
    dir
}

fn search(
    base: &Path,
    pattern: &str,
    context: usize,
    max_matches: u64,
    workers: usize,
) -> GrepResult {
    let regex = Regex::with_options(pattern, RegexOptions::default()).unwrap();
    let filter = PathFilter::new(&[], &[]).unwrap();
    let search = TreeSearch {
        regex: &regex,
        filter: &filter,
        context,
        max_matches,
        workers: Some(workers),
    };
    search_tree(base, &search, &AtomicBool::new(false)).unwrap()
}

#[test]
fn every_thread_count_gives_the_single_thread_answer() {
    let dir = tree();
    for pattern in ["needle", r"ne+dle\b", "(?i)NEEDLE", "^$", "über"] {
        for context in [0, 2] {
            let alone = search(dir.path(), pattern, context, u64::MAX, 0);
            assert!(alone.files_searched > 250, "{}", alone.files_searched);
            assert!(alone.files_skipped_binary > 0);
            for workers in [1, 2, 3, 8] {
                let threaded = search(dir.path(), pattern, context, u64::MAX, workers);
                assert!(
                    threaded == alone,
                    "{pattern:?} context {context} with {workers} workers differs"
                );
            }
        }
    }
}

#[test]
fn truncation_gives_the_single_thread_answer_at_every_limit() {
    let dir = tree();
    let all = search(dir.path(), "needle", 1, u64::MAX, 0);
    let total = all.matches.len() as u64;
    assert!(total > 100, "{total}");
    let limits = (0..=total + 1).filter(|limit| limit % 17 < 2 || limit + 2 >= total);
    for max_matches in limits {
        let alone = search(dir.path(), "needle", 1, max_matches, 0);
        let threaded = search(dir.path(), "needle", 1, max_matches, 3);
        assert!(threaded == alone, "max_matches {max_matches} differs");
        assert_eq!(alone.truncated, max_matches < total, "{max_matches}");
        assert_eq!(alone.matches.len() as u64, max_matches.min(total));
    }
}

#[test]
fn line_numbers_and_lines_agree_with_gnu_grep() {
    let dir = tree();
    let ours = search(dir.path(), "needle", 0, u64::MAX, 2);
    let output = Command::new("/usr/bin/grep")
        .env("LC_ALL", "C")
        .args(["-rnI", "--exclude-dir=.git", "--exclude=*.skip", "needle"])
        .arg(dir.path())
        .output()
        .expect("GNU grep is the oracle");
    let mut gnu: Vec<(String, u64, String)> = output
        .stdout
        .split(|&b| b == b'\n')
        .filter(|line| !line.is_empty())
        .map(|line| {
            let text = String::from_utf8_lossy(line);
            let mut parts = text.splitn(3, ':');
            let path = parts.next().unwrap().to_owned();
            let number = parts.next().unwrap().parse().unwrap();
            let line = parts.next().unwrap().trim_end_matches('\r').to_owned();
            (path, number, line)
        })
        .collect();
    gnu.sort();
    let mut ours: Vec<(String, u64, String)> = ours
        .matches
        .into_iter()
        .map(|m| (m.path, m.line_number, m.line))
        .collect();
    ours.sort();
    assert_eq!(ours.len(), gnu.len());
    for (mine, theirs) in ours.iter().zip(&gnu) {
        assert_eq!((&mine.0, mine.1), (&theirs.0, theirs.1));
        if theirs.2.len() <= MAX_LINE_BYTES {
            assert_eq!(mine.2, theirs.2, "{}:{}", mine.0, mine.1);
        } else {
            assert!(mine.2.ends_with("bytes cut …]"), "{}:{}", mine.0, mine.1);
        }
    }
}

#[test]
fn the_last_match_before_the_limit_keeps_its_full_after_context_like_gnu_grep() {
    let dir = TestDir::new("grep-cut-context");
    let file = dir.write("f.txt", "hit one\nhit two\nplain\nhit three\n");
    for workers in [0, 2] {
        let limited = search(dir.path(), "hit", 1, 1, workers);
        assert!(limited.truncated);
        assert_eq!(limited.matches.len(), 1);
        // Cut after the first match, the second is context; without the cut it is a match.
        assert_eq!(limited.matches[0].after, ["hit two"]);
        let whole = search(dir.path(), "hit", 1, 10, workers);
        assert_eq!(whole.matches[0].after, Vec::<String>::new());
        assert_eq!(whole.matches[1].after, ["plain"]);
    }
    let output = Command::new("/usr/bin/grep")
        .args(["-n", "-m1", "-A1", "hit"])
        .arg(&file)
        .output()
        .expect("GNU grep is the oracle");
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "1:hit one\n2-hit two\n"
    );
}

#[test]
fn a_batch_holds_at_most_sixteen_folders_open() {
    let dir = TestDir::new("grep-batch-folders");
    let folders: Vec<Arc<File>> = (0..20)
        .map(|_| Arc::new(File::open(dir.path()).unwrap()))
        .collect();
    let file = |folder: &Arc<File>| FileRef {
        folder: Arc::clone(folder),
        name: "f".into(),
        path: dir.path().join("f"),
    };
    let mut one_per_folder = Batch::starting_at(0);
    for folder in &folders {
        one_per_folder.push(file(folder));
        if one_per_folder.is_full() {
            break;
        }
    }
    assert_eq!(one_per_folder.files.len(), FOLDERS_PER_BATCH);
    let mut one_folder = Batch::starting_at(0);
    while !one_folder.is_full() {
        one_folder.push(file(&folders[0]));
    }
    assert_eq!((one_folder.files.len(), one_folder.folders), (BATCH, 1));
}

#[test]
fn one_file_per_folder_gives_the_single_thread_answer() {
    let dir = TestDir::new("grep-many-folders");
    for index in 0..400 {
        dir.write(
            &format!("d{index:03}/f.txt"),
            format!("line\nneedle {index}\n"),
        );
    }
    let alone = search(dir.path(), "needle", 0, u64::MAX, 0);
    assert_eq!(alone.matches.len(), 400);
    assert!(search(dir.path(), "needle", 0, u64::MAX, 8) == alone);
}
