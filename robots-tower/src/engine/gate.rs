//! What the layer and the middleware share: look up (or fetch) the origin's rules, decide (the
//! path as given and every path a server may resolve it to), turn "no" into a typed error, wait
//! for the origin's politeness slot, say who is asking, and learn from responses. Both front ends
//! go through here, so they cannot disagree.

use std::sync::Arc;
use std::time::Duration;

use robots_core::AiPreferences;
use robots_core::url_path::served_paths;
use robots_fetch::{CachedRobots, FetchClient, Origin, RobotsCache, Source};
use tokio::time::Instant;
use tracing::{debug, info, warn};

use crate::engine::info::{RobotsInfo, page_tags};
use crate::engine::overrides::Overrides;
use crate::engine::packed::PackedUsage;
use crate::error::{DecidingRule, RobotsError};
use crate::pacing::group::Groups;
use crate::pacing::local::permit::ReadyLater;
use crate::pacing::observed::Observed;
use crate::pacing::rules::Interval;
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
}

/// A request allowed by robots.txt, before its turn at the origin.
pub(crate) struct Allowed {
    entry: Arc<CachedRobots>,
    rule: Option<DecidingRule>,
    usage: PackedUsage,
    /// The interval the origin is paced by, and the delay asked when it was clamped.
    interval: (Duration, Option<Duration>),
}

/// What [`Gate::admit_now`] decided without waiting.
pub(crate) enum Admit {
    /// Allowed, and the origin's turn taken.
    Now(Admission),
    /// robots.txt must be fetched first (not cached, or due for a refresh; the miss is
    /// counted).
    Fetch,
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
    pub(crate) cache: RobotsCache,
    pub(crate) not_ready: WhenNotReady,
    /// Write [`RobotsInfo`] into response headers too.
    pub(crate) mirror_info: bool,
    pub(crate) politeness: Pacing,
    /// How an origin's politeness group is named.
    pub(crate) groups: Groups,
    /// Origins whose overlong Crawl-delay was clamped and said so (once per origin; bounded).
    pub(crate) clamp_warned: std::sync::Mutex<std::collections::HashSet<Origin>>,
    /// A redirect-following layer below this one was said (once).
    pub(crate) warned_followed_below: std::sync::atomic::AtomicBool,
    /// The token page directives (`X-Robots-Tag: foobot: noindex`) are scoped by.
    pub(crate) agent: String,
    pub(crate) user_agent: http::HeaderValue,
    pub(crate) from: Option<http::HeaderValue>,
    pub(crate) identity: IdentityHeaders,
}

impl Gate {
    /// Waits, at most `within`, for a fleet's background work (lease releases) to be done.
    pub(crate) async fn settle(&self, within: Duration) -> bool {
        match &self.politeness {
            #[cfg(feature = "redis")]
            Pacing::Fleet(fleet) => fleet.redis().settle(within).await,
            _ => {
                let _ = within;
                true
            }
        }
    }

    /// Puts the crawler's identity on a request, per the configured policy.
    pub(crate) fn identify(&self, headers: &mut http::HeaderMap) {
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
    /// the origin's politeness slot (or, with [`WhenNotReady::Fail`], takes it only if free now).
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
        let now = Instant::now();
        let Some(entry) = self.cache.cached_at(origin, now) else {
            return Ok(Admit::Fetch);
        };
        let allowed = self.allow(entry, path, url, overrides, now)?;
        let Some(local) = self.politeness.in_process() else {
            // A fleet's turn is asked of Redis.
            return Ok(Admit::Wait(allowed));
        };
        let (interval, clamped_from) = allowed.interval;
        let turn = match self.groups.text_key(allowed.entry.origin()) {
            Some(group) => local.try_acquire(group, interval, now),
            None => match self.groups.key_now(allowed.entry.origin()) {
                Some(group) => local.try_acquire(group.as_str(), interval, now),
                // The address is not known yet: `pace` resolves it.
                None => return Ok(Admit::Wait(allowed)),
            },
        };
        if turn.is_err() && self.not_ready == WhenNotReady::Wait {
            // `pace` waits for it (and says so if the interval was clamped).
            return Ok(Admit::Wait(allowed));
        }
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
        let allowed = match pending {
            Admit::Now(admission) => return Ok(admission),
            Admit::Wait(allowed) => allowed,
            Admit::Fetch => {
                let entry = self.fetch_entry(client, origin).await?;
                self.allow(entry, path, url, overrides, Instant::now())?
            }
        };
        let mut admission = self
            .pace(allowed.entry, allowed.rule, allowed.interval)
            .await?;
        admission.usage = allowed.usage;
        debug!(url = %url(), waited = ?admission.waited, "allowed by robots.txt");
        Ok(admission)
    }

