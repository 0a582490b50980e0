//! robots.txt and politeness for any tower HTTP client: hyper-util's, here.
//!
//! ```text
//! cargo run --example tower_client                 # against a tiny in-process site
//! cargo run --example tower_client -- https://example.com/
//! ```

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use polite_robots::client::{RobotsError, RobotsInfo, RobotsLayer};
use tower::{ServiceBuilder, ServiceExt};
use tower_http::follow_redirect::FollowRedirectLayer;

#[tokio::main]
async fn main() -> Result<(), polite_robots::fetch::BoxError> {
    let _site = demo_site().await;
    let urls: Vec<String> = match std::env::args().nth(1) {
        Some(url) => vec![url],
        None => vec![
            format!("{}/", _site.uri()),
            format!("{}/private/x", _site.uri()),
            // Redirects into /private/: the hop is checked like any request, never fetched.
            format!("{}/old", _site.uri()),
        ],
    };

    let client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
    let service = ServiceBuilder::new()
        .layer(FollowRedirectLayer::new()) // outside the robots layer: every hop is checked
        .layer(RobotsLayer::builder("TowerExample/0.1 (+https://example.com/bot)").build())
        .service(client);

    for url in urls {
        let request = http::Request::get(&url).body(Full::default())?;
        match service.clone().oneshot(request).await {
            Ok(response) => {
                let waited = response
                    .extensions()
                    .get::<RobotsInfo>()
                    .map(|i| i.waited());
                let status = response.status();
                let body = response.into_body().collect().await?.to_bytes();
                println!("{url}: {status}, {} bytes, waited {waited:?}", body.len());
            }
            Err(error) => match error.downcast_ref::<RobotsError>() {
                Some(robots) => println!("{url}: not fetched: {robots}"),
                None => return Err(error),
            },
        }
    }
    Ok(())
}

/// A site with a robots.txt that disallows /private/, and /old redirecting into it (for running
/// without network).
async fn demo_site() -> wiremock::MockServer {
    use wiremock::{Mock, MockServer, ResponseTemplate, matchers::path};
    let server = MockServer::start().await;
    Mock::given(path("/robots.txt"))
        .respond_with(
            ResponseTemplate::new(200).set_body_string("User-agent: *\nDisallow: /private/\n"),
        )
        .mount(&server)
        .await;
    Mock::given(path("/"))
        .respond_with(ResponseTemplate::new(200).set_body_string("home"))
        .mount(&server)
        .await;
    Mock::given(path("/old"))
        .respond_with(ResponseTemplate::new(301).insert_header("location", "/private/new"))
        .mount(&server)
        .await;
    server
}
