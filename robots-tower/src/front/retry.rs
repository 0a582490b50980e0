//! Retries that stay inside the politeness budget, for stacks that bring their own retry layer.
//!
//! A retry is only polite when it goes back through the robots check and the group's pacing:
//! then it waits for the pause the failure set (its `Retry-After`, or the back-off) and for its
//! turn. So the retry layer goes *outside* [`crate::RobotsLayer`] (or
//! [`crate::RobotsMiddleware`]). Both policies here check that they are placed so: a transient
//! failure that never passed through a robots front end is not sent again, and that is said once
//! with the fix.
//!
//! - [`Retries`]: a `tower::retry` policy for the layer ([`crate::RobotsLayer::retries`]).
//! - `RefusalAware` (feature `reqwest-retry`): a reqwest-retry strategy for the middleware.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use robots_fetch::BoxError;

use crate::engine::info::RobotsInfo;
use crate::front::status::headers::REFUSAL;
use crate::pacing::rules::Outcome;
use crate::pacing::rules::StatusSet;

/// What a retry policy makes of one result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    /// Done: a success, a permanent failure, or a refusal (never sent again).
    Keep,
    /// A transient failure that went through a robots front end: send it again, paced.
    Again,
    /// A transient failure that did not: the policy is inside the front end (or there is none),
    /// so a retry would skip the robots check and the pacing.
    Unpaced,
}

/// Classifies a response: refusals are never retried, distress statuses are, and a response
/// without [`RobotsInfo`] never passed a robots front end.
fn response_verdict(
    statuses: &StatusSet,
    status: u16,
    headers: &http::HeaderMap,
    seen: bool,
) -> Verdict {
    if headers.contains_key(REFUSAL) || !statuses.contains(status) {
        Verdict::Keep
    } else if !seen {
        Verdict::Unpaced
    } else {
        Verdict::Again
    }
}

/// Classifies a failure: a refusal or any other error of ours is final; a connect error, reset
/// or timeout is transient.
fn error_verdict(error: &(dyn std::error::Error + 'static)) -> Verdict {
    let ours = std::iter::successors(Some(error), |e| e.source())
        .any(|e| e.downcast_ref::<crate::error::RobotsError>().is_some());
    if !ours && crate::pacing::distress::failure_outcome(error) == Outcome::NetworkError {
        Verdict::Again
    } else {
        Verdict::Keep
    }
}

/// Said once per policy (and its clones): a retry layer is placed where its retries would skip
/// the robots check and the pacing.
fn warn_unpaced(said: &AtomicBool, which: &str) {
    if !said.swap(true, Ordering::Relaxed) {
        tracing::warn!(
            "{which} saw a transient failure that did not pass through a robots front end: it is inside the robots layer or middleware (or there is none), so its retries would skip robots.txt and the pacing. Nothing is sent again; put the retry layer outside the robots one (https://docs.rs/polite-robots/latest/polite_robots/guide/composition/)"
        );
    }
}

/// A `tower::retry` policy whose retries are paced requests: put it **outside** the
/// [`crate::RobotsLayer`], and each retry goes back through the robots check and the group's
/// pacing, waiting for the pause the failure set (its `Retry-After`, or the back-off).
///
/// It retries, at most `times` times per request, a response whose status is in the layer's
/// back-off set (429, 500, 502, 503, 504 by default) and a connect error, reset or timeout.
/// It never retries a refusal (a [`crate::RobotsError`], or a response carrying
/// `x-robots-refusal`), and it waits nothing itself: the layer holds the retry until its turn.
/// Its errors are [`BoxError`]s, as the layer's are.
///
/// Placed inside the layer, it would see responses that carry no [`RobotsInfo`]: it then sends
/// nothing again and warns once, instead of retrying around the pacing. The request body must be
/// `Clone` (`Full<Bytes>`, `String`, `()`…); a request it cannot clone is not retried.
///
/// Build it with [`crate::RobotsLayer::retries`]:
///
/// ```
/// use bytes::Bytes;
/// use http_body_util::Full;
/// use robots_tower::RobotsLayer;
/// use tower::ServiceBuilder;
///
/// let robots = RobotsLayer::builder("FooBot/1.0 (+https://example.com/bot)").build();
/// let client = tower::service_fn(|_: http::Request<Full<Bytes>>| async {
///     Ok::<_, std::convert::Infallible>(http::Response::new(Full::<Bytes>::default()))
/// });
/// let service = ServiceBuilder::new()
///     .layer(robots.retries(2)) // outside: every retry is checked and paced
///     .layer(robots)
///     .service(client);
/// # let _ = service;
/// ```
#[derive(Debug, Clone)]
pub struct Retries {
    left: u32,
    statuses: StatusSet,
    said: Arc<AtomicBool>,
}

impl Retries {
    pub(crate) fn new(times: u32, statuses: StatusSet) -> Retries {
        Retries {
            left: times,
            statuses,
            said: Arc::new(AtomicBool::new(false)),
        }
    }

    /// How many more times this request may be sent.
    pub fn left(&self) -> u32 {
        self.left
    }
}

impl<B: Clone, ResB> tower::retry::Policy<http::Request<B>, http::Response<ResB>, BoxError>
    for Retries
{
    type Future = std::future::Ready<()>;

    fn retry(
        &mut self,
        _request: &mut http::Request<B>,
        result: &mut Result<http::Response<ResB>, BoxError>,
    ) -> Option<Self::Future> {
        if self.left == 0 {
            return None;
        }
        let verdict = match result {
            Ok(response) => response_verdict(
                &self.statuses,
                response.status().as_u16(),
                response.headers(),
                response.extensions().get::<RobotsInfo>().is_some(),
            ),
            Err(error) => error_verdict(&**error),
        };
        match verdict {
            Verdict::Keep => None,
            Verdict::Unpaced => {
                warn_unpaced(&self.said, "robots_tower::Retries");
                None
            }
            Verdict::Again => {
                self.left -= 1;
                tracing::info!(
                    left = self.left,
                    "sending again after a transient failure (paced)"
                );
                // No wait here: the robots layer holds the retry until the group's pause and
                // its turn have passed.
                Some(std::future::ready(()))
            }
        }
    }

    fn clone_request(&mut self, request: &http::Request<B>) -> Option<http::Request<B>> {
        if self.left == 0 {
            return None;
        }
        let mut copy = http::Request::new(request.body().clone());
        *copy.method_mut() = request.method().clone();
        *copy.uri_mut() = request.uri().clone();
        *copy.version_mut() = request.version();
        *copy.headers_mut() = request.headers().clone();
        *copy.extensions_mut() = request.extensions().clone();
        Some(copy)
    }
}

/// A reqwest-retry strategy that leaves the robots front end's decisions alone: put the
/// `RetryTransientMiddleware` **outside** the [`crate::RobotsMiddleware`] (added to the client
/// before it) with this strategy, and every retry goes back through the robots check and the
/// group's pacing.
///
/// - A refusal is never retried: a [`crate::RobotsError`] (also under reqwest-retry's own
///   wrapping), or a response carrying `x-robots-refusal` (with
///   [`crate::Refusals::Responses`]), whose `Retry-After` is the front end's business.
/// - A transient response that carries no [`RobotsInfo`] did not pass through the robots
///   middleware: the retry middleware is inside it. It is not retried, and that is warned once.
/// - Everything else is decided by the wrapped strategy (reqwest-retry's default: 5xx, 408, 429
///   and connect errors or timeouts).
///
/// ```
/// use reqwest_retry::{RetryTransientMiddleware, policies::ExponentialBackoff};
/// use robots_tower::{RefusalAware, RobotsMiddleware};
///
/// let retry = RetryTransientMiddleware::new_with_policy_and_strategy(
///     ExponentialBackoff::builder().build_with_max_retries(2),
///     RefusalAware::default(),
/// );
/// // Outside the robots middleware: its retries go through it.
/// let client = RobotsMiddleware::builder("FooBot/1.0 (+https://example.com/bot)")
///     .build_client_with(|outside| outside.with(retry))?;
/// # let _ = client;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[cfg(feature = "reqwest-retry")]
pub struct RefusalAware<S = reqwest_retry::DefaultRetryableStrategy> {
    inner: S,
    said: AtomicBool,
}

#[cfg(feature = "reqwest-retry")]
impl Default for RefusalAware {
    /// Around reqwest-retry's default strategy.
    fn default() -> Self {
        RefusalAware::new(reqwest_retry::DefaultRetryableStrategy)
    }
}

#[cfg(feature = "reqwest-retry")]
impl<S> std::fmt::Debug for RefusalAware<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RefusalAware").finish_non_exhaustive()
    }
}

