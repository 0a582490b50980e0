//! A process's lease on a shared place in a group, and its release with what the response
//! taught (awaited on the response path, or in the background when dropped).

use std::sync::Arc;
use std::time::Duration;

use robots_fetch::RedisFleet;
use tokio::time::Instant;
use tracing::{debug, warn};

use super::call::ScriptCall;
use super::outbox::Outbox;
use super::settle::Settle;
use super::{GroupKeys, millis, millis_or_none, scripts};
use crate::pacing::local::Politeness;
use crate::pacing::local::permit::LocalPermit;
use crate::pacing::observed::{GroupPause, Lesson, Observed, PauseReason};
use crate::pacing::rules::Outcome;
use crate::pacing::rules::PolitenessConfig;
use robots_fetch::jittered;

/// A lease on one of the group's places. Released with the response's status by
/// [`Lease::release`] (awaited on the response path, so a 429 pauses the fleet before the
/// caller sees the response); a lease dropped unreleased (the request failed or was cancelled)
/// is released in the background, and one whose process died expires.
pub(crate) struct Lease {
    pub(super) release: Option<Release>,
    /// The local place, so that local pacing knows this start and end if Redis goes away
    /// (none while the lease is being set up).
    pub(super) _local: Option<LocalPermit>,
}

/// A fleet's answer: a lease on a shared place, or, while Redis is unreachable and pacing falls
/// back to this process, a local place.
pub(crate) enum FleetPermit {
    Lease(Box<Lease>),
    Local(LocalPermit),
}

/// What releasing a lease needs.
pub(super) struct Release {
    pub(super) fleet: RedisFleet,
    /// Where a release that pauses nothing waits for a call to ride on.
    pub(super) outbox: Arc<Outbox>,
    pub(super) keys: Arc<GroupKeys>,
    /// (Shared with its settle and the recall of its end.)
    pub(super) id: Arc<str>,
    pub(super) config: Arc<PolitenessConfig>,
    pub(super) idle_ttl: Duration,
    /// How long after the reservation the start is.
    pub(super) wait_ms: u64,
    /// The epoch of the server state that granted the lease (see `START_CHECK`).
    pub(super) epoch: String,
    /// When the request starts (the adaptive delay measures from here): as granted, then as it
    /// goes once the start check passed; none for a response observed without a lease.
    pub(super) starts_at: Option<Instant>,
    /// The response head was recorded already (`Lease::observe_head`): the release ends the
    /// request, measuring the adaptive delay to the body's end, and teaches nothing again.
    pub(super) answered: bool,
    /// This records a response head, keeping the lease (for the unread-body grace).
    pub(super) head_only: bool,
}

impl Release {
    /// Releases the lease with what the request taught; the pause the fleet set, if any.
    pub(super) async fn run(self, observed: Observed) -> Option<GroupPause> {
        let (release, lesson) = self.settle_or_send(observed)?;
        release.send(observed, lesson).await
    }

    /// [`Release::run`] for a caller that waits until the fleet knows (a hook's `finish`): a
    /// lesson that pauses nothing goes now too, with what else waits to ride.
    pub(super) async fn run_now(self, observed: Observed) -> Option<GroupPause> {
        let lesson = self.lesson(observed);
        if lesson.pauses() {
            return self.send(observed, lesson).await;
        }
        let outbox = self.outbox.clone();
        outbox.send_now(self.into_settle(lesson)).await;
        None
    }

    /// What the request taught. A lesson that pauses nothing is posted to ride on another call
    /// (`None`); one that pauses the group is returned, to be sent on its own call.
    pub(super) fn settle_or_send(self, observed: Observed) -> Option<(Release, Lesson)> {
        let lesson = self.lesson(observed);
        if lesson.pauses() {
            return Some((self, lesson));
        }
        let outbox = self.outbox.clone();
        outbox.post(self.into_settle(lesson));
        None
    }

    fn lesson(&self, observed: Observed) -> Lesson {
        // Measured at the response head, and again at the end of its body.
        let took = self
            .starts_at
            .filter(|_| matches!(observed.outcome, Outcome::Status(_)) || self.answered)
            .map(|at| at.elapsed());
        observed.lesson(&self.config, took)
    }

    /// The settle of this head or end (an end remembered: a settle posted again, after a failed
    /// call or a failover, is not remembered twice).
    /// An end (not a head) is remembered, to be said again after a failover (`recall`).
    fn remember_end(&self, at: Instant) {
        if !self.head_only {
            self.outbox
                .recall
                .ended(&self.keys, &self.id, self.idle_ttl, at);
        }
    }

    fn into_settle(self, lesson: Lesson) -> Settle {
        let at = Instant::now();
        self.remember_end(at);
        Settle {
            keys: self.keys,
            id: self.id,
            at,
            head_grace: self.head_only.then_some(self.config.unread_body_grace),
            ends_streak: lesson.ends_streak,
            adaptive: lesson.adaptive,
            idle_ttl: self.idle_ttl,
        }
    }

