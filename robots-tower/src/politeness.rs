//! Per-origin politeness (spec section 8): one request in flight by default, a minimum interval
//! between request starts (raised by Crawl-delay/Request-rate up to a cap), and a pause after
//! 429/503 for `Retry-After` or an exponential back-off, ended by the next success. With one
//! request in flight, the interval also runs from the end of the previous request (its response
//! head), so a slow server gets its pause too ([`Spacing::FromEnd`], the default).
//!
//! Spacing is a `governor` rate limiter per origin (one request per interval, no burst) on
//! tokio's clock, so waits are timers in the request's future and tests run on paused time.
//! Concurrency is a semaphore per origin; a request holds its place until its response head
//! arrives (not until the body is read, which could deadlock a caller holding a response).
//! State of idle origins is swept out, so memory stays bounded however many origins are
//! crawled; an origin is idle only when forgetting it changes nothing (no request in flight or
//! waiting, interval elapsed since its last start and end) or nothing that still matters: an
//! origin that answered 429/503 is forgotten once its pause has been over for `backoff_max`
//! (the longest back-off) with no request, so its back-off starts afresh.

use std::collections::HashMap;
use std::ops::Add;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use governor::clock::{Clock, Reference};
use governor::middleware::NoOpMiddleware;
use governor::nanos::Nanos;
use governor::state::{InMemoryState, NotKeyed};
use governor::{Quota, RateLimiter};
use robots_fetch::later;
use tokio::sync::Semaphore;
use tokio::time::Instant;
use tracing::{debug, warn};

use crate::error::NotReadyReason;

/// Where the interval between two requests to one origin is measured from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Spacing {
    /// From the previous request's start, and also from its end (response head) when one
    /// request is in flight per origin: a server that takes 3 s to answer still gets the whole
    /// interval of quiet before the next request (as Yandex defines Crawl-delay). The default.
    #[default]
    FromEnd,
    /// From the previous request's start only: a slow server may get the next request as soon
    /// as it answers.
    StartToStart,
}

/// The politeness numbers. Defaults are polite: 1 request at a time, 1 s apart, at most 30 s.
#[derive(Debug, Clone)]
pub(crate) struct PolitenessConfig {
    /// Minimum interval between request starts to one origin (1 s).
    pub min_delay: Duration,
    /// Crawl-delay and Request-rate raise the interval up to this (30 s); more is clamped.
    pub max_delay: Duration,
    /// Honour Crawl-delay and Request-rate (true).
    pub obey_crawl_delay: bool,
    /// Requests in flight per origin (1).
    pub concurrency: usize,
    /// A 429/503 `Retry-After` pauses the origin at most this long (10 min).
    pub max_retry_after: Duration,
    /// Without `Retry-After`, the first pause (5 s), doubled per consecutive 429/503…
    pub backoff_base: Duration,
    /// …up to this (5 min).
    pub backoff_max: Duration,
    /// Where the interval is measured from ([`Spacing::FromEnd`]).
    pub spacing: Spacing,
}

impl Default for PolitenessConfig {
    fn default() -> PolitenessConfig {
        PolitenessConfig {
            min_delay: Duration::from_secs(1),
            max_delay: Duration::from_secs(30),
            obey_crawl_delay: true,
            concurrency: 1,
            max_retry_after: Duration::from_secs(600),
            backoff_base: Duration::from_secs(5),
            backoff_max: Duration::from_secs(300),
            spacing: Spacing::FromEnd,
        }
    }
}

impl PolitenessConfig {
    /// The interval for an origin given what its robots.txt asks, and the asked interval when it
    /// was clamped to `max_delay`.
    pub fn interval(&self, asked: Option<Duration>) -> (Duration, Option<Duration>) {
        let asked = asked.filter(|_| self.obey_crawl_delay);
        let wanted = asked.map_or(self.min_delay, |a| a.max(self.min_delay));
        if wanted > self.max_delay {
            (self.max_delay, asked)
        } else {
            (wanted, None)
        }
    }

    /// Whether the interval also runs from the end of the previous request.
    fn spaces_from_end(&self) -> bool {
        self.spacing == Spacing::FromEnd && self.concurrency <= 1
    }

    fn backoff(&self, failures: u32) -> Duration {
        let factor = 2u32.saturating_pow(failures.saturating_sub(1).min(31));
        self.backoff_base
            .saturating_mul(factor)
            .min(self.backoff_max)
    }
}

/// governor on tokio's clock.
#[derive(Debug, Clone, Copy, Default)]
struct TokioClock;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct TokioInstant(Instant);

