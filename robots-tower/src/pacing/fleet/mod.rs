//! Politeness for a fleet (spec section 11, feature `redis`): every process paces each group
//! through one Redis, so the fleet behaves toward a server as one polite crawler.
//!
//! Each decision is one server-side script, atomic and timed by the server's clock (clock skew
//! between machines does not matter), and in the common case one call: what a request's head
//! and end teach the fleet rides on the process's next acquire (`outbox`):
//!
//! - **acquire** drops expired leases; when the group's concurrency is used up, or when requests
//!   that asked earlier are still waiting (a queue, first come first served), it says when to
//!   ask again; otherwise it reserves the next start — GCRA reserve-and-wait: the later of now,
//!   the theoretical arrival time, the end of any pause, the last start that went plus this
//!   request's interval, and (with one request in flight) the previous end plus the larger of
//!   the interval and the adaptive delay — takes a lease that expires if the process dies, and
//!   tells the caller how long to wait. Callers are never refused, only told to wait.
//! - **start check**, when a reserved start comes: a reservation whose state was lost, or that
//!   a pause set in the meantime covers, is given back and the turn asked for again; one that
//!   comes less than an interval after a start that went late (a busy process, a late timer)
//!   waits; otherwise the start is recorded as it goes, so what follows counts from it.
//! - **release**, for a response that pauses the group, on its own call, awaited: distress
//!   pauses it for every process (`Retry-After`, or the back-off with the jitter the process
//!   drew), and an exhausted rate limit until its reset.
//! - **settle**, for everything else, folded into the next acquire of the process to the same
//!   server (or one call for all that wait, within a millisecond): the lease shortened to the
//!   unread-body grace when the head came, dropped at the end; the end and the adaptive delay
//!   recorded; the back-off streak ended (but not a pause set after the response came).
//!
//! A failover to another server is recognised by the server's identity: its `run_id` on one
//! server, read by the process; on a Redis Cluster, the node's own id, read by the script.
//!
//! Keys are `<prefix>:{<group>}:pace` (a string), `…:leases`, `…:waiters` and `…:waiting`
//! (sorted sets), one cluster slot per group, and expire once the group is idle. The pace state
//! is one string of packed fields (`pace.lua`), so that a script reads it with one call and
//! writes it, with its expiry, with one more, and turns no number into text and back: in
//! Redis's scripts, that cost more than the rest of a decision's work. A group's first place is
//! held in it (fields `lease` and `lease_until`), so that a group with one request at a time
//! makes and drops no key per request; its other places are leases in the sorted set. The state
//! also says until when the set may hold a lease (`others`) and the queue a waiter (`queued`),
//! so that most decisions read neither, and it outlives every place held. The acquire script also reads the epoch key of the
//! group's slot (`RedisFleet::epoch_key`), which says since when the server has held the fleet's
//! state and which server it is: less than an interval after a loss of state or a failover to
//! another server, every start is fenced to an interval after it.
//! While Redis fails, requests wait up to the outage grace, then [`FleetFallback`] decides:
//! local pacing with the interval multiplied by the fleet size, or refusal.

mod call;
mod keys;
pub(crate) mod lease;
mod outbox;
mod recall;
mod settle;

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use robots_fetch::{FleetError, RedisFleet, later};
use tokio::time::Instant;
use tracing::{debug, warn};

use crate::error::NotReadyReason;
use crate::error::RobotsError;
use crate::pacing::local::Politeness;
use crate::pacing::local::permit::ReadyLater;
use crate::pacing::observed::{GroupPause, Observed};
use crate::pacing::rules::Outcome;
use crate::pacing::rules::PolitenessConfig;
use call::ScriptCall;
pub(super) use keys::GroupKeys;
use keys::{KeyNames, Waiter, request_id};
use lease::{FleetPermit, Lease, Release};
use outbox::Outbox;
use settle::Settle;

/// What pacing does while the fleet's Redis is unreachable. Robots rules never fail open either
/// way: they come from the local copy or a local fetch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum FleetFallback {
    /// Pace in this process alone, with the interval multiplied by the fleet size, so that the
    /// whole fleet stays within the site's budget (the default).
    #[default]
    LocalFallback,
    /// Refuse requests with [`RobotsError::FleetUnavailable`] until Redis is back.
    FailClosed,
}

