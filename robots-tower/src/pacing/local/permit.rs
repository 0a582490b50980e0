//! A request's place in its group while it is in flight, given back when it ends.

use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use super::state::GroupState;
use crate::error::NotReadyReason;

/// Why a request cannot start now, and when it could (`None`: when a request in flight ends).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ReadyLater {
    pub(crate) ready_in: Option<Duration>,
    pub(crate) reason: NotReadyReason,
}

/// A free place in a group (its concurrency), before spacing.
pub(crate) struct Place {
    pub(super) in_flight: PlaceGuard,
}

/// One place of a group state's semaphore, given back when dropped.
/// The second field is false for a place another request took over (see [`Politeness::place`]):
/// it is not given back twice.
pub(super) struct PlaceGuard(pub(super) Arc<GroupState>, pub(super) bool);

impl Drop for PlaceGuard {
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
    pub(super) in_flight: PlaceGuard,
    /// Set by `Politeness::finish`, which recorded the end already.
    pub(super) ended: bool,
    /// Set by `Politeness::observe_head`: the response head came, the body is being read.
    pub(super) answered: bool,
}

impl LocalPermit {
    pub(super) fn new(in_flight: PlaceGuard) -> LocalPermit {
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
        let state = &self.in_flight.0;
        let mut ledger = state.ledger.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        if self.answered {
            if state.config.tracks_end()
                && let Some(start) = ledger.last_start
            {
                ledger.adaptive = state.config.adaptive(now.saturating_duration_since(start));
            }
            // A place taken over from an unread body (any one: places are alike) was inherited
            // by the request that took it: not given back again.
            if ledger.taken_over > 0 {
                ledger.taken_over -= 1;
                self.in_flight.1 = false;
            } else {
                ledger.answered = ledger.answered.saturating_sub(1);
            }
        }
        ledger.last_end = Some(now);
    }
}
