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

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use robots_core::{MatchedRule, Matcher, RobotsTxt, RulePattern, Usage, UsagePreferences, Verdict};
use tokio::time::Instant;
use tracing::{debug, info, trace, warn};
use url::Url;

use crate::client::FetchClient;
use crate::fetch::{FetchConfig, fetch};
use crate::origin::Origin;
use crate::outcome::{FetchOutcome, UnavailableReason, Unreachable};
use crate::store::{
    Clocks, RobotsStore, StoreError, StoredKind, StoredOutage, StoredRobots, now_ms,
};
use crate::time::later;

/// Lifetimes, back-off and size of the cache. Every number has a polite default.
#[derive(Debug, Clone)]
pub struct CacheConfig {
    /// How long a good copy lives without `Cache-Control: max-age` (24 h).
    pub default_ttl: Duration,
    /// Bounds for `max-age` (1 min … 24 h).
    pub min_ttl: Duration,
    /// See `min_ttl`.
    pub max_ttl: Duration,
    /// First retry after an unreachable fetch, doubled per consecutive failure (1 min)…
    pub retry_base: Duration,
    /// …up to this (1 h).
    pub retry_max: Duration,
    /// `Retry-After` is honoured up to this (24 h), and at least `retry_floor`.
    pub retry_after_max: Duration,
    /// The shortest wait before a retry, whatever `Retry-After` says (1 s).
    pub retry_floor: Duration,
    /// With no good copy, disallow all until the origin has been unreachable this long, then
    /// allow all (30 days).
    pub give_up_after: Duration,
    /// Treat 401 and 403 as disallow all (the older convention) instead of allow all.
    pub auth_errors_disallow: bool,
    /// How many origins are kept at most (100,000); the least useful are evicted beyond that.
    /// (Each entry weighs at least `max_bytes / capacity`, which is how both bounds hold.)
    pub capacity: u64,
    /// Heap bytes the cached entries may hold together (256 MiB, at least 4 MiB); the least
    /// useful are evicted beyond that. An entry for a 500 KiB file takes 1.1–1.3× its size.
    pub max_bytes: u64,
}

impl Default for CacheConfig {
    fn default() -> CacheConfig {
        CacheConfig {
            default_ttl: Duration::from_secs(24 * 3600),
            min_ttl: Duration::from_secs(60),
            max_ttl: Duration::from_secs(24 * 3600),
            retry_base: Duration::from_secs(60),
            retry_max: Duration::from_secs(3600),
            retry_after_max: Duration::from_secs(24 * 3600),
            retry_floor: Duration::from_secs(1),
            give_up_after: Duration::from_secs(30 * 24 * 3600),
            auth_errors_disallow: false,
            capacity: 100_000,
            max_bytes: 256 * 1024 * 1024,
        }
    }
}

/// What the cache keeps of a parsed robots.txt: the view compiled for the cache's crawler, the
/// sitemaps and the records that concern it. Not the file itself: that would double what every
/// entry costs.
#[derive(Debug)]
pub struct ParsedRobots {
    matcher: Matcher,
    /// Views for the configured policy tokens (`Google-Extended`…), each compared as given.
    policy: Box<[(Box<str>, Matcher)]>,
    sitemaps: Box<[Box<str>]>,
    records: Box<[CrawlerRecord]>,
    body_len: usize,
}

/// A record (Crawl-delay, Host, Content-Signal, an unknown key…) of the crawler's groups or
/// outside any group, kept with its line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrawlerRecord {
    /// Line in robots.txt.
    pub line: u32,
    /// The key as written (invalid UTF-8 replaced).
    pub key: Box<str>,
    /// The value, escaped like a pattern as Google does (invalid UTF-8 replaced).
    pub value: Box<str>,
}

impl ParsedRobots {
    /// Parses `body` and keeps what the crawler with these tokens needs.
    pub fn new<S: AsRef<str>>(body: &[u8], tokens: &[S]) -> ParsedRobots {
        ParsedRobots::with_policy_tokens(body, tokens, &[] as &[&str])
    }

    /// [`ParsedRobots::new`], plus a view for each policy token (`Google-Extended`…), so that
    /// a URL can also be checked as that token ([`ParsedRobots::policy_matcher`]).
    pub fn with_policy_tokens<S: AsRef<str>, P: AsRef<str>>(
        body: &[u8],
        tokens: &[S],
        policy_tokens: &[P],
    ) -> ParsedRobots {
        let robots = RobotsTxt::parse(body);
        let matcher = robots.matcher_for(tokens);
        let policy = policy_tokens
            .iter()
            .map(|t| (Box::<str>::from(t.as_ref()), robots.matcher(t.as_ref())))
            .collect();
        let lossy = |bytes: &[u8]| -> Box<str> { String::from_utf8_lossy(bytes).into() };
        let sitemaps = robots.sitemaps().map(|s| lossy(s.url)).collect();
        let records = robots
            .records_for(matcher.selection())
            .into_iter()
            .map(|r| CrawlerRecord {
                line: r.line,
                key: lossy(r.key),
                value: lossy(r.value),
            })
            .collect();
        ParsedRobots {
            matcher,
            policy,
            sitemaps,
            records,
            body_len: body.len(),
        }
    }

