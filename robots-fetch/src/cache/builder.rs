//! The cache's builder ([`RobotsCacheBuilder`]) and the bounded map it builds: weighed in bytes, sharded, never larger than the budget.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tracing::warn;

use crate::fetch::FetchConfig;
use crate::origin::Origin;
use crate::store::{RobotsStore, now_ms};

use super::{CachedRobots, Counters, Inner, RobotsCache};
use crate::lifetime::CacheConfig;

/// Weighs entries by their heap bytes for `quick_cache`, with a floor that makes the count bound
/// hold too (`max_bytes / capacity` each).
#[derive(Debug, Clone, Copy)]
pub(super) struct ByteWeighter {
    floor: u64,
}

impl quick_cache::Weighter<Origin, Arc<CachedRobots>> for ByteWeighter {
    fn weight(&self, origin: &Origin, entry: &Arc<CachedRobots>) -> u64 {
        // Computed once per entry at construction: weighing must be cheap.
        // The key is held in the cache's slot beside the entry.
        let key = std::mem::size_of::<Origin>() + origin.heap_bytes();
        (entry.heap_bytes as u64 + key as u64).max(self.floor)
    }
}

/// Builds a [`RobotsCache`].
#[derive(Debug, Clone)]
pub struct RobotsCacheBuilder {
    config: CacheConfig,
    fetch: FetchConfig,
    tokens: Option<Vec<String>>,
    tokens_from_user_agent: bool,
    user_agent: String,
    invalid_user_agent: bool,
    store: Option<Arc<dyn RobotsStore>>,
    policy_tokens: Vec<String>,
    metrics_name: Option<String>,
}

impl std::fmt::Debug for dyn RobotsStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RobotsStore")
    }
}

/// Smallest byte budget: a shard of the map must hold several of the largest entries
/// (a 500 KiB file takes about 600 KB), or big files would never stay cached and every request
/// to their origin would fetch robots.txt again.
pub(super) const MIN_BUDGET: u64 = 4 * 1024 * 1024;
/// The part of the budget kept for origins seen more than once (see `entries_map`).
pub(super) const HOT_ALLOCATION: f64 = 0.3;
/// Each shard of the map gets at least this much of the budget.
pub(super) const MIN_SHARD_BYTES: u64 = 4 * 1024 * 1024;

/// The map of cached entries, weighed in bytes, telling `Evicted` what it drops.
pub(super) type Entries = quick_cache::sync::Cache<
    Origin,
    Arc<CachedRobots>,
    ByteWeighter,
    quick_cache::DefaultHashBuilder,
    super::evicted::Evicted,
>;

pub(super) fn entries_map(config: &CacheConfig, evicted: super::evicted::Evicted) -> Entries {
    let budget = config.max_bytes.max(MIN_BUDGET);
    let capacity = config.capacity.max(1);
    let parallelism = std::thread::available_parallelism().map_or(4, |n| n.get()) as u64;
    let shards = (budget / MIN_SHARD_BYTES).clamp(1, parallelism * 4);
    let estimated = usize::try_from(capacity.min(budget / 2048).max(1)).unwrap_or(usize::MAX);
    let weighter = ByteWeighter {
        floor: (budget / capacity).max(1),
    };
    let options = quick_cache::OptionsBuilder::new()
        .estimated_items_capacity(estimated)
        .weight_capacity(budget)
        // A crawl visits an origin in bursts and comes back to it later, so recency is what
        // matters. At quick_cache's default (97% of the budget "hot", kept for keys seen twice)
        // a new origin had 3% of the cache to be revisited in: past about 3,000 other origins
        // its fresh robots.txt was dropped and fetched again. With 30% hot, an origin revisited
        // after up to 60% of the capacity in new origins is still cached (an LRU of the same
        // size: 50%, as each step visits two origins), and a Zipf-like load misses less than
        // under an LRU (34.0% against 35.8% at 100,000 entries; the default: 33.0%). Measured
        // in BENCHMARKS.md ("the robots cache at scale").
        .hot_allocation(HOT_ALLOCATION)
        .shards(usize::try_from(shards).unwrap_or(1))
        .build();
    match options {
        Ok(options) => {
            quick_cache::sync::Cache::with_options(options, weighter, Default::default(), evicted)
        }
        // quick_cache refuses only a zero capacity, and both are at least 1 here; its plain
        // constructor is the same cache with its default sharding.
        Err(_) => {
            quick_cache::sync::Cache::with(estimated, budget, weighter, Default::default(), evicted)
        }
    }
}

