//! A group's Redis keys (built once, kept while the group is in use) and a request's place
//! among a group's waiters.

use std::sync::{Arc, OnceLock};

use robots_fetch::RedisFleet;

/// A request in a group's queue of waiters; dropped before its turn came (the request was given
/// up), it leaves the queue in the background, so that it holds no one up.
pub(super) struct Waiter {
    /// None once the turn came.
    pub(super) fleet: Option<RedisFleet>,
    pub(super) keys: Arc<GroupKeys>,
    pub(super) id: String,
}

impl Drop for Waiter {
    fn drop(&mut self) {
        let Some(fleet) = self.fleet.take() else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let keys = self.keys.clone();
        let id = std::mem::take(&mut self.id);
        runtime.spawn(async move {
            let Ok(mut connection) = fleet.connection() else {
                return;
            };
            let mut pipe = redis::pipe();
            pipe.zrem(&keys.waiters, &id)
                .ignore()
                .zrem(&keys.waiting, &id)
                .ignore();
            let _ = fleet.run(pipe.query_async::<()>(&mut connection)).await;
        });
    }
}

/// A request's id in the fleet (its lease and its place among the waiters): the process id, a
/// random number drawn once per process (process ids repeat across machines), and a counter.
pub(super) fn request_id() -> String {
    static PROCESS: OnceLock<u64> = OnceLock::new();
    static REQUESTS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    format!(
        "{}-{:x}-{}",
        std::process::id(),
        PROCESS.get_or_init(|| fastrand::u64(..)),
        REQUESTS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    )
}

/// A group's Redis keys, built once and shared by its requests while the group is in use.
pub(crate) struct GroupKeys {
    pub(crate) pace: String,
    pub(crate) leases: String,
    pub(crate) epoch: String,
    pub(crate) waiters: String,
    pub(crate) waiting: String,
}

impl GroupKeys {
    pub(super) fn of(fleet: &RedisFleet, group: &str) -> Arc<GroupKeys> {
        Arc::new(GroupKeys {
            pace: fleet.key(group, "pace"),
            leases: fleet.key(group, "leases"),
            epoch: fleet.epoch_key(group),
            waiters: fleet.key(group, "waiters"),
            waiting: fleet.key(group, "waiting"),
        })
    }

    /// The bytes it holds, with its group's name.
    fn weight(group: &str, keys: &GroupKeys) -> u64 {
        let names = [
            &keys.pace,
            &keys.leases,
            &keys.epoch,
            &keys.waiters,
            &keys.waiting,
        ];
        (group.len() + names.iter().map(|name| name.len()).sum::<usize>() + 128) as u64
    }
}

/// The most bytes of key names kept for groups in use.
const KEY_NAMES_BUDGET: u64 = 1 << 20;

/// Recently used groups' key names. Building them (five names, the epoch key's hash slot) was
/// about a tenth of a paced request's own CPU in the `fleet` bench; a hit is one lookup.
pub(super) struct KeyNames(quick_cache::sync::Cache<String, Arc<GroupKeys>, KeyNamesWeight>);

#[derive(Clone)]
struct KeyNamesWeight;

impl quick_cache::Weighter<String, Arc<GroupKeys>> for KeyNamesWeight {
    fn weight(&self, group: &String, keys: &Arc<GroupKeys>) -> u64 {
        GroupKeys::weight(group, keys)
    }
}

impl KeyNames {
    pub(super) fn new() -> KeyNames {
        // (About 200 bytes a group: some 5,000 groups.)
        KeyNames(quick_cache::sync::Cache::with_weighter(
            5_000,
            KEY_NAMES_BUDGET,
            KeyNamesWeight,
        ))
    }

    pub(super) fn of(&self, fleet: &RedisFleet, group: &str) -> Arc<GroupKeys> {
        if let Some(keys) = self.0.get(group) {
            return keys;
        }
        let keys = GroupKeys::of(fleet, group);
        self.0.insert(group.to_string(), keys.clone());
        keys
    }
}
