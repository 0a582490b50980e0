//! The Redis (or Valkey) backend of a fleet (spec section 11, feature `redis`): [`RedisFleet`] is
//! the shared connection (a `redis` `ConnectionManager`, which reconnects on its own) with the key
//! prefix and outage reporting; [`RedisStore`] is the [`RobotsStore`] on it. `robots-tower` paces
//! on the same connection.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use redis::AsyncCommands;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use tracing::warn;

use crate::store::{RobotsStore, StoreError, StoreFuture, StoredRobots};

/// Why a Redis fleet could not be set up or used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FleetError {
    /// The URL is not a Redis URL.
    #[error("`{url}` is not a Redis URL: {message}")]
    InvalidUrl {
        /// The URL as given.
        url: String,
        /// What the Redis client said.
        message: String,
    },
    /// The server did not answer (refused, timed out, down, loading, read-only after a
    /// failover, a cluster without a master for the slot).
    #[error("Redis is unavailable: {message}")]
    Unavailable {
        /// What the Redis client said.
        message: String,
    },
    /// The server answered, with an error: a command or script it refused (a bug, not an
    /// outage). Never counted as an outage.
    #[error("Redis refused a command: {message}")]
    Rejected {
        /// What the server said.
        message: String,
    },
}

impl FleetError {
    /// Whether the server could not be reached (an outage), rather than refusing a command.
    pub fn is_unavailable(&self) -> bool {
        matches!(self, FleetError::Unavailable { .. })
    }
}

/// Whether an error is the server's answer to a command it refused (a script error, a wrong
/// type), as opposed to a server that could not answer.
fn is_refusal(error: &redis::RedisError) -> bool {
    use redis::{ErrorKind, ServerErrorKind};
    matches!(
        error.kind(),
        ErrorKind::Server(
            ServerErrorKind::ResponseError
                | ServerErrorKind::CrossSlot
                | ServerErrorKind::NoPerm
                | ServerErrorKind::ExecAbort
        ) | ErrorKind::Extension
            | ErrorKind::UnexpectedReturnType
    )
}

/// Where the fleet's server is: one server, or a Redis Cluster.
#[derive(Clone)]
enum Server {
    /// A ready connection was given.
    Given,
    Single(redis::Client),
    Cluster(Box<redis::cluster::ClusterClient>),
}

/// The connection to the fleet's Redis: one server (a `ConnectionManager`, which reconnects on
/// its own) or a Redis Cluster (the `redis` crate's cluster connection, which follows the slot
/// map). Cheap to clone; clones share the connection.
#[derive(Clone)]
pub enum FleetConnection {
    /// One server.
    Single(ConnectionManager),
    /// A Redis Cluster. Every key of a group (and its epoch key) shares one hash slot, so each
    /// script runs on one node.
    Cluster(redis::cluster_async::ClusterConnection),
}

impl redis::aio::ConnectionLike for FleetConnection {
    fn req_packed_command<'a>(
        &'a mut self,
        cmd: &'a redis::Cmd,
    ) -> redis::RedisFuture<'a, redis::Value> {
        match self {
            FleetConnection::Single(c) => c.req_packed_command(cmd),
            FleetConnection::Cluster(c) => c.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a redis::Pipeline,
        offset: usize,
        count: usize,
    ) -> redis::RedisFuture<'a, Vec<redis::Value>> {
        match self {
            FleetConnection::Single(c) => c.req_packed_commands(pipeline, offset, count),
            FleetConnection::Cluster(c) => c.req_packed_commands(pipeline, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            FleetConnection::Single(c) => c.get_db(),
            FleetConnection::Cluster(c) => c.get_db(),
        }
    }
}