impl Add<Nanos> for TokioInstant {
    type Output = TokioInstant;
    fn add(self, nanos: Nanos) -> TokioInstant {
        TokioInstant(self.0 + Duration::from_nanos(nanos.as_u64()))
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

type Limiter = RateLimiter<NotKeyed, InMemoryState, TokioClock, NoOpMiddleware<TokioInstant>>;

struct SlotState {
    /// The limiter and the interval it was built for (rebuilt when the interval changes).
    limiter: Option<(Duration, Limiter)>,
    last_start: Option<Instant>,
    /// When the last request's response head arrived (or it failed).
    last_end: Option<Instant>,
    paused_until: Option<Instant>,
    failures: u32,
}

struct Slot {
    /// Free places. A place taken is `forget`-ed and given back by [`InFlight`]'s drop: no
    /// `Arc` of the semaphore per request.
    in_flight: Semaphore,
    state: Mutex<SlotState>,
}

/// Why a request cannot start now, and when it could (`None`: when a request in flight ends).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ReadyLater {
    pub(crate) ready_in: Option<Duration>,
    pub(crate) reason: NotReadyReason,
}

/// A free place at an origin (its concurrency), before spacing.
pub(crate) struct Place {
    in_flight: InFlight,
}

/// One place of a slot's semaphore, given back when dropped.
struct InFlight(Arc<Slot>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.in_flight.add_permits(1);
    }
}

/// The in-process place: the end is recorded before the place is freed, so the next request
/// sees it.
pub(crate) struct LocalPermit {
    in_flight: InFlight,
    /// Set by `Politeness::finish`, which recorded the end already.
    ended: bool,
}

impl Drop for LocalPermit {
    fn drop(&mut self) {
        if self.ended {
            return;
        }
        let mut state = self
            .in_flight
            .0
            .state
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        state.last_end = Some(Instant::now());
    }
}

/// The origins with state, and the calls since they were last swept.
#[derive(Default)]
struct Origins {
    /// Keyed with foldhash: every request looks its origin up here.
    slots: HashMap<Arc<str>, Arc<Slot>, foldhash::fast::RandomState>,
    since_sweep: usize,
}

pub(crate) struct Politeness {
    pub(crate) config: PolitenessConfig,
    origins: Mutex<Origins>,
}

impl Politeness {
    /// The settings it paces by.
    pub(crate) fn config(&self) -> &PolitenessConfig {
        &self.config
    }

    pub(crate) fn new(config: PolitenessConfig) -> Politeness {
        Politeness {
            config,
            origins: Mutex::new(Origins::default()),
        }
    }

    fn slot(&self, origin: &str) -> Arc<Slot> {
        let mut origins = self.origins.lock().unwrap_or_else(|e| e.into_inner());
        // Sweep idle origins after half as many calls as there are origins (at least 1024): a
        // sweep costs O(origins), so this is amortised O(1) per call.
        origins.since_sweep += 1;
        if origins.since_sweep > (origins.slots.len() / 2).max(1024) {
            origins.since_sweep = 0;
            let now = Instant::now();
            let concurrency = self.config.concurrency.max(1);
            let forget_failures_after = self.config.backoff_max;
            origins
                .slots
                .retain(|_, slot| !slot.is_idle(now, concurrency, forget_failures_after));
        }
        if let Some(slot) = origins.slots.get(origin) {
            return slot.clone();
        }
        let slot = Arc::new(Slot {
            in_flight: Semaphore::new(self.config.concurrency.max(1)),
            state: Mutex::new(SlotState {
                limiter: None,
                last_start: None,
                last_end: None,
                paused_until: None,
                failures: 0,
            }),
        });
        origins.slots.insert(origin.into(), slot.clone());
        slot
    }

    /// Waits for the origin's turn: a free place (concurrency), the end of any pause, and the
    /// interval since the last start. Returns the place and how long the wait was.
    pub(crate) async fn acquire(
        &self,
        origin: &str,
        interval: Duration,
    ) -> (LocalPermit, Duration) {
        // The usual request: a free place and its turn now. Taken without the clock reads that
        // time a wait, and without the waiting future, which is boxed (it is the large one).
        if let Ok(permit) = self.try_acquire(origin, interval, Instant::now()) {
            return (permit, Duration::ZERO);
        }
        Box::pin(self.acquire_waiting(origin, interval)).await
    }

