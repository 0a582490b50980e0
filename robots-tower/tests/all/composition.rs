//! The neighbours users put around the front ends (docs/composition.md), in both orders, on the
//! wire: the right order keeps the guarantees; the wrong one is refused or said, never silent.
//! (FollowRedirect and Timeout are in guarantees.rs.)

use crate::captured;
use crate::site::{Answer, Site};

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use robots_fetch::BoxError;
use robots_tower::{RobotsError, RobotsLayer};
use tower::{ServiceBuilder, ServiceExt};

const UA: &str = "FooBot/1.0 (+https://foo.example/bot)";
const BACKOFF: Duration = Duration::from_millis(400);

/// robots.txt disallows `/private`; `/flaky` answers 503 twice, then 200; `/down` always 503.
fn route(target: &str, seen_before: usize) -> Answer {
    match target {
        "/robots.txt" => Answer::ok("User-agent: *\nDisallow: /private\n"),
        "/flaky" if seen_before < 2 => Answer::status("503 Service Unavailable", &[]),
        "/down" => Answer::status("503 Service Unavailable", &[]),
        _ => Answer::ok("page"),
    }
}

fn layer() -> RobotsLayer {
    RobotsLayer::builder(UA)
        .min_delay(Duration::from_millis(50))
        .backoff(BACKOFF, Duration::from_secs(2))
        .build()
}

fn get(site: &Site, path: &str) -> http::Request<Full<Bytes>> {
    http::Request::get(site.url(path))
        .body(Full::default())
        .unwrap()
}

/// The gaps between the arrivals of one path at the site.
fn gaps(site: &Site, target: &str) -> Vec<Duration> {
    let at: Vec<_> = site
        .seen()
        .into_iter()
        .filter(|s| s.target == target)
        .map(|s| s.at)
        .collect();
    at.windows(2).map(|w| w[1] - w[0]).collect()
}

/// `tower::retry` with the layer's [`robots_tower::Retries`] outside the layer: each retry waits
/// for the back-off the 503 set (-10% jitter at most), and refusals are not retried.
#[tokio::test]
async fn layer_retries_outside_the_layer_are_paced() {
    let site = Site::start(route).await;
    let robots = layer();
    let client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
    let service = ServiceBuilder::new()
        .layer(robots.retries(3))
        .layer(robots.clone())
        .service(client);
    let response = service.clone().oneshot(get(&site, "/flaky")).await.unwrap();
    assert_eq!(response.status(), 200);
    response.into_body().collect().await.unwrap();
    assert_eq!(site.count("/flaky"), 3, "two retries after two 503s");
    for gap in gaps(&site, "/flaky") {
        assert!(gap >= BACKOFF.mul_f64(0.9), "a retry {gap:?} after a 503");
    }
    // A refusal is final: nothing sent, nothing retried.
    let refused = service
        .clone()
        .oneshot(get(&site, "/private/x"))
        .await
        .unwrap_err();
    assert!(refused.downcast_ref::<RobotsError>().is_some(), "{refused}");
    assert_eq!(site.count("/private/x"), 0);
    // At most `times` retries.
    let response = service.oneshot(get(&site, "/down")).await.unwrap();
    assert_eq!(response.status(), 503);
    assert_eq!(site.count("/down"), 4, "the request and three retries");
}

/// The wrong order: the retry policy inside the layer would send again below the pacing. It
/// sees a response no robots front end has seen, sends nothing again, and says so once.
#[tokio::test]
async fn layer_retries_inside_the_layer_are_refused_and_said() {
    let (captured, _logs) = captured::capture_logs(tracing::Level::WARN);
    let site = Site::start(route).await;
    let robots = layer();
    let client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
    let service = ServiceBuilder::new()
        .layer(robots.clone())
        .layer(robots.retries(3))
        .map_err(BoxError::from)
        .service(client);
    for path in ["/down", "/flaky"] {
        let response = service.clone().oneshot(get(&site, path)).await.unwrap();
        assert_eq!(response.status(), 503);
    }
    assert_eq!(site.count("/down"), 1, "not retried below the pacing");
    assert_eq!(site.count("/flaky"), 1);
    let logs = captured.text();
    assert_eq!(
        logs.matches("did not pass through a robots front end")
            .count(),
        1,
        "{logs}"
    );
    assert!(logs.contains("put the retry layer outside"), "{logs}");
}

type Boxed = tower::util::BoxCloneService<
    http::Request<Full<Bytes>>,
    http::Response<http_body_util::combinators::UnsyncBoxBody<Bytes, BoxError>>,
    BoxError,
