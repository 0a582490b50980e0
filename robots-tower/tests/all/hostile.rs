//! Property: no value a server sends can panic the crawler, stall it past a documented cap, or
//! shorten a pause (REP.md section 8, "bounded by construction"). Arbitrary `Retry-After`,
//! `RateLimit`, `RateLimit-Policy`, `X-RateLimit-*`, `RateLimit-*` and `Cache-Control` values,
//! and arbitrary `Crawl-delay` and `Request-rate` values, go through the layer and the hooks
//! under each overlong policy, on paused time; and through the middleware on the wire, in
//! process and on a real Redis.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use proptest::prelude::*;
use robots_fetch::{BoxError, Origin, ServiceClient};
use robots_tower::{OverlongCrawlDelay, RobotsError, RobotsInfo, RobotsLayer};
use tokio::time::Instant;
use tower::{Layer, ServiceExt};

/// The caps the pauses are documented under, as configured here.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(600);
const BACKOFF_MAX: Duration = Duration::from_secs(300);

/// A header value a hostile or careless server might send: numbers of every size and sign,
/// decimals, dates, Structured Field lists with good and bad members, and noise.
fn header_value() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<u64>().prop_map(|n| n.to_string()),
        "[0-9]{1,30}",
        "-?[0-9]{1,20}\\.[0-9]{0,12}",
        Just("Thu, 01 Jan 1970 00:00:00 GMT".to_string()),
        Just("Fri, 31 Dec 9999 23:59:59 GMT".to_string()),
        "\"[a-z]{1,5}\";r=-?[0-9]{1,20};t=-?[0-9]{1,25}(\\.[0-9]{1,4})?(, \"[a-z]{1,5}\";r=0)?",
        "\"[a-z]{1,5}\";q=[0-9]{1,20};w=-?[0-9]{1,25}",
        "(max-age=-?[0-9]{1,30}|no-cache|private)(, [a-z-]{1,10})?",
        "[ -~]{0,40}",
    ]
}

/// A Crawl-delay or Request-rate line with any value.
fn delay_line() -> impl Strategy<Value = String> {
    prop_oneof![
        "[0-9]{1,30}(\\.[0-9]{1,10})?".prop_map(|v| format!("Crawl-delay: {v}")),
        "[0-9]{1,25}/[0-9]{1,25}[smhd]?".prop_map(|v| format!("Request-rate: {v}")),
        "[ -~]{0,20}".prop_map(|v| format!("Crawl-delay: {v}")),
    ]
}

/// Each policy for an overlong Crawl-delay.
fn overlong_policy() -> impl Strategy<Value = OverlongCrawlDelay> {
    prop_oneof![
        Just(OverlongCrawlDelay::Refuse),
        Just(OverlongCrawlDelay::Honour),
        Just(OverlongCrawlDelay::Clamp),
    ]
}

const NAMES: [&str; 9] = [
    "retry-after",
    "ratelimit",
    "ratelimit-policy",
    "x-ratelimit-remaining",
    "x-ratelimit-reset",
    "ratelimit-remaining",
    "ratelimit-reset",
    "cache-control",
    "x-ratelimit-reset",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, .. ProptestConfig::default() })]

    #[test]
    fn no_server_value_panics_stalls_or_shortens_a_pause(
        status in prop_oneof![Just(200u16), Just(429u16), Just(503u16), Just(500u16)],
        headers in proptest::collection::vec((0..NAMES.len(), header_value()), 0..6),
        delay in delay_line(),
        policy in overlong_policy(),
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .unwrap();
        runtime.block_on(one_case(status, headers, delay, policy));
    }
}

async fn one_case(
    status: u16,
    headers: Vec<(usize, String)>,
    delay: String,
    policy: OverlongCrawlDelay,
) {
    let robots = format!("User-agent: *\n{delay}\nAllow: /\n");
    let answer_headers = headers.clone();
    let site = tower::service_fn(move |request: http::Request<Full<Bytes>>| {
        let robots = robots.clone();
        let headers = answer_headers.clone();
        async move {
            let mut response = http::Response::builder();
            let body = if request.uri().path() == "/robots.txt" {
                // robots.txt answers with the same hostile headers.
                for (name, value) in &headers {
                    if let Ok(value) = http::HeaderValue::from_str(value) {
                        response = response.header(NAMES[*name], value);
                    }
                }
                robots
            } else {
                response = response.status(status);
                for (name, value) in &headers {
                    if let Ok(value) = http::HeaderValue::from_str(value) {
                        response = response.header(NAMES[*name], value);
                    }
                }
                "page".to_string()
            };
            Ok::<_, BoxError>(response.body(Full::new(Bytes::from(body)))?)
        }
    });
    let layer = RobotsLayer::builder("FooBot")
        .overlong_crawl_delay(policy)
        .build();
    let service = layer.clone().layer(site.clone());
    let hooks = layer.hooks_with(ServiceClient::<_, Full<Bytes>, Full<Bytes>>::new(site));
    let origin = Origin::parse("http://a.example").unwrap();
    let get = |path: &str| {
        http::Request::get(format!("http://a.example{path}"))
            .body(Full::default())
            .unwrap()
    };
    // Through the layer: the first page, then a second, each read to its end.
    for path in ["/1", "/2"] {
        let started = Instant::now();
        match service.clone().oneshot(get(path)).await {
            Ok(response) => {
                if let Some(pause) = response
                    .extensions()
                    .get::<RobotsInfo>()
                    .and_then(|i| i.pause())
                {
                    assert!(
                        pause.duration <= MAX_RETRY_AFTER.max(BACKOFF_MAX),
                        "a pause of {pause:?} above its cap"
                    );
                }
                response.into_body().collect().await.unwrap();
            }
            Err(error) => match error.downcast_ref::<RobotsError>() {
                // Refused by policy, or robots.txt unreachable: typed, nothing sent.
                Some(_) => {}
                None => panic!("an untyped failure: {error}"),
            },
        }
        // No wait longer than two days (the longest interval, once for a robots.txt refresh
        // that a day's wait makes due and once for the page) plus the longest pause.
        assert!(
            started.elapsed() <= Duration::from_secs(2 * 24 * 3600) + MAX_RETRY_AFTER,
            "waited {:?}",
            started.elapsed()
        );
    }
    // Through the hooks: the same response learnt from after the fact.
    let mut map = http::HeaderMap::new();
    for (name, value) in &headers {
        if let Ok(value) = http::HeaderValue::from_str(value) {
            map.append(NAMES[*name], value);
        }
    }
    hooks.observe(&origin, status, &map);
    if let Some(until) = layer.paused_until(&origin) {
        assert!(
            until.saturating_duration_since(Instant::now()) <= MAX_RETRY_AFTER.max(BACKOFF_MAX),
            "paused until {:?} from now",
            until.saturating_duration_since(Instant::now())
        );
    }
}

