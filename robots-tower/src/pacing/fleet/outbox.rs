//! What a process's requests taught that no other process needs at once, waiting to ride on a
//! call to Redis the process makes anyway: one script call per decision in the common case.
//!
//! A response that pauses its group (distress, an exhausted rate limit) is released on its own
//! call, awaited, so that every process pauses before the caller sees it. Everything else (a
//! response head that keeps the lease for the unread-body grace, a request's end, the adaptive
//! delay, the end of a back-off streak) is a [`Settle`]: posted here, and carried by this
//! process's next acquire to the same server (the same slot on a cluster), or, when none comes
//! soon enough, by one call for all that wait. A request's end waits at most [`END_RIDE`](super::settle::END_RIDE) (the
//! place it frees is held that much longer, never given early); a head waits at most
//! [`HEAD_RIDE`](super::settle::HEAD_RIDE), and most bodies end before that, so the end replaces it.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use robots_fetch::RedisFleet;
use tokio::sync::Notify;
use tokio::time::Instant;
use tracing::debug;

use super::GroupKeys;
use super::call::ScriptCall;
use super::recall::Recall;
use super::settle::Settle;

/// At most this many settles ride on one call (a script's work is bounded).
pub(super) const MOST_PER_CALL: usize = 64;

/// The settles of one process (one per [`super::FleetPacing`]).
pub(super) struct Outbox {
    fleet: RedisFleet,
    /// The ends of recent requests, said again after a failover.
    pub(super) recall: Recall,
    state: Mutex<State>,
    /// Tells the flusher that a settle due sooner came.
    posted: Notify,
}

#[derive(Default)]
struct State {
    waiting: Vec<Settle>,
    /// A flusher is running (at most one).
    flushing: bool,
    /// When the flusher wakes next on its own (`None`: only when told).
    wakes_at: Option<Instant>,
    /// Settles on their way to the server, by batch: an acquire sent meanwhile may reach the
    /// server first, so it carries copies (recording twice changes nothing), or it would find
    /// the places they free still taken.
    sending: Vec<(u64, Settle)>,
    /// The number of the next batch sent.
    next_batch: u64,
}

/// How long a flusher with nothing to send stays for the next settle (a busy process posts
/// many a millisecond: one flusher serves them, not one each).
const LINGER: Duration = Duration::from_millis(50);

