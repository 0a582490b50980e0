//! `lastmod` as a W3C datetime (<https://www.w3.org/TR/NOTE-datetime>): a year, a month, a date,
//! or a date and a time (minutes, seconds, fractions) with a zone (`Z` or `±hh:mm`). Hand-written:
//! six shapes of fixed fields, where a date crate would bring a whole calendar for one parse.

use std::fmt;

/// A page's `lastmod` (or an Atom `<updated>`), read as a W3C datetime.
///
/// ```
/// use robots_sitemap::LastMod;
/// let day = LastMod::parse("2024-03-01").unwrap();
/// let time = LastMod::parse("2024-03-01T12:30:00+01:00").unwrap();
/// assert_eq!(time.unix_seconds() - day.unix_seconds(), 11 * 3600 + 30 * 60);
/// assert_eq!(time.as_str(), "2024-03-01T12:30:00+01:00");
/// assert!(LastMod::parse("yesterday").is_none());
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct LastMod {
    /// Seconds since 1970-01-01T00:00:00Z of the moment it names (its first moment, for a
    /// year, a month or a day, taken in UTC).
    unix: i64,
    text: Box<str>,
}

impl fmt::Debug for LastMod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "LastMod({})", self.text)
    }
}

impl fmt::Display for LastMod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl PartialOrd for LastMod {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for LastMod {
    /// By the moment named (then by text, so that equal moments written differently are
    /// ordered too).
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.unix
            .cmp(&other.unix)
            .then_with(|| self.text.cmp(&other.text))
    }
}

impl LastMod {
    /// Reads a W3C datetime (surrounding whitespace trimmed); `None` when it is not one.
    pub fn parse(text: &str) -> Option<LastMod> {
        let text = text.trim();
        let unix = parse_w3c(text.as_bytes())?;
        Some(LastMod {
            unix,
            text: text.into(),
        })
    }

    /// Reads an RSS `<pubDate>`: an RFC 822 / RFC 2822 date (`Mon, 06 Sep 2009 16:45:00 +0000`,
    /// the day name optional, seconds optional, a zone as `±hhmm`, `GMT`, `UT`, `Z` or a US
    /// zone name, a two-digit year as RFC 2822 reads it), or a W3C datetime, which some feeds
    /// write there; `None` when it is neither.
    ///
    /// ```
    /// use robots_sitemap::LastMod;
    /// let rss = LastMod::parse_feed_date("Mon, 06 Sep 2009 16:45:00 +0000").unwrap();
    /// assert_eq!(rss.unix_seconds(), LastMod::parse("2009-09-06T16:45:00Z").unwrap().unix_seconds());
    /// assert_eq!(rss.as_str(), "Mon, 06 Sep 2009 16:45:00 +0000");
    /// assert!(LastMod::parse_feed_date("6 Sep 2009 18:45 CEST").is_none()); // not an RFC 2822 zone
    /// ```
    pub fn parse_feed_date(text: &str) -> Option<LastMod> {
        let text = text.trim();
        let unix = parse_w3c(text.as_bytes()).or_else(|| parse_rfc2822(text))?;
        Some(LastMod {
            unix,
            text: text.into(),
        })
    }

    /// Seconds since 1970-01-01T00:00:00Z.
    pub fn unix_seconds(&self) -> i64 {
        self.unix
    }

