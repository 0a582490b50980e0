//! A fetch's outcome and the previous entry → the next entry (spec section 7): lifetimes,
//! `max-age`, the stale copy during an outage, back-off, and the 30-day rule. Pure but for the
//! clock it is given and the log line it writes.

use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;
use tracing::{debug, info, warn};

use crate::origin::Origin;
use crate::outcome::FetchOutcome;
use crate::time::later;

use super::{CacheConfig, CachedRobots, RobotsCache, Rules, Source};

impl RobotsCache {
    /// The entry after a fetch, given the previous one: the spec's outcome table plus the
    /// cache rules (lifetimes, stale copies, back-off).
    pub(super) fn next_entry(
        &self,
        origin: &Origin,
        previous: Option<&CachedRobots>,
        outcome: FetchOutcome,
        now: Instant,
    ) -> CachedRobots {
        let config = &self.inner.config;
        // A good copy's life: its `max-age` within the bounds, else the default.
        let expiry = |max_age: Option<Duration>| {
            later(
                now,
                max_age
                    .unwrap_or(config.default_ttl)
                    .clamp(config.min_ttl, config.max_ttl),
            )
        };
        let entry = |rules, source, refresh_at, failures| {
            CachedRobots::new(
                origin.clone(),
                rules,
                source,
                refresh_at,
                failures,
                config.give_up_after,
                &self.inner.policy_tokens,
            )
        };
        match outcome {
            FetchOutcome::Parsed {
                status,
                body,
                max_age,
                redirected_to,
                validators,
            } => {
                let expires_at = expiry(max_age);
                let source = Source::Parsed {
                    status,
                    redirected_to: redirected_to.map(|u| Arc::from(u.as_str())),
                    fetched_at: now,
                    expires_at,
                    not_modified: false,
                };
                entry(
                    Rules::Parsed(Arc::new(self.parse(&body))),
                    source,
                    expires_at,
                    0,
                )
                .with_validators(validators)
            }
            FetchOutcome::NotModified { validators, .. } => {
                // The copy asked about is still the file: its rules, a new life. (Asked about a
                // copy this entry no longer has, the answer cannot be used: unreachable.)
                let kept = previous.filter(|p| {
                    matches!(p.rules, Rules::Parsed(_))
                        && matches!(p.source, Source::Parsed { .. } | Source::Stale { .. })
                });
                let Some(previous) = kept else {
                    warn!(%origin, "robots.txt answered 304 Not Modified for a copy not kept: unreachable");
                    let cause = crate::outcome::UnreachableCause::Status {
                        status: 304,
                        retry_after: None,
                    };
                    return self.next_entry(
                        origin,
                        previous,
                        FetchOutcome::Unreachable(cause),
                        now,
                    );
                };
                // RFC 9111 section 4.3.4: what the 304 says replaces what is stored, what it
                // leaves out (a bare 304's `max-age`) keeps the stored value.
                let validators = previous.validators.updated_by(&validators);
                let expires_at = expiry(validators.max_age);
                let (status, redirected_to) = match &previous.source {
                    Source::Parsed {
                        status,
                        redirected_to,
                        ..
                    } => (*status, redirected_to.clone()),
                    Source::Stale { status, .. } => (*status, None),
                    _ => (200, None),
                };
                let source = Source::Parsed {
                    status,
                    redirected_to,
                    fetched_at: now,
                    expires_at,
                    not_modified: true,
                };
                entry(previous.rules.clone(), source, expires_at, 0).with_validators(validators)
            }
            FetchOutcome::Unavailable { status, reason } => {
                let expires_at = later(now, config.default_ttl);
                let rules = if config.auth_errors_disallow && matches!(status, 401 | 403) {
                    Rules::DisallowAll
                } else {
                    Rules::AllowAll
                };
                let source = Source::Unavailable {
                    status,
                    reason,
                    fetched_at: now,
                    expires_at,
                };
                entry(rules, source, expires_at, 0)
            }
            FetchOutcome::Unreachable(cause) => {
                let failures = previous.map_or(0, |p| p.failures).saturating_add(1);
                let delay = match cause.retry_after() {
                    Some(asked) => {
                        if asked > config.retry_after_max {
                            warn!(%origin, ?asked, applied = ?config.retry_after_max, "robots.txt Retry-After above the maximum: clamped");
                        }
                        asked.clamp(config.retry_floor, config.retry_after_max)
                    }
                    None => backoff(config, failures),
                };
                let next_retry = later(now, delay);
                match previous.and_then(|p| p.good_copy().map(|good| (p, good))) {
                    Some((previous, (status, fetched_at))) => {
                        let unreachable_since = match previous.source {
                            Source::Stale {
                                unreachable_since, ..
                            } => unreachable_since,
                            _ => now,
                        };
                        let source = Source::Stale {
                            status,
                            fetched_at,
                            cause,
                            unreachable_since,
                            next_retry,
                        };
                        // (The good copy's validators stay: once the origin answers, a 304
                        // confirms the copy still used.)
                        entry(previous.rules.clone(), source, next_retry, failures)
                            .with_validators(previous.validators.clone())
                    }
                    None => {
                        let since = match previous.map(|p| &p.source) {
                            Some(Source::Unreachable { since, .. }) => *since,
                            _ => now,
                        };
                        let source = Source::Unreachable {
                            cause,
                            since,
                            next_retry,
                        };
                        entry(Rules::DisallowAll, source, next_retry, failures)
                    }
                }
            }
        }
    }
}

