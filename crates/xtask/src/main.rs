//! `cargo xtask <task>`: the one command surface that humans and CI share.
//!
//! std only, so it builds in about a second on a fresh machine. Every task that needs system
//! packages installs them first (idempotently), so the README's two commands work on a fresh
//! Debian 12 machine that has only the Rust toolchain (with nightly, for the fuzz smoke).

// This binary talks to a human on a terminal; printing is its job.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod architecture;
mod bench_smoke;
mod desktop;
mod fuzz_smoke;
mod json;
mod module_cycles;
mod system;
mod tasks;
mod ui;

use std::process::ExitCode;

const HELP: &str = "\
cargo xtask <task>

  up          set up the machine, build, and start `paddock up` (the API) on the local wall
  ci          everything CI checks: setup, format, lints, the whole test suite, bench smoke,
              fuzz smoke
  setup       install the system packages the project needs (apt-get; skipped when present)
  lint        cargo fmt --check and clippy with warnings denied
  check-deps  docs/architecture.md against the crate graph (layers and every edge)
  codegen     regenerate the checked-in OpenAPI document and TypeScript bindings
              (--check: fail when they are not current)
  test        the whole test suite (nextest, then doc tests)
  runner      build the static tool-runner that is mounted into sandboxes; prints its path
  ui build    install the web UI's npm packages (npm ci) and build ui/dist
  ui check    the web UI's lint (ESLint), type-check (tsc) and unit tests (Vitest)
  ui e2e      the web UI's end-to-end tests in Debian's Chromium (playwright-core) against
              the real paddock up, the local wall and the fake model server
  ui bench [--smoke] [sessions|audit|live-output]...
              the web UI's benchmarks in Chromium against paddock up (release builds):
              Sessions first paint, 200-row audit pages over 1M rows, frame times while
              10 MB of tool output streams; figures in docs/performance.md (--smoke: debug
              builds, fewer runs, fails only past generous bounds)
  desktop [build] [--release]
              build the web UI, then the desktop app (paddock-desktop); prints its path
  desktop smoke [--built]
              the desktop app under Xvfb, driven through tauri-driver (WebDriver); saves
              screenshots in target/desktop-smoke/ (--built: the binaries already built)
  bench       run the benchmarks; figures go in docs/performance.md
  bench-smoke re-measure the headline ratios of docs/performance.md; fails when one regresses
              past its stated margin
  fuzz T [S]  run fuzz target T for S seconds (default 60) with cargo-fuzz on nightly
  fuzz-smoke [S]
              every fuzz target for S seconds (default 30) from its corpus; fails on a crash
  help        this text
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let task = args.first().map(String::as_str).unwrap_or("help");
    let rest = args.get(1..).unwrap_or_default();
    let result = match task {
        "up" => tasks::up(rest),
        "ci" => tasks::ci(),
        "setup" => system::ensure_test_packages(),
        "lint" => tasks::lint(),
        "check-deps" => tasks::check_deps(),
        "codegen" => tasks::codegen(rest),
        "test" => tasks::test(rest),
        "runner" => tasks::runner().map(|path| println!("{}", path.display())),
        "ui" => ui::task(rest),
        "desktop" => desktop::task(rest),
        "bench" => tasks::bench(rest),
        "bench-smoke" => bench_smoke::bench_smoke(),
        "fuzz" => tasks::fuzz(rest),
        "fuzz-smoke" => fuzz_smoke::fuzz_smoke(rest),
        "help" | "-h" | "--help" => {
            print!("{HELP}");
            Ok(())
        }
        other => Err(format!("unknown task `{other}`\n\n{HELP}")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("xtask {task}: {message}");
            ExitCode::FAILURE
        }
    }
}