    /// As written in the sitemap (trimmed).
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

/// `digits` ASCII digits at `at`, as a number.
fn number(bytes: &[u8], at: usize, digits: usize) -> Option<i64> {
    let field = bytes.get(at..at + digits)?;
    field.iter().try_fold(0i64, |n, b| {
        b.is_ascii_digit().then(|| n * 10 + i64::from(b - b'0'))
    })
}

/// Days from 1970-01-01 to a civil date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let yoe = year - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

fn parse_w3c(b: &[u8]) -> Option<i64> {
    let year = number(b, 0, 4)?;
    if b.len() == 4 {
        return Some(days_from_civil(year, 1, 1) * 86_400);
    }
    if b.get(4) != Some(&b'-') {
        return None;
    }
    let month = number(b, 5, 2).filter(|m| (1..=12).contains(m))?;
    if b.len() == 7 {
        return Some(days_from_civil(year, month, 1) * 86_400);
    }
    if b.get(7) != Some(&b'-') {
        return None;
    }
    let day = number(b, 8, 2).filter(|d| (1..=days_in_month(year, month)).contains(d))?;
    let date = days_from_civil(year, month, day) * 86_400;
    if b.len() == 10 {
        return Some(date);
    }
    if b.get(10) != Some(&b'T') {
        return None;
    }
    let hour = number(b, 11, 2).filter(|h| *h < 24)?;
    if b.get(13) != Some(&b':') {
        return None;
    }
    let minute = number(b, 14, 2).filter(|m| *m < 60)?;
    let mut at = 16;
    let mut second = 0;
    if b.get(at) == Some(&b':') {
        second = number(b, at + 1, 2).filter(|s| *s < 60)?;
        at += 3;
        if b.get(at) == Some(&b'.') {
            let digits = b[at + 1..]
                .iter()
                .take_while(|c| c.is_ascii_digit())
                .count();
            if digits == 0 {
                return None;
            }
            at += 1 + digits;
        }
    }
    // A time needs its zone.
    let offset = match b.get(at..)? {
        b"Z" => 0,
        [sign @ (b'+' | b'-'), ..] if b.len() == at + 6 && b.get(at + 3) == Some(&b':') => {
            let hours = number(b, at + 1, 2).filter(|h| *h <= 14)?;
            let minutes = number(b, at + 4, 2).filter(|m| *m < 60)?;
            let offset = hours * 3600 + minutes * 60;
            if *sign == b'+' { offset } else { -offset }
        }
        _ => return None,
    };
    Some(date + hour * 3600 + minute * 60 + second - offset)
}

/// An RFC 2822 date-time (section 3.3, with the obsolete forms of section 4.3 that feeds
/// still write: a two-digit year, the named zones): `[Day,] DD Mon YYYY HH:MM[:SS] ZONE`.
fn parse_rfc2822(text: &str) -> Option<i64> {
    let mut words = text.split_ascii_whitespace().peekable();
    // The day name, checked but not needed: the date says which day it is.
    if let Some(first) = words.peek()
        && first
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphabetic())
    {
        let name = first.strip_suffix(',').unwrap_or(first);
        const DAYS: [&str; 7] = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"];
        if !DAYS.iter().any(|d| d.eq_ignore_ascii_case(name)) {
            return None;
        }
        words.next();
    }
    let day: i64 = words.next()?.parse().ok()?;
    let month = words.next()?;
    const MONTHS: [&str; 12] = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ];
    let month = MONTHS.iter().position(|m| m.eq_ignore_ascii_case(month))? as i64 + 1;
    let year_text = words.next()?;
    let year: i64 = year_text.parse().ok()?;
    let year = match year_text.len() {
        2 if year < 50 => 2000 + year,
        2 | 3 => 1900 + year,
        4 => year,
        _ => return None,
    };
    if !(1..=days_in_month(year, month)).contains(&day) {
        return None;
    }
    let time = words.next()?.as_bytes();
    let hour = number(time, 0, 2).filter(|h| *h < 24)?;
    if time.get(2) != Some(&b':') {
        return None;
    }
    let minute = number(time, 3, 2).filter(|m| *m < 60)?;
    let second = match time.len() {
        5 => 0,
        8 if time[5] == b':' => number(time, 6, 2).filter(|s| *s <= 60)?,
        _ => return None,
    };
    let zone = words.next()?;
    if words.next().is_some() {
        return None;
    }
    let offset_hours = |h: i64| Some(h * 3600);
    let offset = match zone.to_ascii_uppercase().as_str() {
        "GMT" | "UT" | "UTC" | "Z" => Some(0),
        "EST" => offset_hours(-5),
        "EDT" => offset_hours(-4),
        "CST" => offset_hours(-6),
        "CDT" => offset_hours(-5),
        "MST" => offset_hours(-7),
        "MDT" => offset_hours(-6),
        "PST" => offset_hours(-8),
        "PDT" => offset_hours(-7),
        _ => {
            let b = zone.as_bytes();
            match b {
                [sign @ (b'+' | b'-'), ..] if b.len() == 5 => {
                    let hours = number(b, 1, 2).filter(|h| *h <= 14)?;
                    let minutes = number(b, 3, 2).filter(|m| *m < 60)?;
                    let offset = hours * 3600 + minutes * 60;
                    Some(if *sign == b'+' { offset } else { -offset })
                }
                _ => None,
            }
        }
    }?;
    let date = days_from_civil(year, month, day) * 86_400;
    Some(date + hour * 3600 + minute * 60 + second.min(59) - offset)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_w3c_shape() {
        let at = |t: &str| LastMod::parse(t).map(|l| l.unix_seconds());
        assert_eq!(at("1970"), Some(0));
        assert_eq!(at("1970-02"), Some(31 * 86_400));
        assert_eq!(at("2000-03-01"), Some(951_868_800));
        assert_eq!(at("2000-03-01T00:00Z"), Some(951_868_800));
        assert_eq!(at("2000-03-01T01:00:30+01:00"), Some(951_868_830));
        assert_eq!(
            at("2000-02-29T23:59:59.999-00:30"),
            Some(951_868_800 - 1 + 1800)
        );
        assert_eq!(at("  2000-03-01\n"), Some(951_868_800));
    }

    #[test]
    fn what_is_not_a_w3c_datetime() {
        for text in [
            "",
            "yesterday",
            "2001-02-29",
            "2000-13-01",
            "2000-01-32",
            "2000-1-01",
            "2000-01-01T10:00",
            "2000-01-01T24:00Z",
            "2000-01-01 10:00Z",
            "2000-01-01T10:00:00.Z",
            "2000-01-01T10:00+0100",
            "2000-01-01T10:00+15:00",
            "Mon, 06 Sep 2009 16:45:00 +0000",
            "２０２４",
        ] {
            assert!(LastMod::parse(text).is_none(), "{text}");
        }
    }

    #[test]
    fn rss_dates() {
        let at = |t: &str| LastMod::parse_feed_date(t).map(|l| l.unix_seconds());
        let w3c = |t: &str| LastMod::parse(t).map(|l| l.unix_seconds());
        assert_eq!(
            at("Mon, 06 Sep 2009 16:45:00 +0000"),
            w3c("2009-09-06T16:45:00Z")
        );
        assert_eq!(at("6 Sep 2009 16:45 GMT"), w3c("2009-09-06T16:45:00Z"));
        assert_eq!(
            at("Sun, 19 May 02 15:21:36 -0500"),
            w3c("2002-05-19T15:21:36-05:00")
        );
        assert_eq!(
            at("Tue, 10 Jun 2003 04:00:00 EDT"),
            w3c("2003-06-10T08:00:00Z")
        );
        assert_eq!(
            at("Tue, 10 Jun 2003 09:41:01 PST"),
            w3c("2003-06-10T17:41:01Z")
        );
        // A W3C datetime in a pubDate (some feeds) counts too.
        assert_eq!(at("2024-03-01"), w3c("2024-03-01"));
        for bad in [
            "",
            "yesterday",
            "Mon, 31 Feb 2009 16:45:00 +0000",
            "Foo, 06 Sep 2009 16:45:00 +0000",
            "Mon, 06 Sept 2009 16:45:00 +0000",
            "Mon, 06 Sep 2009 25:45:00 +0000",
            "Mon, 06 Sep 2009 16:45:00 +00",
            "Mon, 06 Sep 2009 16:45:00 +0000 extra",
            "Mon, 06 Sep 2009 16:45:00",
        ] {
            assert!(LastMod::parse_feed_date(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn ordered_by_the_moment() {
        let a = LastMod::parse("2024-01-01T10:00:00+02:00").unwrap();
        let b = LastMod::parse("2024-01-01T09:00:00Z").unwrap();
        assert!(a < b);
    }
}
