//! For frameworks that see only status codes and headers: refusals answered as synthetic
//! responses (403 for a disallowed URL, 503 or 429 with `Retry-After` for "not now"), and
//! [`crate::RobotsInfo`] mirrored into response headers. Header names are in [`headers`].

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{HeaderValue, StatusCode};
use http_body_util::Either;
use http_body_util::Full;
use robots_fetch::BoxError;

use crate::error::{DecidingRule, RobotsError};

use crate::engine::mirror::{describe, insert};
pub use crate::engine::mirror::{headers, mirror_info};

/// How the layer or middleware answers a request it refuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Refusals {
    /// A [`RobotsError`] (the default).
    #[default]
    Errors,
    /// A synthetic response, for frameworks that keep only a status (a refusal that is a
    /// configuration mistake — a relative URI, an unknown policy token — stays an error):
    ///
    /// | refusal | status | headers |
    /// |---|---|---|
    /// | `Disallowed`, `DisallowedFor`, `RedirectRefused`, `AddressRefused`, `UnsupportedScheme` | 403 | `x-robots-refusal`, `x-robots-rule` |
    /// | `CrawlDelayTooLong` | 403 | `x-robots-refusal: crawl-delay-too-long` |
    /// | `RobotsUnreachable` | 503 | `Retry-After`, `x-robots-refusal: unreachable` |
    /// | `NotReady` | 429 | `Retry-After` (when known), `x-robots-refusal: not-ready; reason=…` |
    /// | `FleetUnavailable` | 503 | `x-robots-refusal: fleet-unavailable` |
    ///
    /// The body is the error's message; the [`RobotsError`] itself is in the response's
    /// extensions.
    Responses,
}