    /// Sends a lesson that pauses the group, on its own call; the pause the fleet set.
    async fn send(self, observed: Observed, lesson: Lesson) -> Option<GroupPause> {
        self.remember_end(Instant::now());
        let Ok(mut connection) = self.fleet.connection() else {
            return None;
        };
        let config = &*self.config;
        // (A capped `Retry-After` was said by this process's own pacing, once per group.)
        // The jitter is drawn here: the script has no randomness of its own.
        let jitter = jittered(Duration::from_secs(1_000_000)).as_secs_f64() / 1_000_000.0;
        let mut call = ScriptCall::new(&scripts().1, 2);
        call.key(&self.keys.pace)
            .key(&self.keys.leases)
            .arg(&*self.id)
            .arg(if lesson.backs_off { "1" } else { "0" })
            .arg(if lesson.ends_streak { "1" } else { "0" })
            .arg(millis_or_none(lesson.retry_after))
            .arg(millis(config.backoff_base))
            .arg(millis(config.backoff_max))
            .arg(millis(config.max_retry_after))
            .arg(millis(self.idle_ttl))
            .arg(jitter)
            .arg(millis_or_none(lesson.rate_limited))
            .arg(millis_or_none(lesson.adaptive))
            .arg(millis_or_none(
                self.head_only.then_some(config.unread_body_grace),
            ));
        match self
            .fleet
            .run(call.invoke::<(u64, u8, u32)>(&mut connection))
            .await
        {
            Ok((pause_ms, reason, failures)) if pause_ms > 0 || reason != 0 => {
                let reason = match reason {
                    1 => PauseReason::RetryAfter,
                    2 => PauseReason::Backoff { failures },
                    _ => PauseReason::RateLimit,
                };
                // (Counted in `robots_pauses_total` by this process's own pacing, which applied
                // the same response first.)
                warn!(key = %self.keys.pace, outcome = ?observed.outcome, pause_ms, reason = reason.as_str(), "pausing the group (the whole fleet)");
                Some(GroupPause {
                    duration: Duration::from_millis(pause_ms),
                    reason,
                })
            }
            Ok(_) => None,
            Err(error) => {
                debug!(%error, "lease not released; it expires on its own");
                None
            }
        }
    }
}

impl Release {
    /// A release recording a response head for the fleet while the lease stays, for at most
    /// the unread-body grace unless the body ends first.
    pub(super) fn recorder(&self) -> Release {
        Release {
            fleet: self.fleet.clone(),
            outbox: self.outbox.clone(),
            keys: self.keys.clone(),
            id: self.id.clone(),
            head_only: true,
            config: self.config.clone(),
            idle_ttl: self.idle_ttl,
            wait_ms: 0,
            epoch: String::new(),
            starts_at: self.starts_at,
            answered: false,
        }
    }
}

impl Lease {
    /// Learns from the response head, for this process at once and for the fleet (awaited: a
    /// 429 pauses every process before the caller sees it), and keeps the lease: the request is
    /// in flight until the lease is dropped with the response's body.
    pub(crate) async fn observe_head(
        &mut self,
        observed: Observed,
        local: &Politeness,
    ) -> Option<GroupPause> {
        let record = self.answer(observed, local)?;
        record.run(observed).await
    }

    /// [`Lease::observe_head`] without waiting: the fleet learns it in the background.
    pub(crate) fn observe_head_now(
        &mut self,
        observed: Observed,
        local: &Politeness,
    ) -> Option<GroupPause> {
        let pause = self
            ._local
            .as_mut()
            .and_then(|permit| local.observe_head(permit, observed));
        if let Some((record, lesson)) = self
            .answer_fleet(observed)
            .and_then(|record| record.settle_or_send(observed))
        {
            let fleet = record.fleet.clone();
            fleet.spawn(async move {
                record.send(observed, lesson).await;
            });
        }
        pause
    }

    /// This process learns the head now; the record for the fleet, to run.
    pub(super) fn answer(&mut self, observed: Observed, local: &Politeness) -> Option<Release> {
        if let Some(permit) = self._local.as_mut() {
            local.observe_head(permit, observed);
        }
        self.answer_fleet(observed)
    }

    /// Marks the lease answered; the record of the head for the fleet.
    pub(super) fn answer_fleet(&mut self, observed: Observed) -> Option<Release> {
        let release = self.release.as_mut()?;
        release.answered = matches!(observed.outcome, Outcome::Status(_));
        Some(release.recorder())
    }

    /// A lease not yet tied to a local place.
    pub(super) fn holding(release: Release) -> Lease {
        Lease {
            release: Some(release),
            _local: None,
        }
    }

    /// Releases the place with what the request taught: distress and exhausted rate limits
    /// pause the group for the fleet (and in this process, which remembers it should Redis
    /// lose its state).
    pub(crate) async fn release(
        mut self,
        observed: Observed,
        local: &Politeness,
    ) -> Option<GroupPause> {
        if let Some(permit) = self._local.take() {
            local.finish(permit, observed);
        }
        self.release.take()?.run_now(observed).await
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        let Some(release) = self.release.take() else {
            return;
        };
        let observed = Observed::failure(Outcome::Cancelled);
        if let Some((release, lesson)) = release.settle_or_send(observed) {
            // Without a runtime the lease simply expires.
            let fleet = release.fleet.clone();
            fleet.spawn(async move {
                release.send(observed, lesson).await;
            });
        }
    }
}