>;

/// A stack as one type, whatever its layers wrap the body in.
fn boxed<S, B>(service: S) -> Boxed
where
    S: tower::Service<http::Request<Full<Bytes>>, Response = http::Response<B>>
        + Clone
        + Send
        + 'static,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    service
        .map_err(Into::into)
        .map_response(|r| r.map(|body| body.map_err(Into::into).boxed_unsync()))
        .boxed_clone()
}

/// Five pages of one origin at once through `stack(robots)`, then [`assert_spaced`].
async fn spacing_holds(interval: Duration, label: &str, stack: impl Fn(RobotsLayer) -> Boxed) {
    let site = Site::start(route).await;
    let service = stack(RobotsLayer::builder(UA).min_delay(interval).build());
    let requests = (0..5).map(|i| {
        let service = service.clone();
        let request = get(&site, &format!("/p{i}"));
        async move {
            let response = service.oneshot(request).await.unwrap();
            response.into_body().collect().await.unwrap();
        }
    });
    futures_util::future::join_all(requests).await;
    assert_spaced(&site, interval, label);
}

/// robots.txt and five pages reached the site at least `interval` apart (5% for the timer's
/// grain).
fn assert_spaced(site: &Site, interval: Duration, label: &str) {
    let at: Vec<_> = site.seen().into_iter().map(|s| s.at).collect();
    assert_eq!(at.len(), 6, "{label}: robots.txt and five pages");
    for pair in at.windows(2) {
        assert!(
            pair[1] - pair[0] >= interval.mul_f64(0.95),
            "{label}: {:?} apart",
            pair[1] - pair[0]
        );
    }
}

fn hyper_client() -> Client<hyper_util::client::legacy::connect::HttpConnector, Full<Bytes>> {
    Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>()
}

/// `tower::limit::ConcurrencyLimit` in both orders: the pacing holds either way. Outside, the
/// requests waiting for their turn hold the limit's permits (slower, never faster): said in
/// docs/composition.md.
#[tokio::test]
async fn a_concurrency_limit_on_either_side_keeps_the_spacing() {
    let limit = || tower::limit::ConcurrencyLimitLayer::new(2);
    let interval = Duration::from_millis(150);
    spacing_holds(interval, "limit outside", |robots| {
        boxed(
            ServiceBuilder::new()
                .layer(limit())
                .layer(robots)
                .service(hyper_client()),
        )
    })
    .await;
    spacing_holds(interval, "limit inside", |robots| {
        boxed(
            ServiceBuilder::new()
                .layer(robots)
                .layer(limit())
                .service(hyper_client()),
        )
    })
    .await;
}

/// tower-http's `TraceLayer` in both orders: it only watches; the pacing holds either way.
#[tokio::test]
async fn a_trace_layer_on_either_side_keeps_the_spacing() {
    use tower_http::trace::TraceLayer;
    let interval = Duration::from_millis(100);
    spacing_holds(interval, "trace outside", |robots| {
        let trace = TraceLayer::new_for_http();
        boxed(
            ServiceBuilder::new()
                .layer(trace)
                .layer(robots)
                .service(hyper_client()),
        )
    })
    .await;
    spacing_holds(interval, "trace inside", |robots| {
        let trace = TraceLayer::new_for_http();
        boxed(
            ServiceBuilder::new()
                .layer(robots)
                .layer(trace)
                .service(hyper_client()),
        )
    })
    .await;
}

/// reqwest-tracing's `TracingMiddleware` in both orders: it only watches; the middleware's
/// pacing holds either way.
#[tokio::test]
async fn reqwest_tracing_on_either_side_keeps_the_spacing() {
    use reqwest_tracing::TracingMiddleware;
    use robots_tower::RobotsMiddleware;
    let interval = Duration::from_millis(100);
    for outside in [true, false] {
        let site = Site::start(route).await;
        let robots = RobotsMiddleware::builder(UA).min_delay(interval);
        let client = if outside {
            robots.build_client_with(|c| c.with(TracingMiddleware::default()))
        } else {
            let inner = reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap();
            Ok(reqwest_middleware::ClientBuilder::new(inner)
                .with(robots.build().unwrap())
                .with(TracingMiddleware::default())
                .build())
        }
        .unwrap();
        let requests = (0..5).map(|i| {
            let (client, url) = (client.clone(), site.url(&format!("/p{i}")));
            async move { client.get(url).send().await.unwrap().bytes().await.unwrap() }
        });
        futures_util::future::join_all(requests).await;
        assert_spaced(&site, interval, &format!("tracing outside={outside}"));
    }
}

