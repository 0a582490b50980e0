//! Which fresh copies the cache had to drop for room, so that a fetch of one of them is counted
//! as a refetch (`CacheStats::refetches`): a cache too small for the crawl shows up there.

use std::collections::{HashMap, VecDeque};
use std::hash::BuildHasher;
use std::sync::{Arc, Mutex};

use tokio::time::Instant;

use super::entry::CachedRobots;
use crate::origin::Origin;

/// The last evicted fresh copies: each origin's hash and when its copy would have needed a
/// refresh, first in first out, at most `remembered` of them (about 40 bytes each).
#[derive(Clone)]
pub(crate) struct Evicted {
    inner: Arc<Mutex<Remembered>>,
    hasher: std::hash::RandomState,
}

struct Remembered {
    fresh_until: HashMap<u64, Instant>,
    order: VecDeque<u64>,
    limit: usize,
}

impl Evicted {
    /// Remembers up to `remembered` evicted origins, the oldest forgotten first.
    pub(crate) fn new(remembered: usize) -> Evicted {
        Evicted {
            inner: Arc::new(Mutex::new(Remembered {
                fresh_until: HashMap::new(),
                order: VecDeque::new(),
                limit: remembered.max(1),
            })),
            hasher: std::hash::RandomState::new(),
        }
    }

    fn key(&self, origin: &Origin) -> u64 {
        self.hasher.hash_one(origin.as_str())
    }

    /// Whether `origin`'s copy was evicted while still fresh at `now` (forgotten once asked:
    /// a refetch is counted once).
    pub(crate) fn was_fresh(&self, origin: &Origin, now: Instant) -> bool {
        let key = self.key(origin);
        let mut remembered = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        // Marked as counted (not removed: its place in the order stays).
        remembered
            .fresh_until
            .get_mut(&key)
            .is_some_and(|until| std::mem::replace(until, now) > now)
    }

    fn remember(&self, origin: &Origin, until: Instant) {
        let key = self.key(origin);
        let mut remembered = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if remembered.fresh_until.insert(key, until).is_none() {
            remembered.order.push_back(key);
        }
        while remembered.order.len() > remembered.limit {
            if let Some(oldest) = remembered.order.pop_front() {
                remembered.fresh_until.remove(&oldest);
            }
        }
    }
}

impl quick_cache::Lifecycle<Origin, Arc<CachedRobots>> for Evicted {
    type RequestState = ();

    fn on_evict(&self, _: &mut (), origin: Origin, entry: Arc<CachedRobots>) {
        let until = entry.refresh_at();
        if until > Instant::now() {
            self.remember(&origin, until);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_fresh_eviction_is_counted_once_and_the_oldest_forgotten() {
        let evicted = Evicted::new(2);
        let now = Instant::now();
        let origin = |name: &str| Origin::parse(&format!("http://{name}")).unwrap();
        let soon = now + Duration::from_secs(60);
        evicted.remember(&origin("a.test"), soon);
        evicted.remember(&origin("b.test"), soon);
        evicted.remember(&origin("stale.test"), now);
        assert!(!evicted.was_fresh(&origin("stale.test"), now), "expired");
        evicted.remember(&origin("c.test"), soon);
        // Two remembered at most: a.test and b.test went first.
        assert!(!evicted.was_fresh(&origin("a.test"), now));
        assert!(evicted.was_fresh(&origin("c.test"), now));
        assert!(!evicted.was_fresh(&origin("c.test"), now), "counted once");
        assert!(!evicted.was_fresh(&origin("never.test"), now));
    }
}
