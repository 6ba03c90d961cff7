use super::*;
use pretty_assertions::assert_eq;
use reqwest::header::{HeaderName, HeaderValue};

fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
    let mut map = HeaderMap::new();
    for (name, value) in pairs {
        if let Ok(value) = HeaderValue::from_str(value) {
            map.insert(HeaderName::from_static(name), value);
        }
    }
    map
}

#[test]
fn retry_after_in_seconds() {
    let now = SystemTime::now();
    assert_eq!(
        requested_delay(&headers(&[("retry-after", "3")]), now),
        Some(Duration::from_secs(3))
    );
    assert_eq!(
        requested_delay(&headers(&[("retry-after", "0.25")]), now),
        Some(Duration::from_millis(250))
    );
}

#[test]
fn retry_after_as_an_http_date() {
    let now = SystemTime::UNIX_EPOCH + Duration::from_secs(784_111_767);
    // 1994-11-06 08:49:37 GMT is 784111777: ten seconds after `now`.
    let map = headers(&[("retry-after", "Sun, 06 Nov 1994 08:49:37 GMT")]);
    assert_eq!(requested_delay(&map, now), Some(Duration::from_secs(10)));
    let later = now + Duration::from_secs(60);
    assert_eq!(
        requested_delay(&map, later),
        Some(Duration::ZERO),
        "a date in the past means retry now"
    );
}

#[test]
fn retry_after_ms_wins_over_retry_after() {
    let map = headers(&[("retry-after-ms", "1500"), ("retry-after", "9")]);
    assert_eq!(
        requested_delay(&map, SystemTime::now()),
        Some(Duration::from_millis(1500))
    );
}

#[test]
fn openai_reset_headers_use_the_longer_wait() {
    let map = headers(&[
        ("x-ratelimit-reset-requests", "1s"),
        ("x-ratelimit-reset-tokens", "6m0s"),
    ]);
    assert_eq!(
        requested_delay(&map, SystemTime::now()),
        Some(Duration::from_secs(360))
    );
}

#[test]
fn garbage_headers_request_no_delay() {
    let map = headers(&[
        ("retry-after", "soon"),
        ("retry-after-ms", "-5"),
        ("x-ratelimit-reset-requests", "5 parsecs"),
    ]);
    assert_eq!(requested_delay(&map, SystemTime::now()), None);
}

#[test]
fn go_durations() {
    assert_eq!(parse_go_duration("20ms"), Some(Duration::from_millis(20)));
    assert_eq!(
        parse_go_duration("1h2m3.5s"),
        Some(Duration::from_millis(3_723_500))
    );
    assert_eq!(parse_go_duration(""), None);
    assert_eq!(parse_go_duration("7"), None, "a number needs a unit");
    assert_eq!(parse_go_duration("3d"), None);
}

#[test]
fn backoff_doubles_with_jitter_and_stays_under_the_cap() {
    let policy = RetryPolicy {
        max_retries: 10,
        initial_backoff: Duration::from_millis(100),
        max_backoff: Duration::from_millis(1000),
        max_retry_after: Duration::from_secs(1),
    };
    for retry in 0..10u32 {
        let ceiling = Duration::from_millis(100 * 2u64.pow(retry)).min(Duration::from_millis(1000));
        for _ in 0..50 {
            let wait = policy.backoff(retry);
            assert!(
                wait >= ceiling / 2 && wait <= ceiling,
                "retry {retry}: {wait:?} outside {:?}..={ceiling:?}",
                ceiling / 2
            );
        }
    }
}

#[test]
fn backoff_is_jittered() {
    let policy = RetryPolicy::default();
    let waits: std::collections::HashSet<Duration> = (0..20).map(|_| policy.backoff(3)).collect();
    assert!(waits.len() > 1, "20 draws were all equal: {waits:?}");
}
