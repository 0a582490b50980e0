//! The robots.txt cache (spec section 7): per origin, shared by every clone and every client,
//! bounded, one fetch per origin at a time, with Google's lifetimes and failure rules.
//!
//! Time is tokio's clock ([`tokio::time::Instant`]), so tests drive it with
//! `tokio::time::pause`. The map itself is a bounded `quick_cache` used only for storage and
//! eviction (its reads never allocate); freshness is decided here from the times each entry
//! carries.
//!
//! Memory is bounded in bytes: every entry is weighed by the heap it holds (the compiled view,
//! sitemaps and the crawler's records; the file itself is not kept), and the cache holds at most
//! [`CacheConfig::max_bytes`] of them, so a hostile site cannot grow it past the budget with
//! big files on many subdomains.
//!
//! The cache and its single flight are here; the rest is a file per job: `entry` (what is
//! cached: the rules, where they came from, their lifetimes), `builder` (configuration and the
//! bounded map), `transition` (a fetch outcome and the previous entry → the next entry, pure),
//! and `shared` (the protocol with a fleet's store).

mod builder;
mod entry;
mod evicted;
mod shared;
mod transition;

use builder::Entries;
use transition::log_entry;

pub use builder::RobotsCacheBuilder;
pub use entry::{CachedRobots, CrawlerRecord, ParsedRobots, Rules, Source, path_of_url};

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio::time::Instant;
use tracing::{debug, trace};

use crate::client::FetchClient;
use crate::fetch::{FetchConfig, fetch_with};
use crate::lifetime::CacheConfig;
use crate::origin::{Origin, OriginKey};
use crate::outcome::FetchOutcome;
use crate::store::RobotsStore;
use crate::time::later;

/// Counters since the cache was built.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Lookups answered from the cache.
    pub hits: u64,
    /// Lookups that found no usable entry (absent or due for a refresh).
    pub misses: u64,
    /// robots.txt requests made (concurrent misses of one origin share one).
    pub fetches: u64,
    /// Fetches that ended unreachable.
    pub errors: u64,
    /// robots.txt bodies parsed and compiled: one per fetched, inserted or shared file.
    pub parses: u64,
    /// Fetches of an origin whose fresh copy the cache had dropped for room: each one a
    /// robots.txt request the site would not have had with a larger cache (`capacity`,
    /// `max_bytes`).
    pub refetches: u64,
    /// Conditional refreshes: fetches of a kept copy sent with its validators (`If-None-Match`,
    /// `If-Modified-Since`).
    pub revalidations: u64,
    /// Conditional refreshes answered `304 Not Modified`: the copy kept, no body sent.
    pub not_modified: u64,
}

#[derive(Debug, Default)]
struct Counters {
    hits: AtomicU64,
    misses: AtomicU64,
    fetches: AtomicU64,
    errors: AtomicU64,
    parses: AtomicU64,
    refetches: AtomicU64,
    revalidations: AtomicU64,
    not_modified: AtomicU64,
}

struct Inner {
    config: CacheConfig,
    fetch: FetchConfig,
    tokens: Vec<String>,
    /// Tokens a URL may also be checked as (`Google-Extended`…), each with its own view.
    policy_tokens: Arc<[String]>,
    entries: Entries,
    /// The fresh copies `entries` dropped for room (shared with its eviction hook).
    evicted: evicted::Evicted,
    /// One lock per origin being fetched, so concurrent callers wait for the one fetch.
    inflight: Mutex<HashMap<Origin, Arc<tokio::sync::Mutex<()>>>>,
    counters: Counters,
    /// Shared with other caches (other processes): one fetch per origin for all of them.
    store: Option<Arc<dyn RobotsStore>>,
    /// The crawler's identity in store keys, so different crawlers never share by accident.
    identity: String,
    /// This cache's name as a lock owner.
    owner: String,
    /// Whether the store is failing (logged once per outage).
    store_down: AtomicBool,
    /// The `cache` label of its gauges.
    metrics_name: Arc<str>,
}

