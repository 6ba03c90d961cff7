//! The runner's speed against the baselines it replaces, measured in one run:
//!
//! 1. a small call (`read_file` of 4 KiB) over stdio: p50 and p99 round trip;
//! 2. the same read done the peers' way, one process per call (`bash -c 'cat FILE'`);
//! 3. a 64 MiB `download` against a raw pipe (`cat FILE` read into memory).
//!
//! The runner is `PADDOCK_TOOL_RUNNER` when set (`cargo xtask bench` sets the static release
//! build), else the binary cargo built for this bench.
//!
//! `-- --smoke` (as `cargo xtask bench-smoke` runs it) measures 1 and 2 only, with fewer calls,
//! and prints the ratio on a `ratio:` line for the smoke to check.

#![allow(
    clippy::print_stdout,
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a benchmark prints its report and fails loudly"
)]

use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use tool_protocol::{Call, Download, HostFrame, Line, ReadFile, RunnerFrame, ToolResult};

fn runner_exe() -> PathBuf {
    std::env::var_os("PADDOCK_TOOL_RUNNER")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_tool-runner")))
}

/// A runner spoken to synchronously from this thread: no router thread in the measurement.
struct Runner {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
    line: String,
    next_id: u64,
}

impl Runner {
    fn start(root: &Path) -> (Self, Duration) {
        let started = Instant::now();
        let mut child = Command::new(runner_exe())
            .arg("stdio")
            .arg("--root")
            .arg(format!("{}:rw", root.display()))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let input = child.stdin.take().unwrap();
        let output = BufReader::with_capacity(1 << 20, child.stdout.take().unwrap());
        let mut runner = Runner {
            child,
            input,
            output,
            line: String::new(),
            next_id: 0,
        };
        let hello = runner.frame();
        let hello_after = started.elapsed();
        assert!(matches!(hello, RunnerFrame::Hello(_)));
        (runner, hello_after)
    }

    fn send(&mut self, request: impl Into<tool_protocol::ToolRequest>) {
        self.next_id += 1;
        let frame = HostFrame::Call(Call {
            id: self.next_id.to_string(),
            request: request.into(),
        });
        self.input.write_all(frame.encode().as_bytes()).unwrap();
        self.input.flush().unwrap();
    }

    fn raw_line(&mut self) -> &str {
        self.line.clear();
        self.output.read_line(&mut self.line).unwrap();
        self.line.trim_end_matches('\n')
    }

    fn frame(&mut self) -> RunnerFrame {
        self.raw_line();
        if self.line.ends_with('\n') {
            self.line.pop();
        }
        // Decode from the line buffer and take it back, so its capacity is reused.
        let line = Line::Text(std::mem::take(&mut self.line));
        let frame = RunnerFrame::decode(&line).unwrap();
        if let Line::Text(buffer) = line {
            self.line = buffer;
        }
        frame
    }
}