// The scripts run atomically in Redis; what each takes and answers is at the top of its file.

/// Asks for a place in a group: granted now, at a reserved start, or not yet (and when); first
/// settles the requests that ride on it (`settle.lua`).
const ACQUIRE: &str = concat!(
    include_str!("pace.lua"),
    include_str!("settle.lua"),
    include_str!("acquire.lua")
);

/// Settles the requests no acquire carried.
const FLUSH: &str = concat!(
    include_str!("pace.lua"),
    include_str!("settle.lua"),
    include_str!("flush.lua")
);

/// Ends a lease with what its response taught (distress, pause, adaptive delay).
const RELEASE: &str = concat!(include_str!("pace.lua"), include_str!("release.lua"));

/// Checked when a reservation's start comes (see `StartCheck`): the server's state must be the
/// one that granted it (its epoch unchanged), no pause set in the meantime may be left, and no
/// start that went late may be less than an interval before; then the start is recorded.
const START_CHECK: &str = concat!(include_str!("pace.lua"), include_str!("start_check.lua"));

/// What the start check said.
enum StartCheck {
    /// The request goes now (its start is recorded).
    Go,
    /// Check again after this long: a start that went late is less than an interval before.
    Later(Duration),
    /// The reservation does not stand (the state changed, a pause was set, or Redis could not
    /// say): give it back and ask again.
    AskAgain,
}

fn start_check_script() -> &'static redis::Script {
    static SCRIPT: OnceLock<redis::Script> = OnceLock::new();
    SCRIPT.get_or_init(|| redis::Script::new(START_CHECK))
}

fn scripts() -> &'static (redis::Script, redis::Script) {
    static SCRIPTS: OnceLock<(redis::Script, redis::Script)> = OnceLock::new();
    // `Script` sends EVALSHA and loads the script when the server does not know it yet.
    SCRIPTS.get_or_init(|| (redis::Script::new(ACQUIRE), redis::Script::new(RELEASE)))
}

/// The longest duration a script is given, in milliseconds (10 years). Lua numbers are doubles
/// and Redis formats them with 14 significant digits, so a script only ever sees integers that
/// the server time plus them keeps exact; every duration from the network or the configuration
/// is capped here before it becomes an argument.
const SCRIPT_MS_MAX: u64 = 10 * 365 * 24 * 3600 * 1000;

/// A duration as a script argument: whole milliseconds, at most [`SCRIPT_MS_MAX`].
fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).map_or(SCRIPT_MS_MAX, |ms| ms.min(SCRIPT_MS_MAX))
}

/// Milliseconds as a script argument, -1 for none.
fn millis_or_none(duration: Option<Duration>) -> i64 {
    duration.map_or(-1, |d| i64::try_from(millis(d)).unwrap_or(i64::MAX))
}

/// Politeness shared through Redis, with local pacing as the fallback.
pub(crate) struct FleetPacing {
    fleet: RedisFleet,
    fallback: FleetFallback,
    fleet_size: u32,
    lease_ttl: Duration,
    /// How long requests wait for Redis before falling back, from when the outage was seen.
    outage_grace: Duration,
    /// When the outage under way was first seen.
    outage_since: std::sync::Mutex<Option<Instant>>,
    /// Shared with every lease (released with it).
    config: Arc<PolitenessConfig>,
    /// What this process's requests taught that rides on its next call.
    outbox: Arc<Outbox>,
    /// Used while Redis fails (LocalFallback).
    local: Politeness,
    /// The groups' key names, recently used ones kept.
    keys: KeyNames,
}

impl FleetPacing {
    pub(crate) fn new(
        fleet: RedisFleet,
        config: PolitenessConfig,
        fallback: FleetFallback,
        fleet_size: u32,
        lease_ttl: Duration,
        outage_grace: Duration,
    ) -> FleetPacing {
        FleetPacing {
            outbox: Outbox::new(fleet.clone(), lease_ttl),
            fleet,
            fallback,
            fleet_size: fleet_size.max(1),
            lease_ttl,
            outage_grace,
            outage_since: std::sync::Mutex::new(None),
            config: Arc::new(config.clone()),
            local: Politeness::new(config),
            keys: KeyNames::new(),
        }
    }

