//! The verdict: a request's URL against its origin's rules (the path as given, every path a
//! server may resolve it to, the policy tokens), and a redirect followed below the layer.

use std::sync::Arc;

use robots_core::url_path::served_paths;
use robots_fetch::{CachedRobots, Origin, Source};
use tokio::time::Instant;
use tracing::{debug, info, warn};

use super::{Admission, Allowed, Gate};
use crate::engine::overrides::Overrides;
use crate::engine::packed::PackedUsage;
use crate::error::{DecidingRule, RobotsError};
use crate::pacing::local::permit::ReadyLater;

impl Gate {
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
    pub(super) fn judge_followed_below(
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
        let entry = &admission.entry;
        let allowed = entry.verdict_at(path.as_bytes(), now).allowed
            && served_paths(path).iter().all(|served| {
                entry
                    .served_verdict_at(None, served.as_bytes(), now)
                    .is_none_or(|verdict| verdict.allowed)
            });
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
    pub(super) fn allow(
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
            group: None,
        })
    }

    /// Schedule mode's refusal of an origin that is not ready.
    pub(super) fn not_ready_error(&self, entry: &CachedRobots, not_yet: ReadyLater) -> RobotsError {
        debug!(origin = %entry.origin(), reason = not_yet.reason.as_str(), ready_in = ?not_yet.ready_in, "origin not ready: request refused (schedule mode)");
        crate::telemetry::not_ready(not_yet.reason);
        RobotsError::NotReady {
            origin: entry.origin().clone(),
            ready_in: not_yet.ready_in,
            reason: not_yet.reason,
        }
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
            // robots.txt was not fetched because its connection would have reached an internal
            // address: the address rule's refusal, said as such (the site's URLs with it).
            if let Source::Unreachable {
                cause: robots_fetch::UnreachableCause::Network(network),
                ..
            } = entry.source()
                && network.kind == robots_fetch::NetworkErrorKind::AddressRefused
            {
                crate::telemetry::decided("address-refused");
                let robots_url = entry.origin().robots_url();
                return Err(RobotsError::AddressRefused {
                    url: url(),
                    from: None,
                    address: super::address::internal_address_of(&robots_url, self.resolver()),
                    rule: format!("robots.txt's connection: {}", network.message),
                });
            }
            let cause = match entry.source() {
                Source::Unreachable { cause, .. } => cause.to_string(),
                _ => "unreachable".to_string(),
            };
            let unreachable_for = entry.unreachable_for(now).unwrap_or_default();
            let retry_after = entry.refresh_at().saturating_duration_since(now);
            info!(origin = %entry.origin(), %cause, ?retry_after, "robots.txt unreachable: request refused");
            crate::telemetry::decided("unreachable");
            return Err(RobotsError::RobotsUnreachable {
                origin: entry.origin().clone(),
                retry_after,
                unreachable_for,
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
            // (Against the patterns normalised as the path was: spec section 5.)
            let Some(verdict) = entry.served_verdict_at(None, resolved.as_bytes(), now) else {
                continue;
            };
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
                let paths = std::iter::once((path.to_string(), false))
                    .chain(served_paths(path).into_iter().map(|p| (p, true)));
                for (checked, served) in paths {
                    let verdict = if served {
                        entry.served_verdict_at(Some(token), checked.as_bytes(), now)
                    } else {
                        entry.verdict_for_token(token, checked.as_bytes(), now)
                    };
                    let Some(verdict) = verdict else {
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
}