    /// A response that a redirect-following layer below the robots layer fetched (tower-http's
    /// `RequestUri` is on it): said once with the fix, and refused when it came from another
    /// origin than the one admitted, or from a path robots.txt disallows. One extensions lookup
    /// when there is no such layer.
    #[inline]
    pub(crate) fn followed_below(
        &self,
        admission: &Admission,
        extensions: &http::Extensions,
    ) -> Result<(), RobotsError> {
        match extensions.get::<tower_http::follow_redirect::RequestUri>() {
            None => Ok(()),
            Some(landed) => self.judge_followed_below(admission, &landed.0),
        }
    }

    #[cold]
    fn judge_followed_below(
        &self,
        admission: &Admission,
        landed: &http::Uri,
    ) -> Result<(), RobotsError> {
        use std::sync::atomic::Ordering;
        if !self.warned_followed_below.swap(true, Ordering::Relaxed) {
            warn!(%landed, "a redirect-following layer (tower-http FollowRedirectLayer) is inside RobotsLayer: redirect hops skip the robots check and pacing. Put it outside: ServiceBuilder::new().layer(FollowRedirectLayer::new()).layer(robots_layer)");
        }
        let admitted = admission.entry.origin();
        let refused = || RobotsError::RedirectRefused {
            from: admitted.to_string(),
            to: landed.to_string(),
            reason: robots_fetch::RedirectRefusal::FollowedBelow,
        };
        if Origin::from_uri(landed).ok().as_ref() != Some(admitted) {
            return Err(refused());
        }
        let path = landed.path_and_query().map_or("/", |p| p.as_str());
        let now = Instant::now();
        let allowed = std::iter::once(path.to_string())
            .chain(served_paths(path))
            .all(|path| admission.entry.verdict_at(path.as_bytes(), now).allowed);
        if allowed { Ok(()) } else { Err(refused()) }
    }

    /// Refuses a request the HTTP client would connect elsewhere than the resolver's rule says
    /// (its host overridden on another port only). One branch without overrides.
    #[inline]
    pub(crate) fn connects_as_judged(&self, origin: &Origin) -> Result<(), RobotsError> {
        let host = origin.host();
        let host = host
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(host);
        Ok(self
            .groups
            .resolver
            .connects_as_judged(host, origin.port())?)
    }

    /// The verdict for `path` as of `now`, with robots.txt's usage preferences for it and the
    /// interval the origin is paced by (an overlong Crawl-delay refused here): the one place a
    /// request's decision is counted, under exactly one outcome.
    fn allow(
        &self,
        entry: Arc<CachedRobots>,
        path: &str,
        url: &impl Fn() -> String,
        overrides: &Overrides,
        now: Instant,
    ) -> Result<Allowed, RobotsError> {
        let rule = self.judge(&entry, path, url, overrides, now)?;
        let interval = self.interval_for(&entry).inspect_err(|_| {
            crate::telemetry::decided("crawl_delay_too_long");
        })?;
        crate::telemetry::decided(if overrides.skip.is_some() {
            "skipped"
        } else {
            "allowed"
        });
        // The verdict is known (allowed) unless the check was skipped, in which case the
        // preferences come with a verdict of their own (none for a disallowed path). A file
        // without usage lines answers with a branch.
        let usage = match overrides.skip {
            Some(_) => entry.usage_at(path.as_bytes(), now).preferences,
            None => entry.preferences_at(path.as_bytes(), now),
        };
        Ok(Allowed {
            entry,
            rule,
            usage: PackedUsage::pack(usage),
            interval,
        })
    }