/// The node URLs of `redis+cluster://host:port,host:port/` (`rediss+cluster://` for TLS), or
/// `None` when `url` is not a cluster URL.
fn cluster_nodes(url: &str) -> Option<Result<Vec<String>, String>> {
    let (scheme, rest) = url.split_once("+cluster://")?;
    if scheme != "redis" && scheme != "rediss" {
        return Some(Err(format!("unknown scheme `{scheme}+cluster`")));
    }
    let authority = rest.split('/').next().unwrap_or_default();
    let nodes: Vec<String> = authority
        .split(',')
        .filter(|node| !node.is_empty())
        .map(|node| format!("{scheme}://{node}/"))
        .collect();
    if nodes.is_empty() {
        return Some(Err("no node given".to_string()));
    }
    Some(Ok(nodes))
}

struct FleetInner {
    server: Server,
    /// Made on first use, inside the runtime (a `ConnectionManager` spawns a task).
    connection: OnceLock<FleetConnection>,
    prefix: String,
    down: AtomicBool,
    /// Outages seen (each counted once, when it begins).
    outages: AtomicU64,
    response_timeout: Duration,
    /// The `run_id` of the server last answering (one server only), read again after any
    /// failure: a different one means another server (a restart, a failover).
    identity: std::sync::Mutex<Option<String>>,
    /// Whether the server's eviction policy was looked at (once per handle and its clones).
    eviction_checked: AtomicBool,
    /// Commands sent in the background (`RedisFleet::spawn`) not yet done, and said when
    /// none is left.
    background: AtomicU64,
    settled: tokio::sync::Notify,
}

/// The Redis server a fleet of crawler processes shares: one robots.txt fetch per origin and one
/// politeness budget per origin for all of them. Cheap to clone; clones share the connection.
///
/// ```
/// use robots_fetch::{RedisFleet, RobotsCache};
/// let fleet = RedisFleet::new("redis://127.0.0.1:6379/")?.prefix("crawl-42");
/// let cache = RobotsCache::builder("FooBot/1.0 (+https://foo.example/bot)").fleet(&fleet).build();
/// # let _ = cache;
/// # Ok::<(), robots_fetch::FleetError>(())
/// ```
///
/// Keys are `<prefix>:{<origin>}:…`: the origin in braces is a cluster hash tag, so the keys of
/// one origin share a slot. Every key expires on its own. While the server is unreachable, each
/// caller falls back (the robots cache to its local copy or a local fetch; pacing to its
/// configured policy) and the outage is logged once, and its end once.
#[derive(Clone)]
pub struct RedisFleet {
    inner: Arc<FleetInner>,
}

