//! The response headers that steer fetching and politeness: `Retry-After`,
//! `Cache-Control: max-age`, and the rate-limit fields (`RateLimit`, `X-RateLimit-*`).

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

/// How long a response's rate-limit headers ask the client to stop: `Some` only when they say
/// nothing is left, for the time until the reset they give.
///
/// Read, most restrictive first:
/// - the IETF `RateLimit` field, a list of policies (`"burst";r=0;t=30`): remaining `r`, seconds
///   to reset `t`; a policy without `t` takes the window `w` of the same policy in
///   `RateLimit-Policy`. Of several exhausted policies the longest reset wins;
/// - the older draft's `RateLimit-Remaining`/`RateLimit-Reset`;
/// - the common `X-RateLimit-Remaining: 0` with `X-RateLimit-Reset` in seconds, or as a Unix time
///   when above 10^9 (compared with `now`).
///
/// A field that cannot be read is ignored; callers cap the result. A response without any of
/// these fields (most) costs one pass over its header names and no clock read.
///
/// ```
/// use std::time::Duration;
/// let mut headers = http::HeaderMap::new();
/// headers.insert("ratelimit", r#""burst";r=0;t=2, "day";r=900;t=3600"#.parse().unwrap());
/// assert_eq!(robots_fetch::rate_limit_pause(&headers), Some(Duration::from_secs(2)));
/// ```
pub fn rate_limit_pause(headers: &HeaderMap) -> Option<Duration> {
    // Hand-written pre-check, because it runs on every response: one pass over the names, no
    // hashing, instead of five lookups.
    let named = headers.keys().any(|name| {
        let name = name.as_str().as_bytes();
        name.starts_with(b"ratelimit") || name.starts_with(b"x-ratelimit")
    });
    if !named {
        return None;
    }
    rate_limit_pause_at(headers, SystemTime::now())
}

/// [`rate_limit_pause`] as of `now` (a Unix-time reset is compared with it).
fn rate_limit_pause_at(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let ietf = headers
        .get(&RATELIMIT)
        .and_then(|value| ietf_pause(value.as_bytes(), headers));
    let draft = remaining_and_reset(headers, &RATELIMIT_REMAINING, &RATELIMIT_RESET, now);
    let common = remaining_and_reset(headers, &X_RATELIMIT_REMAINING, &X_RATELIMIT_RESET, now);
    [ietf, draft, common].into_iter().flatten().max()
}

static RATELIMIT: http::HeaderName = http::HeaderName::from_static("ratelimit");
static RATELIMIT_POLICY: http::HeaderName = http::HeaderName::from_static("ratelimit-policy");
static RATELIMIT_REMAINING: http::HeaderName = http::HeaderName::from_static("ratelimit-remaining");
static RATELIMIT_RESET: http::HeaderName = http::HeaderName::from_static("ratelimit-reset");
static X_RATELIMIT_REMAINING: http::HeaderName =
    http::HeaderName::from_static("x-ratelimit-remaining");
static X_RATELIMIT_RESET: http::HeaderName = http::HeaderName::from_static("x-ratelimit-reset");

/// The IETF `RateLimit` list: the longest reset among policies with nothing remaining.
fn ietf_pause(value: &[u8], headers: &HeaderMap) -> Option<Duration> {
    let policies: sfv::List = sfv::Parser::new(value).parse().ok()?;
    let mut pause = None;
    for entry in &policies {
        let sfv::ListEntry::Item(item) = entry else {
            continue;
        };
        let (mut remaining, mut reset) = (None, None);
        for (key, value) in &item.params {
            match key.as_str() {
                "r" => remaining = value.as_integer().map(i64::from),
                "t" => reset = value.as_integer().map(i64::from),
                _ => {}
            }
        }
        if remaining != Some(0) {
            continue;
        }
        let reset = match reset {
            Some(seconds) => seconds,
            None => policy_window(headers, &item.bare_item)?,
        };
        let wait = Duration::from_secs(u64::try_from(reset).unwrap_or(0));
        pause = pause.max(Some(wait));
    }
    pause
}

