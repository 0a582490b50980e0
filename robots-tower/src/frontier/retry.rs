//! Retries: a URL given back waits in a heap for its time, then is queued again; each cause
//! has its own limit (`max_retries`, `distress_retries`, the hold for an unreachable
//! robots.txt: spec section 14).

use std::cmp::Reverse;
use std::time::Duration;

use robots_fetch::Origin;
use tokio::time::Instant;
use tracing::{debug, warn};
use url::Url;

use super::config::{NotCrawled, PushError, Retried, Visit};
use super::queues::URL_OVERHEAD;
use super::{ATTEMPT_OVERHEAD, Frontier, State};

/// How many sites given up for an unreachable robots.txt are remembered, to be warned of once.
const UNREACHABLE_NAMED: usize = 64;

/// A URL given back: queued again at `at`.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct RetryAt {
    pub(super) at: Instant,
    seq: u64,
    url: Box<str>,
    priority: i32,
    tries: Tries,
}

impl RetryAt {
    /// The URL's text, as queued.
    pub(super) fn into_url(self) -> Box<str> {
        self.url
    }
}

/// How many times a URL was given back: in all, for a distress answer, and held for an
/// unreachable robots.txt. Each cause has its own limit: `distress_retries`, the hold, and
/// `max_retries` for the others.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Tries {
    pub(super) all: u32,
    pub(super) distress: u32,
    pub(super) held: u32,
}

/// Why a URL is given back.
#[derive(Clone, Copy)]
enum Cause {
    Distress,
    Held,
    Other,
}

impl Tries {
    /// One more, for `cause`.
    fn next(self, cause: Cause) -> Tries {
        let (distress, held) = match cause {
            Cause::Distress => (1, 0),
            Cause::Held => (0, 1),
            Cause::Other => (0, 0),
        };
        Tries {
            all: self.all.saturating_add(1),
            distress: self.distress.saturating_add(distress),
            held: self.held.saturating_add(held),
        }
    }

    /// The retries counted in `max_retries`: those of no cause with a limit of its own.
    fn others(self) -> u32 {
        self.all
            .saturating_sub(self.distress)
            .saturating_sub(self.held)
    }
}

/// The retries whose time came, taken out of the waiting heap (their bytes with them).
pub(super) fn take_due(state: &mut State, now: Instant) -> Vec<RetryAt> {
    let mut due = Vec::new();
    while state.retries.peek().is_some_and(|Reverse(r)| r.at <= now) {
        if let Some(Reverse(retry)) = state.retries.pop() {
            state.retry_bytes = state
                .retry_bytes
                .saturating_sub(retry.url.len() + URL_OVERHEAD);
            due.push(retry);
        }
    }
    due
}

impl Frontier {
    /// Whether the loop sends a visit's URL again: one rule for `Frontier::run`'s retries and
    /// [`crate::Job::will_retry`], which tells a handler before the loop acts on it.
    pub(super) fn retries_visit(&self, tries: Tries, distress: Option<u16>, visit: &Visit) -> bool {
        if distress.is_some() {
            return self.distress_left(tries);
        }
        match visit {
            Visit::Refused(crate::RobotsError::RobotsUnreachable {
                retry_after,
                unreachable_for,
                ..
            }) => self.holds(tries, *unreachable_for, *retry_after),
            Visit::Retry(_) => self.others_left(tries),
            _ => false,
        }
    }

    fn distress_left(&self, tries: Tries) -> bool {
        tries.distress < self.shared.distress_retries
    }

    fn others_left(&self, tries: Tries) -> bool {
        tries.others() < self.shared.max_retries
    }

    /// Whether a URL refused for its unreachable robots.txt waits for the next try (within
    /// the hold, counted from the outage's start; a robots.txt that flaps, reachable between
    /// outages, cannot hold a URL for ever).
    fn holds(&self, tries: Tries, unreachable_for: Duration, retry_after: Duration) -> bool {
        robots_fetch::waits_for_robots(unreachable_for, retry_after, self.shared.hold_unreachable)
            && tries.held < robots_fetch::MOST_UNREACHABLE_TRIES
    }