impl Drop for Runner {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn small_calls(runner: &mut Runner, calls: usize) -> Vec<Duration> {
    let mut times = Vec::with_capacity(calls);
    for _ in 0..calls {
        let started = Instant::now();
        runner.send(ReadFile {
            path: "small.txt".into(),
            offset: None,
            limit: None,
        });
        let frame = runner.frame();
        times.push(started.elapsed());
        assert!(matches!(
            frame,
            RunnerFrame::Result {
                result: ToolResult::ReadFile(_),
                ..
            }
        ));
    }
    times.sort_unstable();
    times
}

fn spawn_per_call(file: &Path, calls: usize) -> Vec<Duration> {
    let command = format!("cat '{}'", file.display());
    let mut times = Vec::with_capacity(calls);
    for _ in 0..calls {
        let started = Instant::now();
        let out = Command::new("bash")
            .arg("-c")
            .arg(&command)
            .output()
            .unwrap();
        times.push(started.elapsed());
        assert_eq!(out.stdout.len(), 4096);
    }
    times.sort_unstable();
    times
}

fn download(runner: &mut Runner, size: usize) -> Duration {
    let started = Instant::now();
    runner.send(Download {
        path: "big.bin".into(),
        chunk_bytes: Some(1 << 20),
    });
    let mut received = Vec::with_capacity(size);
    let mut line = Vec::new();
    loop {
        // The host's download path: data frames append straight to the buffer, with no UTF-8
        // check and no buffer per frame.
        line.clear();
        runner.output.read_until(b'\n', &mut line).unwrap();
        let text = line.strip_suffix(b"\n").unwrap_or(&line);
        if RunnerFrame::append_output_bytes(text, &mut received).is_some() {
            continue;
        }
        let text = String::from_utf8(text.to_vec()).unwrap();
        let frame = RunnerFrame::decode(&Line::Text(text)).unwrap();
        assert!(matches!(frame, RunnerFrame::Result { .. }), "{frame:?}");
        break;
    }
    let elapsed = started.elapsed();
    assert_eq!(received.len(), size);
    elapsed
}

fn raw_pipe(file: &Path, size: usize) -> Duration {
    let started = Instant::now();
    let mut child = Command::new("cat")
        .arg(file)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut received = Vec::with_capacity(size);
    child
        .stdout
        .take()
        .unwrap()
        .read_to_end(&mut received)
        .unwrap();
    child.wait().unwrap();
    let elapsed = started.elapsed();
    assert_eq!(received.len(), size);
    elapsed
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort_unstable();
    times[times.len() / 2]
}

/// Prints the small-call figures: the runner's round trip against a spawn per call.
fn report_calls(ours: &[Duration], theirs: &[Duration], calls: usize, spawns: usize) {
    let (p50, p99) = (percentile(ours, 0.5), percentile(ours, 0.99));
    let spawn_p50 = percentile(theirs, 0.5);
    println!(
        "  read_file 4 KiB round trip  p50 {:.3} ms   p99 {:.3} ms   ({calls} calls)",
        ms(p50),
        ms(p99)
    );
    println!(
        "  bash -c 'cat FILE' per call p50 {:.3} ms   ({spawns} spawns)",
        ms(spawn_p50)
    );
    println!(
        "  persistent runner vs spawn  {:.1}x faster at p50",
        spawn_p50.as_secs_f64() / p50.as_secs_f64()
    );
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` runs this once quickly.
    let quick = !std::env::args().any(|a| a == "--bench");
    let smoke = std::env::args().any(|a| a == "--smoke");
    let dir = std::env::temp_dir().join(format!("paddock-runner-bench-{}", std::process::id()));
    fs::create_dir_all(&dir).unwrap();
    let dir = fs::canonicalize(&dir).unwrap();
    let small: Vec<u8> = (0..4096).map(|i| b"abcdefghij\n"[i % 11]).collect();
    fs::write(dir.join("small.txt"), &small).unwrap();
    let big_size = if quick || smoke { 1 << 20 } else { 64 << 20 };
    let big: Vec<u8> = (0..big_size)
        .map(|i: usize| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    fs::write(dir.join("big.bin"), &big).unwrap();

    let (mut runner, hello_after) = Runner::start(&dir);
    let (calls, spawns, rounds) = if quick {
        (50, 10, 1)
    } else if smoke {
        (4_000, 200, 0)
    } else {
        (20_000, 500, 11)
    };
    small_calls(&mut runner, calls / 10); // warm up
    let ours = small_calls(&mut runner, calls);
    let theirs = spawn_per_call(&dir.join("small.txt"), spawns);
    let p50 = percentile(&ours, 0.5);
    let spawn_p50 = percentile(&theirs, 0.5);
    if smoke {
        println!("tool-runner benchmark, smoke ({})", runner_exe().display());
        report_calls(&ours, &theirs, calls, spawns);
        println!(
            "ratio: runner.spawn_over_call = {:.2}",
            spawn_p50.as_secs_f64() / p50.as_secs_f64()
        );
        drop(runner);
        let _ = fs::remove_dir_all(&dir);
        return;
    }

    download(&mut runner, big_size); // warm the page cache and the runner
    raw_pipe(&dir.join("big.bin"), big_size);
    // Interleaved, so load from other processes falls on both alike.
    let (mut downloads, mut pipes) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        downloads.push(download(&mut runner, big_size));
        pipes.push(raw_pipe(&dir.join("big.bin"), big_size));
    }
    let (best_download, best_pipe) = (
        downloads.iter().copied().min().unwrap(),
        pipes.iter().copied().min().unwrap(),
    );
    let (downloads, pipes) = (median(downloads), median(pipes));
    let mib = big_size as f64 / (1024.0 * 1024.0);

    println!("tool-runner benchmark ({})", runner_exe().display());
    println!("  start-up to hello           {:8.2} ms", ms(hello_after));
    report_calls(&ours, &theirs, calls, spawns);
    println!(
        "  download {mib:.0} MiB             {:8.1} ms  {:7.0} MiB/s (median of {rounds})",
        ms(downloads),
        mib / downloads.as_secs_f64()
    );
    println!(
        "  raw pipe (cat) {mib:.0} MiB       {:8.1} ms  {:7.0} MiB/s",
        ms(pipes),
        mib / pipes.as_secs_f64()
    );
    println!(
        "  download / raw pipe         {:.0} % of the pipe's throughput (medians); best runs {:.1} ms vs {:.1} ms: {:.0} %",
        100.0 * pipes.as_secs_f64() / downloads.as_secs_f64(),
        ms(best_download),
        ms(best_pipe),
        100.0 * best_pipe.as_secs_f64() / best_download.as_secs_f64()
    );
    drop(runner);
    let _ = fs::remove_dir_all(&dir);
}
