//! The TypeScript bindings under `bindings/` are checked in; this test regenerates them and
//! fails with a diff when they drift. Update them with:
//!
//! `PADDOCK_UPDATE_BINDINGS=1 cargo test -p protocol --test bindings`

#![allow(clippy::unwrap_used, reason = "test code: a panic is a failed test")]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use protocol::{Event, MachineSandboxStatus, ProviderKind, Submission};
use ts_rs::{Config, TS};

const UPDATE_COMMAND: &str = "PADDOCK_UPDATE_BINDINGS=1 cargo test -p protocol --test bindings";

fn checked_in_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("bindings")
}

fn generate(dir: &Path) {
    let config = Config::new().with_out_dir(dir).with_large_int("number");
    Submission::export_all(&config).unwrap();
    Event::export_all(&config).unwrap();
    MachineSandboxStatus::export_all(&config).unwrap();
    ProviderKind::export_all(&config).unwrap();
}

fn read_dir(dir: &Path) -> BTreeMap<String, String> {
    let mut files = BTreeMap::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return files;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "ts") {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            files.insert(name, std::fs::read_to_string(&path).unwrap());
        }
    }
    files
}

/// A line diff good enough to show what changed (the files are small).
fn diff(old: &str, new: &str) -> String {
    let old: Vec<&str> = old.lines().collect();
    let new: Vec<&str> = new.lines().collect();
    let mut out = String::new();
    for line in &old {
        if !new.contains(line) {
            out.push_str(&format!("- {line}\n"));
        }
    }
    for line in &new {
        if !old.contains(line) {
            out.push_str(&format!("+ {line}\n"));
        }
    }
    out
}

#[test]
fn checked_in_bindings_match_the_types() {
    let fresh = tempfile::tempdir().unwrap();
    generate(fresh.path());
    let generated = read_dir(fresh.path());
    assert!(
        generated.contains_key("Event.ts") && generated.contains_key("Op.ts"),
        "generation produced {:?}",
        generated.keys().collect::<Vec<_>>()
    );

    if std::env::var_os("PADDOCK_UPDATE_BINDINGS").is_some() {
        let dir = checked_in_dir();
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for (name, text) in &generated {
            std::fs::write(dir.join(name), text).unwrap();
        }
        return;
    }

    let checked_in = read_dir(&checked_in_dir());
    let mut report = String::new();
    for (name, text) in &generated {
        match checked_in.get(name) {
            None => report.push_str(&format!("missing: bindings/{name}\n")),
            Some(old) if old != text => {
                report.push_str(&format!("changed: bindings/{name}\n{}", diff(old, text)));
            }
            Some(_) => {}
        }
    }
    for name in checked_in.keys() {
        if !generated.contains_key(name) {
            report.push_str(&format!("stale: bindings/{name}\n"));
        }
    }
    assert!(
        report.is_empty(),
        "the TypeScript bindings drifted from the Rust types:\n{report}\nupdate them with: {UPDATE_COMMAND}"
    );
}
