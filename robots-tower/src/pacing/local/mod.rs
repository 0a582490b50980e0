//! The in-process pacer: politeness per group of groups (spec section 8; the group is named by `crate::pacing::group`): one
//! request in flight by default, a minimum interval between request starts (raised by
//! Crawl-delay/Request-rate, never lowered below what a site asked unless told to clamp), and
//! slower when the server struggles: a pause after a distress response (429, 5xx, a network
//! error) for `Retry-After` or a jittered exponential back-off, ended by the next other response;
//! a pause until the reset when rate-limit headers say nothing is left; and, with one request in
//! flight, an interval of at least `delay_factor` × the server's last response time. With one
//! request in flight, the interval also runs from the end of the previous request (its body's
//! last byte), so a slow server gets its pause too ([`Spacing::FromEnd`], the default).
//!
//! Spacing is a `governor` rate limiter per group (one request per interval, no burst) on
//! tokio's clock, so waits are timers in the request's future and tests run on paused time.
//! Concurrency is a semaphore per group; a request holds its place until its response body has
//! been read to the end or dropped (what the server sees), and a body kept unread while another
//! request waits is taken over after `unread_body_grace`. Waiting requests are served in the
//! order they began to wait.
//! State of idle groups is swept out, so memory stays bounded however many groups are
//! crawled; a group is idle only when forgetting it changes nothing (no request in flight or
//! waiting, interval elapsed since its last start and end) or nothing that still matters: a
//! group that was paused is forgotten once its pause has been over for `backoff_max`
//! (the longest back-off) with no request, so its back-off starts afresh.

mod clock;
pub(crate) mod permit;
mod state;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Semaphore;
use tokio::time::Instant;
use tracing::{debug, warn};

use crate::error::NotReadyReason;
use crate::pacing::observed::{GroupPause, Observed, PauseReason};
use crate::pacing::rules::Outcome;
use crate::pacing::rules::PolitenessConfig;
use permit::{LocalPermit, Place, PlaceGuard, ReadyLater};
use state::{GroupState, Ledger, Queued, Said, Turn, unread_body_warning};

/// The groups with state, and the calls since they were last swept.
#[derive(Default)]
struct GroupStates {
    /// Keyed with foldhash: every request looks its group up here.
    states: HashMap<Arc<str>, Arc<GroupState>, foldhash::fast::RandomState>,
    since_sweep: usize,
}

pub(crate) struct Politeness {
    /// Shared with every group's state (a permit's end reads it).
    pub(crate) config: Arc<PolitenessConfig>,
    groups: Mutex<GroupStates>,
    /// What it has said once already (each warning once per pacer).
    said: Arc<Said>,
}

impl Politeness {
    /// The settings it paces by.
    pub(crate) fn config(&self) -> &PolitenessConfig {
        &self.config
    }

    pub(crate) fn new(config: PolitenessConfig) -> Politeness {
        Politeness {
            config: Arc::new(config),
            groups: Mutex::new(GroupStates::default()),
            said: Arc::default(),
        }
    }

    fn state(&self, group: &str) -> Arc<GroupState> {
        let mut groups = self.groups.lock().unwrap_or_else(|e| e.into_inner());
        // Sweep idle groups after half as many calls as there are groups (at least 1024): a
        // sweep costs O(groups), so this is amortised O(1) per call.
        groups.since_sweep += 1;
        if groups.since_sweep > (groups.states.len() / 2).max(1024) {
            groups.since_sweep = 0;
            let now = Instant::now();
            let concurrency = self.config.concurrency.max(1);
            let forget_failures_after = self.config.backoff_max;
            groups
                .states
                .retain(|_, state| !state.is_idle(now, concurrency, forget_failures_after));
        }
        if let Some(state) = groups.states.get(group) {
            return state.clone();
        }
        let key: Arc<str> = group.into();
        let state = Arc::new(GroupState {
            key: key.clone(),
            config: self.config.clone(),
            said: self.said.clone(),
            turns: tokio::sync::Notify::new(),
            in_flight: Semaphore::new(self.config.concurrency.max(1)),
            ledger: Mutex::new(Ledger {
                limiter: None,
                last_start: None,
                last_end: None,
                paused_until: None,
                failures: 0,
                adaptive: Duration::ZERO,
                cap_warned: false,
                answered: 0,
                taken_over: 0,
                queue: std::collections::VecDeque::new(),
                tickets: 0,
            }),
        });
        groups.states.insert(key, state.clone());
        state
    }

