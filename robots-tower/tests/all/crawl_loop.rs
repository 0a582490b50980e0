//! Issue 54: a crawl that finds its own links, run by `Frontier::run`. It ends by itself
//! (also when its last URL is dropped as disallowed at its turn), never deadlocks at the byte
//! budget while jobs push their links, retries a URL whose robots.txt was unreachable even with
//! de-duplication on, and its stats match what the servers saw.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use robots_fetch::{BoxError, Resolver};
use robots_test_support::memory::{MemorySite, Reply};
use robots_tower::{Dedup, FrontierConfig, Job, RobotsError, RobotsLayer, RobotsMiddleware, Visit};
use tower::{Layer, Service, ServiceExt};

use crate::site::{Answer, Site};

/// Three sites; each page's body is its links, one per word. `/` links to `/a`, `/b` and
/// `/private/x`; `/a` to `/` and `/c`; `/b` to `/private/y`, the last URL of the crawl: dropped
/// as disallowed at its turn once robots.txt is known.
fn page(path: &str) -> &'static str {
    match path {
        "/" => "/a /b /private/x",
        "/a" => "/ /c",
        "/b" => "/a /private/y",
        _ => "",
    }
}

const ROBOTS: &str = "User-agent: *\nDisallow: /private\n";
const HOSTS: [&str; 3] = ["one.test", "two.test", "three.test"];

/// The links of a body, resolved against its page.
fn links(base: &url::Url, body: &[u8]) -> Vec<url::Url> {
    String::from_utf8_lossy(body)
        .split_whitespace()
        .filter_map(|l| base.join(l).ok())
        .collect()
}

/// One visit through a tower service behind the layer: its links, or why not.
async fn visit_through<S, B>(mut service: S, job: Job) -> Visit
where
    S: Service<http::Request<Full<Bytes>>, Response = http::Response<B>>,
    S::Error: Into<BoxError>,
    B: http_body::Body,
{
    let request = http::Request::get(job.url().as_str())
        .body(Full::<Bytes>::default())
        .unwrap();
    let ready = match service.ready().await {
        Ok(ready) => ready,
        Err(_) => return Visit::Failed,
    };
    match ready.call(request).await {
        Ok(response) => {
            let body = match response.into_body().collect().await {
                Ok(body) => body.to_bytes(),
                Err(_) => return Visit::Failed,
            };
            Visit::Fetched(links(job.url(), &body))
        }
        Err(error) => {
            let error: BoxError = error.into();
            match error.downcast_ref::<RobotsError>() {
                Some(refused) => Visit::Refused(refused.clone()),
                None => Visit::Failed,
            }
        }
    }
}

fn pages_seen(site: &MemorySite) -> usize {
    site.visits()
        .iter()
        .filter(|v| v.path != "/robots.txt")
        .count()
}