impl std::fmt::Debug for RedisFleet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisFleet")
            .field("cluster", &self.is_cluster())
            .field("prefix", &self.inner.prefix)
            .field("down", &self.inner.down.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl RedisFleet {
    /// A fleet on the server at `url`: `redis://host:port/db` for one server, or
    /// `redis+cluster://host:port,host:port/` for a Redis Cluster (any reachable nodes; the
    /// rest of the cluster is found from them). Nothing is connected until first use; the
    /// connection then reconnects on its own.
    ///
    /// ```
    /// use robots_fetch::RedisFleet;
    /// let one = RedisFleet::new("redis://127.0.0.1:6379/")?;
    /// let cluster = RedisFleet::new("redis+cluster://10.0.0.5:7000,10.0.0.6:7000/")?;
    /// # let _ = (one, cluster);
    /// # Ok::<(), robots_fetch::FleetError>(())
    /// ```
    pub fn new(url: &str) -> Result<RedisFleet, FleetError> {
        let invalid = |message: String| FleetError::InvalidUrl {
            url: url.to_string(),
            message,
        };
        let server = match cluster_nodes(url) {
            Some(nodes) => Server::Cluster(Box::new(
                redis::cluster::ClusterClient::new(nodes.map_err(invalid)?)
                    .map_err(|e| invalid(e.to_string()))?,
            )),
            None => Server::Single(redis::Client::open(url).map_err(|e| invalid(e.to_string()))?),
        };
        Ok(RedisFleet::build(server, OnceLock::new()))
    }

    /// A fleet on a ready connection.
    pub fn with_connection(connection: ConnectionManager) -> RedisFleet {
        let cell = OnceLock::new();
        let _ = cell.set(FleetConnection::Single(connection));
        RedisFleet::build(Server::Given, cell)
    }

    /// Whether the fleet's server is a Redis Cluster.
    pub fn is_cluster(&self) -> bool {
        matches!(self.inner.server, Server::Cluster(_))
    }

    fn build(server: Server, connection: OnceLock<FleetConnection>) -> RedisFleet {
        RedisFleet {
            inner: Arc::new(FleetInner {
                server,
                connection,
                prefix: "robots".to_string(),
                down: AtomicBool::new(false),
                outages: AtomicU64::new(0),
                response_timeout: Duration::from_secs(2),
                identity: std::sync::Mutex::new(None),
                eviction_checked: AtomicBool::new(false),
                background: AtomicU64::new(0),
                settled: tokio::sync::Notify::new(),
            }),
        }
    }

    /// The key prefix (`robots`): fleets with different prefixes share nothing.
    pub fn prefix(self, prefix: &str) -> RedisFleet {
        self.rebuild(|inner| inner.prefix = prefix.to_string())
    }

    /// How long a command may take before it counts as a failure (2 s). A server that stops
    /// answering must not stall the crawl: the callers fall back instead.
    pub fn response_timeout(self, timeout: Duration) -> RedisFleet {
        self.rebuild(|inner| inner.response_timeout = timeout)
    }

    fn rebuild(self, change: impl FnOnce(&mut FleetInner)) -> RedisFleet {
        let mut inner = FleetInner {
            server: self.inner.server.clone(),
            connection: self.inner.connection.clone(),
            prefix: self.inner.prefix.clone(),
            down: AtomicBool::new(false),
            outages: AtomicU64::new(0),
            response_timeout: self.inner.response_timeout,
            identity: std::sync::Mutex::new(None),
            eviction_checked: AtomicBool::new(false),
            background: AtomicU64::new(0),
            settled: tokio::sync::Notify::new(),
        };
        change(&mut inner);
        RedisFleet {
            inner: Arc::new(inner),
        }
    }

    /// Runs `work` (commands to this fleet's Redis) in the background of the current tokio
    /// runtime, counted until it is done so that [`RedisFleet::settle`] can wait for it; without
    /// a runtime it is dropped (what it would have written expires on its own).
    pub fn spawn(&self, work: impl std::future::Future<Output = ()> + Send + 'static) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let fleet = self.clone();
        fleet.inner.background.fetch_add(1, Ordering::AcqRel);
        drop(runtime.spawn(async move {
            work.await;
            if fleet.inner.background.fetch_sub(1, Ordering::AcqRel) == 1 {
                fleet.inner.settled.notify_waiters();
            }
        }));
    }

    /// Waits until the work sent in the background ([`RedisFleet::spawn`]: releases of leases
    /// whose responses ended, records of responses) is done, at most `within`: a process about
    /// to exit calls it so that its last leases are released rather than left to expire.
    /// Whether everything was done.
    pub async fn settle(&self, within: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            let settled = self.inner.settled.notified();
            if self.inner.background.load(Ordering::Acquire) == 0 {
                return true;
            }
            if tokio::time::timeout_at(deadline, settled).await.is_err() {
                return false;
            }
        }
    }

    /// The key `<prefix>:{<group>}:<rest>`: `group` is what the keys are about, a politeness
    /// group or an origin's robots.txt, in braces so that all its keys share a Cluster slot.
    pub fn key(&self, group: &str, rest: &str) -> String {
        format!("{}:{{{group}}}:{rest}", self.inner.prefix)
    }

    /// The fleet's epoch key for `group`'s hash slot (`<prefix>:{epoch-<n>}:epoch`, with `n`
    /// chosen so that the key shares the slot of `group`'s keys). A script can then read the
    /// epoch and the group's state atomically, on one node of a cluster too. A server that lost
    /// its state has no epoch, and the first script to notice records the loss. The value is
    /// `<since>:<run_id>`: since when the server has held the fleet's state (the server's
    /// milliseconds) and which server it is, so that a failover to another server is noticed
    /// too.
    pub fn epoch_key(&self, group: &str) -> String {
        let slot = redis::cluster_routing::Slot::for_key(format!("{{{group}}}"));
        let n = epoch_tags().get(&slot).copied().unwrap_or(0);
        format!("{}:{{epoch-{n}}}:epoch", self.inner.prefix)
    }

    /// The connection, made on first use. Must be called inside a tokio runtime.
    pub fn connection(&self) -> Result<FleetConnection, FleetError> {
        if let Some(connection) = self.inner.connection.get() {
            return Ok(connection.clone());
        }
        let timeout = self.inner.response_timeout;
        let connection = match &self.inner.server {
            Server::Given => {
                return Err(FleetError::Unavailable {
                    message: "no connection".into(),
                });
            }
            Server::Single(client) => {
                let config = ConnectionManagerConfig::new()
                    .set_connection_timeout(Some(timeout))
                    .set_response_timeout(Some(timeout))
                    .set_number_of_retries(1)
                    .set_max_delay(Duration::from_secs(1));
                FleetConnection::Single(
                    ConnectionManager::new_lazy_with_config(client.clone(), config).map_err(
                        |e| FleetError::Unavailable {
                            message: e.to_string(),
                        },
                    )?,
                )
            }
            // Connects in the background: the first command finds out whether the cluster is up.
            Server::Cluster(client) => FleetConnection::Cluster(
                client.get_pending_async_connection_with_config(
                    redis::cluster::ClusterConfig::new()
                        .set_connection_timeout(timeout)
                        .set_response_timeout(timeout),
                ),
            ),
        };
        Ok(self.inner.connection.get_or_init(|| connection).clone())
    }

    /// Runs a command future against the server within the response timeout, reporting the
    /// outage once and its end once.
    pub async fn run<T, F>(&self, command: F) -> Result<T, FleetError>
    where
        F: std::future::Future<Output = redis::RedisResult<T>>,
    {
        let result = match tokio::time::timeout(self.inner.response_timeout, command).await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(e)) if is_refusal(&e) => Err(FleetError::Rejected {
                message: e.to_string(),
            }),
            Ok(Err(e)) => Err(FleetError::Unavailable {
                message: e.to_string(),
            }),
            Err(_) => Err(FleetError::Unavailable {
                message: format!("no answer within {:?}", self.inner.response_timeout),
            }),
        };
        self.observe(&result);
        result
    }

    /// Which server answers (its `run_id`): another one after a restart or a failover. Read
    /// once, and again after any command failed (a failover breaks the connections to the old
    /// server first). `None` on a Redis Cluster (each node has its own) or when it cannot be
    /// read. The first time, a server that evicts keys when full is warned about (once).
    pub async fn server_identity(&self) -> Option<String> {
        if self.is_cluster() {
            return None;
        }
        if let Some(known) = self
            .inner
            .identity
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
        {
            return Some(known);
        }
        let mut connection = self.connection().ok()?;
        let mut command = redis::cmd("INFO");
        command.arg("server");
        let info: String = self.run(command.query_async(&mut connection)).await.ok()?;
        let id = info
            .lines()
            .find_map(|line| line.strip_prefix("run_id:"))
            .map(|id| id.trim().to_string())
            .filter(|id| !id.is_empty())?;
        *self
            .inner
            .identity
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = Some(id.clone());
        if !self.inner.eviction_checked.swap(true, Ordering::Relaxed) {
            self.warn_if_evicting(&mut connection).await;
        }
        Some(id)
    }

    /// Warns when the server may evict keys when it is full (a `maxmemory` with a policy other
    /// than `noeviction`): a group's pacing state evicted is a loss of state no process can see,
    /// where a full server that refuses writes is an outage, which the fleet handles.
    async fn warn_if_evicting(&self, connection: &mut FleetConnection) {
        let mut command = redis::cmd("INFO");
        command.arg("memory");
        let Ok(info) = self.run(command.query_async::<String>(connection)).await else {
            return;
        };
        let field = |name: &str| {
            info.lines()
                .find_map(|line| line.strip_prefix(name))
                .map(str::trim)
        };
        let limit = field("maxmemory:").and_then(|m| m.parse::<u64>().ok());
        let policy = field("maxmemory_policy:").unwrap_or("noeviction");
        if limit.is_some_and(|limit| limit > 0) && policy != "noeviction" {
            warn!(
                prefix = %self.inner.prefix,
                "the fleet's Redis evicts keys when full (maxmemory-policy {policy}): pacing state it \
                 evicts is lost without the fleet knowing; set maxmemory-policy noeviction"
            );
        }
    }

    /// Records whether the server answered: logs the outage once, and its end once.
    pub fn observe<T>(&self, result: &Result<T, FleetError>) {
        if let Err(error) = result
            && !error.is_unavailable()
        {
            // The server answered: no outage, but a bug worth an error line.
            tracing::error!(prefix = %self.inner.prefix, %error, "Redis refused a fleet command");
            return;
        }
        if result.is_err() {
            // The next command may reach another server.
            *self
                .inner
                .identity
                .lock()
                .unwrap_or_else(|e| e.into_inner()) = None;
        }
        match result {
            Ok(_) => {
                // At the outage's own level: whoever saw it begin sees it end.
                if self.inner.down.swap(false, Ordering::Relaxed) {
                    warn!(prefix = %self.inner.prefix, "Redis is reachable again: the fleet shares robots.txt and politeness");
                }
            }
            Err(error) => {
                if !self.inner.down.swap(true, Ordering::Relaxed) {
                    self.inner.outages.fetch_add(1, Ordering::Relaxed);
                    warn!(prefix = %self.inner.prefix, %error, "Redis is unreachable: falling back until it is back");
                }
            }
        }
    }

    /// Whether the last command failed.
    pub fn is_down(&self) -> bool {
        self.inner.down.load(Ordering::Relaxed)
    }

    /// How many outages this handle (and its clones) has seen, each counted once when it began.
    pub fn outages(&self) -> u64 {
        self.inner.outages.load(Ordering::Relaxed)
    }
}

