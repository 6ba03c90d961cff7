//! The tasks themselves. Each one is a short list of commands, printed before they run.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::{bench_smoke, desktop, fuzz_smoke, system, ui};

/// The workspace root (xtask lives in `crates/xtask`).
pub(crate) fn root() -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest
        .ancestors()
        .nth(2)
        .map(Path::to_path_buf)
        .unwrap_or(manifest)
}

/// Set by `ci`: every build of the run is made once from scratch, so cargo's incremental
/// caches (a third of the target folder's disk) would be written and never read.
static FROM_SCRATCH: AtomicBool = AtomicBool::new(false);

pub(crate) fn cargo() -> Command {
    let mut command = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    command.current_dir(root());
    if FROM_SCRATCH.load(Ordering::Relaxed) {
        command.env("CARGO_INCREMENTAL", "0");
    }
    command
}

/// `cargo` of the nightly toolchain (cargo-fuzz needs it), through rustup: `cargo()` is the
/// pinned toolchain's own binary, which does not understand `+nightly`. What the outer cargo
/// exported about its toolchain is removed, so nothing of the pinned one leaks in.
pub(crate) fn nightly_cargo() -> Command {
    let mut command = Command::new("rustup");
    command
        .args(["run", "nightly", "cargo"])
        .env_remove("CARGO")
        .env_remove("RUSTC")
        .env_remove("RUSTDOC")
        .env_remove("RUSTUP_TOOLCHAIN")
        .current_dir(root());
    command
}

pub(crate) fn run(mut command: Command) -> Result<(), String> {
    let shown = format!("{command:?}").replace('"', "");
    println!("$ {shown}");
    let status = command
        .status()
        .map_err(|e| format!("could not start {shown}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{shown} failed ({status})"))
    }
}

fn have(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .output()
        .map(|out| out.status.success())
        .unwrap_or(false)
}

/// Host target triple of the pinned toolchain (the runner is built for it, statically).
const RUNNER_TARGET: &str = "x86_64-unknown-linux-gnu";

/// Builds the tool-runner as one static executable and returns its path.
///
/// It is built with `--target` and its own target dir so that `+crt-static` applies to the
/// runner alone and never to build scripts or proc-macros of the rest of the workspace.
pub fn runner() -> Result<PathBuf, String> {
    let target_dir = root().join("target").join("runner");
    let mut command = cargo();
    command
        .args([
            "build",
            "--release",
            "--package",
            "tool-runner",
            "--bin",
            "tool-runner",
        ])
        .args(["--target", RUNNER_TARGET])
        .env("CARGO_TARGET_DIR", &target_dir)
        // One crate graph, std only: fat LTO costs seconds and keeps it under 2 MiB.
        .env("CARGO_PROFILE_RELEASE_LTO", "fat")
        .env(
            "RUSTFLAGS",
            "-C target-feature=+crt-static -C strip=symbols",
        );
    run(command)?;
    Ok(target_dir
        .join(RUNNER_TARGET)
        .join("release")
        .join("tool-runner"))
}

/// Builds the local wall's launcher (debug profile, like the tests) and returns its path.
fn wall_launcher() -> Result<PathBuf, String> {
    let mut command = cargo();
    command.args([
        "build",
        "--locked",
        "--package",
        "paddock-wall",
        "--bin",
        "paddock-wall",
    ]);
    run(command)?;
    Ok(root().join("target").join("debug").join("paddock-wall"))
}

/// The binaries tests and benches start, built once up front and named through environment
/// variables (`test_support::binaries` reads them), so no test builds anything itself.
fn test_binaries(command: &mut Command) -> Result<(), String> {
    let (runner, wall) = built_binaries()?;
    command
        .env("PADDOCK_TOOL_RUNNER", &runner)
        .env("PADDOCK_WALL", &wall)
        .env("PADDOCK_MCP_TEST_SERVER", mcp_test_server()?);
    Ok(())
}

/// The MCP server written for the connectors' tests (stdio), built like the wall launcher.
fn mcp_test_server() -> Result<PathBuf, String> {
    let mut command = cargo();
    command.args([
        "build",
        "--locked",
        "--package",
        "test-support",
        "--bin",
        "mcp-test-server",
    ]);
    run(command)?;
    Ok(root().join("target").join("debug").join("mcp-test-server"))
}