#[tokio::test(start_paused = true)]
async fn through_the_layer_a_link_following_crawl_ends_by_itself() {
    for workers in [1, 4] {
        let site = MemorySite::new(|_, path, _| match path {
            "/robots.txt" => Reply::ok(ROBOTS),
            path => Reply::ok(page(path)).after(Duration::from_millis(5)),
        });
        let layer = RobotsLayer::builder("FooBot/1.0")
            .min_delay(Duration::from_millis(10))
            .build();
        let service = layer.layer(site.service());
        let frontier =
            layer.frontier_with(FrontierConfig::default().dedup(Dedup::Exact { last: 1_000 }));
        for host in HOSTS {
            frontier
                .push(format!("http://{host}/").parse().unwrap())
                .await
                .unwrap();
        }
        let run = frontier.run(workers, |job| visit_through(service.clone(), job));
        let stats = tokio::time::timeout(Duration::from_secs(600), run)
            .await
            .expect("the crawl did not end by itself");
        assert!(frontier.is_closed());
        // /, /a, /b, /c on each site; /private/x and /private/y never sent.
        assert_eq!(pages_seen(&site), 4 * HOSTS.len());
        assert_eq!(stats.fetched as usize, pages_seen(&site), "{stats:?}");
        assert_eq!(stats.disallowed as usize, 2 * HOSTS.len(), "{stats:?}");
        assert_eq!((stats.queued, stats.in_progress), (0, 0));
        assert!(
            site.visits()
                .iter()
                .all(|v| !v.path.starts_with("/private"))
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn through_the_middleware_a_link_following_crawl_ends_by_itself_and_counts_what_was_sent() {
    let server = Site::start(|target, _| match target {
        "/robots.txt" => Answer::ok(ROBOTS),
        path => Answer::ok(page(path)),
    })
    .await;
    let mut resolver = Resolver::new();
    for host in HOSTS {
        resolver = resolver
            .with_override_text(&format!("{host}:{}:127.0.0.1", server.port()))
            .unwrap();
    }
    let robots = RobotsMiddleware::builder("FooBot/1.0")
        .min_delay(Duration::from_millis(20))
        .resolver(resolver.clone())
        .build()
        .unwrap();
    let inner = reqwest::Client::builder()
        .dns_resolver(Arc::new(resolver))
        .build()
        .unwrap();
    let client = reqwest_middleware::ClientBuilder::new(inner)
        .with(robots.clone())
        .build();
    let frontier =
        robots.frontier_with(FrontierConfig::default().dedup(Dedup::Exact { last: 1_000 }));
    // The first URL of each site is disallowed: the frontier fetches the site's robots.txt
    // before handing anything out, so it is dropped at its turn, never handed to a worker.
    for host in HOSTS {
        let base = format!("http://{host}:{}", server.port());
        frontier
            .push(format!("{base}/private/first").parse().unwrap())
            .await
            .unwrap();
        frontier
            .push(format!("{base}/").parse().unwrap())
            .await
            .unwrap();
    }
    let run = frontier.run(3, |job| {
        let client = client.clone();
        async move {
            match client.get(job.url().clone()).send().await {
                Ok(response) => {
                    let base = response.url().clone();
                    let body = response.bytes().await.unwrap_or_default();
                    Visit::Fetched(links(&base, &body))
                }
                Err(error) => match RobotsError::from_middleware_error(&error) {
                    Some(refused) => Visit::Refused(refused.clone()),
                    None => Visit::Failed,
                },
            }
        }
    });
    let stats = tokio::time::timeout(Duration::from_secs(60), run)
        .await
        .expect("the crawl did not end by itself");
    let pages = server.pages();
    assert_eq!(pages.len(), 4 * HOSTS.len(), "{pages:?}");
    assert_eq!(stats.fetched as usize, pages.len(), "{stats:?}");
    assert_eq!(stats.disallowed as usize, 3 * HOSTS.len(), "{stats:?}");
    assert_eq!(stats.failed + stats.refused, 0, "{stats:?}");
    assert_eq!(stats.handed_out, stats.fetched, "{stats:?}");
    // robots.txt once a site, before its pages.
    let seen = server.seen();
    assert_eq!(seen.len(), pages.len() + HOSTS.len(), "{seen:?}");
}

/// A site of endless links, six a page, and a budget of a few kilobytes: every job pushes more
/// than the budget holds while it holds its group's only place. The crawl (stopped after 300
/// pages by its handler) never hangs; the links past the overdraft are counted, not waited for.
#[tokio::test(start_paused = true)]
async fn pushing_links_from_jobs_never_deadlocks_at_the_budget() {
    // The budgets just above the least that holds one URL (the hanging budgets were
    // 8,403 to 8,613 bytes, that least then): with no overdraft most links are refused and the
    // crawl runs dry early; with the default's 64 KiB a job's six links always fit, and it
    // goes on to the handler's stop.
    let least = (1_000..100_000)
        .step_by(10)
        .find(|&max_bytes| {
            RobotsLayer::builder("FooBot/1.0")
                .build()
                .frontier_with(FrontierConfig::default().max_bytes(max_bytes))
                .try_push("http://one.test/p".parse().unwrap())
                .is_ok()
        })
        .expect("a budget that holds one URL");
    for (max_bytes, overdraft) in [
        (least, 0),
        (least + 100, 0),
        (least + 210, 0),
        (least + 100, 64 << 10),
    ] {
        let site = MemorySite::new(|_, path, _| match path {
            "/robots.txt" => Reply::ok(""),
            path => Reply::ok(
                (0..6)
                    .map(|n| format!("{path}/{n}"))
                    .collect::<Vec<_>>()
                    .join(" "),
            ),
        });
        let layer = RobotsLayer::builder("FooBot/1.0")
            .min_delay(Duration::from_millis(1))
            .build();
        let service = layer.layer(site.service());
        let frontier = layer.frontier_with(
            FrontierConfig::default()
                .max_bytes(max_bytes)
                .job_overdraft(overdraft),
        );
        // As many sites as fit (one at the tightest budgets: the queue's fixed part takes most).
        let seeded = HOSTS
            .iter()
            .filter(|host| {
                frontier
                    .try_push(format!("http://{host}/p").parse().unwrap())
                    .is_ok()
            })
            .count();
        assert!(seeded >= 1, "{:?}", frontier.stats());
        let seen = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let run = frontier.run(4, |job| {
            let seen = seen.clone();
            let service = service.clone();
            async move {
                if seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst) >= 300 {
                    return Visit::Failed;
                }
                visit_through(service, job).await
            }
        });
        let stats = tokio::time::timeout(Duration::from_secs(3_600), run)
            .await
            .unwrap_or_else(|_| panic!("hung at a budget of {max_bytes} bytes"));
        assert!(stats.fetched >= 1, "{stats:?}");
        if overdraft == 0 {
            assert!(stats.over_budget > 0, "{stats:?}");
        } else {
            assert_eq!(stats.fetched, 300, "{stats:?}");
        }
        assert_eq!(stats.fetched as usize, pages_seen(&site), "{stats:?}");
        assert!(
            stats.bytes <= max_bytes + overdraft * 4,
            "{max_bytes}: {stats:?}"
        );
    }
}

/// robots.txt answers 503 twice, then 200 (tries at 0, 10 and 70 s): under a hold of two
/// minutes the page refused as `RobotsUnreachable` is retried after the pause the error names,
/// with exact de-duplication on (a push of it again would be a duplicate), and fetched once the
/// site recovered.
#[tokio::test(start_paused = true)]
async fn a_url_refused_for_an_unreachable_robots_txt_is_retried_and_fetched() {
    let site = MemorySite::new(|_, path, seen_before| match path {
        "/robots.txt" if seen_before < 2 => Reply::status(503, &[]),
        "/robots.txt" => Reply::ok(ROBOTS),
        _ => Reply::ok(""),
    });
    let layer = RobotsLayer::builder("FooBot/1.0")
        .min_delay(Duration::from_millis(10))
        .build();
    let service = layer.layer(site.service());
    let frontier = layer.frontier_with(
        FrontierConfig::default()
            .dedup(Dedup::Exact { last: 100 })
            .hold_unreachable(Duration::from_secs(120)),
    );
    frontier
        .push("http://one.test/page".parse().unwrap())
        .await
        .unwrap();
    let run = frontier.run(1, |job| visit_through(service.clone(), job));
    let stats = tokio::time::timeout(Duration::from_secs(86_400), run)
        .await
        .expect("the crawl did not end");
    assert_eq!(site.count("/page"), 1, "{:?}", site.visits());
    assert_eq!(stats.fetched, 1, "{stats:?}");
    assert!(stats.retried >= 1, "{stats:?}");
    assert_eq!(stats.gave_up, 0, "{stats:?}");

    // Given up once the next try would come past the hold: robots.txt never comes back (tried
    // at 0, 10, 70, 190 s; the next, at 430 s, is past 5 min). `max_retries` is for pages.
    let site = MemorySite::new(|_, path, _| match path {
        "/robots.txt" => Reply::status(503, &[]),
        _ => Reply::ok(""),
    });
    let layer = RobotsLayer::builder("FooBot/1.0").build();
    let service = layer.layer(site.service());
    let frontier = layer.frontier_with(
        FrontierConfig::default()
            .max_retries(1)
            .hold_unreachable(Duration::from_secs(300)),
    );
    frontier
        .push("http://one.test/page".parse().unwrap())
        .await
        .unwrap();
    let run = frontier.run(1, |job| visit_through(service.clone(), job));
    let stats = tokio::time::timeout(Duration::from_secs(86_400 * 7), run)
        .await
        .expect("the crawl did not end");
    assert_eq!(
        (
            stats.retried,
            stats.gave_up,
            stats.gave_up_unreachable,
            stats.fetched
        ),
        (3, 1, 1, 0),
        "{stats:?}"
    );
    assert_eq!(site.count("/page"), 0);
    assert_eq!(site.count("/robots.txt"), 4);
}

/// Issue 71: a page the middleware reaches through a redirect, answered 429 at its last hop,
/// is retried by the loop as well as one answered so directly: the loop watches the URL it
/// handed out, and the middleware tells it the answer of the hop it ended at.
#[tokio::test(flavor = "multi_thread")]
async fn a_distress_answer_at_a_redirects_target_is_retried_by_the_loop() {
    let server = Site::start(|target, seen_before| match target {
        "/robots.txt" => Answer::ok("User-agent: *\nAllow: /\n"),
        "/old" => Answer::status("301 Moved Permanently", &["Location: /busy"]),
        "/busy" if seen_before == 0 => Answer::status("429 Too Many Requests", &["Retry-After: 1"]),
        _ => Answer::ok("a page"),
    })
    .await;
    let robots = RobotsMiddleware::builder("FooBot/1.0")
        .min_delay(Duration::from_millis(20))
        .build()
        .unwrap();
    let client = robots.client().unwrap();
    let frontier = robots.frontier();
    frontier
        .push(server.url("/old").parse().unwrap())
        .await
        .unwrap();
    let run = frontier.run(1, |job| {
        let client = client.clone();
        async move {
            match client.get(job.url().clone()).send().await {
                Ok(response) => {
                    drop(response.bytes().await);
                    Visit::Fetched(Vec::new())
                }
                Err(_) => Visit::Failed,
            }
        }
    });
    let stats = tokio::time::timeout(Duration::from_secs(30), run)
        .await
        .expect("the crawl did not end by itself");
    let busy = server
        .pages()
        .iter()
        .filter(|s| s.target == "/busy")
        .count();
    assert_eq!(busy, 2, "{:?}", server.pages());
    assert_eq!(
        (stats.distress, stats.retried, stats.fetched),
        (1, 1, 1),
        "{stats:?}"
    );
}