/// `retry_base × 2^(failures − 1)`, at most `retry_max`.
pub(super) fn backoff(config: &CacheConfig, failures: u32) -> Duration {
    let factor = 2u32.saturating_pow(failures.saturating_sub(1).min(31));
    config
        .retry_base
        .saturating_mul(factor)
        .min(config.retry_max)
}

pub(super) fn log_entry(entry: &CachedRobots) {
    match &entry.source {
        Source::Unreachable {
            cause, next_retry, ..
        } => {
            // Info, not warn: every caller of the origin gets it as a typed answer
            // (`RobotsUnreachable`, an `unreachable` outcome); a crawl of many sites would
            // otherwise print one warning per dead site.
            info!(origin = %entry.origin, %cause, retry_in = ?next_retry.saturating_duration_since(Instant::now()), "robots.txt unreachable, no good copy: disallow all")
        }
        Source::Stale { cause, .. } => {
            info!(origin = %entry.origin, %cause, "robots.txt unreachable, using the last good copy")
        }
        source => {
            debug!(origin = %entry.origin, outcome = source.outcome(), status = ?source.status(), "robots.txt cached")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 304 for a copy the entry does not have (its validators came from elsewhere) cannot be
    /// used: it is an unreachable answer like any other, never the copy invented. With no good
    /// copy nothing is allowed; an earlier answer (here a 404) goes on as the stale copy.
    #[tokio::test(start_paused = true)]
    async fn a_304_without_a_kept_copy_is_unreachable() {
        let cache = RobotsCache::builder("FooBot").build();
        let origin = Origin::parse("https://example.com").unwrap();
        let now = Instant::now();
        let not_modified = || FetchOutcome::NotModified {
            max_age: None,
            validators: crate::validators::Validators::default(),
        };
        let entry = cache.next_entry(&origin, None, not_modified(), now);
        assert!(
            matches!(&entry.source, Source::Unreachable { cause, .. } if cause.status() == Some(304)),
            "{:?}",
            entry.source
        );
        assert!(matches!(entry.rules, Rules::DisallowAll));

        let missing = FetchOutcome::Unavailable {
            status: 404,
            reason: crate::outcome::UnavailableReason::Status,
        };
        let previous = cache.next_entry(&origin, None, missing, now);
        let entry = cache.next_entry(&origin, Some(&previous), not_modified(), now);
        assert!(
            matches!(&entry.source, Source::Stale { cause, status: 404, .. } if cause.status() == Some(304)),
            "{:?}",
            entry.source
        );
    }

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        let config = CacheConfig::default();
        let secs: Vec<u64> = (1..=9).map(|n| backoff(&config, n).as_secs()).collect();
        assert_eq!(secs, [60, 120, 240, 480, 960, 1920, 3600, 3600, 3600]);
        assert_eq!(backoff(&config, u32::MAX), config.retry_max);
    }
}
