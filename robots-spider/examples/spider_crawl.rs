//! A spider crawl made polite by `robots_spider::polite_client`.
//!
//! ```text
//! cargo run -p robots-spider --example spider_crawl                 # a demo site served in-process
//! cargo run -p robots-spider --example spider_crawl -- https://example.com/
//! ```
//!
//! The demo site (127.0.0.1, no network needed) disallows `/private/`, asks for a Crawl-delay of
//! 0.2 s, and links to a private page and to a redirect into one. The site's own request log is
//! printed at the end: nothing under `/private/` is in it, and robots.txt was fetched once.

use std::process::ExitCode;
use std::time::Instant;

use robots_fetch::{Origin, RobotsCache, Source};
use robots_spider::polite_client;
use robots_tower::RobotsMiddleware;
use spider::website::Website;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const AGENT: &str = "PoliteSpider/0.1 (+https://foo.example/bot)";

/// Exits 1 when a robots.txt could not be had (nothing of that site was fetched), 0 otherwise.
#[tokio::main]
async fn main() -> Result<ExitCode, Box<dyn std::error::Error>> {
    let start = std::env::args().nth(1);
    let demo = match start {
        Some(_) => None,
        None => Some(demo_site().await),
    };
    let start = match (&demo, start) {
        (Some(server), _) => format!("{}/", server.uri()),
        (None, Some(url)) => url,
        (None, None) => unreachable!("a start URL or the demo"),
    };

    let mut website = Website::new(&start);
    website
        .with_user_agent(Some(AGENT))
        // The middleware enforces robots.txt; spider's own check would fetch it a second time.
        .with_respect_robots_txt(false)
        .with_limit(25);
    // The cache the middleware decides with, kept to say afterwards why a link was refused.
    let cache = RobotsCache::builder(AGENT).build();
    let robots = RobotsMiddleware::builder(AGENT).cache(cache.clone());
    website.set_http_client(polite_client(&website, robots)?);

    let started = Instant::now();
    website.crawl().await;
    let mut links: Vec<String> = website
        .get_links()
        .iter()
        .map(|l| l.as_ref().to_string())
        .collect();
    links.sort();
    // spider lists every link it tried, the refused ones too; the site's log below shows what
    // was actually requested.
    println!(
        "spider tried {} links in {:.1?}:",
        links.len(),
        started.elapsed()
    );
    let mut unreachable = false;
    for link in &links {
        let why = refusal(&cache, link);
        unreachable |= why.as_deref().is_some_and(|w| w.contains("unreachable"));
        match why {
            Some(why) => println!("  {link}  refused: {why}"),
            None => println!("  {link}"),
        }
    }

    if let Some(server) = demo {
        let requests = server.received_requests().await.unwrap_or_default();
        println!("\nwhat reached the demo site:");
        for request in &requests {
            println!("  GET {}", request.url.path());
        }
        let private = requests
            .iter()
            .filter(|r| r.url.path().starts_with("/private/"))
            .count();
        let robots = requests
            .iter()
            .filter(|r| r.url.path() == "/robots.txt")
            .count();
        println!("\n/private/ requests: {private}; robots.txt fetches: {robots}");
    }
    Ok(if unreachable {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// Why the middleware refused `link`, from the rules it decided with; `None` when it may be
/// fetched.
fn refusal(cache: &RobotsCache, link: &str) -> Option<String> {
    let Ok(url) = url::Url::parse(link) else {
        return Some("not a URL".into());
    };
    let Ok(origin) = Origin::from_url(&url) else {
        return Some("no robots.txt for this kind of URL".into());
    };
    let Some(entry) = cache.cached(&origin) else {
        return Some(format!("robots.txt of {origin} was never fetched"));
    };
    if let Source::Unreachable { cause, .. } = entry.source() {
        return Some(format!("robots.txt of {origin} unreachable: {cause}"));
    }
    let verdict = entry.check(&url);
    if verdict.allowed {
        return None;
    }
    Some(match verdict.rule {
        Some(rule) => format!(
            "disallowed by robots.txt line {}: {}",
            rule.line,
            rule.pattern_lossy()
        ),
        None => "robots.txt disallows everything".into(),
    })
}

async fn demo_site() -> MockServer {
    let server = MockServer::start().await;
    let page = |links: &[&str]| {
        let anchors: String = links
            .iter()
            .map(|l| format!("<a href=\"{l}\">{l}</a>\n"))
            .collect();
        ResponseTemplate::new(200).set_body_raw(
            format!("<!doctype html>{anchors}"),
            "text/html; charset=utf-8",
        )
    };
    let routes = [
        (
            "/robots.txt",
            ResponseTemplate::new(200)
                .set_body_string("User-agent: *\nDisallow: /private/\nCrawl-delay: 0.2\n"),
        ),
        ("/", page(&["/about", "/blog/", "/private/admin", "/old"])),
        ("/about", page(&["/", "/private/staff"])),
        ("/blog/", page(&["/blog/first", "/about"])),
        ("/blog/first", page(&["/blog/"])),
        (
            "/old",
            ResponseTemplate::new(301).insert_header("location", "/private/moved"),
        ),
    ];
    for (at, response) in routes {
        Mock::given(method("GET"))
            .and(path(at))
            .respond_with(response)
            .mount(&server)
            .await;
    }
    server
}