/// The shared robots.txt cache. Clones share one cache; any number of clients may use it.
///
/// ```
/// # async fn demo() {
/// use robots_fetch::{Origin, RobotsCache};
/// let cache = RobotsCache::builder("FooBot/1.0 (+https://foo.example/bot)").build();
/// let origin = Origin::parse("https://example.com").unwrap();
/// cache.insert(&origin, b"User-agent: *\nDisallow: /private\n");
/// let entry = cache.cached(&origin).unwrap();
/// assert!(!entry.check(&"https://example.com/private/x".parse().unwrap()).allowed);
/// # }
/// ```
#[derive(Clone)]
pub struct RobotsCache {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for RobotsCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RobotsCache")
            .field("user_agent", &self.inner.fetch.user_agent)
            .field("tokens", &self.inner.tokens)
            .field("entries", &self.inner.entries.len())
            .finish_non_exhaustive()
    }
}

impl RobotsCache {
    /// The fetch settings (User-Agent, From, timeouts).
    pub fn fetch_config(&self) -> &FetchConfig {
        &self.inner.fetch
    }

    /// The tokens rules are selected by.
    pub fn tokens(&self) -> &[String] {
        &self.inner.tokens
    }

    /// The entry for an origin if one is cached and not due for a refresh. Counts a hit or a
    /// miss. Does not allocate.
    pub fn cached(&self, origin: &Origin) -> Option<Arc<CachedRobots>> {
        self.cached_at(origin, Instant::now())
    }

    /// The entry for an origin if one is cached, due for a refresh or not, without counting a
    /// hit or a miss: what a refresh is paced by (the Crawl-delay the kept copy asks).
    pub fn cached_any(&self, origin: &Origin) -> Option<Arc<CachedRobots>> {
        self.inner.entries.get(origin.as_str())
    }

    /// [`RobotsCache::cached`] as of `now`: a caller that also asks the entry for a verdict
    /// ([`CachedRobots::verdict_at`]) reads the clock once for both (a clock read is a visible
    /// share of a cache-hit decision).
    ///
    /// ```
    /// use robots_fetch::{Origin, RobotsCache};
    /// use tokio::time::Instant;
    /// let cache = RobotsCache::builder("FooBot/1.0").build();
    /// let origin = Origin::parse("https://example.com").unwrap();
    /// cache.insert(&origin, b"User-agent: *\nDisallow: /private/\n");
    /// let now = Instant::now();
    /// let entry = cache.cached_at(&origin, now).unwrap();
    /// assert!(!entry.verdict_at(b"/private/x", now).allowed);
    /// // From a parsed URL, without copying its origin out.
    /// let url = url::Url::parse("https://example.com/private/x").unwrap();
    /// assert!(cache.cached_at(&Origin::key_of_url(&url).unwrap(), now).is_some());
    /// ```
    pub fn cached_at<O: OriginKey + ?Sized>(
        &self,
        origin: &O,
        now: Instant,
    ) -> Option<Arc<CachedRobots>> {
        let origin = origin.origin_text();
        let found = self
            .inner
            .entries
            .get(origin)
            .filter(|e| now < e.refresh_at);
        let counter = if found.is_some() {
            &self.inner.counters.hits
        } else {
            &self.inner.counters.misses
        };
        counter.fetch_add(1, Ordering::Relaxed);
        trace!(origin, hit = found.is_some(), "robots.txt cache lookup");
        found
    }

    /// The entry for `origin`, fetching robots.txt with `client` when it is absent or due.
    /// Concurrent calls for one origin share one fetch.
    pub async fn get<C: FetchClient>(&self, client: &C, origin: &Origin) -> Arc<CachedRobots> {
        match self.cached(origin) {
            Some(entry) => entry,
            None => self.fetch(client, origin).await,
        }
    }

    /// [`RobotsCache::get`] for a caller whose [`RobotsCache::cached_at`] just missed: waits
    /// for the fetch of `origin` under way or makes it, without looking the entry up (and
    /// counting a miss) again. An entry fetched meanwhile by another caller is returned.
    ///
    /// ```
    /// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// use robots_fetch::{Origin, RobotsCache};
    /// use tokio::time::Instant;
    /// let cache = RobotsCache::builder("FooBot/1.0").build();
    /// // No redirect following, the timeouts, and the guarded resolver.
    /// let client = robots_fetch::reqwest_client(cache.fetch_config())?;
    /// let origin = Origin::parse("https://example.com")?;
    /// let entry = match cache.cached_at(&origin, Instant::now()) {
    ///     Some(entry) => entry,
    ///     None => cache.fetch(&client, &origin).await,
    /// };
    /// # let _ = entry;
    /// # Ok(())
    /// # }
    /// ```
    pub async fn fetch<C: FetchClient>(&self, client: &C, origin: &Origin) -> Arc<CachedRobots> {
        Box::pin(self.fetch_or_wait(client, origin)).await
    }

