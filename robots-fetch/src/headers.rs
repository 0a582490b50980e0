//! The response headers that steer fetching and politeness: `Retry-After` and
//! `Cache-Control: max-age`.

use std::time::{Duration, SystemTime};

use http::HeaderMap;

/// `Retry-After` as a delay from now: delta-seconds, or an HTTP date (a date in the past is zero).
/// `None` when absent or unreadable. A number of seconds too large to represent asks for as long
/// as possible: it saturates to [`Duration::MAX`] and callers clamp it to their maximum.
///
/// ```
/// use std::time::Duration;
/// let mut headers = http::HeaderMap::new();
/// headers.insert(http::header::RETRY_AFTER, "120".parse().unwrap());
/// assert_eq!(robots_fetch::retry_after(&headers), Some(Duration::from_secs(120)));
/// ```
pub fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let value = headers
        .get(http::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim();
    if let Some(seconds) = saturating_seconds(value) {
        return Some(seconds);
    }
    let date = httpdate::parse_http_date(value).ok()?;
    Some(
        date.duration_since(SystemTime::now())
            .unwrap_or(Duration::ZERO),
    )
}

/// `Cache-Control: max-age=N`; `no-store` and `no-cache` count as zero (the caller's lower bound
/// applies). `None` when there is no such directive.
///
/// ```
/// use std::time::Duration;
/// let mut headers = http::HeaderMap::new();
/// headers.insert(http::header::CACHE_CONTROL, "public, max-age=3600".parse().unwrap());
/// assert_eq!(robots_fetch::max_age(&headers), Some(Duration::from_secs(3600)));
/// ```
pub fn max_age(headers: &HeaderMap) -> Option<Duration> {
    let mut found = None;
    for value in headers.get_all(http::header::CACHE_CONTROL) {
        let Ok(text) = value.to_str() else { continue };
        for directive in text.split(',').map(str::trim) {
            let (name, arg) = directive.split_once('=').unwrap_or((directive, ""));
            let name = name.trim().to_ascii_lowercase();
            match name.as_str() {
                "max-age" => {
                    if let Some(seconds) = saturating_seconds(arg.trim().trim_matches('"')) {
                        found = Some(seconds);
                    }
                }
                "no-store" | "no-cache" => return Some(Duration::ZERO),
                _ => {}
            }
        }
    }
    found
}

/// A non-empty run of ASCII digits as seconds; too many for a `u64` saturate to `Duration::MAX`.
fn saturating_seconds(text: &str) -> Option<Duration> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(
        text.parse::<u64>()
            .map_or(Duration::MAX, Duration::from_secs),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(name: http::HeaderName, value: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(name, value.parse().unwrap());
        h
    }

    #[test]
    fn retry_after_seconds_and_dates() {
        assert_eq!(
            retry_after(&headers(http::header::RETRY_AFTER, " 7 ")),
            Some(Duration::from_secs(7))
        );
        let later = SystemTime::now() + Duration::from_secs(3600);
        let date = httpdate::fmt_http_date(later);
        let delay = retry_after(&headers(http::header::RETRY_AFTER, &date)).unwrap();
        assert!(
            delay > Duration::from_secs(3500) && delay <= Duration::from_secs(3600),
            "{delay:?}"
        );
        let past = httpdate::fmt_http_date(SystemTime::now() - Duration::from_secs(60));
        assert_eq!(
            retry_after(&headers(http::header::RETRY_AFTER, &past)),
            Some(Duration::ZERO)
        );
        assert_eq!(
            retry_after(&headers(http::header::RETRY_AFTER, "soon")),
            None
        );
        assert_eq!(retry_after(&headers(http::header::RETRY_AFTER, "-5")), None);
        // Too large to represent: as long as possible, never ignored.
        assert_eq!(
            retry_after(&headers(
                http::header::RETRY_AFTER,
                "99999999999999999999999"
            )),
            Some(Duration::MAX)
        );
        assert_eq!(retry_after(&HeaderMap::new()), None);
    }

    #[test]
    fn max_age_directives() {
        let cc = |v: &str| max_age(&headers(http::header::CACHE_CONTROL, v));
        assert_eq!(cc("max-age=60"), Some(Duration::from_secs(60)));
        assert_eq!(
            cc("public, MAX-AGE=\"120\", must-revalidate"),
            Some(Duration::from_secs(120))
        );
        assert_eq!(cc("no-cache"), Some(Duration::ZERO));
        assert_eq!(cc("private"), None);
        assert_eq!(cc("max-age=abc"), None);
        assert_eq!(cc("max-age=99999999999999999999999"), Some(Duration::MAX));
    }
}
