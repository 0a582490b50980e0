//! What the layer and the middleware share: look up (or fetch) the origin's rules, decide, turn
//! "no" into a typed error, wait for the origin's politeness slot, and learn from responses.

use std::sync::Arc;
use std::time::Duration;

use robots_core::PageDirectives;
use robots_fetch::{CachedRobots, FetchClient, Origin, RobotsCache, Source};
use tokio::time::Instant;
use tracing::{debug, info, warn};

use crate::error::{DecidingRule, RobotsError};
use crate::politeness::{Permit, Politeness};

/// What the layer knew when it let a request through, attached to the response's extensions.
#[derive(Debug, Clone)]
pub struct RobotsInfo {
    /// The origin the rules belong to.
    pub origin: Origin,
    /// The rule that allowed the URL, or `None` when no rule matched.
    pub rule: Option<DecidingRule>,
    /// Where the rules came from and how fresh they are.
    pub source: Source,
    /// Time spent waiting for the origin's politeness slot.
    pub waited: Duration,
    /// The interval between request starts applied to the origin.
    pub interval: Duration,
    /// The interval robots.txt asked for (Crawl-delay, Request-rate) when it was more than the
    /// configured maximum and so clamped.
    pub interval_clamped_from: Option<Duration>,
    /// `X-Robots-Tag` headers of the response, parsed.
    pub page: PageDirectives,
    /// The page directives that apply to this crawler (for all crawlers plus those scoped to it).
    pub directives: robots_core::Directives,
}

/// A request let through: its place in the origin's queue, and what to attach to the response.
pub(crate) struct Admission {
    /// Held until the response head arrives: the request counts as in flight until then.
    /// (Holding it until the body is read would deadlock a caller that keeps an unread response
    /// while it sends the next request to the same origin.)
    pub(crate) _permit: Permit,
    pub(crate) entry: Arc<CachedRobots>,
    pub(crate) rule: Option<DecidingRule>,
    pub(crate) waited: Duration,
    pub(crate) interval: Duration,
    pub(crate) clamped_from: Option<Duration>,
}

pub(crate) struct Gate {
    pub(crate) cache: RobotsCache,
    pub(crate) politeness: Politeness,
    pub(crate) agent: String,
}

impl Gate {
    /// Decides a request for `path` at the origin whose key is `origin_key`
    /// (`scheme://host[:port]`), fetching robots.txt with `client` when needed.
    pub(crate) async fn admit<C: FetchClient>(
        &self,
        client: &C,
        origin_key: &str,
        path: &str,
        url: impl Fn() -> String,
    ) -> Result<Admission, RobotsError> {
        let entry = self
            .cache
            .get_by_key(client, origin_key)
            .await
            .map_err(|_| RobotsError::RelativeUri { uri: url() })?;
        let now = Instant::now();
        if entry.is_blocked_by_outage(now) {
            let cause = match entry.source() {
                Source::Unreachable { cause, .. } => cause.to_string(),
                _ => "unreachable".to_string(),
            };
            let retry_after = entry.refresh_at().saturating_duration_since(now);
            info!(origin = %entry.origin(), %cause, ?retry_after, "robots.txt unreachable: request refused");
            return Err(RobotsError::Unreachable {
                origin: entry.origin().clone(),
                retry_after,
                cause,
            });
        }
        let (allowed, rule) = {
            let verdict = entry.verdict_at(path.as_bytes(), now);
            (verdict.allowed, verdict.rule.as_ref().map(DecidingRule::of))
        };
        if !allowed {
            info!(url = %url(), rule = ?rule, "disallowed by robots.txt");
            return Err(RobotsError::Disallowed { url: url(), rule });
        }
        let asked = [
            entry.crawl_delay().map(|c| c.delay),
            entry.request_rate().map(|r| r.interval()),
        ]
        .into_iter()
        .flatten()
        .max();
        let (interval, clamped_from) = self.politeness.config.interval(asked);
        if let Some(asked) = clamped_from {
            warn!(origin = %entry.origin(), ?asked, applied = ?interval, "Crawl-delay above the maximum: clamped");
        }
        let (permit, waited) = self
            .politeness
            .acquire(entry.origin().as_str(), interval)
            .await;
        debug!(url = %url(), ?waited, "allowed by robots.txt");
        Ok(Admission {
            _permit: permit,
            entry,
            rule,
            waited,
            interval,
            clamped_from,
        })
    }

    /// Learns from a response (429/503 pause the origin) and builds the info for its extensions.
    pub(crate) fn observe(
        &self,
        admission: Admission,
        status: u16,
        headers: &http::HeaderMap,
    ) -> RobotsInfo {
        let origin = admission.entry.origin().clone();
        self.politeness
            .observe(origin.as_str(), status, robots_fetch::retry_after(headers));
        let page = PageDirectives::from_headers(
            headers
                .get_all("x-robots-tag")
                .iter()
                .filter_map(|v| v.to_str().ok()),
        );
        let directives = page.for_agent(&self.agent);
        RobotsInfo {
            origin,
            rule: admission.rule,
            source: admission.entry.source().clone(),
            waited: admission.waited,
            interval: admission.interval,
            interval_clamped_from: admission.clamped_from,
            page,
            directives,
        }
    }
}
