//! Schedule, don't wait (`WhenNotReady::Fail`) and the HTTP-free hooks, on tokio's paused clock
//! against the in-memory site of the test support, which records every request it receives.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use robots_fetch::{BoxError, Origin, ServiceClient};
use robots_test_support::memory::{MemorySite, Reply};
use robots_tower::{NotReadyReason, RobotsError, RobotsHooks, RobotsLayer, WhenNotReady};
use tokio::time::Instant;
use tower::{Layer, ServiceExt};

/// robots.txt (answered after `robots_latency`) asks for a 5 s Crawl-delay and disallows
/// `/private`; `/slow` takes 10 s; `/busy` answers 503 with `Retry-After: 60`.
fn memory_site(robots_latency: Duration) -> MemorySite {
    MemorySite::new(move |_, path, _| match path {
        "/robots.txt" => {
            Reply::ok("User-agent: *\nDisallow: /private\nCrawl-delay: 5\n").after(robots_latency)
        }
        "/slow" => Reply::ok("slow").after(Duration::from_secs(10)),
        "/busy" => Reply::status(503, &[("retry-after", "60")]),
        _ => Reply::ok("page"),
    })
}

fn get(url: &str) -> http::Request<Full<Bytes>> {
    http::Request::get(url).body(Full::default()).unwrap()
}

fn not_ready<R>(result: Result<R, BoxError>) -> (Option<Duration>, NotReadyReason) {
    match result.map(|_| ()).map_err(|e| e.downcast::<RobotsError>()) {
        Err(Ok(error)) => match *error {
            RobotsError::NotReady {
                ready_in, reason, ..
            } => (ready_in, reason),
            other => panic!("expected NotReady, got {other}"),
        },
        other => panic!("expected NotReady, got {other:?}"),
    }
}

#[tokio::test(start_paused = true)]
async fn a_request_that_would_wait_fails_at_once_with_when_to_retry() {
    let site = memory_site(Duration::ZERO);
    let layer = RobotsLayer::builder("FooBot")
        .when_not_ready(WhenNotReady::Fail)
        .build();
    let service = layer.layer(site.service());
    // robots.txt's own request is in the group's budget: the first page is told when, 5 s
    // (the Crawl-delay) after it.
    let (ready_in, reason) = not_ready(service.clone().oneshot(get("http://a.example/one")).await);
    assert_eq!(
        (ready_in, reason),
        (Some(Duration::from_secs(5)), NotReadyReason::Spacing)
    );
    tokio::time::advance(Duration::from_secs(5)).await;
    let started = Instant::now();
    let first = service.clone().oneshot(get("http://a.example/one")).await;
    assert_eq!(first.unwrap().status(), 200);

    // Crawl-delay 5 s: not now, and exactly when.
    let (ready_in, reason) = not_ready(service.clone().oneshot(get("http://a.example/two")).await);
    assert_eq!(reason, NotReadyReason::Spacing);
    assert_eq!(ready_in, Some(Duration::from_secs(5)));
    assert_eq!(Instant::now(), started, "the refusal did not wait");
    assert_eq!(site.count("/two"), 0);

    // Nothing was reserved by the refusal: at the time it named, the request goes.
    tokio::time::advance(Duration::from_secs(5)).await;
    let response = service.clone().oneshot(get("http://a.example/two")).await;
    assert_eq!(response.unwrap().status(), 200);

    // A 503 with Retry-After pauses the origin: the refusal says so.
    tokio::time::advance(Duration::from_secs(5)).await;
    let busy = service.clone().oneshot(get("http://a.example/busy")).await;
    assert_eq!(busy.unwrap().status(), 503);
    let (ready_in, reason) =
        not_ready(service.clone().oneshot(get("http://a.example/three")).await);
    assert_eq!(reason, NotReadyReason::Paused);
    assert_eq!(ready_in, Some(Duration::from_secs(60)));

    // Another origin is not held up by any of this (its robots.txt is its own group's).
    let other = service.clone().oneshot(get("http://b.example/x")).await;
    assert_eq!(not_ready(other).1, NotReadyReason::Spacing);
    tokio::time::advance(Duration::from_secs(5)).await;
    let other = service.clone().oneshot(get("http://b.example/x")).await;
    assert_eq!(other.unwrap().status(), 200);
    // Disallowed stays disallowed, whatever the mode.
    let refused = service
        .clone()
        .oneshot(get("http://b.example/private"))
        .await;
    assert!(matches!(
        refused
            .map(|_| ())
            .map_err(|e| e.downcast::<RobotsError>().map(|e| *e)),
        Err(Ok(RobotsError::Disallowed { .. }))
    ));
}