    /// The view compiled for the cache's crawler.
    pub fn matcher(&self) -> &Matcher {
        &self.matcher
    }

    /// The view for a configured policy token (ASCII case-insensitive), if it was configured.
    pub fn policy_matcher(&self, token: &str) -> Option<&Matcher> {
        self.policy
            .iter()
            .find(|(t, _)| t.eq_ignore_ascii_case(token))
            .map(|(_, m)| m)
    }

    /// The pattern of a rule one of these views matched, owned without copying (see
    /// [`Matcher::pattern_of`]); a rule of another view is copied.
    pub fn pattern_of(&self, rule: &MatchedRule<'_>) -> RulePattern {
        std::iter::once(&self.matcher)
            .chain(self.policy.iter().map(|(_, m)| m))
            .find_map(|view| view.pattern_of(rule))
            .unwrap_or_else(|| RulePattern::from(rule.pattern))
    }

    /// Every sitemap URL in the file, in file order, as written.
    pub fn sitemaps(&self) -> impl ExactSizeIterator<Item = &str> + '_ {
        self.sitemaps.iter().map(|s| &**s)
    }

    /// The records of the crawler's groups and those outside any group, in file order.
    pub fn records(&self) -> &[CrawlerRecord] {
        &self.records
    }

    /// How long the fetched body was (after the 500 KiB cap).
    pub fn body_len(&self) -> usize {
        self.body_len
    }

    /// Heap bytes held (what the cache weighs it by).
    pub fn heap_bytes(&self) -> usize {
        let strings = |s: &str| s.len() + std::mem::size_of::<Box<str>>();
        std::mem::size_of::<Self>()
            + self.matcher.heap_bytes()
            + self
                .policy
                .iter()
                .map(|(t, m)| t.len() + m.heap_bytes() + std::mem::size_of::<(Box<str>, Matcher)>())
                .sum::<usize>()
            + self.sitemaps.iter().map(|s| strings(s)).sum::<usize>()
            + self
                .records
                .iter()
                .map(|r| std::mem::size_of::<CrawlerRecord>() + r.key.len() + r.value.len())
                .sum::<usize>()
    }
}

/// The rules an entry applies.
#[derive(Debug, Clone)]
pub enum Rules {
    /// A robots.txt was parsed.
    Parsed(Arc<ParsedRobots>),
    /// Everything is allowed (robots.txt unavailable, or unreachable for too long).
    AllowAll,
    /// Nothing is allowed (robots.txt unreachable, or 401/403 when so configured).
    DisallowAll,
}

/// Where an entry's rules came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// Fetched and parsed; fresh until `expires_at`.
    Parsed {
        /// The HTTP status of the final response.
        status: u16,
        /// Where the file was finally found, when robots.txt redirected (the rules belong to
        /// the original origin all the same).
        redirected_to: Option<Arc<str>>,
        /// When it was fetched.
        fetched_at: Instant,
        /// When it will be fetched again.
        expires_at: Instant,
    },
    /// Given by [`RobotsCache::insert`].
    Inserted {
        /// When.
        at: Instant,
        /// When it will be fetched.
        expires_at: Instant,
    },
    /// A 4xx (or an unfollowable redirect chain): allow all, or disallow all for 401/403 when so
    /// configured.
    Unavailable {
        /// The status.
        status: u16,
        /// Why.
        reason: UnavailableReason,
        /// When it was fetched.
        fetched_at: Instant,
        /// When it will be fetched again.
        expires_at: Instant,
    },
    /// Unreachable now, but the last good copy (fetched at `fetched_at` with `status`, or the
    /// last unavailable answer) is still used.
    Stale {
        /// The good copy's status.
        status: u16,
        /// When the good copy was fetched.
        fetched_at: Instant,
        /// Why the last fetch failed.
        cause: Unreachable,
        /// When the outage began.
        unreachable_since: Instant,
        /// When the next fetch will be tried.
        next_retry: Instant,
    },
    /// Unreachable with no good copy: disallow all until `give_up_after`, then allow all.
    Unreachable {
        /// Why.
        cause: Unreachable,
        /// When the outage began.
        since: Instant,
        /// When the next fetch will be tried.
        next_retry: Instant,
    },
}

impl Source {
    /// For people, with times relative to now: `parsed (HTTP 200), fetched 3 s ago, refreshed in
    /// 23 h 59 min`.
    pub fn describe(&self) -> impl std::fmt::Display + '_ {
        DescribeSource(self)
    }

    /// `"parsed"`, `"unavailable"` or `"unreachable"`, as the CLI reports it (an inserted copy is
    /// `"parsed"`; a stale one is `"parsed"` too, its rules being a parsed file).
    pub fn outcome(&self) -> &'static str {
        match self {
            Source::Parsed { .. } | Source::Inserted { .. } | Source::Stale { .. } => "parsed",
            Source::Unavailable { .. } => "unavailable",
            Source::Unreachable { .. } => "unreachable",
        }
    }

    /// The HTTP status behind the rules, if any.
    pub fn status(&self) -> Option<u16> {
        match self {
            Source::Parsed { status, .. }
            | Source::Unavailable { status, .. }
            | Source::Stale { status, .. } => Some(*status),
            Source::Inserted { .. } => None,
            Source::Unreachable { cause, .. } => cause.status(),
        }
    }
}

