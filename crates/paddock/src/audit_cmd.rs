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

/// The filters of `paddock audit list` as typed (every filter the store has).
#[derive(Debug, Clone, Default)]
pub struct ListFilters {
    pub session: Option<String>,
    pub kind: Option<String>,
    pub call: Option<String>,
    pub tool: Option<String>,
    pub decision: Option<String>,
    pub enforcement: Option<String>,
    pub status: Option<String>,
    pub since: Option<String>,
    pub until: Option<String>,
    pub text: Option<String>,
    pub limit: usize,
    pub after: Option<String>,
}

/// A value of one of the store's enums (`tool_call`, `deny`, …), or an error naming the flag
/// and the values it takes.
fn parse_value<T: serde::de::DeserializeOwned>(
    flag: &str,
    value: Option<&String>,
    choices: &str,
) -> anyhow::Result<Option<T>> {
    value
        .map(|text| {
            serde_json::from_value(serde_json::Value::String(text.clone()))
                .map_err(|_| anyhow::anyhow!("--{flag} `{text}` is not one of: {choices}"))
        })
        .transpose()
}

/// Milliseconds since the Unix epoch from `--since`/`--until`: a number of milliseconds, a
/// date `YYYY-MM-DD` (midnight UTC), or `YYYY-MM-DDTHH:MM[:SS][Z]` (UTC).
pub fn parse_time(flag: &str, text: &str) -> anyhow::Result<i64> {
    let bad = || {
        anyhow::anyhow!(
            "--{flag} `{text}` is not a time: give milliseconds since 1970, YYYY-MM-DD or \
             YYYY-MM-DDTHH:MM[:SS]Z (UTC)"
        )
    };
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        return text.parse().map_err(|_| bad());
    }
    let text_utc = text.strip_suffix('Z').unwrap_or(text);
    let (date, clock) = text_utc
        .split_once(['T', ' '])
        .unwrap_or((text_utc, "00:00"));
    let number = |part: &str, digits: usize| -> anyhow::Result<i64> {
        if part.len() != digits || !part.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        part.parse().map_err(|_| bad())
    };
    let mut date_parts = date.split('-');
    let (Some(y), Some(m), Some(d), None) = (
        date_parts.next(),
        date_parts.next(),
        date_parts.next(),
        date_parts.next(),
    ) else {
        return Err(bad());
    };
    let (year, month, day) = (number(y, 4)?, number(m, 2)?, number(d, 2)?);
    let mut clock_parts = clock.split(':');
    let hour = number(clock_parts.next().unwrap_or(""), 2)?;
    let minute = number(clock_parts.next().ok_or_else(bad)?, 2)?;
    let second = clock_parts.next().map_or(Ok(0), |s| number(s, 2))?;
    if clock_parts.next().is_some()
        || !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return Err(bad());
    }
    // Days from the civil date (proleptic Gregorian), Howard Hinnant's algorithm.
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Ok(((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000)
}

/// The store's query for these filters.
pub fn to_query(filters: &ListFilters) -> anyhow::Result<Query> {
    Ok(Query {
        session_id: filters.session.clone(),
        kind: parse_value(
            "kind",
            filters.kind.as_ref(),
            "session, attestation, tool_call, network_denial, generic",
        )?,
        call_id: filters.call.clone(),
        tool: filters.tool.clone(),
        decision: parse_value("decision", filters.decision.as_ref(), "allow, deny")?,
        enforcement: parse_value(
            "enforcement",
            filters.enforcement.as_ref(),
            "openshell, local, none, host",
        )?,
        status: parse_value(
            "status",
            filters.status.as_ref(),
            "started, finished, failed, cancelled, denied",
        )?,
        since_ms: filters
            .since
            .as_deref()
            .map(|t| parse_time("since", t))
            .transpose()?,
        until_ms: filters
            .until
            .as_deref()
            .map(|t| parse_time("until", t))
            .transpose()?,
        text: filters.text.clone(),
        limit: filters.limit.clamp(1, audit_store::MAX_PAGE),
        cursor: filters.after.clone(),
    })
}

fn row_line(event: &StoredEvent) -> String {
    format!(
        "#{} {} {} {}",
        event.seq,
        crate::utc::millis(event.time_ms),
        event.session_id,
        summary(event)
    )
}

/// One page, newest first; the cursor of the next (older) page is printed last (`--json`: on
/// stderr, so stdout stays one JSON object per row).
#[allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "the CLI's output is its interface"
)]
pub async fn list(host: &Host, filters: ListFilters, json: bool) -> anyhow::Result<ExitCode> {
    let query = to_query(&filters)?;
    let page = host.audit_query(query).await?;
    for event in &page.events {
        if json {
            println!("{}", serde_json::to_string(event)?);
        } else {
            println!("{}", row_line(event));
        }
    }
    match (&page.next, json) {
        (Some(next), false) => println!("more: add --after {next}"),
        (Some(next), true) => eprintln!("more: add --after {next}"),
        (None, false) if page.events.is_empty() => println!("no rows match"),
        _ => {}
    }
    Ok(ExitCode::SUCCESS)
}

/// One row with its call's rows and the denials joined to the call.
#[allow(clippy::print_stdout, reason = "the CLI's output is its interface")]
pub async fn show(host: &Host, seq: i64, json: bool) -> anyhow::Result<ExitCode> {
    let entry = host.audit_entry(seq).await?;
    if json {
        println!("{}", serde_json::to_string(&entry)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!("{}", row_line(&entry.event));
    println!(
        "hash {} (previous {})",
        entry.event.hash, entry.event.prev_hash
    );
    println!("{}", serde_json::to_string_pretty(&entry.event.record)?);
    if let Some(call_id) = &entry.call_id {
        println!("tool call {call_id}: {} rows", entry.call.len());
        for event in &entry.call {
            println!("  {}", row_line(event));
        }
        if entry.denials.is_empty() {
            println!("network denials of this call: none");
        } else {
            println!("network denials of this call: {}", entry.denials.len());
            for event in &entry.denials {
                println!("  {}", row_line(event));
            }
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

#[cfg(test)]
mod tests {
    use super::parse_time;
    use crate::utc::millis;

    #[test]
    fn a_shown_time_is_read_back_by_since_and_until() {
        for ms in [
            0,
            86_399_000,
            951_868_799_000,
            1_709_164_800_000,
            1_796_198_023_000,
            4_102_444_800_000,
        ] {
            let shown = millis(ms);
            let seconds = shown.split('.').next().unwrap_or_default();
            assert_eq!(
                parse_time("since", &format!("{seconds}Z")).unwrap(),
                ms,
                "{shown}"
            );
        }
        assert_eq!(
            parse_time("until", "2026-12-02").unwrap(),
            1_796_169_600_000
        );
        assert_eq!(
            parse_time("until", "1796198023627").unwrap(),
            1_796_198_023_627
        );
    }

    #[test]
    fn a_time_that_is_not_one_names_the_flag_and_the_forms() {
        for bad in [
            "",
            "yesterday",
            "2026-13-01",
            "2026-12-02T25:00",
            "2026-12-02T10",
            "12:00",
        ] {
            let err = parse_time("since", bad).unwrap_err().to_string();
            assert!(
                err.contains(&format!("--since `{bad}` is not a time"))
                    && err.contains("YYYY-MM-DD"),
                "{bad}: {err}"
            );
        }
    }
}