/// The static tool-runner and the wall launcher, built (or found up to date): their paths.
pub(crate) fn built_binaries() -> Result<(PathBuf, PathBuf), String> {
    Ok((runner()?, wall_launcher()?))
}

/// Set up, build, and start the product on its embedded default (the local wall).
///
/// Shows that this machine can build the wall (`machine sandbox status`, a throwaway sandbox
/// built and attested from inside, the tool-runner's self-check), then runs `paddock up`: the
/// API on loopback, printing its URL and where the token is, until Ctrl-C. Extra arguments go
/// to `paddock up` (e.g. `--listen 127.0.0.1:9000`). Without a model key the server still
/// starts and says how to add one.
pub fn up(args: &[String]) -> Result<(), String> {
    system::ensure_run_packages()?;
    // `paddock` embeds the built web UI.
    ui::build()?;
    let runner = runner()?;
    let mut build = cargo();
    build.args([
        "build",
        "--locked",
        "--package",
        "paddock",
        "--package",
        "paddock-wall",
    ]);
    run(build)?;
    let paddock = root().join("target").join("debug").join("paddock");
    let wall = root().join("target").join("debug").join("paddock-wall");
    for step in [
        vec!["machine", "sandbox", "status"],
        vec!["machine", "sandbox", "check"],
    ] {
        let mut command = Command::new(&paddock);
        command
            .args(&step)
            .env("PADDOCK_TOOL_RUNNER", &runner)
            .env("PADDOCK_WALL", &wall);
        run(command)?;
    }
    let mut self_check = Command::new(&runner);
    self_check.arg("self-check");
    run(self_check)?;
    println!(
        "\nThe wall works on this machine. Starting `paddock up`, the API (docs/api.md); it \
         prints its URL and where the token is, and says how to add a model key if none is \
         set. Beside it, a one-off task from a terminal:\n  \
         {} run \"describe this project\" --folder \"$PWD:ro\"\n",
        paddock.display()
    );
    let mut serve = Command::new(&paddock);
    // `cargo xtask up -- --listen …` passes the `--` through: it is not paddock's.
    let args = args.strip_prefix(&["--".to_owned()]).unwrap_or(args);
    serve
        .arg("up")
        .args(args)
        .env("PADDOCK_TOOL_RUNNER", &runner)
        .env("PADDOCK_WALL", &wall);
    run(serve)
}

/// Regenerates the server's checked-in OpenAPI document and TypeScript bindings (and the
/// protocol's bindings); with `--check`, fails when they are not current.
pub fn codegen(args: &[String]) -> Result<(), String> {
    let check = args.iter().any(|a| a == "--check");
    // `--workspace` with the two test targets (in `protocol` and `paddock-server`): the same
    // feature resolution as the workspace's test build, so nothing is compiled a second time.
    let mut command = cargo();
    command.args([
        "test",
        "--locked",
        "--workspace",
        "--test",
        "bindings",
        "--test",
        "generated",
    ]);
    if !check {
        command.env("PADDOCK_UPDATE_BINDINGS", "1");
    }
    run(command)
}

/// Rust formatting and clippy over the whole workspace (which embeds the built UI, so it is
/// built first).
pub fn lint() -> Result<(), String> {
    ui::build()?;
    lint_rust()
}

/// `lint` without building the UI (CI builds it once for every step).
fn lint_rust() -> Result<(), String> {
    let mut fmt = cargo();
    fmt.args(["fmt", "--all", "--check"]);
    run(fmt)?;
    let mut clippy = cargo();
    clippy.args([
        "clippy",
        "--workspace",
        "--all-targets",
        "--locked",
        "--",
        "-D",
        "warnings",
    ]);
    run(clippy)
}

fn ensure_nextest() -> Result<(), String> {
    if Command::new("cargo")
        .args(["nextest", "--version"])
        .output()
        .map(|out| out.status.success())
        .unwrap_or(false)
    {
        return Ok(());
    }
    let mut install = cargo();
    install.args(["install", "cargo-nextest", "--locked"]);
    run(install)
}

pub fn test(args: &[String]) -> Result<(), String> {
    system::ensure_test_packages()?;
    ui::build()?;
    test_rust(args)
}

