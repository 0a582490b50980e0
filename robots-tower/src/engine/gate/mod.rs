//! What the layer and the middleware share: look up (or fetch) the origin's rules, decide (the
//! path as given and every path a server may resolve it to), turn "no" into a typed error, wait
//! for the request's turn in its group, say who is asking, and learn from responses. Both front ends
//! go through here, so they cannot disagree.

mod address;
mod interval;
mod observe;
mod paced_fetch;
pub(crate) use address::refused_at_connection;
use paced_fetch::PacedFetch;
#[cfg(test)]
mod tests;
mod verdict;

use std::sync::Arc;
use std::time::Duration;

use robots_fetch::{CachedRobots, FetchClient, Origin, RedirectChain, RedirectPolicy, RobotsCache};
use tokio::time::Instant;
use tracing::debug;

use crate::engine::overrides::Overrides;
use crate::engine::packed::PackedUsage;
use crate::error::{DecidingRule, RobotsError};
use crate::pacing::group::{Groups, PolitenessKey, PublicSuffixList};
use crate::pacing::observed::Observed;
use crate::pacing::rules::Outcome;
use crate::pacing::{Pacing, Permit};

/// A request let through: its place in the origin's queue, and what to attach to the response.
pub(crate) struct Admission {
    /// Held until the response's body has been read or dropped (the body holds it): the
    /// request counts as in flight until then.
    pub(crate) permit: Permit,
    pub(crate) entry: Arc<CachedRobots>,
    pub(crate) rule: Option<DecidingRule>,
    pub(crate) waited: Duration,
    pub(crate) interval: Duration,
    pub(crate) clamped_from: Option<Duration>,
    /// robots.txt's usage preferences for the request's URL (set by [`Gate::admit`]).
    pub(crate) usage: PackedUsage,
    /// Where a distress answer is noted, when a crawl loop watches the URL.
    pub(crate) watch: Option<crate::engine::watch::Noted>,
}

/// A request allowed by robots.txt, before its turn at the origin.
pub(crate) struct Allowed {
    entry: Arc<CachedRobots>,
    rule: Option<DecidingRule>,
    usage: PackedUsage,
    /// The interval the origin is paced by, and the delay asked when it was clamped.
    interval: (Duration, Option<Duration>),
    /// The group, when admission named it already: a request that waits is not grouped twice
    /// (a Public Suffix List lookup under the `domain` key).
    group: Option<Box<str>>,
}

/// What [`Gate::admit_now`] decided without waiting.
pub(crate) enum Admit {
    /// Allowed, and the origin's turn taken.
    Now(Admission),
    /// robots.txt must be fetched first (not cached, or due for a refresh; the miss is
    /// counted).
    Fetch,
    /// A URL a server handed on ([`crate::HandedBy`]): the address rule is judged first,
    /// which may need a lookup.
    Handed,
    /// Allowed; the origin's turn must be waited for (or asked of the fleet).
    Wait(Allowed),
}

/// Whether the crawler's `User-Agent` and `From` replace a request's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum IdentityHeaders {
    /// Set them on every request that has none; a request's own header is kept (default).
    #[default]
    IfMissing,
    /// Set them on every request, replacing the request's own.
    Always,
}

/// What a request does when its origin cannot take it now (another request's interval, a
/// 429/503 pause, the concurrency limit, robots.txt being fetched).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum WhenNotReady {
    /// Wait for the origin's turn inside the request's future (a timer, never a thread). The
    /// default: right for a client that sends requests one by one.
    #[default]
    Wait,
    /// Schedule, don't wait: fail at once with [`RobotsError::NotReady`], which says when the
    /// origin will be ready, so a framework's scheduler requeues the request instead of holding
    /// one of its concurrency permits while an origin with a 30 s Crawl-delay waits.
    Fail,
}

