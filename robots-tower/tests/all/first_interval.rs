//! Issue 53, point 4: an origin's first page comes at least its interval after its robots.txt
//! (Crawl-delay, Request-rate), whatever the concurrency, through every front end: the layer,
//! the middleware, the hooks and the frontier. Read at the server: every request start of the
//! site, robots.txt's included, at least the interval after the one before.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::future::join_all;
use http_body_util::{BodyExt, Full};
use robots_test_support::memory::{MemorySite, Reply};
use robots_tower::{RobotsHooks, RobotsLayer, RobotsMiddleware};
use tokio::time::Instant;
use tower::{Layer, ServiceExt};

use crate::site::{Answer, Site};

/// The robots.txt files and the interval each asks for (on tokio's paused clock).
const CASES: [(&str, Duration); 2] = [
    ("User-agent: *\nCrawl-delay: 2\n", Duration::from_secs(2)),
    (
        "User-agent: *\nRequest-rate: 1/3s\n",
        Duration::from_secs(3),
    ),
];
/// The same, short, for a real server on the real clock.
const HTTP_CASES: [(&str, Duration); 2] = [
    (
        "User-agent: *\nCrawl-delay: 0.3\n",
        Duration::from_millis(300),
    ),
    (
        "User-agent: *\nRequest-rate: 2/1s\n",
        Duration::from_millis(500),
    ),
];
/// What the server's clock may see of a gap less than the client's (a request's bytes take
/// their time to arrive); the fault measured gaps of 1 ms.
const ARRIVAL_SLACK: Duration = Duration::from_millis(100);
const PAGES: usize = 4;

fn assert_spaced<T>(what: &str, starts: &[T], interval: Duration)
where
    T: Copy + std::ops::Sub<Output = Duration>,
{
    assert_eq!(
        starts.len(),
        PAGES + 1,
        "{what}: robots.txt and {PAGES} pages"
    );
    for (n, pair) in starts.windows(2).enumerate() {
        assert!(
            pair[1] - pair[0] >= interval,
            "{what}: request {} came {:?} after the one before (interval {interval:?})",
            n + 1,
            pair[1] - pair[0]
        );
    }
}

async fn site(robots: &'static str) -> Site {
    Site::start(move |target, _| match target {
        "/robots.txt" => Answer::ok(robots),
        _ => Answer::ok("page"),
    })
    .await
}

/// Every request start the server saw, less the slack of the bytes' arrival.
fn starts(site: &Site) -> Vec<std::time::Instant> {
    site.seen().iter().map(|s| s.at).collect()
}

#[tokio::test(start_paused = true)]
async fn through_the_layer() {
    for concurrency in [1, 4, 16] {
        for (robots, interval) in CASES {
            let site = MemorySite::new(move |_, path, _| {
                if path == "/robots.txt" {
                    Reply::ok(robots)
                } else {
                    Reply::ok("page")
                }
            });
            let service = RobotsLayer::builder("FooBot/1.0")
                .concurrency(concurrency)
                .min_delay(Duration::ZERO)
                .build()
                .layer(site.service());
            let requests = (0..PAGES).map(|n| {
                let service = service.clone();
                async move {
                    let request = http::Request::get(format!("http://a.example/{n}"))
                        .body(Full::<Bytes>::default())
                        .unwrap();
                    let response = service.oneshot(request).await.unwrap();
                    response.into_body().collect().await.unwrap();
                }
            });
            join_all(requests).await;
            let starts: Vec<Instant> = site.visits().iter().map(|v| v.at).collect();
            assert_spaced(
                &format!("layer, concurrency {concurrency}"),
                &starts,
                interval,
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn through_the_middleware_and_its_frontier() {
    for concurrency in [1, 4, 16] {
        for (body, interval) in HTTP_CASES {
            let site = site(body).await;
            let robots = RobotsMiddleware::builder("FooBot/1.0")
                .concurrency(concurrency)
                .min_delay(Duration::ZERO)
                .build()
                .unwrap();
            let client = robots.client().unwrap();
            let requests = (0..PAGES).map(|n| {
                let (client, url) = (client.clone(), site.url(&format!("/{n}")));
                async move {
                    client.get(url).send().await.unwrap().bytes().await.unwrap();
                }
            });
            join_all(requests).await;
            let what = format!("middleware, concurrency {concurrency}");
            assert_spaced(&what, &starts(&site), interval - ARRIVAL_SLACK);

            // The frontier in front of it, with as many workers as places.
            let site2 = self::site(body).await;
            let frontier = robots.frontier();
            for n in 0..PAGES {
                frontier
                    .push(site2.url(&format!("/{n}")).parse().unwrap())
                    .await
                    .unwrap();
            }
            frontier.close();
            let workers = (0..concurrency).map(|_| {
                let (frontier, client) = (frontier.clone(), client.clone());
                async move {
                    while let Some(job) = frontier.next().await {
                        let response = client.get(job.url().clone()).send().await.unwrap();
                        response.bytes().await.unwrap();
                        drop(job);
                    }
                }
            });
            join_all(workers).await;
            let what = format!("frontier, concurrency {concurrency}");
            assert_spaced(&what, &starts(&site2), interval - ARRIVAL_SLACK);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn through_the_hooks() {
    for concurrency in [1, 4, 16] {
        for (robots, interval) in HTTP_CASES {
            let site = site(robots).await;
            let hooks = RobotsHooks::builder("FooBot/1.0")
                .concurrency(concurrency)
                .min_delay(Duration::ZERO)
                .build()
                .unwrap();
            let http = Arc::new(reqwest::Client::new());
            let requests = (0..PAGES).map(|n| {
                let (hooks, http) = (hooks.clone(), http.clone());
                let url: url::Url = site.url(&format!("/{n}")).parse().unwrap();
                async move {
                    let ticket = hooks.admit(&url).await.unwrap();
                    let mut request = http.get(url.clone()).build().unwrap();
                    hooks.identify(&url, request.headers_mut());
                    let response = http.execute(request).await.unwrap();
                    let (status, headers) =
                        (response.status().as_u16(), response.headers().clone());
                    response.bytes().await.unwrap();
                    ticket.finish(status, &headers).await;
                }
            });
            join_all(requests).await;
            let what = format!("hooks, concurrency {concurrency}");
            assert_spaced(&what, &starts(&site), interval - ARRIVAL_SLACK);
        }
    }
}
