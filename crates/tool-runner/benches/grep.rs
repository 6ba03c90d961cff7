//! `search::grep` against GNU `grep -rn` on the same generated tree, timed in the same run.
//!
//! `cargo bench -p tool-runner --bench grep` builds a 20 000-file tree (mixed sizes, some
//! binary files, a `.gitignore`, a `.git` folder) in the temporary folder, then times each
//! search as the median of several warm runs and prints both times and their ratio. Ours and
//! GNU grep run in turn, round by round, so load from other processes falls on both alike.
//! Ours gets the tree as the `grep` tool passes it: an open handle, `/proc/self/fd/<n>`.
//! GNU grep gets the flags that make it do the same work as ours: `-I` (skip binary files),
//! `--exclude-dir=.git`, `--exclude` for what the `.gitignore` ignores; its output is read
//! through a pipe (with stdout on `/dev/null` it would stop at the first match). It runs twice:
//! with `LC_ALL=C.UTF-8` (UTF-8-aware, as ours is) and with `LC_ALL=C` (bytes, its fastest).
//!
//! Without `--bench` (as `cargo test --benches` runs it) it checks a small tree once. With
//! `-- --smoke` (as `cargo xtask bench-smoke` runs it) each time is the median of 3 runs, and
//! each search's ratio to the faster of the two GNU runs is printed on a `ratio:` line for the
//! smoke to check.

#![allow(
    clippy::print_stdout,
    reason = "a benchmark binary reports its figures on stdout"
)]

use std::error::Error;
use std::fs;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use tool_protocol::Grep;
use tool_runner::search;

type Result<T> = std::result::Result<T, Box<dyn Error>>;

/// One search to time: our pattern and GNU grep's flags for the same search.
struct Case {
    label: &'static str,
    /// The name of its `ratio:` line.
    key: &'static str,
    pattern: &'static str,
    gnu_flags: &'static [&'static str],
}

const CASES: &[Case] = &[
    Case {
        label: "literal",
        key: "grep.literal",
        pattern: "PADDOCK_NEEDLE",
        gnu_flags: &["-rn"],
    },
    Case {
        label: "regex with a required literal",
        key: "grep.regex_with_literal",
        pattern: r"fn \w+_handler\(",
        gnu_flags: &["-rnE"],
    },
    Case {
        label: "regex without a usable literal",
        key: "grep.regex_without_literal",
        pattern: r"\b[0-9]{4}-[0-9]{2}-[0-9]{2}\b",
        gnu_flags: &["-rnE"],
    },
];

fn main() -> Result<()> {
    let full = std::env::args().any(|arg| arg == "--bench");
    let smoke = std::env::args().any(|arg| arg == "--smoke");
    let (files, runs) = match (full, smoke) {
        (false, _) => (300, 1),
        (true, true) => (20_000, 3),
        (true, false) => (20_000, 7),
    };
    let root = std::env::temp_dir().join(format!("paddock-grep-bench-{}", std::process::id()));
    let outcome = generate(&root, files).and_then(|tree| {
        if !full {
            println!("smoke run (no --bench): checks agreement only; times are not meaningful");
        }
        println!(
            "grep benchmark: {} files, {:.1} MiB, {} binary, {} ignored by .gitignore \
             (median of {runs} warm runs)",
            tree.files,
            tree.bytes as f64 / (1 << 20) as f64,
            tree.binary,
            tree.ignored
        );
        CASES
            .iter()
            .try_for_each(|case| measure(&root, case, runs, smoke))
    });
    let _ = fs::remove_dir_all(&root);
    outcome
}