pub(crate) struct Gate {
    cache: RobotsCache,
    not_ready: WhenNotReady,
    /// Write [`RobotsInfo`] into response headers too.
    mirror_info: bool,
    pacing: Pacing,
    /// How an origin's politeness group is named.
    groups: Groups,
    /// Origins whose overlong Crawl-delay was clamped and said so (once per origin; bounded).
    clamp_warned: std::sync::Mutex<std::collections::HashSet<Origin>>,
    /// A redirect-following layer below this one was said (once).
    warned_followed_below: std::sync::atomic::AtomicBool,
    /// The token page directives (`X-Robots-Tag: foobot: noindex`) are scoped by.
    agent: String,
    user_agent: http::HeaderValue,
    from: Option<http::HeaderValue>,
    identity: IdentityHeaders,
    /// Signs every request (Web Bot Auth), as robots.txt's.
    #[cfg(feature = "web-bot-auth")]
    signer: Option<robots_fetch::RequestSigner>,
    /// How redirects are followed (hop limit and rule): the one place every front end asks.
    redirects: robots_fetch::RedirectPolicy,
    /// The address rule for URLs a server handed on (spec section 8).
    handed_rule: robots_fetch::HopRule,
    /// The URLs a crawl loop waits to hear the answers of (spec section 14).
    watches: Arc<crate::engine::watch::Watches>,
}
impl Gate {
    /// A gate deciding with `cache` and pacing with `pacing`; groups named by `key` (and the
    /// suffix list for `domain`), through the cache's resolver: the one robots.txt is fetched
    /// and judged with.
    pub(crate) fn new(
        cache: RobotsCache,
        pacing: Pacing,
        (key, suffixes): (PolitenessKey, PublicSuffixList),
        (identity, not_ready, mirror_info): (IdentityHeaders, WhenNotReady, bool),
        (redirects, handed_rule): (robots_fetch::RedirectPolicy, robots_fetch::HopRule),
    ) -> Gate {
        let fetch = cache.fetch_config();
        Gate {
            user_agent: fetch.user_agent.clone(),
            from: fetch.from.clone(),
            #[cfg(feature = "web-bot-auth")]
            signer: fetch.signer.clone(),
            identity,
            not_ready,
            mirror_info,
            agent: cache.tokens().first().cloned().unwrap_or_default(),
            pacing,
            groups: Groups {
                key,
                suffixes,
                resolver: fetch.resolver.clone(),
            },
            clamp_warned: Default::default(),
            warned_followed_below: Default::default(),
            cache,
            redirects,
            handed_rule,
            watches: Default::default(),
        }
    }

    /// The URLs a crawl loop watches ([`crate::Frontier::run`]).
    pub(crate) fn watches(&self) -> &Arc<crate::engine::watch::Watches> {
        &self.watches
    }

    /// The robots.txt cache the gate decides with.
    pub(crate) fn cache(&self) -> &RobotsCache {
        &self.cache
    }

    /// The token page directives are scoped by (`FooBot`).
    pub(crate) fn agent(&self) -> &str {
        &self.agent
    }

    /// The crawler's `User-Agent`, as sent.
    #[cfg(feature = "reqwest")]
    pub(crate) fn user_agent(&self) -> &http::HeaderValue {
        &self.user_agent
    }

    /// The resolver requests are grouped and judged by (the cache's).
    pub(crate) fn resolver(&self) -> &robots_fetch::Resolver {
        &self.cache.fetch_config().resolver
    }

    /// Whether a response with this status is distress (the back-off set).
    #[cfg(feature = "reqwest")]
    pub(crate) fn is_distress(&self, status: u16) -> bool {
        self.pacing.config().is_distress(Outcome::Status(status))
    }

    /// The statuses that back a group off.
    pub(crate) fn backoff_statuses(&self) -> crate::pacing::rules::StatusSet {
        self.pacing.config().backoff_statuses
    }

    /// When the group of `origin` is paused, until when.
    pub(crate) fn paused_until(&self, origin: &Origin) -> Option<Instant> {
        let group = self.groups.key_now(origin)?;
        self.pacing.paused_until(group.as_str())
    }

