//! The cache's rules for one origin without a clock (spec section 7): given what was kept and a
//! retrieval's outcome, whose rules apply next, how long until the next retrieval, and the
//! failures in a row. The robots.txt cache (`RobotsCache`, feature `client`) applies them to its
//! entries; a client with its own cache (the Python package's Scrapy middleware) applies the same
//! ones, without the crate's HTTP client.

use std::time::Duration;

use crate::outcome::{FetchOutcome, UnreachableCause};

mod config;
mod hold;

pub use config::CacheConfig;
pub use hold::{DEFAULT_HOLD_UNREACHABLE, MOST_UNREACHABLE_TRIES, waits_for_robots};

/// What an origin's entry held before a retrieval, as [`CacheConfig::next`] needs it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Kept {
    /// The copy held.
    pub copy: KeptCopy,
    /// Unreachable outcomes in a row so far (0 after any answer).
    pub failures: u32,
    /// How long the origin has been unreachable, from its first failure in a row, when it is.
    pub unreachable_for: Option<Duration>,
    /// The copy's own `Cache-Control: max-age`, which a bare `304` keeps.
    pub max_age: Option<Duration>,
}

impl Kept {
    /// What is held after `outcome`, which [`CacheConfig::next`] decided as `next`: the `kept`
    /// to give it at the next retrieval (after [`Kept::aged`] by the time between them).
    pub fn after(self, outcome: &FetchOutcome, next: &Next) -> Kept {
        let (copy, max_age) = match (next.rules, outcome) {
            (NextRules::Parsed, FetchOutcome::Parsed { max_age, .. }) => {
                (KeptCopy::Parsed, *max_age)
            }
            (NextRules::Kept, FetchOutcome::NotModified { validators, .. }) => {
                (self.copy, validators.max_age.or(self.max_age))
            }
            (NextRules::Kept, _) => (self.copy, self.max_age),
            (_, FetchOutcome::Unavailable { .. }) => (KeptCopy::Answer, None),
            _ => (KeptCopy::None, None),
        };
        Kept {
            copy,
            failures: next.failures,
            unreachable_for: next.unreachable_for,
            max_age,
        }
    }

    /// This state `elapsed` later: an outage has lasted that much longer.
    pub fn aged(self, elapsed: Duration) -> Kept {
        Kept {
            unreachable_for: self
                .unreachable_for
                .map(|outage| outage.saturating_add(elapsed)),
            ..self
        }
    }
}

/// The copy an entry holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum KeptCopy {
    /// None yet, or only unreachable answers.
    #[default]
    None,
    /// A parsed robots.txt (a `304` can confirm it).
    Parsed,
    /// Another good answer: a 4xx's allow all (or disallow all for 401/403 when so configured).
    Answer,
}

/// What an origin's entry holds after a retrieval: [`CacheConfig::next`]'s answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Next {
    /// Whose rules apply now.
    pub rules: NextRules,
    /// How long until the next retrieval: the copy's life, or the wait before a retry.
    pub lives_for: Duration,
    /// Unreachable outcomes in a row, this one included.
    pub failures: u32,
    /// How long the origin has been unreachable (zero at a first failure), when it is.
    pub unreachable_for: Option<Duration>,
    /// A `Retry-After` above [`CacheConfig::retry_after_max`], as asked, when it was clamped.
    pub retry_after_clamped: Option<Duration>,
}

/// Whose rules apply after a retrieval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NextRules {
    /// The body just fetched, parsed.
    Parsed,
    /// The copy held before (confirmed by a `304`, or kept while the origin is unreachable).
    Kept,
    /// Everything is allowed (a 4xx, or unreachable with no copy for `give_up_after`).
    AllowAll,
    /// Nothing is allowed (unreachable with no copy, or 401/403 when so configured).
    DisallowAll,
}

impl NextRules {
    /// A short stable name: `parsed`, `kept`, `allow_all`, `disallow_all`.
    pub fn as_str(self) -> &'static str {
        match self {
            NextRules::Parsed => "parsed",
            NextRules::Kept => "kept",
            NextRules::AllowAll => "allow_all",
            NextRules::DisallowAll => "disallow_all",
        }
    }
}

impl CacheConfig {
    /// What an origin's entry holds after `outcome`, given what it held before (`kept`):
    /// spec section 7's table and this configuration's lifetimes. No clock is read; durations
    /// run from the outcome.
    ///
    /// ```
    /// use std::time::Duration;
    /// use robots_fetch::{CacheConfig, FetchOutcome, Kept, KeptCopy, NextRules, UnreachableCause};
    /// let config = CacheConfig::default();
    /// let down = FetchOutcome::Unreachable(UnreachableCause::Status { status: 503, retry_after: None });
    /// // No copy yet: nothing is allowed, and the first retry is 10 s away (a minute after a
    /// // network failure), the next a minute after that.
    /// let next = config.next(Kept::default(), &down);
    /// assert_eq!((next.rules, next.lives_for), (NextRules::DisallowAll, Duration::from_secs(10)));
    /// let again = config.next(Kept { failures: next.failures, ..Kept::default() }, &down);
    /// assert_eq!(again.lives_for, Duration::from_secs(60));
    /// // With a parsed copy, it goes on being used.
    /// let kept = Kept { copy: KeptCopy::Parsed, ..Kept::default() };
    /// assert_eq!(config.next(kept, &down).rules, NextRules::Kept);
    /// ```
    pub fn next(&self, kept: Kept, outcome: &FetchOutcome) -> Next {
        let good = |rules, lives_for| Next {
            rules,
            lives_for,
            failures: 0,
            unreachable_for: None,
            retry_after_clamped: None,
        };
        match outcome {
            FetchOutcome::Parsed { max_age, .. } => good(NextRules::Parsed, self.life(*max_age)),
            // A 304 confirms the parsed copy asked about; about a copy not held, it is a
            // malformed answer.
            FetchOutcome::NotModified { validators, .. } if kept.copy == KeptCopy::Parsed => good(
                NextRules::Kept,
                self.life(validators.max_age.or(kept.max_age)),
            ),
            FetchOutcome::NotModified { .. } => self.unreachable(
                kept,
                &UnreachableCause::Status {
                    status: 304,
                    retry_after: None,
                },
            ),
            FetchOutcome::Unavailable { status, .. } => {
                let rules = if self.auth_errors_disallow && matches!(status, 401 | 403) {
                    NextRules::DisallowAll
                } else {
                    NextRules::AllowAll
                };
                good(rules, self.default_ttl)
            }
            FetchOutcome::Unreachable(cause) => self.unreachable(kept, cause),
        }
    }

