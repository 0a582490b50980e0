//! Politeness per group of origins (spec section 8; the group is named by [`crate::group`]): one
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

use std::collections::HashMap;
use std::ops::Add;
use std::sync::atomic::{AtomicBool, Ordering};
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
use crate::pacing::group::PolitenessKey;

/// Where the interval between two requests to one origin is measured from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Spacing {
    /// From the previous request's start, and also from its end (its body's last byte) when one
    /// request is in flight per origin: a server that takes 3 s to answer still gets the whole
    /// interval of quiet before the next request (as Yandex defines Crawl-delay). The default.
    #[default]
    FromEnd,
    /// From the previous request's start only: a slow server may get the next request as soon
    /// as it answers.
    StartToStart,
}

/// What to do with a `Crawl-delay` or `Request-rate` above the maximum delay
/// ([`crate::RobotsConfig::max_delay`]): nothing crawls faster than a site asked unless the
/// caller chose so by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum OverlongCrawlDelay {
    /// Refuse the origin's requests with [`crate::RobotsError::CrawlDelayTooLong`] (as Nutch and
    /// StormCrawler skip such hosts). The default.
    #[default]
    Refuse,
    /// Wait the whole delay the site asked (in schedule mode, the refusal says when).
    Honour,
    /// Crawl at the maximum delay, faster than the site asked (logged once per origin).
    Clamp,
}

impl OverlongCrawlDelay {
    /// The name used on the command line: `refuse`, `honor`, `clamp`.
    pub fn as_str(self) -> &'static str {
        match self {
            OverlongCrawlDelay::Refuse => "refuse",
            OverlongCrawlDelay::Honour => "honor",
            OverlongCrawlDelay::Clamp => "clamp",
        }
    }
}

impl std::str::FromStr for OverlongCrawlDelay {
    type Err = String;

    /// `refuse`, `honor` (or `honour`), `clamp`.
    fn from_str(text: &str) -> Result<OverlongCrawlDelay, String> {
        match text {
            "refuse" => Ok(OverlongCrawlDelay::Refuse),
            "honor" | "honour" => Ok(OverlongCrawlDelay::Honour),
            "clamp" => Ok(OverlongCrawlDelay::Clamp),
            other => Err(format!(
                "unknown overlong Crawl-delay policy `{other}` (expected refuse, honor or clamp)"
            )),
        }
    }
}

/// The politeness numbers. Defaults are polite: 1 request at a time, 1 s apart, at most 30 s.
#[derive(Debug, Clone)]
pub(crate) struct PolitenessConfig {
    /// What requests share a budget ([`PolitenessKey::Host`]).
    pub key: PolitenessKey,
    /// Minimum interval between request starts to one group (1 s).
    pub min_delay: Duration,
    /// Crawl-delay and Request-rate raise the interval up to this (30 s); more is handled by
    /// `overlong`.
    pub max_delay: Duration,
    /// A Crawl-delay above `max_delay` ([`OverlongCrawlDelay::Refuse`]).
    pub overlong: OverlongCrawlDelay,
    /// Honour Crawl-delay and Request-rate (true).
    pub obey_crawl_delay: bool,
    /// Requests in flight per group (1).
    pub concurrency: usize,
    /// A `Retry-After`, or a rate-limit reset, pauses the group at most this long (10 min).
    pub max_retry_after: Duration,
    /// Without `Retry-After`, the first pause (5 s), doubled per consecutive distress…
    pub backoff_base: Duration,
    /// …up to this (5 min).
    pub backoff_max: Duration,
    /// The statuses that pause the group (429, 500, 502, 503, 504).
    pub backoff_statuses: StatusSet,
    /// Whether connect errors, resets and timeouts pause the group (true).
    pub backoff_on_network_errors: bool,
    /// With one request in flight, the interval after a response is at least this × the time
    /// the server took to answer, up to `max_delay` (1; 0 turns it off).
    pub delay_factor: f64,
    /// Where the interval is measured from ([`Spacing::FromEnd`]).
    pub spacing: Spacing,
    /// Whether rate-limit headers that say nothing is left pause the group (true).
    pub rate_limit_headers: bool,
    /// How long a waiting request lets an answered request's unread body hold a place before
    /// taking it over (30 s).
    pub unread_body_grace: Duration,
}

/// A set of HTTP statuses (100-599) as bits: read on every response, so a lookup is one shift.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct StatusSet([u64; 10]);

impl StatusSet {
    pub(crate) fn of(statuses: impl IntoIterator<Item = u16>) -> StatusSet {
        let mut set = StatusSet::default();
        for status in statuses {
            if let Some(word) = set.0.get_mut(usize::from(status / 64)) {
                *word |= 1 << (status % 64);
            }
        }
        set
    }

    #[inline]
    pub(crate) fn contains(&self, status: u16) -> bool {
        self.0
            .get(usize::from(status / 64))
            .is_some_and(|word| word >> (status % 64) & 1 == 1)
    }
}

/// The statuses that pause a group by default: "slow down" and the server errors of an
/// overloaded server.
pub(crate) const DEFAULT_BACKOFF_STATUSES: [u16; 5] = [429, 500, 502, 503, 504];

