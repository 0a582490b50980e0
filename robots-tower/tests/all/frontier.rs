//! The frontier in front of the layer and the middleware, as a crawler uses it: 20 URLs of a
//! site asking `Crawl-delay: 1`, listed first, then 5 URLs on each of 20 sites that ask for
//! nothing, taken by 8 workers. Queued behind the slow site in the workers' futures
//! (`buffer_unordered(8)`), the fast pages took 20 s; from the frontier they are done at once,
//! the slow site is never asked faster than its Crawl-delay, and the pacing is asked at most
//! twice per URL (the frontier's ask, then the front end's admission).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use robots_fetch::Resolver;
use robots_test_support::memory::{MemorySite, Reply};
use robots_tower::{Frontier, FrontierStats, RobotsLayer, RobotsMiddleware};

use tokio::time::Instant;
use tower::{Layer, ServiceExt};

use crate::site::{Answer, Site};

const SLOW_ROBOTS: &str = "User-agent: *\nCrawl-delay: 1\n";
const FAST_ROBOTS: &str = "User-agent: *\nDisallow: /private\n";
const WORKERS: usize = 8;

/// The scenario's URLs, the slow site's first, under `base(host)`.
fn urls(base: impl Fn(&str) -> String) -> Vec<String> {
    let slow = (0..20).map(|n| format!("{}/page/{n}", base("slow.test")));
    let fast = (0..20).flat_map(|site| {
        let base = base(&format!("fast{site}.test"));
        (0..5).map(move |n| format!("{base}/page/{n}"))
    });
    slow.chain(fast).collect()
}

/// When each URL's response body ended, by host, as the workers saw it.
type Finished = Arc<Mutex<Vec<(String, Instant)>>>;

/// Pushes the scenario, closes the frontier, and runs `WORKERS` workers fetching with
/// `fetch` (which reads the body to its end); returns when each page was done.
async fn crawl<F, Fut>(frontier: &Frontier, urls: Vec<String>, fetch: F) -> Vec<(String, Instant)>
where
    F: Fn(url::Url) -> Fut + Clone + Send + 'static,
    Fut: std::future::Future<Output = u16> + Send,
{
    for url in urls {
        frontier.push(url.parse().unwrap()).await.unwrap();
    }
    frontier.close();
    let finished: Finished = Arc::default();
    let workers: Vec<_> = (0..WORKERS)
        .map(|_| {
            let (frontier, fetch, finished) = (frontier.clone(), fetch.clone(), finished.clone());
            tokio::spawn(async move {
                while let Some(job) = frontier.next().await {
                    let status = fetch(job.url().clone()).await;
                    assert_eq!(status, 200, "{}", job.url());
                    let host = job.url().host_str().unwrap_or_default().to_string();
                    finished.lock().unwrap().push((host, Instant::now()));
                    // The job ends after the body: its group may go again.
                    drop(job);
                }
            })
        })
        .collect();
    for worker in workers {
        worker.await.unwrap();
    }
    Arc::try_unwrap(finished).unwrap().into_inner().unwrap()
}

/// What both front ends must show.
fn assert_polite_and_prompt(
    start: Instant,
    finished: &[(String, Instant)],
    slow_starts: &[Instant],
    stats: FrontierStats,
) {
    assert_eq!(finished.len(), 120);
    let fast_done = finished
        .iter()
        .filter(|(host, _)| host != "slow.test")
        .map(|(_, at)| *at - start)
        .max()
        .unwrap();
    assert!(
        fast_done < Duration::from_secs(1),
        "the fast pages took {fast_done:?}"
    );
    assert_eq!(slow_starts.len(), 20);
    for pair in slow_starts.windows(2) {
        assert!(
            pair[1] - pair[0] >= Duration::from_secs(1),
            "the slow site was asked {:?} apart",
            pair[1] - pair[0]
        );
    }
    // The frontier's asks, plus one admission per URL at the front end.
    assert_eq!(stats.handed_out, 120);
    assert!(
        stats.gate_asks + stats.handed_out <= 2 * 120,
        "{} asks for 120 URLs",
        stats.gate_asks + stats.handed_out
    );
    assert_eq!((stats.queued, stats.in_progress, stats.groups), (0, 0, 0));
}

