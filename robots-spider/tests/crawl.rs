//! spider crawls a local site through `polite_client`; the site's own log (a raw HTTP server
//! that records every request line and header) shows what reached it.

use robots_test_support::site;

use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use robots_spider::polite_client;
use robots_tower::{Refusals, RobotsMiddleware, WhenNotReady};
use spider::configuration::RedirectPolicy;
use spider::website::Website;

use site::{Answer, Site};

const UA: &str = "FooBot/1.0 (+https://foo.example/bot)";

fn html(links: &[&str]) -> Answer {
    let body: String = links
        .iter()
        .map(|l| format!("<a href=\"{l}\">{l}</a>\n"))
        .collect();
    Answer::ok(format!("<html><body>{body}</body></html>"))
}

/// The home page links to public pages, to `/private/…` (disallowed), to `/go-private` (a
/// redirect into `/private/`), and to `/go-offsite` (a redirect to `localhost`, another origin
/// of the same server).
async fn site(robots: fn(usize) -> Answer) -> Site {
    let port: Arc<OnceLock<u16>> = Arc::default();
    let known = port.clone();
    let site = Site::start(move |target, seen| match target {
        "/robots.txt" => robots(seen),
        "/" => html(&[
            "/a.html",
            "/b.html",
            "/private/secret.html",
            "/go-private",
            "/go-offsite",
        ]),
        "/a.html" => html(&["/private/other.html", "/c.html"]),
        "/go-private" => Answer::status("302 Found", &["Location: /private/moved.html"]),
        "/go-offsite" => Answer::status(
            "302 Found",
            &[&format!(
                "Location: http://localhost:{}/offsite.html",
                known.get().copied().unwrap_or(0)
            )],
        ),
        _ => html(&[]),
    })
    .await;
    let _ = port.set(site.addr().port());
    site
}

fn disallowing_private(_: usize) -> Answer {
    Answer::ok("User-agent: *\nDisallow: /private\n")
}

fn website(site: &Site) -> Website {
    let mut website = Website::new(&site.url("/"));
    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert("x-crawl-job", "spider-test".parse().unwrap());
    website
        .with_user_agent(Some(UA))
        .with_headers(Some(headers))
        .with_respect_robots_txt(false)
        .with_redirect_policy(RedirectPolicy::Strict)
        .with_limit(20);
    website
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spider_never_requests_what_robots_txt_forbids() {
    let site = site(disallowing_private).await;
    let mut website = website(&site);
    let robots = RobotsMiddleware::builder(UA).min_delay(Duration::from_millis(10));
    website.set_http_client(polite_client(&website, robots).unwrap());
    website.crawl().await;

    let seen = site.seen();
    let targets: Vec<&str> = seen.iter().map(|s| s.target.as_str()).collect();
    // The crawl happened…
    for page in ["/", "/a.html", "/b.html", "/c.html", "/go-private"] {
        assert!(targets.contains(&page), "{page} not crawled: {targets:?}");
    }
    // …and nothing disallowed, nor a redirect target the policy refuses, reached the site.
    assert!(
        !targets.iter().any(|t| t.starts_with("/private")),
        "{targets:?}"
    );
    assert!(!targets.contains(&"/offsite.html"), "{targets:?}");
    // robots.txt once, through spider's own client settings (its default headers).
    let robots: Vec<_> = seen.iter().filter(|s| s.target == "/robots.txt").collect();
    assert_eq!(robots.len(), 1, "{targets:?}");
    assert!(
        robots[0]
            .head
            .to_ascii_lowercase()
            .contains("x-crawl-job: spider-test"),
        "{}",
        robots[0].head
    );
    // Every request says who is asking.
    assert!(seen.iter().all(|s| s.user_agent.as_deref() == Some(UA)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn while_robots_txt_answers_503_spider_fetches_nothing() {
    let site = site(|_| Answer::status("503 Service Unavailable", &[])).await;
    let mut website = website(&site);
    let robots = RobotsMiddleware::builder(UA).min_delay(Duration::from_millis(10));
    website.set_http_client(polite_client(&website, robots).unwrap());
    website.crawl().await;
    let targets: Vec<String> = site.seen().into_iter().map(|s| s.target).collect();
    assert_eq!(targets, ["/robots.txt"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_schedule_mode_spider_is_told_not_now_instead_of_waiting() {
    fn slow_site(_: usize) -> Answer {
        Answer::ok("User-agent: *\nDisallow: /private\nCrawl-delay: 20\n")
    }
    let site = site(slow_site).await;
    let mut website = website(&site);
    let robots = RobotsMiddleware::builder(UA)
        .when_not_ready(WhenNotReady::Fail)
        .refusals(Refusals::Responses);
    website.set_http_client(polite_client(&website, robots).unwrap());
    let started = Instant::now();
    website.crawl().await;
    // A 20 s Crawl-delay, and the crawl did not sit in it: robots.txt's own request was the
    // group's turn, so even the home page was answered "not now" (429 with Retry-After)
    // without reaching the site.
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
    let seen: Vec<String> = site.seen().into_iter().map(|s| s.target).collect();
    assert_eq!(seen, ["/robots.txt"]);
}

/// spider's client connects through the middleware's resolver: a name only its override knows
/// is crawled, so the address the middleware paces and judges is the one connected to.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spider_connects_through_the_middlewares_resolver() {
    let site = site(disallowing_private).await;
    let port = site.addr().port();
    let mut website = Website::new(&format!("http://only-the-override.test:{port}/"));
    website
        .with_user_agent(Some(UA))
        .with_respect_robots_txt(false)
        .with_limit(3);
    let resolver = robots_tower::Resolver::new()
        .with_override_text(&format!("only-the-override.test:{port}:127.0.0.1"))
        .unwrap();
    let robots = RobotsMiddleware::builder(UA)
        .min_delay(Duration::from_millis(10))
        .resolver(resolver);
    website.set_http_client(polite_client(&website, robots).unwrap());
    website.crawl().await;
    let seen = site.seen();
    assert!(
        seen.iter()
            .any(|s| s.target == "/" && s.host.as_deref() == Some("only-the-override.test")),
        "{seen:?}"
    );
}
