//! Crawl-delay and Request-rate values (spec section 6).

use std::time::Duration;

/// Parses a Crawl-delay value: seconds, decimals allowed (`10`, `0.5`, `.5`). Signs, exponents,
/// units and anything else make it invalid (`None`). A number too large for a `Duration` asks
/// for as long as possible: it saturates to [`Duration::MAX`] (a crawler then clamps it to its
/// maximum), so asking for more delay never means crawling faster.
///
/// ```
/// use std::time::Duration;
/// use robots_core::parse_crawl_delay;
/// assert_eq!(parse_crawl_delay(b"0.5"), Some(Duration::from_millis(500)));
/// assert_eq!(parse_crawl_delay(b"99999999999999999999"), Some(Duration::MAX));
/// assert_eq!(parse_crawl_delay(b"-1"), None);
/// ```
pub fn parse_crawl_delay(value: &[u8]) -> Option<Duration> {
    let text = std::str::from_utf8(value).ok()?;
    let (int, frac) = text.split_once('.').unwrap_or((text, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if !digits(int) || !digits(frac) || (int.is_empty() && frac.is_empty()) {
        return None;
    }
    // Only digits and one dot are left, so this parses; very long numbers become infinity.
    let seconds: f64 = text.parse().ok()?;
    Some(Duration::try_from_secs_f64(seconds).unwrap_or(Duration::MAX))
}

/// A `Request-rate: n/t` value: at most `requests` requests per `per`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct RequestRate {
    /// How many requests…
    pub requests: u32,
    /// …per this much time.
    pub per: Duration,
}

impl RequestRate {
    /// The interval between request starts that the rate implies (`per / requests`).
    pub fn interval(&self) -> Duration {
        self.per / self.requests
    }

    /// Parses `n/t[s|m|h]` (`1/10s`, `3/1m`, `1/5`: seconds when no unit). A visit-time window
    /// after whitespace (`1/10s 0600-0845`) is ignored. Zero requests or time is invalid.
    /// Numbers too large to represent saturate (a huge `t` asks for as long as possible).
    ///
    /// ```
    /// use std::time::Duration;
    /// use robots_core::RequestRate;
    /// let rate = RequestRate::parse(b"1/10s").unwrap();
    /// assert_eq!(rate.interval(), Duration::from_secs(10));
    /// assert_eq!(RequestRate::parse(b"1/0"), None);
    /// ```
    pub fn parse(value: &[u8]) -> Option<RequestRate> {
        let text = std::str::from_utf8(value).ok()?;
        let rate = text.split_whitespace().next()?;
        let (n, t) = rate.split_once('/')?;
        let (t, unit) = match t.as_bytes().last()? {
            b's' | b'S' => (&t[..t.len() - 1], 1),
            b'm' | b'M' => (&t[..t.len() - 1], 60),
            b'h' | b'H' => (&t[..t.len() - 1], 3600),
            _ => (t, 1),
        };
        let requests = u32::try_from(parse_positive(n)?).unwrap_or(u32::MAX);
        let per = parse_positive(t)?;
        Some(RequestRate {
            requests,
            per: Duration::from_secs(per.saturating_mul(unit)),
        })
    }
}

/// A positive decimal number; digits beyond `u64` saturate to `u64::MAX`.
fn parse_positive(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let value = s.bytes().fold(0u64, |acc, b| {
        acc.saturating_mul(10).saturating_add(u64::from(b - b'0'))
    });
    (value != 0).then_some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crawl_delays() {
        assert_eq!(parse_crawl_delay(b"10"), Some(Duration::from_secs(10)));
        assert_eq!(parse_crawl_delay(b"0.5"), Some(Duration::from_millis(500)));
        assert_eq!(parse_crawl_delay(b".25"), Some(Duration::from_millis(250)));
        assert_eq!(parse_crawl_delay(b"2."), Some(Duration::from_secs(2)));
        assert_eq!(parse_crawl_delay(b"0"), Some(Duration::ZERO));
        for bad in [
            &b""[..],
            b".",
            b"-1",
            b"+1",
            b"1e3",
            b"ten",
            b"1 s",
            b"inf",
            b"NaN",
            b"1.2.3",
            b"\xFF",
        ] {
            assert_eq!(
                parse_crawl_delay(bad),
                None,
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
        // Too large to represent: as long as possible, never "invalid".
        assert_eq!(
            parse_crawl_delay("9".repeat(400).as_bytes()),
            Some(Duration::MAX)
        );
        assert_eq!(
            parse_crawl_delay(b"99999999999999999999"),
            Some(Duration::MAX)
        );
        assert_eq!(
            parse_crawl_delay(b"18446744073709551616.5"),
            Some(Duration::MAX)
        );
    }

    #[test]
    fn request_rates() {
        let rate = |s: &str| RequestRate::parse(s.as_bytes());
        assert_eq!(
            rate("1/10s").map(|r| r.interval()),
            Some(Duration::from_secs(10))
        );
        assert_eq!(
            rate("3/1m").map(|r| (r.requests, r.per)),
            Some((3, Duration::from_secs(60)))
        );
        assert_eq!(rate("1/1h").map(|r| r.per), Some(Duration::from_secs(3600)));
        assert_eq!(rate("1/5").map(|r| r.per), Some(Duration::from_secs(5)));
        assert_eq!(
            rate("1/10s 0600-0845").map(|r| r.per),
            Some(Duration::from_secs(10))
        );
        assert_eq!(
            rate("2/1s").map(|r| r.interval()),
            Some(Duration::from_millis(500))
        );
        for bad in [
            "",
            "1",
            "0/5s",
            "1/0s",
            "a/5",
            "1/x",
            "-1/5",
            "0/99999999999999999999h",
        ] {
            assert_eq!(rate(bad), None, "{bad}");
        }
        // Too large to represent: saturated, never ignored.
        assert_eq!(
            rate("1/99999999999999999999h").map(|r| r.interval()),
            Some(Duration::from_secs(u64::MAX))
        );
        assert_eq!(
            rate("99999999999999/1s").map(|r| r.requests),
            Some(u32::MAX)
        );
    }
}
