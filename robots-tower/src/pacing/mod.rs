//! The pacing a gate uses, in this process ([`Politeness`]) or across a fleet through Redis
//! (`FleetPacing`), and the place a request holds while it is in flight ([`Permit`]). The two
//! pacers know nothing of each other's permits: this module is where they meet.

pub(crate) mod body;
pub(crate) mod distress;
#[cfg(feature = "redis")]
pub(crate) mod fleet;
pub(crate) mod group;
pub(crate) mod local;
pub(crate) mod observed;
pub(crate) mod rules;

use std::time::Duration;

use tokio::time::Instant;

#[cfg(feature = "redis")]
use crate::pacing::fleet::FleetPacing;
#[cfg(feature = "redis")]
use crate::pacing::fleet::lease::{FleetPermit, Lease};
use crate::pacing::local::Politeness;
use crate::pacing::local::permit::{LocalPermit, ReadyLater};
use crate::pacing::observed::{GroupPause, Observed};
use crate::pacing::rules::PolitenessConfig;

/// A place in a group's queue: holding it counts as a request in flight. Dropping it ends the
/// request (for a fleet lease, releases it with the response's status).
pub(crate) enum Permit {
    Local(LocalPermit),
    #[cfg(feature = "redis")]
    Fleet(Box<Lease>),
}

#[cfg(feature = "redis")]
impl From<FleetPermit> for Permit {
    fn from(permit: FleetPermit) -> Permit {
        match permit {
            FleetPermit::Lease(lease) => Permit::Fleet(lease),
            FleetPermit::Local(local) => Permit::Local(local),
        }
    }
}

/// The pacing a gate uses: in this process, or across a fleet through Redis.
// The in-process pacer is the usual one and is read on every request: kept inline (one per
// gate, not per request); the fleet's is boxed.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Pacing {
    Local(Politeness),
    #[cfg(feature = "redis")]
    Fleet(Box<FleetPacing>),
}

impl Pacing {
    pub(crate) fn config(&self) -> &PolitenessConfig {
        match self {
            Pacing::Local(p) => p.config(),
            #[cfg(feature = "redis")]
            Pacing::Fleet(f) => f.config(),
        }
    }

    /// The in-process pacing, when that is all there is (not a fleet's).
    pub(crate) fn in_process(&self) -> Option<&Politeness> {
        match self {
            Pacing::Local(p) => Some(p),
            #[cfg(feature = "redis")]
            Pacing::Fleet(_) => None,
        }
    }

    /// Waits for the group's turn; refused only by a fleet set to fail closed.
    pub(crate) async fn acquire(
        &self,
        group: &str,
        interval: Duration,
    ) -> Result<(Permit, Duration), crate::error::RobotsError> {
        match self {
            Pacing::Local(p) => {
                let (permit, waited) = p.acquire(group, interval).await;
                Ok((Permit::Local(permit), waited))
            }
            #[cfg(feature = "redis")]
            // Boxed: a fleet's future (Redis round trips) would enlarge every request's.
            Pacing::Fleet(f) => Box::pin(f.acquire(group, interval))
                .await
                .map(|(permit, waited)| (permit.into(), waited)),
        }
    }

    /// [`Pacing::acquire`] for a robots.txt request: a fleet whose Redis is unreachable paces
    /// it in this process whatever its fallback for pages.
    pub(crate) async fn acquire_for_robots(
        &self,
        group: &str,
        interval: Duration,
    ) -> Result<(Permit, Duration), crate::error::RobotsError> {
        match self {
            Pacing::Local(_) => self.acquire(group, interval).await,
            #[cfg(feature = "redis")]
            Pacing::Fleet(f) => Box::pin(f.acquire_with(
                group,
                interval,
                crate::pacing::fleet::FleetFallback::LocalFallback,
            ))
            .await
            .map(|(permit, waited)| (permit.into(), waited)),
        }
    }

    /// The group's turn now, or when it will come (schedule, don't wait).
    pub(crate) async fn try_acquire(
        &self,
        group: &str,
        interval: Duration,
    ) -> Result<Result<Permit, ReadyLater>, crate::error::RobotsError> {
        match self {
            Pacing::Local(p) => Ok(p
                .try_acquire(group, interval, Instant::now())
                .map(Permit::Local)),
            #[cfg(feature = "redis")]
            Pacing::Fleet(f) => Box::pin(f.try_acquire(group, interval))
                .await
                .map(|turn| turn.map(Permit::from)),
        }
    }

