//! One walk through the layer that touches every kind of event: robots.txt fetched once, two
//! allowed pages (the second waits its turn), one disallowed URL, one 429 that pauses the origin.
//! The observability and metrics tests both read what it leaves behind.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use robots_fetch::BoxError;
use robots_tower::RobotsLayer;
use tower::{Layer, ServiceExt};

/// Runs the walk (on whatever clock the caller's runtime has; paused in both tests).
pub async fn walk_through_the_layer() {
    let site = tower::service_fn(|request: http::Request<Full<Bytes>>| async move {
        let (status, body) = match request.uri().path() {
            "/robots.txt" => (200, "User-agent: *\nDisallow: /private\n"),
            "/busy" => (429, ""),
            _ => (200, "page"),
        };
        Ok::<_, BoxError>(
            http::Response::builder()
                .status(status)
                .body(Full::new(Bytes::from_static(body.as_bytes())))
                .unwrap(),
        )
    });
    let service = RobotsLayer::builder("FooBot")
        .min_delay(Duration::from_millis(100))
        .build()
        .layer(site);
    service.clone().oneshot(get("/one")).await.unwrap();
    service.clone().oneshot(get("/two")).await.unwrap();
    assert!(service.clone().oneshot(get("/private/x")).await.is_err());
    service.clone().oneshot(get("/busy")).await.unwrap();
}

/// A GET for `path` at `http://a.example`.
pub fn get(path: &str) -> http::Request<Full<Bytes>> {
    http::Request::get(format!("http://a.example{path}"))
        .body(Full::default())
        .unwrap()
}
