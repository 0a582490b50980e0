//! Politeness through the tower layer on the wire, at a raw local site that logs arrivals: one
//! resolver shared by hyper-util's connector and the `ip` group, the host key across ports, and
//! the slow-downs (back-off, rate limits, the adaptive delay).

use crate::site;

use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use robots_tower::{PolitenessKey, Resolver, RobotsLayer};
use tower::{ServiceBuilder, ServiceExt};

use site::{Answer, Site};

#[tokio::test]
async fn a_tower_stack_connects_and_groups_by_one_resolver() {
    let server = Site::start(|_, _| Answer::ok("page")).await;
    let port = server.port();
    let resolver = Resolver::new()
        .with_override_text(&format!("n1.test:{port}:127.0.0.1"))
        .and_then(|r| r.with_override_text(&format!("n2.test:{port}:127.0.0.1")))
        .unwrap();
    let client = Client::builder(TokioExecutor::new())
        .build::<_, Full<Bytes>>(HttpConnector::new_with_resolver(resolver.clone()));
    let layer = RobotsLayer::builder("FooBot/1.0")
        .min_delay(Duration::from_millis(400))
        .delay_factor(0.0)
        .politeness_key(PolitenessKey::Ip)
        .resolver(resolver)
        .build();
    let service = ServiceBuilder::new().layer(layer).service(client);
    let urls = ["n1.test", "n2.test", "n1.test", "n2.test"]
        .iter()
        .enumerate()
        .map(|(i, host)| format!("http://{host}:{port}/p{i}"));
    let sends = urls.map(|url| {
        let service = service.clone();
        async move {
            let request = http::Request::get(url).body(Full::default()).unwrap();
            service.oneshot(request).await.map(|r| r.status())
        }
    });
    for status in futures_util::future::join_all(sends).await {
        assert_eq!(status.unwrap(), 200);
    }
    let pages = server.pages();
    let hosts: Vec<_> = pages.iter().filter_map(|s| s.host.clone()).collect();
    assert!(hosts.contains(&"n1.test".to_string()) && hosts.contains(&"n2.test".to_string()));
    let mut starts: Vec<_> = pages.iter().map(|s| s.at).collect();
    starts.sort();
    for gap in starts.windows(2).map(|w| w[1] - w[0]) {
        assert!(
            gap >= Duration::from_millis(390),
            "one address, one budget: {gap:?}"
        );
    }
}

/// The layer's politeness on the wire, measured at a raw local site: a 500 backs off, rate-limit
/// headers pause until their reset, a slow answer spaces the next request by the delay factor,
/// and two ports of one host share one budget.
#[tokio::test]
async fn the_layer_slows_down_for_a_struggling_server_on_the_wire() {
    let site = Site::start(|target, seen| match target {
        "/fail" if seen == 0 => Answer::status("500 Internal Server Error", &[]),
        "/limited" => Answer::status(
            "200 OK",
            &["X-RateLimit-Remaining: 0", "X-RateLimit-Reset: 1"],
        ),
        "/slow" => Answer {
            delay: Duration::from_millis(600),
            ..Answer::ok("slow")
        },
        _ => Answer::ok("page"),
    })
    .await;
    let client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
    let layer = RobotsLayer::builder("FooBot/1.0")
        .min_delay(Duration::from_millis(50))
        .backoff(Duration::from_millis(400), Duration::from_millis(1600))
        .build();
    let service = ServiceBuilder::new().layer(layer).service(client);
    let send = |path: &str| {
        let request = http::Request::get(site.url(path))
            .body(Full::default())
            .unwrap();
        service.clone().oneshot(request)
    };
    for path in ["/fail", "/a", "/limited", "/b", "/slow", "/c"] {
        send(path).await.unwrap();
    }
    let pages = site.pages();
    let at = |path: &str| pages.iter().find(|s| s.target == path).unwrap().at;
    let gap = |from: &str, to: &str| at(to) - at(from);
    assert!(
        gap("/fail", "/a") >= Duration::from_millis(360),
        "back-off: {:?}",
        gap("/fail", "/a")
    );
    assert!(
        gap("/limited", "/b") >= Duration::from_millis(950),
        "rate limit: {:?}",
        gap("/limited", "/b")
    );
    assert!(
        gap("/slow", "/c") >= Duration::from_millis(1180),
        "adaptive: {:?}",
        gap("/slow", "/c")
    );

    // Two ports of one host: one budget.
    let other = Site::start(|_, _| Answer::ok("page")).await;
    let ports = Site::start(|_, _| Answer::ok("page")).await;
    let client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
    let layer = RobotsLayer::builder("FooBot/1.0")
        .min_delay(Duration::from_millis(400))
        .delay_factor(0.0)
        .build();
    let service = ServiceBuilder::new().layer(layer).service(client);
    let sends = [&other, &ports, &other, &ports].map(|site| {
        let request = http::Request::get(site.url("/p"))
            .body(Full::default())
            .unwrap();
        service.clone().oneshot(request)
    });
    // (Each response is dropped as it comes: its body holds its place until then.)
    let sends = sends.map(|send| async move { send.await.map(drop) });
    for response in futures_util::future::join_all(sends).await {
        response.unwrap();
    }
    let mut starts: Vec<_> = other
        .pages()
        .iter()
        .chain(ports.pages().iter())
        .map(|s| s.at)
        .collect();
    starts.sort();
    for gap in starts.windows(2).map(|w| w[1] - w[0]) {
        assert!(
            gap >= Duration::from_millis(390),
            "two ports, one host: {gap:?}"
        );
    }
}