    /// Waits for the group's turn: a free place (concurrency), the end of any pause, and the
    /// interval since the last start. Returns the place and how long the wait was.
    pub(crate) async fn acquire(&self, group: &str, interval: Duration) -> (LocalPermit, Duration) {
        // The usual request: a free place and its turn now. Taken without the clock reads that
        // time a wait, and without the waiting future, which is boxed (it is the large one).
        if let Ok(permit) = self.try_acquire(group, interval, Instant::now()) {
            return (permit, Duration::ZERO);
        }
        Box::pin(self.acquire_waiting(group, interval)).await
    }

    /// [`Politeness::acquire`] when the turn is not now: waits for a place and the interval.
    async fn acquire_waiting(&self, group: &str, interval: Duration) -> (LocalPermit, Duration) {
        let place = self.place(group).await;
        // The wait counts from here: time queued behind this process's own earlier requests to
        // the group is theirs, not a politeness wait.
        let started = Instant::now();
        let permit = self.space(group, interval, place).await;
        (permit, started.elapsed())
    }

    /// Waits for a free place at the group (its concurrency), nothing else.
    ///
    /// A place is held until its response's body has been read or dropped. A body kept unread
    /// would hold it for ever (a `join_all` of requests to one server keeps every response until
    /// the last comes): after waiting `unread_body_grace` while a request whose response head
    /// came long ago still holds a place, the waiter takes that place over, and says so once.
    pub(crate) async fn place(&self, group: &str) -> Place {
        let state = self.state(group);
        let grace = self.config.unread_body_grace;
        {
            let mut acquire = std::pin::pin!(state.in_flight.acquire());
            loop {
                match tokio::time::timeout(grace, acquire.as_mut()).await {
                    // (The semaphore is never closed: an error would only mean no limit.)
                    Ok(acquired) => {
                        if let Ok(permit) = acquired {
                            permit.forget();
                        }
                        break;
                    }
                    // The place is inherited: the unread body's end will not give it back.
                    Err(_) if state.take_over_unread() => {
                        if !state.said.unread_body.swap(true, Ordering::Relaxed) {
                            unread_body_warning(group, grace);
                        }
                        break;
                    }
                    Err(_) => continue,
                }
            }
        }
        Place {
            in_flight: PlaceGuard(state, true),
        }
    }

    /// With a place held, waits for the end of any pause and the interval since the last start
    /// (and end), then records the start. An interval of zero only records it.
    ///
    /// Requests that wait are served in the order they began to wait (a queue per group): after
    /// a pause, the group's requests start in the order they were made, not in the order their
    /// timers happen to fire.
    pub(crate) async fn space(&self, group: &str, interval: Duration, place: Place) -> LocalPermit {
        let started = Instant::now();
        let state = place.in_flight.0.clone();
        // The place in the group's queue once this request waits; leaving it (its turn came, or
        // the request was dropped) lets the next one look.
        let mut queued = Queued {
            state: &state,
            ticket: None,
        };
        loop {
            // Made before the look, so that a turn handed on meanwhile is not missed.
            let handed_on = state.turns.notified();
            let now = Instant::now();
            match state.next_start(interval, &self.config, now, Some(&mut queued.ticket)) {
                Turn::At(at, _) => tokio::time::sleep_until(at).await,
                Turn::Behind => handed_on.await,
                Turn::Go => {
                    drop(queued);
                    let waited = now.saturating_duration_since(started);
                    if !waited.is_zero() {
                        debug!(group, ?waited, ?interval, "politeness wait");
                    }
                    return LocalPermit::new(place.in_flight);
                }
            }
        }
    }

