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

/// What a response's rate-limit headers say when they say nothing is left: how long until the
/// reset, and whether an exhausted policy gave no reset at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RateLimitPause {
    /// The longest reset given by an exhausted policy (zero when none gave one). Saturates
    /// rather than overflows: callers cap it.
    pub reset: Duration,
    /// An exhausted policy gave neither a reset nor a `RateLimit-Policy` window: the caller backs
    /// off a step, as after a distress response, since the server said "stop" without "until".
    pub without_reset: bool,
}

/// How long a response's rate-limit headers ask the client to stop: `Some` only when they say
/// nothing is left.
///
/// Read, most restrictive first:
/// - the IETF `RateLimit` field, a list of policies (`"burst";r=0;t=30`): remaining `r`, seconds
///   to reset `t`. Each member is read alone: a malformed one is ignored and the others still
///   count. An exhausted policy without `t` takes the window `w` of the same policy in
///   `RateLimit-Policy`, else it is [`RateLimitPause::without_reset`]. Of several exhausted
///   policies the longest reset wins;
/// - the earlier drafts' forms (up to revision 07): the single `RateLimit` dictionary
///   (`limit=1, remaining=0, reset=5`) and the separate `RateLimit-Remaining`/`RateLimit-Reset`
///   fields. Without a reset, an exhausted quota takes the window `w` of the policy in
///   `RateLimit-Policy: 1;w=5` whose quota is its limit (else the longest window), else it is
///   [`RateLimitPause::without_reset`];
/// - the common `X-RateLimit-Remaining: 0` with `X-RateLimit-Reset` in seconds, or as a Unix time
///   when above 10^9 (compared with `now`).
///
/// Fractional seconds are rounded up in every form. No value can overflow: a reset too large to
/// represent saturates, and callers cap it. A response without any of these fields (most) costs
/// one pass over its header names and no clock read.
///
/// ```
/// use std::time::Duration;
/// let mut headers = http::HeaderMap::new();
/// headers.insert("ratelimit", r#""burst";r=0;t=2, "day";r=900;t=3600"#.parse().unwrap());
/// let pause = robots_fetch::rate_limit_pause(&headers).unwrap();
/// assert_eq!(pause.reset, Duration::from_secs(2));
/// assert!(!pause.without_reset);
/// ```
pub fn rate_limit_pause(headers: &HeaderMap) -> Option<RateLimitPause> {
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
fn rate_limit_pause_at(headers: &HeaderMap, now: SystemTime) -> Option<RateLimitPause> {
    let mut found: Option<RateLimitPause> = None;
    let mut add = |pause: RateLimitPause| {
        let so_far = found.get_or_insert_with(RateLimitPause::default);
        so_far.reset = so_far.reset.max(pause.reset);
        so_far.without_reset |= pause.without_reset;
    };
    for value in headers.get_all(&RATELIMIT) {
        if let Some(pause) = ietf_pause(value.as_bytes(), headers) {
            add(pause);
        }
        if let Some(pause) = draft_dictionary_pause(value.as_bytes(), headers, now) {
            add(pause);
        }
    }
    if let Some(pause) = draft_fields_pause(headers, now) {
        add(pause);
    }
    if header_number(headers, &X_RATELIMIT_REMAINING) == Some(0)
        && let Some(reset) = header_number(headers, &X_RATELIMIT_RESET)
    {
        add(RateLimitPause {
            reset: reset_after(reset, now),
            without_reset: false,
        });
    }
    found
}

/// The pause for an exhausted quota of the earlier drafts (up to revision 07), whose reset is
/// `reset` seconds when given, else the window of the policy in force, else a back-off step.
fn draft_pause(
    reset: Option<u64>,
    limit: Option<u64>,
    headers: &HeaderMap,
    now: SystemTime,
) -> RateLimitPause {
    match reset
        .map(|reset| reset_after(reset, now))
        .or_else(|| draft_policy_window(headers, limit).map(Duration::from_secs))
    {
        Some(reset) => RateLimitPause {
            reset,
            without_reset: false,
        },
        None => RateLimitPause {
            reset: Duration::ZERO,
            without_reset: true,
        },
    }
}

/// The earlier drafts' single `RateLimit` dictionary (`limit=1, remaining=0, reset=5`), each
/// member read alone: a malformed one is ignored and the others still count.
fn draft_dictionary_pause(
    value: &[u8],
    headers: &HeaderMap,
    now: SystemTime,
) -> Option<RateLimitPause> {
    let (mut limit, mut remaining, mut reset) = (None, None, None);
    for member in list_members(value) {
        let Ok(dictionary) = sfv::Parser::new(member).parse::<sfv::Dictionary>() else {
            continue;
        };
        for (key, entry) in &dictionary {
            let sfv::ListEntry::Item(item) = entry else {
                continue;
            };
            let seconds = whole_seconds(&item.bare_item);
            match key.as_str() {
                "limit" => limit = seconds,
                "remaining" => remaining = item.bare_item.as_integer().map(i64::from),
                "reset" => reset = seconds,
                _ => {}
            }
        }
    }
    (remaining == Some(0)).then(|| draft_pause(reset, limit, headers, now))
}

/// The earlier drafts' separate fields: `RateLimit-Remaining: 0` with `RateLimit-Reset`, or
/// without it, `RateLimit-Policy`'s window for `RateLimit-Limit`.
fn draft_fields_pause(headers: &HeaderMap, now: SystemTime) -> Option<RateLimitPause> {
    if header_number(headers, &RATELIMIT_REMAINING)? != 0 {
        return None;
    }
    let reset = header_number(headers, &RATELIMIT_RESET);
    let limit = header_number(headers, &RATELIMIT_LIMIT);
    Some(draft_pause(reset, limit, headers, now))
}

/// The window `w` of the earlier drafts' `RateLimit-Policy` (`10;w=1, 100;w=60`): that of the
/// policy whose quota is `limit`, else the longest (the most restrictive guess).
fn draft_policy_window(headers: &HeaderMap, limit: Option<u64>) -> Option<u64> {
    let mut longest = None;
    for value in headers.get_all(&RATELIMIT_POLICY) {
        for member in list_members(value.as_bytes()) {
            let Ok(item) = sfv::Parser::new(member).parse::<sfv::Item>() else {
                continue;
            };
            let Some(quota) = item.bare_item.as_integer().map(i64::from) else {
                continue;
            };
            let Some(window) = item
                .params
                .iter()
                .find(|(k, _)| k.as_str() == "w")
                .and_then(|(_, w)| whole_seconds(w))
            else {
                continue;
            };
            if limit.is_some_and(|limit| i64::try_from(limit).ok() == Some(quota)) {
                return Some(window);
            }
            longest = longest.max(Some(window));
        }
    }
    longest
}

static RATELIMIT: http::HeaderName = http::HeaderName::from_static("ratelimit");
static RATELIMIT_POLICY: http::HeaderName = http::HeaderName::from_static("ratelimit-policy");
static RATELIMIT_LIMIT: http::HeaderName = http::HeaderName::from_static("ratelimit-limit");
static RATELIMIT_REMAINING: http::HeaderName = http::HeaderName::from_static("ratelimit-remaining");
static RATELIMIT_RESET: http::HeaderName = http::HeaderName::from_static("ratelimit-reset");
static X_RATELIMIT_REMAINING: http::HeaderName =
    http::HeaderName::from_static("x-ratelimit-remaining");
static X_RATELIMIT_RESET: http::HeaderName = http::HeaderName::from_static("x-ratelimit-reset");

/// The members of a Structured Fields list, split at the commas outside quoted strings, so that
/// each can be parsed alone (sfv refuses a whole list for one bad member).
fn list_members(value: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut quoted = false;
    let mut escaped = false;
    value
        .split(move |&byte| {
            if escaped {
                escaped = false;
                return false;
            }
            match byte {
                b'\\' if quoted => escaped = true,
                b'"' => quoted = !quoted,
                b',' if !quoted => return true,
                _ => {}
            }
            false
        })
        .map(<[u8]>::trim_ascii)
        .filter(|member| !member.is_empty())
}

/// A Structured Fields number as whole seconds, rounded up; `None` for a negative one or
/// another type.
fn whole_seconds(value: &sfv::BareItem) -> Option<u64> {
    if let Some(integer) = value.as_integer() {
        return u64::try_from(i64::from(integer)).ok();
    }
    let thousandths = i64::from(value.as_decimal()?.as_integer_scaled_1000());
    u64::try_from(thousandths).ok().map(|t| t.div_ceil(1000))
}

/// The IETF `RateLimit` list: the longest reset among members with nothing remaining, each
/// member read alone.
fn ietf_pause(value: &[u8], headers: &HeaderMap) -> Option<RateLimitPause> {
    let mut pause: Option<RateLimitPause> = None;
    for member in list_members(value) {
        let Ok(item) = sfv::Parser::new(member).parse::<sfv::Item>() else {
            // A member Structured Fields refuses only for a number too long (`t=` past 15
            // digits) still says nothing is left: its reset saturates (callers cap it), so no
            // value a server sends can turn the pause off.
            if let Some(reset) = overlong_reset(member) {
                let so_far = pause.get_or_insert_with(RateLimitPause::default);
                so_far.reset = so_far.reset.max(reset);
            }
            continue;
        };
        let (mut remaining, mut reset) = (None, None);
        for (key, value) in &item.params {
            match key.as_str() {
                "r" => remaining = value.as_integer().map(i64::from),
                "t" => reset = whole_seconds(value),
                _ => {}
            }
        }
        if remaining != Some(0) {
            continue;
        }
        let this = match reset.or_else(|| policy_window(headers, &item.bare_item)) {
            Some(seconds) => RateLimitPause {
                reset: Duration::from_secs(seconds),
                without_reset: false,
            },
            None => RateLimitPause {
                reset: Duration::ZERO,
                without_reset: true,
            },
        };
        let so_far = pause.get_or_insert_with(RateLimitPause::default);
        so_far.reset = so_far.reset.max(this.reset);
        so_far.without_reset |= this.without_reset;
    }
    pause
}

/// The reset of a `RateLimit` member with `r=0` whose `t` is a number too long for Structured
/// Fields (more than 15 integer digits): saturated, as [`saturating_seconds`] does. `None` for
/// any other member, which is ignored alone as before.
fn overlong_reset(member: &[u8]) -> Option<Duration> {
    let text = std::str::from_utf8(member).ok()?;
    let mut params = text.split(';').skip(1).map(str::trim);
    let (mut remaining, mut reset) = (None, None);
    for param in params.by_ref() {
        match param.split_once('=') {
            Some(("r", value)) => remaining = Some(value),
            Some(("t", value)) => reset = Some(value),
            _ => {}
        }
    }
    let (whole, fraction) = reset?.split_once('.').unwrap_or((reset?, ""));
    let overlong = whole.len() > 15 && fraction.bytes().all(|b| b.is_ascii_digit());
    (remaining == Some("0") && overlong).then(|| saturating_seconds(whole))?
}

/// The window `w` of the named policy in `RateLimit-Policy` (members read alone there too).
fn policy_window(headers: &HeaderMap, name: &sfv::BareItem) -> Option<u64> {
    for value in headers.get_all(&RATELIMIT_POLICY) {
        for member in list_members(value.as_bytes()) {
            let Ok(item) = sfv::Parser::new(member).parse::<sfv::Item>() else {
                continue;
            };
            if &item.bare_item == name
                && let Some(window) = item.params.iter().find(|(k, _)| k.as_str() == "w")
            {
                return whole_seconds(window.1);
            }
        }
    }
    None
}

/// A header's number of seconds (a decimal rounded up to whole seconds).
fn header_number(headers: &HeaderMap, name: &http::HeaderName) -> Option<u64> {
    let text = headers.get(name)?.to_str().ok()?.trim();
    // Some servers send a decimal: the whole seconds, rounded up.
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    if !fraction.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let whole = saturating_seconds(whole)?.as_secs();
    let up = fraction.bytes().any(|b| b != b'0');
    Some(whole.saturating_add(u64::from(up)))
}

/// A reset: seconds, or a Unix time when above 10^9 (compared with `now`).
fn reset_after(reset: u64, now: SystemTime) -> Duration {
    if reset > 1_000_000_000 {
        // A time too far to represent is as far as possible (callers cap it).
        return SystemTime::UNIX_EPOCH
            .checked_add(Duration::from_secs(reset))
            .map_or(Duration::MAX, |at| {
                at.duration_since(now).unwrap_or(Duration::ZERO)
            });
    }
    Duration::from_secs(reset)
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

    /// Issue 71: a reset too long for Structured Fields saturates instead of turning the pause
    /// off; a member that is malformed otherwise is still ignored alone.
    #[test]
    fn an_overlong_rate_limit_reset_saturates() {
        for value in [
            "\"b\";r=0;t=99999999999999999999",
            "\"b\";r=0;t=99999999999999999999.5",
            "\"a\";r=5;t=3, \"b\";r=0;t=1234567890123456789012",
        ] {
            let pause = rate_limit_pause(&headers(RATELIMIT.clone(), value)).expect(value);
            assert!(
                pause.reset > Duration::from_secs(1 << 40),
                "{value}: {pause:?}"
            );
        }
        // Something is left: no pause, however long the reset.
        assert_eq!(
            rate_limit_pause(&headers(
                RATELIMIT.clone(),
                "\"b\";r=1;t=99999999999999999999"
            )),
            None
        );
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
        let secs = |s| {
            Some(RateLimitPause {
                reset: Duration::from_secs(s),
                without_reset: false,
            })
        };
        let step = |s| {
            Some(RateLimitPause {
                reset: Duration::from_secs(s),
                without_reset: true,
            })
        };
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
        // Without `t` or a window: a back-off step, and the other members still count.
        assert_eq!(
            pause(&[("ratelimit", r#""burst";r=0;t=3, "day";r=0"#)]),
            step(3)
        );
        assert_eq!(pause(&[("ratelimit", r#""day";r=0"#)]), step(0));
        // A malformed member is ignored alone.
        assert_eq!(
            pause(&[("ratelimit", r#""burst";r=0;t=3, ;;bad"", "x";r=0;t=?3"#)]),
            secs(3)
        );
        assert_eq!(
            pause(&[("ratelimit", r#""a,b";r=0;t=4, "c\"d";r=0;t=5"#)]),
            secs(5)
        );
        // Decimal resets are rounded up, as in the other forms.
        assert_eq!(pause(&[("ratelimit", r#""burst";r=0;t=3.5"#)]), secs(4));
        assert_eq!(pause(&[("ratelimit", r#""burst";r=0;t=3.000"#)]), secs(3));
        // Unreadable fields say nothing; an unusable reset is no reset.
        assert_eq!(pause(&[("ratelimit", "r=0;;t=")]), None);
        assert_eq!(pause(&[("ratelimit", r#""x";r=0;t=-5"#)]), step(0));
        // The earlier drafts' single dictionary (up to revision 07).
        assert_eq!(
            pause(&[("ratelimit", "limit=1, remaining=0, reset=5")]),
            secs(5)
        );
        assert_eq!(
            pause(&[("ratelimit", "limit=1, remaining=1, reset=5")]),
            None
        );
        assert_eq!(pause(&[("ratelimit", "remaining=0, reset=2.5")]), secs(3));
        // Without a reset (or with a malformed one, ignored alone): the policy's window, the
        // one whose quota is the limit, else the longest; else a back-off step.
        assert_eq!(
            pause(&[
                ("ratelimit", "limit=1, remaining=0"),
                ("ratelimit-policy", "1;w=5")
            ]),
            secs(5)
        );
        assert_eq!(
            pause(&[
                ("ratelimit", "limit=10, remaining=0, reset=x"),
                ("ratelimit-policy", "10;w=1, 100;w=60")
            ]),
            secs(1)
        );
        assert_eq!(
            pause(&[
                ("ratelimit", "remaining=0, reset=-1"),
                ("ratelimit-policy", "10;w=1, 100;w=60")
            ]),
            secs(60)
        );
        assert_eq!(pause(&[("ratelimit", "limit=1, remaining=0")]), step(0));
        assert_eq!(
            pause(&[("ratelimit", "limit=1, ;;, remaining=0, reset=4")]),
            secs(4)
        );
        // Their separate fields.
        assert_eq!(
            pause(&[("ratelimit-remaining", "0"), ("ratelimit-reset", "7")]),
            secs(7)
        );
        assert_eq!(
            pause(&[
                ("ratelimit-limit", "100"),
                ("ratelimit-remaining", "0"),
                ("ratelimit-policy", "10;w=1, 100;w=60")
            ]),
            secs(60)
        );
        assert_eq!(pause(&[("ratelimit-remaining", "0")]), step(0));
        assert_eq!(
            pause(&[("ratelimit-remaining", "0"), ("ratelimit-reset", "1.5")]),
            secs(2)
        );
        // The common ones.
        assert_eq!(
            pause(&[("x-ratelimit-remaining", "0"), ("x-ratelimit-reset", "2")]),
            secs(2)
        );
        assert_eq!(
            pause(&[("x-ratelimit-remaining", "0"), ("x-ratelimit-reset", "1.2")]),
            secs(2)
        );
        assert_eq!(
            pause(&[("x-ratelimit-remaining", "0"), ("x-ratelimit-reset", "1.x")]),
            None
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
        // Hostile resets saturate instead of overflowing (a Unix time past what the clock holds).
        for reset in [
            "9223372036854775808",
            "18446744073709551615",
            "99999999999999999999999",
        ] {
            for (remaining, reset_name) in [
                ("x-ratelimit-remaining", "x-ratelimit-reset"),
                ("ratelimit-remaining", "ratelimit-reset"),
            ] {
                let found = pause(&[(remaining, "0"), (reset_name, reset)]).unwrap();
                assert!(
                    found.reset > Duration::from_secs(1 << 40),
                    "{reset}: {found:?}"
                );
            }
        }
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
