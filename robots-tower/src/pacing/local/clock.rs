//! governor on tokio's clock, so that waits are timers in the request's future and tests run
//! on paused time.

use std::ops::Add;
use std::time::Duration;

use governor::RateLimiter;
use governor::clock::{Clock, Reference};
use governor::middleware::NoOpMiddleware;
use governor::nanos::Nanos;
use governor::state::{InMemoryState, NotKeyed};
use robots_fetch::later;
use tokio::time::Instant;

/// governor on tokio's clock.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct TokioClock;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct TokioInstant(pub(super) Instant);

impl Add<Nanos> for TokioInstant {
    type Output = TokioInstant;
    fn add(self, nanos: Nanos) -> TokioInstant {
        TokioInstant(later(self.0, Duration::from_nanos(nanos.as_u64())))
    }
}

impl Reference for TokioInstant {
    fn duration_since(&self, earlier: Self) -> Nanos {
        self.0.saturating_duration_since(earlier.0).into()
    }
    fn saturating_sub(&self, duration: Nanos) -> Self {
        TokioInstant(
            self.0
                .checked_sub(Duration::from_nanos(duration.as_u64()))
                .unwrap_or(self.0),
        )
    }
}

impl Clock for TokioClock {
    type Instant = TokioInstant;
    fn now(&self) -> TokioInstant {
        TokioInstant(Instant::now())
    }
}

pub(super) type Limiter =
    RateLimiter<NotKeyed, InMemoryState, TokioClock, NoOpMiddleware<TokioInstant>>;