    /// How long until `origin`'s group could take a request (zero: now; `None`: when a request
    /// in flight ends), at the interval its cached robots.txt asks (the minimum delay when none
    /// is cached). Takes nothing.
    pub(crate) async fn next_ready(
        &self,
        origin: &Origin,
    ) -> Result<Option<Duration>, RobotsError> {
        let interval = match self.cache.cached(origin) {
            // Its URLs are refused without a request until robots.txt is due again: nothing to
            // pace, so they need not wait for the group's turn (after a slow failed fetch, the
            // adaptive delay would hold them that long for a refusal).
            Some(entry) if entry.is_blocked_by_outage(Instant::now()) => {
                return Ok(Some(Duration::ZERO));
            }
            Some(entry) => self.interval_for(&entry)?.0,
            None => self.pacing.config().min_delay,
        };
        let group = self.groups.key(origin).await;
        self.pacing.next_ready(group.as_str(), interval).await
    }

    /// The verdict for `url` from the cache alone: `None` when its origin's robots.txt is not
    /// cached (or due for a refresh). A refusal is counted; an allowed URL is counted by the
    /// caller, once nothing else refuses it.
    pub(crate) fn cached_verdict(
        &self,
        url: &url::Url,
    ) -> Option<Result<Option<DecidingRule>, RobotsError>> {
        let origin = match Origin::key_of_url(url) {
            Ok(origin) => origin,
            Err(error) => return Some(Err(error.into())),
        };
        let now = Instant::now();
        let entry = self.cache.cached_at(&origin, now)?;
        let text = || url.to_string();
        Some(self.judge(
            &entry,
            robots_fetch::path_of_url(url),
            &text,
            &Overrides::default(),
            now,
        ))
    }