    /// A free place at the group now, or why not (every place in use).
    pub(crate) fn try_place(&self, group: &str) -> Result<Place, ReadyLater> {
        let state = self.state(group);
        let taken = state.in_flight.try_acquire().map(|permit| permit.forget());
        match taken {
            Ok(()) => Ok(Place {
                in_flight: PlaceGuard(state, true),
            }),
            Err(_) => Err(ReadyLater {
                ready_in: None,
                reason: NotReadyReason::InFlight,
            }),
        }
    }

    /// With a place held, the turn as of `now` (recording the start), or when it will come and
    /// why; the place is given back then.
    pub(crate) fn try_space(
        &self,
        interval: Duration,
        place: Place,
        now: Instant,
    ) -> Result<LocalPermit, ReadyLater> {
        let state = &place.in_flight.0;
        match state.next_start(interval, &self.config, now, None) {
            Turn::Go => Ok(LocalPermit::new(place.in_flight)),
            Turn::At(at, reason) => Err(ReadyLater {
                ready_in: Some(at.saturating_duration_since(now)),
                reason,
            }),
            // Requests waiting already go first: ready once they have gone, which is at least
            // when the group would be ready for the next.
            Turn::Behind => Err(ReadyLater {
                ready_in: Some(
                    state
                        .peek(interval, &self.config)
                        .map_or(interval, |at| at.saturating_duration_since(now)),
                ),
                reason: NotReadyReason::Spacing,
            }),
        }
    }

    /// The group's turn as of `now` (a clock read the caller shares with its robots.txt
    /// verdict), or when it will come and why (schedule, don't wait).
    pub(crate) fn try_acquire(
        &self,
        group: &str,
        interval: Duration,
        now: Instant,
    ) -> Result<LocalPermit, ReadyLater> {
        let place = self.try_place(group)?;
        self.try_space(interval, place, now)
    }

    /// How long until a request to the group could start: zero when now, `None` when every
    /// place is in use (it depends on when a request in flight ends). Takes nothing.
    pub(crate) fn next_ready(&self, group: &str, interval: Duration) -> Option<Duration> {
        let state = self
            .groups
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .states
            .get(group)
            .cloned();
        let Some(state) = state else {
            return Some(Duration::ZERO);
        };
        if state.in_flight.available_permits() == 0 {
            return None;
        }
        Some(
            state
                .peek(interval, &self.config)
                .map_or(Duration::ZERO, |at| {
                    at.saturating_duration_since(Instant::now())
                }),
        )
    }

    /// Learns from a response seen without a request's place (a hook after the fact): distress
    /// pauses the group, any other response ends the streak, rate-limit headers pause it.
    pub(crate) fn observe(&self, group: &str, observed: Observed) -> Option<GroupPause> {
        let state = self.state(group);
        let mut ledger = state.ledger.lock().unwrap_or_else(|e| e.into_inner());
        self.apply(&state.key, &mut ledger, observed, None)
    }

    /// Learns from a request's response head through its own place (distress and exhausted
    /// rate limits pause the group now), and keeps the place: the request stays in flight until
    /// the permit is dropped with the response's body, which records its end and measures the
    /// adaptive delay to the last byte.
    pub(crate) fn observe_head(
        &self,
        permit: &mut LocalPermit,
        observed: Observed,
    ) -> Option<GroupPause> {
        let state = &permit.in_flight.0;
        let mut ledger = state.ledger.lock().unwrap_or_else(|e| e.into_inner());
        // The head's time, until the body's end replaces it.
        let took = self
            .config
            .tracks_end()
            .then(Instant::now)
            .zip(ledger.last_start)
            .map(|(now, start)| now.saturating_duration_since(start));
        let pause = self.apply(&state.key, &mut ledger, observed, took);
        if !permit.answered && matches!(observed.outcome, Outcome::Status(_)) {
            permit.answered = true;
            ledger.answered += 1;
        }
        pause
    }