impl Default for PolitenessConfig {
    fn default() -> PolitenessConfig {
        PolitenessConfig {
            key: PolitenessKey::Host,
            min_delay: Duration::from_secs(1),
            max_delay: Duration::from_secs(30),
            overlong: OverlongCrawlDelay::Refuse,
            obey_crawl_delay: true,
            concurrency: 1,
            max_retry_after: Duration::from_secs(600),
            backoff_base: Duration::from_secs(5),
            backoff_max: Duration::from_secs(300),
            backoff_statuses: StatusSet::of(DEFAULT_BACKOFF_STATUSES),
            backoff_on_network_errors: true,
            delay_factor: 1.0,
            spacing: Spacing::FromEnd,
            rate_limit_headers: true,
            unread_body_grace: Duration::from_secs(30),
        }
    }
}

/// The longest interval a site may ask for (24 hours, the longest a robots.txt copy lives): a
/// Crawl-delay or Request-rate above it is refused under every [`OverlongCrawlDelay`] policy,
/// since a site asking for more is in effect asking not to be crawled. It also bounds every
/// interval the pacers compute with, whatever the configuration says.
pub const MAX_INTERVAL: Duration = Duration::from_secs(24 * 3600);

/// The interval an origin's requests are spaced by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Interval {
    /// This interval; with the delay asked when it was clamped to `max_delay`.
    Applied(Duration, Option<Duration>),
    /// The site asked for more than `max_delay`, and that is refused: the delay asked.
    TooLong(Duration),
}

impl PolitenessConfig {
    /// The interval for an origin given what its robots.txt asks.
    pub fn interval(&self, asked: Option<Duration>) -> Interval {
        let asked = asked.filter(|_| self.obey_crawl_delay);
        let wanted = asked
            .map_or(self.min_delay, |a| a.max(self.min_delay))
            .min(MAX_INTERVAL);
        match asked {
            // More than a robots.txt copy lives: refused whatever the policy.
            Some(asked) if asked > MAX_INTERVAL => Interval::TooLong(asked),
            Some(asked) if wanted > self.max_delay && asked > self.max_delay => match self.overlong
            {
                OverlongCrawlDelay::Refuse => Interval::TooLong(asked),
                OverlongCrawlDelay::Honour => Interval::Applied(wanted, None),
                OverlongCrawlDelay::Clamp => {
                    Interval::Applied(self.max_delay.min(MAX_INTERVAL), Some(asked))
                }
            },
            _ => Interval::Applied(wanted, None),
        }
    }

    /// Whether one request at a time goes to a group (the adaptive delay and spacing from the
    /// end apply then).
    fn one_at_a_time(&self) -> bool {
        self.concurrency <= 1
    }

    /// Whether the interval also runs from the end of the previous request.
    fn spaces_from_end(&self) -> bool {
        self.spacing == Spacing::FromEnd && self.one_at_a_time()
    }

    /// Whether the end of a request is read at all (spacing from it, or the adaptive delay).
    fn tracks_end(&self) -> bool {
        self.one_at_a_time() && (self.spacing == Spacing::FromEnd || self.delay_factor > 0.0)
    }

    /// The back-off after `failures` consecutive distress responses, before jitter.
    fn backoff(&self, failures: u32) -> Duration {
        let factor = 2u32.saturating_pow(failures.saturating_sub(1).min(31));
        self.backoff_base
            .saturating_mul(factor)
            .min(self.backoff_max)
    }

    /// The back-off after `failures` consecutive distress responses, jittered, and never above
    /// `backoff_max` (the jitter is applied before the cap).
    pub(crate) fn jittered_backoff(&self, failures: u32) -> Duration {
        jittered(self.backoff(failures)).min(self.backoff_max)
    }

    /// Whether a response (or a request's failure) is distress.
    pub(crate) fn is_distress(&self, outcome: Outcome) -> bool {
        match outcome {
            Outcome::Status(status) => self.backoff_statuses.contains(status),
            Outcome::NetworkError => self.backoff_on_network_errors,
            Outcome::Cancelled => false,
        }
    }

    /// The adaptive interval after a request that took `took` (zero when off).
    pub(crate) fn adaptive(&self, took: Duration) -> Duration {
        if self.delay_factor > 0.0 && self.delay_factor.is_finite() {
            Duration::try_from_secs_f64(took.as_secs_f64() * self.delay_factor)
                .unwrap_or(self.max_delay)
                .min(self.max_delay)
        } else {
            Duration::ZERO
        }
    }
}

/// A back-off varied by -10%…+10% at random, so groups paused together do not return together
/// (saturating: a configured maximum may be as long as `Duration::MAX`).
pub(crate) fn jittered(pause: Duration) -> Duration {
    Duration::try_from_secs_f64(pause.as_secs_f64() * (0.9 + 0.2 * fastrand::f64()))
        .unwrap_or(pause)
}

/// How a request ended, as pacing sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// A response head with this status.
    Status(u16),
    /// A connect error, reset or timeout.
    NetworkError,
    /// Dropped without an answer (cancelled, or failed otherwise): nothing learnt.
    Cancelled,
}

/// What a request's end teaches: how it ended, and what its headers asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Observed {
    pub(crate) outcome: Outcome,
    /// `Retry-After` (read on distress only), as the server sent it (capped where applied).
    pub(crate) retry_after: Option<Duration>,
    /// The rate-limit headers' reset, when they said nothing is left.
    pub(crate) rate_limited: Option<Duration>,
    /// The rate-limit headers said nothing is left without saying until when: a back-off step.
    pub(crate) rate_limit_step: bool,
}

