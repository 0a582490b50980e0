//! One resolver for a tower stack: hyper-util's connector and the layer's `ip` group share a
//! `Resolver`, so two names of one server are paced as one, on the wire.

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
