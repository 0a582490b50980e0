//! A polite breadth-first crawl through reqwest + `RobotsMiddleware`.
//!
//! ```text
//! cargo run --example polite_crawl                      # a demo site served in-process
//! cargo run --example polite_crawl -- https://example.com/ --max-pages 20
//! ```
//!
//! The demo site (on 127.0.0.1, no network needed) has a robots.txt with Disallow rules, a
//! Crawl-delay and a Sitemap; linked pages; a page that answers 429 with Retry-After once; and a
//! redirect into a disallowed path. Every URL gets one line as it happens, then a summary.

use std::collections::{HashSet, VecDeque};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Parser;
use polite_robots::client::{RobotsError, RobotsInfo, RobotsMiddleware};
use url::Url;

#[derive(Parser)]
#[command(about = "A polite breadth-first crawl that obeys robots.txt")]
struct Args {
    /// Where to start; without it, a demo site is served in-process and crawled.
    start: Option<Url>,
    /// Stop after this many fetched pages.
    #[arg(long, default_value_t = 50)]
    max_pages: usize,
    /// The crawler's User-Agent.
    #[arg(long, default_value = "PoliteCrawl/0.1")]
    agent: String,
}

/// Exits 1 when any URL failed (its cause is on its line), 0 otherwise.
#[tokio::main]
async fn main() -> Result<ExitCode, Box<dyn std::error::Error>> {
    let args = Args::parse();
    let (start, _demo, min_delay) = match args.start {
        Some(url) => (url, None, Duration::from_secs(1)),
        None => {
            let server = demo_site().await;
            println!(
                "demo site at {}  (robots.txt: Disallow /private/ and *.pdf, Crawl-delay 0.5)\n",
                server.uri()
            );
            // The demo's own minimum interval is short so that its Crawl-delay shows.
            (
                Url::parse(&server.uri())?,
                Some(server),
                Duration::from_millis(200),
            )
        }
    };

    // The client: robots.txt enforced and politeness applied per origin; the middleware follows
    // redirects itself so that every hop is checked, so reqwest's own following is off.
    let config = RobotsMiddleware::builder(&args.agent).min_delay(min_delay);
    // The client connects through the resolver the middleware judges by: every new connection
    // is held to the address rule on the address it uses (spec section 8).
    let resolver = std::sync::Arc::new(config.resolver_in_use());
    let robots = config.build()?;
    let cache = robots.cache().clone();
    // (The middleware sets the crawler's User-Agent on every request.)
    let inner = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(20))
        .dns_resolver(resolver)
        .build()?;
    let client = reqwest_middleware::ClientBuilder::new(inner)
        .with(robots)
        .build();

    let started = Instant::now();
    let mut queue = VecDeque::from([start.clone()]);
    let mut seen = HashSet::from([start.to_string()]);
    let mut retries: HashSet<String> = HashSet::new();
    let (mut fetched, mut blocked, mut backoffs, mut failed) = (0, 0, 0, 0);
    let mut waited = Duration::ZERO;
    while let Some(url) = queue.pop_front() {
        if fetched >= args.max_pages {
            break;
        }
        let sent = client.get(url.clone()).send().await;
        // Stamped when the outcome is known, after any politeness wait.
        let at = started.elapsed().as_secs_f32();
        match sent {
            Ok(response) => {
                let status = response.status();
                let final_url = response.url().clone();
                let info = response.extensions().get::<RobotsInfo>().cloned();
                let wait = info.as_ref().map_or(Duration::ZERO, |i| i.waited());
                waited += wait;
                if status.as_u16() == 429 || status.as_u16() == 503 {
                    backoffs += 1;
                    let retry_after = response
                        .headers()
                        .get("retry-after")
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or("?")
                        .to_string();
                    // The pause applied: the server's Retry-After, or the back-off when that
                    // is longer (a Retry-After never shortens it).
                    let paused = info.as_ref().and_then(|i| i.pause()).map_or_else(
                        || "?".to_string(),
                        |p| format!("{:.1} s", p.duration.as_secs_f32()),
                    );
                    println!(
                        "{at:6.2}s  backing off  {status}  {url}  (Retry-After: {retry_after} s; the origin is paused {paused}, will retry)"
                    );
                    if retries.insert(url.to_string()) {
                        queue.push_back(url);
                    }
                    continue;
                }
                fetched += 1;
                let redirected = if final_url != url {
                    format!(" -> {final_url}")
                } else {
                    String::new()
                };
                println!(
                    "{at:6.2}s  fetched      {}  {url}{redirected}  (waited {} ms)",
                    status.as_u16(),
                    wait.as_millis()
                );
                let html = response
                    .headers()
                    .get("content-type")
                    .and_then(|v| v.to_str().ok())
                    .is_some_and(|t| t.contains("html"));
                if status.is_success()
                    && html
                    && !info.as_ref().is_some_and(|i| i.directives().nofollow)
                {
                    let body = response.text().await.unwrap_or_default();
                    for link in links(&final_url, &body) {
                        if same_origin(&link, &start) && seen.insert(link.to_string()) {
                            queue.push_back(link);
                        }
                    }
                }
            }
            Err(error) => match robots_error(&error) {
                Some(RobotsError::Disallowed {
                    url: target,
                    rule,
                    resolved_path,
                }) => {
                    blocked += 1;
                    let mut why = rule
                        .as_ref()
                        .map_or("everything disallowed".to_string(), |r| {
                            format!("Disallow: {} on line {}", r.pattern, r.line)
                        });
                    if let Some(path) = resolved_path {
                        why.push_str(&format!(" (as the server resolves it: {path})"));
                    }
                    let via = if *target != url.to_string() {
                        format!(" (redirected to {target})")
                    } else {
                        String::new()
                    };
                    println!("{at:6.2}s  blocked      {url}{via}  by robots.txt: {why}");
                }
                Some(RobotsError::RobotsUnreachable { origin, cause, .. }) => {
                    failed += 1;
                    println!(
                        "{at:6.2}s  unreachable  {url}  (robots.txt of {origin} unreachable: {cause})"
                    );
                }
                _ => {
                    failed += 1;
                    println!("{at:6.2}s  failed       {url}  ({})", causes(&error));
                }
            },
        }
    }

    let stats = cache.stats();
    // Only absolute http(s) URLs are sitemaps crawlers use (`robots lint` reports the others).
    let (sitemaps, ignored): (Vec<String>, Vec<String>) =
        polite_robots::fetch::Origin::from_url(&start)
            .ok()
            .and_then(|o| cache.cached(&o))
            .map(|entry| {
                entry
                    .sitemaps()
                    .map(String::from)
                    .partition(|s| polite_robots::robots_txt::is_absolute_sitemap(s.as_bytes()))
            })
            .unwrap_or_default();
    println!(
        "\nsummary: {fetched} pages fetched, {blocked} blocked by robots.txt, {backoffs} back-off(s), {failed} failed, {} left in the queue",
        queue.len()
    );
    println!(
        "         {:.1} s in all, {} ms waiting for politeness; robots.txt fetched {} time(s); sitemaps: {}",
        started.elapsed().as_secs_f32(),
        waited.as_millis(),
        stats.fetches,
        if sitemaps.is_empty() {
            "none".to_string()
        } else {
            sitemaps.join(", ")
        }
    );
    if !ignored.is_empty() {
        println!(
            "         ignored by crawlers (not absolute http(s) URLs): {}",
            ignored.join(", ")
        );
    }
    Ok(if failed > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// An error with its causes, `outer: inner: innermost` (reqwest's own text leaves them out).
fn causes(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let said = cause.to_string();
        if !text.contains(&said) {
            text.push_str(": ");
            text.push_str(&said);
        }
        source = cause.source();
    }
    text
}