/// The window `w` of the named policy in `RateLimit-Policy`.
fn policy_window(headers: &HeaderMap, name: &sfv::BareItem) -> Option<i64> {
    for value in headers.get_all(&RATELIMIT_POLICY) {
        let Ok(policies) = sfv::Parser::new(value.as_bytes()).parse::<sfv::List>() else {
            continue;
        };
        for entry in &policies {
            if let sfv::ListEntry::Item(item) = entry
                && &item.bare_item == name
                && let Some(window) = item.params.iter().find(|(k, _)| k.as_str() == "w")
            {
                return window.1.as_integer().map(i64::from);
            }
        }
    }
    None
}

/// A `…-Remaining: 0` with its `…-Reset`: seconds, or a Unix time when above 10^9.
fn remaining_and_reset(
    headers: &HeaderMap,
    remaining: &http::HeaderName,
    reset: &http::HeaderName,
    now: SystemTime,
) -> Option<Duration> {
    let number = |name| -> Option<u64> {
        let text = headers.get(name)?.to_str().ok()?.trim();
        // Some servers send a decimal: the whole seconds, rounded up.
        let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
        let whole = saturating_seconds(whole)?.as_secs();
        let up = fraction.bytes().any(|b| b != b'0');
        Some(whole.saturating_add(u64::from(up)))
    };
    if number(remaining)? != 0 {
        return None;
    }
    let reset = number(reset)?;
    if reset > 1_000_000_000 {
        let at = SystemTime::UNIX_EPOCH + Duration::from_secs(reset);
        return Some(at.duration_since(now).unwrap_or(Duration::ZERO));
    }
    Some(Duration::from_secs(reset))
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

    #[test]
    fn rate_limit_headers_pause_only_when_nothing_is_left() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let pause = |pairs: &[(&'static str, &str)]| {
            let mut h = HeaderMap::new();
            for (name, value) in pairs {
                h.append(*name, value.parse().unwrap());
            }
            rate_limit_pause_at(&h, now)
        };
        let secs = |s| Some(Duration::from_secs(s));
        // IETF: the most restrictive of the exhausted policies.
        assert_eq!(pause(&[("ratelimit", r#""burst";r=0;t=2"#)]), secs(2));
        assert_eq!(
            pause(&[("ratelimit", r#""a";r=0;t=2, "b";r=0;t=30, "c";r=5;t=90"#)]),
            secs(30)
        );
        assert_eq!(pause(&[("ratelimit", r#""burst";r=3;t=2"#)]), None);
        // Without `t`, the policy's window.
        assert_eq!(
            pause(&[
                ("ratelimit", r#""day";r=0"#),
                (
                    "ratelimit-policy",
                    r#""hour";q=10;w=3600, "day";q=100;w=86400"#
                )
            ]),
            secs(86400)
        );
        // Unreadable fields say nothing.
        assert_eq!(pause(&[("ratelimit", "r=0;;t=")]), None);
        assert_eq!(pause(&[("ratelimit", r#""x";r=0;t=-5"#)]), secs(0));
        // The older draft's fields and the common ones.
        assert_eq!(
            pause(&[("ratelimit-remaining", "0"), ("ratelimit-reset", "7")]),
            secs(7)
        );
        assert_eq!(
            pause(&[("x-ratelimit-remaining", "0"), ("x-ratelimit-reset", "2")]),
            secs(2)
        );
        assert_eq!(
            pause(&[("x-ratelimit-remaining", "0"), ("x-ratelimit-reset", "1.2")]),
            secs(2)
        );
        assert_eq!(
            pause(&[("x-ratelimit-remaining", "1"), ("x-ratelimit-reset", "2")]),
            None
        );
        // A Unix time.
        assert_eq!(
            pause(&[
                ("x-ratelimit-remaining", "0"),
                ("x-ratelimit-reset", "1700000045")
            ]),
            secs(45)
        );
        assert_eq!(
            pause(&[
                ("x-ratelimit-remaining", "0"),
                ("x-ratelimit-reset", "1600000000")
            ]),
            secs(0)
        );
        assert_eq!(pause(&[("x-ratelimit-remaining", "0")]), None);
        assert_eq!(pause(&[]), None);
        // The pre-check finds them in any case (header names are lowercase in `http`).
        let mut h = HeaderMap::new();
        h.insert("X-RateLimit-Remaining", "0".parse().unwrap());
        h.insert("X-RateLimit-Reset", "3".parse().unwrap());
        assert_eq!(rate_limit_pause(&h), secs(3));
        assert_eq!(rate_limit_pause(&HeaderMap::new()), None);
    }
}