impl Outbox {
    /// An outbox whose ends are said again after a failover for `remember` (the lease's life).
    pub(super) fn new(fleet: RedisFleet, remember: Duration) -> Arc<Outbox> {
        Arc::new(Outbox {
            fleet,
            recall: Recall::new(remember),
            state: Mutex::new(State::default()),
            posted: Notify::new(),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Takes the settles that may ride on a call for `keys`: those on the same server (on a
    /// cluster, in the same slot, which the epoch key names).
    /// Settles on their way in another call go too, as copies.
    pub(super) fn riders(&self, keys: &GroupKeys) -> Vec<Settle> {
        let mut state = self.lock();
        if state.waiting.is_empty() && state.sending.is_empty() {
            return Vec::new();
        }
        let cluster = self.fleet.is_cluster();
        let mut riders = take_riders(&mut state.waiting, keys, cluster);
        for (_, settle) in &state.sending {
            if riders.len() >= MOST_PER_CALL {
                break;
            }
            let same_slot = !cluster || settle.keys.epoch == keys.epoch;
            // (One waiting replaces an earlier record of the same request.)
            let replaced = riders
                .iter()
                .any(|rider| rider.id == settle.id && rider.keys.pace == settle.keys.pace);
            if same_slot && !replaced {
                riders.push(settle.clone());
            }
        }
        riders
    }

    /// Posts a settle: it rides on this process's next call to its server, or goes with the
    /// others waiting when it is due.
    pub(super) fn post(self: &Arc<Outbox>, mut settle: Settle) {
        let due = settle.due();
        let (start, tell) = {
            let mut state = self.lock();
            // A request's end replaces the record of its head, with what the head taught.
            if settle.head_grace.is_none() {
                state.waiting.retain(|other| !settle.absorb(other));
            }
            state.waiting.push(settle);
            // (Without a runtime no flusher can start: the settle waits for the next acquire.)
            let start = tokio::runtime::Handle::try_current().is_ok()
                && !std::mem::replace(&mut state.flushing, true);
            // The flusher is told only when it would wake too late for this one.
            let tell = !start && state.wakes_at.is_none_or(|at| due < at);
            if tell {
                state.wakes_at = Some(due);
            }
            (start, tell)
        };
        if start {
            // A flusher that never runs (its runtime shutting down) must not keep the next
            // from starting: the guard says it ended however it ends.
            let mut flusher = Flusher(Some(self.clone()));
            self.fleet.spawn(async move {
                if let Some(outbox) = flusher.0.clone() {
                    outbox.flush().await;
                }
                // It ended on its own, and said so under the lock.
                let _finished = flusher.0.take();
            });
        } else if tell {
            self.posted.notify_one();
        }
    }

    /// Sends a settle now, with what waits to ride with it, and waits for the server.
    pub(super) async fn send_now(&self, mut settle: Settle) {
        let mut batch = self.riders(&settle.keys);
        batch.retain(|other| !settle.absorb(other));
        batch.push(settle);
        self.send(&batch).await;
    }

    async fn send(&self, batch: &[Settle]) {
        let number = {
            let mut state = self.lock();
            let number = state.next_batch;
            state.next_batch += 1;
            state
                .sending
                .extend(batch.iter().map(|settle| (number, settle.clone())));
            number
        };
        // However the call ends (or is cancelled), the batch is no longer on its way.
        let _sent = Sent {
            outbox: self,
            number,
        };
        let mut call = ScriptCall::new(flush_script(), batch.len() * Settle::KEYS);
        for settle in batch {
            settle.add_keys(&mut call);
        }
        for settle in batch {
            settle.add_args(&mut call);
        }
        let Ok(mut connection) = self.fleet.connection() else {
            return;
        };
        if let Err(error) = self.fleet.run(call.invoke::<i64>(&mut connection)).await {
            debug!(%error, settles = batch.len(), "requests not settled; their leases expire on their own");
        }
    }

    /// Sends what no call carried once it is due, on as few calls as the server allows; stays
    /// a little for more, then ends.
    async fn flush(self: Arc<Outbox>) {
        loop {
            let posted = self.posted.notified();
            let due = {
                let mut state = self.lock();
                let due = state.waiting.iter().map(Settle::due).min();
                state.wakes_at = due;
                due
            };
            let Some(due) = due else {
                if tokio::time::timeout(LINGER, posted).await.is_err() {
                    let mut state = self.lock();
                    if state.waiting.is_empty() {
                        state.flushing = false;
                        return;
                    }
                }
                continue;
            };
            if Instant::now() < due {
                // (A settle due sooner may come meanwhile.)
                let _ = tokio::time::timeout_at(due, posted).await;
                continue;
            }
            let batch = {
                let mut state = self.lock();
                let Some(first) = state.waiting.first() else {
                    continue;
                };
                let keys = first.keys.clone();
                take_riders(&mut state.waiting, &keys, self.fleet.is_cluster())
            };
            self.send(&batch).await;
        }
    }
}

/// Takes a batch off the list of those on their way when dropped.
struct Sent<'a> {
    outbox: &'a Outbox,
    number: u64,
}

impl Drop for Sent<'_> {
    fn drop(&mut self) {
        self.outbox
            .lock()
            .sending
            .retain(|(number, _)| *number != self.number);
    }
}

/// The running flusher. Dropped before it ended (never run, or cancelled with its runtime), it
/// lets another start; one that ended said so itself, under the lock.
struct Flusher(Option<Arc<Outbox>>);

impl Drop for Flusher {
    fn drop(&mut self) {
        if let Some(outbox) = self.0.take() {
            outbox.lock().flushing = false;
        }
    }
}

/// Takes up to [`MOST_PER_CALL`] waiting settles that may go on one call with `keys`: any on a
/// single server, those of the same slot on a cluster.
fn take_riders(waiting: &mut Vec<Settle>, keys: &GroupKeys, cluster: bool) -> Vec<Settle> {
    if !cluster && waiting.len() <= MOST_PER_CALL {
        return std::mem::take(waiting);
    }
    let mut riders = Vec::new();
    let mut kept = Vec::with_capacity(waiting.len());
    for settle in waiting.drain(..) {
        if riders.len() < MOST_PER_CALL && (!cluster || settle.keys.epoch == keys.epoch) {
            riders.push(settle);
        } else {
            kept.push(settle);
        }
    }
    *waiting = kept;
    riders
}

/// The script that settles requests no acquire carried.
fn flush_script() -> &'static redis::Script {
    static SCRIPT: std::sync::OnceLock<redis::Script> = std::sync::OnceLock::new();
    SCRIPT.get_or_init(|| redis::Script::new(super::FLUSH))
}

// (They need the workspace's unpublished test helpers: left out of a packaged copy.)
#[cfg(all(test, feature = "__workspace-tests"))]
mod tests {
    use super::*;
    use robots_test_support::redis_server::RedisServer;