    /// The politeness group of `origin` now, without waiting: for the address key, the
    /// host's name until its address is known (resolved when the group is first asked about).
    pub(crate) fn group_now<'a>(&self, origin: &'a Origin) -> crate::pacing::group::GroupKey<'a> {
        self.groups
            .key_now(origin)
            .unwrap_or(crate::pacing::group::GroupKey::Text(origin.host()))
    }

    /// Requests in flight per group, at most.
    pub(crate) fn concurrency(&self) -> usize {
        self.pacing.config().concurrency.max(1)
    }

    /// The shortest interval between two requests to a group.
    pub(crate) fn min_delay(&self) -> Duration {
        self.pacing.config().min_delay
    }

    /// Claims `what` (a sitemap's URL) in `group` for `ttl`: in a fleet, for the first process
    /// that asks; alone, always.
    pub(crate) async fn claim(&self, group: &str, what: &str, ttl: Duration) -> bool {
        match &self.pacing {
            #[cfg(feature = "redis")]
            Pacing::Fleet(fleet) => fleet.claim(group, what, ttl).await,
            _ => {
                let _ = (group, what, ttl);
                true
            }
        }
    }

    /// Waits, at most `within`, for a fleet's background work (lease releases) to be done.
    pub(crate) async fn settle(&self, within: Duration) -> bool {
        match &self.pacing {
            #[cfg(feature = "redis")]
            Pacing::Fleet(fleet) => fleet.redis().settle(within).await,
            _ => {
                let _ = within;
                true
            }
        }
    }

    /// Puts the crawler's identity on a request to `uri`, per the configured policy, and signs
    /// it when a signing key is configured (always: a signature is made for each request).
    pub(crate) fn identify(&self, uri: &http::Uri, headers: &mut http::HeaderMap) {
        #[cfg(not(feature = "web-bot-auth"))]
        let _ = uri;
        #[cfg(feature = "web-bot-auth")]
        if let Some(signer) = &self.signer
            && let Err(error) = signer.sign(uri, headers)
        {
            tracing::error!(%uri, %error, "the request goes unsigned");
        }
        self.name_the_crawler(headers);
    }

    /// [`Gate::identify`] for a request named by a parsed URL (the middleware's, the hooks'):
    /// a URL that is no `http::Uri` goes unsigned, never without the crawler's name.
    pub(crate) fn identify_url(&self, url: &url::Url, headers: &mut http::HeaderMap) {
        match url.as_str().parse::<http::Uri>() {
            Ok(uri) => self.identify(&uri, headers),
            Err(error) => {
                tracing::error!(%url, %error, "not an http URI: the request goes unsigned");
                self.name_the_crawler(headers);
            }
        }
    }

    /// `User-Agent` and `From`, per the configured policy.
    fn name_the_crawler(&self, headers: &mut http::HeaderMap) {
        let always = self.identity == IdentityHeaders::Always;
        if always || !headers.contains_key(http::header::USER_AGENT) {
            headers.insert(http::header::USER_AGENT, self.user_agent.clone());
        }
        if let Some(from) = &self.from
            && (always || !headers.contains_key(http::header::FROM))
        {
            headers.insert(http::header::FROM, from.clone());
        }
    }

    /// Decides a request for `path` at `origin`, fetching robots.txt with `client` when needed, then waits for
    /// the request's turn in its group (or, with [`WhenNotReady::Fail`], takes it only if free now).
    pub(crate) async fn admit<C: FetchClient>(
        &self,
        client: &C,
        origin: &Origin,
        path: &str,
        url: impl Fn() -> String,
        overrides: &Overrides,
    ) -> Result<Admission, RobotsError> {
        match self.admit_now(origin, path, &url, overrides)? {
            Admit::Now(admission) => Ok(admission),
            pending => {
                self.admit_later(pending, client, origin, path, &url, overrides)
                    .await
            }
        }
    }

    /// [`Gate::admit`] without waiting: admitted when the rules are cached and fresh and the
    /// origin's turn (in this process) is free now, refused when the verdict or schedule mode
    /// says so, else what is left to wait for. One clock read serves the cache's freshness,
    /// the verdict and the turn: this is the whole of a cache-hit request's decision.
    pub(crate) fn admit_now(
        &self,
        origin: &Origin,
        path: &str,
        url: &impl Fn() -> String,
        overrides: &Overrides,
    ) -> Result<Admit, RobotsError> {
        self.connects_as_judged(origin)?;
        if overrides.handed_by.is_some() {
            // The address rule may need a lookup: judged first, in `admit_later`.
            return Ok(Admit::Handed);
        }
        self.admit_cached(origin, path, url, overrides)
    }

    /// [`Gate::admit_now`] once the address rule has passed.
    fn admit_cached(
        &self,
        origin: &Origin,
        path: &str,
        url: &impl Fn() -> String,
        overrides: &Overrides,
    ) -> Result<Admit, RobotsError> {
        let now = Instant::now();
        let Some(entry) = self.cache.cached_at(origin, now) else {
            return Ok(Admit::Fetch);
        };
        let allowed = self.allow(entry, path, url, overrides, now)?;
        let Some(local) = self.pacing.in_process() else {
            // A fleet's turn is asked of Redis.
            return Ok(Admit::Wait(allowed));
        };
        let (interval, clamped_from) = allowed.interval;
        // A request that will wait keeps the group named here (copied: it outlives this
        // borrow of the origin), so that it is not grouped twice.
        let waits = self.not_ready == WhenNotReady::Wait;
        let turn = match self.groups.text_key(allowed.entry.origin()) {
            Some(group) => local
                .try_acquire(group, interval, now)
                .map_err(|not_yet| (not_yet, waits.then(|| Box::from(group)))),
            None => match self.groups.key_now(allowed.entry.origin()) {
                Some(group) => local
                    .try_acquire(group.as_str(), interval, now)
                    .map_err(|not_yet| (not_yet, waits.then(|| Box::from(group.as_str())))),
                // The address is not known yet: `pace` resolves it.
                None => return Ok(Admit::Wait(allowed)),
            },
        };
        let turn = match turn {
            Ok(permit) => Ok(permit),
            // `pace` waits for it (and says so if the interval was clamped).
            Err((_, Some(group))) => {
                let mut allowed = allowed;
                allowed.group = Some(group);
                return Ok(Admit::Wait(allowed));
            }
            Err((not_yet, None)) => Err(not_yet),
        };
        self.warn_if_clamped(&allowed.entry, interval, clamped_from);
        match turn {
            Ok(permit) => {
                crate::telemetry::waited(Duration::ZERO);
                debug!(url = %url(), "allowed by robots.txt");
                Ok(Admit::Now(Admission {
                    permit: Permit::Local(permit),
                    entry: allowed.entry,
                    rule: allowed.rule,
                    waited: Duration::ZERO,
                    interval,
                    clamped_from,
                    usage: allowed.usage,
                    watch: self.watches.find(url),
                }))
            }
            Err(not_yet) => Err(self.not_ready_error(&allowed.entry, not_yet)),
        }
    }

    /// The rest of [`Gate::admit`] after [`Gate::admit_now`] left something to wait for.
    pub(crate) async fn admit_later<C: FetchClient>(
        &self,
        pending: Admit,
        client: &C,
        origin: &Origin,
        path: &str,
        url: &impl Fn() -> String,
        overrides: &Overrides,
    ) -> Result<Admission, RobotsError> {
        let pending = match pending {
            Admit::Handed => {
                self.check_handed(url, overrides).await?;
                self.admit_cached(origin, path, url, overrides)?
            }
            pending => pending,
        };
        let allowed = match pending {
            Admit::Now(admission) => return Ok(admission),
            Admit::Handed => unreachable!("the address rule was judged above"),
            Admit::Wait(allowed) => allowed,
            Admit::Fetch => {
                let entry = self.fetch_entry(client, origin).await?;
                self.allow(entry, path, url, overrides, Instant::now())?
            }
        };
        let mut admission = self
            .pace(
                allowed.entry,
                allowed.rule,
                allowed.interval,
                allowed.group.as_deref(),
            )
            .await?;
        admission.usage = allowed.usage;
        admission.watch = self.watches.find(url);
        debug!(url = %url(), waited = ?admission.waited, "allowed by robots.txt");
        Ok(admission)
    }

    /// Waits for (or, in schedule mode, tries) the request's turn in its group (`named`, or
    /// named here), at the interval [`Gate::interval_for`] gave.
    pub(crate) async fn pace(
        &self,
        entry: Arc<CachedRobots>,
        rule: Option<DecidingRule>,
        (interval, clamped_from): (Duration, Option<Duration>),
        named: Option<&str>,
    ) -> Result<Admission, RobotsError> {
        self.warn_if_clamped(&entry, interval, clamped_from);
        let computed;
        let group = match named {
            Some(group) => group,
            None => {
                computed = self.groups.key(entry.origin()).await;
                computed.as_str()
            }
        };
        let (permit, waited) = match self.not_ready {
            WhenNotReady::Wait => self.pacing.acquire(group, interval).await?,
            WhenNotReady::Fail => match self.pacing.try_acquire(group, interval).await? {
                Ok(permit) => (permit, Duration::ZERO),
                Err(not_yet) => return Err(self.not_ready_error(&entry, not_yet)),
            },
        };
        crate::telemetry::waited(waited);
        Ok(Admission {
            permit,
            entry,
            rule,
            waited,
            interval,
            clamped_from,
            usage: PackedUsage::default(),
            watch: None,
        })
    }

    /// The origin's rules, fetched when needed. In schedule mode, a fetch already under way
    /// for another request is not waited for.
    pub(crate) async fn entry<C: FetchClient>(
        &self,
        client: &C,
        origin: &Origin,
    ) -> Result<Arc<CachedRobots>, RobotsError> {
        match self.cache.cached(origin) {
            Some(entry) => Ok(entry),
            None => self.fetch_entry(client, origin).await,
        }
    }

    /// [`Gate::entry`] after the cache missed (the miss counted once).
    async fn fetch_entry<C: FetchClient>(
        &self,
        client: &C,
        origin: &Origin,
    ) -> Result<Arc<CachedRobots>, RobotsError> {
        // In schedule mode, a fetch under way for another request is not waited for.
        if self.not_ready == WhenNotReady::Fail && self.cache.is_fetching(origin) {
            crate::telemetry::not_ready(crate::error::NotReadyReason::RobotsPending);
            return Err(RobotsError::NotReady {
                origin: origin.clone(),
                ready_in: None,
                reason: crate::error::NotReadyReason::RobotsPending,
            });
        }
        let paced = PacedFetch { gate: self, client };
        Ok(self.cache.fetch(&paced, origin).await)
    }

    /// The robots.txt verdict alone (no politeness): the rules (fetched when needed), refused
    /// when robots.txt is unreachable with no good copy, or when the path as given or any path
    /// a server may resolve it to is disallowed.
    pub(crate) async fn decide<C: FetchClient>(
        &self,
        client: &C,
        origin: &Origin,
        path: &str,
        url: &impl Fn() -> String,
        overrides: &Overrides,
    ) -> Result<(Arc<CachedRobots>, Option<DecidingRule>), RobotsError> {
        self.connects_as_judged(origin)?;
        self.check_handed(url, overrides).await?;
        let entry = self.entry(client, origin).await?;
        let rule = self.judge(&entry, path, url, overrides, Instant::now())?;
        crate::telemetry::decided(if overrides.skip.is_some() {
            "skipped"
        } else {
            "allowed"
        });
        Ok((entry, rule))
    }
}

