//! The tower layer on tokio's paused clock, against the in-memory site of the test support
//! (robots.txt and pages per host; when each request started; how many were in flight).

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use robots_fetch::BoxError;
use robots_test_support::memory::{MemorySite, Reply};
use robots_tower::{OverlongCrawlDelay, RobotsError, RobotsInfo, RobotsLayer, Spacing};
use tokio::time::Instant;
use tower::{Layer, Service, ServiceExt};

type Response = http::Response<Full<Bytes>>;

/// A page's status and headers.
type Page = (u16, Vec<(&'static str, &'static str)>);

/// How a host answers: its robots.txt (status, body) and, per path, a status and headers.
#[derive(Clone, Default)]
struct Host {
    robots: (u16, &'static str),
    pages: HashMap<&'static str, Page>,
    /// Answer 429 with this Retry-After to the first request for this path, then 200.
    throttle_once: Option<(&'static str, &'static str)>,
}

/// The in-memory site of these tests: per host, its robots.txt and pages ([`Host`]), every
/// answer after `latency`.
fn memory_site(hosts: Vec<(&'static str, Host)>, latency: Duration) -> MemorySite {
    let hosts: HashMap<&'static str, Host> = hosts.into_iter().collect();
    MemorySite::new(move |host, path, seen_before| {
        let spec = hosts.get(host).cloned().unwrap_or_default();
        let reply = if path == "/robots.txt" {
            Reply {
                status: spec.robots.0,
                ..Reply::ok(spec.robots.1)
            }
        } else if let Some((_, retry_after)) = spec.throttle_once.filter(|(p, _)| *p == path) {
            if seen_before == 0 {
                Reply::status(429, &[("retry-after", retry_after)])
            } else {
                Reply::ok("ok")
            }
        } else {
            let (status, headers) = spec.pages.get(path).cloned().unwrap_or((200, vec![]));
            Reply {
                body: "page".into(),
                ..Reply::status(status, &headers)
            }
        };
        reply.after(latency)
    })
}

fn get(url: &str) -> http::Request<Full<Bytes>> {
    http::Request::get(url).body(Full::default()).unwrap()
}

fn host(robots: &'static str) -> Host {
    Host {
        robots: (200, robots),
        ..Default::default()
    }
}

/// What the layer answers: the site's response, its body holding the request's place.
type Paced = http::Response<robots_tower::PacedBody<Full<Bytes>>>;

/// Sends a request and reads its response to the end, as a crawler does (the body holds the
/// request's place in its group until then).
async fn send<S>(service: &S, url: &str) -> Result<http::Response<Bytes>, BoxError>
where
    S: Service<http::Request<Full<Bytes>>, Response = Paced, Error = BoxError> + Clone,
{
    use http_body_util::BodyExt;
    let (parts, body) = send_unread(service, url).await?.into_parts();
    let body = body.collect().await.map_err(BoxError::from)?.to_bytes();
    Ok(http::Response::from_parts(parts, body))
}

/// Sends a request; its response's body is left unread.
async fn send_unread<S>(service: &S, url: &str) -> Result<Paced, BoxError>
where
    S: Service<http::Request<Full<Bytes>>, Response = Paced, Error = BoxError> + Clone,
{
    service.clone().oneshot(get(url)).await
}

/// The rule that let a request through shares the cached rules' bytes (no copy per request);
/// the rule in a refusal is a copy, so an error kept by the caller does not keep the compiled
/// file alive after the cache lets it go.
#[tokio::test(start_paused = true)]
async fn only_a_refusal_copies_its_rule() {
    let body = "User-agent: *\nDisallow: /private\nAllow: /private/open\n";
    let site = memory_site(vec![("a.example", host(body))], Duration::ZERO);
    let layer = RobotsLayer::builder("FooBot/1.0")
        .min_delay(Duration::ZERO)
        .build();
    let service = layer.layer(site.service());
    let response = send(&service, "http://a.example/private/open")
        .await
        .unwrap();
    let error = send(&service, "http://a.example/private/x")
        .await
        .unwrap_err();
    let entry = layer
        .cache()
        .cached(&"http://a.example".parse().unwrap())
        .unwrap();
    let cached_pattern = |path: &[u8]| {
        let rule = entry.verdict_at(path, Instant::now()).rule.unwrap();
        rule.pattern.as_ptr()
    };
    let allowed = response
        .extensions()
        .get::<RobotsInfo>()
        .unwrap()
        .rule()
        .unwrap();
    assert_eq!(allowed.pattern, "/private/open");
    assert_eq!(allowed.pattern.as_ptr(), cached_pattern(b"/private/open"));
    let Some(RobotsError::Disallowed {
        rule: Some(refused),
        ..
    }) = error.downcast_ref::<RobotsError>()
    else {
        panic!("{error:?}");
    };
    assert_eq!(refused.pattern, "/private");
    assert_ne!(refused.pattern.as_ptr(), cached_pattern(b"/private/x"));
}

#[tokio::test(start_paused = true)]
async fn a_disallowed_url_never_reaches_the_server() {
    let site = memory_site(
        vec![("a.example", host("User-agent: *\nDisallow: /private\n"))],
        Duration::ZERO,
    );
    let service = RobotsLayer::builder("FooBot/1.0")
        .build()
        .layer(site.service());
    let error = send(&service, "http://a.example/private/x")
        .await
        .unwrap_err();
    match error.downcast_ref::<RobotsError>() {
        Some(RobotsError::Disallowed {
            url,
            rule: Some(rule),
            resolved_path: None,
        }) => {
            assert_eq!(url, "http://a.example/private/x");
            assert_eq!((rule.line, rule.pattern.as_str()), (2, Some("/private")));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(site.requests_for("a.example", "/private/x"), 0);
    assert_eq!(
        site.requests_for("a.example", "/robots.txt"),
        1,
        "robots.txt fetched through the inner service"
    );
    assert!(send(&service, "http://a.example/public").await.is_ok());
}

#[tokio::test(start_paused = true)]
async fn requests_to_one_origin_are_spaced_and_others_are_not_slowed() {
    let site = memory_site(
        vec![
            ("slow.example", host("User-agent: *\nCrawl-delay: 3\n")),
            ("fast.example", host("User-agent: *\nDisallow:\n")),
        ],
        Duration::from_millis(10),
    );
    let service = RobotsLayer::builder("FooBot").build().layer(site.service());
    let started = Instant::now();
    let mut tasks = Vec::new();
    for i in 0..4 {
        for host in ["slow.example", "fast.example"] {
            let service = service.clone();
            tasks.push(tokio::spawn(async move {
                send(&service, &format!("http://{host}/page{i}"))
                    .await
                    .map(|_| ())
            }));
        }
    }
    for task in tasks {
        task.await.unwrap().unwrap();
    }
    let gaps = |starts: Vec<Instant>| starts.windows(2).map(|w| w[1] - w[0]).collect::<Vec<_>>();
    let slow = site.starts("slow.example");
    let fast = site.starts("fast.example");
    assert_eq!((slow.len(), fast.len()), (4, 4));
    assert!(
        gaps(slow).iter().all(|g| *g >= Duration::from_secs(3)),
        "Crawl-delay: 3 spaces slow.example"
    );
    assert!(
        gaps(fast.clone())
            .iter()
            .all(|g| *g >= Duration::from_secs(1)),
        "the 1 s minimum spaces fast.example"
    );
    // fast.example finished long before slow.example would have let it (its robots.txt and
    // four pages, 1 s apart).
    assert!(
        fast[3] - started < Duration::from_secs(5),
        "fast.example not slowed: {:?}",
        fast[3] - started
    );
}

#[tokio::test(start_paused = true)]
async fn crawl_delay_above_the_cap_is_refused_honoured_or_clamped() {
    let site = memory_site(
        vec![("a.example", host("User-agent: *\nCrawl-delay: 120\n"))],
        Duration::ZERO,
    );
    // By default, refused: never crawled faster than asked, and nothing is sent.
    let service = RobotsLayer::builder("FooBot")
        .max_delay(Duration::from_secs(10))
        .build()
        .layer(site.service());
    let error = send(&service, "http://a.example/1").await.unwrap_err();
    match error.downcast_ref::<RobotsError>() {
        Some(RobotsError::CrawlDelayTooLong { origin, asked, max }) => {
            assert_eq!(origin.as_str(), "http://a.example");
            assert_eq!(
                (*asked, *max),
                (Duration::from_secs(120), Duration::from_secs(10))
            );
        }
        other => panic!("{other:?}"),
    }
    // The message names the setting that crawls it anyway.
    assert!(
        error
            .to_string()
            .contains("overlong_crawl_delay(OverlongCrawlDelay::Honour)"),
        "{error}"
    );
    assert!(site.starts("a.example").is_empty(), "no page was fetched");
    // Honoured: the whole delay.
    let service = RobotsLayer::builder("FooBot")
        .max_delay(Duration::from_secs(10))
        .overlong_crawl_delay(OverlongCrawlDelay::Honour)
        .build()
        .layer(site.service());
    send(&service, "http://a.example/1").await.unwrap();
    let response = send(&service, "http://a.example/2").await.unwrap();
    let info = response.extensions().get::<RobotsInfo>().unwrap();
    assert_eq!(
        (info.interval(), info.interval_clamped_from()),
        (Duration::from_secs(120), None)
    );
    assert_eq!(info.waited(), Duration::from_secs(120));
    // Honoured in schedule mode: the refusal says when.
    let service = RobotsLayer::builder("FooBot")
        .max_delay(Duration::from_secs(10))
        .overlong_crawl_delay(OverlongCrawlDelay::Honour)
        .when_not_ready(robots_tower::WhenNotReady::Fail)
        .build()
        .layer(site.service());
    tokio::time::advance(Duration::from_secs(200)).await;
    // robots.txt's own request is in the group's budget: the first page comes an interval
    // after it, and schedule mode says so.
    let not_yet = |error: BoxError| match error.downcast_ref::<RobotsError>() {
        Some(RobotsError::NotReady { ready_in, .. }) => *ready_in,
        other => panic!("{other:?}"),
    };
    let first = send(&service, "http://a.example/s1").await.unwrap_err();
    assert_eq!(not_yet(first), Some(Duration::from_secs(120)));
    tokio::time::advance(Duration::from_secs(120)).await;
    send(&service, "http://a.example/s1").await.unwrap();
    let error = send(&service, "http://a.example/s2").await.unwrap_err();
    match error.downcast_ref::<RobotsError>() {
        Some(RobotsError::NotReady { ready_in, .. }) => {
            assert_eq!(*ready_in, Some(Duration::from_secs(120)));
        }
        other => panic!("{other:?}"),
    }
    // Clamped, by name: the maximum, and the delay asked reported.
    let service = RobotsLayer::builder("FooBot")
        .max_delay(Duration::from_secs(10))
        .overlong_crawl_delay(OverlongCrawlDelay::Clamp)
        .build()
        .layer(site.service());
    tokio::time::advance(Duration::from_secs(200)).await;
    send(&service, "http://a.example/3").await.unwrap();
    let response = send(&service, "http://a.example/4").await.unwrap();
    let info = response.extensions().get::<RobotsInfo>().unwrap();
    assert_eq!(
        (info.interval(), info.interval_clamped_from()),
        (Duration::from_secs(10), Some(Duration::from_secs(120)))
    );
    assert_eq!(info.waited(), Duration::from_secs(10));
}

#[tokio::test(start_paused = true)]
async fn errors_and_infos_read_well() {
    let site = memory_site(
        vec![
            (
                "down.example",
                Host {
                    robots: (503, ""),
                    ..Default::default()
                },
            ),
            ("up.example", host("User-agent: *\nDisallow: /private\n")),
        ],
        Duration::ZERO,
    );
    let service = RobotsLayer::builder("FooBot").build().layer(site.service());
    let error = send(&service, "http://down.example/x").await.unwrap_err();
    let message = error.to_string();
    assert!(message.ends_with("(retry in 10 s)"), "{message}");
    let response = send(&service, "http://up.example/x").await.unwrap();
    let info = response.extensions().get::<RobotsInfo>().unwrap();
    let debug = format!("{info:?}");
    assert!(!debug.contains("Instant"), "{debug}");
    assert!(
        debug.contains("parsed (HTTP 200), fetched 1 s ago, refreshed in 23 h 59 min"),
        "{debug}"
    );
    assert!(debug.contains("waited: 1 s"), "{debug}");
}

#[tokio::test(start_paused = true)]
async fn responses_and_the_cache_name_the_origins_sitemaps() {
    let site = memory_site(
        vec![(
            "a.example",
            host(
                "User-agent: *\nDisallow: /private\nSitemap: http://a.example/s1.xml\nSitemap: http://a.example/s2.xml\n",
            ),
        )],
        Duration::ZERO,
    );
    let layer = RobotsLayer::builder("FooBot").build();
    let service = layer.clone().layer(site.service());
    let response = send(&service, "http://a.example/").await.unwrap();
    let info = response.extensions().get::<RobotsInfo>().unwrap();
    let sitemaps: Vec<&str> = info.sitemaps().collect();
    assert_eq!(
        sitemaps,
        ["http://a.example/s1.xml", "http://a.example/s2.xml"]
    );
    assert_eq!(
        layer.cache().sitemaps(&"http://a.example".parse().unwrap()),
        ["http://a.example/s1.xml", "http://a.example/s2.xml"]
    );
    assert!(
        layer
            .cache()
            .sitemaps(&"http://b.example".parse().unwrap())
            .is_empty()
    );
}

#[tokio::test(start_paused = true)]
async fn a_crawl_delay_above_a_day_is_refused_under_every_policy() {
    // Too large to represent, a day and a second, and a Request-rate of one per 10^20 hours:
    // each is refused whatever the policy (a site asking for more than a robots.txt copy lives
    // is asking not to be crawled), and none can panic the pacer.
    for (robots, asked) in [
        (
            "User-agent: *\nCrawl-delay: 99999999999999999999\n",
            Duration::MAX,
        ),
        (
            "User-agent: *\nCrawl-delay: 86401\n",
            Duration::from_secs(86_401),
        ),
        (
            "User-agent: *\nCrawl-delay: 18446744074\n",
            Duration::from_secs(18_446_744_074),
        ),
        (
            "User-agent: *\nRequest-rate: 1/99999999999999999999h\n",
            Duration::from_secs(u64::MAX),
        ),
    ] {
        let site = memory_site(vec![("a.example", host(robots))], Duration::ZERO);
        for policy in [
            OverlongCrawlDelay::Refuse,
            OverlongCrawlDelay::Honour,
            OverlongCrawlDelay::Clamp,
        ] {
            let service = RobotsLayer::builder("FooBot")
                .overlong_crawl_delay(policy)
                .build()
                .layer(site.service());
            let error = send(&service, "http://a.example/1").await.unwrap_err();
            match error.downcast_ref::<RobotsError>() {
                Some(RobotsError::CrawlDelayTooLong { asked: got, .. }) => {
                    assert_eq!(*got, asked, "{robots} {policy:?}");
                }
                other => panic!("{robots} {policy:?}: {other:?}"),
            }
        }
        // Nothing but robots.txt reached the site.
        assert!(site.visits().iter().all(|v| v.path == "/robots.txt"));
    }
    // A day exactly is the longest honoured.
    let site = memory_site(
        vec![("a.example", host("User-agent: *\nCrawl-delay: 86400\n"))],
        Duration::ZERO,
    );
    let service = RobotsLayer::builder("FooBot")
        .overlong_crawl_delay(OverlongCrawlDelay::Honour)
        .build()
        .layer(site.service());
    send(&service, "http://a.example/1").await.unwrap();
    let response = send(&service, "http://a.example/2").await.unwrap();
    let info = response.extensions().get::<RobotsInfo>().unwrap();
    assert_eq!(info.interval(), Duration::from_secs(86_400));
    assert_eq!(info.waited(), Duration::from_secs(86_400));
}

#[tokio::test(start_paused = true)]
async fn a_slow_server_gets_the_interval_after_it_answers() {
    for (spacing, gap) in [
        (Spacing::FromEnd, Duration::from_secs(4)),
        (Spacing::StartToStart, Duration::from_secs(3)),
    ] {
        // The server takes 3 s to answer; Crawl-delay asks for 1 s.
        let site = memory_site(
            vec![("slow.example", host("User-agent: *\nCrawl-delay: 1\n"))],
            Duration::from_secs(3),
        );
        // (The adaptive delay, tested on its own, is off: this is about spacing.)
        let service = RobotsLayer::builder("FooBot")
            .spacing(spacing)
            .delay_factor(0.0)
            .build()
            .layer(site.service());
        for i in 0..3 {
            send(&service, &format!("http://slow.example/{i}"))
                .await
                .unwrap();
        }
        let starts = site.starts("slow.example");
        let gaps: Vec<Duration> = starts.windows(2).map(|w| w[1] - w[0]).collect();
        assert_eq!(gaps, [gap, gap], "{spacing:?}");
    }
}

#[tokio::test(start_paused = true)]
async fn a_trailing_dot_names_the_same_origin() {
    let site = memory_site(
        vec![("a.example", host("User-agent: *\nDisallow: /private\n"))],
        Duration::ZERO,
    );
    let service = RobotsLayer::builder("FooBot").build().layer(site.service());
    send(&service, "http://a.example/1").await.unwrap();
    let response = send(&service, "http://a.example./2").await.unwrap();
    let info = response.extensions().get::<RobotsInfo>().unwrap();
    assert_eq!(info.origin().as_str(), "http://a.example");
    assert_eq!(info.waited(), Duration::from_secs(1), "one pacing for both");
    // No X-Robots-Tag: no page directives, none for this crawler.
    assert_eq!(info.page(), &robots_core::PageDirectives::default());
    assert_eq!(info.directives(), &robots_core::Directives::default());
    assert!(matches!(
        send(&service, "http://a.example./private/x")
            .await
            .unwrap_err()
            .downcast_ref::<RobotsError>(),
        Some(RobotsError::Disallowed { .. })
    ));
    assert_eq!(site.requests_for("a.example", "/robots.txt"), 1);
    assert_eq!(site.requests_for("a.example.", "/robots.txt"), 0);
}

#[tokio::test(start_paused = true)]
async fn retry_after_pauses_only_that_origin() {
    let mut throttling = host("User-agent: *\nDisallow:\n");
    throttling.throttle_once = Some(("/first", "30"));
    let site = memory_site(
        vec![("busy.example", throttling), ("calm.example", host(""))],
        Duration::ZERO,
    );
    let layer = RobotsLayer::builder("FooBot").build();
    let service = layer.layer(site.service());
    let started = Instant::now();
    let response = send(&service, "http://busy.example/first").await.unwrap();
    assert_eq!(response.status(), 429);
    let busy = robots_fetch::Origin::parse("http://busy.example").unwrap();
    assert!(layer.paused_until(&busy).is_some());
    // The other origin goes on at once (its robots.txt, then its page a second later).
    send(&service, "http://calm.example/x").await.unwrap();
    assert!(Instant::now() - started < Duration::from_secs(3));
    // The throttled origin waits out Retry-After.
    let response = send(&service, "http://busy.example/second").await.unwrap();
    assert_eq!(response.status(), 200);
    let starts = site.starts("busy.example");
    assert!(
        starts[1] - starts[0] >= Duration::from_secs(30),
        "{:?}",
        starts[1] - starts[0]
    );
    // The success ended the pause.
    assert!(layer.paused_until(&busy).is_none());
}

#[tokio::test(start_paused = true)]
async fn repeated_503_without_retry_after_backs_off_exponentially() {
    let mut failing = host("");
    failing.pages.insert("/x", (503, vec![]));
    let site = memory_site(vec![("down.example", failing)], Duration::ZERO);
    let service = RobotsLayer::builder("FooBot")
        .min_delay(Duration::ZERO)
        .backoff(Duration::from_secs(5), Duration::from_secs(60))
        .build()
        .layer(site.service());
    for _ in 0..4 {
        assert_eq!(
            send(&service, "http://down.example/x")
                .await
                .unwrap()
                .status(),
            503
        );
    }
    let starts = site.starts("down.example");
    let gaps: Vec<Duration> = starts.windows(2).map(|w| w[1] - w[0]).collect();
    // Each pause varied by -10%…+10%.
    for (gap, nominal) in gaps.iter().zip([5.0, 10.0, 20.0]) {
        let secs = gap.as_secs_f64();
        assert!(secs >= nominal * 0.9 && secs <= nominal * 1.1, "{gaps:?}");
    }
    assert_eq!(gaps.len(), 3);
}

#[tokio::test(start_paused = true)]
async fn the_concurrency_limit_holds() {
    let site = memory_site(vec![("a.example", host(""))], Duration::from_secs(1));
    let service = RobotsLayer::builder("FooBot")
        .min_delay(Duration::ZERO)
        .concurrency(2)
        .build()
        .layer(site.service());
    let tasks: Vec<_> = (0..10)
        .map(|i| {
            let service = service.clone();
            tokio::spawn(async move {
                send(&service, &format!("http://a.example/{i}"))
                    .await
                    .map(|_| ())
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap().unwrap();
    }
    assert_eq!(site.max_in_flight(), 2);
    assert_eq!(site.starts("a.example").len(), 10);
}

#[tokio::test(start_paused = true)]
async fn robots_txt_is_fetched_once_under_1000_concurrent_requests() {
    let site = memory_site(
        vec![("a.example", host("User-agent: *\nDisallow: /no\n"))],
        Duration::from_millis(50),
    );
    let service = RobotsLayer::builder("FooBot")
        .min_delay(Duration::ZERO)
        .concurrency(1000)
        .build()
        .layer(site.service());
    let tasks: Vec<_> = (0..1000)
        .map(|i| {
            let service = service.clone();
            tokio::spawn(async move {
                send(&service, &format!("http://a.example/{i}"))
                    .await
                    .is_ok()
            })
        })
        .collect();
    for task in tasks {
        assert!(task.await.unwrap());
    }
    assert_eq!(site.requests_for("a.example", "/robots.txt"), 1);
}

/// Nothing is decided before a future is first polled: with one request in flight per origin,
/// awaiting a later request's future must not wait for an earlier one that was never polled.
#[tokio::test(start_paused = true)]
async fn a_future_takes_its_turn_when_polled_not_when_created() {
    let site = memory_site(vec![("a.example", host(""))], Duration::ZERO);
    // No interval: the origin's turn is free whenever nothing is in flight.
    let mut service = RobotsLayer::builder("FooBot")
        .min_delay(Duration::ZERO)
        .build()
        .layer(site.service());
    // robots.txt cached, so the next requests could be decided without waiting.
    send(&service, "http://a.example/0").await.unwrap();
    let first = tower::Service::call(&mut service, get("http://a.example/1"));
    let second = tower::Service::call(&mut service, get("http://a.example/2"));
    let second = tokio::time::timeout(Duration::from_secs(60), second).await;
    assert!(
        second.is_ok_and(|r| r.is_ok()),
        "the second request waited for the first, which was never polled"
    );
    assert_eq!(site.requests_for("a.example", "/1"), 0);
    first.await.unwrap();
    assert_eq!(site.requests_for("a.example", "/1"), 1);
}

/// A port out of range has no origin: the request is refused, never sent to the default
/// port's site, and hosts longer than the layer's fixed buffer still get their origin.
#[tokio::test(start_paused = true)]
async fn a_port_out_of_range_is_refused_and_long_hosts_get_their_origin() {
    // 366 bytes: past the layer's 320-byte buffer for `scheme://host:port`. (Sites are named
    // by `&'static str`; one leaked string per test run.)
    let long_host: &'static str =
        Box::leak(format!("{}example", format!("{}.", "a".repeat(60)).repeat(6)).into_boxed_str());
    let site = memory_site(
        vec![("a.example", host("")), (long_host, host(""))],
        Duration::ZERO,
    );
    let service = RobotsLayer::builder("FooBot")
        .min_delay(Duration::ZERO)
        .build()
        .layer(site.service());
    let error = send(&service, "http://a.example:99999/page")
        .await
        .unwrap_err();
    match error.downcast_ref::<RobotsError>() {
        Some(RobotsError::InvalidOrigin { uri, cause }) => {
            assert_eq!(uri, "http://a.example:99999/page");
            assert_eq!(cause, "invalid port number");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        error.to_string(),
        "`http://a.example:99999/page` has no valid origin, so its robots.txt cannot be read: \
         invalid port number"
    );
    assert_eq!(site.requests_for("a.example", "/robots.txt"), 0);
    assert_eq!(site.requests_for("a.example", "/page"), 0);
    send(&service, &format!("http://{long_host}/page"))
        .await
        .unwrap();
    assert_eq!(site.requests_for(long_host, "/robots.txt"), 1);
    assert_eq!(site.requests_for(long_host, "/page"), 1);
}

#[tokio::test(start_paused = true)]
async fn relative_uris_and_unreachable_robots_txt_have_their_own_errors() {
    let site = memory_site(
        vec![(
            "down.example",
            Host {
                robots: (503, ""),
                ..Default::default()
            },
        )],
        Duration::ZERO,
    );
    let service = RobotsLayer::builder("FooBot").build().layer(site.service());
    let error = send(&service, "/relative/path").await.unwrap_err();
    assert!(
        matches!(error.downcast_ref::<RobotsError>(), Some(RobotsError::RelativeUri { uri }) if uri == "/relative/path")
    );
    let error = send(&service, "http://down.example/page")
        .await
        .unwrap_err();
    match error.downcast_ref::<RobotsError>() {
        Some(RobotsError::RobotsUnreachable {
            origin,
            retry_after,
            unreachable_for,
            cause,
        }) => {
            assert_eq!(origin.as_str(), "http://down.example");
            // (A server that answered is tried again early: 10 s.)
            assert_eq!(*retry_after, Duration::from_secs(10));
            assert_eq!(*unreachable_for, Duration::ZERO);
            assert!(cause.contains("503"), "{cause}");
        }
        other => panic!("{other:?}"),
    }
    // Later in the outage, the refusal says how long it has lasted, and how long is left.
    tokio::time::advance(Duration::from_secs(4)).await;
    let error = send(&service, "http://down.example/page")
        .await
        .unwrap_err();
    match error.downcast_ref::<RobotsError>() {
        Some(RobotsError::RobotsUnreachable {
            retry_after,
            unreachable_for,
            ..
        }) => {
            assert_eq!(*unreachable_for, Duration::from_secs(4));
            assert_eq!(*retry_after, Duration::from_secs(6));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(site.requests_for("down.example", "/page"), 0);
}

#[tokio::test(start_paused = true)]
async fn responses_carry_the_decision_and_page_directives() {
    let mut h = host("User-agent: *\nDisallow: /a\nAllow: /a/open\n");
    h.pages.insert(
        "/a/open",
        (
            200,
            vec![
                ("x-robots-tag", "noarchive"),
                ("x-robots-tag", "foobot: noindex, nofollow"),
            ],
        ),
    );
    let site = memory_site(vec![("a.example", h)], Duration::ZERO);
    let service = RobotsLayer::builder("FooBot/1.0")
        .build()
        .layer(site.service());
    let response = send(&service, "http://a.example/a/open").await.unwrap();
    let info = response.extensions().get::<RobotsInfo>().unwrap();
    let rule = info.rule().unwrap();
    assert_eq!(
        (rule.line, rule.kind, rule.pattern.as_str()),
        (3, robots_core::RuleKind::Allow, Some("/a/open"))
    );
    assert!(matches!(
        info.source(),
        robots_fetch::Source::Parsed { status: 200, .. }
    ));
    assert!(info.directives().noindex && info.directives().nofollow && info.directives().noarchive);
    assert!(!info.page().all.noindex, "noindex was scoped to foobot");
    // The interval after robots.txt's own request.
    assert_eq!(info.waited(), Duration::from_secs(1));
}

#[tokio::test(start_paused = true)]
async fn request_rate_raises_the_interval_too() {
    let site = memory_site(
        vec![("a.example", host("User-agent: *\nRequest-rate: 1/5s\n"))],
        Duration::ZERO,
    );
    let service = RobotsLayer::builder("FooBot").build().layer(site.service());
    for i in 0..3 {
        send(&service, &format!("http://a.example/{i}"))
            .await
            .unwrap();
    }
    let starts = site.starts("a.example");
    assert!(
        starts
            .windows(2)
            .all(|w| w[1] - w[0] >= Duration::from_secs(5))
    );
}

#[tokio::test(start_paused = true)]
async fn layers_can_share_one_cache() {
    let site = memory_site(
        vec![("a.example", host("User-agent: FooBot\nDisallow: /x\n"))],
        Duration::ZERO,
    );
    let cache = robots_fetch::RobotsCache::builder("FooBot/2.0").build();
    let first = RobotsLayer::builder("FooBot/2.0")
        .cache(cache.clone())
        .build()
        .layer(site.service());
    let second = RobotsLayer::builder("FooBot/2.0")
        .cache(cache.clone())
        .build()
        .layer(site.service());
    send(&first, "http://a.example/1").await.unwrap();
    assert!(send(&second, "http://a.example/x").await.is_err());
    assert_eq!(site.requests_for("a.example", "/robots.txt"), 1);
    assert_eq!(cache.stats().fetches, 1);
}

/// A request is in flight until its response body has been read to the end or dropped (what
/// the server sees): the next request to the group waits for that, and the adaptive delay is
/// measured to the last byte. A body kept unread is taken over after the grace, never a
/// deadlock.
#[tokio::test(start_paused = true)]
async fn a_response_body_holds_its_place_until_read_or_dropped() {
    use http_body_util::BodyExt;
    let site = memory_site(vec![("a.example", host(""))], Duration::ZERO);
    let service = RobotsLayer::builder("FooBot")
        .delay_factor(0.0)
        .build()
        .layer(site.service());
    let first = send_unread(&service, "http://a.example/1").await.unwrap();
    assert!(first.body().holds_place());
    let second = tokio::spawn({
        let service = service.clone();
        async move {
            send(&service, "http://a.example/2")
                .await
                .map(|_| Instant::now())
        }
    });
    // Read 3 s later: the second request starts an interval after that, not before.
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(
        site.requests_for("a.example", "/2"),
        0,
        "sent while a body was unread"
    );
    let read_at = Instant::now();
    let body = first.into_body().collect().await.unwrap().to_bytes();
    assert_eq!(body, "page");
    let sent_at = second.await.unwrap().unwrap();
    assert_eq!(sent_at - read_at, Duration::from_secs(1));

    // Dropped unread: the same.
    let third = send_unread(&service, "http://a.example/3").await.unwrap();
    tokio::time::sleep(Duration::from_secs(2)).await;
    let dropped_at = Instant::now();
    drop(third);
    send(&service, "http://a.example/4").await.unwrap();
    assert_eq!(Instant::now() - dropped_at, Duration::from_secs(1));

    // Kept unread while another request waits (a `join_all` of one server's responses): after
    // the grace, the waiting request takes the place over instead of waiting for ever.
    let service = RobotsLayer::builder("FooBot")
        .unread_body_grace(Duration::from_secs(20))
        .build()
        .layer(site.service());
    let kept = send_unread(&service, "http://a.example/5").await.unwrap();
    let started = Instant::now();
    let next = tokio::time::timeout(
        Duration::from_secs(60),
        send(&service, "http://a.example/6"),
    )
    .await
    .expect("no deadlock");
    assert!(next.is_ok());
    assert_eq!(Instant::now() - started, Duration::from_secs(20));
    // The taken place is not given back twice: the group still has one place.
    drop(kept);
    drop(next);
    let a = tokio::spawn({
        let service = service.clone();
        async move { send_unread(&service, "http://a.example/7").await.unwrap() }
    });
    let held = a.await.unwrap();
    let b =
        tokio::time::timeout(Duration::from_secs(5), send(&service, "http://a.example/8")).await;
    assert!(b.is_err(), "two places after a take-over");
    drop(held);
}

#[tokio::test(start_paused = true)]
async fn the_cache_counts_each_request_once() {
    let site = memory_site(vec![("a.example", host(""))], Duration::ZERO);
    let layer = RobotsLayer::builder("FooBot")
        .min_delay(Duration::ZERO)
        .build();
    let service = layer.layer(site.service());
    for i in 0..3 {
        send(&service, &format!("http://a.example/{i}"))
            .await
            .unwrap();
    }
    let stats = layer.cache().stats();
    assert_eq!((stats.hits, stats.misses, stats.fetches), (2, 1, 1));
}

/// A host written in a form the URL parser rewrites (an IPv4 address as `127.1`, one number,
/// hexadecimal) is looked up under its canonical origin: it hits the entry that the plain form
/// filled, instead of missing the cache on every request.
#[tokio::test(start_paused = true)]
async fn hosts_the_url_parser_rewrites_hit_the_canonical_entry() {
    let site = memory_site(vec![("127.0.0.1", host(""))], Duration::ZERO);
    let layer = RobotsLayer::builder("FooBot")
        .min_delay(Duration::ZERO)
        .build();
    let service = layer.layer(site.service());
    for uri in [
        "http://127.0.0.1/0",
        "http://127.1/1",
        "http://2130706433/2",
        "http://0x7f.0.0.1/3",
    ] {
        let response = send(&service, uri).await;
        assert!(response.is_ok_and(|r| r.status() == 200), "{uri}");
    }
    let stats = layer.cache().stats();
    assert_eq!((stats.hits, stats.misses, stats.fetches), (3, 1, 1));
}

/// An enormous Retry-After with an unbounded cap pauses the origin without panicking.
#[tokio::test(start_paused = true)]
async fn huge_retry_after_does_not_overflow() {
    let mut throttling = host("");
    throttling.throttle_once = Some(("/x", "18446744073709551615"));
    let site = memory_site(vec![("a.example", throttling)], Duration::ZERO);
    let layer = RobotsLayer::builder("FooBot")
        .max_retry_after(Duration::MAX)
        .build();
    let service = layer.layer(site.service());
    assert_eq!(
        send(&service, "http://a.example/x").await.unwrap().status(),
        429
    );
    let origin = robots_fetch::Origin::parse("http://a.example").unwrap();
    assert!(
        layer
            .paused_until(&origin)
            .is_some_and(|until| until > Instant::now() + Duration::from_secs(365 * 24 * 3600))
    );
}

#[test]
fn handles_are_shareable_across_threads() {
    fn shareable<T: Send + Sync + Clone + 'static>() {}
    shareable::<RobotsLayer>();
    shareable::<robots_tower::RobotsMiddleware>();
    shareable::<robots_fetch::RobotsCache>();
    shareable::<RobotsError>();
    fn error<T: std::error::Error + Send + Sync + 'static>() {}
    error::<RobotsError>();
}

/// An inner service whose `poll_ready` is pending a number of times (waking at once), or fails.
#[derive(Clone)]
struct Readiness<S> {
    inner: S,
    pending: Arc<AtomicUsize>,
    fail: Arc<std::sync::atomic::AtomicBool>,
}

impl<S> Service<http::Request<Full<Bytes>>> for Readiness<S>
where
    S: Service<http::Request<Full<Bytes>>, Response = Response, Error = BoxError>,
{
    type Response = Response;
    type Error = BoxError;
    type Future = S::Future;

    fn poll_ready(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), BoxError>> {
        if self.fail.load(Ordering::SeqCst) {
            return std::task::Poll::Ready(Err("the inner service is down".into()));
        }
        if self
            .pending
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok()
        {
            cx.waker().wake_by_ref();
            return std::task::Poll::Pending;
        }
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<Full<Bytes>>) -> S::Future {
        self.inner.call(request)
    }
}

/// The inner service's readiness is awaited after the decision: one not ready at first still
/// gets the request, once, with the decision on its response; one that fails to get ready
/// fails the request and frees the origin's turn for the next.
#[tokio::test(start_paused = true)]
async fn an_inner_service_not_ready_or_failing_to_get_ready() {
    let site = memory_site(vec![("a.example", host(""))], Duration::ZERO);
    let inner = Readiness {
        inner: site.service(),
        pending: Arc::new(AtomicUsize::new(0)),
        fail: Arc::default(),
    };
    let (pending, fail) = (inner.pending.clone(), inner.fail.clone());
    let service = RobotsLayer::builder("FooBot").build().layer(inner);
    send(&service, "http://a.example/0").await.unwrap();

    tokio::time::advance(Duration::from_secs(1)).await;
    pending.store(3, Ordering::SeqCst);
    let response = send(&service, "http://a.example/1").await.unwrap();
    assert_eq!(
        pending.load(Ordering::SeqCst),
        0,
        "readiness was polled until ready"
    );
    assert_eq!(site.requests_for("a.example", "/1"), 1);
    assert!(response.extensions().get::<RobotsInfo>().is_some());
    // (Its body holds the request's place until dropped.)
    drop(response);

    tokio::time::advance(Duration::from_secs(1)).await;
    fail.store(true, Ordering::SeqCst);
    let error = send(&service, "http://a.example/2").await.unwrap_err();
    assert_eq!(error.to_string(), "the inner service is down");
    assert_eq!(site.requests_for("a.example", "/2"), 0);

    fail.store(false, Ordering::SeqCst);
    let next = tokio::time::timeout(Duration::from_secs(5), send(&service, "http://a.example/3"));
    assert!(
        next.await.is_ok_and(|r| r.is_ok()),
        "the failed request gave its turn back"
    );
}

/// Politeness groups (REP.md section 8) through the layer: the host by default (two ports
/// share), the origin by choice, the registrable domain by the Public Suffix List.
#[tokio::test(start_paused = true)]
async fn requests_are_paced_per_politeness_group() {
    use robots_tower::PolitenessKey;
    let hosts = [
        "a.example",
        "a.shop.co.uk",
        "b.shop.co.uk",
        "x.co.uk",
        "y.co.uk",
        "n1.example",
        "n2.example",
    ];
    let site = memory_site(
        hosts.iter().map(|h| (*h, host(""))).collect(),
        Duration::ZERO,
    );
    let gap = |key: PolitenessKey, first: &'static str, second: &'static str| {
        let site = site.clone();
        async move {
            // Two names of one address, for the address key.
            let resolver = robots_tower::Resolver::new()
                .with_override_text("n1.example:80:10.0.0.7")
                .and_then(|r| r.with_override_text("n2.example:80:10.0.0.7"))
                .unwrap();
            let service = RobotsLayer::builder("FooBot")
                .politeness_key(key)
                .resolver(resolver)
                .delay_factor(0.0)
                .build()
                .layer(site.service());
            // Warm the robots.txt of both, then time two page requests sent together.
            send(&service, first).await.unwrap();
            send(&service, second).await.unwrap();
            tokio::time::advance(Duration::from_secs(5)).await;
            let started = Instant::now();
            let (a, b) = tokio::join!(send(&service, first), send(&service, second));
            a.unwrap();
            b.unwrap();
            Instant::now() - started
        }
    };
    let one_second = Duration::from_secs(1);
    // Two ports of one host: one budget by default, two by origin.
    let (port, other_port) = ("http://a.example/p", "http://a.example:8080/p");
    assert_eq!(gap(PolitenessKey::Host, port, other_port).await, one_second);
    assert_eq!(
        gap(PolitenessKey::Origin, port, other_port).await,
        Duration::ZERO
    );
    // Two subdomains of one registrable domain: one budget by domain, two by host.
    let (a, b) = ("https://a.shop.co.uk/p", "https://b.shop.co.uk/p");
    assert_eq!(gap(PolitenessKey::Domain, a, b).await, one_second);
    assert_eq!(gap(PolitenessKey::Host, a, b).await, Duration::ZERO);
    // Two registrable domains under one public suffix: two budgets.
    let (x, y) = ("https://x.co.uk/p", "https://y.co.uk/p");
    assert_eq!(gap(PolitenessKey::Domain, x, y).await, Duration::ZERO);
    // Two names of one address: one budget by address, two by host.
    let (n1, n2) = ("http://n1.example/p", "http://n2.example/p");
    assert_eq!(gap(PolitenessKey::Ip, n1, n2).await, one_second);
    assert_eq!(gap(PolitenessKey::Host, n1, n2).await, Duration::ZERO);
}

/// A 5xx and a failed request (a reset, a timeout of the inner service) pause the group with an
/// exponential, jittered back-off; a later success ends the streak.
#[tokio::test(start_paused = true)]
async fn distress_and_network_errors_back_off_through_the_layer() {
    let default = RobotsLayer::builder("FooBot")
        .min_delay(Duration::ZERO)
        .delay_factor(0.0)
        .backoff(Duration::from_millis(400), Duration::from_millis(1600));
    let gaps = distress_gaps(default).await;
    for (gap, nominal) in gaps.iter().zip([400.0, 800.0, 1600.0, 1600.0]) {
        let ms = gap.as_secs_f64() * 1000.0;
        assert!(ms >= nominal * 0.9 && ms <= nominal * 1.1, "{gaps:?}");
    }
    // The CHANGELOG's way back to the old behaviour: only 429/503, no network errors.
    let old = RobotsLayer::builder("FooBot")
        .min_delay(Duration::ZERO)
        .delay_factor(-1.0) // counts as 0
        .backoff_statuses([429, 503])
        .backoff_on_network_errors(false);
    assert_eq!(distress_gaps(old).await, [Duration::ZERO; 4]);
}

/// The gaps between five requests answered 500, a reset, 502, a timeout, then 200.
async fn distress_gaps(config: robots_tower::RobotsConfig) -> Vec<Duration> {
    let log: Arc<Mutex<Vec<Instant>>> = Arc::default();
    let count = Arc::new(AtomicUsize::new(0));
    let inner = {
        let log = log.clone();
        tower::service_fn(move |request: http::Request<Full<Bytes>>| {
            let (log, count) = (log.clone(), count.clone());
            async move {
                let respond = |status: u16| {
                    let mut response = http::Response::new(Full::new(Bytes::new()));
                    *response.status_mut() = http::StatusCode::from_u16(status).unwrap();
                    Ok::<Response, BoxError>(response)
                };
                if request.uri().path() == "/robots.txt" {
                    return respond(404);
                }
                log.lock().unwrap().push(Instant::now());
                match count.fetch_add(1, Ordering::SeqCst) {
                    0 => respond(500),
                    1 => Err(std::io::Error::from(std::io::ErrorKind::ConnectionReset).into()),
                    2 => respond(502),
                    3 => Err(tower::timeout::error::Elapsed::new().into()),
                    _ => respond(200),
                }
            }
        })
    };
    let service = config.build().layer(inner);
    for _ in 0..5 {
        let _ = send(&service, "http://down.example/x").await;
    }
    let starts = log.lock().unwrap().clone();
    let gaps: Vec<Duration> = starts.windows(2).map(|w| w[1] - w[0]).collect();
    assert_eq!(gaps.len(), 4);
    gaps
}

/// Rate-limit headers that say nothing is left pause the group until their reset, and
/// `RobotsInfo` says so; a slow server spaces the next request by the delay factor.
#[tokio::test(start_paused = true)]
async fn rate_limits_and_slow_answers_slow_the_layer() {
    let mut limited = host("");
    limited.pages.insert(
        "/limited",
        (
            200,
            vec![("x-ratelimit-remaining", "0"), ("x-ratelimit-reset", "7")],
        ),
    );
    let site = memory_site(vec![("rl.example", limited)], Duration::ZERO);
    let service = RobotsLayer::builder("FooBot")
        .min_delay(Duration::ZERO)
        .build()
        .layer(site.service());
    let response = send(&service, "http://rl.example/limited").await.unwrap();
    let info = response.extensions().get::<RobotsInfo>().unwrap();
    assert_eq!(
        info.pause(),
        Some(robots_tower::GroupPause {
            duration: Duration::from_secs(7),
            reason: robots_tower::PauseReason::RateLimit,
        })
    );
    send(&service, "http://rl.example/next").await.unwrap();
    let starts = site.starts("rl.example");
    assert_eq!(starts[1] - starts[0], Duration::from_secs(7));
    // Unless told to ignore them.
    let ignoring = RobotsLayer::builder("FooBot")
        .min_delay(Duration::ZERO)
        .rate_limit_headers(false)
        .build()
        .layer(site.service());
    let response = send(&ignoring, "http://rl.example/limited").await.unwrap();
    assert_eq!(
        response.extensions().get::<RobotsInfo>().unwrap().pause(),
        None
    );
    send(&ignoring, "http://rl.example/next").await.unwrap();
    let starts = site.starts("rl.example");
    assert_eq!(starts[3] - starts[2], Duration::ZERO);

    // The server takes 3 s: the next request waits 3 s more (factor 1), 6 s with factor 2.
    for (factor, gap) in [(1.0, 6), (2.0, 9)] {
        let site = memory_site(vec![("slow.example", host(""))], Duration::from_secs(3));
        let service = RobotsLayer::builder("FooBot")
            .min_delay(Duration::from_millis(100))
            .delay_factor(factor)
            .build()
            .layer(site.service());
        for i in 0..2 {
            send(&service, &format!("http://slow.example/{i}"))
                .await
                .unwrap();
        }
        let starts = site.starts("slow.example");
        assert_eq!(
            starts[1] - starts[0],
            Duration::from_secs(gap),
            "factor {factor}"
        );
    }
}

/// Through the layer (robots.txt fetched through the same inner service): a refresh asks with
/// the copy's validators, and after a `304 Not Modified` the kept rules still refuse.
#[tokio::test(start_paused = true)]
async fn a_refresh_asks_with_the_validators_and_a_304_keeps_refusing() {
    // The conditional headers of each robots.txt request.
    let asked: Arc<Mutex<Vec<Option<String>>>> = Arc::default();
    let pages = Arc::new(AtomicUsize::new(0));
    let inner = tower::service_fn({
        let (asked, pages) = (asked.clone(), pages.clone());
        move |request: http::Request<Full<Bytes>>| {
            let response = if request.uri().path() == "/robots.txt" {
                let etag = request
                    .headers()
                    .get(http::header::IF_NONE_MATCH)
                    .map(|v| v.to_str().unwrap().to_string());
                let unchanged = etag.as_deref() == Some("\"v1\"");
                asked.lock().unwrap().push(etag);
                let builder = http::Response::builder()
                    .header("etag", "\"v1\"")
                    .header("cache-control", "max-age=60");
                if unchanged {
                    builder.status(304).body(Full::default())
                } else {
                    builder.body(Full::new(Bytes::from_static(
                        b"User-agent: *\nDisallow: /private\n",
                    )))
                }
            } else {
                pages.fetch_add(1, Ordering::SeqCst);
                http::Response::builder().body(Full::new(Bytes::from_static(b"page")))
            };
            std::future::ready(Ok::<_, BoxError>(response.unwrap()))
        }
    });
    let layer = RobotsLayer::builder("FooBot/1.0")
        .min_delay(Duration::ZERO)
        .build();
    let service = layer.layer(inner);
    let refused = |result: Result<http::Response<Bytes>, BoxError>| {
        matches!(
            result.map_err(|e| e.downcast::<RobotsError>().map(|e| *e)),
            Err(Ok(RobotsError::Disallowed { .. }))
        )
    };
    assert!(send(&service, "http://a.example/page").await.is_ok());
    assert!(refused(send(&service, "http://a.example/private/x").await));

    tokio::time::advance(Duration::from_secs(61)).await;
    let response = send(&service, "http://a.example/page").await.unwrap();
    assert!(matches!(
        response.extensions().get::<RobotsInfo>().unwrap().source(),
        robots_fetch::Source::Parsed {
            status: 200,
            not_modified: true,
            ..
        }
    ));
    assert!(refused(send(&service, "http://a.example/private/y").await));
    assert_eq!(*asked.lock().unwrap(), [None, Some("\"v1\"".to_string())]);
    assert_eq!(pages.load(Ordering::SeqCst), 2, "/private never requested");
    let stats = layer.cache().stats();
    assert_eq!(
        (stats.revalidations, stats.not_modified, stats.errors),
        (1, 1, 0)
    );
}