#[cfg(feature = "reqwest-retry")]
impl<S> RefusalAware<S> {
    /// Wraps a strategy of your own: refusals and unpaced retries are decided first.
    pub fn new(inner: S) -> RefusalAware<S> {
        RefusalAware {
            inner,
            said: AtomicBool::new(false),
        }
    }
}

#[cfg(feature = "reqwest-retry")]
impl<S: reqwest_retry::RetryableStrategy> reqwest_retry::RetryableStrategy for RefusalAware<S> {
    fn handle(
        &self,
        result: &Result<reqwest::Response, reqwest_middleware::Error>,
    ) -> Option<reqwest_retry::Retryable> {
        use reqwest_retry::Retryable;
        match result {
            Err(error) if crate::error::RobotsError::from_middleware_error(error).is_some() => {
                Some(Retryable::Fatal)
            }
            Ok(response) if response.headers().contains_key(REFUSAL) => Some(Retryable::Fatal),
            Ok(response) => match self.inner.handle(result) {
                Some(Retryable::Transient)
                    if response.extensions().get::<RobotsInfo>().is_none() =>
                {
                    warn_unpaced(&self.said, "robots_tower::RefusalAware");
                    Some(Retryable::Fatal)
                }
                other => other,
            },
            Err(_) => self.inner.handle(result),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_and_unseen_responses_are_never_retried() {
        let statuses = StatusSet::of([429, 503]);
        let plain = http::HeaderMap::new();
        let mut refusal = http::HeaderMap::new();
        refusal.insert(REFUSAL, http::HeaderValue::from_static("unreachable"));
        assert_eq!(
            response_verdict(&statuses, 503, &plain, true),
            Verdict::Again
        );
        assert_eq!(
            response_verdict(&statuses, 200, &plain, true),
            Verdict::Keep
        );
        assert_eq!(
            response_verdict(&statuses, 404, &plain, true),
            Verdict::Keep
        );
        assert_eq!(
            response_verdict(&statuses, 503, &refusal, true),
            Verdict::Keep
        );
        assert_eq!(
            response_verdict(&statuses, 503, &plain, false),
            Verdict::Unpaced
        );
        let refused = crate::error::RobotsError::Disallowed {
            url: "http://a.example/x".into(),
            rule: None,
            resolved_path: None,
        };
        assert_eq!(error_verdict(&refused), Verdict::Keep);
        let reset = std::io::Error::from(std::io::ErrorKind::ConnectionReset);
        assert_eq!(error_verdict(&reset), Verdict::Again);
    }
}
