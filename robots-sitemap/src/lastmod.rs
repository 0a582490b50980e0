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
    fn ordered_by_the_moment() {
        let a = LastMod::parse("2024-01-01T10:00:00+02:00").unwrap();
        let b = LastMod::parse("2024-01-01T09:00:00Z").unwrap();
        assert!(a < b);
    }
}
