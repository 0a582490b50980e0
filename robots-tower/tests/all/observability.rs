//! tracing events for robots.txt fetches, cache misses, disallows, politeness waits and
//! back-offs, captured from a real subscriber.

use crate::captured;
use crate::support;

use bytes::Bytes;
use http_body_util::Full;
use robots_fetch::BoxError;
use robots_tower::RobotsLayer;
use support::walk;
use tower::{Layer, ServiceExt};

#[tokio::test(start_paused = true)]
async fn the_layer_reports_what_it_does() {
    let (captured, _logs) = captured::capture_logs(tracing::Level::DEBUG);

    walk::walk_through_the_layer().await;

    let log = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    for expected in [
        "robots.txt cache miss: fetching",
        "robots_fetch",
        "fetched robots.txt",
        "politeness wait",
        "disallowed by robots.txt",
        "backing off",
    ] {
        assert!(log.contains(expected), "no `{expected}` in:\n{log}");
    }
}

#[tokio::test(start_paused = true)]
async fn lossy_names_and_clamped_delays_are_reported() {
    let (captured, _logs) = captured::capture_logs(tracing::Level::WARN);

    let inner = tower::service_fn(|request: http::Request<Full<Bytes>>| async move {
        let (status, retry_after, body) = match request.uri().path() {
            "/robots.txt" => (200, None, "User-agent: *\nCrawl-delay: 90\n"),
            "/busy" => (503, Some("99999999999999999999999"), ""),
            _ => (200, None, "page"),
        };
        let mut response = http::Response::builder().status(status);
        if let Some(value) = retry_after {
            response = response.header("retry-after", value);
        }
        Ok::<_, BoxError>(
            response
                .body(Full::new(Bytes::from_static(body.as_bytes())))
                .unwrap(),
        )
    });
    // `AB42bot/1.0` reduces to `AB`: the crawler's own name is lost, and that is said.
    let service = RobotsLayer::builder("AB42bot/1.0")
        .overlong_crawl_delay(robots_tower::OverlongCrawlDelay::Clamp)
        .build()
        .layer(inner);
    let get = |path: &str| {
        http::Request::get(format!("http://a.example{path}"))
            .body(Full::default())
            .unwrap()
    };
    service.clone().oneshot(get("/busy")).await.unwrap();
    // (The 503's pause, capped at 10 min, is waited out: time is paused.)
    service.clone().oneshot(get("/again")).await.unwrap();

    let log = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    // The clamp is said once per origin, not once per request.
    assert_eq!(
        log.matches("Crawl-delay above the maximum: clamped")
            .count(),
        1,
        "{log}"
    );
    for expected in [
        "cut short to its product token",
        "AB42bot",
        "Crawl-delay above the maximum: clamped, so this origin is crawled faster than it asked",
        "Retry-After above the maximum: clamped",
    ] {
        assert!(log.contains(expected), "no `{expected}` in:\n{log}");
    }
}

/// A shared cache brings its own settings: cache settings given to the builder beside it are
/// not used, and the warning names them, so the wrong way is loud.
#[test]
fn cache_settings_beside_a_shared_cache_are_reported() {
    let shared = robots_fetch::RobotsCache::builder("FooBot/1.0").build();
    let (captured, _logs) = captured::capture_logs(tracing::Level::WARN);
    let _layer = robots_tower::RobotsLayer::builder("FooBot/1.0")
        .fetch_timeout(std::time::Duration::from_secs(3))
        .from("ops@foo.example")
        .fetch_timeout(std::time::Duration::from_secs(4))
        .cache(shared.clone())
        .build();
    let logs = captured.text();
    // Each setting named once, however often it was set.
    assert!(
        logs.lines().any(
            |line| line.contains("a shared cache (.cache()) brings its own settings")
                && line.trim_end().ends_with("ignored=fetch_timeout, from")
        ),
        "{logs}"
    );
    // Without builder cache settings, nothing to report.
    let (captured, _logs) = captured::capture_logs(tracing::Level::WARN);
    let _layer = robots_tower::RobotsLayer::builder("FooBot/1.0")
        .cache(shared)
        .build();
    assert!(
        !captured.text().contains("brings its own settings"),
        "{}",
        captured.text()
    );
}