#[tokio::test(start_paused = true)]
async fn requests_in_flight_and_robots_txt_being_fetched_are_reported_not_awaited() {
    let site = memory_site(Duration::from_secs(3));
    let layer = RobotsLayer::builder("FooBot")
        .when_not_ready(WhenNotReady::Fail)
        .build();
    let service = layer.layer(site.service());

    // The first request fetches robots.txt (3 s); a second one meanwhile is told so.
    let first = tokio::spawn(service.clone().oneshot(get("http://a.example/slow")));
    tokio::time::sleep(Duration::from_secs(1)).await;
    let (ready_in, reason) = not_ready(service.clone().oneshot(get("http://a.example/x")).await);
    assert_eq!((ready_in, reason), (None, NotReadyReason::RobotsPending));
    assert_eq!(site.count("/robots.txt"), 1);
    // robots.txt's own request is in the group's budget: the first page is then told when
    // (the 5 s Crawl-delay, from its end).
    let (ready_in, reason) = not_ready(first.await.unwrap());
    assert_eq!(
        (ready_in, reason),
        (Some(Duration::from_secs(5)), NotReadyReason::Spacing)
    );
    tokio::time::advance(Duration::from_secs(5)).await;
    let first = tokio::spawn(service.clone().oneshot(get("http://a.example/slow")));

    // Then the first request is in flight (10 s): the one place is taken.
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(site.count("/slow"), 1);
    let (ready_in, reason) = not_ready(service.clone().oneshot(get("http://a.example/x")).await);
    assert_eq!((ready_in, reason), (None, NotReadyReason::InFlight));
    first.await.unwrap().unwrap();
    assert_eq!(site.count("/x"), 0);
}

#[tokio::test(start_paused = true)]
async fn hooks_decide_pace_and_learn_without_http_plumbing() {
    let site = memory_site(Duration::ZERO);
    let layer = RobotsLayer::builder("FooBot").build();
    let service = layer.layer(site.service());
    let hooks = layer.hooks_with(ServiceClient::new(site.service()));
    let url = |s: &str| -> url::Url { s.parse().unwrap() };
    let origin = Origin::parse("http://a.example").unwrap();

    // Nothing cached yet: the cache-only verdict does not know; check fetches.
    assert!(hooks.verdict(&url("http://a.example/private")).is_none());
    assert!(matches!(
        hooks.check(&url("http://a.example/private")).await,
        Err(RobotsError::Disallowed { .. })
    ));
    assert!(matches!(
        hooks.verdict(&url("http://a.example/private")),
        Some(Err(RobotsError::Disallowed { .. }))
    ));
    assert!(matches!(
        hooks.verdict(&url("http://a.example/ok")),
        Some(Ok(None))
    ));
    assert_eq!(site.count("/robots.txt"), 1);

    // robots.txt's own request was in the group's budget: the next comes 5 s after it.
    assert_eq!(
        hooks.next_ready(&origin).await.unwrap(),
        Some(Duration::from_secs(5))
    );
    tokio::time::advance(Duration::from_secs(5)).await;
    // A turn taken through the hooks paces the layer's requests too (shared state).
    assert_eq!(
        hooks.next_ready(&origin).await.unwrap(),
        Some(Duration::ZERO)
    );
    let started = Instant::now();
    let ticket = hooks.admit(&url("http://a.example/ok")).await.unwrap();
    assert_eq!(ticket.interval(), Duration::from_secs(5));
    assert_eq!(
        hooks.next_ready(&origin).await.unwrap(),
        None,
        "a request is in flight"
    );
    let mut headers = http::HeaderMap::new();
    headers.insert(http::header::RETRY_AFTER, "20".parse().unwrap());
    let info = ticket.finish(429, &headers).await;
    assert_eq!(info.origin(), &origin);
    assert_eq!(
        hooks.next_ready(&origin).await.unwrap(),
        Some(Duration::from_secs(20)),
        "the 429 paused the origin"
    );
    let response = service
        .clone()
        .oneshot(get("http://a.example/after"))
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(started.elapsed(), Duration::from_secs(20));
    // (Its body holds the request's place until dropped.)
    drop(response);

    // A response seen without a ticket is learned from too.
    hooks.observe(&origin, 503, &headers);
    assert_eq!(
        layer.paused_until(&origin).map(|p| p - Instant::now()),
        Some(Duration::from_secs(20))
    );
    // acquire: the turn alone (it waits here, in the default mode).
    let ticket = hooks.acquire(&origin).await.unwrap();
    assert_eq!(ticket.waited(), Duration::from_secs(20));
    drop(ticket);

    // Stand-alone hooks, schedule mode.
    let hooks = RobotsHooks::builder("FooBot")
        .when_not_ready(WhenNotReady::Fail)
        .build_hooks_with(ServiceClient::new(site.service()));
    assert!(matches!(
        hooks.admit(&url("http://c.example/1")).await,
        Err(RobotsError::NotReady {
            reason: NotReadyReason::Spacing,
            ..
        })
    ));
    tokio::time::advance(Duration::from_secs(5)).await;
    let _turn = hooks.admit(&url("http://c.example/1")).await.unwrap();
    assert!(matches!(
        hooks.admit(&url("http://c.example/2")).await,
        Err(RobotsError::NotReady {
            reason: NotReadyReason::InFlight,
            ..
        })
    ));
    assert!(matches!(
        hooks.check(&url("file:///etc/passwd")).await,
        Err(RobotsError::UnsupportedScheme { .. })
    ));
}
