//! `paddock sessions list`: the stored sessions, to pick one for `paddock run --resume`.

use std::process::ExitCode;

use anyhow::Context;
use paddock_host::paths::Paths;
use paddock_host::{Host, SessionInfo, SessionState};
use protocol::FolderAccess;

/// Whether any session was ever stored on this machine (listing never creates the store).
pub fn stored(paths: &Paths) -> bool {
    paths.sessions_db().exists()
}

#[allow(clippy::print_stdout, reason = "the CLI's output is its interface")]
pub fn none(json: bool) -> anyhow::Result<ExitCode> {
    if json {
        println!("[]");
    } else {
        println!("no stored sessions (`paddock run` stores one per run)");
    }
    Ok(ExitCode::SUCCESS)
}

/// `YYYY-MM-DD HH:MM UTC` for milliseconds since the Unix epoch.
pub fn utc_minute(ms: i64) -> String {
    let minutes = ms.div_euclid(60_000);
    let (days, minute_of_day) = (minutes.div_euclid(1440), minutes.rem_euclid(1440));
    // Days since 1970-01-01 to a civil date (proleptic Gregorian).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02} UTC",
        minute_of_day / 60,
        minute_of_day % 60
    )
}

fn folders(summary: &SessionInfo) -> String {
    if summary.folders.is_empty() {
        return "(no folders)".to_owned();
    }
    summary
        .folders
        .iter()
        .map(|f| match f.access {
            FolderAccess::ReadWrite => f.path.clone(),
            FolderAccess::ReadOnly => format!("{}:ro", f.path),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[allow(clippy::print_stdout, reason = "the CLI's output is its interface")]
pub async fn list(host: &Host, json: bool) -> anyhow::Result<ExitCode> {
    let sessions = host.list_sessions().await.context("listing sessions")?;
    if json {
        println!("{}", serde_json::to_string(&sessions)?);
        return Ok(ExitCode::SUCCESS);
    }
    if sessions.is_empty() {
        return none(false);
    }
    for session in &sessions {
        let provider = session.provider.map_or("unknown", |p| p.as_str());
        let state = match session.state {
            SessionState::Elsewhere => "  (running in another paddock process)",
            SessionState::Running | SessionState::Stored => "",
        };
        println!(
            "{}  created {}  last active {}  {}  {}{state}",
            session.id,
            utc_minute(session.created_ms),
            utc_minute(session.updated_ms),
            provider,
            folders(session)
        );
        if !session.title.is_empty() {
            println!("    {}", session.title);
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::utc_minute;

    #[test]
    fn times_are_civil_utc() {
        assert_eq!(utc_minute(0), "1970-01-01 00:00 UTC");
        assert_eq!(utc_minute(951_782_400_000), "2000-02-29 00:00 UTC");
        assert_eq!(utc_minute(1_700_000_000_000), "2023-11-14 22:13 UTC");
        assert_eq!(utc_minute(-60_000), "1969-12-31 23:59 UTC");
    }
}
