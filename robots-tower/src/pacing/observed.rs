//! What a request's end teaches pacing (`Observed`: how it ended, what its headers asked), and
//! the pause a group is put under (`GroupPause`).

use std::time::Duration;

use crate::pacing::rules::{Outcome, PolitenessConfig};

/// What a request's end teaches: how it ended, and what its headers asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Observed {
    pub(crate) outcome: Outcome,
    /// `Retry-After` (read on distress only), as the server sent it (capped where applied).
    pub(crate) retry_after: Option<Duration>,
    /// The rate-limit headers' reset, when they said nothing is left.
    pub(crate) rate_limited: Option<Duration>,
    /// The rate-limit headers said nothing is left without saying until when: a back-off step.
    pub(crate) rate_limit_step: bool,
}

impl Observed {
    /// A response's status and headers, as `config` reads them.
    pub(crate) fn response(
        status: u16,
        headers: &http::HeaderMap,
        config: &PolitenessConfig,
    ) -> Observed {
        // `Retry-After` matters only for a distress status: not looked up on the usual 200.
        let distress = config.backoff_statuses.contains(status);
        let limited = config
            .rate_limit_headers
            .then(|| robots_fetch::rate_limit_pause(headers))
            .flatten();
        Observed {
            outcome: Outcome::Status(status),
            retry_after: distress
                .then(|| robots_fetch::retry_after(headers))
                .flatten(),
            rate_limited: limited.map(|l| l.reset).filter(|r| !r.is_zero()),
            rate_limit_step: limited.is_some_and(|l| l.without_reset),
        }
    }

    /// A request that failed before its response head.
    pub(crate) fn failure(outcome: Outcome) -> Observed {
        Observed {
            outcome,
            retry_after: None,
            rate_limited: None,
            rate_limit_step: false,
        }
    }

    /// Whether it backs the group off a step: a distress response or failure, or rate-limit
    /// headers that said "stop" without "until".
    pub(crate) fn backs_off(&self, config: &PolitenessConfig) -> bool {
        config.is_distress(self.outcome) || self.rate_limit_step
    }

    /// What it teaches the group, decided here once for both pacers (the in-process one
    /// applies it to its ledger; the fleet's release script, to the group's state in Redis,
    /// atomically). `took`: how long the request took, when it was measured (to its response
    /// head, or to the end of its body).
    pub(crate) fn lesson(&self, config: &PolitenessConfig, took: Option<Duration>) -> Lesson {
        let backs_off = self.backs_off(config);
        let answered = matches!(self.outcome, Outcome::Status(_));
        Lesson {
            backs_off,
            // `Retry-After` counts on distress only, and only ever lengthens the back-off.
            retry_after: self
                .retry_after
                .filter(|_| config.is_distress(self.outcome)),
            // Any other response ends the streak (a failure that is not distress teaches
            // nothing).
            ends_streak: !backs_off && answered,
            rate_limited: self.rate_limited,
            // The adaptive delay needs one request at a time, and a factor.
            adaptive: took
                .filter(|_| config.delay_factor > 0.0 && config.one_at_a_time())
                .map(|took| config.adaptive(took)),
        }
    }
}

/// What a request's end teaches its group ([`Observed::lesson`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Lesson {
    /// Back off a step: the streak grows, and the group pauses for the back-off it calls for.
    pub(crate) backs_off: bool,
    /// The pause a distress response asked for, to lengthen the back-off (uncapped here).
    pub(crate) retry_after: Option<Duration>,
    /// The streak and any pause end.
    pub(crate) ends_streak: bool,
    /// Pause until the rate limit's reset (uncapped here).
    pub(crate) rate_limited: Option<Duration>,
    /// The adaptive delay, as measured now.
    pub(crate) adaptive: Option<Duration>,
}

impl Lesson {
    /// Whether it pauses the group (what every process must know before the caller sees the
    /// response).
    #[cfg(feature = "redis")]
    pub(crate) fn pauses(&self) -> bool {
        self.backs_off || self.retry_after.is_some() || self.rate_limited.is_some()
    }
}

/// A pause of a group, and why: what [`crate::RobotsInfo::pause`] reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupPause {
    /// How long the group is paused from the response on.
    pub duration: Duration,
    /// Why.
    pub reason: PauseReason,
}

/// Why a group was paused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum PauseReason {
    /// A distress response with `Retry-After` (capped at the maximum).
    RetryAfter,
    /// A distress response (or network error) without `Retry-After`: the exponential back-off,
    /// after this many in a row.
    Backoff {
        /// Consecutive distress responses so far.
        failures: u32,
    },
    /// Rate-limit headers said nothing is left: until their reset (capped at the maximum).
    RateLimit,
}

impl PauseReason {
    /// `retry-after`, `backoff`, `rate-limit`.
    pub fn as_str(self) -> &'static str {
        match self {
            PauseReason::RetryAfter => "retry-after",
            PauseReason::Backoff { .. } => "backoff",
            PauseReason::RateLimit => "rate-limit",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn observed(outcome: Outcome, retry_after: Option<u64>) -> Observed {
        Observed {
            outcome,
            retry_after: retry_after.map(Duration::from_secs),
            rate_limited: None,
            rate_limit_step: false,
        }
    }

    #[test]
    fn one_lesson_for_both_pacers() {
        let mut config = PolitenessConfig {
            delay_factor: 1.0,
            ..PolitenessConfig::default()
        };
        let took = Some(Duration::from_millis(300));
        // A 503 backs off, with its Retry-After.
        let lesson = observed(Outcome::Status(503), Some(7)).lesson(&config, took);
        assert!(lesson.backs_off && !lesson.ends_streak);
        assert_eq!(lesson.retry_after, Some(Duration::from_secs(7)));
        // A 200 ends the streak; a Retry-After on it counts for nothing.
        let lesson = observed(Outcome::Status(200), Some(7)).lesson(&config, took);
        assert!(!lesson.backs_off && lesson.ends_streak);
        assert_eq!(lesson.retry_after, None);
        assert_eq!(lesson.adaptive, Some(Duration::from_millis(300)));
        // A cancelled request teaches nothing.
        let lesson = observed(Outcome::Cancelled, None).lesson(&config, None);
        assert!(!lesson.backs_off && !lesson.ends_streak && lesson.adaptive.is_none());
        // Several requests at a time: no adaptive delay.
        config.concurrency = 2;
        let lesson = observed(Outcome::Status(200), None).lesson(&config, took);
        assert_eq!(lesson.adaptive, None);
        // Rate-limit headers that said "stop" without "until" are a back-off step.
        let step = Observed {
            rate_limit_step: true,
            ..observed(Outcome::Status(200), None)
        };
        assert!(step.lesson(&config, None).backs_off);
    }
}