impl Gate {
    /// A chain for a request to `start` whose redirects this gate decides: the configured
    /// redirect policy, at most `limit` hops.
    pub(crate) fn redirect_chain(&self, start: url::Url, limit: usize) -> RedirectChain {
        let most = limit.min(self.redirects.max_hops());
        let policy = RedirectPolicy::limited(most).with_rule(self.redirects.rule().clone());
        RedirectChain::new(start, policy)
    }

    /// Where a response to `chain`'s URL sends the request next: `None` when it is no redirect
    /// to follow (not a 3xx, no usable `Location`, or the policy follows none); the target,
    /// followed in `chain`, when the chain's policy allows it (robots-fetch's
    /// [`RedirectChain`], the rule robots.txt redirects follow too). The target is then
    /// admitted as a URL the hop's page handed on, so the address rule judges it in
    /// [`Gate::admit`]. The one place page redirects are decided, for every front end.
    pub(crate) async fn next_hop(
        &self,
        chain: &mut RedirectChain,
        status: u16,
        headers: &http::HeaderMap,
    ) -> Result<Option<url::Url>, RobotsError> {
        if !(300..400).contains(&status) || !chain.policy().follows() {
            return Ok(None);
        }
        let Some(target) = chain.location(headers) else {
            return Ok(None);
        };
        let refused = |reason| {
            let from = chain.url();
            tracing::info!(%from, to = %target, %reason, "redirect not followed");
            Err(RobotsError::RedirectRefused {
                from: from.to_string(),
                to: target.to_string(),
                reason,
            })
        };
        if let Err(reason) = chain.check(&target) {
            return refused(reason);
        }
        // A target the client would connect elsewhere than judged is refused as such, before
        // its name is looked up for the rule.
        if let Ok(origin) = Origin::from_url(&target) {
            self.connects_as_judged(&origin)?;
        }
        if let Err(reason) = chain.check_resolved(&target, self.resolver()).await {
            return refused(reason);
        }
        chain.follow(target.clone());
        Ok(Some(target))
    }
}

/// An error a request failed with.
pub(crate) type ErrorRef = dyn std::error::Error + 'static;

/// What a request's failure teaches pacing.
fn failure(admission: &Admission, error: &ErrorRef) -> Observed {
    let outcome = crate::pacing::distress::failure_outcome(error);
    if outcome == Outcome::NetworkError {
        debug!(origin = %admission.entry.origin(), %error, "the request failed with a network error");
    }
    Observed::failure(outcome)
}

/// A response header read on every response (its name built once, not parsed per lookup).
static CONTENT_USAGE: http::HeaderName = http::HeaderName::from_static("content-usage");
