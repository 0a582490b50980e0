//! A fetch's outcome and the previous entry → the next entry (spec section 7): lifetimes,
//! `max-age`, the stale copy during an outage, back-off, and the 30-day rule. Pure but for the
//! clock it is given and the log line it writes.

use std::sync::Arc;

use tokio::time::Instant;
use tracing::{debug, info, warn};

use crate::origin::Origin;
use crate::outcome::FetchOutcome;
use crate::time::later;

use super::{CachedRobots, RobotsCache, Rules, Source};
use crate::lifetime::{Kept, KeptCopy, NextRules};

impl RobotsCache {
    /// The entry after a fetch, given the previous one: [`super::CacheConfig::next`]'s decision
    /// (the spec's outcome table and the lifetimes), made into an entry at `now`.
    pub(super) fn next_entry(
        &self,
        origin: &Origin,
        previous: Option<&CachedRobots>,
        outcome: FetchOutcome,
        now: Instant,
    ) -> CachedRobots {
        let config = &self.inner.config;
        let kept = kept(previous, now);
        let next = config.next(kept, &outcome);
        let renewed_at = later(now, next.lives_for);
        let entry = |rules, source| {
            CachedRobots::new(
                origin.clone(),
                rules,
                source,
                renewed_at,
                next.failures,
                config.give_up_after,
                &self.inner.policy_tokens,
            )
        };
        match (outcome, previous) {
            (
                FetchOutcome::Parsed {
                    status,
                    body,
                    redirected_to,
                    validators,
                    ..
                },
                _,
            ) => {
                let source = Source::Parsed {
                    status,
                    redirected_to: redirected_to.map(|u| Arc::from(u.as_str())),
                    fetched_at: now,
                    expires_at: renewed_at,
                    not_modified: false,
                };
                entry(Rules::Parsed(Arc::new(self.parse(&body))), source)
                    .with_validators(validators)
            }
            // The copy asked about is still the file: its rules, a new life.
            (FetchOutcome::NotModified { validators, .. }, Some(previous))
                if kept.copy == KeptCopy::Parsed =>
            {
                // RFC 9111 section 4.3.4: what the 304 says replaces what is stored, what it
                // leaves out keeps the stored value.
                let validators = previous.validators.updated_by(&validators);
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
                    expires_at: renewed_at,
                    not_modified: true,
                };
                entry(previous.rules.clone(), source).with_validators(validators)
            }
            // Asked about a copy this entry no longer has, the answer cannot be used.
            (FetchOutcome::NotModified { .. }, _) => {
                warn!(%origin, "robots.txt answered 304 Not Modified for a copy not kept: unreachable");
                let cause = crate::outcome::UnreachableCause::Status {
                    status: 304,
                    retry_after: None,
                };
                self.next_entry(origin, previous, FetchOutcome::Unreachable(cause), now)
            }
            (FetchOutcome::Unavailable { status, reason }, _) => {
                let rules = match next.rules {
                    NextRules::DisallowAll => Rules::DisallowAll,
                    _ => Rules::AllowAll,
                };
                let source = Source::Unavailable {
                    status,
                    reason,
                    fetched_at: now,
                    expires_at: renewed_at,
                };
                entry(rules, source)
            }
            (FetchOutcome::Unreachable(cause), previous) => {
                if let Some(asked) = next.retry_after_clamped {
                    warn!(%origin, ?asked, applied = ?config.retry_after_max, "robots.txt Retry-After above the maximum: clamped");
                }
                let since = now
                    .checked_sub(next.unreachable_for.unwrap_or_default())
                    .unwrap_or(now);
                match previous.and_then(|p| p.good_copy().map(|good| (p, good))) {
                    Some((previous, (status, fetched_at))) => {
                        let source = Source::Stale {
                            status,
                            fetched_at,
                            cause,
                            unreachable_since: since,
                            next_retry: renewed_at,
                        };
                        // (The good copy's validators stay: once the origin answers, a 304
                        // confirms the copy still used.)
                        entry(previous.rules.clone(), source)
                            .with_validators(previous.validators.clone())
                    }
                    None => {
                        let source = Source::Unreachable {
                            cause,
                            since,
                            next_retry: renewed_at,
                        };
                        entry(Rules::DisallowAll, source)
                    }
                }
            }
        }
    }
}

/// What `previous` holds, as [`super::CacheConfig::next`] needs it.
fn kept(previous: Option<&CachedRobots>, now: Instant) -> Kept {
    let Some(previous) = previous else {
        return Kept::default();
    };
    let copy = match (&previous.rules, &previous.source) {
        (Rules::Parsed(_), Source::Parsed { .. } | Source::Stale { .. }) => KeptCopy::Parsed,
        _ if previous.good_copy().is_some() => KeptCopy::Answer,
        _ => KeptCopy::None,
    };
    let unreachable_for = match &previous.source {
        Source::Stale {
            unreachable_since: since,
            ..
        }
        | Source::Unreachable { since, .. } => Some(now.saturating_duration_since(*since)),
        _ => None,
    };
    Kept {
        copy,
        failures: previous.failures,
        unreachable_for,
        max_age: previous.validators.max_age,
    }
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
}