    /// Queues again the retries whose time came (under the budget already: they held their
    /// room while they waited).
    pub(super) fn requeue(&self, due: Vec<RetryAt>) {
        for retry in due {
            let Ok(url) = Url::parse(&retry.url) else {
                continue;
            };
            let Ok(origin) = Origin::from_url(&url) else {
                continue;
            };
            let group = self.shared.gate.group_now(&origin);
            let mut state = self.shared.lock();
            match state.queues.push(
                group.as_str(),
                retry.priority,
                retry.url.clone(),
                usize::MAX,
                Instant::now(),
            ) {
                Ok(()) => {
                    let charge = retry.url.len() + ATTEMPT_OVERHEAD;
                    if state.attempts.insert(retry.url, retry.tries).is_none() {
                        state.retry_bytes += charge;
                    }
                }
                // Its group filled up meanwhile (its cap): given up, counted, told.
                Err(_) => {
                    state.counts.gave_up += 1;
                    let max = state.queues.max_per_group();
                    drop(state);
                    self.shared
                        .not_crawled(NotCrawled::Refused(PushError::GroupFull {
                            url: Box::new(url),
                            group: group.as_str().to_string(),
                            max,
                        }));
                }
            }
        }
        self.shared.changed.notify_waiters();
    }

    /// Gives `url` (retried `tries` times before) back for after `wait`, within
    /// `max_retries`.
    pub(super) fn retry(&self, url: &str, priority: i32, tries: Tries, wait: Duration) -> Retried {
        if !self.others_left(tries) {
            self.shared.lock().counts.gave_up += 1;
            debug!(
                url,
                attempt = tries.all,
                "retried as often as allowed: given up"
            );
            return Retried::GaveUp;
        }
        self.schedule(url, priority, tries.next(Cause::Other), wait)
    }

    /// Gives back `url`, answered with a distress status, to go once its group's pause is
    /// over, within `distress_retries`.
    pub(super) fn retry_distress(&self, url: &str, priority: i32, tries: Tries) -> Retried {
        if !self.distress_left(tries) {
            let mut state = self.shared.lock();
            state.counts.gave_up += 1;
            state.counts.gave_up_distress += 1;
            debug!(
                url,
                "answered with a distress status as often as allowed: given up"
            );
            return Retried::GaveUp;
        }
        // (The frontier hands it out once the group's pause, which the answer set, is over.)
        self.schedule(url, priority, tries.next(Cause::Distress), Duration::ZERO)
    }

    /// Puts a URL refused for its unreachable robots.txt back until robots.txt is tried
    /// again, if that comes within [`FrontierConfig::hold_unreachable`] of the outage's
    /// start (apart from [`FrontierConfig::max_retries`]); else gives it up.
    pub(super) fn hold_for_robots(
        &self,
        url: &str,
        priority: i32,
        tries: Tries,
        refusal: (&Origin, Duration, Duration),
    ) -> Retried {
        let (origin, unreachable_for, retry_after) = refusal;
        let hold = self.shared.hold_unreachable;
        if self.holds(tries, unreachable_for, retry_after) {
            return self.schedule(url, priority, tries.next(Cause::Held), retry_after);
        }
        let mut state = self.shared.lock();
        state.counts.gave_up += 1;
        state.counts.gave_up_unreachable += 1;
        // Said once per site, however many of its URLs were queued.
        let first = !state.gave_up_sites.contains(origin);
        if first {
            if state.gave_up_sites.len() >= UNREACHABLE_NAMED {
                state.gave_up_sites.pop_front();
            }
            state.gave_up_sites.push_back(origin.clone());
        }
        drop(state);
        if first {
            warn!(
                %origin,
                unreachable_for = %robots_fetch::HumanDuration(unreachable_for),
                hold = %robots_fetch::HumanDuration(hold),
                "robots.txt still unreachable: the site's URLs are given up, not tried again (FrontierConfig::hold_unreachable)"
            );
        }
        debug!(url, "robots.txt unreachable past the hold: given up");
        Retried::GaveUp
    }

    /// Queues a URL to be handed out again after `wait`, retried `tries` times then.
    fn schedule(&self, url: &str, priority: i32, tries: Tries, wait: Duration) -> Retried {
        let mut state = self.shared.lock();
        let at = Instant::now()
            .checked_add(wait)
            .unwrap_or_else(|| Instant::now() + Duration::from_secs(86_400 * 365));
        state.retry_seq += 1;
        let seq = state.retry_seq;
        state.retry_bytes += url.len() + URL_OVERHEAD;
        state.retries.push(Reverse(RetryAt {
            at,
            seq,
            url: Box::from(url),
            priority,
            tries,
        }));
        state.counts.retried += 1;
        drop(state);
        self.shared.changed.notify_waiters();
        Retried::Scheduled { attempt: tries.all }
    }
}
