//! `cargo run --release -p audit-store --example seed_trail -- <audit.db> [rows]`: builds an
//! audit trail of `rows` rows (default 1,000,000) in a new file, for the web UI's audit
//! benchmark (`ui/bench/audit-page.mjs`), which seeds the trail `paddock up` reads on a fresh
//! HOME (`$XDG_STATE_HOME/paddock/audit.db`) with it.
//!
//! An example, not a binary of the crate: it is a benchmark's fixture builder and must never be
//! installed or reachable from the product. The rows go through the store's own
//! `append_batch` (redaction, canonical content, the hash chain), so the trail verifies like a
//! real one. They are the audit-store bench's tool calls, grouped into sessions of
//! [`SESSION_ROWS`] rows (each opened by its attestation and a `session` start, as the host
//! opens one), with a refused connection every [`DENIAL_EVERY`] rows, one second apart and
//! ending now. Prints one JSON line: rows, head, the first and last row's time, seconds taken.
// An example that reports on stdout by design.
#![allow(clippy::print_stdout)]

use std::error::Error;
use std::os::unix::fs::DirBuilderExt;
use std::path::PathBuf;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use audit_store::{
    AuditRecord, AuditStore, Durability, NetworkDenialRecord, NewEvent, OpenOptions, SessionEvent,
    SessionRecord,
};
use protocol::NetworkDenial;
use serde_json::json;

#[path = "../benches/support/trail.rs"]
#[allow(dead_code, reason = "shared with the bench, which uses all of it")]
mod trail;

/// Rows per session (one `append_batch` each).
const SESSION_ROWS: usize = 10_000;
/// A refused connection every this many rows.
const DENIAL_EVERY: usize = 250;
/// Milliseconds between two rows.
const ROW_SPACING_MS: i64 = 1_000;

fn session_id(session: usize) -> String {
    format!("{session:08x}-5eed-4000-8000-{session:012x}")
}

fn denial(i: usize, time_ms: i64) -> AuditRecord {
    AuditRecord::NetworkDenial(NetworkDenialRecord {
        call_id: Some(format!("call-{}", i / 2)),
        denial: NetworkDenial {
            host: format!("tracker{}.example.com", i % 7),
            port: 443,
            binary: Some("/usr/bin/curl".into()),
            reason: "no matching policy".into(),
            rule: Some("profile:strict".into()),
            time_ms,
        },
    })
}

/// Row `i` of the trail (0-based), the `k`-th row of its session.
fn row(i: usize, k: usize, time_ms: i64) -> AuditRecord {
    match k {
        0 => trail::attestation(),
        1 => AuditRecord::Session(SessionRecord {
            event: SessionEvent::Started,
            provider: Some("local".into()),
            approval_mode: Some("ask".into()),
            folders: vec![
                "rw:/home/alice/project".into(),
                "ro:/home/alice/docs".into(),
            ],
            note: None,
        }),
        _ if i.is_multiple_of(DENIAL_EVERY) => denial(i, time_ms),
        _ => trail::call(i),
    }
}

fn main() -> Result<(), Box<dyn Error>> {
    let mut args = std::env::args().skip(1);
    let path = PathBuf::from(
        args.next()
            .ok_or("usage: seed_trail <audit.db> [rows] (the file must not exist yet)")?,
    );
    let rows: usize = match args.next() {
        Some(text) => text
            .parse()
            .map_err(|e| format!("rows: {text:?} is not a count ({e})"))?,
        None => 1_000_000,
    };
    if path.exists() {
        return Err(format!(
            "{} exists: seed_trail only builds a new trail, it never appends to one",
            path.display()
        )
        .into());
    }
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        // Owner-only, as `paddock` creates its state folder.
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(parent)?;
    }
    let started = Instant::now();
    let now_ms = i64::try_from(SystemTime::now().duration_since(UNIX_EPOCH)?.as_millis())?;
    let first_ms = now_ms - i64::try_from(rows)? * ROW_SPACING_MS;
    let mut store = AuditStore::open_with(
        &path,
        &OpenOptions {
            durability: Durability::Normal,
        },
    )?;
    let mut written = 0;
    while written < rows {
        let session = session_id(written / SESSION_ROWS);
        let count = SESSION_ROWS.min(rows - written);
        let batch: Vec<NewEvent> = (written..written + count)
            .map(|i| {
                let time_ms = first_ms + i64::try_from(i).unwrap_or(i64::MAX) * ROW_SPACING_MS;
                NewEvent::new(session.clone(), time_ms, row(i, i - written, time_ms))
            })
            .collect();
        store.append_batch(&batch)?;
        written += count;
    }
    let head = store.head()?;
    println!(
        "{}",
        json!({
            "rows": written,
            "head": head,
            "first_time_ms": first_ms,
            "last_time_ms": first_ms + i64::try_from(rows.saturating_sub(1))? * ROW_SPACING_MS,
            "seconds": started.elapsed().as_secs_f64(),
        })
    );
    Ok(())
}
