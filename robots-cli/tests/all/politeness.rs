//! Politeness as REP.md section 8 says it, seen at local sites that log every arrival, through
//! the `robots crawl` binary: one budget per group (host by default), never faster than a site
//! asked, slower on distress, slow answers and rate-limit headers, and redirect hops judged by
//! the address they resolve to. The fleet cases run two real processes on a real Redis.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::crawl::{UA, by_url, crawl_async, gaps, json_lines};
use crate::redis_server::RedisServer;
use crate::site::{Answer, Seen, Site};

pub(crate) fn args(options: &[&str], urls: &[String]) -> Vec<String> {
    let mut args: Vec<String> = ["--user-agent", UA, "--format", "json"]
        .iter()
        .chain(options)
        .map(|s| s.to_string())
        .collect();
    args.extend(urls.iter().cloned());
    args
}

pub(crate) fn starts(seen: &[Seen]) -> Vec<Instant> {
    seen.iter().map(|s| s.at).collect()
}

pub(crate) fn secs(gap: &Duration) -> f64 {
    gap.as_secs_f64()
}

/// A site whose robots.txt says `robots` and whose pages answer `page(n)`, n counting page
/// requests in arrival order (the crawl may send one group's URLs in any order).
pub(crate) async fn site(
    robots: &'static str,
    page: impl Fn(usize) -> Answer + Send + Sync + 'static,
) -> Site {
    let count = Arc::new(AtomicUsize::new(0));
    Site::start(move |target, _| {
        if target == "/robots.txt" {
            Answer::ok(robots)
        } else {
            page(count.fetch_add(1, Ordering::SeqCst))
        }
    })
    .await
}

/// A JSON line's error message.
pub(crate) fn error_of(line: &serde_json::Value) -> &str {
    line["error"].as_str().unwrap_or_default()
}