fn measure(root: &Path, case: &Case, runs: usize, smoke: bool) -> Result<()> {
    let handle = fs::File::open(root)?;
    let base = PathBuf::from(format!("/proc/self/fd/{}", handle.as_raw_fd()));
    let args = Grep {
        pattern: case.pattern.to_owned(),
        path: None,
        include: None,
        exclude: None,
        case_insensitive: None,
        context: None,
        max_matches: Some(u64::MAX),
    };
    let cancel = AtomicBool::new(false);
    let ours = || -> Result<usize> { Ok(search::grep(&base, &args, &cancel)?.matches.len()) };
    let gnu = |locale: &str| -> Result<usize> {
        let output = Command::new("grep")
            .env("LC_ALL", locale)
            .args(case.gnu_flags)
            .args(["-I", "--exclude-dir=.git", "--exclude=*.log", "--"])
            .arg(case.pattern)
            .arg(root)
            .stdin(Stdio::null())
            .stderr(Stdio::inherit())
            .output()?;
        Ok(output.stdout.iter().filter(|&&b| b == b'\n').count())
    };
    // One round runs all three searches in turn, so load from other processes falls on each
    // alike; the first round warms the page cache, the DFA states and the allocations.
    let searches: [&dyn Fn() -> Result<usize>; 3] = [&ours, &|| gnu("C.UTF-8"), &|| gnu("C")];
    let mut times: [Vec<Duration>; 3] = Default::default();
    let mut lines = [0; 3];
    for round in 0..=runs {
        for (index, search) in searches.iter().enumerate() {
            let start = Instant::now();
            lines[index] = search()?;
            if round > 0 {
                times[index].push(start.elapsed());
            }
        }
    }
    let [ours, gnu_utf8, gnu_c] = times.map(median);
    let mut line = format!(
        "  {:<31} `{}`: ours {:>7.1} ms ({} lines)",
        case.label,
        case.pattern,
        ms(ours),
        lines[0]
    );
    for (locale, gnu, gnu_lines) in [("C.UTF-8", gnu_utf8, lines[1]), ("C", gnu_c, lines[2])] {
        if lines[0] != gnu_lines {
            return Err(format!(
                "{}: ours found {} lines, GNU grep ({locale}) {gnu_lines}",
                case.label, lines[0]
            )
            .into());
        }
        line.push_str(&format!(
            "; GNU grep {} LC_ALL={locale} {:.1} ms, ratio {:.2}x",
            case.gnu_flags.join(" "),
            ms(gnu),
            ours.as_secs_f64() / gnu.as_secs_f64()
        ));
    }
    println!("{line}");
    if smoke {
        println!(
            "ratio: {} = {:.3}",
            case.key,
            ours.as_secs_f64() / gnu_utf8.min(gnu_c).as_secs_f64()
        );
    }
    Ok(())
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

struct Tree {
    files: usize,
    bytes: u64,
    binary: usize,
    ignored: usize,
}

/// A deterministic xorshift generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len() as u64) as usize]
    }
}

const WORDS: &[&str] = &[
    "let", "mut", "self", "value", "result", "config", "error", "return", "match", "Some", "None",
    "Ok", "Err", "impl", "struct", "pub", "use", "crate", "string", "buffer", "index", "count",
    "path", "file", "line", "handler", "request", "response", "session", "token", "=", "+", "->",
    "=>", "{", "}", "(", ")", ";", "&", "::", "//", "0", "1", "42", "é", "über",
];

/// Writes `files` files under `root` in folders of 50, with mixed sizes.
fn generate(root: &Path, files: usize) -> Result<Tree> {
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    fs::create_dir_all(root.join(".git/objects"))?;
    fs::write(
        root.join(".git/HEAD"),
        "ref: refs/heads/main PADDOCK_NEEDLE\n",
    )?;
    fs::write(root.join(".gitignore"), "*.log\n")?;
    let mut tree = Tree {
        files: 0,
        bytes: 0,
        binary: 0,
        ignored: 0,
    };
    for index in 0..files {
        let folder: PathBuf = root
            .join(format!("module{:02}", index / 500))
            .join(format!("part{:02}", (index / 50) % 10));
        if index % 50 == 0 {
            fs::create_dir_all(&folder)?;
        }
        let target = match rng.below(100) {
            0..=79 => 200 + rng.below(4_000),
            80..=97 => 4_000 + rng.below(12_000),
            _ => 16_000 + rng.below(112_000),
        } as usize;
        let (name, content) = if index % 100 == 37 {
            tree.binary += 1;
            let mut content = vec![0u8, 1, 2, 3, 0xFF];
            content.extend(source_text(&mut rng, target));
            (format!("blob{index}.bin"), content)
        } else if index % 1000 == 50 {
            tree.ignored += 1;
            (format!("trace{index}.log"), source_text(&mut rng, target))
        } else {
            (format!("file{index}.rs"), source_text(&mut rng, target))
        };
        tree.bytes += content.len() as u64;
        fs::write(folder.join(name), content)?;
        tree.files += 1;
    }
    Ok(tree)
}

/// Source-like text of about `target` bytes, with rare needles for each case.
fn source_text(rng: &mut Rng, target: usize) -> Vec<u8> {
    let mut text = String::with_capacity(target + 128);
    while text.len() < target {
        let indent = rng.below(3) as usize * 4;
        text.extend(std::iter::repeat_n(' ', indent));
        match rng.below(1000) {
            0 => text.push_str("// PADDOCK_NEEDLE marks this line"),
            1 => text.push_str("pub fn session_handler(request: Request) -> Response {"),
            2 => {
                let date = format!(
                    "released on {}-{:02}-{:02}",
                    2000 + rng.below(30),
                    1 + rng.below(12),
                    1 + rng.below(28)
                );
                text.push_str(&date);
            }
            _ => {
                let words = 2 + rng.below(12);
                for w in 0..words {
                    if w > 0 {
                        text.push(' ');
                    }
                    text.push_str(rng.pick(WORDS));
                }
            }
        }
        text.push('\n');
    }
    text.into_bytes()
}