struct DescribeSource<'a>(&'a Source);

impl std::fmt::Display for DescribeSource<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use crate::human::Relative;
        match self.0 {
            Source::Parsed {
                status,
                redirected_to,
                fetched_at,
                expires_at,
            } => {
                write!(f, "parsed (HTTP {status}")?;
                if let Some(url) = redirected_to {
                    write!(f, ", redirected to {url}")?;
                }
                write!(
                    f,
                    "), fetched {}, refreshed {}",
                    Relative(*fetched_at),
                    Relative(*expires_at)
                )
            }
            Source::Inserted { at, expires_at } => write!(
                f,
                "inserted {}, refreshed {}",
                Relative(*at),
                Relative(*expires_at)
            ),
            Source::Unavailable {
                status,
                reason,
                fetched_at,
                expires_at,
            } => write!(
                f,
                "unavailable (HTTP {status}, {reason:?}): allow all, fetched {}, refreshed {}",
                Relative(*fetched_at),
                Relative(*expires_at)
            ),
            Source::Stale {
                status,
                fetched_at,
                cause,
                unreachable_since,
                next_retry,
            } => write!(
                f,
                "last good copy (HTTP {status}, fetched {}) while unreachable since {} ({cause}), retried {}",
                Relative(*fetched_at),
                Relative(*unreachable_since),
                Relative(*next_retry)
            ),
            Source::Unreachable {
                cause,
                since,
                next_retry,
            } => write!(
                f,
                "unreachable since {} ({cause}): disallow all, retried {}",
                Relative(*since),
                Relative(*next_retry)
            ),
        }
    }
}

/// One origin's cached robots.txt: the rules, where they came from, and when to look again.
#[derive(Debug, Clone)]
pub struct CachedRobots {
    origin: Origin,
    rules: Rules,
    source: Source,
    /// When the entry should be fetched again.
    refresh_at: Instant,
    /// Consecutive unreachable fetches, for the back-off.
    failures: u32,
    give_up_after: Duration,
    /// Heap bytes held, computed once: the cache weighs entries often.
    heap_bytes: usize,
    /// The policy tokens the cache was configured with (shared by all its entries).
    policy_tokens: Arc<[String]>,
}

impl CachedRobots {
    fn new(
        origin: Origin,
        rules: Rules,
        source: Source,
        refresh_at: Instant,
        failures: u32,
        give_up_after: Duration,
        policy_tokens: &Arc<[String]>,
    ) -> CachedRobots {
        let cause_bytes = match &source {
            Source::Stale { cause, .. } | Source::Unreachable { cause, .. } => match cause {
                Unreachable::Network(e) => e.message.len(),
                Unreachable::Status { .. } => 0,
            },
            _ => 0,
        };
        let rules_bytes = match &rules {
            Rules::Parsed(parsed) => parsed.heap_bytes(),
            Rules::AllowAll | Rules::DisallowAll => 0,
        };
        CachedRobots {
            heap_bytes: std::mem::size_of::<CachedRobots>()
                + origin.heap_bytes()
                + rules_bytes
                + cause_bytes,
            origin,
            rules,
            source,
            refresh_at,
            failures,
            give_up_after,
            policy_tokens: policy_tokens.clone(),
        }
    }
}

/// Weighs entries by their heap bytes for `quick_cache`, with a floor that makes the count bound
/// hold too (`max_bytes / capacity` each).
#[derive(Debug, Clone, Copy)]
struct ByteWeighter {
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

impl CachedRobots {
    /// The origin.
    pub fn origin(&self) -> &Origin {
        &self.origin
    }

    /// Where the rules came from.
    pub fn source(&self) -> &Source {
        &self.source
    }

    /// The rules as fetched (see [`CachedRobots::rules_at`] for what applies now).
    pub fn rules(&self) -> &Rules {
        &self.rules
    }

    /// What was kept of the parsed file, when there is one (the view, sitemaps, the crawler's
    /// records).
    pub fn parsed(&self) -> Option<&ParsedRobots> {
        match &self.rules {
            Rules::Parsed(parsed) => Some(parsed),
            _ => None,
        }
    }

    /// The sitemap URLs of the parsed file (none without one).
    pub fn sitemaps(&self) -> impl Iterator<Item = &str> + '_ {
        self.parsed().into_iter().flat_map(|p| p.sitemaps())
    }

    /// Heap bytes this entry holds (its share of a parsed file included), as the cache weighs it.
    pub fn heap_bytes(&self) -> usize {
        self.heap_bytes
    }

    /// When the cache will fetch this origin again.
    pub fn refresh_at(&self) -> Instant {
        self.refresh_at
    }

    /// The rules that apply at `now`: with no good copy, disallow all until the origin has been
    /// unreachable for the give-up period, then allow all.
    pub fn rules_at(&self, now: Instant) -> &Rules {
        match &self.source {
            Source::Unreachable { since, .. }
                if now.saturating_duration_since(*since) >= self.give_up_after =>
            {
                &Rules::AllowAll
            }
            _ => &self.rules,
        }
    }