    /// Schedule mode's refusal of an origin that is not ready.
    fn not_ready_error(&self, entry: &CachedRobots, not_yet: ReadyLater) -> RobotsError {
        debug!(origin = %entry.origin(), reason = not_yet.reason.as_str(), ready_in = ?not_yet.ready_in, "origin not ready: request refused (schedule mode)");
        crate::telemetry::not_ready(not_yet.reason);
        RobotsError::NotReady {
            origin: entry.origin().clone(),
            ready_in: not_yet.ready_in,
            reason: not_yet.reason,
        }
    }

    /// The interval robots.txt asks for the origin, as applied (and the asked one when
    /// clamped); refused when it asks for more than the maximum and that is refused.
    #[inline]
    pub(crate) fn interval_for(
        &self,
        entry: &CachedRobots,
    ) -> Result<(Duration, Option<Duration>), RobotsError> {
        match self.interval_asked(entry) {
            Interval::Applied(interval, clamped_from) => Ok((interval, clamped_from)),
            Interval::TooLong(asked) => Err(self.too_long(entry, asked)),
        }
    }

    /// What robots.txt asks for the origin, under the configured maximum.
    pub(crate) fn interval_asked(&self, entry: &CachedRobots) -> Interval {
        let asked = [
            entry.crawl_delay().map(|c| c.delay),
            entry.request_rate().map(|r| r.interval()),
        ]
        .into_iter()
        .flatten()
        .max();
        self.politeness.config().interval(asked)
    }

    /// The refusal of an origin whose Crawl-delay is above the maximum (built off the usual
    /// path: the error is large).
    #[cold]
    fn too_long(&self, entry: &CachedRobots, asked: Duration) -> RobotsError {
        let max = self.politeness.config().max_delay;
        info!(origin = %entry.origin(), ?asked, ?max, "Crawl-delay above the maximum: the origin is refused");
        RobotsError::CrawlDelayTooLong {
            origin: entry.origin().clone(),
            asked,
            max,
        }
    }

    /// Says, once per origin, that robots.txt asked for more than the maximum interval and the
    /// interval was clamped (as the caller chose).
    #[inline]
    fn warn_if_clamped(&self, entry: &CachedRobots, applied: Duration, asked: Option<Duration>) {
        if let Some(asked) = asked {
            self.warn_clamped(entry, applied, asked);
        }
    }

    #[cold]
    fn warn_clamped(&self, entry: &CachedRobots, applied: Duration, asked: Duration) {
        let mut warned = self.clamp_warned.lock().unwrap_or_else(|e| e.into_inner());
        if warned.contains(entry.origin()) {
            return;
        }
        // Bounded: a crawl of very many overlong origins warns again after a while.
        if warned.len() >= 4096 {
            warned.clear();
        }
        warned.insert(entry.origin().clone());
        warn!(origin = %entry.origin(), ?asked, ?applied, "Crawl-delay above the maximum: clamped, so this origin is crawled faster than it asked");
    }