/// reqwest-retry around the middleware (feature `reqwest-retry`).
#[cfg(feature = "reqwest-retry")]
mod reqwest_retry_around_the_middleware {
    use super::*;
    use reqwest_retry::RetryTransientMiddleware;
    use reqwest_retry::policies::ExponentialBackoff;
    use robots_tower::{RefusalAware, Refusals, RobotsMiddleware};

    fn retry(strategy: RefusalAware) -> RetryTransientMiddleware<ExponentialBackoff, RefusalAware> {
        // Its own waits are short: the pacing is what holds the retries back.
        let policy = ExponentialBackoff::builder()
            .retry_bounds(Duration::from_millis(1), Duration::from_millis(2))
            .build_with_max_retries(3);
        RetryTransientMiddleware::new_with_policy_and_strategy(policy, strategy)
    }

    /// The right order: retries go through the middleware (paced by the back-off), and a
    /// refusal is found under reqwest-retry's error.
    #[tokio::test]
    async fn outside_retries_are_paced_and_refusals_found() {
        let site = Site::start(route).await;
        let client = RobotsMiddleware::builder(UA)
            .min_delay(Duration::from_millis(50))
            .backoff(BACKOFF, Duration::from_secs(2))
            .build_client_with(|outside| outside.with(retry(RefusalAware::default())))
            .unwrap();
        let response = client.get(site.url("/flaky")).send().await.unwrap();
        assert_eq!(response.status(), 200);
        assert_eq!(site.count("/flaky"), 3);
        for gap in gaps(&site, "/flaky") {
            assert!(gap >= BACKOFF.mul_f64(0.9), "a retry {gap:?} after a 503");
        }
        let error = client.get(site.url("/private/x")).send().await.unwrap_err();
        assert!(
            matches!(
                RobotsError::from_middleware_error(&error),
                Some(RobotsError::Disallowed { .. })
            ),
            "not found under {error:?}"
        );
        assert_eq!(site.count("/private/x"), 0);
    }

    /// With refusals as responses, the synthetic 503 of an unreachable robots.txt carries
    /// `x-robots-refusal`: the strategy leaves it alone (its `Retry-After` is the crawler's).
    #[tokio::test]
    async fn refusals_as_responses_are_not_retried() {
        let (captured, _logs) = captured::capture_logs(tracing::Level::WARN);
        let site = Site::start(|target, _| match target {
            "/robots.txt" => Answer::status("503 Service Unavailable", &[]),
            _ => Answer::ok("page"),
        })
        .await;
        let client = RobotsMiddleware::builder(UA)
            .refusals(Refusals::Responses)
            .build_client_with(|outside| outside.with(retry(RefusalAware::default())))
            .unwrap();
        let response = client.get(site.url("/page")).send().await.unwrap();
        assert_eq!(response.status(), 503);
        assert!(response.headers().contains_key("x-robots-refusal"));
        assert_eq!(site.count("/page"), 0);
        assert_eq!(
            site.count("/robots.txt"),
            1,
            "asked once, not once per retry"
        );
        // Left alone as a refusal, not mistaken for a response from below the middleware.
        let logs = captured.text();
        assert!(
            !logs.contains("did not pass through a robots front end"),
            "{logs}"
        );
    }

    /// The wrong order: inside the middleware, the strategy sees a response that did not pass
    /// through it, does not retry it, and says so once.
    #[tokio::test]
    async fn inside_retries_are_refused_and_said() {
        let (captured, _logs) = captured::capture_logs(tracing::Level::WARN);
        let site = Site::start(route).await;
        let robots = RobotsMiddleware::builder(UA).build().unwrap();
        let inner = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap();
        let client = reqwest_middleware::ClientBuilder::new(inner)
            .with(robots)
            .with(retry(RefusalAware::default()))
            .build();
        let response = client.get(site.url("/down")).send().await.unwrap();
        assert_eq!(response.status(), 503);
        assert_eq!(site.count("/down"), 1, "not retried below the pacing");
        let logs = captured.text();
        assert!(
            logs.contains("did not pass through a robots front end"),
            "{logs}"
        );
    }
}

#[cfg(not(feature = "reqwest-retry"))]
#[test]
fn reqwest_retry_around_the_middleware() {
    eprintln!(
        "SKIPPED: the reqwest-retry composition tests need the `reqwest-retry` feature (cargo test --workspace turns it on)"
    );
}
