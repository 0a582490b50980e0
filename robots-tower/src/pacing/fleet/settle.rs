//! A request's head or end as the fleet records it (`settle.lua`): what a response taught that
//! no other process needs at once, sent on a call the process makes anyway (`outbox`).

use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use super::call::ScriptCall;
use super::{GroupKeys, millis, millis_or_none};

/// The longest the record of a response head waits (at most the unread-body grace).
pub(super) const HEAD_RIDE: Duration = Duration::from_millis(100);

/// The longest a request's end waits for a call to ride on.
pub(super) const END_RIDE: Duration = Duration::from_millis(1);

/// A request's head or end, to be recorded by a script in the fleet's Redis. (Recording one
/// twice changes nothing: a copy may ride with an acquire while the original is on its way.)
#[derive(Clone)]
pub(super) struct Settle {
    pub(super) keys: Arc<GroupKeys>,
    pub(super) id: Arc<str>,
    /// When it happened: the script records it as that long before its own clock's now.
    pub(super) at: Instant,
    /// Only the response head came: the lease stays for at most this grace. `None`: the request
    /// ended and the lease goes.
    pub(super) head_grace: Option<Duration>,
    pub(super) ends_streak: bool,
    pub(super) adaptive: Option<Duration>,
    pub(super) idle_ttl: Duration,
}

impl Settle {
    /// The keys a settle adds to a script call (see `settle.lua`).
    pub(super) const KEYS: usize = 2;

    /// Whether `other` is an earlier record of this request, which this one replaces; if so,
    /// this one takes over what it taught. (A body's end teaches nothing of its own about the
    /// back-off streak, nor, when dropped early, the delay: the head it follows did.)
    pub(super) fn absorb(&mut self, other: &Settle) -> bool {
        if !(other.id == self.id && other.keys.pace == self.keys.pace) {
            return false;
        }
        self.ends_streak |= other.ends_streak;
        self.adaptive = self.adaptive.or(other.adaptive);
        true
    }

    /// Writes the settle's keys into a script call (see `settle.lua`).
    pub(super) fn add_keys(&self, call: &mut ScriptCall) {
        call.key(&self.keys.pace).key(&self.keys.leases);
    }

    /// Writes the settle's arguments into a script call, after every key (see `settle.lua`).
    pub(super) fn add_args(&self, call: &mut ScriptCall) {
        call.arg(&*self.id)
            .arg(millis_or_none(self.head_grace))
            .arg(millis(self.at.elapsed()))
            .arg(if self.ends_streak { "1" } else { "0" })
            .arg(millis_or_none(self.adaptive))
            .arg(millis(self.idle_ttl).max(1));
    }

    /// When it must be sent by, riding or not.
    pub(super) fn due(&self) -> Instant {
        match self.head_grace {
            Some(grace) => self.at + HEAD_RIDE.min(grace),
            None => self.at + END_RIDE,
        }
    }
}
