//! The metrics (feature `metrics`), read back from a debugging recorder installed for this
//! thread while a few requests go through the layer on paused time.
#![cfg(feature = "metrics")]

use crate::support;

use metrics_util::debugging::{DebugValue, DebuggingRecorder};

/// What the metrics recorded while `walk` ran on a paused clock.
fn recorded<F: std::future::Future<Output = ()>>(
    walk: impl FnOnce() -> F,
) -> Vec<(
    metrics_util::CompositeKey,
    Option<metrics::Unit>,
    Option<metrics::SharedString>,
    DebugValue,
)> {
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    metrics::with_local_recorder(&recorder, || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .unwrap();
        runtime.block_on(walk());
    });
    snapshotter.snapshot().into_vec()
}

#[test]
fn decisions_fetches_waits_pauses_and_cache_size_are_measured() {
    let snapshot = recorded(support::walk::walk_through_the_layer);
    let value = |name: &str, label: Option<(&str, &str)>| {
        snapshot
            .iter()
            .find(|(key, _, _, _)| {
                key.key().name() == name
                    && label.is_none_or(|(k, v)| {
                        key.key().labels().any(|l| l.key() == k && l.value() == v)
                    })
            })
            .map(|(_, _, _, value)| value)
    };
    assert_eq!(
        value("robots_decisions_total", Some(("outcome", "allowed"))),
        Some(&DebugValue::Counter(3))
    );
    assert_eq!(
        value("robots_decisions_total", Some(("outcome", "disallowed"))),
        Some(&DebugValue::Counter(1))
    );
    assert_eq!(
        value("robots_fetches_total", Some(("outcome", "parsed"))),
        Some(&DebugValue::Counter(1))
    );
    assert_eq!(
        value("robots_pauses_total", Some(("status", "429"))),
        Some(&DebugValue::Counter(1))
    );
    match value("robots_politeness_wait_seconds", None) {
        Some(DebugValue::Histogram(waits)) => {
            assert_eq!(waits.len(), 3);
            assert!(waits.iter().any(|w| w.into_inner() >= 0.099), "{waits:?}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        value("robots_cache_entries", None),
        Some(&DebugValue::Gauge(1.0.into()))
    );
    match value("robots_cache_bytes", None) {
        Some(DebugValue::Gauge(bytes)) => assert!(bytes.into_inner() > 100.0),
        other => panic!("{other:?}"),
    }
}

/// Schedule mode: a request refused because its origin is not ready is counted once as
/// not ready (with the reason), and its robots.txt verdict once; no decision is counted twice.
#[test]
fn a_request_refused_as_not_ready_is_counted_once_as_such() {
    use std::time::Duration;

    use bytes::Bytes;
    use http_body_util::Full;
    use robots_fetch::BoxError;
    use robots_tower::{RobotsError, RobotsLayer, WhenNotReady};
    use support::walk::get;
    use tower::{Layer, ServiceExt};

    let snapshot = recorded(|| async {
        let site = tower::service_fn(|_: http::Request<Full<Bytes>>| async {
            Ok::<_, BoxError>(http::Response::new(Full::new(Bytes::from_static(b""))))
        });
        // robots.txt known already: its own request would make the first page not ready too.
        let cache = robots_fetch::RobotsCache::builder("FooBot").build();
        cache.insert(
            &robots_fetch::Origin::parse("http://a.example").unwrap(),
            b"User-agent: *\nAllow: /\n",
        );
        let service = RobotsLayer::builder("FooBot")
            .cache(cache)
            .min_delay(Duration::from_secs(1))
            .when_not_ready(WhenNotReady::Fail)
            .build()
            .layer(site);
        // robots.txt is fetched for the first; the second comes within the interval.
        service.clone().oneshot(get("/one")).await.unwrap();
        let refused = service.clone().oneshot(get("/two")).await.unwrap_err();
        assert!(matches!(
            refused.downcast_ref::<RobotsError>(),
            Some(RobotsError::NotReady { .. })
        ));
    });
    let counters: Vec<(String, Vec<String>, u64)> = snapshot
        .iter()
        .filter_map(|(key, _, _, value)| match value {
            DebugValue::Counter(n) if key.key().name().starts_with("robots_") => Some((
                key.key().name().to_string(),
                key.key()
                    .labels()
                    .map(|l| format!("{}={}", l.key(), l.value()))
                    .collect(),
                *n,
            )),
            _ => None,
        })
        .filter(|(name, _, _)| name != "robots_fetches_total")
        .collect();
    let mut counters = counters;
    counters.sort();
    assert_eq!(
        counters,
        [
            (
                "robots_decisions_total".to_string(),
                vec!["outcome=allowed".to_string()],
                2
            ),
            (
                "robots_not_ready_total".to_string(),
                vec!["reason=spacing".to_string()],
                1
            ),
        ]
    );
}

/// A request refused for an overlong Crawl-delay counts once, as `crawl_delay_too_long` (it
/// was counted `allowed` too), and two caches' gauges are two series told apart by `cache`.
#[test]
fn an_overlong_crawl_delay_counts_once_and_caches_are_told_apart() {
    use bytes::Bytes;
    use http_body_util::Full;
    use robots_fetch::{BoxError, RobotsCache};
    use robots_tower::{RobotsError, RobotsLayer};
    use support::walk::get;
    use tower::{Layer, ServiceExt};

    let site = || {
        tower::service_fn(|request: http::Request<Full<Bytes>>| async move {
            let body = if request.uri().path() == "/robots.txt" {
                "User-agent: *\nCrawl-delay: 90\n"
            } else {
                ""
            };
            Ok::<_, BoxError>(http::Response::new(Full::new(Bytes::from_static(
                body.as_bytes(),
            ))))
        })
    };
    let snapshot = recorded(|| async move {
        let service = RobotsLayer::builder("FooBot")
            .cache(RobotsCache::builder("FooBot").metrics_name("first").build())
            .build()
            .layer(site());
        let refused = service.clone().oneshot(get("/page")).await.unwrap_err();
        assert!(matches!(
            refused.downcast_ref::<RobotsError>(),
            Some(RobotsError::CrawlDelayTooLong { .. })
        ));
        // A second cache, holding two origins.
        let other = RobotsCache::builder("FooBot")
            .metrics_name("second")
            .build();
        let client = robots_fetch::ServiceClient::<_, Full<Bytes>, Full<Bytes>>::new(site());
        for origin in ["http://a.example", "http://b.example"] {
            other
                .fetch(&client, &robots_fetch::Origin::parse(origin).unwrap())
                .await;
        }
    });
    let series = |name: &str| -> Vec<(Vec<String>, String)> {
        let mut found: Vec<_> = snapshot
            .iter()
            .filter(|(key, _, _, _)| key.key().name() == name)
            .map(|(key, _, _, value)| {
                (
                    key.key()
                        .labels()
                        .map(|l| format!("{}={}", l.key(), l.value()))
                        .collect(),
                    match value {
                        DebugValue::Counter(n) => n.to_string(),
                        DebugValue::Gauge(g) => g.into_inner().to_string(),
                        DebugValue::Histogram(h) => format!("{} values", h.len()),
                    },
                )
            })
            .collect();
        found.sort();
        found
    };
    assert_eq!(
        series("robots_decisions_total"),
        [(
            vec!["outcome=crawl_delay_too_long".to_string()],
            "1".to_string()
        )]
    );
    assert_eq!(
        series("robots_cache_entries"),
        [
            (vec!["cache=first".to_string()], "1".to_string()),
            (vec!["cache=second".to_string()], "2".to_string()),
        ]
    );
}

/// A refresh answered `304 Not Modified`: one conditional refresh, one `not_modified` fetch.
#[test]
fn a_conditional_refresh_and_its_304_are_counted() {
    use std::time::Duration;

    use bytes::Bytes;
    use http_body_util::Full;
    use robots_fetch::BoxError;
    use robots_tower::RobotsLayer;
    use support::walk::get;
    use tower::{Layer, ServiceExt};

    let snapshot = recorded(|| async {
        let site = tower::service_fn(|request: http::Request<Full<Bytes>>| async move {
            let builder = http::Response::builder()
                .header("etag", "\"v1\"")
                .header("cache-control", "max-age=60");
            let response = if request.headers().contains_key(http::header::IF_NONE_MATCH) {
                builder.status(304).body(Full::default())
            } else {
                builder.body(Full::new(Bytes::from_static(b"User-agent: *\nAllow: /\n")))
            };
            Ok::<_, BoxError>(response.unwrap())
        });
        let service = RobotsLayer::builder("FooBot")
            .min_delay(Duration::ZERO)
            .build()
            .layer(site);
        service.clone().oneshot(get("/one")).await.unwrap();
        tokio::time::advance(Duration::from_secs(61)).await;
        service.clone().oneshot(get("/two")).await.unwrap();
    });
    let counter = |name: &str, label: Option<(&str, &str)>| {
        snapshot.iter().find_map(|(key, _, _, value)| {
            let labelled = label
                .is_none_or(|(k, v)| key.key().labels().any(|l| l.key() == k && l.value() == v));
            (key.key().name() == name && labelled).then_some(value)
        })
    };
    assert_eq!(
        counter("robots_fetches_total", Some(("outcome", "parsed"))),
        Some(&DebugValue::Counter(1))
    );
    assert_eq!(
        counter("robots_fetches_total", Some(("outcome", "not_modified"))),
        Some(&DebugValue::Counter(1))
    );
    assert_eq!(
        counter("robots_revalidations_total", None),
        Some(&DebugValue::Counter(1))
    );
}