/// For each of the 16,384 cluster slots, the smallest `n` whose tag `epoch-<n>` hashes to it
/// (found once, about 170,000 hashes).
fn epoch_tags() -> &'static std::collections::HashMap<redis::cluster_routing::Slot, u32> {
    static TAGS: OnceLock<std::collections::HashMap<redis::cluster_routing::Slot, u32>> =
        OnceLock::new();
    TAGS.get_or_init(|| {
        const SLOTS: usize = 16_384;
        let mut tags = std::collections::HashMap::with_capacity(SLOTS);
        let mut n = 0u32;
        while tags.len() < SLOTS && n < 10_000_000 {
            let slot = redis::cluster_routing::Slot::for_key(format!("{{epoch-{n}}}"));
            tags.entry(slot).or_insert(n);
            n += 1;
        }
        tags
    })
}

/// The [`RobotsStore`] on a [`RedisFleet`]: records as strings with `PX` expiry, the fetch lock
/// as `SET NX PX` released by its owner only (a compare-and-delete script).
#[derive(Debug, Clone)]
pub struct RedisStore {
    fleet: RedisFleet,
}

const UNLOCK: &str = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end";

fn unlock_script() -> &'static redis::Script {
    static SCRIPT: OnceLock<redis::Script> = OnceLock::new();
    SCRIPT.get_or_init(|| redis::Script::new(UNLOCK))
}

