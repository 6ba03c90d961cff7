//! `cargo bench -p audit-store`: insert rates and filtered pages over a large trail, each
//! with a baseline measured in the same run. `PADDOCK_AUDIT_BENCH_EVENTS` sets the size of the
//! large trail (default 1,000,000).
// A bench binary reports on stdout by design.
#![allow(clippy::print_stdout)]

use std::error::Error;
use std::time::{Duration, Instant};

use audit_store::{AuditStore, CallStatus, Durability, NewEvent, OpenOptions, Query};
use protocol::EnforcementLevel;

// The generated rows, shared with the `seed_trail` example (not a bench target of its own).
#[path = "support/trail.rs"]
mod trail;
use trail::{TOOLS, attestation, call, events};

fn open(
    dir: &tempfile::TempDir,
    name: &str,
    durability: Durability,
) -> Result<AuditStore, Box<dyn Error>> {
    let mut store = AuditStore::open_with(dir.path().join(name), &OpenOptions { durability })?;
    store.register_secret("model-key-for-the-bench-0001")?;
    store.append(&NewEvent::new("bench", 0, attestation()))?;
    Ok(store)
}

fn rate(count: usize, elapsed: Duration) -> f64 {
    count as f64 / elapsed.as_secs_f64()
}

/// The same rows through plain rusqlite: no serde, redaction or hashing.
fn raw_baseline(dir: &tempfile::TempDir, rows: usize) -> Result<f64, Box<dyn Error>> {
    let store = open(dir, "raw.db", Durability::Full)?;
    drop(store);
    let mut conn = rusqlite::Connection::open(dir.path().join("raw.db"))?;
    conn.execute_batch(
        "PRAGMA synchronous=FULL; PRAGMA cache_size=-32768; PRAGMA temp_store=MEMORY;",
    )?;
    let content = serde_json::to_string(&call(5))?;
    let started = Instant::now();
    for batch in 0..rows / 1000 {
        let tx = conn.transaction()?;
        {
            let mut insert = tx.prepare_cached(
                "INSERT INTO events (seq, time_ms, session_id, kind, call_id, tool, enforcement,
                                     decision, decided_by, status, content, prev_hash, hash)
                 VALUES (?1, ?2, 'bench', 'tool_call', ?3, ?4, 'local', 'allow', 'rule', 'finished', ?5, ?6, ?6)",
            )?;
            for i in 0..1000 {
                let seq = (batch * 1000 + i + 2) as i64;
                insert.execute(rusqlite::params![
                    seq,
                    seq,
                    format!("call-{seq}"),
                    TOOLS[i % TOOLS.len()],
                    content,
                    audit_store::GENESIS,
                ])?;
            }
        }
        tx.commit()?;
    }
    Ok(rate(rows, started.elapsed()))
}