#[tokio::test(start_paused = true)]
async fn through_the_layer_a_slow_site_never_holds_up_the_others() {
    let site = MemorySite::new(|host, path, _| match path {
        "/robots.txt" if host == "slow.test" => Reply::ok(SLOW_ROBOTS),
        "/robots.txt" => Reply::ok(FAST_ROBOTS),
        _ => Reply::ok("page").after(Duration::from_millis(5)),
    });
    let layer = RobotsLayer::builder("FooBot/1.0")
        .min_delay(Duration::from_millis(10))
        .build();
    let service = layer.layer(site.service());
    let frontier = layer.frontier();
    let start = Instant::now();
    let finished = crawl(
        &frontier,
        urls(|host| format!("http://{host}")),
        move |url| {
            let service = service.clone();
            async move {
                let request = http::Request::get(url.as_str())
                    .body(Full::<Bytes>::default())
                    .unwrap();
                let response = service.oneshot(request).await.unwrap();
                let status = response.status().as_u16();
                response.into_body().collect().await.unwrap();
                status
            }
        },
    )
    .await;
    assert_polite_and_prompt(
        start,
        &finished,
        &site.starts("slow.test"),
        frontier.stats(),
    );
}

/// Notes when each request leaves for the network (inside the robots middleware: pages only,
/// robots.txt goes through the middleware's own client), on the test's paused clock.
#[derive(Clone, Default)]
struct Sent(Arc<Mutex<Vec<(String, Instant)>>>);

#[async_trait::async_trait]
impl reqwest_middleware::Middleware for Sent {
    async fn handle(
        &self,
        request: reqwest::Request,
        extensions: &mut http::Extensions,
        next: reqwest_middleware::Next<'_>,
    ) -> reqwest_middleware::Result<reqwest::Response> {
        let host = request.url().host_str().unwrap_or_default().to_string();
        self.0.lock().unwrap().push((host, Instant::now()));
        next.run(request, extensions).await
    }
}

#[tokio::test(start_paused = true)]
async fn through_the_middleware_a_slow_site_never_holds_up_the_others() {
    // Two servers on 127.0.0.1: the slow site's, and one serving the 20 fast sites' names.
    let slow = Site::start(|target, _| match target {
        "/robots.txt" => Answer::ok(SLOW_ROBOTS),
        _ => Answer::ok("page"),
    })
    .await;
    let fast = Site::start(|target, _| match target {
        "/robots.txt" => Answer::ok(FAST_ROBOTS),
        _ => Answer::ok("page"),
    })
    .await;
    let mut resolver = Resolver::new();
    let port = |host: &str| {
        if host == "slow.test" {
            slow.port()
        } else {
            fast.port()
        }
    };
    let hosts =
        std::iter::once("slow.test".to_string()).chain((0..20).map(|s| format!("fast{s}.test")));
    for host in hosts {
        resolver = resolver
            .with_override_text(&format!("{host}:{}:127.0.0.1", port(&host)))
            .unwrap();
    }
    let robots = RobotsMiddleware::builder("FooBot/1.0")
        .min_delay(Duration::from_millis(10))
        .resolver(resolver.clone())
        .build()
        .unwrap();
    let sent = Sent::default();
    let inner = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .dns_resolver(Arc::new(resolver))
        .build()
        .unwrap();
    let client = reqwest_middleware::ClientBuilder::new(inner)
        .with(robots.clone())
        .with(sent.clone())
        .build();
    let frontier = robots.frontier();
    let start = Instant::now();
    let urls = urls(|host| format!("http://{host}:{}", port(host)));
    let finished = crawl(&frontier, urls, move |url| {
        let client = client.clone();
        async move {
            let response = client.get(url).send().await.unwrap();
            let status = response.status().as_u16();
            response.bytes().await.unwrap();
            status
        }
    })
    .await;
    let slow_starts: Vec<Instant> = sent
        .0
        .lock()
        .unwrap()
        .iter()
        .filter(|(host, _)| host == "slow.test")
        .map(|(_, at)| *at)
        .collect();
    assert_polite_and_prompt(start, &finished, &slow_starts, frontier.stats());
    assert_eq!(slow.pages().len(), 20);
    assert_eq!(fast.pages().len(), 100);
}