    /// Ends a request through its own place: what it taught and its end, in one lock of the
    /// group's ledger (no second lookup of the group on the request path).
    #[inline]
    pub(crate) fn finish(&self, mut permit: LocalPermit, observed: Observed) -> Option<GroupPause> {
        let state = &permit.in_flight.0;
        let mut ledger = state.ledger.lock().unwrap_or_else(|e| e.into_inner());
        // Only spacing from the end and the adaptive delay read it (a clock read saved per
        // request otherwise).
        let now = self.config.tracks_end().then(Instant::now);
        // With one request at a time, the last start is this request's: the adaptive delay
        // measures from there (the permit stays small: it is moved with every request).
        let took = now
            .zip(ledger.last_start)
            .map(|(now, start)| now.saturating_duration_since(start));
        let pause = self.apply(&state.key, &mut ledger, observed, took);
        if now.is_some() {
            ledger.last_end = now;
        }
        drop(ledger);
        permit.ended = true;
        pause
    }

    /// What a request's end teaches the group's ledger; the pause it set, if any.
    fn apply(
        &self,
        group: &str,
        ledger: &mut Ledger,
        observed: Observed,
        took: Option<Duration>,
    ) -> Option<GroupPause> {
        let config = &self.config;
        let took = took.filter(|_| matches!(observed.outcome, Outcome::Status(_)));
        let lesson = observed.lesson(config, took);
        let mut pause = None;
        if lesson.backs_off {
            ledger.failures = ledger.failures.saturating_add(1);
            // A `Retry-After` may lengthen the back-off the streak calls for, never shorten it:
            // `Retry-After: 0` (or a date in the past) on a 503 still backs off.
            let backoff = config.jittered_backoff(ledger.failures);
            let asked = lesson
                .retry_after
                .map(|asked| ledger.capped(group, asked, config.max_retry_after, "Retry-After"));
            let (duration, reason) = match asked {
                Some(asked) if asked >= backoff => (asked, PauseReason::RetryAfter),
                _ => (
                    backoff,
                    PauseReason::Backoff {
                        failures: ledger.failures,
                    },
                ),
            };
            ledger.pause_for(duration);
            warn!(
                group,
                outcome = ?observed.outcome,
                ?duration,
                failures = ledger.failures,
                "backing off"
            );
            crate::telemetry::paused(observed.outcome.status());
            pause = Some(GroupPause { duration, reason });
        } else if lesson.ends_streak && (ledger.failures > 0 || ledger.paused_until.is_some()) {
            ledger.failures = 0;
            ledger.paused_until = None;
            debug!(group, outcome = ?observed.outcome, "back-off ended");
        }
        if let Some(reset) = lesson.rate_limited {
            let duration = ledger.capped(group, reset, config.max_retry_after, "rate-limit reset");
            ledger.pause_for(duration);
            debug!(
                group,
                ?duration,
                "rate limit exhausted: paused until its reset"
            );
            if pause.is_none_or(|p: GroupPause| p.duration < duration) {
                pause = Some(GroupPause {
                    duration,
                    reason: PauseReason::RateLimit,
                });
            }
        }
        if let Some(adaptive) = lesson.adaptive {
            ledger.adaptive = adaptive;
        }
        pause
    }

    /// The pause in force for a group, if any.
    pub(crate) fn paused_until(&self, group: &str) -> Option<Instant> {
        let groups = self.groups.lock().unwrap_or_else(|e| e.into_inner());
        let state = groups.states.get(group)?;
        let ledger = state.ledger.lock().unwrap_or_else(|e| e.into_inner());
        ledger.paused_until.filter(|p| *p > Instant::now())
    }

    /// How many groups have state.
    #[cfg(test)]
    pub(crate) fn tracked(&self) -> usize {
        self.groups
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .states
            .len()
    }
}