fn median_ms(
    runs: usize,
    mut f: impl FnMut() -> Result<usize, Box<dyn Error>>,
) -> Result<(f64, usize), Box<dyn Error>> {
    let mut times = Vec::with_capacity(runs);
    let mut rows = 0;
    for _ in 0..runs {
        let started = Instant::now();
        rows = f()?;
        times.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    times.sort_by(f64::total_cmp);
    Ok((times[times.len() / 2], rows))
}

fn main() -> Result<(), Box<dyn Error>> {
    let big: usize = std::env::var("PADDOCK_AUDIT_BENCH_EVENTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let dir = tempfile::tempdir()?;
    println!("audit-store benchmark (each ratio compares two figures from this run)");

    let raw = raw_baseline(&dir, 50_000)?;
    println!(
        "{:<58} {:>10.0} rows/s",
        "baseline: raw rusqlite INSERT, batches of 1000, FULL", raw
    );

    // The per-event work before SQLite: serialise, redact, canonical content, hash.
    let mut redactor = audit_store::Redactor::new()?;
    redactor.register("model-key-for-the-bench-0001")?;
    let sample = events(0, 50_000);
    let started = Instant::now();
    let mut bytes = 0;
    for event in &sample {
        let mut value = serde_json::to_value(&event.record)?;
        redactor.redact_in_place(&mut value);
        let content = audit_store::canonical_json(&value);
        use sha2::Digest;
        bytes += sha2::Sha256::digest(content.as_bytes()).len();
    }
    let pipeline = rate(sample.len(), started.elapsed());
    println!(
        "{:<58} {:>10.0} events/s  ({bytes} digest bytes)",
        "pipeline alone: serialise + redact + canonical + sha256", pipeline
    );

    let mut batched = open(&dir, "batch.db", Durability::Full)?;
    let started = Instant::now();
    for b in 0..50 {
        batched.append_batch(&events(b * 1000, 1000))?;
    }
    let batch_rate = rate(50_000, started.elapsed());
    println!(
        "{:<58} {:>10.0} events/s  ({:.2}x the raw baseline)",
        "append_batch, batches of 1000, FULL",
        batch_rate,
        batch_rate / raw
    );

    let mut single_rates = Vec::new();
    for (name, durability, count) in [
        ("FULL", Durability::Full, 300),
        ("WAL + NORMAL", Durability::Normal, 3000),
    ] {
        let mut store = open(&dir, &format!("single-{name}.db"), durability)?;
        let batch = events(0, count);
        let started = Instant::now();
        for event in &batch {
            store.append(event)?;
        }
        let r = rate(count, started.elapsed());
        single_rates.push(r);
        println!(
            "{:<58} {:>10.0} events/s",
            format!("append, one commit each, synchronous={name}"),
            r
        );
    }
    println!(
        "{:<58} {:>10.1}x slower than NORMAL",
        "  cost of synchronous=FULL per commit",
        single_rates[1] / single_rates[0]
    );

    let mut store = open(&dir, "big.db", Durability::Normal)?;
    let started = Instant::now();
    let chunk = 10_000;
    let mut written = 0;
    while written < big {
        let n = chunk.min(big - written);
        store.append_batch(&events(written, n))?;
        written += n;
    }
    println!(
        "{:<58} {:>10.0} events/s  ({} events in {:.1} s)",
        "build the large trail: append_batch of 10k, NORMAL",
        rate(big, started.elapsed()),
        big,
        started.elapsed().as_secs_f64()
    );

    let filtered = Query {
        tool: Some("run_bash".into()),
        enforcement: Some(EnforcementLevel::Local),
        limit: 50,
        ..Query::default()
    };
    let (unfiltered_ms, _) = median_ms(200, || {
        Ok(store
            .query(&Query {
                limit: 50,
                ..Query::default()
            })?
            .events
            .len())
    })?;
    println!(
        "{:<58} {:>10.3} ms",
        "baseline: newest 50, no filter", unfiltered_ms
    );
    let (newest_ms, rows) = median_ms(200, || Ok(store.query(&filtered)?.events.len()))?;
    println!(
        "{:<58} {:>10.3} ms  ({rows} rows, {:.1}x the baseline)",
        "page: tool + enforcement, newest 50",
        newest_ms,
        newest_ms / unfiltered_ms
    );
    let mut deep = filtered;
    for _ in 0..200 {
        match store.query(&deep)?.next {
            Some(next) => deep.cursor = Some(next),
            None => break,
        }
    }
    let (deep_ms, rows) = median_ms(200, || Ok(store.query(&deep)?.events.len()))?;
    println!(
        "{:<58} {:>10.3} ms  ({rows} rows)",
        "page: tool + enforcement, 201st page (keyset cursor)", deep_ms
    );
    let rare = Query {
        status: Some(CallStatus::Denied),
        limit: 50,
        ..Query::default()
    };
    let (rare_ms, rows) = median_ms(50, || Ok(store.query(&rare)?.events.len()))?;
    println!(
        "{:<58} {:>10.3} ms  ({rows} rows)",
        "page: status = denied (1 in 1000 rows)", rare_ms
    );
    let text = Query {
        text: Some("crate96 ".into()),
        limit: 50,
        ..Query::default()
    };
    let (text_ms, rows) = median_ms(20, || Ok(store.query(&text)?.events.len()))?;
    println!(
        "{:<58} {:>10.3} ms  ({rows} rows)",
        "page: free text (a scan until 50 rows match)", text_ms
    );

    let started = Instant::now();
    let report = store.verify()?;
    println!(
        "{:<58} {:>10.1} s   ({} rows, intact: {})",
        "verify() over the whole trail",
        started.elapsed().as_secs_f64(),
        report.rows,
        report.is_intact()
    );
    Ok(())
}
