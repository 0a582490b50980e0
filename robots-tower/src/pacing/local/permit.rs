//! A request's place in its group while it is in flight, given back when it ends.

use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use super::slot::Slot;
use crate::error::NotReadyReason;

/// Why a request cannot start now, and when it could (`None`: when a request in flight ends).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ReadyLater {
    pub(crate) ready_in: Option<Duration>,
    pub(crate) reason: NotReadyReason,
}

/// A free place at an origin (its concurrency), before spacing.
pub(crate) struct Place {
    pub(super) in_flight: InFlight,
}

/// One place of a slot's semaphore, given back when dropped.
/// The second field is false for a place another request took over (see [`Politeness::place`]):
/// it is not given back twice.
pub(super) struct InFlight(pub(super) Arc<Slot>, pub(super) bool);

impl Drop for InFlight {
    fn drop(&mut self) {
        if self.1 {
            self.0.in_flight.add_permits(1);
        }
    }
}

/// The in-process place: the end is recorded before the place is freed, so the next request
/// sees it. Dropping it ends the request: when its response head was observed
/// ([`Politeness::observe_head`]), that is the end of its body, and the adaptive delay is
/// measured to it (to the last byte).
pub(crate) struct LocalPermit {
    pub(super) in_flight: InFlight,
    /// Set by `Politeness::finish`, which recorded the end already.
    pub(super) ended: bool,
    /// Set by `Politeness::observe_head`: the response head came, the body is being read.
    pub(super) answered: bool,
}

impl LocalPermit {
    pub(super) fn new(in_flight: InFlight) -> LocalPermit {
        LocalPermit {
            in_flight,
            ended: false,
            answered: false,
        }
    }
}

impl Drop for LocalPermit {
    fn drop(&mut self) {
        if self.ended {
            return;
        }
        let slot = &self.in_flight.0;
        let mut state = slot.state.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        if self.answered {
            if slot.config.tracks_end()
                && let Some(start) = state.last_start
            {
                state.adaptive = slot.config.adaptive(now.saturating_duration_since(start));
            }
            // A place taken over from an unread body (any one: places are alike) was inherited
            // by the request that took it: not given back again.
            if state.taken_over > 0 {
                state.taken_over -= 1;
                self.in_flight.1 = false;
            } else {
                state.answered = state.answered.saturating_sub(1);
            }
        }
        state.last_end = Some(now);
    }
}
