//! One group's state in the in-process pacer: its limiter, pause, back-off streak, adaptive
//! delay, places and queue of waiting requests.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use governor::{Quota, RateLimiter};
use robots_fetch::later;
use tokio::sync::Semaphore;
use tokio::time::Instant;
use tracing::warn;

use super::clock::{Limiter, TokioClock};
use crate::error::NotReadyReason;
use crate::pacing::rules::{MAX_INTERVAL, PolitenessConfig};

pub(super) struct Ledger {
    /// The limiter and the interval it was built for (rebuilt when the interval changes).
    pub(super) limiter: Option<(Duration, Limiter)>,
    pub(super) last_start: Option<Instant>,
    /// When the last request ended (its body read or dropped, or it failed).
    pub(super) last_end: Option<Instant>,
    pub(super) paused_until: Option<Instant>,
    pub(super) failures: u32,
    /// `delay_factor` × the last response time (one request at a time): the least interval
    /// from the last end.
    pub(super) adaptive: Duration,
    /// A `Retry-After` or rate-limit reset above the maximum was said (once per group).
    pub(super) cap_warned: bool,
    /// Requests in flight whose response head came (their bodies hold their places).
    pub(super) answered: usize,
    /// Places taken over from such requests by waiters; as many of their ends give none back.
    pub(super) taken_over: usize,
    /// The requests waiting for their turn, by ticket, first come first served (at most the
    /// group's concurrency: only requests holding a place wait here).
    pub(super) queue: std::collections::VecDeque<u64>,
    /// The next ticket.
    pub(super) tickets: u64,
}

/// What [`GroupState::next_start`] says.
pub(super) enum Turn {
    /// The request starts now (its start is recorded).
    Go,
    /// Not before this, and why.
    At(Instant, NotReadyReason),
    /// Requests that began to wait earlier go first.
    Behind,
}

/// A request's place in its group's queue, left when dropped (its turn came, or the request
/// was given up), which wakes the others to look again.
pub(super) struct Queued<'a> {
    pub(super) state: &'a GroupState,
    pub(super) ticket: Option<u64>,
}

impl Drop for Queued<'_> {
    fn drop(&mut self) {
        let Some(ticket) = self.ticket else { return };
        let mut ledger = self.state.ledger.lock().unwrap_or_else(|e| e.into_inner());
        // Still in the queue: not served, given up while it waited (its turn takes it out).
        let given_up = match ledger.queue.iter().position(|t| *t == ticket) {
            Some(at) => {
                ledger.queue.remove(at);
                true
            }
            None => false,
        };
        drop(ledger);
        self.state.turns.notify_waiters();
        if given_up && !self.state.said.given_up.swap(true, Ordering::Relaxed) {
            given_up_warning(&self.state.key);
        }
    }
}

/// Says (once per pacer) that a request was dropped while it waited for its turn: the usual
/// cause is a timeout (or a limit) around the robots layer or middleware, whose clock then counts
/// the politeness wait, so requests fail without being sent.
#[cold]
pub(super) fn given_up_warning(group: &str) {
    warn!(
        group,
        "a request was given up while it waited for its group's turn: if a timeout or a concurrency limit wraps the robots layer or middleware, it counts the politeness wait (and holds its permits meanwhile); put it inside (see https://docs.rs/polite-robots/latest/polite_robots/guide/composition/)"
    );
}

/// What a pacer has said once already (shared by its groups).
#[derive(Default)]
pub(super) struct Said {
    pub(super) given_up: AtomicBool,
    pub(super) unread_body: AtomicBool,
}

pub(super) struct GroupState {
    /// The group's key, for logs.
    pub(super) key: Arc<str>,
    /// The pacer's settings (a permit's end reads them).
    pub(super) config: Arc<PolitenessConfig>,
    /// What the pacer has said once already.
    pub(super) said: Arc<Said>,
    /// Said when the first of the queue of waiting requests leaves it, so the next one looks.
    pub(super) turns: tokio::sync::Notify,
    /// Free places. A place taken is `forget`-ed and given back by [`PlaceGuard`]'s drop: no
    /// `Arc` of the semaphore per request.
    pub(super) in_flight: Semaphore,
    pub(super) ledger: Mutex<Ledger>,
}

impl Ledger {
    /// `None` when a request may start at `now` (and records the start), else when to look
    /// again and why.
    pub(super) fn turn_at(
        &mut self,
        interval: Duration,
        config: &PolitenessConfig,
        now: Instant,
    ) -> Option<(Instant, NotReadyReason)> {
        let spacing = |at| Some((at, NotReadyReason::Spacing));
        if let Some(until) = self.paused_until.filter(|p| *p > now) {
            return Some((until, NotReadyReason::Paused));
        }
        let after_end = self.after_end(interval, config);
        if !after_end.is_zero()
            && let Some(end) = self.last_end
            && now < later(end, after_end)
        {
            return spacing(later(end, after_end));
        }
        if interval.is_zero() {
            self.last_start = Some(now);
            return None;
        }
        // The interval counts from the last start whatever the limiter knows: a limiter built
        // anew for a new interval (robots.txt's Crawl-delay, learnt while several requests
        // waited for it) starts empty, and would let the first of them through at once, right
        // after robots.txt, and the next one too.
        if let Some(last) = self.last_start
            && now < later(last, interval)
        {
            return spacing(later(last, interval));
        }
        let rebuild = self
            .limiter
            .as_ref()
            .is_none_or(|(built_for, _)| *built_for != interval);
        if rebuild {
            let quota = Quota::with_period(interval)?; // non-zero here
            let limiter = RateLimiter::direct_with_clock(quota, TokioClock);
            self.limiter = Some((interval, limiter));
        }
        let (_, limiter) = self.limiter.as_ref()?;
        match limiter.check() {
            Ok(()) => {
                self.last_start = Some(now);
                None
            }
            Err(not_until) => spacing(not_until.earliest_possible().0),
        }
    }

