//! The rules of pacing, as plain settings and pure functions: where an interval is measured
//! from, what an overlong Crawl-delay gets, the back-off, the adaptive delay, the statuses that
//! count as distress, and the longest interval honoured.

use std::time::Duration;

use crate::pacing::group::PolitenessKey;

/// Where the interval between two requests to one origin is measured from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Spacing {
    /// From the previous request's start, and also from its end (its body's last byte) when one
    /// request is in flight per origin: a server that takes 3 s to answer still gets the whole
    /// interval of quiet before the next request (as Yandex defines Crawl-delay). The default.
    #[default]
    FromEnd,
    /// From the previous request's start only: a slow server may get the next request as soon
    /// as it answers.
    StartToStart,
}

/// What to do with a `Crawl-delay` or `Request-rate` above the maximum delay
/// ([`crate::RobotsConfig::max_delay`]): nothing crawls faster than a site asked unless the
/// caller chose so by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum OverlongCrawlDelay {
    /// Refuse the origin's requests with [`crate::RobotsError::CrawlDelayTooLong`] (as Nutch and
    /// StormCrawler skip such hosts). The default.
    #[default]
    Refuse,
    /// Wait the whole delay the site asked (in schedule mode, the refusal says when).
    Honour,
    /// Crawl at the maximum delay, faster than the site asked (logged once per origin).
    Clamp,
}

impl OverlongCrawlDelay {
    /// The name used on the command line: `refuse`, `honor`, `clamp`.
    pub fn as_str(self) -> &'static str {
        match self {
            OverlongCrawlDelay::Refuse => "refuse",
            OverlongCrawlDelay::Honour => "honor",
            OverlongCrawlDelay::Clamp => "clamp",
        }
    }
}

impl std::str::FromStr for OverlongCrawlDelay {
    type Err = String;

    /// `refuse`, `honor` (or `honour`), `clamp`.
    fn from_str(text: &str) -> Result<OverlongCrawlDelay, String> {
        match text {
            "refuse" => Ok(OverlongCrawlDelay::Refuse),
            "honor" | "honour" => Ok(OverlongCrawlDelay::Honour),
            "clamp" => Ok(OverlongCrawlDelay::Clamp),
            other => Err(format!(
                "unknown overlong Crawl-delay policy `{other}` (expected refuse, honor or clamp)"
            )),
        }
    }
}

/// The politeness numbers. Defaults are polite: 1 request at a time, 1 s apart, at most 30 s.
#[derive(Debug, Clone)]
pub(crate) struct PolitenessConfig {
    /// What requests share a budget ([`PolitenessKey::Host`]).
    pub key: PolitenessKey,
    /// Minimum interval between request starts to one group (1 s).
    pub min_delay: Duration,
    /// Crawl-delay and Request-rate raise the interval up to this (30 s); more is handled by
    /// `overlong`.
    pub max_delay: Duration,
    /// A Crawl-delay above `max_delay` ([`OverlongCrawlDelay::Refuse`]).
    pub overlong: OverlongCrawlDelay,
    /// Honour Crawl-delay and Request-rate (true).
    pub obey_crawl_delay: bool,
    /// Requests in flight per group (1).
    pub concurrency: usize,
    /// A `Retry-After`, or a rate-limit reset, pauses the group at most this long (10 min).
    pub max_retry_after: Duration,
    /// Without `Retry-After`, the first pause (5 s), doubled per consecutive distress…
    pub backoff_base: Duration,
    /// …up to this (5 min).
    pub backoff_max: Duration,
    /// The statuses that pause the group (429, 500, 502, 503, 504).
    pub backoff_statuses: StatusSet,
    /// Whether connect errors, resets and timeouts pause the group (true).
    pub backoff_on_network_errors: bool,
    /// With one request in flight, the interval after a response is at least this × the time
    /// the server took to answer, up to `max_delay` (1; 0 turns it off).
    pub delay_factor: f64,
    /// Where the interval is measured from ([`Spacing::FromEnd`]).
    pub spacing: Spacing,
    /// Whether rate-limit headers that say nothing is left pause the group (true).
    pub rate_limit_headers: bool,
    /// How long a waiting request lets an answered request's unread body hold a place before
    /// taking it over (30 s).
    pub unread_body_grace: Duration,
}

/// A set of HTTP statuses (100-599) as bits: read on every response, so a lookup is one shift.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct StatusSet([u64; 10]);

impl StatusSet {
    pub(crate) fn of(statuses: impl IntoIterator<Item = u16>) -> StatusSet {
        let mut set = StatusSet::default();
        for status in statuses {
            if let Some(word) = set.0.get_mut(usize::from(status / 64)) {
                *word |= 1 << (status % 64);
            }
        }
        set
    }

    #[inline]
    pub(crate) fn contains(&self, status: u16) -> bool {
        self.0
            .get(usize::from(status / 64))
            .is_some_and(|word| word >> (status % 64) & 1 == 1)
    }
}

/// The statuses that pause a group by default: "slow down" and the server errors of an
/// overloaded server.
pub(crate) const DEFAULT_BACKOFF_STATUSES: [u16; 5] = robots_fetch::DISTRESS_STATUSES;