    /// After a counted miss: wait for a fetch of `origin` already under way, or make it.
    /// Callers box this future: it is large (the whole fetch), and inline it would make every
    /// caller's future as large, to be moved on every cache hit.
    async fn fetch_or_wait<C: FetchClient>(
        &self,
        client: &C,
        origin: &Origin,
    ) -> Arc<CachedRobots> {
        let lock = {
            let mut inflight = self
                .inner
                .inflight
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            inflight.entry(origin.clone()).or_default().clone()
        };
        let _release = Release {
            cache: self,
            origin,
            lock: &lock,
        };
        let _guard = lock.lock().await;
        // Someone else may have fetched while we waited.
        if let Some(entry) = self
            .inner
            .entries
            .get(origin.as_str())
            .filter(|e| Instant::now() < e.refresh_at)
        {
            return entry;
        }
        let previous = self.inner.entries.get(origin);
        let entry = match &self.inner.store {
            Some(store) => {
                self.fetch_shared(client, origin, previous, store.as_ref())
                    .await
            }
            None => {
                self.fetch_here(client, origin, Previous::Local(previous.as_deref()), None)
                    .await
                    .0
            }
        };
        log_entry(&entry);
        self.inner.entries.insert(origin.clone(), entry.clone());
        crate::telemetry::cache_size(&self.inner.metrics_name, self.len(), self.weight());
        entry
    }

    /// Fetches robots.txt in this process; also returns the body of the good copy the entry
    /// rests on, for a store.
    async fn fetch_here<C: FetchClient>(
        &self,
        client: &C,
        origin: &Origin,
        previous: Previous<'_>,
        previous_body: Option<bytes::Bytes>,
    ) -> (Arc<CachedRobots>, Option<bytes::Bytes>) {
        debug!(%origin, refresh = !matches!(previous, Previous::Local(None)), "robots.txt cache miss: fetching");
        self.inner.counters.fetches.fetch_add(1, Ordering::Relaxed);
        if matches!(previous, Previous::Local(None))
            && self.inner.evicted.was_fresh(origin, Instant::now())
        {
            debug!(%origin, "fetching again a fresh copy the cache dropped for room");
            self.inner
                .counters
                .refetches
                .fetch_add(1, Ordering::Relaxed);
        }
        // A refresh of a good copy asks whether it changed. In a fleet, only with the shared
        // record's validators: a 304 renews the record, whose body the fleet then still has.
        let validators = match previous {
            Previous::Local(Some(entry)) if self.inner.store.is_none() => Some(entry.validators()),
            Previous::Stored(record) if record.body.is_some() => Some(&record.validators),
            _ => None,
        }
        .filter(|v| !v.is_empty());
        if validators.is_some() {
            self.inner
                .counters
                .revalidations
                .fetch_add(1, Ordering::Relaxed);
            crate::telemetry::revalidating();
        }
        let outcome = fetch_with(client, origin, &self.inner.fetch, validators).await;
        let body = match &outcome {
            FetchOutcome::Parsed { body, .. } => Some(body.clone()),
            FetchOutcome::NotModified { .. } => {
                self.inner
                    .counters
                    .not_modified
                    .fetch_add(1, Ordering::Relaxed);
                previous_body
            }
            FetchOutcome::Unreachable(_) => {
                self.inner.counters.errors.fetch_add(1, Ordering::Relaxed);
                previous_body
            }
            FetchOutcome::Unavailable { .. } => None,
        };
        crate::telemetry::fetched(match &outcome {
            FetchOutcome::Parsed { .. } => "parsed",
            FetchOutcome::NotModified { .. } => "not_modified",
            FetchOutcome::Unavailable { .. } => "unavailable",
            FetchOutcome::Unreachable(_) => "unreachable",
        });
        // Only an unreachable outcome reads the previous entry (for its good copy and its
        // failures); a stored record is parsed for it then, and not for a fetch that replaces it.
        let stored_entry;
        let previous = match previous {
            Previous::Local(entry) => entry,
            Previous::Stored(record)
                if matches!(
                    outcome,
                    FetchOutcome::Unreachable(_) | FetchOutcome::NotModified { .. }
                ) =>
            {
                stored_entry = self.entry_of_record(origin, record);
                Some(&stored_entry)
            }
            Previous::Stored(_) => None,
        };
        let entry = Arc::new(self.next_entry(origin, previous, outcome, Instant::now()));
        (entry, body)
    }