    /// [`Politeness::acquire`] when the turn is not now: waits for a place and the interval.
    async fn acquire_waiting(&self, origin: &str, interval: Duration) -> (LocalPermit, Duration) {
        let started = Instant::now();
        let place = self.place(origin).await;
        let permit = self.space(origin, interval, place).await;
        (permit, started.elapsed())
    }

    /// Waits for a free place at the origin (its concurrency), nothing else.
    pub(crate) async fn place(&self, origin: &str) -> Place {
        let slot = self.slot(origin);
        // The semaphore is never closed, so acquiring cannot fail; a closed one would only mean
        // no limit, which is handled by waiting for nothing.
        match slot.in_flight.acquire().await {
            Ok(permit) => permit.forget(),
            Err(_) => unreachable!("politeness semaphores are never closed"),
        }
        Place {
            in_flight: InFlight(slot),
        }
    }

    /// With a place held, waits for the end of any pause and the interval since the last start
    /// (and end), then records the start. An interval of zero only records it.
    pub(crate) async fn space(
        &self,
        origin: &str,
        interval: Duration,
        place: Place,
    ) -> LocalPermit {
        let started = Instant::now();
        let from_end = self.config.spaces_from_end();
        while let Some((at, _)) = place
            .in_flight
            .0
            .next_start(interval, from_end, Instant::now())
        {
            tokio::time::sleep_until(at).await;
        }
        let waited = started.elapsed();
        if !waited.is_zero() {
            debug!(origin, ?waited, ?interval, "politeness wait");
        }
        LocalPermit {
            in_flight: place.in_flight,
            ended: false,
        }
    }

