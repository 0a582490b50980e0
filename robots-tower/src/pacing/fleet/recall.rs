//! After a failover, requests this process ended shortly before may still hold places on the
//! promoted server: their ends went to the server that died, and its replica never saw them.
//! The process remembers its recent ends, and says them again when it sees the epoch of their
//! slot change (a failover, a restart): a place is not waited out to its lease's expiry while
//! the process that held it is alive.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;

use super::GroupKeys;
use super::settle::Settle;

/// At most this many ends are remembered (bounded memory whatever the rate).
const MOST_REMEMBERED: usize = 16_384;

/// A process's recent ends, and the epoch it last saw of each slot.
pub(super) struct Recall {
    /// How long an end is remembered: as long as its lease could have lasted.
    remember: Duration,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    ended: VecDeque<Ended>,
    /// Epoch key → the epoch last seen (one per cluster slot in use, at most 16,384).
    epochs: HashMap<String, String>,
}

struct Ended {
    keys: Arc<GroupKeys>,
    id: Arc<str>,
    at: Instant,
    idle_ttl: Duration,
}

impl Recall {
    pub(super) fn new(remember: Duration) -> Recall {
        Recall {
            remember,
            state: Mutex::new(State::default()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Remembers the end of the request holding lease `id` in the group of `keys`, at `at`
    /// (now).
    pub(super) fn ended(
        &self,
        keys: &Arc<GroupKeys>,
        id: &Arc<str>,
        idle_ttl: Duration,
        at: Instant,
    ) {
        if id.is_empty() {
            return;
        }
        let mut state = self.lock();
        while state.ended.len() >= MOST_REMEMBERED
            || state
                .ended
                .front()
                .is_some_and(|oldest| at.saturating_duration_since(oldest.at) > self.remember)
        {
            state.ended.pop_front();
        }
        state.ended.push_back(Ended {
            keys: keys.clone(),
            id: id.clone(),
            at,
            idle_ttl,
        });
    }

    /// Notes the epoch an answer for `keys` came with. When it is not the one last seen for
    /// that slot, the ends of that slot to say again.
    pub(super) fn saw_epoch(&self, keys: &GroupKeys, epoch: &str) -> Vec<Settle> {
        let mut state = self.lock();
        match state.epochs.get_mut(&keys.epoch) {
            Some(known) if known == epoch => return Vec::new(),
            Some(known) => *known = epoch.to_string(),
            None => {
                state.epochs.insert(keys.epoch.clone(), epoch.to_string());
                return Vec::new();
            }
        }
        state
            .ended
            .iter()
            .filter(|ended| ended.keys.epoch == keys.epoch && ended.at.elapsed() <= self.remember)
            .map(|ended| Settle {
                keys: ended.keys.clone(),
                id: ended.id.clone(),
                at: ended.at,
                head_grace: None,
                // (Said once already: the streak is not ended again.)
                ends_streak: false,
                adaptive: None,
                idle_ttl: ended.idle_ttl,
            })
            .collect()
    }
}
