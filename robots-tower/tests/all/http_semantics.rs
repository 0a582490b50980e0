//! The layer (with hyper's client and tower-http's redirect following) and the
//! reqwest-middleware adapter against real local servers: the same behaviour through both.

use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::Full;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use robots_fetch::BoxError;
use robots_tower::{RobotsError, RobotsInfo, RobotsLayer, RobotsMiddleware};
use tower::{Service, ServiceBuilder, ServiceExt};
use tower_http::follow_redirect::FollowRedirectLayer;
use wiremock::matchers::path;
use wiremock::{Mock, MockServer, ResponseTemplate};

const ROBOTS: &str = "User-agent: *\nDisallow: /private\n";

/// A site: robots.txt disallowing /private, /go redirecting into /private, /hop redirecting to
/// /public, and /private must never be requested.
async fn site() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(path("/robots.txt"))
        .respond_with(ResponseTemplate::new(200).set_body_string(ROBOTS))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(path("/go"))
        .respond_with(ResponseTemplate::new(302).insert_header("Location", "/private/secret"))
        .mount(&server)
        .await;
    Mock::given(path("/hop"))
        .respond_with(ResponseTemplate::new(301).insert_header("Location", "/public"))
        .mount(&server)
        .await;
    Mock::given(path("/public"))
        .respond_with(ResponseTemplate::new(200).set_body_string("hello"))
        .mount(&server)
        .await;
    Mock::given(path("/private/secret"))
        .respond_with(ResponseTemplate::new(200))
        .expect(0)
        .mount(&server)
        .await;
    server
}

fn tower_client(
    layer: RobotsLayer,
) -> impl Service<
    http::Request<Full<Bytes>>,
    Response = http::Response<robots_tower::PacedBody<hyper::body::Incoming>>,
    Error = BoxError,
> + Clone {
    let client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
    ServiceBuilder::new()
        .layer(FollowRedirectLayer::new())
        .layer(layer)
        .service(client)
        .map_err(BoxError::from)
}

fn get(url: &str) -> http::Request<Full<Bytes>> {
    http::Request::get(url).body(Full::default()).unwrap()
}

#[tokio::test]
async fn tower_blocks_disallowed_urls_and_redirects_into_them() {
    let server = site().await;
    let service = tower_client(
        RobotsLayer::builder("FooBot/1.0")
            .min_delay(Duration::ZERO)
            .build(),
    );
    let error = service
        .clone()
        .oneshot(get(&format!("{}/private/secret", server.uri())))
        .await
        .unwrap_err();
    assert!(
        matches!(
            error.downcast_ref::<RobotsError>(),
            Some(RobotsError::Disallowed { .. })
        ),
        "{error}"
    );
    // The redirect target is checked like any request.
    let error = service
        .clone()
        .oneshot(get(&format!("{}/go", server.uri())))
        .await
        .unwrap_err();
    match error.downcast_ref::<RobotsError>() {
        Some(RobotsError::Disallowed { url, rule, .. }) => {
            assert!(url.ends_with("/private/secret"), "{url}");
            assert_eq!(rule.as_ref().map(|r| r.line), Some(2));
        }
        other => panic!("{other:?}"),
    }
    // Allowed redirects are followed.
    let response = service
        .clone()
        .oneshot(get(&format!("{}/hop", server.uri())))
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert!(response.extensions().get::<RobotsInfo>().is_some());
    server.verify().await;
}

fn reqwest_client(middleware: RobotsMiddleware) -> reqwest_middleware::ClientWithMiddleware {
    let inner = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    reqwest_middleware::ClientBuilder::new(inner)
        .with(middleware)
        .build()
}

fn robots_error(error: &reqwest_middleware::Error) -> Option<&RobotsError> {
    match error {
        reqwest_middleware::Error::Middleware(e) => e.downcast_ref::<RobotsError>(),
        reqwest_middleware::Error::Reqwest(_) => None,
    }
}

#[tokio::test]
async fn the_middleware_behaves_like_the_layer() {
    let server = site().await;
    let client = reqwest_client(
        RobotsMiddleware::builder("FooBot/1.0")
            .min_delay(Duration::ZERO)
            .build()
            .unwrap(),
    );
    let error = client
        .get(format!("{}/private/secret", server.uri()))
        .send()
        .await
        .unwrap_err();
    assert!(
        matches!(robots_error(&error), Some(RobotsError::Disallowed { .. })),
        "{error}"
    );
    let error = client
        .get(format!("{}/go", server.uri()))
        .send()
        .await
        .unwrap_err();
    assert!(
        matches!(robots_error(&error), Some(RobotsError::Disallowed { url, .. }) if url.ends_with("/private/secret")),
        "{error}"
    );
    let response = client
        .get(format!("{}/hop", server.uri()))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.url().path(), "/public");
    let info = response.extensions().get::<RobotsInfo>().unwrap();
    assert!(matches!(
        info.source(),
        robots_fetch::Source::Parsed { status: 200, .. }
    ));
    assert_eq!(response.text().await.unwrap(), "hello");
    server.verify().await;
}

#[tokio::test]
async fn the_middleware_paces_requests_and_reports_unreachable_robots() {
    let server = MockServer::start().await;
    Mock::given(path("/robots.txt"))
        .respond_with(
            ResponseTemplate::new(200).set_body_string("User-agent: *\nCrawl-delay: 0.3\n"),
        )
        .mount(&server)
        .await;
    Mock::given(path("/page"))
        .respond_with(ResponseTemplate::new(200))
        .mount(&server)
        .await;
    let client = reqwest_client(
        RobotsMiddleware::builder("FooBot")
            .min_delay(Duration::from_millis(100))
            .build()
            .unwrap(),
    );
    let started = Instant::now();
    for _ in 0..3 {
        client
            .get(format!("{}/page", server.uri()))
            .send()
            .await
            .unwrap();
    }
    assert!(
        started.elapsed() >= Duration::from_millis(600),
        "Crawl-delay 0.3 s between 3 requests: {:?}",
        started.elapsed()
    );

    let down = MockServer::start().await;
    Mock::given(path("/robots.txt"))
        .respond_with(ResponseTemplate::new(500))
        .mount(&down)
        .await;
    Mock::given(path("/page"))
        .respond_with(ResponseTemplate::new(200))
        .expect(0)
        .mount(&down)
        .await;
    let error = client
        .get(format!("{}/page", down.uri()))
        .send()
        .await
        .unwrap_err();
    assert!(
        matches!(
            robots_error(&error),
            Some(RobotsError::RobotsUnreachable { .. })
        ),
        "{error}"
    );
    down.verify().await;
}
