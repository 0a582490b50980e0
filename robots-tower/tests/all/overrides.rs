//! Per-request overrides through both front ends, on the wire (a raw local site that logs what
//! it receives): checking a request also as a policy token, and the explicit, logged opt-out.

use crate::captured;
use crate::site;

use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use robots_tower::{AlsoCheckAs, RobotsError, RobotsLayer, RobotsMiddleware, SkipRobotsCheck};
use site::{Answer, Site};
use tower::{ServiceBuilder, ServiceExt};

fn route(target: &str, _: usize) -> Answer {
    match target {
        "/robots.txt" => Answer::ok(
            "User-agent: *\nDisallow: /private\n\nUser-agent: Google-Extended\nDisallow: /articles/\n",
        ),
        _ => Answer::ok("page"),
    }
}

fn get(url: &str) -> http::Request<Full<Bytes>> {
    http::Request::get(url).body(Full::default()).unwrap()
}

#[tokio::test]
async fn overrides_through_the_layer() {
    let site = Site::start(route).await;
    let (captured, _logs) = captured::capture_logs(tracing::Level::WARN);
    let service = ServiceBuilder::new()
        .layer(
            RobotsLayer::builder("FooBot/1.0")
                .policy_tokens(["Google-Extended"])
                .min_delay(Duration::from_millis(300))
                .build(),
        )
        .service(Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>());

    // FooBot may read articles; as Google-Extended too, it may not.
    let response = service
        .clone()
        .oneshot(get(&site.url("/articles/a")))
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    // (Its body holds the request's place until dropped.)
    drop(response);
    let mut request = get(&site.url("/articles/a"));
    request
        .extensions_mut()
        .insert(AlsoCheckAs::new(["Google-Extended"]));
    let error = service.clone().oneshot(request).await.unwrap_err();
    match error.downcast_ref::<RobotsError>() {
        Some(RobotsError::DisallowedFor { token, rule, .. }) => {
            assert_eq!(token, "Google-Extended");
            assert_eq!(rule.as_ref().map(|r| r.line), Some(5));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(site.count("/articles/a"), 1, "refused before the network");
    // A token not configured is refused, not silently unchecked.
    let mut request = get(&site.url("/articles/b"));
    request
        .extensions_mut()
        .insert(AlsoCheckAs::new(["Applebot-Extended"]));
    let error = service.clone().oneshot(request).await.unwrap_err();
    assert!(matches!(
        error.downcast_ref::<RobotsError>(),
        Some(RobotsError::PolicyTokenNotConfigured { token }) if token == "Applebot-Extended"
    ));

    // The explicit opt-out: sent despite Disallow, still paced, and logged with its reason.
    for _ in 0..2 {
        let mut request = get(&site.url("/private/report"));
        request
            .extensions_mut()
            .insert(SkipRobotsCheck::because("the owner's own audit"));
        let response = service.clone().oneshot(request).await.unwrap();
        assert_eq!(response.status(), 200);
    }
    let reports: Vec<_> = site
        .seen()
        .into_iter()
        .filter(|s| s.target == "/private/report")
        .collect();
    assert_eq!(reports.len(), 2);
    assert!(reports[1].at - reports[0].at >= Duration::from_millis(295));
    let logs = captured.text();
    assert_eq!(
        logs.matches("robots.txt check skipped for this request")
            .count(),
        2,
        "{logs}"
    );
    assert!(logs.contains("the owner's own audit"), "{logs}");
    // Without the opt-out, the same URL is refused.
    assert!(
        service
            .clone()
            .oneshot(get(&site.url("/private/report")))
            .await
            .is_err()
    );
}

#[tokio::test]
async fn overrides_through_the_middleware() {
    let site = Site::start(route).await;
    let client = RobotsMiddleware::builder("FooBot/1.0")
        .policy_tokens(["Google-Extended"])
        .min_delay(Duration::ZERO)
        .build_client()
        .unwrap();
    let response = client.get(site.url("/articles/a")).send().await.unwrap();
    assert_eq!(response.status(), 200);
    // (Its body holds the request's place until dropped.)
    drop(response);
    let error = client
        .get(site.url("/articles/a"))
        .with_extension(AlsoCheckAs::new(["Google-Extended"]))
        .send()
        .await
        .unwrap_err();
    assert!(matches!(
        RobotsError::from_middleware_error(&error),
        Some(RobotsError::DisallowedFor { token, .. }) if token == "Google-Extended"
    ));
    let response = client
        .get(site.url("/private/report"))
        .with_extension(SkipRobotsCheck::because("the owner's own audit"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(site.count("/articles/a"), 1);
    assert_eq!(site.count("/private/report"), 1);
}
