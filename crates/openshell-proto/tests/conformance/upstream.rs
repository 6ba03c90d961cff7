//! Upstream's shapes, read from the published `openshell` wheel in a throwaway venv.
//!
//! The venv lives under cargo's target dir, keyed by version, so reruns skip the install:
//! `target/tmp/openshell-wheel/<version>/venv`. It is built in a private directory and renamed
//! into place, so an interrupted or concurrent install never leaves a half-built venv behind.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::shape::{NameRequest, Schema};

/// The Python used to create the venv (`PADDOCK_PYTHON` overrides `python3`).
fn base_python() -> String {
    std::env::var("PADDOCK_PYTHON").unwrap_or_else(|_| "python3".to_owned())
}

fn dumper_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("conformance/dump_descriptors.py")
}

fn run(command: &mut Command, what: &str) -> Result<Vec<u8>, String> {
    let output = command
        .output()
        .map_err(|error| format!("{what}: could not start {command:?}: {error}"))?;
    if output.status.success() {
        Ok(output.stdout)
    } else {
        Err(format!(
            "{what} failed ({}):\n{}{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ))
    }
}

/// Returns the venv's interpreter, creating the venv with `openshell==<version>` when missing.
pub fn venv_python(version: &str) -> Result<PathBuf, String> {
    let home = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("openshell-wheel")
        .join(version);
    let venv = home.join("venv");
    let python = venv.join("bin").join("python");
    if python.exists() {
        return Ok(python);
    }
    std::fs::create_dir_all(&home).map_err(|e| format!("create {}: {e}", home.display()))?;
    let building = home.join(format!("venv.building-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&building);
    run(
        Command::new(base_python())
            .args(["-m", "venv"])
            .arg(&building),
        "creating the venv (Debian needs the python3-venv package)",
    )?;
    run(
        Command::new(building.join("bin").join("python"))
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
            ])
            .arg(format!("openshell=={version}")),
        &format!("installing openshell=={version} from PyPI"),
    )?;
    if std::fs::rename(&building, &venv).is_err() {
        // Another test process finished first; its venv is as good as ours.
        let _ = std::fs::remove_dir_all(&building);
    }
    if python.exists() {
        Ok(python)
    } else {
        Err(format!("the venv at {} has no bin/python", venv.display()))
    }
}

/// Upstream's shapes for exactly the names we declare.
pub fn shapes(version: &str, names: &NameRequest) -> Result<Schema, String> {
    let python = venv_python(version)?;
    let request = serde_json::to_vec(names).map_err(|e| format!("encode request: {e}"))?;
    let mut child = Command::new(&python)
        .arg(dumper_script())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("start {}: {e}", python.display()))?;
    child
        .stdin
        .take()
        .ok_or("the dumper has no stdin")?
        .write_all(&request)
        .map_err(|e| format!("write the dumper's request: {e}"))?;
    let output = child
        .wait_with_output()
        .map_err(|e| format!("wait for the dumper: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "dump_descriptors.py failed ({}):\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    serde_json::from_slice(&output.stdout).map_err(|e| format!("parse the dumper's JSON: {e}"))
}