    /// How long until a request to the group could start (see [`Politeness::next_ready`]).
    pub(crate) async fn next_ready(
        &self,
        group: &str,
        interval: Duration,
    ) -> Result<Option<Duration>, crate::error::RobotsError> {
        match self {
            Pacing::Local(p) => Ok(p.next_ready(group, interval)),
            #[cfg(feature = "redis")]
            Pacing::Fleet(f) => f.next_ready(group, interval).await,
        }
    }

    /// Learns from a response without a request's place (a hook that saw a response); a fleet
    /// records it for every process (in the background).
    pub(crate) fn observe(&self, group: &str, observed: Observed) -> Option<GroupPause> {
        match self {
            Pacing::Local(p) => p.observe(group, observed),
            #[cfg(feature = "redis")]
            Pacing::Fleet(f) => f.observe(group, observed),
        }
    }

    /// Learns from a request's response head (distress and exhausted rate limits pause its
    /// group now; for a fleet, through Redis before this returns) and keeps its place: the
    /// request is in flight until the permit is dropped, with its response's body.
    pub(crate) async fn observe_head(
        &self,
        permit: &mut Permit,
        observed: Observed,
    ) -> Option<GroupPause> {
        #[cfg(feature = "redis")]
        if let (Pacing::Fleet(f), Permit::Fleet(lease)) = (self, &mut *permit) {
            return Box::pin(lease.observe_head(observed, f.local())).await;
        }
        // Every other case learns in this process only, at once.
        self.observe_head_now(permit, observed)
    }

    /// [`Pacing::observe_head`] without waiting (a fleet learns it in the background).
    pub(crate) fn observe_head_now(
        &self,
        permit: &mut Permit,
        observed: Observed,
    ) -> Option<GroupPause> {
        match (self, permit) {
            (Pacing::Local(p), Permit::Local(local)) => p.observe_head(local, observed),
            #[cfg(feature = "redis")]
            (Pacing::Fleet(f), Permit::Local(local)) => f.local().observe_head(local, observed),
            #[cfg(feature = "redis")]
            (Pacing::Fleet(f), Permit::Fleet(lease)) => lease.observe_head_now(observed, f.local()),
            #[cfg(feature = "redis")]
            (Pacing::Local(_), Permit::Fleet(_)) => None,
        }
    }

    /// Ends a request with what it taught: distress and exhausted rate limits pause its group
    /// (for a fleet, through the lease, before this returns), and the place is freed. The pause
    /// set, if any.
    pub(crate) async fn finish(&self, permit: Permit, observed: Observed) -> Option<GroupPause> {
        let (pause, _lease) = self.finish_now(permit, observed);
        #[cfg(feature = "redis")]
        if let (Some(Permit::Fleet(lease)), Pacing::Fleet(f)) = (_lease, self) {
            return Box::pin(lease.release(observed, f.local())).await;
        }
        pause
    }

    /// [`Pacing::finish`] without waiting: everything but a fleet lease's release through
    /// Redis, for which the permit is given back.
    pub(crate) fn finish_now(
        &self,
        permit: Permit,
        observed: Observed,
    ) -> (Option<GroupPause>, Option<Permit>) {
        match (self, permit) {
            (Pacing::Local(p), Permit::Local(local)) => (p.finish(local, observed), None),
            #[cfg(feature = "redis")]
            (Pacing::Fleet(f), Permit::Local(local)) => (f.local().finish(local, observed), None),
            #[cfg(feature = "redis")]
            (Pacing::Fleet(_), lease @ Permit::Fleet(_)) => (None, Some(lease)),
            // A fleet's lease under in-process pacing cannot be made; it is simply given back.
            #[cfg(feature = "redis")]
            (Pacing::Local(_), other) => {
                drop(other);
                (None, None)
            }
        }
    }

    /// The pause in force for a group in this process, if any.
    pub(crate) fn paused_until(&self, group: &str) -> Option<Instant> {
        match self {
            Pacing::Local(p) => p.paused_until(group),
            #[cfg(feature = "redis")]
            Pacing::Fleet(f) => f.local().paused_until(group),
        }
    }
}
