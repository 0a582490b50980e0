//! The builder for [`crate::RobotsLayer`] and [`crate::RobotsMiddleware`]: crawler identity, politeness
//! numbers, fetch options, and optionally a shared cache.

mod hooks;
mod layer;
#[cfg(feature = "reqwest")]
mod middleware;

use std::sync::Arc;
use std::time::Duration;

use robots_fetch::{CacheConfig, RobotsCache, RobotsCacheBuilder};

use crate::engine::gate::{Gate, IdentityHeaders, WhenNotReady};
use crate::pacing::Pacing;
use crate::pacing::group::{PolitenessKey, PublicSuffixList};
use crate::pacing::local::Politeness;
use crate::pacing::rules::{OverlongCrawlDelay, PolitenessConfig, Spacing};
use robots_fetch::Resolver;

/// The default total time of a page request by a client the middleware builds (its
/// `page_timeout` setting; feature `reqwest`).
pub const DEFAULT_PAGE_TIMEOUT: Duration = Duration::from_secs(30);

/// Configuration of the robots layer ([`crate::RobotsLayer::builder`], which builds a [`crate::RobotsLayer`])
/// or the reqwest middleware (`RobotsMiddleware::builder`, which builds a `RobotsMiddleware` or a
/// ready client): the type parameter says which, so each builds only what it was made for. Every
/// number has a polite default.
///
/// ```
/// use std::time::Duration;
/// use robots_tower::RobotsLayer;
/// let layer = RobotsLayer::builder("FooBot/1.0 (+https://foo.example/bot)")
///     .from("ops@foo.example")
///     .min_delay(Duration::from_millis(500))
///     .max_delay(Duration::from_secs(20))
///     .concurrency(2)
///     .build();
/// # let _ = layer;
/// ```
///
/// Each builder builds only its own front end; a mix-up is a compile error, not a puzzling
/// trait bound later:
///
/// ```compile_fail
/// // A layer's builder has no reqwest client to build.
/// let client = robots_tower::RobotsLayer::builder("FooBot").build_client();
/// ```
///
/// ```compile_fail
/// // A middleware's builder builds a middleware, not a layer.
/// let layer: robots_tower::RobotsLayer = robots_tower::RobotsMiddleware::builder("FooBot").build();
/// ```
#[derive(Debug, Clone)]
pub struct RobotsConfig<Target = ForLayer> {
    user_agent: String,
    /// The cache to build when none is shared: identity and fetch settings live there.
    cache_builder: RobotsCacheBuilder,
    /// The settings given for the cache built here, by name: a shared cache ignores them, and
    /// says so.
    cache_settings: Vec<&'static str>,
    cache: Option<RobotsCache>,
    pub(crate) politeness: PolitenessConfig,
    /// The list `PolitenessKey::Domain` groups by.
    suffixes: PublicSuffixList,
    /// How redirects are followed (the middleware's pages, the sitemap expansion; the layer
    /// leaves redirects to the stack).
    pub(crate) redirects: robots_fetch::RedirectPolicy,
    /// The address rule for URLs a server handed on.
    handed_rule: robots_fetch::HopRule,
    identity: IdentityHeaders,
    not_ready: WhenNotReady,
    mirror_info: bool,
    #[cfg_attr(not(feature = "reqwest"), allow(dead_code))]
    pub(crate) refusals: crate::front::status::Refusals,
    /// The client the middleware fetches robots.txt with (none: one built here).
    #[cfg(feature = "reqwest")]
    pub(crate) robots_client: Option<reqwest::Client>,
    /// How many times the middleware sends a request again after a transient failure.
    #[cfg_attr(not(feature = "reqwest"), allow(dead_code))]
    pub(crate) retries: u32,
    /// The total time a page request of a client the middleware builds may take (none: no
    /// limit).
    #[cfg_attr(not(feature = "reqwest"), allow(dead_code))]
    pub(crate) page_timeout: Option<Duration>,
    #[cfg(feature = "redis")]
    fleet: FleetSettings,
    target: std::marker::PhantomData<Target>,
}

/// Marks a [`RobotsConfig`] that builds a tower [`crate::RobotsLayer`].
#[derive(Debug, Clone, Copy)]
pub struct ForLayer;