    /// Whether the rules block everything because robots.txt is unreachable and there is no
    /// good copy (as opposed to a file that disallows): a crawler should reschedule.
    pub fn is_blocked_by_outage(&self, now: Instant) -> bool {
        matches!(self.source, Source::Unreachable { .. })
            && matches!(self.rules_at(now), Rules::DisallowAll)
    }

    /// The pattern of a rule that one of this entry's views matched, owned without copying
    /// (see [`ParsedRobots::pattern_of`]); copied when the entry holds no parsed file.
    pub fn pattern_of(&self, rule: &MatchedRule<'_>) -> RulePattern {
        match &self.rules {
            Rules::Parsed(parsed) => parsed.pattern_of(rule),
            _ => RulePattern::from(rule.pattern),
        }
    }

    /// The verdict for a path (see [`robots_core::path_of`]) at `now`. Does not allocate.
    pub fn verdict_at(&self, path: &[u8], now: Instant) -> Verdict<'_> {
        match self.rules_at(now) {
            Rules::Parsed(parsed) => parsed.matcher.check_path(path),
            Rules::AllowAll => Verdict {
                allowed: true,
                rule: None,
            },
            Rules::DisallowAll => Verdict {
                allowed: false,
                rule: None,
            },
        }
    }

    /// The verdict at `now` for `path` as a configured policy token would get it; `None` when
    /// the token was not configured ([`RobotsCacheBuilder::policy_tokens`]). Without a parsed
    /// file, the same as the crawler's own (allow all, or disallow all).
    pub fn verdict_as(&self, token: &str, path: &[u8], now: Instant) -> Option<Verdict<'_>> {
        match self.rules_at(now) {
            Rules::Parsed(parsed) => parsed.policy_matcher(token).map(|m| m.check_path(path)),
            _ if self.policy_tokens_known(token) => Some(self.verdict_at(path, now)),
            _ => None,
        }
    }

    /// What the crawler may do with `path` at `now`: the verdict and, when it may be fetched,
    /// the AI usage preferences robots.txt states for it (`Content-Usage`, `Content-Signal`).
    /// Without a parsed file nothing is stated. Does not allocate.
    pub fn usage_at(&self, path: &[u8], now: Instant) -> Usage<'_> {
        match self.rules_at(now) {
            Rules::Parsed(parsed) => parsed.matcher.usage_path(path),
            _ => Usage {
                verdict: self.verdict_at(path, now),
                preferences: UsagePreferences::default(),
            },
        }
    }

    /// [`CachedRobots::usage_at`] as a configured policy token (`Google-Extended`…) would get
    /// it; `None` when the token was not configured.
    pub fn usage_as(&self, token: &str, path: &[u8], now: Instant) -> Option<Usage<'_>> {
        match self.rules_at(now) {
            Rules::Parsed(parsed) => parsed.policy_matcher(token).map(|m| m.usage_path(path)),
            _ if self.policy_tokens_known(token) => Some(self.usage_at(path, now)),
            _ => None,
        }
    }

    /// The usage preferences for a path the caller has already found allowed (no second
    /// check): nothing when the file has no usage lines for the crawler.
    pub fn preferences_at(&self, path: &[u8], now: Instant) -> UsagePreferences {
        match self.rules_at(now) {
            Rules::Parsed(parsed) => parsed.matcher.preferences_path(path),
            _ => UsagePreferences::default(),
        }
    }

    fn policy_tokens_known(&self, token: &str) -> bool {
        self.policy_tokens
            .iter()
            .any(|t| t.eq_ignore_ascii_case(token))
    }

    /// The verdict for a URL now.
    pub fn check(&self, url: &Url) -> Verdict<'_> {
        self.verdict_at(path_of_url(url).as_bytes(), Instant::now())
    }

    /// The crawler's Crawl-delay from the parsed file, if any.
    pub fn crawl_delay(&self) -> Option<robots_core::CrawlDelay> {
        match &self.rules {
            Rules::Parsed(parsed) => parsed.matcher.crawl_delay(),
            _ => None,
        }
    }

    /// The crawler's Request-rate from the parsed file, if any.
    pub fn request_rate(&self) -> Option<robots_core::RequestRate> {
        match &self.rules {
            Rules::Parsed(parsed) => parsed.matcher.request_rate().map(|(rate, _)| rate),
            _ => None,
        }
    }

    fn good_copy(&self) -> Option<(u16, Instant)> {
        match &self.source {
            Source::Parsed {
                status, fetched_at, ..
            }
            | Source::Unavailable {
                status, fetched_at, ..
            } => Some((*status, *fetched_at)),
            Source::Inserted { at, .. } => Some((200, *at)),
            Source::Stale {
                status, fetched_at, ..
            } => Some((*status, *fetched_at)),
            Source::Unreachable { .. } => None,
        }
    }
}

/// The path checked for a URL: path and query, as [`robots_core::path_of`] takes them.
pub fn path_of_url(url: &Url) -> &str {
    &url[url::Position::BeforePath..url::Position::AfterQuery]
}

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
}

#[derive(Debug, Default)]
struct Counters {
    hits: AtomicU64,
    misses: AtomicU64,
    fetches: AtomicU64,
    errors: AtomicU64,
}