    /// Whether a fetch of `origin`'s robots.txt is under way in this cache (a caller that must
    /// not wait for it can come back later).
    pub fn is_fetching(&self, origin: &Origin) -> bool {
        let inflight = self
            .inner
            .inflight
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        inflight
            .get(origin.as_str())
            .is_some_and(|lock| lock.try_lock().is_err())
    }

    /// Puts a robots.txt body in the cache for `origin` (pre-warming, or rules from elsewhere).
    /// It lives for the default lifetime, then is fetched like any entry.
    pub fn insert(&self, origin: &Origin, body: &[u8]) {
        let now = Instant::now();
        let expires_at = later(now, self.inner.config.default_ttl);
        let entry = CachedRobots::new(
            origin.clone(),
            Rules::Parsed(Arc::new(self.parse(body))),
            Source::Inserted {
                at: now,
                expires_at,
            },
            expires_at,
            0,
            self.inner.config.give_up_after,
            &self.inner.policy_tokens,
        );
        self.inner.entries.insert(origin.clone(), Arc::new(entry));
        crate::telemetry::cache_size(&self.inner.metrics_name, self.len(), self.weight());
    }

    /// Forgets an origin: the next lookup fetches it.
    pub fn invalidate(&self, origin: &Origin) {
        self.inner.entries.remove(origin);
    }

    /// The sitemap URLs of an origin's cached robots.txt, in file order; empty when it is not
    /// cached or has none. Counts no lookup.
    pub fn sitemaps(&self, origin: &Origin) -> Vec<String> {
        self.inner
            .entries
            .get(origin.as_str())
            .map(|entry| entry.sitemaps().map(String::from).collect())
            .unwrap_or_default()
    }

    /// Hits, misses, fetches and errors so far.
    pub fn stats(&self) -> CacheStats {
        let c = &self.inner.counters;
        CacheStats {
            hits: c.hits.load(Ordering::Relaxed),
            misses: c.misses.load(Ordering::Relaxed),
            fetches: c.fetches.load(Ordering::Relaxed),
            errors: c.errors.load(Ordering::Relaxed),
            parses: c.parses.load(Ordering::Relaxed),
            refetches: c.refetches.load(Ordering::Relaxed),
            revalidations: c.revalidations.load(Ordering::Relaxed),
            not_modified: c.not_modified.load(Ordering::Relaxed),
        }
    }

    /// How many origins are cached.
    pub fn len(&self) -> usize {
        self.inner.entries.len()
    }

    /// Heap bytes the cached entries weigh together (at most [`CacheConfig::max_bytes`]).
    pub fn weight(&self) -> u64 {
        self.inner.entries.weight()
    }

    /// Whether nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn parse(&self, body: &[u8]) -> ParsedRobots {
        self.inner.counters.parses.fetch_add(1, Ordering::Relaxed);
        ParsedRobots::with_policy_tokens(body, &self.inner.tokens, &self.inner.policy_tokens)
    }
}

/// Removes an origin's in-flight lock when its last user is done, even if the fetch was
/// cancelled (the future dropped).
struct Release<'a> {
    cache: &'a RobotsCache,
    origin: &'a Origin,
    lock: &'a Arc<tokio::sync::Mutex<()>>,
}

impl Drop for Release<'_> {
    fn drop(&mut self) {
        let mut inflight = self
            .cache
            .inner
            .inflight
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        // The map and this caller hold it: nobody else is waiting.
        if Arc::strong_count(self.lock) <= 2 {
            inflight.remove(self.origin);
        }
    }
}

/// The state a fetch follows: this cache's own entry (if any), or the fleet's stored record,
/// which knows more (an outage under way) and is parsed only if the fetch fails.
pub(super) enum Previous<'a> {
    /// This cache's entry.
    Local(Option<&'a CachedRobots>),
    /// The fleet's record.
    Stored(&'a crate::store::StoredRobots),
}