pub(crate) fn urls(site: &Site, paths: &[&str]) -> Vec<String> {
    paths.iter().map(|p| site.url(p)).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_overlong_crawl_delay_is_refused_honoured_or_clamped() {
    let site = site("User-agent: *\nCrawl-delay: 2\n", |_| Answer::ok("page")).await;
    // Refused by default: a typed outcome per URL, nothing fetched.
    let out = crawl_async(args(&["--max-delay", "1"], &urls(&site, &["/r1", "/r2"]))).await;
    let lines = json_lines(&out);
    for url in urls(&site, &["/r1", "/r2"]) {
        let line = by_url(&lines, &url);
        assert_eq!(line["outcome"], "crawl-delay-too-long", "{line}");
        assert!(error_of(line).contains("Crawl-delay of 2 s"), "{line}");
        // Said with the tool's flags, not the library's setting.
        assert!(
            error_of(line).contains("--max-delay 1 s")
                && error_of(line).contains("`--overlong-crawl-delay honor`")
                && !error_of(line).contains("OverlongCrawlDelay"),
            "{line}"
        );
    }
    assert_eq!(
        out.status.code(),
        Some(0),
        "a refusal by policy is not a failure"
    );
    assert!(site.pages().is_empty(), "{:?}", site.pages());
    // Honoured: the whole 2 s.
    let honoured = ["--max-delay", "1", "--overlong-crawl-delay", "honor"];
    crawl_async(args(&honoured, &urls(&site, &["/h1", "/h2"]))).await;
    let gap = gaps(starts(&site.pages()))[0];
    assert!(secs(&gap) >= 1.95, "honoured: {gap:?}");
    // Clamped by name: the maximum, 1 s.
    site.clear();
    let clamped = ["--max-delay", "1", "--overlong-crawl-delay", "clamp"];
    let out = crawl_async(args(&clamped, &urls(&site, &["/c1", "/c2"]))).await;
    assert!(json_lines(&out).iter().all(|l| l["outcome"] == "fetched"));
    let gap = gaps(starts(&site.pages()))[0];
    assert!(secs(&gap) >= 0.95 && secs(&gap) < 1.9, "clamped: {gap:?}");
    // The library's warning reaches the user, once per origin (issue 26: the CLI prints the
    // `tracing` events at warn level).
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr
            .matches("Crawl-delay above the maximum: clamped")
            .count(),
        1,
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn server_errors_and_resets_back_off_exponentially_with_jitter() {
    // 500, reset, 500, reset, then a page.
    let site = site("", |n| match n {
        0 | 2 => Answer::status("500 Internal Server Error", &[]),
        1 | 3 => Answer::reset(),
        _ => Answer::ok("page"),
    })
    .await;
    let options = [
        "--min-delay",
        "0.05",
        "--delay-factor",
        "0",
        "--backoff-base",
        "0.4",
        "--backoff-max",
        "1.6",
    ];
    let out = crawl_async(args(
        &options,
        &urls(&site, &["/1", "/2", "/3", "/4", "/5"]),
    ))
    .await;
    let lines = json_lines(&out);
    assert_eq!(lines.len(), 5);
    let gaps = gaps(starts(&site.pages()));
    assert_eq!(gaps.len(), 4, "{gaps:?}");
    for (gap, nominal) in gaps.iter().zip([0.4, 0.8, 1.6, 1.6]) {
        assert!(
            secs(gap) >= nominal * 0.9 && secs(gap) <= nominal * 1.1 + 0.25,
            "gaps {gaps:?}, expected about 0.4/0.8/1.6/1.6 s"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn slow_answers_slow_the_crawl_by_the_delay_factor() {
    let slow = |_| Answer {
        delay: Duration::from_millis(600),
        ..Answer::ok("slow")
    };
    let (default, double, off) = (
        site("", slow).await,
        site("", slow).await,
        site("", slow).await,
    );
    let run = |site: &Site, factor: Option<&'static str>| {
        let mut options = vec!["--min-delay", "0.1"];
        if let Some(factor) = factor {
            options.extend(["--delay-factor", factor]);
        }
        crawl_async(args(&options, &urls(site, &["/1", "/2", "/3"])))
    };
    futures_util::future::join3(
        run(&default, None),
        run(&double, Some("2")),
        run(&off, Some("0")),
    )
    .await;
    for gap in gaps(starts(&default.pages())) {
        assert!(secs(&gap) >= 1.18, "factor 1: {gap:?}");
    }
    for gap in gaps(starts(&double.pages())) {
        assert!(secs(&gap) >= 1.78, "factor 2: {gap:?}");
    }
    // Off: the answer's 0.6 s and the 0.1 s interval.
    for gap in gaps(starts(&off.pages())) {
        assert!(secs(&gap) < 1.1, "factor 0: {gap:?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn rate_limit_headers_that_say_nothing_is_left_pause_until_the_reset() {
    let ietf = site("", |n| match n {
        0 => Answer::status(
            "200 OK",
            &[
                "RateLimit: \"burst\";r=0;t=2, \"day\";r=500;t=3600",
                "RateLimit-Policy: \"burst\";q=10;w=2",
            ],
        ),
        _ => Answer::ok("page"),
    })
    .await;
    let common = site("", |n| match n {
        0 => Answer::status(
            "200 OK",
            &["X-RateLimit-Remaining: 0", "X-RateLimit-Reset: 2"],
        ),
        _ => Answer::ok("page"),
    })
    .await;
    let options = ["--min-delay", "0.05", "--delay-factor", "0"];
    futures_util::future::join(
        crawl_async(args(&options, &urls(&ietf, &["/1", "/2"]))),
        crawl_async(args(&options, &urls(&common, &["/1", "/2"]))),
    )
    .await;
    for (name, site) in [("RateLimit", &ietf), ("X-RateLimit", &common)] {
        let gap = gaps(starts(&site.pages()))[0];
        assert!(secs(&gap) >= 1.95, "{name}: {gap:?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn two_ports_of_one_host_share_one_budget_unless_keyed_by_origin() {
    let (one, two) = (
        site("", |_| Answer::ok("a")).await,
        site("", |_| Answer::ok("b")).await,
    );
    let mut both = urls(&one, &["/1", "/2", "/3"]);
    both.extend(urls(&two, &["/1", "/2", "/3"]));
    let options = ["--min-delay", "0.5", "--delay-factor", "0"];
    crawl_async(args(&options, &both)).await;
    let mut all = starts(&one.pages());
    all.extend(starts(&two.pages()));
    assert_eq!(all.len(), 6);
    for gap in gaps(all) {
        assert!(secs(&gap) >= 0.49, "host key: {gap:?}");
    }
    // Keyed by origin, the two ports are crawled side by side.
    one.clear();
    two.clear();
    let by_origin = [
        "--min-delay",
        "0.5",
        "--delay-factor",
        "0",
        "--politeness-key",
        "origin",
    ];
    crawl_async(args(&by_origin, &both)).await;
    let mut all = starts(&one.pages());
    all.extend(starts(&two.pages()));
    let closest = gaps(all).into_iter().min().unwrap();
    assert!(secs(&closest) < 0.3, "origin key: {closest:?}");
}

/// `--resolve` options sending each name to the site.
pub(crate) fn resolve(site: &Site, names: &[&str]) -> Vec<String> {
    names
        .iter()
        .flat_map(|n| {
            [
                "--resolve".to_string(),
                format!("{n}:{}:127.0.0.1", site.port()),
            ]
        })
        .collect()
}

pub(crate) fn with(options: &[&str], extra: &[String]) -> Vec<String> {
    options
        .iter()
        .map(|s| s.to_string())
        .chain(extra.iter().cloned())
        .collect()
}

fn of_host<'a>(seen: &'a [Seen], host: &str) -> impl Iterator<Item = Instant> + 'a {
    let host = host.to_string();
    seen.iter()
        .filter(move |s| s.host.as_deref() == Some(&host))
        .map(|s| s.at)
}

#[tokio::test(flavor = "multi_thread")]
async fn the_domain_key_groups_by_registrable_domain() {
    let site = site("", |_| Answer::ok("page")).await;
    let names = ["a.shop.co.uk", "b.shop.co.uk", "x.co.uk", "y.co.uk"];
    let options = with(
        &[
            "--min-delay",
            "1",
            "--delay-factor",
            "0",
            "--politeness-key",
            "domain",
        ],
        &resolve(&site, &names),
    );
    let targets: Vec<String> = names.iter().map(|n| site.url_as(n, "/page")).collect();
    let options: Vec<&str> = options.iter().map(String::as_str).collect();
    let out = crawl_async(args(&options, &targets)).await;
    assert!(
        json_lines(&out).iter().all(|l| l["outcome"] == "fetched"),
        "{out:?}"
    );
    let pages = site.pages();
    let at = |host| {
        of_host(&pages, host)
            .next()
            .unwrap_or_else(|| panic!("{host}: {pages:?}"))
    };
    let apart = |a, b| {
        let (a, b): (Instant, Instant) = (at(a), at(b));
        if a > b { a - b } else { b - a }
    };
    assert!(
        apart("a.shop.co.uk", "b.shop.co.uk") >= Duration::from_millis(990),
        "one domain"
    );
    assert!(
        apart("x.co.uk", "y.co.uk") < Duration::from_millis(500),
        "two domains"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_ip_key_groups_names_of_one_address() {
    let site = site("", |_| Answer::ok("page")).await;
    let names = ["n1.test", "n2.test"];
    let targets: Vec<String> = ["/1", "/2"]
        .iter()
        .flat_map(|p| names.iter().map(|n| site.url_as(n, p)))
        .collect();
    for (key, shared) in [("ip", true), ("host", false)] {
        site.clear();
        let options = with(
            &[
                "--min-delay",
                "0.5",
                "--delay-factor",
                "0",
                "--politeness-key",
                key,
            ],
            &resolve(&site, &names),
        );
        let options: Vec<&str> = options.iter().map(String::as_str).collect();
        crawl_async(args(&options, &targets)).await;
        let all = starts(&site.pages());
        assert_eq!(all.len(), 4);
        let closest = gaps(all).into_iter().min().unwrap();
        if shared {
            assert!(secs(&closest) >= 0.49, "ip key: {closest:?}");
        } else {
            assert!(secs(&closest) < 0.3, "host key: {closest:?}");
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_redirect_to_a_name_resolving_to_an_internal_address_is_refused() {
    let port = Arc::new(AtomicUsize::new(0));
    let site = {
        let port = port.clone();
        Site::start(move |target, _| {
            let port = port.load(Ordering::SeqCst);
            match target {
                "/robots.txt" => Answer::ok(""),
                "/go" => Answer {
                    headers: vec![format!("Location: http://internal.example:{port}/admin")],
                    ..Answer::status("302 Found", &[])
                },
                "/hop" => Answer::status("302 Found", &["Location: /final"]),
                _ => Answer::ok("page"),
            }
        })
        .await
    };
    port.store(usize::from(site.port()), Ordering::SeqCst);
    let options = with(
        &["--min-delay", "0.05"],
        &resolve(&site, &["public.example", "internal.example"]),
    );
    let options: Vec<&str> = options.iter().map(String::as_str).collect();
    let (go, hop) = (
        site.url_as("public.example", "/go"),
        site.url_as("public.example", "/hop"),
    );
    let out = crawl_async(args(&options, &[go.clone(), hop.clone()])).await;
    let lines = json_lines(&out);
    let refused = by_url(&lines, &go);
    assert_eq!(refused["outcome"], "address-refused", "{refused}");
    assert!(error_of(refused).contains("internal.example"), "{refused}");
    // A hop within the host is followed.
    assert_eq!(by_url(&lines, &hop)["status"], 200);
    let seen = site.seen();
    assert!(
        seen.iter()
            .all(|s| s.host.as_deref() != Some("internal.example")),
        "{seen:?}"
    );
    assert!(seen.iter().any(|s| s.target == "/final"));
}

pub(crate) fn fleet(redis: &RedisServer, options: &[&str], urls: Vec<String>) -> Vec<String> {
    let mut all = vec![
        "--redis".to_string(),
        redis.url(),
        "--fleet-size".into(),
        "2".into(),
    ];
    all.extend(options.iter().map(|s| s.to_string()));
    args(&all.iter().map(String::as_str).collect::<Vec<_>>(), &urls)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_fleet_shares_back_off_rate_limits_and_the_adaptive_delay() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let options = [
        "--min-delay",
        "0.05",
        "--delay-factor",
        "0",
        "--backoff-base",
        "1.5",
    ];
    // A 500 seen by one process pauses the other (1.5 s, -10% at most).
    let failing = site("", |n| match n {
        0 => Answer::status("500 Internal Server Error", &[]),
        _ => Answer::ok("page"),
    })
    .await;
    crawl_async(fleet(&redis, &options, urls(&failing, &["/fail"]))).await;
    crawl_async(fleet(&redis, &options, urls(&failing, &["/after"]))).await;
    let gap = gaps(starts(&failing.pages()))[0];
    assert!(secs(&gap) >= 1.33, "back-off across the fleet: {gap:?}");
    // Rate-limit headers seen by one process pause the other.
    let limited = site("", |n| match n {
        0 => Answer::status("200 OK", &["RateLimit: \"burst\";r=0;t=2"]),
        _ => Answer::ok("page"),
    })
    .await;
    crawl_async(fleet(&redis, &options, urls(&limited, &["/first"]))).await;
    crawl_async(fleet(&redis, &options, urls(&limited, &["/second"]))).await;
    let gap = gaps(starts(&limited.pages()))[0];
    assert!(secs(&gap) >= 1.95, "rate limit across the fleet: {gap:?}");
    // A slow answer to one process spaces the other's request (factor 2: 0.6 + 1.2 s).
    let slow = site("", |n| Answer {
        delay: Duration::from_millis(if n == 0 { 600 } else { 0 }),
        ..Answer::ok("page")
    })
    .await;
    let adaptive = ["--min-delay", "0.05", "--delay-factor", "2"];
    crawl_async(fleet(&redis, &adaptive, urls(&slow, &["/slow"]))).await;
    crawl_async(fleet(&redis, &adaptive, urls(&slow, &["/next"]))).await;
    let gap = gaps(starts(&slow.pages()))[0];
    assert!(
        secs(&gap) >= 1.75,
        "adaptive delay across the fleet: {gap:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_fleet_paces_two_ports_of_one_host_as_one() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let (one, two) = (
        site("", |_| Answer::ok("a")).await,
        site("", |_| Answer::ok("b")).await,
    );
    let options = ["--min-delay", "0.4", "--delay-factor", "0"];
    futures_util::future::join(
        crawl_async(fleet(&redis, &options, urls(&one, &["/1", "/2", "/3"]))),
        crawl_async(fleet(&redis, &options, urls(&two, &["/1", "/2", "/3"]))),
    )
    .await;
    let mut all = starts(&one.pages());
    all.extend(starts(&two.pages()));
    assert_eq!(all.len(), 6);
    for gap in gaps(all) {
        assert!(
            secs(&gap) >= 0.39,
            "two processes, two ports, one host: {gap:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_fleet_groups_by_domain_across_processes() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let site = site("", |_| Answer::ok("page")).await;
    let names = ["a.shop.co.uk", "b.shop.co.uk"];
    let options = with(
        &[
            "--min-delay",
            "0.5",
            "--delay-factor",
            "0",
            "--politeness-key",
            "domain",
        ],
        &resolve(&site, &names),
    );
    let options: Vec<&str> = options.iter().map(String::as_str).collect();
    let runs = names.map(|name| {
        let urls = vec![site.url_as(name, "/1"), site.url_as(name, "/2")];
        crawl_async(fleet(&redis, &options, urls))
    });
    futures_util::future::join_all(runs).await;
    let all = starts(&site.pages());
    assert_eq!(all.len(), 4);
    for gap in gaps(all) {
        assert!(
            secs(&gap) >= 0.49,
            "one registrable domain, two processes: {gap:?}"
        );
    }
}

/// The frame of the fleet-under-fault tests: sites, one group each (`--politeness-key origin`),
/// crawled by several `robots crawl --redis` processes at once, each site's arrivals read.
struct SiteFleet {
    sites: Vec<Site>,
    options: Vec<String>,
    /// The interval, seconds.
    interval: f64,
}

impl SiteFleet {
    async fn start(sites: usize, redis: &str, fleet_size: u32, interval: f64) -> SiteFleet {
        let mut started = Vec::with_capacity(sites);
        for _ in 0..sites {
            started.push(site("", |_| Answer::ok("page")).await);
        }
        let options = [
            "--redis",
            redis,
            "--fleet-size",
            &fleet_size.to_string(),
            "--min-delay",
            &interval.to_string(),
            "--delay-factor",
            "0",
            "--politeness-key",
            "origin",
        ]
        .map(String::from)
        .to_vec();
        SiteFleet {
            sites: started,
            options,
            interval,
        }
    }

    /// `processes` crawls at once, each asking every site for `per_site` pages (named by `tag`,
    /// the process and the page); each must succeed.
    async fn crawl(&self, tag: &str, processes: usize, per_site: usize) {
        let options: Vec<&str> = self.options.iter().map(String::as_str).collect();
        let runs = (0..processes).map(|process| {
            let urls: Vec<String> = (0..per_site)
                .flat_map(|n| {
                    self.sites
                        .iter()
                        .map(move |site| site.url(&format!("/{tag}-{process}-{n}")))
                })
                .collect();
            crawl_async(args(&options, &urls))
        });
        for output in futures_util::future::join_all(runs).await {
            assert!(
                output.status.success(),
                "{}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
    }

    /// Every site saw `pages` pages, no two closer than the interval (less 5 ms of rounding).
    fn assert_spaced(&self, pages: usize, what: &str) {
        for site in &self.sites {
            let all = starts(&site.pages());
            assert_eq!(all.len(), pages, "every page fetched once");
            for gap in gaps(all) {
                assert!(
                    secs(&gap) >= self.interval - 0.005,
                    "{what}: two requests to one site {gap:?} apart"
                );
            }
        }
    }
}

/// Spec 11: a Redis that loses its state in the middle of a crawl (restarted without
/// persistence) does not let two processes start requests to one group closer than its
/// interval. Four processes, six sites (one group each), the server restarted 1.2 s in; every
/// site's arrivals are read.
#[tokio::test(flavor = "multi_thread")]
async fn a_redis_restart_mid_crawl_never_lets_two_processes_collide() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let fleet = SiteFleet::start(6, &redis.url(), 4, 0.25).await;
    let restart = tokio::task::spawn_blocking(move || {
        std::thread::sleep(Duration::from_millis(1200));
        let mut redis = redis;
        redis.stop();
        redis.restart();
        redis
    });
    fleet.crawl("p", 4, 4).await;
    let _redis = restart.await.unwrap();
    fleet.assert_spaced(16, "across the restart");
}

/// `robots crawl --redis redis+cluster://…`: two processes on a real three-master Redis Cluster
/// share one interval per group and one robots.txt fetch per origin.
#[tokio::test(flavor = "multi_thread")]
async fn two_processes_share_a_redis_cluster() {
    let Some(cluster) = crate::redis_server::RedisCluster::start() else {
        return;
    };
    let fleet = SiteFleet::start(4, &cluster.url(), 2, 0.3).await;
    fleet.crawl("p", 2, 3).await;
    // The shared state is in the cluster (a fallback would leave none): at least each origin's
    // robots.txt record. (Which nodes hold them depends on the sites' random ports: all five
    // hash tags fall on one node of three about once in eighty runs.)
    let keys = cluster.keys_per_node();
    assert!(
        keys.iter().sum::<usize>() >= fleet.sites.len(),
        "keys per node: {keys:?}"
    );
    for site in &fleet.sites {
        assert_eq!(
            site.count("/robots.txt"),
            1,
            "one robots.txt fetch per origin"
        );
    }
    fleet.assert_spaced(6, "two processes, one cluster");
}

/// A TCP proxy on 127.0.0.1 to a Redis port that can be switched, as a failover behind one
/// address (a virtual IP, a Sentinel-aware proxy) switches: the connections to the old server
/// are cut.
struct SwitchingProxy {
    port: u16,
    backend: Arc<std::sync::atomic::AtomicU16>,
    links: Arc<std::sync::Mutex<Vec<tokio::task::JoinHandle<()>>>>,
}

impl SwitchingProxy {
    async fn start(backend: u16) -> SwitchingProxy {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let backend = Arc::new(std::sync::atomic::AtomicU16::new(backend));
        let links: Arc<std::sync::Mutex<Vec<tokio::task::JoinHandle<()>>>> = Arc::default();
        let (to, held) = (backend.clone(), links.clone());
        tokio::spawn(async move {
            while let Ok((mut client, _)) = listener.accept().await {
                let port = to.load(Ordering::SeqCst);
                let link = tokio::spawn(async move {
                    if let Ok(mut server) =
                        tokio::net::TcpStream::connect(("127.0.0.1", port)).await
                    {
                        let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                    }
                });
                held.lock().unwrap().push(link);
            }
        });
        SwitchingProxy {
            port,
            backend,
            links,
        }
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// New connections go to `backend`; the ones open now are cut.
    fn switch_to(&self, backend: u16) {
        self.backend.store(backend, Ordering::SeqCst);
        for link in self.links.lock().unwrap().drain(..) {
            link.abort();
        }
    }
}

/// Spec 11: a failover to a replica that lags behind does not let requests to one group start
/// closer than its interval. The replica stops following the master after a first crawl; a
/// second crawl goes on through the master, which then dies, the address now leading to the
/// replica; a third crawl starts at once. The replica's state is a crawl behind, but it kept
/// the master's epoch: the fleet sees another server answer and fences as after a loss.
#[tokio::test(flavor = "multi_thread")]
async fn a_failover_to_a_lagging_replica_never_lets_requests_collide() {
    let Some(mut master) = RedisServer::start() else {
        return;
    };
    let replica = RedisServer::replica_of(&master);
    let proxy = SwitchingProxy::start(master.port).await;
    let fleet = SiteFleet::start(6, &proxy.url(), 2, 0.25).await;
    fleet.crawl("first", 2, 1).await;
    // The replica has the fleet's state of the first crawl, then stops following.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(replica.command(&["REPLICAOF", "NO", "ONE"]).trim(), "+OK");
    fleet.crawl("second", 2, 1).await;
    // The master dies; the address now leads to the replica; the crawl goes on at once.
    proxy.switch_to(replica.port);
    master.stop();
    fleet.crawl("third", 2, 1).await;
    fleet.assert_spaced(6, "across the failover");
}

/// Issue 33: a Redis Cluster failover under load. Six `robots crawl --redis redis+cluster://…`
/// processes crawl 40 origins (one group each) on a cluster of three masters and three
/// replicas; 3 s in, the master holding the most keys is killed (`kill -9`) and the cluster
/// promotes its replica. Every page is fetched, no two requests to a site come closer than the
/// interval (the promoted node is another node: its slots are fenced like a restart), and
/// robots.txt is fetched at most twice per origin (a copy on the dead master may be lost).
#[tokio::test(flavor = "multi_thread")]
async fn a_cluster_master_killed_mid_crawl_never_lets_requests_collide() {
    let Some(cluster) = crate::redis_server::RedisCluster::start_with_replicas() else {
        return;
    };
    let mut fleet = SiteFleet::start(40, &cluster.url(), 6, 0.25).await;
    // A failover takes the cluster a few seconds: requests wait for it rather than fall back.
    fleet
        .options
        .extend(["--fleet-outage-grace", "10"].map(String::from));
    let failover = tokio::task::spawn_blocking(move || {
        std::thread::sleep(Duration::from_secs(3));
        let keys = cluster.keys_per_node();
        let victim = (0..3).max_by_key(|&i| keys[i]).unwrap_or(0);
        let mut cluster = cluster;
        cluster.nodes[victim].stop();
        let killed = Instant::now();
        while !cluster.is_master(3 + victim) && killed.elapsed() < Duration::from_secs(30) {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(cluster.is_master(3 + victim), "the replica was promoted");
        (cluster, victim, keys, killed.elapsed())
    });
    let started = Instant::now();
    fleet.crawl("p", 6, 5).await;
    let took = started.elapsed();
    let (cluster, victim, keys, recovered) = failover.await.unwrap();
    eprintln!(
        "killed master {victim} (keys per node {keys:?}); its replica promoted in {recovered:?}; \
         the crawl took {took:?}"
    );
    assert!(
        took > Duration::from_secs(4),
        "the crawl outlasted the kill"
    );
    fleet.assert_spaced(30, "across a cluster failover");
    // The failover was recognised: the promoted node's pacing state says it began on that
    // node (its epochs name it), not on the dead master whose copy it inherited.
    let promoted = &cluster.nodes[3 + victim];
    let id = promoted.command(&["CLUSTER", "MYID"]);
    let id = id.lines().nth(1).unwrap_or_default();
    let listed = promoted.command(&["KEYS", "*:epoch"]);
    let epochs: Vec<&str> = listed.lines().filter(|l| l.ends_with(":epoch")).collect();
    assert!(
        !epochs.is_empty(),
        "the promoted node holds epochs: {listed}"
    );
    for key in epochs {
        let value = promoted.command(&["GET", key]);
        assert!(
            value.trim_end().ends_with(id),
            "{key} = {value} (node {id})"
        );
    }
    for site in &fleet.sites {
        assert!(
            site.count("/robots.txt") <= 2,
            "robots.txt fetched {} times",
            site.count("/robots.txt")
        );
    }
}