impl RobotsCacheBuilder {
    /// The product tokens rules are selected by, most specific first. By default the
    /// User-Agent's own token (`FooBot/2.1 (…)` → `FooBot`).
    pub fn tokens<I, S>(mut self, tokens: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.tokens = Some(tokens.into_iter().map(Into::into).collect());
        self
    }

    /// Policy tokens (`Google-Extended`, `Applebot-Extended`…) a URL may also be checked as,
    /// from the same fetched file: each gets its own compiled view, compared as given
    /// ([`CachedRobots::verdict_for_token`]).
    pub fn policy_tokens<I, S>(mut self, tokens: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.policy_tokens = tokens.into_iter().map(Into::into).collect();
        self
    }

    /// `From` header sent with robots.txt requests (an e-mail address to reach the operator).
    pub fn from(mut self, from: &str) -> Self {
        self.fetch.from = http::HeaderValue::from_str(from).ok();
        self
    }

    /// Signs every robots.txt request (Web Bot Auth: see [`crate::RequestSigner`]).
    #[cfg(feature = "web-bot-auth")]
    pub fn signer(mut self, signer: crate::RequestSigner) -> Self {
        self.fetch.signer = Some(signer);
        self
    }

    /// Total time a robots.txt fetch may take, redirects and body included (10 s). Same name
    /// on the front ends' builder (`RobotsConfig::fetch_timeout`).
    pub fn fetch_timeout(mut self, timeout: Duration) -> Self {
        self.fetch.timeout = timeout;
        self
    }

    /// Renamed [`RobotsCacheBuilder::fetch_timeout`], the front ends' name for it.
    #[deprecated(since = "0.1.0", note = "renamed `fetch_timeout`")]
    #[doc(hidden)]
    pub fn timeout(self, timeout: Duration) -> Self {
        self.fetch_timeout(timeout)
    }