struct Inner {
    config: CacheConfig,
    fetch: FetchConfig,
    tokens: Vec<String>,
    /// Tokens a URL may also be checked as (`Google-Extended`…), each with its own view.
    policy_tokens: Arc<[String]>,
    entries: quick_cache::sync::Cache<Origin, Arc<CachedRobots>, ByteWeighter>,
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
}

impl std::fmt::Debug for dyn RobotsStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RobotsStore")
    }
}

/// Smallest byte budget: a shard of the map must hold several of the largest entries
/// (a 500 KiB file takes about 600 KB), or big files would never stay cached and every request
/// to their origin would fetch robots.txt again.
const MIN_BUDGET: u64 = 4 * 1024 * 1024;
/// Each shard of the map gets at least this much of the budget.
const MIN_SHARD_BYTES: u64 = 4 * 1024 * 1024;

fn entries_map(
    config: &CacheConfig,
) -> quick_cache::sync::Cache<Origin, Arc<CachedRobots>, ByteWeighter> {
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
        .shards(usize::try_from(shards).unwrap_or(1))
        .build();
    match options {
        Ok(options) => quick_cache::sync::Cache::with_options(
            options,
            weighter,
            Default::default(),
            Default::default(),
        ),
        // quick_cache refuses only a zero capacity, and both are at least 1 here; its plain
        // constructor is the same cache with its default sharding.
        Err(_) => quick_cache::sync::Cache::with_weighter(estimated, budget, weighter),
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
    /// ([`CachedRobots::verdict_as`]).
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

    /// Total time a fetch may take, redirects and body included (10 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.fetch.timeout = timeout;
        self
    }

    /// Connect timeout of clients built by [`crate::reqwest_client`] (5 s).
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.fetch.connect_timeout = timeout;
        self
    }

    /// Which robots.txt redirect hops are followed (default [`crate::HopRule::default`]: not
    /// from a public host into an internal address). A refused hop leaves robots.txt
    /// unreachable, so nothing at the origin is allowed.
    pub fn redirect_rule(mut self, rule: crate::HopRule) -> Self {
        self.fetch.redirect_rule = rule;
        self
    }

    /// Lifetimes, back-off and size.
    pub fn config(mut self, config: CacheConfig) -> Self {
        self.config = config;
        self
    }

    /// Share fetched robots.txt files through `store` (another process's cache, or other caches
    /// of this one, using the same store and crawler identity fetch each origin once for all).
    /// While the store fails, the cache works alone and logs the outage once.
    pub fn store(mut self, store: Arc<dyn RobotsStore>) -> Self {
        self.store = Some(store);
        self
    }

    /// Share fetched robots.txt files with every process using this Redis fleet (spec
    /// section 11): one fetch per origin across all of them.
    #[cfg(feature = "redis")]
    pub fn redis(self, fleet: &crate::RedisFleet) -> Self {
        self.store(Arc::new(crate::RedisStore::new(fleet.clone())))
    }

    /// Builds the cache. A User-Agent that is not a valid header value is sent with the invalid
    /// bytes dropped.
    pub fn build(mut self) -> RobotsCache {
        // A User-Agent is reduced to its token here only (spec section 3); given tokens are
        // compared as they are.
        self.tokens_from_user_agent = self.tokens.is_none();
        let tokens = self
            .tokens
            .unwrap_or_else(|| vec![robots_core::product_token(&self.user_agent).to_string()]);
        if self.invalid_user_agent {
            warn!(user_agent = %self.user_agent, "User-Agent has bytes a header cannot carry; they are dropped");
        }
        let reduced = robots_core::user_agent_token(&self.user_agent);
        if let (true, Some(name)) = (self.tokens_from_user_agent, reduced.lost) {
            warn!(user_agent = %self.user_agent, name, token = reduced.token, "the User-Agent's crawler name is cut short to its product token; name the tokens with .tokens([...])");
        }
        static CACHES: AtomicU64 = AtomicU64::new(0);
        let owner = format!(
            "{}-{}-{}",
            std::process::id(),
            now_ms(),
            CACHES.fetch_add(1, Ordering::Relaxed)
        );
        let identity = format!(
            "{}|{}",
            String::from_utf8_lossy(self.fetch.user_agent.as_bytes()),
            tokens.join(",")
        );
        RobotsCache {
            inner: Arc::new(Inner {
                entries: entries_map(&self.config),
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
        }
    }

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
    /// ```
    pub fn cached_at(&self, origin: &Origin, now: Instant) -> Option<Arc<CachedRobots>> {
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
        trace!(
            origin = origin.as_str(),
            hit = found.is_some(),
            "robots.txt cache lookup"
        );
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
    /// # async fn run() -> Result<(), robots_fetch::OriginError> {
    /// use robots_fetch::{Origin, RobotsCache};
    /// use tokio::time::Instant;
    /// let cache = RobotsCache::builder("FooBot/1.0").build();
    /// let client = reqwest::Client::new();
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
            .get(origin)
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
                self.fetch_here(client, origin, previous.as_deref(), None)
                    .await
                    .0
            }
        };
        log_entry(&entry);
        self.inner.entries.insert(origin.clone(), entry.clone());
        crate::telemetry::cache_size(self.len(), self.weight());
        entry
    }

    /// Fetches robots.txt in this process; also returns the body of the good copy the entry
    /// rests on, for a store.
    async fn fetch_here<C: FetchClient>(
        &self,
        client: &C,
        origin: &Origin,
        previous: Option<&CachedRobots>,
        previous_body: Option<bytes::Bytes>,
    ) -> (Arc<CachedRobots>, Option<bytes::Bytes>) {
        debug!(%origin, refresh = previous.is_some(), "robots.txt cache miss: fetching");
        self.inner.counters.fetches.fetch_add(1, Ordering::Relaxed);
        let outcome = fetch(client, origin, &self.inner.fetch).await;
        let body = match &outcome {
            FetchOutcome::Parsed { body, .. } => Some(body.clone()),
            FetchOutcome::Unreachable(_) => {
                self.inner.counters.errors.fetch_add(1, Ordering::Relaxed);
                previous_body
            }
            FetchOutcome::Unavailable { .. } => None,
        };
        crate::telemetry::fetched(match &outcome {
            FetchOutcome::Parsed { .. } => "parsed",
            FetchOutcome::Unavailable { .. } => "unavailable",
            FetchOutcome::Unreachable(_) => "unreachable",
        });
        let entry = Arc::new(self.next_entry(origin, previous, outcome, Instant::now()));
        (entry, body)
    }

    /// The fleet way (spec section 11): use the stored result when it is due later; else take
    /// the origin's fetch lock and fetch (and store) — or, when another process holds the lock,
    /// wait for its result, at most the fetch timeout plus a margin, then fetch here. Any store
    /// failure means working alone: the local copy, or a local fetch.
    async fn fetch_shared<C: FetchClient>(
        &self,
        client: &C,
        origin: &Origin,
        previous: Option<Arc<CachedRobots>>,
        store: &dyn RobotsStore,
    ) -> Arc<CachedRobots> {
        let key = format!("{{{origin}}}:robots:{}", self.inner.identity);
        let stored = match self.store_result(store.load(&key).await) {
            Ok(stored) => stored,
            Err(()) => {
                return self
                    .fetch_here(client, origin, previous.as_deref(), None)
                    .await
                    .0;
            }
        };
        if let Some(record) = &stored
            && record.refresh_at_ms > now_ms()
        {
            return Arc::new(self.entry_of_record(origin, record));
        }
        let lock_key = format!("{{{origin}}}:lock:{}", self.inner.identity);
        let lock_ttl = self.inner.fetch.timeout + Duration::from_secs(5);
        let owner = self.inner.owner.as_str();
        let previous_body = stored.as_ref().and_then(|r| r.body.clone());
        // The previous state: ours, or the fleet's when it knows more (an outage under way).
        let previous = match (&stored, previous) {
            (Some(record), _) => Some(Arc::new(self.entry_of_record(origin, record))),
            (None, previous) => previous,
        };
        match self.store_result(store.try_lock(&lock_key, owner, lock_ttl).await) {
            Ok(true) => {}
            Ok(false) => {
                // Another process is fetching: wait for what it stores. Its lock expires if it
                // died, and then this process takes the lock and fetches.
                let deadline = tokio::time::Instant::now() + lock_ttl;
                let mut pause = Duration::from_millis(20);
                loop {
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(Duration::from_millis(250));
                    match self.store_result(store.load(&key).await) {
                        Ok(Some(record)) if record.refresh_at_ms > now_ms() => {
                            debug!(%origin, "robots.txt fetched by another process");
                            return Arc::new(self.entry_of_record(origin, &record));
                        }
                        Ok(_) => {}
                        Err(()) => break,
                    }
                    match self.store_result(store.try_lock(&lock_key, owner, lock_ttl).await) {
                        Ok(true) | Err(()) => break,
                        Ok(false) => {}
                    }
                    if tokio::time::Instant::now() >= deadline {
                        warn!(%origin, "no robots.txt from the fleet in time: fetching here");
                        break;
                    }
                }
            }
            Err(()) => {
                return self
                    .fetch_here(client, origin, previous.as_deref(), previous_body)
                    .await
                    .0;
            }
        }
        let (entry, body) = self
            .fetch_here(client, origin, previous.as_deref(), previous_body)
            .await;
        let record = record_of_entry(&entry, body);
        // Kept past its refresh time for the stale-copy and 30-day rules, then it expires.
        let ttl = Duration::from_millis(record.refresh_at_ms.saturating_sub(now_ms()))
            .saturating_add(self.inner.config.give_up_after);
        let _ = self.store_result(store.save(&key, &record, ttl).await);
        let _ = self.store_result(store.unlock(&lock_key, owner).await);
        entry
    }

    /// Logs a store outage once, and its end once.
    fn store_result<T>(&self, result: Result<T, StoreError>) -> Result<T, ()> {
        match result {
            Ok(value) => {
                if self.inner.store_down.swap(false, Ordering::Relaxed) {
                    info!("the robots store is reachable again: sharing robots.txt with the fleet");
                }
                Ok(value)
            }
            Err(error) => {
                if !self.inner.store_down.swap(true, Ordering::Relaxed) {
                    warn!(%error, "the robots store is unreachable: robots.txt comes from the local copy or a local fetch until it is back");
                }
                Err(())
            }
        }
    }

    /// The entry a stored record stands for, its wall-clock times turned into this process's
    /// clock.
    fn entry_of_record(&self, origin: &Origin, record: &StoredRobots) -> CachedRobots {
        let clocks = Clocks::read();
        let at = |ms: u64| clocks.instant(ms);
        let config = &self.inner.config;
        let rules = match record.kind {
            StoredKind::Parsed => Rules::Parsed(Arc::new(
                self.parse(record.body.as_deref().unwrap_or_default()),
            )),
            StoredKind::Unavailable(_) => {
                if config.auth_errors_disallow && matches!(record.status, Some(401 | 403)) {
                    Rules::DisallowAll
                } else {
                    Rules::AllowAll
                }
            }
            StoredKind::Unreachable => Rules::DisallowAll,
        };
        let refresh_at = at(record.refresh_at_ms);
        let status = record.status.unwrap_or(200);
        let (source, failures) = match (&record.outage, record.kind) {
            (Some(outage), StoredKind::Unreachable) => (
                Source::Unreachable {
                    cause: outage.cause.clone(),
                    since: at(outage.since_ms),
                    next_retry: at(outage.next_retry_ms),
                },
                outage.failures,
            ),
            (Some(outage), _) => (
                Source::Stale {
                    status,
                    fetched_at: at(record.fetched_at_ms),
                    cause: outage.cause.clone(),
                    unreachable_since: at(outage.since_ms),
                    next_retry: at(outage.next_retry_ms),
                },
                outage.failures,
            ),
            (None, StoredKind::Unavailable(reason)) => (
                Source::Unavailable {
                    status,
                    reason,
                    fetched_at: at(record.fetched_at_ms),
                    expires_at: refresh_at,
                },
                0,
            ),
            (None, _) => (
                Source::Parsed {
                    status,
                    redirected_to: None,
                    fetched_at: at(record.fetched_at_ms),
                    expires_at: refresh_at,
                },
                0,
            ),
        };
        CachedRobots::new(
            origin.clone(),
            rules,
            source,
            refresh_at,
            failures,
            config.give_up_after,
            &self.inner.policy_tokens,
        )
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
            .get(origin)
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
        crate::telemetry::cache_size(self.len(), self.weight());
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
            .get(origin)
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
        ParsedRobots::with_policy_tokens(body, &self.inner.tokens, &self.inner.policy_tokens)
    }

    /// The entry after a fetch, given the previous one: the spec's outcome table plus the
    /// cache rules (lifetimes, stale copies, back-off).
    fn next_entry(
        &self,
        origin: &Origin,
        previous: Option<&CachedRobots>,
        outcome: FetchOutcome,
        now: Instant,
    ) -> CachedRobots {
        let config = &self.inner.config;
        let entry = |rules, source, refresh_at, failures| {
            CachedRobots::new(
                origin.clone(),
                rules,
                source,
                refresh_at,
                failures,
                config.give_up_after,
                &self.inner.policy_tokens,
            )
        };
        match outcome {
            FetchOutcome::Parsed {
                status,
                body,
                max_age,
                redirected_to,
            } => {
                let ttl = max_age
                    .unwrap_or(config.default_ttl)
                    .clamp(config.min_ttl, config.max_ttl);
                let expires_at = later(now, ttl);
                let source = Source::Parsed {
                    status,
                    redirected_to: redirected_to.map(|u| Arc::from(u.as_str())),
                    fetched_at: now,
                    expires_at,
                };
                entry(
                    Rules::Parsed(Arc::new(self.parse(&body))),
                    source,
                    expires_at,
                    0,
                )
            }
            FetchOutcome::Unavailable { status, reason } => {
                let expires_at = later(now, config.default_ttl);
                let rules = if config.auth_errors_disallow && matches!(status, 401 | 403) {
                    Rules::DisallowAll
                } else {
                    Rules::AllowAll
                };
                let source = Source::Unavailable {
                    status,
                    reason,
                    fetched_at: now,
                    expires_at,
                };
                entry(rules, source, expires_at, 0)
            }
            FetchOutcome::Unreachable(cause) => {
                let failures = previous.map_or(0, |p| p.failures).saturating_add(1);
                let delay = match cause.retry_after() {
                    Some(asked) => {
                        if asked > config.retry_after_max {
                            warn!(%origin, ?asked, applied = ?config.retry_after_max, "robots.txt Retry-After above the maximum: clamped");
                        }
                        asked.clamp(config.retry_floor, config.retry_after_max)
                    }
                    None => backoff(config, failures),
                };
                let next_retry = later(now, delay);
                match previous.and_then(|p| p.good_copy().map(|good| (p, good))) {
                    Some((previous, (status, fetched_at))) => {
                        let unreachable_since = match previous.source {
                            Source::Stale {
                                unreachable_since, ..
                            } => unreachable_since,
                            _ => now,
                        };
                        let source = Source::Stale {
                            status,
                            fetched_at,
                            cause,
                            unreachable_since,
                            next_retry,
                        };
                        entry(previous.rules.clone(), source, next_retry, failures)
                    }
                    None => {
                        let since = match previous.map(|p| &p.source) {
                            Some(Source::Unreachable { since, .. }) => *since,
                            _ => now,
                        };
                        let source = Source::Unreachable {
                            cause,
                            since,
                            next_retry,
                        };
                        entry(Rules::DisallowAll, source, next_retry, failures)
                    }
                }
            }
        }
    }
}