    /// Waits for (or, in schedule mode, tries) the origin's turn, at the interval
    /// [`Gate::interval_for`] gave.
    pub(crate) async fn pace(
        &self,
        entry: Arc<CachedRobots>,
        rule: Option<DecidingRule>,
        (interval, clamped_from): (Duration, Option<Duration>),
    ) -> Result<Admission, RobotsError> {
        self.warn_if_clamped(&entry, interval, clamped_from);
        let group = self.groups.key(entry.origin()).await;
        let group = group.as_str();
        let (permit, waited) = match self.not_ready {
            WhenNotReady::Wait => self.politeness.acquire(group, interval).await?,
            WhenNotReady::Fail => match self.politeness.try_acquire(group, interval).await? {
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
        let entry = self.entry(client, origin).await?;
        let rule = self.judge(&entry, path, url, overrides, Instant::now())?;
        crate::telemetry::decided(if overrides.skip.is_some() {
            "skipped"
        } else {
            "allowed"
        });
        Ok((entry, rule))
    }

    /// The verdict for `path` from an origin's entry as of `now`: the deciding rule when
    /// allowed. A refusal is counted here; a request allowed is counted by the caller, once
    /// nothing else refuses it.
    pub(crate) fn judge(
        &self,
        entry: &CachedRobots,
        path: &str,
        url: &impl Fn() -> String,
        overrides: &Overrides,
        now: Instant,
    ) -> Result<Option<DecidingRule>, RobotsError> {
        if let Some(skip) = &overrides.skip {
            // The explicit opt-out: no verdict, but the entry still paces the origin.
            warn!(url = %url(), reason = skip.reason(), "robots.txt check skipped for this request (SkipRobotsCheck)");
            return Ok(None);
        }
        if entry.is_blocked_by_outage(now) {
            let cause = match entry.source() {
                Source::Unreachable { cause, .. } => cause.to_string(),
                _ => "unreachable".to_string(),
            };
            let retry_after = entry.refresh_at().saturating_duration_since(now);
            info!(origin = %entry.origin(), %cause, ?retry_after, "robots.txt unreachable: request refused");
            crate::telemetry::decided("unreachable");
            return Err(RobotsError::RobotsUnreachable {
                origin: entry.origin().clone(),
                retry_after,
                cause,
            });
        }
        let verdict = entry.verdict_at(path.as_bytes(), now);
        if !verdict.allowed {
            let rule = verdict.rule.as_ref().map(DecidingRule::copied);
            info!(url = %url(), rule = ?rule, "disallowed by robots.txt");
            crate::telemetry::decided("disallowed");
            return Err(RobotsError::Disallowed {
                url: url(),
                rule,
                resolved_path: None,
            });
        }
        // Shared with the entry, which the response's `RobotsInfo` holds anyway.
        let rule = verdict.rule.as_ref().map(|r| DecidingRule::of(r, entry));
        // Servers resolve dot segments and merge slashes: what they would serve must be allowed
        // too. Nothing to resolve (the usual case) costs one scan and no allocation.
        for resolved in served_paths(path) {
            let verdict = entry.verdict_at(resolved.as_bytes(), now);
            if !verdict.allowed {
                let rule = verdict.rule.as_ref().map(DecidingRule::copied);
                info!(url = %url(), resolved = %resolved, rule = ?rule, "disallowed by robots.txt once resolved");
                crate::telemetry::decided("disallowed");
                return Err(RobotsError::Disallowed {
                    url: url(),
                    rule,
                    resolved_path: Some(resolved),
                });
            }
        }
        if let Some(also) = &overrides.also {
            for token in also.tokens() {
                let paths = std::iter::once(path.to_string()).chain(served_paths(path));
                for checked in paths {
                    let Some(verdict) = entry.verdict_as(token, checked.as_bytes(), now) else {
                        return Err(RobotsError::PolicyTokenNotConfigured {
                            token: token.clone(),
                        });
                    };
                    if !verdict.allowed {
                        info!(url = %url(), token, "disallowed by robots.txt for a policy token");
                        crate::telemetry::decided("disallowed");
                        return Err(RobotsError::DisallowedFor {
                            url: url(),
                            token: token.clone(),
                            rule: verdict.rule.as_ref().map(DecidingRule::copied),
                        });
                    }
                }
            }
        }
        Ok(rule)
    }

    /// Writes what the gate knew into a response's headers when mirroring is on (callers put
    /// `info` in the response's extensions after).
    pub(crate) fn mirror(&self, info: &RobotsInfo, headers: &mut http::HeaderMap) {
        if self.mirror_info {
            crate::engine::mirror::mirror_info(info, headers);
        }
    }

    /// Learns from a response (distress and exhausted rate limits pause the group), ends the
    /// request's place, and builds the info for its extensions.
    pub(crate) async fn observe(
        &self,
        admission: Admission,
        status: u16,
        headers: &http::HeaderMap,
    ) -> RobotsInfo {
        let (permit, mut info, clamped_from) = self.observed(admission, headers);
        let pause = self
            .politeness
            .finish(
                permit,
                Observed::response(status, headers, self.politeness.config()),
            )
            .await;
        info.set_rare(clamped_from, pause);
        info
    }

    /// Ends the place of a request that failed before its response head: a connect error, reset
    /// or timeout pauses the group (when configured); any other failure teaches nothing.
    pub(crate) fn observe_failure(
        &self,
        admission: Admission,
        error: &ErrorRef,
    ) -> impl Future<Output = ()> + Send + '_ {
        // Judged before the future: the error (often not `Sync`) is not held across a wait.
        let observed = failure(&admission, error);
        self.finish_failed(admission, observed)
    }

    async fn finish_failed(&self, admission: Admission, observed: Observed) {
        self.politeness.finish(admission.permit, observed).await;
    }

    /// [`Gate::observe_failure`] without waiting (a fleet lease is given back unreleased).
    pub(crate) fn observe_failure_now(&self, admission: Admission, error: &ErrorRef) {
        let observed = failure(&admission, error);
        drop(self.politeness.finish_now(admission.permit, observed));
    }

    /// Learns from a response head (distress and exhausted rate limits pause the group) and
    /// builds the info for its extensions; the request's place is handed back, to be held by
    /// the response's body ([`crate::PacedBody`]) until it has been read to the end or dropped.
    pub(crate) async fn observe_head(
        &self,
        mut admission: Admission,
        status: u16,
        headers: &http::HeaderMap,
    ) -> (RobotsInfo, Permit) {
        // (Off the layer's fast path, which has `observe_head_now`: the copies are cheap.)
        let info = self
            .observe_head_in_place(&mut admission, status, headers)
            .await;
        (info, admission.permit)
    }

    /// [`Gate::observe_head`] keeping the admission (the hooks' ticket holds it): the place
    /// stays in it, and the info is a copy.
    pub(crate) async fn observe_head_in_place(
        &self,
        admission: &mut Admission,
        status: u16,
        headers: &http::HeaderMap,
    ) -> RobotsInfo {
        let mut info = self.info(
            admission.entry.clone(),
            admission.rule.clone(),
            (admission.waited, admission.interval, admission.usage),
            headers,
        );
        let pause = self
            .politeness
            .observe_head(
                &mut admission.permit,
                Observed::response(status, headers, self.politeness.config()),
            )
            .await;
        info.set_rare(admission.clamped_from, pause);
        info
    }

    /// [`Gate::observe_head`] without waiting, for a request admitted by [`Gate::admit_now`]
    /// (whose place is in this process).
    #[inline(always)]
    pub(crate) fn observe_head_now(
        &self,
        admission: Admission,
        status: u16,
        headers: &http::HeaderMap,
    ) -> (RobotsInfo, Permit) {
        let (mut permit, mut info, clamped_from) = self.observed(admission, headers);
        let pause = self.politeness.observe_head_now(
            &mut permit,
            Observed::response(status, headers, self.politeness.config()),
        );
        info.set_rare(clamped_from, pause);
        (info, permit)
    }

    /// The request's place, and the info for its response's extensions.
    #[inline(always)]
    fn observed(
        &self,
        admission: Admission,
        headers: &http::HeaderMap,
    ) -> (Permit, RobotsInfo, Option<Duration>) {
        let numbers = (admission.waited, admission.interval, admission.usage);
        let info = self.info(admission.entry, admission.rule, numbers, headers);
        (admission.permit, info, admission.clamped_from)
    }

    /// What a response's extensions get: the admission's entry, rule and numbers (waited,
    /// interval, usage), and what the response's headers say of the page.
    #[inline(always)]
    fn info(
        &self,
        robots: Arc<CachedRobots>,
        rule: Option<DecidingRule>,
        (waited, interval, usage): (Duration, Duration, PackedUsage),
        headers: &http::HeaderMap,
    ) -> RobotsInfo {
        RobotsInfo {
            robots,
            rule,
            waited,
            interval,
            usage,
            content_usage: AiPreferences::from_header_lines(
                headers.get_all(&CONTENT_USAGE).iter().map(|v| v.as_bytes()),
            ),
            tags: page_tags(headers, &self.agent),
            rare: None,
        }
    }
}

/// The robots.txt client as the gate uses it: every request a robots.txt fetch sends (the first,
/// a refresh, each redirect hop) takes a place in its group like a page, spaced by the
/// interval, and its response (status, `Retry-After`, rate-limit headers) teaches the group
/// like a page's. The place is held by the body until the fetcher has read it.
struct PacedFetch<'a, C> {
    gate: &'a Gate,
    client: &'a C,
}

