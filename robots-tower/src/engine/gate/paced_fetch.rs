//! robots.txt requests in the group's budget.

use std::sync::Arc;

use robots_fetch::{FetchClient, Origin};
use tracing::debug;

use super::Gate;
use crate::pacing::Permit;
use crate::pacing::observed::Observed;
use crate::pacing::rules::Interval;

/// The robots.txt client as the gate uses it: every request a robots.txt fetch sends (the first,
/// a refresh, each redirect hop) takes a place in its group like a page, spaced by the
/// interval, and its response (status, `Retry-After`, rate-limit headers) teaches the group
/// like a page's. The place is held by the body until the fetcher has read it.
pub(super) struct PacedFetch<'a, C> {
    pub(super) gate: &'a Gate,
    pub(super) client: &'a C,
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
                Interval::TooLong(_) => gate.pacing.config().max_delay,
            },
            None => gate.pacing.config().min_delay,
        };
        let group = gate.groups.key(&origin).await;
        let (permit, waited) = gate
            .pacing
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
                    gate.pacing.config(),
                );
                gate.pacing.observe_head(&mut permit, observed).await;
                Ok(response.map(|body| crate::pacing::body::PacedBody::new(body, permit)))
            }
            Err(error) => {
                let observed = Observed::failure(crate::pacing::distress::failure_outcome(&*error));
                gate.pacing.finish(permit, observed).await;
                Err(error)
            }
        }
    }
}