impl Observed {
    /// A response's status and headers, as `config` reads them.
    pub(crate) fn response(
        status: u16,
        headers: &http::HeaderMap,
        config: &PolitenessConfig,
    ) -> Observed {
        // `Retry-After` matters only for a distress status: not looked up on the usual 200.
        let distress = config.backoff_statuses.contains(status);
        let limited = config
            .rate_limit_headers
            .then(|| robots_fetch::rate_limit_pause(headers))
            .flatten();
        Observed {
            outcome: Outcome::Status(status),
            retry_after: distress
                .then(|| robots_fetch::retry_after(headers))
                .flatten(),
            rate_limited: limited.map(|l| l.reset).filter(|r| !r.is_zero()),
            rate_limit_step: limited.is_some_and(|l| l.without_reset),
        }
    }

    /// A request that failed before its response head.
    pub(crate) fn failure(outcome: Outcome) -> Observed {
        Observed {
            outcome,
            retry_after: None,
            rate_limited: None,
            rate_limit_step: false,
        }
    }

    /// Whether it backs the group off a step: a distress response or failure, or rate-limit
    /// headers that said "stop" without "until".
    pub(crate) fn backs_off(&self, config: &PolitenessConfig) -> bool {
        config.is_distress(self.outcome) || self.rate_limit_step
    }
}

/// A pause of a group, and why: what [`crate::RobotsInfo::pause`] reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupPause {
    /// How long the group is paused from the response on.
    pub duration: Duration,
    /// Why.
    pub reason: PauseReason,
}

/// Why a group was paused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum PauseReason {
    /// A distress response with `Retry-After` (capped at the maximum).
    RetryAfter,
    /// A distress response (or network error) without `Retry-After`: the exponential back-off,
    /// after this many in a row.
    Backoff {
        /// Consecutive distress responses so far.
        failures: u32,
    },
    /// Rate-limit headers said nothing is left: until their reset (capped at the maximum).
    RateLimit,
}

impl PauseReason {
    /// `retry-after`, `backoff`, `rate-limit`.
    pub fn as_str(self) -> &'static str {
        match self {
            PauseReason::RetryAfter => "retry-after",
            PauseReason::Backoff { .. } => "backoff",
            PauseReason::RateLimit => "rate-limit",
        }
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

type Limiter = RateLimiter<NotKeyed, InMemoryState, TokioClock, NoOpMiddleware<TokioInstant>>;

struct SlotState {
    /// The limiter and the interval it was built for (rebuilt when the interval changes).
    limiter: Option<(Duration, Limiter)>,
    last_start: Option<Instant>,
    /// When the last request ended (its body read or dropped, or it failed).
    last_end: Option<Instant>,
    paused_until: Option<Instant>,
    failures: u32,
    /// `delay_factor` × the last response time (one request at a time): the least interval
    /// from the last end.
    adaptive: Duration,
    /// A `Retry-After` or rate-limit reset above the maximum was said (once per group).
    cap_warned: bool,
    /// Requests in flight whose response head came (their bodies hold their places).
    answered: usize,
    /// Places taken over from such requests by waiters; as many of their ends give none back.
    taken_over: usize,
    /// The requests waiting for their turn, by ticket, first come first served (at most the
    /// group's concurrency: only requests holding a place wait here).
    queue: std::collections::VecDeque<u64>,
    /// The next ticket.
    tickets: u64,
}

/// What [`Slot::next_start`] says.
enum Turn {
    /// The request starts now (its start is recorded).
    Go,
    /// Not before this, and why.
    At(Instant, NotReadyReason),
    /// Requests that began to wait earlier go first.
    Behind,
}

/// A request's place in its group's queue, left when dropped (its turn came, or the request
/// was given up), which wakes the others to look again.
struct Queued<'a> {
    slot: &'a Slot,
    ticket: Option<u64>,
}

impl Drop for Queued<'_> {
    fn drop(&mut self) {
        let Some(ticket) = self.ticket else { return };
        let mut state = self.slot.state.lock().unwrap_or_else(|e| e.into_inner());
        // Still in the queue: not served, given up while it waited (its turn takes it out).
        let given_up = match state.queue.iter().position(|t| *t == ticket) {
            Some(at) => {
                state.queue.remove(at);
                true
            }
            None => false,
        };
        drop(state);
        self.slot.turns.notify_waiters();
        if given_up && !self.slot.said.given_up.swap(true, Ordering::Relaxed) {
            given_up_warning(&self.slot.key);
        }
    }
}

/// Says (once per pacer) that a request was dropped while it waited for its turn: the usual
/// cause is a timeout (or a limit) around the robots layer or middleware, whose clock then counts
/// the politeness wait, so requests fail without being sent.
#[cold]
fn given_up_warning(group: &str) {
    warn!(
        group,
        "a request was given up while it waited for its group's turn: if a timeout or a concurrency limit wraps the robots layer or middleware, it counts the politeness wait (and holds its permits meanwhile); put it inside (see docs/composition.md)"
    );
}

