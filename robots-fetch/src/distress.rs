//! How long a server in distress is left alone (spec section 8, "slower when the server
//! struggles"): the back-off a streak of distress answers calls for, and how a `Retry-After`
//! lengthens it. The rule lives here, beside the headers it reads, so that every front end
//! applies the same one: robots-tower's pacers and the Python package's Scrapy middleware.

use std::time::Duration;

/// The statuses that say a server is in distress by default: "slow down" and the server errors
/// of an overloaded server (Google slows down on 429, 500 and 503; StormCrawler's default is
/// 429 and 503).
pub const DISTRESS_STATUSES: [u16; 5] = [429, 500, 502, 503, 504];

/// The exponential back-off for a server that answers with distress: `base` after the first
/// distress answer of a streak, doubled per answer after it, at most `max`.
///
/// ```
/// use std::time::Duration;
/// use robots_fetch::Backoff;
/// let backoff = Backoff::default(); // 5 s, doubled, at most 5 min
/// assert_eq!(backoff.pause(1), Duration::from_secs(5));
/// assert_eq!(backoff.pause(3), Duration::from_secs(20));
/// assert_eq!(backoff.pause(40), Duration::from_secs(300));
/// // A `Retry-After` may lengthen the pause, never shorten it; it is capped at `max_asked`.
/// let asked = Some(Duration::from_secs(60));
/// let pause = backoff.pause_after(1, asked, Duration::from_secs(600));
/// assert_eq!(pause, Duration::from_secs(60));
/// let zero = backoff.pause_after(1, Some(Duration::ZERO), Duration::from_secs(600));
/// assert!(zero >= Duration::from_millis(4500));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    /// The first pause of a streak (5 s).
    pub base: Duration,
    /// The longest pause the back-off gives (5 min).
    pub max: Duration,
}

impl Default for Backoff {
    fn default() -> Backoff {
        Backoff {
            base: Duration::from_secs(5),
            max: Duration::from_secs(300),
        }
    }
}

impl Backoff {
    /// The pause after `streak` consecutive distress answers (1 for the first), before jitter.
    /// Saturating: no streak overflows it.
    pub fn pause(&self, streak: u32) -> Duration {
        let factor = 2u32.saturating_pow(streak.saturating_sub(1).min(31));
        self.base.saturating_mul(factor).min(self.max)
    }

    /// [`Backoff::pause`] varied by up to -10%/+10% at random, so that servers paused together
    /// do not return together, and never above `max`.
    pub fn jittered(&self, streak: u32) -> Duration {
        jittered(self.pause(streak)).min(self.max)
    }

    /// The pause after the `streak`-th consecutive distress answer, which asked for `asked`
    /// (its `Retry-After`, if any): the jittered back-off, lengthened to what was asked, capped
    /// at `max_asked`, when that is longer. `Retry-After: 0` on a 503 still backs off.
    pub fn pause_after(
        &self,
        streak: u32,
        asked: Option<Duration>,
        max_asked: Duration,
    ) -> Duration {
        let backoff = self.jittered(streak);
        asked.map_or(backoff, |asked| asked.min(max_asked).max(backoff))
    }
}

/// `pause` varied by up to -10%/+10% at random (a pause too long to vary is kept as it is).
///
/// ```
/// use std::time::Duration;
/// let pause = robots_fetch::jittered(Duration::from_secs(10));
/// assert!(pause >= Duration::from_secs(9) && pause <= Duration::from_secs(11));
/// ```
pub fn jittered(pause: Duration) -> Duration {
    Duration::try_from_secs_f64(pause.as_secs_f64() * (0.9 + 0.2 * fastrand::f64()))
        .unwrap_or(pause)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_back_off_doubles_per_answer_up_to_its_maximum() {
        let backoff = Backoff {
            base: Duration::from_millis(400),
            max: Duration::from_secs(3),
        };
        let pauses: Vec<u128> = (0..7).map(|s| backoff.pause(s).as_millis()).collect();
        // A streak of 0 is treated as its first answer.
        assert_eq!(pauses, [400, 400, 800, 1600, 3000, 3000, 3000]);
        assert_eq!(backoff.pause(u32::MAX), Duration::from_secs(3));
        let huge = Backoff {
            base: Duration::MAX,
            max: Duration::MAX,
        };
        assert_eq!(huge.pause(9), Duration::MAX);
    }

    #[test]
    fn jitter_stays_within_ten_percent_and_under_the_maximum() {
        let backoff = Backoff::default();
        for streak in 1..12 {
            let exact = backoff.pause(streak).as_secs_f64();
            for _ in 0..50 {
                let pause = backoff.jittered(streak);
                let seconds = pause.as_secs_f64();
                assert!(seconds >= exact * 0.9 - 1e-9 && seconds <= exact * 1.1 + 1e-9);
                assert!(pause <= backoff.max);
            }
        }
    }

    #[test]
    fn a_retry_after_lengthens_the_pause_within_its_cap_never_shortens_it() {
        let backoff = Backoff::default();
        let cap = Duration::from_secs(600);
        let long = backoff.pause_after(1, Some(Duration::from_secs(120)), cap);
        assert_eq!(long, Duration::from_secs(120));
        let capped = backoff.pause_after(1, Some(Duration::from_secs(86_400)), cap);
        assert_eq!(capped, cap);
        let short = backoff.pause_after(3, Some(Duration::from_secs(1)), cap);
        assert!(short >= Duration::from_secs(18), "{short:?}");
        let none = backoff.pause_after(2, None, cap);
        assert!(none >= Duration::from_secs(9) && none <= Duration::from_secs(11));
    }
}