/// The record to share for an entry just fetched; `body` is the good copy's body, when there is
/// one (a parsed file, or the copy a stale entry still uses).
fn record_of_entry(entry: &CachedRobots, body: Option<bytes::Bytes>) -> StoredRobots {
    let clocks = Clocks::read();
    let ms = |at: Instant| clocks.wall_ms(at);
    let parsed_kind = |rules: &Rules, body: &Option<bytes::Bytes>| match rules {
        Rules::Parsed(_) if body.is_some() => StoredKind::Parsed,
        Rules::Parsed(_) => StoredKind::Unreachable,
        _ => StoredKind::Unavailable(UnavailableReason::Status),
    };
    let (kind, status, fetched, outage) = match &entry.source {
        Source::Parsed {
            status, fetched_at, ..
        } => (StoredKind::Parsed, Some(*status), *fetched_at, None),
        Source::Inserted { at, .. } => (StoredKind::Parsed, Some(200), *at, None),
        Source::Unavailable {
            status,
            reason,
            fetched_at,
            ..
        } => (
            StoredKind::Unavailable(*reason),
            Some(*status),
            *fetched_at,
            None,
        ),
        Source::Stale {
            status,
            fetched_at,
            cause,
            unreachable_since,
            next_retry,
        } => (
            parsed_kind(&entry.rules, &body),
            Some(*status),
            *fetched_at,
            Some(StoredOutage {
                since_ms: ms(*unreachable_since),
                next_retry_ms: ms(*next_retry),
                failures: entry.failures,
                cause: cause.clone(),
            }),
        ),
        Source::Unreachable {
            cause,
            since,
            next_retry,
        } => (
            StoredKind::Unreachable,
            cause.status(),
            *since,
            Some(StoredOutage {
                since_ms: ms(*since),
                next_retry_ms: ms(*next_retry),
                failures: entry.failures,
                cause: cause.clone(),
            }),
        ),
    };
    // (A stale copy whose body this process does not have is shared as "no good copy": the
    // fleet then disallows rather than guesses; see `parsed_kind`.)
    StoredRobots {
        kind,
        status,
        body: if kind == StoredKind::Parsed {
            body
        } else {
            None
        },
        fetched_at_ms: ms(fetched),
        refresh_at_ms: ms(entry.refresh_at),
        outage,
    }
}

