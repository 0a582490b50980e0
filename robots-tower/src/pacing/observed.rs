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