    fn wall_ms() -> u128 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis())
    }

    fn success(keys: &Arc<GroupKeys>) -> Settle {
        Settle {
            keys: keys.clone(),
            id: "request-1".into(),
            at: Instant::now(),
            head_grace: None,
            ends_streak: true,
            adaptive: None,
            idle_ttl: Duration::from_secs(60),
        }
    }

    /// A success settled late (it rode on a later call) ends the back-off streak and the pause
    /// set before it came, but not a pause set after it came: another process's 429 meanwhile
    /// stands.
    #[tokio::test]
    async fn a_late_settle_ends_only_a_pause_set_before_its_response() {
        let Some(redis) = RedisServer::start() else {
            return;
        };
        let fleet = RedisFleet::new(&redis.url()).unwrap();
        let outbox = Outbox::new(fleet.clone(), Duration::from_secs(60));
        let keys = GroupKeys::of(&fleet, "g");
        let field = |name: &str| redis.pace_field(&keys.pace, name);
        let until = (wall_ms() + 3_600_000).to_string();

        let after = (wall_ms() + 1_000).to_string();
        redis.set_pace(
            &keys.pace,
            &[("pause", &until), ("paused", &after), ("failures", "3")],
        );
        outbox.post(success(&keys));
        assert!(fleet.settle(Duration::from_secs(2)).await);
        assert_eq!(field("pause"), Some(until), "the pause stands");
        assert_eq!(field("failures").as_deref(), Some("3"), "the streak stands");

        let before = (wall_ms() - 1_000).to_string();
        redis.set_pace(&keys.pace, &[("paused", &before)]);
        outbox.post(success(&keys));
        assert!(fleet.settle(Duration::from_secs(2)).await);
        assert_eq!(field("pause"), None, "the pause ended");
        assert_eq!(field("failures"), None, "the streak ended");
        assert!(field("ended").is_some(), "the end is recorded");
    }

    /// A request's end never shortens the life of its group's state below the last reserved
    /// start's interval: with several places and a long interval, reservations may reach further
    /// ahead than the idle ttl, and a state that expired before them would let a new request
    /// start at once, under the interval of those reserved.
    #[tokio::test]
    async fn a_settle_never_shortens_the_state_below_the_reservations_ahead() {
        let Some(redis) = RedisServer::start() else {
            return;
        };
        let fleet = RedisFleet::new(&redis.url()).unwrap();
        let outbox = Outbox::new(fleet.clone(), Duration::from_secs(60));
        let keys = GroupKeys::of(&fleet, "g");
        // The last reservation's interval ends in an hour; the idle ttl is a minute.
        let tat = (wall_ms() + 3_600_000).to_string();
        redis.set_pace(&keys.pace, &[("tat", &tat)]);
        redis.command(&["PEXPIRE", &keys.pace, "3660000"]);
        outbox.post(success(&keys));
        assert!(fleet.settle(Duration::from_secs(2)).await);
        let pttl = redis.integer(&["PTTL", &keys.pace]).unwrap();
        assert!(
            pttl > 3_600_000,
            "the state lives {pttl} ms, under its reservations"
        );
    }

    /// A settle posted where no runtime runs (a body dropped after its runtime ended) waits for
    /// the next acquire, and leaves the next post free to start a flusher.
    #[test]
    fn a_settle_posted_without_a_runtime_does_not_stop_the_flusher() {
        let fleet = RedisFleet::new("redis://127.0.0.1:1/").unwrap();
        let outbox = Outbox::new(fleet.clone(), Duration::from_secs(60));
        let keys = GroupKeys::of(&fleet, "g");
        outbox.post(success(&keys));
        assert!(!outbox.lock().flushing, "no flusher could start");
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            outbox.post(success(&keys));
            assert!(outbox.lock().flushing, "a flusher starts now");
        });
        // The runtime is gone with the flusher unfinished: the next may start.
        drop(runtime);
        assert!(!outbox.lock().flushing);
    }

    /// A request's end posted after the record of its head replaces it: one settle goes.
    #[test]
    fn an_end_replaces_the_record_of_its_head() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let fleet = RedisFleet::new("redis://127.0.0.1:1/").unwrap();
            let outbox = Outbox::new(fleet.clone(), Duration::from_secs(60));
            let keys = GroupKeys::of(&fleet, "g");
            let head = Settle {
                head_grace: Some(Duration::from_secs(30)),
                ..success(&keys)
            };
            outbox.post(head);
            outbox.post(success(&keys));
            let riders = outbox.riders(&keys);
            assert_eq!(riders.len(), 1);
            assert!(riders[0].head_grace.is_none());
            assert!(outbox.riders(&keys).is_empty(), "taken once");
        });
    }

    /// An acquire sent while a flush is on its way carries copies of what the flush sends: it
    /// may reach the server first, and must not find the places they free still taken.
    #[test]
    fn settles_on_their_way_ride_again_as_copies() {
        let fleet = RedisFleet::new("redis://127.0.0.1:1/").unwrap();
        let outbox = Outbox::new(fleet.clone(), Duration::from_secs(60));
        let keys = GroupKeys::of(&fleet, "g");
        let head = Settle {
            head_grace: Some(Duration::from_secs(30)),
            ..success(&keys)
        };
        outbox.lock().sending.push((0, head));
        let riders = outbox.riders(&keys);
        assert_eq!(riders.len(), 1);
        assert!(
            riders[0].head_grace.is_some(),
            "a copy of the head on its way"
        );
        assert_eq!(outbox.lock().sending.len(), 1, "still on its way");
        // The end of the same request, waiting, goes instead of the head's copy.
        outbox.lock().waiting.push(success(&keys));
        let riders = outbox.riders(&keys);
        assert_eq!(riders.len(), 1);
        assert!(riders[0].head_grace.is_none());
        // Once the batch arrived, nothing rides.
        drop(Sent {
            outbox: &outbox,
            number: 0,
        });
        assert!(outbox.riders(&keys).is_empty());
    }
}