/// `retry_base × 2^(failures − 1)`, at most `retry_max`.
fn backoff(config: &CacheConfig, failures: u32) -> Duration {
    let factor = 2u32.saturating_pow(failures.saturating_sub(1).min(31));
    config
        .retry_base
        .saturating_mul(factor)
        .min(config.retry_max)
}

fn log_entry(entry: &CachedRobots) {
    match &entry.source {
        Source::Unreachable {
            cause, next_retry, ..
        } => {
            warn!(origin = %entry.origin, %cause, retry_in = ?next_retry.saturating_duration_since(Instant::now()), "robots.txt unreachable, no good copy: disallow all")
        }
        Source::Stale { cause, .. } => {
            info!(origin = %entry.origin, %cause, "robots.txt unreachable, using the last good copy")
        }
        source => {
            debug!(origin = %entry.origin, outcome = source.outcome(), status = ?source.status(), "robots.txt cached")
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        let config = CacheConfig::default();
        let secs: Vec<u64> = (1..=9).map(|n| backoff(&config, n).as_secs()).collect();
        assert_eq!(secs, [60, 120, 240, 480, 960, 1920, 3600, 3600, 3600]);
        assert_eq!(backoff(&config, u32::MAX), config.retry_max);
    }

    #[test]
    fn patterns_share_the_bytes_of_the_view_that_matched() {
        let body = b"User-agent: *\nDisallow: /all\nUser-agent: Google-Extended\nDisallow: /ai\n";
        let parsed = ParsedRobots::with_policy_tokens(body, &["FooBot"], &["Google-Extended"]);
        let own = parsed.matcher().check_path(b"/all/x");
        let policy = parsed
            .policy_matcher("google-extended")
            .map(|m| m.check_path(b"/ai/x"));
        for rule in [own.rule, policy.and_then(|v| v.rule)] {
            let rule = rule.expect("a rule decides");
            let pattern = parsed.pattern_of(&rule);
            assert_eq!(pattern.as_bytes(), rule.pattern);
            // Shared: the very bytes the verdict pointed at, not a copy.
            assert!(std::ptr::eq(pattern.as_bytes(), rule.pattern));
        }
        // A rule of a view the entry does not hold is copied.
        let other = Matcher::from_body(b"User-agent: *\nDisallow: /other\n", ["FooBot"]);
        let foreign = other.check_path(b"/other").rule.expect("a rule decides");
        let copied = parsed.pattern_of(&foreign);
        assert_eq!(copied, "/other");
        assert!(!std::ptr::eq(copied.as_bytes(), foreign.pattern));
    }
}