/// A turn taken by [`PacedFetch::ready`], carried to its `send` in the request's extensions
/// (which must be `Clone`: the cell is shared, and taken once).
#[derive(Clone)]
struct HeldTurn(Arc<std::sync::Mutex<Option<Permit>>>);

impl<C: FetchClient> PacedFetch<'_, C> {
    /// The request's turn in its group: waited for, and its start recorded.
    async fn turn(&self, request: &http::Request<()>) -> Result<Permit, robots_fetch::BoxError> {
        let gate = self.gate;
        let origin = Origin::from_uri(request.uri())?;
        // The interval its robots.txt asked for when a copy is kept (a refresh), else the
        // minimum; one the policy refuses spaces it by the maximum.
        let interval = match gate.cache.cached_any(&origin) {
            Some(entry) => match gate.interval_asked(&entry) {
                Interval::Applied(interval, _) => interval,
                Interval::TooLong(_) => gate.politeness.config().max_delay,
            },
            None => gate.politeness.config().min_delay,
        };
        let group = gate.groups.key(&origin).await;
        let (permit, waited) = gate
            .politeness
            .acquire_for_robots(group.as_str(), interval)
            .await?;
        if !waited.is_zero() {
            debug!(%origin, ?waited, "robots.txt request waited for its group's turn");
        }
        Ok(permit)
    }
}

