//! `paddock audit verify|list|export`.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Context;
use audit_store::{AuditRecord, AuditStore, Query, StoredEvent};

use paddock::paths::Paths;

fn open(paths: &Paths) -> anyhow::Result<AuditStore> {
    let path = paths.audit_db();
    if !path.exists() {
        anyhow::bail!(
            "there is no audit trail yet at {} (it is created by the first `paddock run`)",
            path.display()
        );
    }
    AuditStore::open(&path).with_context(|| format!("opening {}", path.display()))
}

#[allow(clippy::print_stdout, reason = "the CLI's output is its interface")]
pub fn verify(paths: &Paths, json: bool) -> anyhow::Result<ExitCode> {
    let report = open(paths)?.verify()?;
    if json {
        println!("{}", serde_json::to_string(&report)?);
    } else if let Some(broken) = &report.first_broken {
        println!("BROKEN: {broken} ({} rows checked)", report.rows);
    } else {
        match &report.head {
            Some(head) => println!(
                "intact: {} rows; head #{} {}",
                report.rows, head.seq, head.hash
            ),
            None => println!("intact: the audit trail is empty"),
        }
    }
    Ok(if report.is_intact() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn summary(event: &StoredEvent) -> String {
    match &event.record {
        AuditRecord::Session(s) => format!("session {:?} {}", s.event, s.folders.join(" ")),
        AuditRecord::Attestation(a) => format!(
            "attestation {} {}",
            a.enforcement.as_str(),
            if a.passed() { "passed" } else { "FAILED" }
        ),
        AuditRecord::ToolCall(c) => format!(
            "tool_call {} {} {} [{}]{}",
            c.call_id,
            c.tool,
            c.status.as_str(),
            c.enforcement.as_str(),
            c.exit_code
                .map(|e| format!(" exit {e}"))
                .unwrap_or_default()
        ),
        AuditRecord::NetworkDenial(d) => {
            format!(
                "network_denial {} -> {}:{}",
                d.denial.program(),
                d.denial.host,
                d.denial.port
            )
        }
        AuditRecord::Generic(g) => g.name.clone(),
    }
}

#[allow(clippy::print_stdout, reason = "the CLI's output is its interface")]
pub fn list(
    paths: &Paths,
    session: Option<String>,
    limit: usize,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let store = open(paths)?;
    let query = Query {
        session_id: session,
        limit: limit.clamp(1, audit_store::MAX_PAGE),
        ..Query::default()
    };
    let page = store.query(&query)?;
    for event in &page.events {
        if json {
            println!("{}", serde_json::to_string(event)?);
        } else {
            println!(
                "#{} {} {} {}",
                event.seq,
                event.time_ms,
                event.session_id,
                summary(event)
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub fn export(paths: &Paths, format: &str, session: Option<String>) -> anyhow::Result<ExitCode> {
    let store = open(paths)?;
    let query = Query {
        session_id: session,
        ..Query::default()
    };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match format {
        "jsonl" => store.export_jsonl(&query, &mut out)?,
        "ocsf" => store.export_ocsf(&query, &mut out)?,
        other => anyhow::bail!("--format `{other}` is not one of: jsonl, ocsf"),
    };
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
