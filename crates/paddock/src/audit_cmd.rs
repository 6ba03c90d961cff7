//! `paddock audit verify|list|export`.

use std::io::Write;
use std::process::ExitCode;

use audit_store::{AuditRecord, Query, StoredEvent};
use paddock_host::paths::Paths;
use paddock_host::{ExportFormat, Host};

/// Refuses when no audit trail exists yet (reading never creates one).
pub fn require_trail(paths: &Paths) -> anyhow::Result<()> {
    let path = paths.audit_db();
    if !path.exists() {
        anyhow::bail!(
            "there is no audit trail yet at {} (it is created by the first `paddock run`)",
            path.display()
        );
    }
    Ok(())
}

#[allow(clippy::print_stdout, reason = "the CLI's output is its interface")]
pub async fn verify(host: &Host, json: bool) -> anyhow::Result<ExitCode> {
    let report = host.audit_verify().await?;
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
pub async fn list(
    host: &Host,
    session: Option<String>,
    limit: usize,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let query = Query {
        session_id: session,
        limit: limit.clamp(1, audit_store::MAX_PAGE),
        ..Query::default()
    };
    let page = host.audit_query(query).await?;
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

pub async fn export(
    host: &Host,
    format: &str,
    session: Option<String>,
) -> anyhow::Result<ExitCode> {
    let format = match format {
        "jsonl" => ExportFormat::Jsonl,
        "ocsf" => ExportFormat::Ocsf,
        other => anyhow::bail!("--format `{other}` is not one of: jsonl, ocsf"),
    };
    let query = Query {
        session_id: session,
        ..Query::default()
    };
    let host = host.clone();
    tokio::task::spawn_blocking(move || {
        let stdout = std::io::stdout();
        let mut out = stdout.lock();
        host.audit_export_blocking(format, &query, &mut out)?;
        out.flush()?;
        Ok::<_, anyhow::Error>(())
    })
    .await??;
    Ok(ExitCode::SUCCESS)
}