/// The synthetic response for a refusal, or `None` when it should stay an error.
pub fn refusal_response(error: &RobotsError) -> Option<http::Response<Bytes>> {
    let (status, refusal, rule, retry_after): (_, String, Option<&DecidingRule>, _) = match error {
        RobotsError::Disallowed { rule, .. } => (
            StatusCode::FORBIDDEN,
            "disallowed".into(),
            rule.as_ref(),
            None,
        ),
        RobotsError::DisallowedFor { rule, .. } => (
            StatusCode::FORBIDDEN,
            "disallowed-for".into(),
            rule.as_ref(),
            None,
        ),
        RobotsError::RedirectRefused { .. } => {
            (StatusCode::FORBIDDEN, "redirect-refused".into(), None, None)
        }
        RobotsError::AddressRefused { .. } => {
            (StatusCode::FORBIDDEN, "address-refused".into(), None, None)
        }
        RobotsError::UnsupportedScheme { .. } => (
            StatusCode::FORBIDDEN,
            "unsupported-scheme".into(),
            None,
            None,
        ),
        RobotsError::InvalidOrigin { .. } => {
            (StatusCode::FORBIDDEN, "invalid-origin".into(), None, None)
        }
        RobotsError::RobotsUnreachable { retry_after, .. } => (
            StatusCode::SERVICE_UNAVAILABLE,
            "unreachable".into(),
            None,
            Some(*retry_after),
        ),
        RobotsError::NotReady {
            ready_in, reason, ..
        } => (
            // "Too many requests" from us, not the site: frameworks back off on a 429.
            StatusCode::TOO_MANY_REQUESTS,
            format!("not-ready; reason={}", reason.as_str()),
            None,
            *ready_in,
        ),
        RobotsError::CrawlDelayTooLong { .. } => (
            StatusCode::FORBIDDEN,
            "crawl-delay-too-long".into(),
            None,
            None,
        ),
        RobotsError::FleetUnavailable { .. } => (
            StatusCode::SERVICE_UNAVAILABLE,
            "fleet-unavailable".into(),
            None,
            None,
        ),
        _ => return None,
    };
    let mut response = http::Response::new(Bytes::from(error.to_string()));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    insert(headers, headers::REFUSAL, &refusal);
    if let Some(rule) = rule {
        insert(headers, headers::RULE, &describe(rule));
    }
    if let Some(wait) = retry_after {
        // Whole seconds, rounded up: retrying early would only be refused again.
        let secs = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
        insert(
            headers,
            http::header::RETRY_AFTER.as_str(),
            &secs.to_string(),
        );
    }
    headers.insert(
        http::header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response.extensions_mut().insert(error.clone());
    Some(response)
}

/// A tower layer for status-only stacks: put it *outside* [`crate::RobotsLayer`], and refusals
/// become synthetic responses ([`Refusals::Responses`]); the response body is
/// `Either<inner body, Full<Bytes>>`.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), robots_fetch::BoxError> {
/// use bytes::Bytes;
/// use http_body_util::Full;
/// use robots_tower::{RefusalsAsResponsesLayer, RobotsLayer};
/// use tower::{ServiceBuilder, ServiceExt};
///
/// let site = tower::service_fn(|request: http::Request<Full<Bytes>>| async move {
///     let body = match request.uri().path() {
///         "/robots.txt" => "User-agent: *\nDisallow: /private\n",
///         _ => "a page",
///     };
///     Ok::<_, robots_fetch::BoxError>(http::Response::new(Full::new(Bytes::from(body))))
/// });
/// let service = ServiceBuilder::new()
///     .layer(RefusalsAsResponsesLayer)
///     .layer(RobotsLayer::builder("FooBot/1.0").build())
///     .service(site);
/// let request = http::Request::get("http://example.com/private/x").body(Full::<Bytes>::default())?;
/// let response = service.oneshot(request).await?;
/// assert_eq!(response.status(), 403);
/// assert_eq!(response.headers()["x-robots-rule"], "line 2: Disallow: /private");
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct RefusalsAsResponsesLayer;

impl<S> tower_layer::Layer<S> for RefusalsAsResponsesLayer {
    type Service = RefusalsAsResponses<S>;

    fn layer(&self, inner: S) -> RefusalsAsResponses<S> {
        RefusalsAsResponses { inner }
    }
}

/// The service [`RefusalsAsResponsesLayer`] produces.
#[derive(Debug, Clone)]
pub struct RefusalsAsResponses<S> {
    inner: S,
}

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

impl<S, ReqB, ResB> tower_service::Service<http::Request<ReqB>> for RefusalsAsResponses<S>
where
    S: tower_service::Service<http::Request<ReqB>, Response = http::Response<ResB>>,
    S::Future: Send + 'static,
    S::Error: Into<BoxError>,
{
    type Response = http::Response<Either<ResB, Full<Bytes>>>;
    type Error = BoxError;
    type Future = BoxFuture<Result<Self::Response, BoxError>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, request: http::Request<ReqB>) -> Self::Future {
        let future = self.inner.call(request);
        Box::pin(async move {
            match future.await {
                Ok(response) => Ok(response.map(Either::Left)),
                Err(error) => {
                    let error: BoxError = error.into();
                    let synthetic = error
                        .downcast_ref::<RobotsError>()
                        .and_then(refusal_response);
                    match synthetic {
                        Some(response) => Ok(response.map(|b| Either::Right(Full::new(b)))),
                        None => Err(error),
                    }
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::NotReadyReason;
    use std::time::Duration;

    #[test]
    fn each_refusal_has_its_status_and_headers() {
        let rule = DecidingRule {
            line: 2,
            kind: robots_core::RuleKind::Disallow,
            pattern: "/private".into(),
        };
        let disallowed = refusal_response(&RobotsError::Disallowed {
            url: "https://example.com/private".into(),
            rule: Some(rule),
            resolved_path: None,
        })
        .unwrap();
        assert_eq!(disallowed.status(), 403);
        assert_eq!(disallowed.headers()[headers::REFUSAL], "disallowed");
        assert_eq!(
            disallowed.headers()[headers::RULE],
            "line 2: Disallow: /private"
        );
        assert!(disallowed.extensions().get::<RobotsError>().is_some());

        let origin = robots_fetch::Origin::parse("https://example.com").unwrap();
        let unreachable = refusal_response(&RobotsError::RobotsUnreachable {
            origin: origin.clone(),
            retry_after: Duration::from_millis(59_100),
            unreachable_for: Duration::ZERO,
            cause: "HTTP 503".into(),
        })
        .unwrap();
        assert_eq!(unreachable.status(), 503);
        assert_eq!(unreachable.headers()[http::header::RETRY_AFTER], "60");
        assert_eq!(unreachable.headers()[headers::REFUSAL], "unreachable");
        assert!(
            String::from_utf8_lossy(unreachable.body()).contains("unreachable"),
            "the body says why"
        );

        // A site that asks for more than the maximum delay is dropped, not retried.
        let too_long = refusal_response(&RobotsError::CrawlDelayTooLong {
            origin: origin.clone(),
            asked: Duration::from_secs(60),
            max: Duration::from_secs(30),
        })
        .unwrap();
        assert_eq!(too_long.status(), 403);
        assert_eq!(too_long.headers()[headers::REFUSAL], "crawl-delay-too-long");
        assert!(too_long.headers().get(http::header::RETRY_AFTER).is_none());
        assert!(String::from_utf8_lossy(too_long.body()).contains("Crawl-delay of 1 min"));

        let not_ready = refusal_response(&RobotsError::NotReady {
            origin,
            ready_in: Some(Duration::from_secs(5)),
            reason: NotReadyReason::Spacing,
        })
        .unwrap();
        assert_eq!(not_ready.status(), 429);
        assert_eq!(not_ready.headers()[http::header::RETRY_AFTER], "5");
        assert_eq!(
            not_ready.headers()[headers::REFUSAL],
            "not-ready; reason=spacing"
        );

        // A bad link is dropped like a disallowed one.
        let invalid = refusal_response(&RobotsError::InvalidOrigin {
            uri: "http://a.example:99999/".into(),
            cause: "invalid port number".into(),
        })
        .unwrap();
        assert_eq!(invalid.status(), 403);
        assert_eq!(invalid.headers()[headers::REFUSAL], "invalid-origin");

        // Configuration mistakes stay errors.
        assert!(refusal_response(&RobotsError::RelativeUri { uri: "/x".into() }).is_none());
    }
}