    /// A good copy's life: its `max-age` within the bounds, else the default.
    fn life(&self, max_age: Option<Duration>) -> Duration {
        max_age
            .unwrap_or(self.default_ttl)
            .clamp(self.min_ttl, self.max_ttl)
    }

    fn unreachable(&self, kept: Kept, cause: &UnreachableCause) -> Next {
        let failures = kept.failures.saturating_add(1);
        let asked = cause.retry_after();
        let lives_for = match asked {
            Some(asked) => asked.clamp(self.retry_floor, self.retry_after_max),
            // A server that answered gets an early first retry, then the usual back-off.
            None if cause.status().is_some() => match failures {
                1 => self.status_retry_first.min(backoff(self, 1)),
                _ => backoff(self, failures - 1),
            },
            None => backoff(self, failures),
        };
        let unreachable_for = kept.unreachable_for.unwrap_or_default();
        let rules = match kept.copy {
            KeptCopy::Parsed | KeptCopy::Answer => NextRules::Kept,
            KeptCopy::None if unreachable_for >= self.give_up_after => NextRules::AllowAll,
            KeptCopy::None => NextRules::DisallowAll,
        };
        Next {
            rules,
            lives_for,
            failures,
            unreachable_for: Some(unreachable_for),
            retry_after_clamped: asked.filter(|asked| *asked > self.retry_after_max),
        }
    }
}

/// `retry_base × 2^(failures − 1)`, at most `retry_max`.
fn backoff(config: &CacheConfig, failures: u32) -> Duration {
    let factor = 2u32.saturating_pow(failures.saturating_sub(1).min(31));
    config
        .retry_base
        .saturating_mul(factor)
        .min(config.retry_max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        let config = CacheConfig::default();
        let secs: Vec<u64> = (1..=9).map(|n| backoff(&config, n).as_secs()).collect();
        assert_eq!(secs, [60, 120, 240, 480, 960, 1920, 3600, 3600, 3600]);
        assert_eq!(backoff(&config, u32::MAX), config.retry_max);
    }

    /// A 429 or 5xx without `Retry-After` is tried again after 10 s, then 1, 2, 4 minutes…; a
    /// network failure after 1, 2, 4 minutes; a `Retry-After` as it asks.
    #[test]
    fn an_answered_failure_is_retried_early_once_then_backs_off() {
        let config = CacheConfig::default();
        let schedule = |cause: UnreachableCause| {
            let mut kept = Kept::default();
            let mut secs = Vec::new();
            for _ in 0..4 {
                let next = config.next(kept, &FetchOutcome::Unreachable(cause.clone()));
                secs.push(next.lives_for.as_secs());
                kept = Kept {
                    failures: next.failures,
                    unreachable_for: next.unreachable_for,
                    ..Kept::default()
                };
            }
            secs
        };
        let status = |retry_after| UnreachableCause::Status {
            status: 503,
            retry_after,
        };
        assert_eq!(schedule(status(None)), [10, 60, 120, 240]);
        assert_eq!(
            schedule(status(Some(Duration::from_secs(30)))),
            [30, 30, 30, 30]
        );
        let refused = UnreachableCause::Network(crate::NetworkError {
            kind: crate::NetworkErrorKind::Connect,
            message: "connection refused".into(),
        });
        assert_eq!(schedule(refused), [60, 120, 240, 480]);
    }

    #[test]
    fn with_no_copy_for_30_days_everything_is_allowed() {
        let config = CacheConfig::default();
        let down = FetchOutcome::Unreachable(UnreachableCause::Status {
            status: 500,
            retry_after: Some(Duration::from_secs(7 * 24 * 3600)),
        });
        let almost = Kept {
            failures: 40,
            unreachable_for: Some(config.give_up_after - Duration::from_secs(1)),
            ..Kept::default()
        };
        let next = config.next(almost, &down);
        assert_eq!(next.rules, NextRules::DisallowAll);
        assert_eq!(next.lives_for, config.retry_after_max);
        assert_eq!(
            next.retry_after_clamped,
            Some(Duration::from_secs(7 * 24 * 3600))
        );
        let over = Kept {
            unreachable_for: Some(config.give_up_after),
            ..almost
        };
        assert_eq!(config.next(over, &down).rules, NextRules::AllowAll);
    }
}
