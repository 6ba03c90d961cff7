//! The web UI's tasks: install its npm packages, lint, type-check, unit-test, build, run the
//! browser end-to-end tests in Debian's Chromium, and run the UI's benchmarks there.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::system;
use crate::tasks::{built_binaries, cargo, root, run};

/// The oldest Node the UI's toolchain runs on (Vite 8, ESLint 9).
const NODE_MINIMUM: (u32, u32) = (20, 19);

pub fn dir() -> PathBuf {
    root().join("ui")
}

/// `cargo xtask ui <what>`.
pub fn task(args: &[String]) -> Result<(), String> {
    match args.first().map(String::as_str) {
        Some("build") => build(),
        Some("check") => check(),
        Some("e2e") => e2e(),
        Some("bench") => bench(args.get(1..).unwrap_or_default()),
        other => Err(format!(
            "unknown ui task {}: use `ui build`, `ui check`, `ui e2e` or `ui bench`",
            other.map_or_else(|| "(none)".to_string(), |o| format!("`{o}`"))
        )),
    }
}

fn npm() -> Command {
    let mut command = Command::new("npm");
    command.current_dir(dir());
    command
}

fn ensure_node() -> Result<(), String> {
    let output = Command::new("node")
        .arg("--version")
        .output()
        .map_err(|e| format!("node is needed to build the web UI and was not found ({e}); install Node.js {}.{} or newer", NODE_MINIMUM.0, NODE_MINIMUM.1))?;
    let version = String::from_utf8_lossy(&output.stdout);
    let mut parts = version.trim().trim_start_matches('v').split('.');
    let major: u32 = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    let minor: u32 = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    if (major, minor) < NODE_MINIMUM {
        return Err(format!(
            "the web UI needs Node.js {}.{} or newer; this machine has {}",
            NODE_MINIMUM.0,
            NODE_MINIMUM.1,
            version.trim()
        ));
    }
    Ok(())
}

/// `npm ci` when `node_modules` is missing or older than the lockfile (npm records what it
/// installed in `node_modules/.package-lock.json`).
fn ensure_packages() -> Result<(), String> {
    ensure_node()?;
    let installed = dir().join("node_modules").join(".package-lock.json");
    let lock = dir().join("package-lock.json");
    let modified = |path: &PathBuf| std::fs::metadata(path).and_then(|m| m.modified()).ok();
    let current = match (modified(&installed), modified(&lock)) {
        (Some(installed), Some(lock)) => installed >= lock,
        _ => false,
    };
    if current {
        return Ok(());
    }
    let mut install = npm();
    install.args(["ci", "--no-audit", "--no-fund"]);
    run(install)
}

/// Builds `ui/dist`, which `paddock-ui-assets` embeds and the desktop app loads.
pub fn build() -> Result<(), String> {
    ensure_packages()?;
    let mut build = npm();
    build.args(["run", "build"]);
    run(build)
}

/// Lint (ESLint), type-check (tsc) and unit tests (Vitest).
pub fn check() -> Result<(), String> {
    ensure_packages()?;
    for script in ["lint", "typecheck", "test"] {
        let mut command = npm();
        command.args(["run", script]);
        run(command)?;
    }
    Ok(())
}

/// The browser end-to-end tests: the built UI served by the real `paddock up` (local wall,
/// the fake model server, the MCP test server as a connector) in Debian's Chromium through
/// playwright-core. Builds what they run.
pub fn e2e() -> Result<(), String> {
    system::ensure(&[system::RUN_PACKAGES, system::BROWSER_E2E_PACKAGES])?;
    build()?;
    let mut binaries = cargo();
    binaries.args([
        "build",
        "--locked",
        "--package",
        "paddock",
        "--package",
        "test-support",
        "--bin",
        "paddock",
        "--bin",
        "fake-model-server",
        "--bin",
        "mcp-test-server",
    ]);
    run(binaries)?;
    e2e_with_built()
}

/// The browser end-to-end tests with the binaries a workspace build already made (CI: the
/// test build), so nothing is built twice.
pub fn e2e_with_built() -> Result<(), String> {
    system::ensure(&[system::BROWSER_E2E_PACKAGES])?;
    let mut e2e = npm();
    e2e.args(["run", "e2e"]);
    name_binaries(&mut e2e, &root().join("target").join("debug"), Vec::new())?;
    run(e2e)
}

/// Names in `command`'s environment the binaries the browser tests start: `paddock`, the fake
/// model server and the MCP test server from `built`, the static runner and the wall launcher,
/// and `extra`; refuses one that was not built.
fn name_binaries(
    command: &mut Command,
    built: &Path,
    extra: Vec<(&str, PathBuf)>,
) -> Result<(), String> {
    let (runner, wall) = built_binaries()?;
    let common = [
        ("PADDOCK_BIN", built.join("paddock")),
        ("PADDOCK_FAKE_MODEL_SERVER", built.join("fake-model-server")),
        ("PADDOCK_MCP_TEST_SERVER", built.join("mcp-test-server")),
        ("PADDOCK_TOOL_RUNNER", runner),
        ("PADDOCK_WALL", wall),
    ];
    for (name, path) in common.into_iter().chain(extra) {
        if !path.is_file() {
            return Err(format!("{name}: {} was not built", path.display()));
        }
        command.env(name, path);
    }
    Ok(())
}

/// The UI's benchmarks (`ui/bench/run.mjs`): the Sessions page's first meaningful paint, 200-row
/// audit pages over a 1M-row trail, and frame times while a tool call's output streams, in
/// Debian's Chromium against the real `paddock up`. The full run uses release builds (what
/// ships); `--smoke` (fewer runs, a smaller trail; fails only past generous bounds) uses the
/// debug builds the tests use. Other arguments name benchmarks to run (`sessions`, `audit`,
/// `live-output`).
pub fn bench(args: &[String]) -> Result<(), String> {
    system::ensure(&[system::RUN_PACKAGES, system::BROWSER_E2E_PACKAGES])?;
    let smoke = args.iter().any(|a| a == "--smoke");
    for arg in args {
        if arg.starts_with("--") && arg != "--smoke" {
            return Err(format!("ui bench: unknown option `{arg}` (only `--smoke`)"));
        }
    }
    build()?;
    run_bench(!smoke, args)
}

/// The UI's benchmark smoke in CI: the debug binaries the test build made (only the trail
/// seeder, an example, is built here) and the UI build CI already made (building it again
/// would touch `ui/dist` and relink what embeds it).
pub fn bench_smoke_with_built() -> Result<(), String> {
    system::ensure(&[system::BROWSER_E2E_PACKAGES])?;
    run_bench(false, &["--smoke".to_string()])
}

/// Builds what the benchmarks run (`--workspace` with target filters, so the features are the
/// workspace's and a debug build reuses the test build's artifacts), then runs them.
fn run_bench(release: bool, args: &[String]) -> Result<(), String> {
    let mut binaries = cargo();
    binaries.args(["build", "--locked", "--workspace"]);
    if release {
        binaries.arg("--release");
    }
    binaries.args([
        "--bin",
        "paddock",
        "--bin",
        "fake-model-server",
        "--bin",
        "mcp-test-server",
        "--example",
        "seed_trail",
    ]);
    run(binaries)?;
    let built = root()
        .join("target")
        .join(if release { "release" } else { "debug" });
    let mut bench = npm();
    bench.args(["run", "bench", "--"]).args(args);
    let seeder = built.join("examples").join("seed_trail");
    name_binaries(&mut bench, &built, vec![("PADDOCK_SEED_TRAIL", seeder)])?;
    run(bench)
}