impl RedisStore {
    /// The store on `fleet`.
    pub fn new(fleet: RedisFleet) -> RedisStore {
        RedisStore { fleet }
    }

    /// The cache's key (`{origin}:robots:<identity>`) under the fleet's prefix.
    fn key(&self, key: &str) -> String {
        format!("{}:{key}", self.fleet.inner.prefix)
    }
}

/// `PX` takes at least 1 ms.
fn px(duration: Duration) -> u64 {
    crate::store::millis(duration).max(1)
}

fn store_error(error: FleetError) -> StoreError {
    StoreError {
        message: error.to_string(),
    }
}

impl RobotsStore for RedisStore {
    fn reports_outages(&self) -> bool {
        // `RedisFleet::run` logs each outage once for the robots store and pacing together.
        true
    }

    fn load<'a>(&'a self, key: &'a str) -> StoreFuture<'a, Option<StoredRobots>> {
        Box::pin(async move {
            let mut connection = self.fleet.connection().map_err(store_error)?;
            let key = self.key(key);
            let bytes: Option<Vec<u8>> = self
                .fleet
                .run(connection.get(&key))
                .await
                .map_err(store_error)?;
            Ok(bytes.and_then(|b| StoredRobots::decode(&b)))
        })
    }

    fn save<'a>(
        &'a self,
        key: &'a str,
        record: &'a StoredRobots,
        ttl: Duration,
    ) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let mut connection = self.fleet.connection().map_err(store_error)?;
            let key = self.key(key);
            let value = record.encode();
            let options =
                redis::SetOptions::default().with_expiration(redis::SetExpiry::PX(px(ttl)));
            self.fleet
                .run(connection.set_options::<_, _, ()>(&key, value, options))
                .await
                .map_err(store_error)
        })
    }

    fn try_lock<'a>(
        &'a self,
        key: &'a str,
        owner: &'a str,
        ttl: Duration,
    ) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let mut connection = self.fleet.connection().map_err(store_error)?;
            let key = self.key(key);
            let options = redis::SetOptions::default()
                .conditional_set(redis::ExistenceCheck::NX)
                .with_expiration(redis::SetExpiry::PX(px(ttl)));
            let set: Option<String> = self
                .fleet
                .run(connection.set_options(&key, owner, options))
                .await
                .map_err(store_error)?;
            Ok(set.is_some())
        })
    }

    fn unlock<'a>(&'a self, key: &'a str, owner: &'a str) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let mut connection = self.fleet.connection().map_err(store_error)?;
            let key = self.key(key);
            let mut invocation = unlock_script().key(&key);
            invocation.arg(owner);
            self.fleet
                .run(invocation.invoke_async::<i64>(&mut connection))
                .await
                .map(|_| ())
                .map_err(store_error)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use redis::cluster_routing::Slot;

    #[test]
    fn cluster_urls_name_their_nodes() {
        assert_eq!(
            cluster_nodes("redis+cluster://10.0.0.5:7000,10.0.0.6:7001/"),
            Some(Ok(vec![
                "redis://10.0.0.5:7000/".to_string(),
                "redis://10.0.0.6:7001/".to_string()
            ]))
        );
        assert_eq!(
            cluster_nodes("rediss+cluster://a.example:7000"),
            Some(Ok(vec!["rediss://a.example:7000/".to_string()]))
        );
        assert_eq!(cluster_nodes("redis://127.0.0.1:6379/"), None);
        assert!(matches!(cluster_nodes("redis+cluster:///"), Some(Err(_))));
        assert!(matches!(cluster_nodes("http+cluster://a:1/"), Some(Err(_))));
        assert!(
            RedisFleet::new("redis+cluster://127.0.0.1:7000/")
                .unwrap()
                .is_cluster()
        );
        assert!(
            !RedisFleet::new("redis://127.0.0.1:7000/")
                .unwrap()
                .is_cluster()
        );
        let error = RedisFleet::new("redis+cluster:///").unwrap_err();
        assert_eq!(
            error.to_string(),
            "`redis+cluster:///` is not a Redis URL: no node given"
        );
    }

    #[test]
    fn every_group_has_an_epoch_key_in_its_own_slot() {
        assert_eq!(epoch_tags().len(), 16_384);
        let fleet = RedisFleet::new("redis://127.0.0.1:1/")
            .unwrap()
            .prefix("crawl");
        for group in [
            "example.com",
            "[::1]",
            "a.b.example.co.uk",
            "203.0.113.7",
            "x",
        ] {
            let epoch = fleet.epoch_key(group);
            assert!(
                epoch.starts_with("crawl:{epoch-") && epoch.ends_with("}:epoch"),
                "{epoch}"
            );
            assert_eq!(
                Slot::for_key(&epoch),
                Slot::for_key(fleet.key(group, "pace")),
                "{group}"
            );
        }
    }
}