    /// A free place at the origin now, or why not (every place in use).
    pub(crate) fn try_place(&self, origin: &str) -> Result<Place, ReadyLater> {
        let slot = self.slot(origin);
        let taken = slot.in_flight.try_acquire().map(|permit| permit.forget());
        match taken {
            Ok(()) => Ok(Place {
                in_flight: InFlight(slot),
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
        match place
            .in_flight
            .0
            .next_start(interval, self.config.spaces_from_end(), now)
        {
            None => Ok(LocalPermit {
                in_flight: place.in_flight,
                ended: false,
            }),
            Some((at, reason)) => Err(ReadyLater {
                ready_in: Some(at.saturating_duration_since(now)),
                reason,
            }),
        }
    }

    /// The origin's turn as of `now` (a clock read the caller shares with its robots.txt
    /// verdict), or when it will come and why (schedule, don't wait).
    pub(crate) fn try_acquire(
        &self,
        origin: &str,
        interval: Duration,
        now: Instant,
    ) -> Result<LocalPermit, ReadyLater> {
        let place = self.try_place(origin)?;
        self.try_space(interval, place, now)
    }

    /// How long until a request to the origin could start: zero when now, `None` when every
    /// place is in use (it depends on when a request in flight ends). Takes nothing.
    pub(crate) fn next_ready(&self, origin: &str, interval: Duration) -> Option<Duration> {
        let slot = self
            .origins
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .slots
            .get(origin)
            .cloned();
        let Some(slot) = slot else {
            return Some(Duration::ZERO);
        };
        if slot.in_flight.available_permits() == 0 {
            return None;
        }
        Some(
            slot.peek(interval, self.config.spaces_from_end())
                .map_or(Duration::ZERO, |at| {
                    at.saturating_duration_since(Instant::now())
                }),
        )
    }

    /// Learns from a response: 429/503 pause the origin, a success ends the pause.
    pub(crate) fn observe(&self, origin: &str, status: u16, retry_after: Option<Duration>) {
        let slot = self.slot(origin);
        let mut state = slot.state.lock().unwrap_or_else(|e| e.into_inner());
        self.apply(origin, &mut state, status, retry_after);
    }

    /// Ends a request through its own place: the response's status and the request's end in
    /// one lock of the origin's state (no second lookup of the origin on the request path).
    pub(crate) fn finish(
        &self,
        mut permit: LocalPermit,
        origin: &str,
        status: u16,
        retry_after: Option<Duration>,
    ) {
        let mut state = permit
            .in_flight
            .0
            .state
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        self.apply(origin, &mut state, status, retry_after);
        // Only spacing from the end reads it (a clock read saved per request otherwise).
        if self.config.spaces_from_end() {
            state.last_end = Some(Instant::now());
        }
        drop(state);
        permit.ended = true;
    }

    fn apply(
        &self,
        origin: &str,
        state: &mut SlotState,
        status: u16,
        retry_after: Option<Duration>,
    ) {
        if status == 429 || status == 503 {
            state.failures = state.failures.saturating_add(1);
            let pause = match retry_after {
                Some(asked) if asked > self.config.max_retry_after => {
                    warn!(origin, ?asked, applied = ?self.config.max_retry_after, "Retry-After above the maximum: clamped");
                    self.config.max_retry_after
                }
                Some(asked) => asked,
                None => self.config.backoff(state.failures),
            };
            let until = later(Instant::now(), pause);
            state.paused_until = Some(state.paused_until.map_or(until, |p| p.max(until)));
            warn!(
                origin,
                status,
                ?pause,
                failures = state.failures,
                "backing off"
            );
            crate::telemetry::paused(status);
        } else if (200..400).contains(&status)
            && (state.failures > 0 || state.paused_until.is_some())
        {
            state.failures = 0;
            state.paused_until = None;
            debug!(origin, status, "back-off ended");
        }
    }

    /// The pause in force for an origin, if any.
    pub(crate) fn paused_until(&self, origin: &str) -> Option<Instant> {
        let origins = self.origins.lock().unwrap_or_else(|e| e.into_inner());
        let slot = origins.slots.get(origin)?;
        let state = slot.state.lock().unwrap_or_else(|e| e.into_inner());
        state.paused_until.filter(|p| *p > Instant::now())
    }

    /// How many origins have state.
    #[cfg(test)]
    pub(crate) fn tracked(&self) -> usize {
        self.origins
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .slots
            .len()
    }
}

impl Slot {
    /// `None` when a request may start at `now` (and records the start), else when to look
    /// again and why. With `from_end`, the interval also runs from the previous request's end.
    fn next_start(
        &self,
        interval: Duration,
        from_end: bool,
        now: Instant,
    ) -> Option<(Instant, NotReadyReason)> {
        let spacing = |at| Some((at, NotReadyReason::Spacing));
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(until) = state.paused_until.filter(|p| *p > now) {
            return Some((until, NotReadyReason::Paused));
        }
        if from_end
            && let Some(end) = state.last_end
            && now < later(end, interval)
        {
            return spacing(later(end, interval));
        }
        if interval.is_zero() {
            state.last_start = Some(now);
            return None;
        }
        let rebuild = state
            .limiter
            .as_ref()
            .is_none_or(|(built_for, _)| *built_for != interval);
        if rebuild {
            let quota = Quota::with_period(interval)?; // non-zero here
            let limiter = RateLimiter::direct_with_clock(quota, TokioClock);
            // A new interval still counts from the last start.
            if let Some(last) = state.last_start
                && now < later(last, interval)
            {
                state.limiter = Some((interval, limiter));
                return spacing(later(last, interval));
            }
            state.limiter = Some((interval, limiter));
        }
        let (_, limiter) = state.limiter.as_ref()?;
        match limiter.check() {
            Ok(()) => {
                state.last_start = Some(now);
                None
            }
            Err(not_until) => spacing(not_until.earliest_possible().0),
        }
    }

    /// When a request could start, without taking the turn: `None` when now.
    fn peek(&self, interval: Duration, from_end: bool) -> Option<Instant> {
        let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        if let Some(until) = state.paused_until.filter(|p| *p > now) {
            return Some(until);
        }
        let after = |at: Option<Instant>| at.map(|t| later(t, interval)).filter(|t| *t > now);
        let from_start = after(state.last_start);
        let from_end = after(state.last_end.filter(|_| from_end));
        from_start.max(from_end)
    }

    /// Whether forgetting the origin changes nothing that matters: nothing in flight or waiting,
    /// the interval over since the last start and end, and any pause over for
    /// `forget_failures_after` (after which its back-off may start afresh).
    fn is_idle(
        self: &Arc<Self>,
        now: Instant,
        concurrency: usize,
        forget_failures_after: Duration,
    ) -> bool {
        if Arc::strong_count(self) > 1 || self.in_flight.available_permits() < concurrency {
            return false;
        }
        let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let interval = state.limiter.as_ref().map_or(Duration::ZERO, |(i, _)| *i);
        let elapsed =
            |at: Option<Instant>, after: Duration| at.is_none_or(|t| later(t, after) <= now);
        let pause_forgotten = match state.paused_until {
            Some(until) => later(until, forget_failures_after) <= now,
            None => state.failures == 0,
        };
        pause_forgotten && elapsed(state.last_start, interval) && elapsed(state.last_end, interval)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interval_is_raised_by_crawl_delay_and_clamped() {
        let config = PolitenessConfig::default();
        assert_eq!(config.interval(None), (Duration::from_secs(1), None));
        assert_eq!(
            config.interval(Some(Duration::from_millis(200))),
            (Duration::from_secs(1), None)
        );
        assert_eq!(
            config.interval(Some(Duration::from_secs(5))),
            (Duration::from_secs(5), None)
        );
        assert_eq!(
            config.interval(Some(Duration::from_secs(90))),
            (Duration::from_secs(30), Some(Duration::from_secs(90)))
        );
        let ignoring = PolitenessConfig {
            obey_crawl_delay: false,
            ..Default::default()
        };
        assert_eq!(
            ignoring.interval(Some(Duration::from_secs(5))),
            (Duration::from_secs(1), None)
        );
    }

    #[test]
    fn backoff_doubles_to_the_cap() {
        let config = PolitenessConfig::default();
        let secs: Vec<u64> = (1..=8).map(|n| config.backoff(n).as_secs()).collect();
        assert_eq!(secs, [5, 10, 20, 40, 80, 160, 300, 300]);
    }

    #[tokio::test(start_paused = true)]
    async fn paused_origins_are_swept_once_their_pause_is_long_over() {
        let politeness = Politeness::new(PolitenessConfig {
            min_delay: Duration::from_millis(10),
            ..Default::default()
        });
        for i in 0..3000 {
            let origin = format!("https://paused{i}.example");
            let (permit, _) = politeness.acquire(&origin, Duration::from_millis(10)).await;
            drop(permit);
            politeness.observe(&origin, 429, Some(Duration::from_secs(60)));
        }
        assert_eq!(politeness.tracked(), 3000);
        // While paused (and for a while after), they are kept: forgetting would lose the pause
        // and the back-off count.
        tokio::time::advance(Duration::from_secs(120)).await;
        for i in 0..1100 {
            let (permit, _) = politeness
                .acquire(
                    &format!("https://busy{i}.example"),
                    Duration::from_millis(10),
                )
                .await;
            drop(permit);
        }
        assert!(politeness.tracked() >= 3000, "{}", politeness.tracked());
        // Once the pause has been over for the longest back-off, they go.
        tokio::time::advance(PolitenessConfig::default().backoff_max).await;
        for i in 0..3000 {
            let (permit, _) = politeness
                .acquire(
                    &format!("https://later{i}.example"),
                    Duration::from_millis(10),
                )
                .await;
            drop(permit);
            tokio::time::advance(Duration::from_millis(1)).await;
        }
        let tracked = politeness.tracked();
        assert!(tracked < 2100, "{tracked} origins tracked");
        assert!(
            politeness.paused_until("https://paused0.example").is_none(),
            "a forgotten origin has no pause"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn the_interval_runs_from_the_end_of_a_slow_request() {
        for (spacing, expected_gap) in [
            (Spacing::FromEnd, Duration::from_secs(4)),
            (Spacing::StartToStart, Duration::from_secs(3)),
        ] {
            let politeness = Politeness::new(PolitenessConfig {
                spacing,
                ..Default::default()
            });
            let origin = "https://slow.example";
            let interval = Duration::from_secs(1);
            let (permit, _) = politeness.acquire(origin, interval).await;
            let first = Instant::now();
            // The server takes 3 s to answer.
            tokio::time::sleep(Duration::from_secs(3)).await;
            drop(permit);
            let (_permit, _) = politeness.acquire(origin, interval).await;
            assert_eq!(first.elapsed(), expected_gap, "{spacing:?}");
        }
        // With several requests in flight there is no single "previous end": start to start.
        let politeness = Politeness::new(PolitenessConfig {
            concurrency: 2,
            ..Default::default()
        });
        let (permit, _) = politeness
            .acquire("https://o.example", Duration::from_secs(1))
            .await;
        let first = Instant::now();
        tokio::time::sleep(Duration::from_secs(3)).await;
        drop(permit);
        let _second = politeness
            .acquire("https://o.example", Duration::from_secs(1))
            .await;
        assert_eq!(first.elapsed(), Duration::from_secs(3));
    }

    #[tokio::test(start_paused = true)]
    async fn idle_origins_are_swept() {
        let politeness = Politeness::new(PolitenessConfig {
            min_delay: Duration::from_millis(10),
            ..Default::default()
        });
        for i in 0..5000 {
            let (permit, _) = politeness
                .acquire(&format!("https://h{i}.example"), Duration::from_millis(10))
                .await;
            drop(permit);
            tokio::time::advance(Duration::from_millis(1)).await;
        }
        assert!(
            politeness.tracked() < 2100,
            "{} origins tracked",
            politeness.tracked()
        );
    }
}
