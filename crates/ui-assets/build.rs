//! Embeds the built web UI: every file of `ui/dist` (or `$PADDOCK_UI_DIST`) becomes an entry of
//! a sorted static table with its content type and ETag. A missing build is a build error that
//! says how to build the UI; it never becomes an empty UI.

// A build script talks to cargo on stdout; that is its interface.
#![allow(clippy::print_stdout)]

#[path = "src/collect.rs"]
mod collect;

use std::fmt::Write as _;
use std::path::PathBuf;

fn main() {
    println!("cargo::rerun-if-env-changed=PADDOCK_UI_DIST");
    let dist = match std::env::var_os("PADDOCK_UI_DIST") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../ui/dist"),
    };
    let dist = dist.canonicalize().unwrap_or(dist);
    // A directory: cargo reruns this script when anything under it changes.
    println!("cargo::rerun-if-changed={}", dist.display());
    match generate(&dist) {
        Ok(()) => {}
        Err(message) => {
            println!("cargo::error={message}");
        }
    }
}

fn generate(dist: &std::path::Path) -> Result<(), String> {
    let assets = collect::collect(dist).map_err(|e| e.to_string())?;
    let mut table = String::from("&[\n");
    for asset in &assets {
        let _ = writeln!(
            table,
            "    Asset {{ path: {:?}, body: include_bytes!({:?}), content_type: {:?}, etag: {:?}, immutable: {} }},",
            asset.path,
            asset.source.display().to_string(),
            asset.content_type,
            asset.etag,
            asset.immutable,
        );
    }
    table.push(']');
    let out_dir = std::env::var_os("OUT_DIR").ok_or("cargo did not set OUT_DIR")?;
    let target = PathBuf::from(out_dir).join("assets.rs");
    std::fs::write(&target, table).map_err(|e| format!("{}: {e}", target.display()))?;
    println!(
        "cargo::rustc-env=PADDOCK_UI_DIST_EMBEDDED={}",
        dist.display()
    );
    Ok(())
}
