//! When and how long to wait before sending a request again.
//!
//! Retries happen only before any of a response body was consumed: a stream that has started
//! is never replayed (the caller would see events twice).

use std::hash::{BuildHasher, Hasher};
use std::time::{Duration, SystemTime};

use reqwest::header::HeaderMap;

/// How many times and how long to back off on 429, 5xx, 529 and connection failures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt (0 = never retry).
    pub max_retries: u32,
    /// The first backoff; each further one doubles, up to `max_backoff`. Each wait is drawn
    /// uniformly from the upper half of that value (jitter).
    pub initial_backoff: Duration,
    pub max_backoff: Duration,
    /// The longest server-requested wait (`retry-after` and friends) that is honoured; when
    /// a server asks for more, the error is returned at once with its `retry_after`.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_retries: 4,
            initial_backoff: Duration::from_millis(1000),
            max_backoff: Duration::from_secs(30),
            max_retry_after: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// Never retry.
    pub fn none() -> Self {
        Self {
            max_retries: 0,
            ..Self::default()
        }
    }

    /// The jittered exponential backoff before retry number `retry` (0-based).
    pub(crate) fn backoff(&self, retry: u32) -> Duration {
        let factor = 2u32.saturating_pow(retry.min(20));
        let ceiling = self
            .initial_backoff
            .saturating_mul(factor)
            .min(self.max_backoff);
        let half = ceiling / 2;
        let spread = ceiling.saturating_sub(half).as_nanos();
        let jitter = if spread == 0 {
            0
        } else {
            u128::from(random_u64()) % spread
        };
        half + Duration::from_nanos(u64::try_from(jitter).unwrap_or(u64::MAX))
    }
}

/// A random number from the standard library's per-process hash keys (no RNG dependency).
fn random_u64() -> u64 {
    let mut hasher = std::hash::RandomState::new().build_hasher();
    hasher.write_u64(
        SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0),
    );
    hasher.finish()
}

/// The wait a response asks for, from (in order of preference) `retry-after-ms`,
/// `retry-after` (seconds or an HTTP date) or OpenAI's `x-ratelimit-reset-requests` /
/// `x-ratelimit-reset-tokens` (durations like `6m0s`; the longer one wins).
pub(crate) fn requested_delay(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let header = |name: &str| headers.get(name).and_then(|value| value.to_str().ok());
    if let Some(millis) = header("retry-after-ms").and_then(parse_seconds) {
        return Some(millis / 1000);
    }
    if let Some(value) = header("retry-after") {
        if let Some(seconds) = parse_seconds(value) {
            return Some(seconds);
        }
        if let Ok(at) = httpdate::parse_http_date(value.trim()) {
            return Some(at.duration_since(now).unwrap_or(Duration::ZERO));
        }
    }
    ["x-ratelimit-reset-requests", "x-ratelimit-reset-tokens"]
        .into_iter()
        .filter_map(|name| header(name).and_then(parse_go_duration))
        .max()
}

/// A non-negative decimal number of seconds (`"2"`, `"1.5"`), as a duration.
fn parse_seconds(value: &str) -> Option<Duration> {
    let number: f64 = value.trim().parse().ok()?;
    (number.is_finite() && number >= 0.0).then(|| Duration::from_secs_f64(number.min(1e9)))
}

/// A duration in Go's notation as OpenAI sends it: `20ms`, `1.5s`, `6m0s`, `1h2m3s`.
pub(crate) fn parse_go_duration(value: &str) -> Option<Duration> {
    let mut rest = value.trim();
    if rest.is_empty() {
        return None;
    }
    let mut total = Duration::ZERO;
    while !rest.is_empty() {
        let number_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let number: f64 = rest[..number_end].parse().ok()?;
        rest = &rest[number_end..];
        let unit_end = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let seconds_per_unit = match &rest[..unit_end] {
            "h" => 3600.0,
            "m" => 60.0,
            "s" => 1.0,
            "ms" => 1e-3,
            "us" | "\u{b5}s" => 1e-6,
            "ns" => 1e-9,
            _ => return None,
        };
        rest = &rest[unit_end..];
        let seconds = number * seconds_per_unit;
        if !seconds.is_finite() || seconds > 1e9 {
            return None;
        }
        total += Duration::from_secs_f64(seconds);
    }
    Some(total)
}

#[cfg(test)]
#[path = "retry_tests.rs"]
mod tests;
