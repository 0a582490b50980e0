//! Durations and instants as people read them: `2 min`, `1.5 s`, `fetched 3 s ago`.

use std::fmt;
use std::time::Duration;

/// A duration for people: `250 ms`, `1.5 s`, `2 min`, `1 h 30 min`, `3 d 4 h` (rounded to what
/// matters at that size).
///
/// ```
/// use std::time::Duration;
/// use robots_fetch::HumanDuration;
/// assert_eq!(HumanDuration(Duration::from_secs_f64(119.99996)).to_string(), "2 min");
/// assert_eq!(HumanDuration(Duration::from_millis(1500)).to_string(), "1.5 s");
/// assert_eq!(HumanDuration(Duration::from_secs(5400)).to_string(), "1 h 30 min");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HumanDuration(pub Duration);

impl fmt::Display for HumanDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = self.0;
        if d < Duration::from_secs(1) {
            return write!(f, "{} ms", d.as_millis());
        }
        if d < Duration::from_secs(10) {
            let tenths = (d.as_millis() + 50) / 100;
            return if tenths.is_multiple_of(10) {
                write!(f, "{} s", tenths / 10)
            } else {
                write!(f, "{}.{} s", tenths / 10, tenths % 10)
            };
        }
        // Whole seconds from here, rounded to the nearest.
        let secs = (d.as_millis() + 500) / 1000;
        let (days, hours, mins, s) = (secs / 86_400, secs / 3600 % 24, secs / 60 % 60, secs % 60);
        let parts: Vec<String> = if days > 0 {
            vec![format!("{days} d"), format!("{hours} h")]
        } else if hours > 0 {
            vec![format!("{hours} h"), format!("{mins} min")]
        } else if mins > 0 {
            vec![format!("{mins} min"), format!("{s} s")]
        } else {
            vec![format!("{s} s")]
        };
        let shown: Vec<&String> = parts
            .iter()
            .enumerate()
            .filter(|(i, p)| *i == 0 || !p.starts_with("0 "))
            .map(|(_, p)| p)
            .collect();
        let text: Vec<&str> = shown.iter().map(|p| p.as_str()).collect();
        f.write_str(&text.join(" "))
    }
}

/// An instant relative to now: `3 s ago`, `in 23 h 59 min`, `now` (tokio's clock, as the cache's).
#[cfg(feature = "client")]
#[derive(Debug, Clone, Copy)]
pub(crate) struct Relative(pub(crate) tokio::time::Instant);

#[cfg(feature = "client")]
impl fmt::Display for Relative {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let now = tokio::time::Instant::now();
        if self.0 > now {
            write!(f, "in {}", HumanDuration(self.0 - now))
        } else if now - self.0 < Duration::from_millis(1) {
            f.write_str("now")
        } else {
            write!(f, "{} ago", HumanDuration(now - self.0))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_well() {
        let h = |secs: f64| HumanDuration(Duration::from_secs_f64(secs)).to_string();
        assert_eq!(h(0.0), "0 ms");
        assert_eq!(h(0.25), "250 ms");
        assert_eq!(h(1.0), "1 s");
        assert_eq!(h(9.96), "10 s");
        assert_eq!(h(59.6), "1 min");
        assert_eq!(h(90.0), "1 min 30 s");
        assert_eq!(h(3600.0), "1 h");
        assert_eq!(h(86_400.0 * 30.0), "30 d");
        assert_eq!(h(86_400.0 + 7200.0), "1 d 2 h");
        assert!(HumanDuration(Duration::MAX).to_string().ends_with(" h"));
    }
}