fn robots_error(error: &reqwest_middleware::Error) -> Option<&RobotsError> {
    match error {
        reqwest_middleware::Error::Middleware(e) => e.downcast_ref::<RobotsError>(),
        reqwest_middleware::Error::Reqwest(_) => None,
    }
}

fn same_origin(a: &Url, b: &Url) -> bool {
    a.scheme() == b.scheme()
        && a.host() == b.host()
        && a.port_or_known_default() == b.port_or_known_default()
}

/// `href="…"` targets of a page, resolved against it, without fragments.
fn links(base: &Url, html: &str) -> Vec<Url> {
    html.split("href=")
        .skip(1)
        .filter_map(|rest| {
            let quote = rest.chars().next().filter(|c| *c == '"' || *c == '\'')?;
            let target = rest[1..].split(quote).next()?;
            let mut url = base.join(target).ok()?;
            url.set_fragment(None);
            matches!(url.scheme(), "http" | "https").then_some(url)
        })
        .collect()
}

/// The demo site.
async fn demo_site() -> wiremock::MockServer {
    use wiremock::matchers::{method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};

    let server = MockServer::start().await;
    let robots = format!(
        "# The demo site's robots.txt\nUser-agent: *\nDisallow: /private/\nDisallow: /*.pdf$\nCrawl-delay: 0.5\n\nSitemap: {}/sitemap.xml\n",
        server.uri()
    );
    let page = |title: &str, links: &[&str]| {
        let anchors: String = links
            .iter()
            .map(|l| format!("<a href=\"{l}\">{l}</a>\n"))
            .collect();
        format!("<!doctype html><title>{title}</title><h1>{title}</h1>\n{anchors}")
    };
    let html =
        |body: String| ResponseTemplate::new(200).set_body_raw(body, "text/html; charset=utf-8");
    let pages: Vec<(&str, ResponseTemplate)> = vec![
        (
            "/robots.txt",
            ResponseTemplate::new(200).set_body_string(robots),
        ),
        (
            "/",
            html(page(
                "Home",
                &[
                    "/about",
                    "/blog/",
                    "/private/admin",
                    "/docs/manual.pdf",
                    "/busy",
                    "/old-page",
                ],
            )),
        ),
        ("/about", html(page("About", &["/", "/team"]))),
        ("/team", html(page("Team", &["/private/staff", "/about"]))),
        (
            "/blog/",
            html(page("Blog", &["/blog/first", "/blog/second#comments"])),
        ),
        (
            "/blog/first",
            html(page("First post", &["/blog/", "/docs/guide.html"])),
        ),
        ("/blog/second", html(page("Second post", &["/blog/"]))),
        (
            "/docs/guide.html",
            html(page("Guide", &["/docs/manual.pdf", "/"])),
        ),
        ("/busy", html(page("Busy page", &["/"]))),
        (
            "/old-page",
            ResponseTemplate::new(301).insert_header("location", "/private/moved"),
        ),
    ];
    // /busy answers 429 once, with Retry-After: 1.
    Mock::given(method("GET"))
        .and(path("/busy"))
        .respond_with(ResponseTemplate::new(429).insert_header("retry-after", "1"))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    for (at, response) in pages {
        Mock::given(method("GET"))
            .and(path(at))
            .respond_with(response)
            .mount(&server)
            .await;
    }
    server
}
