//! The workspace's binaries for tests: `tool_runner()` and `paddock_wall()`.
//!
//! Each honours an environment variable naming a prebuilt executable (`PADDOCK_TOOL_RUNNER`,
//! `PADDOCK_WALL`; `cargo xtask test` sets them). Without it, the binary is built once per test
//! process with `cargo build -p <package> --bin <name>` into the workspace's target folder (the
//! profile of the running test) and its path returned.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The tool-runner executable.
pub fn tool_runner() -> PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| locate("PADDOCK_TOOL_RUNNER", "tool-runner", "tool-runner"))
        .clone()
}

/// The `paddock-wall` launcher of the local wall.
pub fn paddock_wall() -> PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| locate("PADDOCK_WALL", "paddock-wall", "paddock-wall"))
        .clone()
}

/// The MCP test server over stdio (`test_support::mcp_server`), `$PADDOCK_MCP_TEST_SERVER`
/// or built from this package.
pub fn mcp_test_server() -> PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| locate("PADDOCK_MCP_TEST_SERVER", "test-support", "mcp-test-server"))
        .clone()
}

fn locate(variable: &str, package: &str, bin: &str) -> PathBuf {
    if let Some(path) = std::env::var_os(variable).filter(|v| !v.is_empty()) {
        let path = PathBuf::from(path);
        assert!(
            path.is_file(),
            "{variable} names {}, which is not a file",
            path.display()
        );
        return path;
    }
    build(package, bin)
}

/// `<target>/<profile>` of the running test executable (`…/target/debug/deps/test-…`).
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_else(|e| panic!("the test's own path: {e}"));
    let deps = exe.parent().unwrap_or(Path::new("."));
    let dir = if deps.file_name().is_some_and(|n| n == "deps") {
        deps.parent().unwrap_or(deps)
    } else {
        deps
    };
    dir.to_path_buf()
}

fn build(package: &str, bin: &str) -> PathBuf {
    let profile_dir = profile_dir();
    let target_dir = profile_dir.parent().unwrap_or(&profile_dir).to_path_buf();
    let profile = match profile_dir.file_name().and_then(|n| n.to_str()) {
        Some("debug") | None => "dev".to_owned(),
        Some(other) => other.to_owned(),
    };
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(&cargo)
        .args([
            "build",
            "--quiet",
            "-p",
            package,
            "--bin",
            bin,
            "--profile",
            &profile,
        ])
        .env("CARGO_TARGET_DIR", &target_dir)
        .status()
        .unwrap_or_else(|e| {
            panic!(
                "running {} to build {bin}: {e}",
                Path::new(&cargo).display()
            )
        });
    assert!(
        status.success(),
        "cargo build -p {package} --bin {bin} failed ({status})"
    );
    let path = profile_dir.join(bin);
    assert!(path.is_file(), "{} was not built", path.display());
    path
}