/// Marks a [`RobotsConfig`] that builds a reqwest-middleware `RobotsMiddleware`.
#[derive(Debug, Clone, Copy)]
pub struct ForMiddleware;

/// Marks a [`RobotsConfig`] that builds [`crate::RobotsHooks`].
#[derive(Debug, Clone, Copy)]
pub struct ForHooks;

/// Fleet settings: the shared Redis (none: no fleet) and what to do without it. Kept whatever
/// the order the builder's calls come in.
#[cfg(feature = "redis")]
#[derive(Debug, Clone)]
struct FleetSettings {
    fleet: Option<robots_fetch::RedisFleet>,
    fallback: crate::pacing::fleet::FleetFallback,
    size: u32,
    lease_ttl: Duration,
    outage_grace: Duration,
}

#[cfg(feature = "redis")]
impl Default for FleetSettings {
    fn default() -> FleetSettings {
        FleetSettings {
            fleet: None,
            fallback: crate::pacing::fleet::FleetFallback::default(),
            size: 1,
            lease_ttl: Duration::from_secs(120),
            outage_grace: Duration::from_secs(2),
        }
    }
}

impl<Target> RobotsConfig<Target> {
    pub(crate) fn new(user_agent: &str) -> RobotsConfig<Target> {
        RobotsConfig {
            user_agent: user_agent.to_string(),
            cache_builder: RobotsCache::builder(user_agent),
            cache_settings: Vec::new(),
            cache: None,
            politeness: PolitenessConfig::default(),
            suffixes: PublicSuffixList::default(),
            redirects: robots_fetch::RedirectPolicy::default(),
            handed_rule: robots_fetch::HopRule::default(),
            identity: IdentityHeaders::IfMissing,
            not_ready: WhenNotReady::Wait,
            mirror_info: false,
            refusals: crate::front::status::Refusals::Errors,
            #[cfg(feature = "reqwest")]
            robots_client: None,
            retries: 0,
            page_timeout: Some(crate::front::config::DEFAULT_PAGE_TIMEOUT),
            #[cfg(feature = "redis")]
            fleet: FleetSettings::default(),
            target: std::marker::PhantomData,
        }
    }

