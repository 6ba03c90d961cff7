//! Times as the CLI shows them: UTC civil dates from milliseconds since the Unix epoch.

/// A UTC date and time of day.
struct Civil {
    year: i64,
    month: i64,
    day: i64,
    /// Milliseconds since midnight.
    of_day: i64,
}

fn civil(ms: i64) -> Civil {
    let days = ms.div_euclid(86_400_000);
    // Days since 1970-01-01 to a civil date (proleptic Gregorian), Howard Hinnant's algorithm.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    Civil {
        year: yoe + era * 400 + i64::from(month <= 2),
        month,
        day,
        of_day: ms.rem_euclid(86_400_000),
    }
}

/// `YYYY-MM-DD HH:MM UTC` (lists read by people).
pub fn minute(ms: i64) -> String {
    let Civil {
        year,
        month,
        day,
        of_day,
    } = civil(ms);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02} UTC",
        of_day / 3_600_000,
        of_day / 60_000 % 60
    )
}

/// `YYYY-MM-DDTHH:MM:SS.mmmZ` (audit rows: to the millisecond, in the form `--since` and
/// `--until` take to the second).
pub fn millis(ms: i64) -> String {
    let Civil {
        year,
        month,
        day,
        of_day,
    } = civil(ms);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        of_day / 3_600_000,
        of_day / 60_000 % 60,
        of_day / 1000 % 60,
        of_day % 1000
    )
}

#[cfg(test)]
mod tests {
    use super::{millis, minute};

    #[test]
    fn times_are_civil_utc() {
        assert_eq!(minute(0), "1970-01-01 00:00 UTC");
        assert_eq!(minute(951_782_400_000), "2000-02-29 00:00 UTC");
        assert_eq!(minute(1_700_000_000_000), "2023-11-14 22:13 UTC");
        assert_eq!(minute(-60_000), "1969-12-31 23:59 UTC");
    }

    #[test]
    fn audit_times_are_shown_to_the_millisecond() {
        assert_eq!(millis(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(millis(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(millis(1_796_198_023_627), "2026-12-02T07:53:43.627Z");
        assert_eq!(millis(-1), "1969-12-31T23:59:59.999Z");
    }
}