    /// A pause a server asked for, capped at `max`; a capped one is warned about once per group.
    pub(super) fn capped(
        &mut self,
        group: &str,
        asked: Duration,
        max: Duration,
        what: &str,
    ) -> Duration {
        if asked <= max {
            return asked;
        }
        if !self.cap_warned {
            self.cap_warned = true;
            warn!(group, ?asked, applied = ?max, "{what} above the maximum: clamped (said once per group)");
        }
        max
    }

    /// Pauses the group for `duration` from now (a longer pause in force stays).
    pub(super) fn pause_for(&mut self, duration: Duration) {
        let until = later(Instant::now(), duration);
        self.paused_until = Some(self.paused_until.map_or(until, |p| p.max(until)));
    }

    /// The least quiet after the last request's end: the interval (spacing from the end) and
    /// the adaptive delay, with one request at a time.
    pub(super) fn after_end(&self, interval: Duration, config: &PolitenessConfig) -> Duration {
        if !config.one_at_a_time() {
            return Duration::ZERO;
        }
        let spaced = if config.spaces_from_end() {
            interval
        } else {
            Duration::ZERO
        };
        spaced.max(self.adaptive)
    }
}

/// Says (once per pacer) that a place was taken over from an unread response body.
#[cold]
pub(super) fn unread_body_warning(group: &str, grace: Duration) {
    warn!(
        group,
        ?grace,
        "a response body kept unread held its request's place in the group this long while another request waited: the place was taken over. A request is in flight until its response body is read to the end or dropped; read or drop responses before sending more to the same server (a join_all of requests to one server keeps them all)"
    );
}

impl GroupState {
    /// Takes over the place of a request whose response head came and whose body is still
    /// held; false when there is none (every place is held by a request still waiting for its
    /// answer).
    pub(super) fn take_over_unread(&self) -> bool {
        let mut ledger = self.ledger.lock().unwrap_or_else(|e| e.into_inner());
        if ledger.answered == 0 {
            return false;
        }
        ledger.answered -= 1;
        ledger.taken_over += 1;
        true
    }

    /// Whether a request may start at `now` (then its start is recorded), else when to look
    /// again and why. With one request at a time, the interval (and the adaptive delay) also
    /// run from the previous request's end. `queue`: the caller's place in the group's queue
    /// (`None`: it does not wait, so it only goes when no one is waiting); a waiting caller
    /// without a ticket is given one, under the same lock as the look.
    pub(super) fn next_start(
        &self,
        interval: Duration,
        config: &PolitenessConfig,
        now: Instant,
        queue: Option<&mut Option<u64>>,
    ) -> Turn {
        // (Bounded whatever the caller computed: governor's quota cannot hold 584 years.)
        let interval = interval.min(MAX_INTERVAL);
        let mut ledger = self.ledger.lock().unwrap_or_else(|e| e.into_inner());
        let first = ledger.queue.front().copied();
        let ticket = queue.map(|ticket| {
            *ticket.get_or_insert_with(|| {
                let ticket = ledger.tickets;
                ledger.tickets = ledger.tickets.wrapping_add(1);
                ledger.queue.push_back(ticket);
                ticket
            })
        });
        if first.is_some() && first != ticket {
            return Turn::Behind;
        }
        match ledger.turn_at(interval, config, now) {
            Some((at, reason)) => Turn::At(at, reason),
            None => {
                if ticket.is_some() {
                    ledger.queue.pop_front();
                }
                Turn::Go
            }
        }
    }

    /// When a request could start, without taking the turn: `None` when now.
    pub(super) fn peek(&self, interval: Duration, config: &PolitenessConfig) -> Option<Instant> {
        let ledger = self.ledger.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        if let Some(until) = ledger.paused_until.filter(|p| *p > now) {
            return Some(until);
        }
        let after = |at: Option<Instant>, gap| at.map(|t| later(t, gap)).filter(|t| *t > now);
        let from_start = after(ledger.last_start, interval);
        let from_end = after(ledger.last_end, ledger.after_end(interval, config));
        from_start.max(from_end)
    }

    /// Whether forgetting the group changes nothing that matters: nothing in flight or waiting,
    /// the interval over since the last start and end, and any pause over for
    /// `forget_failures_after` (after which its back-off may start afresh).
    pub(super) fn is_idle(
        self: &Arc<Self>,
        now: Instant,
        concurrency: usize,
        forget_failures_after: Duration,
    ) -> bool {
        if Arc::strong_count(self) > 1 || self.in_flight.available_permits() < concurrency {
            return false;
        }
        let ledger = self.ledger.lock().unwrap_or_else(|e| e.into_inner());
        let interval = ledger.limiter.as_ref().map_or(Duration::ZERO, |(i, _)| *i);
        let after_end = interval.max(ledger.adaptive);
        let elapsed =
            |at: Option<Instant>, after: Duration| at.is_none_or(|t| later(t, after) <= now);
        let pause_forgotten = match ledger.paused_until {
            Some(until) => later(until, forget_failures_after) <= now,
            None => ledger.failures == 0,
        };
        pause_forgotten
            && elapsed(ledger.last_start, interval)
            && elapsed(ledger.last_end, after_end)
    }
}