    /// Connect timeout of clients built by `reqwest_client` (feature `reqwest`) (5 s).
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.fetch.connect_timeout = timeout;
        self
    }

    /// Which robots.txt redirect hops are followed (default [`crate::HopRule::default`]: not
    /// from a public host into an internal address). A refused hop leaves robots.txt
    /// unreachable, so nothing at the origin is allowed. Same name on the front ends' builder,
    /// where page redirects have their own `redirect_policy`.
    pub fn robots_redirect_rule(mut self, rule: crate::HopRule) -> Self {
        self.fetch.redirect_rule = rule;
        self
    }

    /// Renamed [`RobotsCacheBuilder::robots_redirect_rule`].
    #[deprecated(since = "0.1.0", note = "renamed `robots_redirect_rule`")]
    #[doc(hidden)]
    pub fn redirect_rule(self, rule: crate::HopRule) -> Self {
        self.robots_redirect_rule(rule)
    }

    /// The resolver robots.txt redirect hops are judged by (a public name resolving to an
    /// internal address is refused like an internal literal), and that clients built by
    /// `reqwest_client` (feature `reqwest`) connect with. Default: the system's, cached for a minute.
    pub fn resolver(mut self, resolver: crate::Resolver) -> Self {
        self.fetch.resolver = resolver;
        self
    }

    /// The resolver set with [`RobotsCacheBuilder::resolver`] (or the default one): give the
    /// same to an HTTP client of your own.
    pub fn resolver_in_use(&self) -> &crate::Resolver {
        &self.fetch.resolver
    }

    /// The `cache` label of this cache's gauges (`robots_cache_entries`, `robots_cache_bytes`),
    /// so that several caches in one process are told apart. Default: `cache-N`, N counting
    /// the caches this process built from 0.
    pub fn metrics_name(mut self, name: impl Into<String>) -> Self {
        self.metrics_name = Some(name.into());
        self
    }

    /// Lifetimes, back-off and size. Same name on the front ends' builder.
    pub fn cache_config(mut self, config: CacheConfig) -> Self {
        self.config = config;
        self
    }

    /// Renamed [`RobotsCacheBuilder::cache_config`].
    #[deprecated(since = "0.1.0", note = "renamed `cache_config`")]
    #[doc(hidden)]
    pub fn config(self, config: CacheConfig) -> Self {
        self.cache_config(config)
    }

    /// Share fetched robots.txt files through `store` (another process's cache, or other caches
    /// of this one, using the same store and crawler identity fetch each origin once for all).
    /// While the store fails, the cache works alone and logs the outage once.
    pub fn store(mut self, store: Arc<dyn RobotsStore>) -> Self {
        self.store = Some(store);
        self
    }

    /// Share fetched robots.txt files with every process using this Redis fleet (spec
    /// section 11): one fetch per origin across all of them. Same name on the front ends'
    /// builder, the one way into fleet mode.
    #[cfg(feature = "redis")]
    pub fn fleet(self, fleet: &crate::RedisFleet) -> Self {
        self.store(Arc::new(crate::RedisStore::new(fleet.clone())))
    }

    /// Renamed [`RobotsCacheBuilder::fleet`].
    #[cfg(feature = "redis")]
    #[deprecated(since = "0.1.0", note = "renamed `fleet`")]
    #[doc(hidden)]
    pub fn redis(self, fleet: &crate::RedisFleet) -> Self {
        self.fleet(fleet)
    }

    /// Builds the cache. A User-Agent that is not a valid header value is sent with the invalid
    /// bytes dropped.
    pub fn build(mut self) -> RobotsCache {
        // A User-Agent is reduced to its token here only (spec section 3); given tokens are
        // compared as they are.
        self.tokens_from_user_agent = self.tokens.is_none();
        let tokens = self.tokens.unwrap_or_else(|| {
            vec![
                robots_core::user_agent_token(&self.user_agent)
                    .token
                    .to_string(),
            ]
        });
        if self.invalid_user_agent {
            warn!(user_agent = %self.user_agent, "User-Agent has bytes a header cannot carry; they are dropped");
        }
        let reduced = robots_core::user_agent_token(&self.user_agent);
        if let (true, Some(name)) = (self.tokens_from_user_agent, reduced.lost) {
            warn!(user_agent = %self.user_agent, name, token = reduced.token, "the User-Agent's crawler name is cut short to its product token; name the tokens with .tokens([...])");
        }
        if self.tokens_from_user_agent && reduced.token.eq_ignore_ascii_case("mozilla") {
            warn!(user_agent = %self.user_agent, "the User-Agent reduces to `Mozilla`, which no robots.txt group names: only `*` groups apply; name the crawler's tokens with .tokens([...]), or send `Mozilla/5.0 (compatible; YourBot/1.0; +url)`");
        }
        static CACHES: AtomicU64 = AtomicU64::new(0);
        let number = CACHES.fetch_add(1, Ordering::Relaxed);
        let owner = format!("{}-{}-{number}", std::process::id(), now_ms());
        let metrics_name = self
            .metrics_name
            .unwrap_or_else(|| format!("cache-{number}"));
        let identity = format!(
            "{}|{}",
            String::from_utf8_lossy(self.fetch.user_agent.as_bytes()),
            tokens.join(",")
        );
        // Remembers as many evicted origins as the cache holds (each step of a crawl that
        // revisits evicts about one): a refetch further away than that goes uncounted.
        let evicted = super::evicted::Evicted::new(
            usize::try_from(self.config.capacity).unwrap_or(usize::MAX),
        );
        RobotsCache {
            inner: Arc::new(Inner {
                entries: entries_map(&self.config, evicted.clone()),
                evicted,
                config: self.config,
                fetch: self.fetch,
                tokens,
                policy_tokens: self.policy_tokens.into(),
                inflight: Mutex::new(HashMap::new()),
                counters: Counters::default(),
                store: self.store,
                identity,
                owner,
                store_down: AtomicBool::new(false),
                metrics_name: metrics_name.into(),
            }),
        }
    }

    /// The fetch settings as configured so far.
    pub fn fetch_config(&self) -> &FetchConfig {
        &self.fetch
    }
}

impl RobotsCache {
    /// A builder for a crawler with this User-Agent, sent on every robots.txt request.
    pub fn builder(user_agent: &str) -> RobotsCacheBuilder {
        let (value, invalid) = match http::HeaderValue::from_str(user_agent) {
            Ok(value) => (value, false),
            Err(_) => {
                let cleaned: String = user_agent
                    .chars()
                    .filter(|c| (' '..='~').contains(c))
                    .collect();
                (
                    http::HeaderValue::from_str(&cleaned)
                        .unwrap_or(http::HeaderValue::from_static("robots")),
                    true,
                )
            }
        };
        RobotsCacheBuilder {
            config: CacheConfig::default(),
            fetch: FetchConfig::new(value),
            tokens: None,
            tokens_from_user_agent: false,
            user_agent: user_agent.to_string(),
            invalid_user_agent: invalid,
            store: None,
            policy_tokens: Vec::new(),
            metrics_name: None,
        }
    }
}