impl Default for PolitenessConfig {
    fn default() -> PolitenessConfig {
        PolitenessConfig {
            key: PolitenessKey::Host,
            min_delay: Duration::from_secs(1),
            max_delay: Duration::from_secs(30),
            overlong: OverlongCrawlDelay::Refuse,
            obey_crawl_delay: true,
            concurrency: 1,
            max_retry_after: Duration::from_secs(600),
            backoff_base: Duration::from_secs(5),
            backoff_max: Duration::from_secs(300),
            backoff_statuses: StatusSet::of(DEFAULT_BACKOFF_STATUSES),
            backoff_on_network_errors: true,
            delay_factor: 1.0,
            spacing: Spacing::FromEnd,
            rate_limit_headers: true,
            unread_body_grace: Duration::from_secs(30),
        }
    }
}

/// The longest interval a site may ask for (24 hours, the longest a robots.txt copy lives): a
/// Crawl-delay or Request-rate above it is refused under every [`OverlongCrawlDelay`] policy,
/// since a site asking for more is in effect asking not to be crawled. It also bounds every
/// interval the pacers compute with, whatever the configuration says.
pub const MAX_INTERVAL: Duration = Duration::from_secs(24 * 3600);

/// The interval an origin's requests are spaced by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Interval {
    /// This interval; with the delay asked when it was clamped to `max_delay`.
    Applied(Duration, Option<Duration>),
    /// The site asked for more than `max_delay`, and that is refused: the delay asked.
    TooLong(Duration),
}

impl PolitenessConfig {
    /// The interval for an origin given what its robots.txt asks.
    pub fn interval(&self, asked: Option<Duration>) -> Interval {
        let asked = asked.filter(|_| self.obey_crawl_delay);
        let wanted = asked
            .map_or(self.min_delay, |a| a.max(self.min_delay))
            .min(MAX_INTERVAL);
        match asked {
            // More than a robots.txt copy lives: refused whatever the policy.
            Some(asked) if asked > MAX_INTERVAL => Interval::TooLong(asked),
            Some(asked) if wanted > self.max_delay && asked > self.max_delay => match self.overlong
            {
                OverlongCrawlDelay::Refuse => Interval::TooLong(asked),
                OverlongCrawlDelay::Honour => Interval::Applied(wanted, None),
                OverlongCrawlDelay::Clamp => {
                    Interval::Applied(self.max_delay.min(MAX_INTERVAL), Some(asked))
                }
            },
            _ => Interval::Applied(wanted, None),
        }
    }

    /// Whether one request at a time goes to a group (the adaptive delay and spacing from the
    /// end apply then).
    pub(crate) fn one_at_a_time(&self) -> bool {
        self.concurrency <= 1
    }

    /// Whether the interval also runs from the end of the previous request.
    pub(crate) fn spaces_from_end(&self) -> bool {
        self.spacing == Spacing::FromEnd && self.one_at_a_time()
    }

    /// Whether the end of a request is read at all (spacing from it, or the adaptive delay).
    pub(crate) fn tracks_end(&self) -> bool {
        self.one_at_a_time() && (self.spacing == Spacing::FromEnd || self.delay_factor > 0.0)
    }

    /// The back-off rule with this configuration's numbers (robots-fetch's, which every front
    /// end applies).
    pub(crate) fn backoff_rule(&self) -> robots_fetch::Backoff {
        robots_fetch::Backoff {
            base: self.backoff_base,
            max: self.backoff_max,
        }
    }

    /// The back-off after `failures` consecutive distress responses, jittered, and never above
    /// `backoff_max` (the jitter is applied before the cap).
    pub(crate) fn jittered_backoff(&self, failures: u32) -> Duration {
        self.backoff_rule().jittered(failures)
    }

    /// Whether a response (or a request's failure) is distress.
    pub(crate) fn is_distress(&self, outcome: Outcome) -> bool {
        match outcome {
            Outcome::Status(status) => self.backoff_statuses.contains(status),
            Outcome::NetworkError => self.backoff_on_network_errors,
            Outcome::Cancelled => false,
        }
    }

    /// The adaptive interval after a request that took `took` (zero when off).
    pub(crate) fn adaptive(&self, took: Duration) -> Duration {
        if self.delay_factor > 0.0 && self.delay_factor.is_finite() {
            Duration::try_from_secs_f64(took.as_secs_f64() * self.delay_factor)
                .unwrap_or(self.max_delay)
                .min(self.max_delay)
        } else {
            Duration::ZERO
        }
    }
}

/// How a request ended, as pacing sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// A response head with this status.
    Status(u16),
    /// A connect error, reset or timeout.
    NetworkError,
    /// Dropped without an answer (cancelled, or failed otherwise): nothing learnt.
    Cancelled,
}

impl Outcome {
    /// The status for metrics (0 for a network error).
    pub(crate) fn status(self) -> u16 {
        match self {
            Outcome::Status(status) => status,
            Outcome::NetworkError | Outcome::Cancelled => 0,
        }
    }
}
