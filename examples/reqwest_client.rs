//! robots.txt and politeness for reqwest, as reqwest-middleware middleware.
//!
//! ```text
//! cargo run --example reqwest_client                 # against a tiny in-process site
//! cargo run --example reqwest_client -- https://example.com/
//! ```

use polite_robots::client::{RobotsError, RobotsInfo, RobotsMiddleware};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let _site = demo_site().await;
    let urls: Vec<String> = match std::env::args().nth(1) {
        Some(url) => vec![url],
        None => vec![format!("{}/", _site.uri()), format!("{}/old", _site.uri())],
    };

    // A ready client: reqwest's own redirect following off, every hop followed, checked and
    // paced by the middleware, and the crawler's User-Agent on every request.
    let client = RobotsMiddleware::builder("ReqwestExample/0.1 (+https://example.com/bot)")
        .build_client()?;

    for url in urls {
        match client.get(&url).send().await {
            Ok(response) => {
                let waited = response
                    .extensions()
                    .get::<RobotsInfo>()
                    .map(|i| i.waited());
                println!("{url}: {} (waited {waited:?})", response.status());
            }
            Err(reqwest_middleware::Error::Middleware(e)) if e.is::<RobotsError>() => {
                println!("{url}: not fetched: {e}")
            }
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// A site whose /old redirects into a disallowed path (for running without network).
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
        .respond_with(ResponseTemplate::new(200))
        .mount(&server)
        .await;
    Mock::given(path("/old"))
        .respond_with(ResponseTemplate::new(301).insert_header("location", "/private/new"))
        .mount(&server)
        .await;
    server
}
