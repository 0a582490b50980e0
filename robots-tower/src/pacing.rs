//! The pacing a gate uses, in this process ([`Politeness`]) or across a fleet through Redis
//! (`FleetPacing`), and the place a request holds while it is in flight ([`Permit`]). The two
//! pacers know nothing of each other's permits: this module is where they meet.

use std::time::Duration;

use tokio::time::Instant;

#[cfg(feature = "redis")]
use crate::fleet::{FleetPacing, FleetPermit, Lease};
use crate::politeness::{LocalPermit, Politeness, PolitenessConfig, ReadyLater};

/// A place in an origin's queue: holding it counts as a request in flight. Dropping it ends the
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

    /// Waits for the origin's turn; refused only by a fleet set to fail closed.
    pub(crate) async fn acquire(
        &self,
        origin: &str,
        interval: Duration,
    ) -> Result<(Permit, Duration), crate::RobotsError> {
        match self {
            Pacing::Local(p) => {
                let (permit, waited) = p.acquire(origin, interval).await;
                Ok((Permit::Local(permit), waited))
            }
            #[cfg(feature = "redis")]
            // Boxed: a fleet's future (Redis round trips) would enlarge every request's.
            Pacing::Fleet(f) => Box::pin(f.acquire(origin, interval))
                .await
                .map(|(permit, waited)| (permit.into(), waited)),
        }
    }

    /// The origin's turn now, or when it will come (schedule, don't wait).
    pub(crate) async fn try_acquire(
        &self,
        origin: &str,
        interval: Duration,
    ) -> Result<Result<Permit, ReadyLater>, crate::RobotsError> {
        match self {
            Pacing::Local(p) => Ok(p
                .try_acquire(origin, interval, Instant::now())
                .map(Permit::Local)),
            #[cfg(feature = "redis")]
            Pacing::Fleet(f) => Box::pin(f.try_acquire(origin, interval))
                .await
                .map(|turn| turn.map(Permit::from)),
        }
    }

    /// How long until a request to the origin could start (see [`Politeness::next_ready`]).
    pub(crate) async fn next_ready(
        &self,
        origin: &str,
        interval: Duration,
    ) -> Result<Option<Duration>, crate::RobotsError> {
        match self {
            Pacing::Local(p) => Ok(p.next_ready(origin, interval)),
            #[cfg(feature = "redis")]
            Pacing::Fleet(f) => f.next_ready(origin, interval).await,
        }
    }

    /// Learns from a response without a request's place (a hook that saw a response).
    pub(crate) fn observe(&self, origin: &str, status: u16, retry_after: Option<Duration>) {
        match self {
            Pacing::Local(p) => p.observe(origin, status, retry_after),
            #[cfg(feature = "redis")]
            Pacing::Fleet(f) => f.local().observe(origin, status, retry_after),
        }
    }

    /// Ends a request with its response: 429/503 pause the origin (for a fleet, through the
    /// lease, before this returns), and the place is freed.
    pub(crate) async fn finish(
        &self,
        permit: Permit,
        origin: &str,
        status: u16,
        retry_after: Option<Duration>,
    ) {
        let _lease = self.finish_now(permit, origin, status, retry_after);
        #[cfg(feature = "redis")]
        if let Some(Permit::Fleet(lease)) = _lease {
            Box::pin(lease.release(status, retry_after)).await
        }
    }

    /// [`Pacing::finish`] without waiting: everything but a fleet lease's release through
    /// Redis, for which the permit is given back.
    pub(crate) fn finish_now(
        &self,
        permit: Permit,
        origin: &str,
        status: u16,
        retry_after: Option<Duration>,
    ) -> Option<Permit> {
        match (self, permit) {
            (Pacing::Local(p), Permit::Local(local)) => {
                p.finish(local, origin, status, retry_after)
            }
            #[cfg(feature = "redis")]
            (Pacing::Fleet(f), Permit::Local(local)) => {
                f.local().finish(local, origin, status, retry_after)
            }
            #[cfg(feature = "redis")]
            (Pacing::Fleet(_), lease @ Permit::Fleet(_)) => return Some(lease),
            #[cfg(feature = "redis")]
            (Pacing::Local(p), other) => {
                p.observe(origin, status, retry_after);
                drop(other);
            }
        }
        None
    }

    /// The pause in force for an origin in this process, if any.
    pub(crate) fn paused_until(&self, origin: &str) -> Option<Instant> {
        match self {
            Pacing::Local(p) => p.paused_until(origin),
            #[cfg(feature = "redis")]
            Pacing::Fleet(f) => f.local().paused_until(origin),
        }
    }
}