/// `test` without installing packages or building the UI.
fn test_rust(args: &[String]) -> Result<(), String> {
    ensure_nextest()?;
    let mut nextest = cargo();
    nextest
        .args([
            "nextest",
            "run",
            "--workspace",
            "--locked",
            "--profile",
            "ci",
        ])
        .args(args)
        // insta fails on a changed snapshot instead of writing a new one.
        .env("CI", "true")
        // A failure's message and place are what a reader of a CI log needs; backtraces push
        // them out of it. `cargo nextest run` by hand gives one.
        .env("RUST_BACKTRACE", "0");
    let (runner, wall) = built_binaries()?;
    nextest
        .env("PADDOCK_TOOL_RUNNER", &runner)
        .env("PADDOCK_WALL", &wall)
        // Made by this very build (test-support has integration tests, so cargo builds its
        // binaries), with the workspace's features: `cargo build -p test-support` would
        // resolve them for that package alone and compile its whole graph a second time.
        .env(
            "PADDOCK_MCP_TEST_SERVER",
            root().join("target").join("debug").join("mcp-test-server"),
        );
    run(nextest)?;
    let mut doc = cargo();
    doc.args(["test", "--workspace", "--locked", "--doc"]);
    run(doc)
}

/// Everything CI checks. The UI is built once (rebuilding it would touch `ui/dist` and make
/// cargo rebuild what embeds it). The workspace's test build also builds the desktop app (its
/// integration test runs the binary), so CI builds it once, with the tests' feature selection.
pub fn ci() -> Result<(), String> {
    FROM_SCRATCH.store(true, Ordering::Relaxed);
    system::report_disk("at the start");
    system::ensure_test_packages()?;
    ui::check()?;
    ui::build()?;
    lint_rust()?;
    check_deps()?;
    // The OpenAPI document and the TypeScript bindings are checked by their tests
    // (`protocol`'s `bindings`, `paddock-server`'s `generated`), which run with the rest.
    test_rust(&[])?;
    let desktop = desktop::debug_binary();
    if !desktop.is_file() {
        return Err(format!(
            "the test build did not produce the desktop app at {}",
            desktop.display()
        ));
    }
    // The browser end-to-end flows against the `paddock`, `fake-model-server` and
    // `mcp-test-server` binaries the test build made.
    ui::e2e_with_built()?;
    // The desktop app under Xvfb through tauri-driver, the binary the test build made.
    desktop::smoke_with(&desktop)?;
    bench_smoke::bench_smoke()?;
    // The web UI's benchmarks, briefly, against the same debug binaries.
    ui::bench_smoke_with_built()?;
    fuzz_smoke::fuzz_smoke(&[])?;
    system::report_disk("at the end");
    Ok(())
}

/// `docs/architecture.md`'s layer table and crate edges against `cargo metadata`.
pub fn check_deps() -> Result<(), String> {
    println!("$ check docs/architecture.md against cargo metadata");
    crate::architecture::check(&root())
}

pub fn bench(args: &[String]) -> Result<(), String> {
    let mut bench = cargo();
    bench.args(["bench", "--workspace"]).args(args);
    test_binaries(&mut bench)?;
    run(bench)
}

pub fn fuzz(args: &[String]) -> Result<(), String> {
    let target = args
        .first()
        .ok_or("name a fuzz target (see fuzz/fuzz_targets/)")?;
    let seconds = args.get(1).map(String::as_str).unwrap_or("60");
    ensure_cargo_fuzz()?;
    let mut command = nightly_cargo();
    command
        .args(["fuzz", "run", target.as_str()])
        .args(["--", &format!("-max_total_time={seconds}")]);
    run(command)
}

/// Installs cargo-fuzz (from crates.io, with its locked dependencies) when it is missing;
/// fails naming the nightly toolchain when that is missing (rustup installs it, not apt).
pub(crate) fn ensure_cargo_fuzz() -> Result<(), String> {
    let mut nightly = nightly_cargo();
    nightly.arg("--version");
    if !nightly.output().is_ok_and(|out| out.status.success()) {
        return Err("fuzzing needs the nightly toolchain: rustup toolchain install nightly".into());
    }
    if have("cargo-fuzz") {
        return Ok(());
    }
    let mut install = cargo();
    install.args(["install", "cargo-fuzz", "--locked"]);
    run(install)
}