impl<C: FetchClient> FetchClient for PacedFetch<'_, C> {
    type Body = crate::pacing::body::PacedBody<C::Body>;

    /// Waits for the request's turn (outside the fetch's timeout) and leaves it with the
    /// request.
    async fn ready(&self, request: &mut http::Request<()>) -> Result<(), robots_fetch::BoxError> {
        let permit = self.turn(request).await?;
        request
            .extensions_mut()
            .insert(HeldTurn(Arc::new(std::sync::Mutex::new(Some(permit)))));
        Ok(())
    }

    async fn send(
        &self,
        mut request: http::Request<()>,
    ) -> Result<http::Response<Self::Body>, robots_fetch::BoxError> {
        let gate = self.gate;
        let held = request
            .extensions_mut()
            .remove::<HeldTurn>()
            .and_then(|held| held.0.lock().unwrap_or_else(|e| e.into_inner()).take());
        let mut permit = match held {
            Some(permit) => permit,
            None => self.turn(&request).await?,
        };
        match self.client.send(request).await {
            Ok(response) => {
                let observed = Observed::response(
                    response.status().as_u16(),
                    response.headers(),
                    gate.politeness.config(),
                );
                gate.politeness.observe_head(&mut permit, observed).await;
                Ok(response.map(|body| crate::pacing::body::PacedBody::new(body, permit)))
            }
            Err(error) => {
                let observed = Observed::failure(crate::pacing::distress::failure_outcome(&*error));
                gate.politeness.finish(permit, observed).await;
                Err(error)
            }
        }
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

/// The engine on its own, without a front end: the verdict (`judge`), the admission and its
/// turn (`admit_now`, `admit`), and what a response teaches (`observe`).
#[cfg(test)]
mod tests {
    use std::convert::Infallible;
    use std::time::Duration;

    use bytes::Bytes;
    use http_body_util::Full;
    use robots_fetch::{Origin, ServiceClient};
    use tokio::time::Instant;

    use super::{Admit, Gate, WhenNotReady};
    use crate::engine::overrides::{AlsoCheckAs, Overrides, SkipRobotsCheck};
    use crate::error::{NotReadyReason, RobotsError};
    use crate::front::config::{ForLayer, RobotsConfig};

    const BODY: &[u8] = b"User-agent: *\nDisallow: /private\nAllow: /private/ok\nCrawl-delay: 2\n\nUser-agent: PolicyBot\nDisallow: /\n";

    fn origin() -> Origin {
        Origin::parse("https://example.com").unwrap()
    }

    /// A gate with `BODY` cached for `origin()`.
    fn gate(
        configure: impl FnOnce(RobotsConfig<ForLayer>) -> RobotsConfig<ForLayer>,
    ) -> std::sync::Arc<Gate> {
        let gate = configure(RobotsConfig::new("FooBot/1.0")).gate();
        gate.cache.insert(&origin(), BODY);
        gate
    }

    fn url_of(path: &'static str) -> impl Fn() -> String {
        move || format!("https://example.com{path}")
    }

    fn judge(
        gate: &Gate,
        path: &'static str,
        overrides: &Overrides,
    ) -> Result<Option<u32>, RobotsError> {
        let entry = gate.cache.cached(&origin()).expect("cached");
        gate.judge(&entry, path, &url_of(path), overrides, Instant::now())
            .map(|rule| rule.map(|r| r.line))
    }

    #[tokio::test]
    async fn judge_gives_the_deciding_rule_or_why_not() {
        let gate = gate(|c| c);
        let none = Overrides::default();
        assert_eq!(judge(&gate, "/public", &none), Ok(None));
        assert_eq!(judge(&gate, "/private/ok", &none), Ok(Some(3)));
        match judge(&gate, "/private/x", &none) {
            Err(RobotsError::Disallowed {
                url,
                rule,
                resolved_path,
            }) => {
                assert_eq!(url, "https://example.com/private/x");
                assert_eq!(rule.map(|r| r.line), Some(2));
                assert_eq!(resolved_path, None);
            }
            other => panic!("{other:?}"),
        }
        // Allowed as written, disallowed where a server resolves it.
        match judge(&gate, "/public/../private/x", &none) {
            Err(RobotsError::Disallowed { resolved_path, .. }) => {
                assert_eq!(resolved_path.as_deref(), Some("/private/x"));
            }
            other => panic!("{other:?}"),
        }
        // The explicit opt-out decides nothing.
        let skip = Overrides {
            skip: Some(SkipRobotsCheck::because("test")),
            ..Overrides::default()
        };
        assert_eq!(judge(&gate, "/private/x", &skip), Ok(None));
        // A policy token must be configured to be checked as.
        let unknown = Overrides {
            also: Some(AlsoCheckAs::new(["PolicyBot"])),
            ..Overrides::default()
        };
        assert!(matches!(
            judge(&gate, "/public", &unknown),
            Err(RobotsError::PolicyTokenNotConfigured { token }) if token == "PolicyBot"
        ));
        let gate = self::gate(|c| c.policy_tokens(["PolicyBot"]));
        assert!(matches!(
            judge(&gate, "/public", &unknown),
            Err(RobotsError::DisallowedFor { token, .. }) if token == "PolicyBot"
        ));
    }

    #[tokio::test(start_paused = true)]
    async fn judge_refuses_an_origin_whose_robots_txt_is_unreachable() {
        let gate = RobotsConfig::<ForLayer>::new("FooBot/1.0").gate();
        let down = ServiceClient::new(tower::service_fn(|_: http::Request<Full<Bytes>>| async {
            let mut response = http::Response::new(Full::new(Bytes::new()));
            *response.status_mut() = http::StatusCode::SERVICE_UNAVAILABLE;
            Ok::<_, Infallible>(response)
        }));
        let entry = gate.entry(&down, &origin()).await.unwrap();
        match gate.judge(
            &entry,
            "/public",
            &url_of("/public"),
            &Overrides::default(),
            Instant::now(),
        ) {
            Err(RobotsError::RobotsUnreachable {
                origin: refused,
                retry_after,
                ..
            }) => {
                assert_eq!(refused, origin());
                assert!(retry_after > Duration::ZERO);
            }
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test(start_paused = true)]
    async fn admit_now_decides_from_the_cache_and_takes_the_turn() {
        let none = Overrides::default();
        let gate = gate(|c| c.min_delay(Duration::from_millis(100)));
        let unknown = Origin::parse("https://elsewhere.example").unwrap();
        assert!(matches!(
            gate.admit_now(&unknown, "/", &url_of("/"), &none),
            Ok(Admit::Fetch)
        ));
        assert!(matches!(
            gate.admit_now(&origin(), "/private/x", &url_of("/private/x"), &none),
            Err(RobotsError::Disallowed { .. })
        ));
        let first = match gate.admit_now(&origin(), "/private/ok", &url_of("/private/ok"), &none) {
            Ok(Admit::Now(admission)) => admission,
            _ => panic!("the first request is admitted at once"),
        };
        // The interval is the Crawl-delay (2 s), above the minimum delay.
        assert_eq!(first.interval, Duration::from_secs(2));
        assert_eq!(first.rule.as_ref().map(|r| r.line), Some(3));
        // While it is in flight, the next one waits (the default mode).
        assert!(matches!(
            gate.admit_now(&origin(), "/a", &url_of("/a"), &none),
            Ok(Admit::Wait(_))
        ));
        drop(first);
        // In schedule mode the same request is refused with when to come back.
        let gate = self::gate(|c| c.when_not_ready(WhenNotReady::Fail));
        let _first = gate.admit_now(&origin(), "/a", &url_of("/a"), &none);
        match gate.admit_now(&origin(), "/b", &url_of("/b"), &none) {
            Err(RobotsError::NotReady {
                origin: refused,
                reason,
                ..
            }) => {
                assert_eq!(refused, origin());
                assert_eq!(reason, NotReadyReason::InFlight);
            }
            _ => panic!("a busy origin refuses in schedule mode"),
        }
    }

    #[tokio::test(start_paused = true)]
    async fn observe_ends_the_turn_and_pauses_on_429() {
        let none = Overrides::default();
        let gate = gate(|c| c.min_delay(Duration::ZERO));
        let admission = match gate.admit_now(&origin(), "/a", &url_of("/a"), &none) {
            Ok(Admit::Now(admission)) => admission,
            _ => panic!("admitted"),
        };
        let mut headers = http::HeaderMap::new();
        headers.insert("retry-after", http::HeaderValue::from_static("30"));
        headers.insert("x-robots-tag", http::HeaderValue::from_static("noindex"));
        let info = gate.observe(admission, 429, &headers).await;
        assert_eq!(info.origin(), &origin());
        assert!(info.directives().noindex);
        assert_eq!(
            info.pause(),
            Some(crate::pacing::observed::GroupPause {
                duration: Duration::from_secs(30),
                reason: crate::pacing::observed::PauseReason::RetryAfter
            })
        );
        // The group is the host (the default key).
        let paused = gate
            .politeness
            .paused_until(origin().host())
            .expect("paused");
        let left = paused.saturating_duration_since(Instant::now());
        assert!(
            left > Duration::from_secs(29) && left <= Duration::from_secs(30),
            "{left:?}"
        );
        // Paused: the next request must wait, even with no request in flight.
        assert!(matches!(
            gate.admit_now(&origin(), "/b", &url_of("/b"), &none),
            Ok(Admit::Wait(_))
        ));
        tokio::time::advance(Duration::from_secs(31)).await;
        let admission = match gate.admit_now(&origin(), "/b", &url_of("/b"), &none) {
            Ok(Admit::Now(admission)) => admission,
            _ => panic!("admitted after the pause"),
        };
        // A success ends the pause.
        let info = gate.observe(admission, 200, &http::HeaderMap::new()).await;
        assert_eq!(info.pause(), None);
        assert_eq!(gate.politeness.paused_until(origin().host()), None);
    }
}