/// The statuses a case's page answers with, as the raw site writes them.
const STATUS_LINES: [&str; 4] = [
    "200 OK",
    "429 Too Many Requests",
    "503 Service Unavailable",
    "500 Internal Server Error",
];

proptest! {
    // Each case is a real server and real time (a short one): fewer cases than in process.
    #![proptest_config(ProptestConfig { cases: 12, .. ProptestConfig::default() })]

    /// The same property through the reqwest middleware on the wire, in process and on a real
    /// Redis: no panic, every failure typed, every pause within its cap, and (fleet) no value
    /// reaching the scripts that Redis refuses as an outage.
    #[test]
    fn no_server_value_panics_or_shortens_a_pause_through_the_middleware(
        status in 0..STATUS_LINES.len(),
        headers in proptest::collection::vec((0..NAMES.len(), header_value()), 0..6),
        delay in delay_line(),
        policy in overlong_policy(),
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(middleware_case(status, headers, delay, policy));
    }
}

async fn middleware_case(
    status: usize,
    headers: Vec<(usize, String)>,
    delay: String,
    policy: OverlongCrawlDelay,
) {
    use crate::site::{Answer, Site};
    use robots_tower::RobotsMiddleware;

    let (captured, _logs) = crate::captured::capture_logs(tracing::Level::WARN);
    // Header lines the raw site can write (printable, no line breaks).
    let lines: Vec<String> = headers
        .iter()
        .filter(|(_, value)| http::HeaderValue::from_str(value).is_ok())
        .map(|(name, value)| format!("{}: {value}", NAMES[*name]))
        .collect();
    let robots = format!("User-agent: *\n{delay}\nAllow: /\n");
    // In process, and (feature `redis`) on a real Redis.
    #[cfg(feature = "redis")]
    let redis = crate::redis_server::RedisServer::start();
    #[cfg(feature = "redis")]
    let fleets: Vec<Option<String>> = std::iter::once(None)
        .chain(redis.as_ref().map(|r| Some(r.url())))
        .collect();
    #[cfg(not(feature = "redis"))]
    let fleets: Vec<Option<String>> = vec![None];
    for fleet in fleets {
        let (lines, robots) = (lines.clone(), robots.clone());
        let site = Site::start(move |target, _| {
            let header_lines: Vec<&str> = lines.iter().map(String::as_str).collect();
            let mut answer = if target == "/robots.txt" {
                Answer::ok(robots.clone())
            } else {
                Answer::status(STATUS_LINES[status], &[])
            };
            answer
                .headers
                .extend(header_lines.iter().map(|l| (*l).to_string()));
            answer
        })
        .await;
        #[cfg_attr(not(feature = "redis"), allow(unused_mut))]
        let mut builder = RobotsMiddleware::builder("FooBot")
            .overlong_crawl_delay(policy)
            .min_delay(Duration::from_millis(1))
            .max_delay(Duration::from_millis(200));
        #[cfg(feature = "redis")]
        if let Some(url) = &fleet {
            builder = builder.fleet(&robots_tower::RedisFleet::new(url).expect("a Redis URL"));
        }
        let client = builder.build_client().expect("a client");
        for path in ["/1", "/2"] {
            // Real time: a case that asks for a long interval (honoured) is left waiting.
            let sent =
                tokio::time::timeout(Duration::from_secs(1), client.get(site.url(path)).send());
            match sent.await {
                Err(_) => break,
                Ok(Ok(response)) => {
                    if let Some(pause) = response
                        .extensions()
                        .get::<RobotsInfo>()
                        .and_then(|i| i.pause())
                    {
                        assert!(
                            pause.duration <= MAX_RETRY_AFTER.max(BACKOFF_MAX),
                            "a pause of {pause:?} above its cap"
                        );
                    }
                    let _ = response.bytes().await;
                }
                Ok(Err(error)) => assert!(
                    RobotsError::from_middleware_error(&error).is_some()
                        || matches!(error, reqwest_middleware::Error::Reqwest(_)),
                    "an untyped failure: {error:?}"
                ),
            }
        }
        let logs = captured.text();
        assert!(
            !logs.contains("Redis is unreachable") && !logs.contains("Redis refused"),
            "fleet={fleet:?}: {logs}"
        );
    }
}