/// What a pacer has said once already (shared by its groups).
#[derive(Default)]
struct Said {
    given_up: AtomicBool,
    unread_body: AtomicBool,
}

struct Slot {
    /// The group's key, for logs.
    key: Arc<str>,
    /// The pacer's settings (a permit's end reads them).
    config: Arc<PolitenessConfig>,
    /// What the pacer has said once already.
    said: Arc<Said>,
    /// Said when the first of the queue of waiting requests leaves it, so the next one looks.
    turns: tokio::sync::Notify,
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
/// The second field is false for a place another request took over (see [`Politeness::place`]):
/// it is not given back twice.
struct InFlight(Arc<Slot>, bool);

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
    in_flight: InFlight,
    /// Set by `Politeness::finish`, which recorded the end already.
    ended: bool,
    /// Set by `Politeness::observe_head`: the response head came, the body is being read.
    answered: bool,
}

impl LocalPermit {
    fn new(in_flight: InFlight) -> LocalPermit {
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

/// The groups with state, and the calls since they were last swept.
#[derive(Default)]
struct Origins {
    /// Keyed with foldhash: every request looks its group up here.
    slots: HashMap<Arc<str>, Arc<Slot>, foldhash::fast::RandomState>,
    since_sweep: usize,
}

pub(crate) struct Politeness {
    /// Shared with every group's slot (a permit's end reads it).
    pub(crate) config: Arc<PolitenessConfig>,
    origins: Mutex<Origins>,
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
            origins: Mutex::new(Origins::default()),
            said: Arc::default(),
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
        let key: Arc<str> = origin.into();
        let slot = Arc::new(Slot {
            key: key.clone(),
            config: self.config.clone(),
            said: self.said.clone(),
            turns: tokio::sync::Notify::new(),
            in_flight: Semaphore::new(self.config.concurrency.max(1)),
            state: Mutex::new(SlotState {
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
        origins.slots.insert(key, slot.clone());
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
        let place = self.place(origin).await;
        // The wait counts from here: time queued behind this process's own earlier requests to
        // the group is theirs, not a politeness wait.
        let started = Instant::now();
        let permit = self.space(origin, interval, place).await;
        (permit, started.elapsed())
    }

    /// Waits for a free place at the origin (its concurrency), nothing else.
    ///
    /// A place is held until its response's body has been read or dropped. A body kept unread
    /// would hold it for ever (a `join_all` of requests to one server keeps every response until
    /// the last comes): after waiting `unread_body_grace` while a request whose response head
    /// came long ago still holds a place, the waiter takes that place over, and says so once.
    pub(crate) async fn place(&self, origin: &str) -> Place {
        let slot = self.slot(origin);
        let grace = self.config.unread_body_grace;
        {
            let mut acquire = std::pin::pin!(slot.in_flight.acquire());
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
                    Err(_) if slot.take_over_unread() => {
                        if !slot.said.unread_body.swap(true, Ordering::Relaxed) {
                            unread_body_warning(origin, grace);
                        }
                        break;
                    }
                    Err(_) => continue,
                }
            }
        }
        Place {
            in_flight: InFlight(slot, true),
        }
    }

    /// With a place held, waits for the end of any pause and the interval since the last start
    /// (and end), then records the start. An interval of zero only records it.
    ///
    /// Requests that wait are served in the order they began to wait (a queue per group): after
    /// a pause, the group's requests start in the order they were made, not in the order their
    /// timers happen to fire.
    pub(crate) async fn space(
        &self,
        origin: &str,
        interval: Duration,
        place: Place,
    ) -> LocalPermit {
        let started = Instant::now();
        let slot = place.in_flight.0.clone();
        // The place in the group's queue once this request waits; leaving it (its turn came, or
        // the request was dropped) lets the next one look.
        let mut queued = Queued {
            slot: &slot,
            ticket: None,
        };
        loop {
            // Made before the look, so that a turn handed on meanwhile is not missed.
            let handed_on = slot.turns.notified();
            let now = Instant::now();
            match slot.next_start(interval, &self.config, now, Some(&mut queued.ticket)) {
                Turn::At(at, _) => tokio::time::sleep_until(at).await,
                Turn::Behind => handed_on.await,
                Turn::Go => {
                    drop(queued);
                    let waited = now.saturating_duration_since(started);
                    if !waited.is_zero() {
                        debug!(group = origin, ?waited, ?interval, "politeness wait");
                    }
                    return LocalPermit::new(place.in_flight);
                }
            }
        }
    }

    /// A free place at the origin now, or why not (every place in use).
    pub(crate) fn try_place(&self, origin: &str) -> Result<Place, ReadyLater> {
        let slot = self.slot(origin);
        let taken = slot.in_flight.try_acquire().map(|permit| permit.forget());
        match taken {
            Ok(()) => Ok(Place {
                in_flight: InFlight(slot, true),
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
        let slot = &place.in_flight.0;
        match slot.next_start(interval, &self.config, now, None) {
            Turn::Go => Ok(LocalPermit::new(place.in_flight)),
            Turn::At(at, reason) => Err(ReadyLater {
                ready_in: Some(at.saturating_duration_since(now)),
                reason,
            }),
            // Requests waiting already go first: ready once they have gone, which is at least
            // when the group would be ready for the next.
            Turn::Behind => Err(ReadyLater {
                ready_in: Some(
                    slot.peek(interval, &self.config)
                        .map_or(interval, |at| at.saturating_duration_since(now)),
                ),
                reason: NotReadyReason::Spacing,
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
            slot.peek(interval, &self.config)
                .map_or(Duration::ZERO, |at| {
                    at.saturating_duration_since(Instant::now())
                }),
        )
    }

    /// Learns from a response seen without a request's place (a hook after the fact): distress
    /// pauses the group, any other response ends the streak, rate-limit headers pause it.
    pub(crate) fn observe(&self, group: &str, observed: Observed) -> Option<GroupPause> {
        let slot = self.slot(group);
        let mut state = slot.state.lock().unwrap_or_else(|e| e.into_inner());
        self.apply(&slot.key, &mut state, observed, None)
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
        let slot = &permit.in_flight.0;
        let mut state = slot.state.lock().unwrap_or_else(|e| e.into_inner());
        // The head's time, until the body's end replaces it.
        let took = self
            .config
            .tracks_end()
            .then(Instant::now)
            .zip(state.last_start)
            .map(|(now, start)| now.saturating_duration_since(start));
        let pause = self.apply(&slot.key, &mut state, observed, took);
        if !permit.answered && matches!(observed.outcome, Outcome::Status(_)) {
            permit.answered = true;
            state.answered += 1;
        }
        pause
    }

    /// Ends a request through its own place: what it taught and its end, in one lock of the
    /// group's state (no second lookup of the group on the request path).
    #[inline]
    pub(crate) fn finish(&self, mut permit: LocalPermit, observed: Observed) -> Option<GroupPause> {
        let slot = &permit.in_flight.0;
        let mut state = slot.state.lock().unwrap_or_else(|e| e.into_inner());
        // Only spacing from the end and the adaptive delay read it (a clock read saved per
        // request otherwise).
        let now = self.config.tracks_end().then(Instant::now);
        // With one request at a time, the last start is this request's: the adaptive delay
        // measures from there (the permit stays small: it is moved with every request).
        let took = now
            .zip(state.last_start)
            .map(|(now, start)| now.saturating_duration_since(start));
        let pause = self.apply(&slot.key, &mut state, observed, took);
        if now.is_some() {
            state.last_end = now;
        }
        drop(state);
        permit.ended = true;
        pause
    }

    /// What a request's end teaches the group's state; the pause it set, if any.
    fn apply(
        &self,
        group: &str,
        state: &mut SlotState,
        observed: Observed,
        took: Option<Duration>,
    ) -> Option<GroupPause> {
        let config = &self.config;
        let mut pause = None;
        if observed.backs_off(config) {
            state.failures = state.failures.saturating_add(1);
            // A `Retry-After` may lengthen the back-off the streak calls for, never shorten it:
            // `Retry-After: 0` (or a date in the past) on a 503 still backs off.
            let backoff = config.jittered_backoff(state.failures);
            let asked = observed
                .retry_after
                .filter(|_| config.is_distress(observed.outcome))
                .map(|asked| state.capped(group, asked, config.max_retry_after, "Retry-After"));
            let (duration, reason) = match asked {
                Some(asked) if asked >= backoff => (asked, PauseReason::RetryAfter),
                _ => (
                    backoff,
                    PauseReason::Backoff {
                        failures: state.failures,
                    },
                ),
            };
            state.pause_for(duration);
            warn!(
                group,
                outcome = ?observed.outcome,
                ?duration,
                failures = state.failures,
                "backing off"
            );
            crate::telemetry::paused(observed.outcome.status());
            pause = Some(GroupPause { duration, reason });
        } else if matches!(observed.outcome, Outcome::Status(_))
            && (state.failures > 0 || state.paused_until.is_some())
        {
            // Any other response ends the streak.
            state.failures = 0;
            state.paused_until = None;
            debug!(group, outcome = ?observed.outcome, "back-off ended");
        }
        if let Some(reset) = observed.rate_limited {
            let duration = state.capped(group, reset, config.max_retry_after, "rate-limit reset");
            state.pause_for(duration);
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
        if let (Some(took), Outcome::Status(_)) = (took, observed.outcome) {
            state.adaptive = config.adaptive(took);
        }
        pause
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

impl SlotState {
    /// `None` when a request may start at `now` (and records the start), else when to look
    /// again and why.
    fn turn_at(
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
        let rebuild = self
            .limiter
            .as_ref()
            .is_none_or(|(built_for, _)| *built_for != interval);
        if rebuild {
            let quota = Quota::with_period(interval)?; // non-zero here
            let limiter = RateLimiter::direct_with_clock(quota, TokioClock);
            // A new interval still counts from the last start.
            if let Some(last) = self.last_start
                && now < later(last, interval)
            {
                self.limiter = Some((interval, limiter));
                return spacing(later(last, interval));
            }
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
    fn capped(&mut self, group: &str, asked: Duration, max: Duration, what: &str) -> Duration {
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
    fn pause_for(&mut self, duration: Duration) {
        let until = later(Instant::now(), duration);
        self.paused_until = Some(self.paused_until.map_or(until, |p| p.max(until)));
    }

    /// The least quiet after the last request's end: the interval (spacing from the end) and
    /// the adaptive delay, with one request at a time.
    fn after_end(&self, interval: Duration, config: &PolitenessConfig) -> Duration {
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

impl Outcome {
    /// The status for metrics (0 for a network error).
    fn status(self) -> u16 {
        match self {
            Outcome::Status(status) => status,
            Outcome::NetworkError | Outcome::Cancelled => 0,
        }
    }
}

/// Says (once per pacer) that a place was taken over from an unread response body.
#[cold]
fn unread_body_warning(group: &str, grace: Duration) {
    warn!(
        group,
        ?grace,
        "a response body kept unread held its request's place in the group this long while another request waited: the place was taken over. A request is in flight until its response body is read to the end or dropped; read or drop responses before sending more to the same server (a join_all of requests to one server keeps them all)"
    );
}

impl Slot {
    /// Takes over the place of a request whose response head came and whose body is still
    /// held; false when there is none (every place is held by a request still waiting for its
    /// answer).
    fn take_over_unread(&self) -> bool {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if state.answered == 0 {
            return false;
        }
        state.answered -= 1;
        state.taken_over += 1;
        true
    }

    /// Whether a request may start at `now` (then its start is recorded), else when to look
    /// again and why. With one request at a time, the interval (and the adaptive delay) also
    /// run from the previous request's end. `queue`: the caller's place in the group's queue
    /// (`None`: it does not wait, so it only goes when no one is waiting); a waiting caller
    /// without a ticket is given one, under the same lock as the look.
    fn next_start(
        &self,
        interval: Duration,
        config: &PolitenessConfig,
        now: Instant,
        queue: Option<&mut Option<u64>>,
    ) -> Turn {
        // (Bounded whatever the caller computed: governor's quota cannot hold 584 years.)
        let interval = interval.min(MAX_INTERVAL);
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let first = state.queue.front().copied();
        let ticket = queue.map(|ticket| {
            *ticket.get_or_insert_with(|| {
                let ticket = state.tickets;
                state.tickets = state.tickets.wrapping_add(1);
                state.queue.push_back(ticket);
                ticket
            })
        });
        if first.is_some() && first != ticket {
            return Turn::Behind;
        }
        match state.turn_at(interval, config, now) {
            Some((at, reason)) => Turn::At(at, reason),
            None => {
                if ticket.is_some() {
                    state.queue.pop_front();
                }
                Turn::Go
            }
        }
    }

    /// When a request could start, without taking the turn: `None` when now.
    fn peek(&self, interval: Duration, config: &PolitenessConfig) -> Option<Instant> {
        let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        if let Some(until) = state.paused_until.filter(|p| *p > now) {
            return Some(until);
        }
        let after = |at: Option<Instant>, gap| at.map(|t| later(t, gap)).filter(|t| *t > now);
        let from_start = after(state.last_start, interval);
        let from_end = after(state.last_end, state.after_end(interval, config));
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
        let after_end = interval.max(state.adaptive);
        let elapsed =
            |at: Option<Instant>, after: Duration| at.is_none_or(|t| later(t, after) <= now);
        let pause_forgotten = match state.paused_until {
            Some(until) => later(until, forget_failures_after) <= now,
            None => state.failures == 0,
        };
        pause_forgotten && elapsed(state.last_start, interval) && elapsed(state.last_end, after_end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(s: u64) -> Duration {
        Duration::from_secs(s)
    }

    #[test]
    fn interval_is_raised_by_crawl_delay_and_never_lowered_unless_told() {
        let config = PolitenessConfig::default();
        assert_eq!(config.interval(None), Interval::Applied(secs(1), None));
        assert_eq!(
            config.interval(Some(Duration::from_millis(200))),
            Interval::Applied(secs(1), None)
        );
        assert_eq!(
            config.interval(Some(secs(5))),
            Interval::Applied(secs(5), None)
        );
        assert_eq!(
            config.interval(Some(secs(30))),
            Interval::Applied(secs(30), None)
        );
        // Above the maximum: refused by default, honoured or clamped by name.
        assert_eq!(config.interval(Some(secs(90))), Interval::TooLong(secs(90)));
        let honour = PolitenessConfig {
            overlong: OverlongCrawlDelay::Honour,
            ..Default::default()
        };
        assert_eq!(
            honour.interval(Some(secs(90))),
            Interval::Applied(secs(90), None)
        );
        let clamp = PolitenessConfig {
            overlong: OverlongCrawlDelay::Clamp,
            ..Default::default()
        };
        assert_eq!(
            clamp.interval(Some(secs(90))),
            Interval::Applied(secs(30), Some(secs(90)))
        );
        let ignoring = PolitenessConfig {
            obey_crawl_delay: false,
            ..Default::default()
        };
        assert_eq!(
            ignoring.interval(Some(secs(90))),
            Interval::Applied(secs(1), None)
        );
        for name in ["refuse", "honor", "clamp"] {
            assert_eq!(name.parse::<OverlongCrawlDelay>().unwrap().as_str(), name);
        }
        assert!("skip".parse::<OverlongCrawlDelay>().is_err());
    }

    /// The pause a group is under now, in milliseconds.
    fn paused_ms(politeness: &Politeness, group: &str) -> u128 {
        politeness.paused_until(group).map_or(0, |until| {
            until.saturating_duration_since(Instant::now()).as_millis()
        })
    }

    #[tokio::test(start_paused = true)]
    async fn distress_backs_off_with_jitter_and_any_other_response_ends_it() {
        let politeness = Politeness::new(PolitenessConfig {
            min_delay: Duration::ZERO,
            backoff_base: Duration::from_millis(400),
            backoff_max: Duration::from_millis(1600),
            ..Default::default()
        });
        let group = "example.com";
        let politeness = &politeness;
        let end = |outcome| async move {
            tokio::time::sleep(Duration::from_secs(2)).await;
            let (permit, _) = politeness.acquire(group, Duration::ZERO).await;
            politeness.finish(permit, Observed::failure(outcome))
        };
        let mut pauses = Vec::new();
        for outcome in [
            Outcome::Status(500),
            Outcome::NetworkError,
            Outcome::Status(502),
            Outcome::Status(504),
        ] {
            let pause = end(outcome).await.expect("distress pauses");
            pauses.push(pause);
        }
        for (pause, nominal) in pauses.iter().zip([400u64, 800, 1600, 1600]) {
            let ms = pause.duration.as_millis() as u64;
            assert!(
                ms >= nominal * 9 / 10 && ms <= nominal * 11 / 10,
                "{ms} ms for {nominal}"
            );
        }
        assert_eq!(pauses[3].reason, PauseReason::Backoff { failures: 4 });
        // The jitter varies pauses (two equal nominal ones are almost never equal).
        let varied: std::collections::BTreeSet<_> = (0..8)
            .map(|_| jittered(Duration::from_secs(100)).as_millis())
            .collect();
        assert!(varied.len() > 1);
        // A 404 is "any other response": the streak ends, and so does the pause.
        tokio::time::advance(Duration::from_secs(2)).await;
        assert_eq!(end(Outcome::Status(404)).await, None);
        let pause = end(Outcome::Status(500)).await.unwrap();
        assert!(pause.duration <= Duration::from_millis(440), "{pause:?}");
        // A status outside the set, or a cancelled request, changes nothing.
        let quiet = Politeness::new(PolitenessConfig {
            backoff_statuses: StatusSet::of([429, 503]),
            backoff_on_network_errors: false,
            ..Default::default()
        });
        let (permit, _) = quiet.acquire(group, Duration::ZERO).await;
        assert_eq!(
            quiet.finish(permit, Observed::failure(Outcome::Status(500))),
            None
        );
        assert_eq!(
            quiet.observe(group, Observed::failure(Outcome::NetworkError)),
            None
        );
        assert_eq!(paused_ms(&quiet, group), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn retry_after_and_rate_limits_pause_for_what_they_say() {
        let politeness = Politeness::new(PolitenessConfig::default());
        let group = "example.com";
        let observed = |status, retry_after, rate_limited| Observed {
            outcome: Outcome::Status(status),
            retry_after,
            rate_limited,
            rate_limit_step: false,
        };
        let pause = politeness.observe(group, observed(503, Some(secs(7)), None));
        assert_eq!(
            pause,
            Some(GroupPause {
                duration: secs(7),
                reason: PauseReason::RetryAfter
            })
        );
        // Capped at the maximum.
        let pause = politeness.observe(group, observed(429, Some(secs(3600)), None));
        assert_eq!(pause.map(|p| p.duration), Some(secs(600)));
        // A success whose rate-limit headers say nothing is left: paused until the reset.
        let pause = politeness.observe(group, observed(200, None, Some(secs(2))));
        assert_eq!(
            pause,
            Some(GroupPause {
                duration: secs(2),
                reason: PauseReason::RateLimit
            })
        );
        assert_eq!(paused_ms(&politeness, group), 2000);
        let pause = politeness.observe(group, observed(200, None, Some(secs(86_400))));
        assert_eq!(pause.map(|p| p.duration), Some(secs(600)));
    }

    #[tokio::test(start_paused = true)]
    async fn headers_only_lengthen_the_back_off_and_the_cap_holds_after_jitter() {
        let politeness = Politeness::new(PolitenessConfig {
            backoff_base: Duration::from_millis(400),
            backoff_max: Duration::from_secs(1),
            max_retry_after: Duration::from_secs(60),
            ..Default::default()
        });
        let group = "example.com";
        let distress = |retry_after| Observed {
            outcome: Outcome::Status(503),
            retry_after,
            rate_limited: None,
            rate_limit_step: false,
        };
        // `Retry-After: 0` waits the back-off its streak calls for: 0.4, 0.8, then the cap.
        for (nominal, failures) in [(400u128, 1), (800, 2), (1000, 3), (1000, 4)] {
            let pause = politeness
                .observe(group, distress(Some(Duration::ZERO)))
                .unwrap();
            assert_eq!(pause.reason, PauseReason::Backoff { failures });
            let ms = pause.duration.as_millis();
            assert!(
                ms >= nominal * 9 / 10 && ms <= 1000,
                "{ms} ms for {nominal}"
            );
        }
        // A longer one lengthens it.
        let pause = politeness.observe(group, distress(Some(secs(7)))).unwrap();
        assert_eq!(
            (pause.duration, pause.reason),
            (secs(7), PauseReason::RetryAfter)
        );
        // Never above the maximum after jitter, however often drawn.
        let config = PolitenessConfig {
            backoff_max: Duration::from_millis(1200),
            ..Default::default()
        };
        for failures in 1..40 {
            assert!(config.jittered_backoff(failures) <= Duration::from_millis(1200));
        }
        // Rate-limit headers that say "stop" without "until" are a back-off step, even on a 200;
        // a reset too long to represent is capped, not an overflow.
        let fresh = Politeness::new(PolitenessConfig::default());
        let pause = fresh
            .observe(
                group,
                Observed {
                    outcome: Outcome::Status(200),
                    retry_after: None,
                    rate_limited: Some(Duration::MAX),
                    rate_limit_step: true,
                },
            )
            .unwrap();
        assert_eq!(pause.duration, secs(600));
        assert_eq!(paused_ms(&fresh, group), 600_000);
        let step = fresh
            .observe(
                "other.example",
                Observed {
                    outcome: Outcome::Status(200),
                    retry_after: None,
                    rate_limited: None,
                    rate_limit_step: true,
                },
            )
            .unwrap();
        assert_eq!(step.reason, PauseReason::Backoff { failures: 1 });
        // A jitter on a maximum as long as `Duration::MAX` saturates instead of panicking.
        assert!(jittered(Duration::MAX) >= Duration::from_secs(u64::MAX / 2));
    }

    #[test]
    fn intervals_above_a_day_are_refused_under_every_policy_and_never_reach_governor() {
        for overlong in [
            OverlongCrawlDelay::Refuse,
            OverlongCrawlDelay::Honour,
            OverlongCrawlDelay::Clamp,
        ] {
            let config = PolitenessConfig {
                overlong,
                ..Default::default()
            };
            for asked in [MAX_INTERVAL + Duration::from_secs(1), Duration::MAX] {
                assert_eq!(config.interval(Some(asked)), Interval::TooLong(asked));
            }
        }
        // A configured minimum beyond a day is bounded too: the pacer cannot be made to panic.
        let config = PolitenessConfig {
            min_delay: Duration::MAX,
            max_delay: Duration::MAX,
            ..Default::default()
        };
        assert_eq!(config.interval(None), Interval::Applied(MAX_INTERVAL, None));
        let politeness = Politeness::new(config);
        assert!(
            politeness
                .try_acquire("a.example", Duration::MAX, Instant::now())
                .is_ok()
        );
        assert!(
            politeness
                .try_acquire("a.example", Duration::MAX, Instant::now())
                .is_err()
        );
    }

    #[tokio::test(start_paused = true)]
    async fn waiting_requests_start_in_the_order_they_began_to_wait() {
        let politeness = Arc::new(Politeness::new(PolitenessConfig {
            concurrency: 4,
            min_delay: Duration::from_millis(100),
            backoff_base: Duration::from_millis(100),
            ..Default::default()
        }));
        let group = "example.com";
        let interval = Duration::from_millis(100);
        let started = Arc::new(Mutex::new(Vec::new()));
        let request = |name: &'static str| {
            let (politeness, started) = (politeness.clone(), started.clone());
            tokio::spawn(async move {
                let (permit, _) = politeness.acquire(group, interval).await;
                started.lock().unwrap().push(name);
                tokio::time::sleep(Duration::from_secs(5)).await;
                drop(permit);
            })
        };
        let first = request("first");
        tokio::time::sleep(Duration::from_millis(1)).await;
        // `a` waits for the interval; then a 503 pauses the group, and `b` and `c` wait for the
        // pause's end. `a` looks again when its interval is over, after them: its timer is set
        // last, yet it began to wait first.
        let a = request("a");
        tokio::time::sleep(Duration::from_millis(10)).await;
        politeness.observe(
            group,
            Observed {
                outcome: Outcome::Status(503),
                retry_after: Some(secs(1)),
                rate_limited: None,
                rate_limit_step: false,
            },
        );
        let b = request("b");
        tokio::time::sleep(Duration::from_millis(1)).await;
        let c = request("c");
        for task in [first, a, b, c] {
            task.await.unwrap();
        }
        assert_eq!(*started.lock().unwrap(), ["first", "a", "b", "c"]);
    }

    #[tokio::test(start_paused = true)]
    async fn the_interval_after_a_slow_answer_is_at_least_factor_times_its_time() {
        for (factor, expected) in [(0.0, 700), (1.0, 1200), (2.0, 1800)] {
            let politeness = Politeness::new(PolitenessConfig {
                min_delay: Duration::from_millis(100),
                delay_factor: factor,
                ..Default::default()
            });
            let interval = Duration::from_millis(100);
            let (permit, _) = politeness.acquire("slow.example", interval).await;
            let first = Instant::now();
            // The server takes 0.6 s to answer.
            tokio::time::sleep(Duration::from_millis(600)).await;
            politeness.finish(permit, Observed::failure(Outcome::Status(200)));
            let _second = politeness.acquire("slow.example", interval).await;
            assert_eq!(first.elapsed().as_millis(), expected, "factor {factor}");
        }
        // Never above the maximum delay.
        let config = PolitenessConfig::default();
        assert_eq!(config.adaptive(Duration::from_secs(3600)), secs(30));
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
            politeness.observe(
                &origin,
                Observed {
                    outcome: Outcome::Status(429),
                    retry_after: Some(Duration::from_secs(60)),
                    rate_limited: None,
                    rate_limit_step: false,
                },
            );
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