    /// Fleet mode from a URL: now `.fleet(&RedisFleet::new(url)?)`, the one way into it.
    #[cfg(feature = "redis")]
    #[deprecated(
        since = "0.1.0",
        note = "use `.fleet(&RedisFleet::new(url)?)`, the one way into fleet mode"
    )]
    #[doc(hidden)]
    pub fn redis(self, url: &str) -> Result<Self, robots_fetch::FleetError> {
        Ok(self.fleet(&robots_fetch::RedisFleet::new(url)?))
    }

    /// Fleet mode: share robots.txt and every group's politeness (interval, concurrency,
    /// 429/503 pauses) with every process that uses the same [`robots_fetch::RedisFleet`]
    /// (`RedisFleet::new("redis://host:port/db")?`, a connection and a key prefix). robots.txt is
    /// fetched once per origin for the whole fleet, and each group is paced once for the whole
    /// fleet. While Redis is unreachable, robots.txt comes from the local copy or a local fetch,
    /// and pacing follows [`RobotsConfig::fleet_fallback`].
    #[cfg(feature = "redis")]
    pub fn fleet(mut self, fleet: &robots_fetch::RedisFleet) -> Self {
        self.cache_builder = self.cache_builder.fleet(fleet);
        self.fleet.fleet = Some(fleet.clone());
        self
    }

    /// What pacing does while the fleet's Redis is unreachable
    /// ([`crate::FleetFallback::LocalFallback`]: local pacing with the interval multiplied by
    /// the fleet size).
    #[cfg(feature = "redis")]
    pub fn fleet_fallback(mut self, fallback: crate::pacing::fleet::FleetFallback) -> Self {
        self.fleet.fallback = fallback;
        self
    }

    /// How many processes the fleet has (1): the local fallback multiplies the interval by this,
    /// so that the fleet as a whole stays polite while Redis is down.
    #[cfg(feature = "redis")]
    pub fn fleet_size(mut self, processes: u32) -> Self {
        self.fleet.size = processes.max(1);
        self
    }

    /// How long requests wait for an unreachable Redis before pacing falls back (2 s; zero:
    /// fall back at once). A restart or a failover is usually over within it: waiting it out
    /// keeps the fleet's spacing, where processes pacing alone could start together. The time
    /// runs from when the outage was first seen, not per request. (Schedule mode,
    /// [`crate::WhenNotReady::Fail`], does not hold requests: it falls back at once.)
    ///
    /// ```
    /// use std::time::Duration;
    /// let fleet = robots_tower::RedisFleet::new("redis://127.0.0.1:6379/")?;
    /// let config = robots_tower::RobotsLayer::builder("FooBot/1.0 (+https://foo.example/bot)")
    ///     .fleet(&fleet)
    ///     .fleet_size(8)
    ///     .fleet_outage_grace(Duration::from_secs(5));
    /// # let _ = config;
    /// # Ok::<(), robots_tower::FleetError>(())
    /// ```
    #[cfg(feature = "redis")]
    pub fn fleet_outage_grace(mut self, grace: Duration) -> Self {
        self.fleet.outage_grace = grace;
        self
    }

    /// How long a request holds its place in the fleet at most (2 min): the lease of a process
    /// that dies mid-request expires after this, freeing the place.
    #[cfg(feature = "redis")]
    pub fn fleet_lease(mut self, ttl: Duration) -> Self {
        self.fleet.lease_ttl = ttl;
        self
    }

    /// Product tokens rules are selected by, most specific first (default: the User-Agent's own
    /// token, `FooBot/1.0 (…)` → `FooBot`).
    pub fn tokens<I, S>(self, tokens: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.cache_setting("tokens", |b| b.tokens(tokens))
    }

    /// Policy tokens (`Google-Extended`, `Applebot-Extended`…) requests may also be checked as,
    /// per request, with [`crate::AlsoCheckAs`]: each gets its own view of every fetched file.
    pub fn policy_tokens<I, S>(self, tokens: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.cache_setting("policy_tokens", |b| b.policy_tokens(tokens))
    }

    /// `From` header (an address to reach the crawler's operator), sent on robots.txt requests
    /// and on every request that goes through the layer or middleware.
    pub fn from(self, from: &str) -> Self {
        self.cache_setting("from", |b| b.from(from))
    }

    /// Signs every request the crawler sends with Web Bot Auth (HTTP Message Signatures with
    /// Ed25519, `tag="web-bot-auth"`): robots.txt, pages, each redirect hop and each retry, each
    /// signed as it goes. See [`robots_fetch::RequestSigner`] for the keys, their rotation and
    /// the `Signature-Agent` naming the key directory.
    ///
    /// ```
    /// use robots_fetch::{RequestSigner, SigningKey};
    /// use robots_tower::RobotsLayer;
    /// let key = SigningKey::generate()?; // in practice: SigningKey::from_file("crawler.pem")?
    /// let signer = RequestSigner::new(key).signature_agent("https://crawler.example".parse()?)?;
    /// let layer = RobotsLayer::builder("FooBot/1.0 (+https://crawler.example/bot)")
    ///     .signer(signer)
    ///     .build();
    /// # let _ = layer;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[cfg(feature = "web-bot-auth")]
    pub fn signer(self, signer: robots_fetch::RequestSigner) -> Self {
        self.cache_setting("signer", |b| b.signer(signer))
    }

    /// Whether the crawler's `User-Agent` (and `From`) replace a request's own
    /// ([`IdentityHeaders::IfMissing`]: they are set on every request that has none).
    pub fn identity_headers(mut self, policy: IdentityHeaders) -> Self {
        self.identity = policy;
        self
    }

    /// What a request does when its origin cannot take it now ([`WhenNotReady::Wait`]: waits in
    /// its future). With [`WhenNotReady::Fail`] (schedule, don't wait) it fails at once with
    /// [`crate::RobotsError::NotReady`], saying when the origin will be ready and why, so a
    /// framework requeues it instead of holding a concurrency permit.
    ///
    /// ```
    /// use robots_tower::{WhenNotReady, RobotsMiddleware};
    /// let client = RobotsMiddleware::builder("FooBot/1.0").when_not_ready(WhenNotReady::Fail).build_client()?;
    /// # let _ = client;
    /// # Ok::<(), reqwest::Error>(())
    /// ```
    pub fn when_not_ready(mut self, not_ready: WhenNotReady) -> Self {
        self.not_ready = not_ready;
        self
    }

    /// Also write each response's [`crate::RobotsInfo`] into its headers (the deciding rule,
    /// the wait, the interval, where the rules came from, the `X-Robots-Tag` directives that
    /// apply to this crawler; names in [`crate::front::status::headers`]), for frameworks that drop
    /// response extensions. Off by default.
    pub fn mirror_info_headers(mut self, mirror: bool) -> Self {
        self.mirror_info = mirror;
        self
    }

    /// What requests share one politeness budget ([`PolitenessKey::Host`]: every origin of one
    /// host). Spacing, concurrency, pauses and back-off count per group; each origin keeps its
    /// own robots.txt and Crawl-delay.
    pub fn politeness_key(mut self, key: PolitenessKey) -> Self {
        self.politeness.key = key;
        self
    }

    /// The Public Suffix List [`PolitenessKey::Domain`] groups by (default: the compiled-in
    /// copy).
    pub fn public_suffix_list(mut self, list: PublicSuffixList) -> Self {
        self.suffixes = list;
        self
    }

    /// The resolver [`PolitenessKey::Ip`] and the redirect guard take addresses from (default:
    /// the system's, cached for a minute). Give the HTTP client the same one, so that a request
    /// is paced and judged by the address it connects to: the middleware's `build_client` does;
    /// for your own reqwest client, `ClientBuilder::dns_resolver(Arc::new(resolver))`.
    pub fn resolver(self, resolver: Resolver) -> Self {
        self.cache_setting("resolver", |b| b.resolver(resolver))
    }

    /// The resolver the front end will group by (`PolitenessKey::Ip`) and judge redirect hops
    /// by: a shared cache's (`.cache(…)`), else the one given to [`RobotsConfig::resolver`], else
    /// the default. Give the same one to an HTTP client you build yourself
    /// (`reqwest::ClientBuilder::dns_resolver(Arc::new(resolver))`), so that the address paced
    /// and judged is the address connected to.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use robots_tower::{Resolver, RobotsMiddleware};
    /// let resolver = Resolver::new().with_override_text("shop.example:443:192.0.2.7")?;
    /// let config = RobotsMiddleware::builder("FooBot/1.0").resolver(resolver);
    /// let client = reqwest::Client::builder()
    ///     .redirect(reqwest::redirect::Policy::none())
    ///     .dns_resolver(Arc::new(config.resolver_in_use()))
    ///     .build()?;
    /// # let _ = client;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn resolver_in_use(&self) -> Resolver {
        match &self.cache {
            Some(cache) => cache.fetch_config().resolver.clone(),
            None => self.cache_builder.resolver_in_use().clone(),
        }
    }

    /// Minimum interval between request starts to one group (1 s).
    pub fn min_delay(mut self, delay: Duration) -> Self {
        self.politeness.min_delay = delay;
        self
    }

    /// Crawl-delay and Request-rate raise the interval up to this (30 s); a site asking for
    /// more is handled by [`RobotsConfig::overlong_crawl_delay`]. Also caps the adaptive delay.
    pub fn max_delay(mut self, delay: Duration) -> Self {
        self.politeness.max_delay = delay;
        self
    }

    /// What to do with a Crawl-delay above the maximum ([`OverlongCrawlDelay::Refuse`]: the
    /// origin's requests fail with [`crate::RobotsError::CrawlDelayTooLong`]).
    pub fn overlong_crawl_delay(mut self, policy: OverlongCrawlDelay) -> Self {
        self.politeness.overlong = policy;
        self
    }

    /// With one request in flight per group, the interval after a response is at least
    /// `factor` × the time the server took to answer it, up to the maximum delay (1: a server
    /// is never busy with this crawler more than half the time). 0 turns it off; a negative
    /// or non-finite factor counts as 0.
    pub fn delay_factor(mut self, factor: f64) -> Self {
        self.politeness.delay_factor = if factor.is_finite() && factor > 0.0 {
            factor
        } else {
            0.0
        };
        self
    }

    /// The response statuses that pause a group (429, 500, 502, 503, 504): for `Retry-After`
    /// when given, else the back-off ([`RobotsConfig::backoff`]).
    pub fn backoff_statuses(mut self, statuses: impl IntoIterator<Item = u16>) -> Self {
        self.politeness.backoff_statuses = crate::pacing::rules::StatusSet::of(statuses);
        self
    }

    /// Whether rate-limit headers that say nothing is left (`RateLimit: "burst";r=0;t=30`,
    /// `X-RateLimit-Remaining: 0` with `X-RateLimit-Reset`) pause the group until their reset,
    /// capped at [`RobotsConfig::max_retry_after`] (true).
    pub fn rate_limit_headers(mut self, obey: bool) -> Self {
        self.politeness.rate_limit_headers = obey;
        self
    }

    /// Whether connect errors, resets and timeouts of page requests pause a group like a
    /// distress status (true).
    pub fn backoff_on_network_errors(mut self, back_off: bool) -> Self {
        self.politeness.backoff_on_network_errors = back_off;
        self
    }

    /// A request is in flight until its response's body has been read to the end or dropped
    /// (that is what the server sees). A body kept unread would hold its group's place for
    /// ever; after waiting this long (30 s) for a place held by such a body, a request takes it
    /// over, and that is warned about once. In a fleet, an answered request's lease lasts this
    /// long past its response head unless its body ends first.
    pub fn unread_body_grace(mut self, grace: Duration) -> Self {
        self.politeness.unread_body_grace = grace.max(Duration::from_millis(1));
        self
    }

    /// Where the interval is measured from: by default also from the end of the previous
    /// request when one is in flight per origin ([`Spacing::FromEnd`]);
    /// [`Spacing::StartToStart`] measures from starts only.
    pub fn spacing(mut self, spacing: Spacing) -> Self {
        self.politeness.spacing = spacing;
        self
    }

    /// Whether Crawl-delay and Request-rate raise the interval (true).
    pub fn obey_crawl_delay(mut self, obey: bool) -> Self {
        self.politeness.obey_crawl_delay = obey;
        self
    }

    /// Requests in flight per group (1).
    pub fn concurrency(mut self, requests: usize) -> Self {
        self.politeness.concurrency = requests.max(1);
        self
    }

    /// Longest pause a `Retry-After` or a rate-limit reset may impose (10 min); a longer one is
    /// clamped and said once per group. Neither can shorten the back-off a distress streak calls
    /// for: `Retry-After: 0` on a 503 still backs off.
    pub fn max_retry_after(mut self, cap: Duration) -> Self {
        self.politeness.max_retry_after = cap;
        self
    }

    /// Pause after a distress response (or a rate limit exhausted without a reset): `base`,
    /// doubled per consecutive one, each varied by -10%…+10% at random, and never above `max`
    /// after the jitter (5 s … 5 min). A longer `Retry-After` lengthens the pause.
    pub fn backoff(mut self, base: Duration, max: Duration) -> Self {
        self.politeness.backoff_base = base;
        self.politeness.backoff_max = max;
        self
    }

    /// Total time a robots.txt fetch may take (10 s).
    pub fn fetch_timeout(self, timeout: Duration) -> Self {
        self.cache_setting("fetch_timeout", |b| b.fetch_timeout(timeout))
    }

    /// Connect timeout for the middleware's own robots.txt client (5 s).
    pub fn connect_timeout(self, timeout: Duration) -> Self {
        self.cache_setting("connect_timeout", |b| b.connect_timeout(timeout))
    }

    /// Cache lifetimes and size, for a cache built here.
    pub fn cache_config(self, config: CacheConfig) -> Self {
        self.cache_setting("cache_config", |b| b.cache_config(config))
    }

    /// Use this cache (shared with other layers, middlewares or code) instead of a new one. Its
    /// own User-Agent, `From`, tokens, fetch settings and resolver then apply, to robots.txt
    /// requests and page requests alike, so the identity that read the rules is the one that
    /// crawls. A different User-Agent, and any of the cache settings of this builder (`tokens`,
    /// `policy_tokens`, `from`, `signer`, `fetch_timeout`, `connect_timeout`, `cache_config`,
    /// `robots_redirect_rule`, `resolver`), are not used, and a warning names them when the
    /// front end is built.
    pub fn cache(mut self, cache: RobotsCache) -> Self {
        self.cache = Some(cache);
        self
    }

    /// The rule robots.txt redirects must pass (default: none from a public host into an
    /// internal address). A refused hop leaves robots.txt unreachable, so the origin is refused.
    /// Separate from the middleware's `redirect_policy`: robots.txt often moves to another host
    /// or scheme, and a same-origin rule there would refuse the whole site.
    pub fn robots_redirect_rule(self, rule: robots_fetch::HopRule) -> Self {
        self.cache_setting("robots_redirect_rule", |b| b.robots_redirect_rule(rule))
    }

    /// The address rule for every URL a server hands the crawler ([`crate::HandedBy`]: a
    /// redirect's `Location`, a `Sitemap:` line, a sitemap's entry or page, a link found in a
    /// page). Default [`robots_fetch::HopRule::not_into_internal_addresses`]: nothing a public
    /// host hands on leads into a loopback, private, link-local, shared or unspecified address,
    /// judged on the address the connection would use, so a hostile server cannot point the
    /// crawler into your network. URLs you give directly are never judged by it. A crawler of
    /// an internal network by name may widen it (`HopRule::any()`, or a rule of its own).
    ///
    /// ```
    /// use robots_tower::{HopRule, RobotsLayer};
    /// let layer = RobotsLayer::builder("FooBot/1.0")
    ///     .handed_url_rule(HopRule::from_fn("into *.corp.example", |_, to| {
    ///         to.host_str().is_some_and(|h| h.ends_with(".corp.example"))
    ///     }).or(HopRule::default()))
    ///     .build();
    /// # let _ = layer;
    /// ```
    pub fn handed_url_rule(mut self, rule: robots_fetch::HopRule) -> Self {
        self.handed_rule = rule;
        self
    }

    /// Applies a setting to the cache built here, and records its name once: a shared cache
    /// ([`RobotsConfig::cache`]) ignores it, and says so.
    fn cache_setting(
        mut self,
        name: &'static str,
        set: impl FnOnce(RobotsCacheBuilder) -> RobotsCacheBuilder,
    ) -> Self {
        self.cache_builder = set(self.cache_builder);
        if !self.cache_settings.contains(&name) {
            self.cache_settings.push(name);
        }
        self
    }

    pub(crate) fn gate(&self) -> Arc<Gate> {
        let cache = match &self.cache {
            Some(cache) => {
                let shared = cache.fetch_config().user_agent.as_bytes();
                if shared != self.user_agent.as_bytes() {
                    tracing::warn!(
                        builder = %self.user_agent,
                        cache = %String::from_utf8_lossy(shared),
                        "a shared cache brings its own User-Agent; it is the one sent"
                    );
                }
                if !self.cache_settings.is_empty() {
                    tracing::warn!(
                        ignored = %self.cache_settings.join(", "),
                        "a shared cache (.cache()) brings its own settings, so these builder settings are not used: give them to RobotsCache::builder instead"
                    );
                }
                cache.clone()
            }
            None => self.cache_builder.clone().build(),
        };
        Arc::new(Gate::new(
            cache,
            self.pacing(),
            (self.politeness.key, self.suffixes.clone()),
            (self.identity, self.not_ready, self.mirror_info),
            (self.redirects.clone(), self.handed_rule.clone()),
        ))
    }

    /// The client the middleware or the hooks fetch robots.txt with: the one given to
    /// `robots_client`, or one of their own (no redirect following, the configured timeouts).
    #[cfg(feature = "reqwest")]
    fn robots_reqwest_client(&self, gate: &Gate) -> Result<reqwest::Client, reqwest::Error> {
        match &self.robots_client {
            Some(client) => Ok(client.clone()),
            None => robots_fetch::reqwest_client(gate.cache().fetch_config()),
        }
    }

    fn pacing(&self) -> Pacing {
        #[cfg(feature = "redis")]
        if let Some(fleet) = &self.fleet.fleet {
            let settings = &self.fleet;
            if settings.size <= 1
                && settings.fallback == crate::pacing::fleet::FleetFallback::LocalFallback
            {
                tracing::info!(
                    "fleet mode with fleet_size 1: while Redis is down, each process paces alone at the full rate; set fleet_size to the number of processes"
                );
            }
            return Pacing::Fleet(Box::new(crate::pacing::fleet::FleetPacing::new(
                fleet.clone(),
                self.politeness.clone(),
                settings.fallback,
                settings.size,
                settings.lease_ttl,
                settings.outage_grace,
            )));
        }
        Pacing::Local(Politeness::new(self.politeness.clone()))
    }
}