    pub(crate) fn config(&self) -> &PolitenessConfig {
        &self.config
    }

    pub(crate) fn local(&self) -> &Politeness {
        &self.local
    }

    /// The fleet's Redis.
    /// Claims `what` for this process for `ttl`: the first process of the fleet to claim it
    /// gets it (`true`), the others not (`false`). A Redis that cannot answer gives it to every
    /// process (the work is done twice rather than not at all).
    pub(crate) async fn claim(&self, group: &str, what: &str, ttl: Duration) -> bool {
        let key = self.fleet.key(group, &format!("claim:{what}"));
        let Ok(mut connection) = self.fleet.connection() else {
            return true;
        };
        let ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1);
        let mut command = redis::cmd("SET");
        command.arg(&key).arg(1).arg("NX").arg("PX").arg(ms);
        match self
            .fleet
            .run(command.query_async::<Option<String>>(&mut connection))
            .await
        {
            Ok(taken) => taken.is_some(),
            Err(_) => true,
        }
    }

    pub(crate) fn redis(&self) -> &RedisFleet {
        &self.fleet
    }

    /// Records a response seen without a lease (a hook after the fact) for the whole fleet, in
    /// the background: distress and exhausted rate limits pause the group for every process.
    /// This process's own pacing learns it at once.
    pub(crate) fn observe(&self, group: &str, observed: Observed) -> Option<GroupPause> {
        let pause = self.local.observe(group, observed);
        let release = Release {
            fleet: self.fleet.clone(),
            outbox: self.outbox.clone(),
            keys: self.keys.of(&self.fleet, group),
            // No lease to give back.
            id: Arc::from(""),
            config: self.config.clone(),
            idle_ttl: self.config.backoff_max,
            wait_ms: 0,
            epoch: String::new(),
            starts_at: None,
            answered: false,
            head_only: false,
        };
        if tokio::runtime::Handle::try_current().is_err() {
            debug!(
                group,
                "no runtime: the response is known to this process only"
            );
        }
        self.fleet.spawn(async move {
            release.run(observed).await;
        });
        pause
    }

    /// Waits for the group's turn across the fleet. The process's own place comes first, so
    /// that its requests to one group ask the fleet one at a time and local pacing (the
    /// fallback) always knows the last start and end.
    pub(crate) async fn acquire(
        &self,
        group: &str,
        interval: Duration,
    ) -> Result<(FleetPermit, Duration), RobotsError> {
        self.acquire_with(group, interval, self.fallback).await
    }

    /// [`FleetPacing::acquire`] with this fallback: a robots.txt request falls back to local
    /// pacing even when pages fail closed (refusing it would record robots.txt as unreachable,
    /// and refuse the group for a minute after Redis is back).
    pub(crate) async fn acquire_with(
        &self,
        group: &str,
        interval: Duration,
        fallback: FleetFallback,
    ) -> Result<(FleetPermit, Duration), RobotsError> {
        let place = self.local.place(group).await;
        // The wait counts from here, once this process's own earlier requests to the group are
        // out of the way (the fleet's turn, its pauses and an outage's grace count).
        let started = Instant::now();
        let shared = loop {
            let result = self.acquire_shared(group, interval).await;
            // A command the server refused (a bug, not an outage) is not waited out.
            let answered = !matches!(&result, Err(error) if error.is_unavailable());
            match self.outage_grace_left(answered) {
                Some(left) if !left.is_zero() => {
                    tokio::time::sleep(left.min(Duration::from_millis(100))).await;
                }
                _ => break result,
            }
        };
        match shared {
            Ok(release) => {
                // The process's own spacing too: nothing while Redis is healthy (the fleet's wait
                // covers it), but a Redis that restarted without its state must not let this
                // process hit the group again at once.
                let local = self.local.space(group, interval, place).await;
                let lease = Lease {
                    release: Some(release),
                    _local: Some(local),
                };
                Ok((FleetPermit::Lease(Box::new(lease)), started.elapsed()))
            }
            Err(error) => match fallback {
                FleetFallback::FailClosed => Err(RobotsError::FleetUnavailable {
                    message: error.to_string(),
                }),
                FleetFallback::LocalFallback => {
                    let interval = interval.saturating_mul(self.fleet_size);
                    let permit = self.local.space(group, interval, place).await;
                    Ok((FleetPermit::Local(permit), started.elapsed()))
                }
            },
        }
    }

    /// Records whether Redis answered; while it does not, how much of the outage grace is left
    /// (zero: fall back now). `None` when it answered.
    fn outage_grace_left(&self, answered: bool) -> Option<Duration> {
        let mut since = self.outage_since.lock().unwrap_or_else(|e| e.into_inner());
        if answered {
            *since = None;
            return None;
        }
        let since = *since.get_or_insert_with(Instant::now);
        Some(self.outage_grace.saturating_sub(since.elapsed()))
    }

    /// The group's turn across the fleet now, or when it will come (schedule, don't wait):
    /// nothing is reserved when the answer is "not yet".
    pub(crate) async fn try_acquire(
        &self,
        group: &str,
        interval: Duration,
    ) -> Result<Result<FleetPermit, ReadyLater>, RobotsError> {
        let place = match self.local.try_place(group) {
            Ok(place) => place,
            Err(not_yet) => return Ok(Err(not_yet)),
        };
        let keys = self.keys.of(&self.fleet, group);
        match self
            .ask(group, &keys, interval, Mode::Try, &request_id())
            .await
        {
            Ok(Answer::Granted(release)) => {
                match self.local.try_space(interval, place, Instant::now()) {
                    Ok(local) => Ok(Ok(FleetPermit::Lease(Box::new(Lease {
                        release: Some(release),
                        _local: Some(local),
                    })))),
                    // Redis lost its state but this process remembers: the local wait stands (the
                    // lease is given back).
                    Err(not_yet) => {
                        release.run(Observed::failure(Outcome::Cancelled)).await;
                        Ok(Err(not_yet))
                    }
                }
            }
            Ok(Answer::ReadyLater(not_yet)) => Ok(Err(not_yet)),
            Ok(Answer::Wait(_)) => Ok(Err(ReadyLater {
                ready_in: None,
                reason: NotReadyReason::InFlight,
            })),
            Err(error) => match self.fallback {
                FleetFallback::FailClosed => Err(RobotsError::FleetUnavailable {
                    message: error.to_string(),
                }),
                FleetFallback::LocalFallback => Ok(self
                    .local
                    .try_space(
                        interval.saturating_mul(self.fleet_size),
                        place,
                        Instant::now(),
                    )
                    .map(FleetPermit::Local)),
            },
        }
    }

    /// How long until a request to the group could start across the fleet (zero: now; `None`:
    /// when a request in flight ends). Reserves nothing.
    pub(crate) async fn next_ready(
        &self,
        group: &str,
        interval: Duration,
    ) -> Result<Option<Duration>, RobotsError> {
        let Some(local) = self.local.next_ready(group, interval) else {
            return Ok(None);
        };
        let keys = self.keys.of(&self.fleet, group);
        match self
            .ask(group, &keys, interval, Mode::Peek, &request_id())
            .await
        {
            Ok(Answer::ReadyLater(not_yet)) => Ok(not_yet.ready_in.map(|r| r.max(local))),
            Ok(Answer::Wait(_)) => Ok(None),
            Ok(Answer::Granted(_)) => Ok(Some(local)),
            Err(error) => match self.fallback {
                FleetFallback::FailClosed => Err(RobotsError::FleetUnavailable {
                    message: error.to_string(),
                }),
                FleetFallback::LocalFallback => Ok(self
                    .local
                    .next_ready(group, interval.saturating_mul(self.fleet_size))),
            },
        }
    }

    async fn acquire_shared(&self, group: &str, interval: Duration) -> Result<Release, FleetError> {
        // One id for every ask of this request while it waits (its place among the waiters is
        // kept); a new one after a lease given back, whose release must not free the next.
        let mut id = request_id();
        let mut queued: Option<Waiter> = None;
        let keys = self.keys.of(&self.fleet, group);
        loop {
            let (lease, wait_ms) = match self.ask(group, &keys, interval, Mode::Wait, &id).await? {
                // The lease exists from here: dropping it (even if this future is cancelled
                // while it waits) releases it.
                Answer::Granted(release) => {
                    // (The script took it out of the queue.)
                    if let Some(mut waiter) = queued.take() {
                        waiter.fleet = None;
                    }
                    let wait_ms = release.wait_ms;
                    (Some(Lease::holding(release)), wait_ms)
                }
                Answer::Wait(wait_ms) => {
                    // In the queue now: a request given up leaves it at once, not after 2 s.
                    queued.get_or_insert_with(|| Waiter {
                        fleet: Some(self.fleet.clone()),
                        keys: keys.clone(),
                        id: id.clone(),
                    });
                    (None, wait_ms)
                }
                Answer::ReadyLater(_) => (None, 1),
            };
            // (A zero sleep would still wait for the timer's next tick, about 1 ms.)
            if wait_ms > 0 {
                tokio::time::sleep(Duration::from_millis(wait_ms)).await;
            }
            let Some(mut lease) = lease else { continue };
            // A pause set while this reservation waited for its start (another process saw a
            // 429 or a 5xx) stands, and a reservation the server forgot (it lost its state)
            // holds no place: the lease is given back, and the turn asked for again. A start
            // that went late holds this one back until an interval after it.
            let epoch = lease
                .release
                .as_ref()
                .map(|r| r.epoch.clone())
                .unwrap_or_default();
            if wait_ms > 0 && !self.start_stands(group, &keys, interval, &epoch).await {
                drop(lease);
                id = request_id();
                continue;
            }
            if let Some(mut release) = lease.release.take() {
                release.starts_at = Some(Instant::now());
                return Ok(release);
            }
        }
    }

    /// Checks a reservation at its start, waiting while a start that went late is less than an
    /// interval before (a bounded number of times); whether it stands.
    async fn start_stands(
        &self,
        group: &str,
        keys: &GroupKeys,
        interval: Duration,
        epoch: &str,
    ) -> bool {
        for _ in 0..16 {
            match self.start_check(group, keys, interval, epoch).await {
                StartCheck::Go => return true,
                StartCheck::Later(wait) => tokio::time::sleep(wait).await,
                StartCheck::AskAgain => return false,
            }
        }
        false
    }

    /// Whether a reservation granted under `epoch` may start now: no pause was set for the group
    /// meanwhile, the server still has the state that granted it, and no start that went late
    /// is less than an interval before (if none, the start is recorded as it goes). When Redis
    /// cannot say, it does not stand: the server may have restarted and granted the place again
    /// (the turn is asked for again, and an outage is then waited out or falls back as any
    /// other).
    async fn start_check(
        &self,
        group: &str,
        keys: &GroupKeys,
        interval: Duration,
        epoch: &str,
    ) -> StartCheck {
        let Ok(mut connection) = self.fleet.connection() else {
            return StartCheck::AskAgain;
        };
        let mut call = ScriptCall::new(start_check_script(), 2);
        call.key(&keys.pace)
            .key(&keys.epoch)
            .arg(epoch)
            .arg(millis(interval))
            .arg(millis(self.idle_ttl(interval)).max(1));
        match self
            .fleet
            .run(call.invoke::<(u8, u64)>(&mut connection))
            .await
        {
            Ok((0, _)) => StartCheck::Go,
            Ok((1, _)) => {
                warn!(
                    group,
                    "the fleet's Redis lost its state while this request waited: asking again (fenced)"
                );
                StartCheck::AskAgain
            }
            Ok((3, ms)) => {
                debug!(group, ms, "a start that went late holds this one back");
                StartCheck::Later(Duration::from_millis(ms.max(1)))
            }
            Ok(_) => {
                debug!(
                    group,
                    "the group was paused while this request waited: asking again"
                );
                StartCheck::AskAgain
            }
            Err(error) => {
                debug!(group, %error, "the reservation could not be checked at its start: asking again");
                StartCheck::AskAgain
            }
        }
    }

    /// How long a group's keys outlive its last request: past any back-off and the interval.
    fn idle_ttl(&self, interval: Duration) -> Duration {
        self.config.backoff_max.max(interval)
    }

    /// One run of the acquire script.
    async fn ask(
        &self,
        group: &str,
        keys: &Arc<GroupKeys>,
        interval: Duration,
        mode: Mode,
        id: &str,
    ) -> Result<Answer, FleetError> {
        let config = self.config();
        let mut connection = self.fleet.connection()?;
        // 2: one at a time, spaced from the end too; 1: one at a time (the adaptive delay runs
        // from the end); 0: several at a time.
        let spacing = match (config.concurrency <= 1, config.spacing) {
            (false, _) => "0",
            (true, crate::pacing::rules::Spacing::FromEnd) => "2",
            (true, _) => "1",
        };
        let idle_ttl = self.idle_ttl(interval);
        // What this process remembers of a pause, for a server that lost it.
        let known_pause = self.local.paused_until(group).map_or(0, |until| {
            millis(until.saturating_duration_since(Instant::now()))
        });
        // Which server answers: a failover to another is fenced like a loss. (A cluster's node
        // says its own id, in the script: each slot has its own.)
        let server = if self.fleet.is_cluster() {
            "@node".to_string()
        } else {
            self.fleet.server_identity().await.unwrap_or_default()
        };
        let riders = self.outbox.riders(keys);
        let mut call = ScriptCall::new(&scripts().0, 5 + riders.len() * Settle::KEYS);
        call.key(&keys.pace)
            .key(&keys.leases)
            .key(&keys.epoch)
            .key(&keys.waiters)
            .key(&keys.waiting);
        for settle in &riders {
            settle.add_keys(&mut call);
        }
        call.arg(millis(interval))
            .arg(config.concurrency.max(1))
            .arg(millis(self.lease_ttl).max(1))
            .arg(id)
            .arg(spacing)
            .arg(millis(idle_ttl).max(1))
            .arg(mode.as_str())
            .arg(known_pause)
            .arg(server);
        for settle in &riders {
            settle.add_args(&mut call);
        }
        let answer = self.fleet.run(call.invoke(&mut connection)).await;
        drop(call);
        let (granted, wait_ms, paused, epoch): (u8, u64, u8, String) = match answer {
            Ok(answer) => answer,
            Err(error) => {
                // They go again on their own (settling twice changes nothing).
                for settle in riders {
                    self.outbox.post(settle);
                }
                return Err(error);
            }
        };
        // Another epoch of the slot (a failover, a restart): the places this process's recent
        // requests held may still be taken there, their ends lost with the old server.
        let again = self.outbox.recall.saw_epoch(keys, &epoch);
        if !again.is_empty() {
            debug!(
                group,
                ends = again.len(),
                "a new epoch of the fleet's state: saying this process's recent ends again"
            );
            for settle in again {
                self.outbox.post(settle);
            }
        }
        Ok(match granted {
            1 => Answer::Granted(Release {
                fleet: self.fleet.clone(),
                outbox: self.outbox.clone(),
                keys: keys.clone(),
                id: Arc::from(id),
                config: self.config.clone(),
                idle_ttl,
                wait_ms,
                epoch,
                starts_at: Some(later(Instant::now(), Duration::from_millis(wait_ms))),
                answered: false,
                head_only: false,
            }),
            2 => Answer::ReadyLater(ReadyLater {
                ready_in: Some(Duration::from_millis(wait_ms)),
                reason: if paused == 1 {
                    NotReadyReason::Paused
                } else {
                    NotReadyReason::Spacing
                },
            }),
            _ => Answer::Wait(wait_ms),
        })
    }
}

/// How the acquire script is asked.
#[derive(Debug, Clone, Copy)]
enum Mode {
    /// Reserve the next start, however far (the caller waits for it).
    Wait,
    /// Reserve only a start that is now.
    Try,
    /// Reserve nothing; say when.
    Peek,
}

impl Mode {
    fn as_str(self) -> &'static str {
        match self {
            Mode::Wait => "wait",
            Mode::Try => "try",
            Mode::Peek => "peek",
        }
    }
}

/// What the acquire script said.
enum Answer {
    /// A lease, starting after the release's `wait_ms`.
    Granted(Release),
    /// Every place is taken: ask again after this many milliseconds.
    Wait(u64),
    /// (Try and peek) not now.
    ReadyLater(ReadyLater),
}

// (They need the workspace's unpublished test helpers: left out of a packaged copy.)
#[cfg(all(test, feature = "__workspace-tests"))]
mod tests;
