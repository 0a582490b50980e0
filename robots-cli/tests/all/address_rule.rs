//! Issue 53: nothing a server sends leads the crawler into the user's network. A public site
//! (a name, resolved to 127.0.0.1 with `--resolve`) names sitemaps on internal addresses in
//! every spelling, redirects its own sitemap there, and lists an index entry there; the
//! internal servers (127.0.0.2, `[::1]`) must see no request at all through
//! `robots sitemaps --expand` and `robots crawl --sitemaps`, and every refusal is reported. The
//! same site named on 127.0.0.1 directly (the caller's own) still has its sitemaps read.
//! Only loopback addresses are served or spelt here: the other internal ranges (10/8,
//! 169.254/16…) are judged by the same rule, tested without a connection in robots-fetch.

use serde_json::Value;

use crate::site::{Answer, Site};
use crate::sitemaps::{json_lines, run};

const PUBLIC: &str = "public.test";
const REBOUND: &str = "rebound.test";

/// An internal server answering everything with a sitemap listing one of its own pages.
async fn internal(address: &str) -> Site {
    let own = std::sync::Arc::new(std::sync::OnceLock::<String>::new());
    let seen = own.clone();
    let site = Site::start_on(address, move |target, _| match target {
        "/robots.txt" => Answer::ok("User-agent: *\nAllow: /\n"),
        _ => Answer::ok(format!(
            "<urlset><url><loc>{}/latest/meta-data/secret</loc></url></urlset>",
            seen.get().cloned().unwrap_or_default()
        )),
    })
    .await;
    let _ = own.set(site.base.clone());
    site
}

/// The ways a URL from a server can name the internal servers (for 127.0.0.2 at `port` and
/// `[::1]` at `v6`), and the name that resolves there.
fn spellings(port: u16, v6: Option<u16>) -> Vec<String> {
    let mut urls: Vec<String> = [
        "127.0.0.2",
        "2130706434",
        "0x7f000002",
        "0177.0.0.2",
        "127.2",
        "[::ffff:127.0.0.2]",
        REBOUND,
    ]
    .iter()
    .map(|host| format!("http://{host}:{port}/s.xml"))
    .collect();
    if let Some(v6) = v6 {
        urls.push(format!("http://[::1]:{v6}/s.xml"));
        urls.push(format!("http://localhost:{v6}/s.xml"));
    }
    urls
}

struct World {
    public: Site,
    inside: Site,
    inside_v6: Option<Site>,
}

impl World {
    async fn start() -> World {
        let inside = internal("127.0.0.2:0").await;
        // (A machine without IPv6 loopback tests the IPv4 spellings only.)
        let inside_v6 = match std::net::TcpListener::bind("[::1]:0") {
            Ok(probe) => {
                drop(probe);
                Some(internal("[::1]:0").await)
            }
            Err(_) => None,
        };
        let (port, v6) = (inside.port(), inside_v6.as_ref().map(Site::port));
        let lines: String = spellings(port, v6)
            .iter()
            .map(|url| format!("Sitemap: {url}\n"))
            .collect();
        let redirect_targets: Vec<String> = spellings(port, v6);
        let count = redirect_targets.len();
        // Its own sitemaps, each redirecting into one of the internal spellings.
        let own_port = std::sync::Arc::new(std::sync::OnceLock::<u16>::new());
        let port_seen = own_port.clone();
        let public = Site::start(move |target, _| match target {
            "/robots.txt" => {
                let own = port_seen.get().copied().unwrap_or_default();
                let redirects: String = (0..count)
                    .map(|n| format!("Sitemap: http://{PUBLIC}:{own}/redirect/{n}\n"))
                    .collect();
                Answer::ok(format!(
                    "User-agent: *\nAllow: /\nSitemap: /own.xml\n{lines}{redirects}"
                ))
            }
            _ if target.starts_with("/redirect/") => {
                let n: usize = target["/redirect/".len()..].parse().unwrap_or(0);
                let to = redirect_targets.get(n).cloned().unwrap_or_default();
                Answer::status("302 Found", &[&format!("Location: {to}")])
            }
            _ => Answer::ok("<urlset></urlset>"),
        })
        .await;
        let _ = own_port.set(public.port());
        World {
            public,
            inside,
            inside_v6,
        }
    }

    fn resolve(&self) -> Vec<String> {
        vec![
            "--resolve".into(),
            format!("{PUBLIC}:{}:127.0.0.1", self.public.port()),
            "--resolve".into(),
            format!("{REBOUND}:{}:127.0.0.2", self.inside.port()),
        ]
    }

    fn public_url(&self, path: &str) -> String {
        self.public.url_as(PUBLIC, path)
    }

    fn internal_requests(&self) -> usize {
        self.inside.seen().len() + self.inside_v6.as_ref().map_or(0, |s| s.seen().len())
    }

    fn spellings(&self) -> Vec<String> {
        spellings(self.inside.port(), self.inside_v6.as_ref().map(Site::port))
    }
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sitemap_lines_naming_internal_addresses_are_refused_and_reported() {
    let world = World::start().await;
    let mut args = strings(&[
        "sitemaps",
        "--expand",
        "--min-delay",
        "0",
        "--timeout",
        "5",
        "--format",
        "json",
    ]);
    args.extend(world.resolve());
    args.push(world.public_url("/"));
    let out = run(args).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(world.internal_requests(), 0, "{stderr}");
    let lines = json_lines(&out);
    for spelling in world.spellings() {
        let url = url::Url::parse(&spelling).unwrap();
        let refused = lines.iter().find(|l| {
            l["sitemap"].as_str() == Some(url.as_str())
                && l["error"]
                    .as_str()
                    .is_some_and(|e| e.contains("address rule"))
        });
        assert!(refused.is_some(), "{spelling} not reported: {lines:?}");
    }
    // No internal page was listed.
    assert!(
        !lines
            .iter()
            .any(|l| l["url"].as_str().is_some_and(|u| u.contains("meta-data"))),
        "{lines:?}"
    );
    // Refusals are failures of the expansion: exit 1.
    assert_eq!(out.status.code(), Some(1), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redirects_into_internal_addresses_are_refused_and_reported() {
    let world = World::start().await;
    let count = world.spellings().len();
    for (run_number, command) in ["sitemaps", "crawl"].into_iter().enumerate() {
        let mut args = match command {
            "sitemaps" => strings(&["sitemaps", "--expand", "--format", "json"]),
            _ => strings(&[
                "crawl",
                "--agent",
                "FooBot",
                "--format",
                "json",
                "--sitemaps",
            ]),
        };
        if command == "crawl" {
            args.push(world.public_url("/"));
        }
        args.extend(strings(&["--min-delay", "0", "--timeout", "5"]));
        args.extend(world.resolve());
        if command == "sitemaps" {
            args.push(world.public_url("/"));
        }
        let out = run(args).await;
        let stderr = String::from_utf8_lossy(&out.stderr);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(world.internal_requests(), 0, "{command}: {stderr}");
        for n in 0..count {
            let from = world.public_url(&format!("/redirect/{n}"));
            assert_eq!(
                world.public.count(&format!("/redirect/{n}")),
                run_number + 1,
                "{command}: the redirecting sitemap {from} was asked once: {stdout} {stderr}"
            );
            let said = if command == "sitemaps" {
                &stdout
            } else {
                &stderr
            };
            assert!(
                said.lines()
                    .any(|l| l.contains(&from) && l.contains("redirect rule")),
                "{command}: the redirect of {from} is not reported: {said}"
            );
        }
        assert_eq!(out.status.code(), Some(1), "{command}: {stderr}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crawl_sitemaps_sends_nothing_inside_and_a_site_named_on_loopback_keeps_its_sitemaps() {
    let world = World::start().await;
    let mut args = strings(&[
        "crawl",
        "--agent",
        "FooBot",
        "--min-delay",
        "0",
        "--timeout",
        "5",
        "--format",
        "json",
        "--sitemaps",
    ]);
    args.push(world.public_url("/"));
    args.extend(world.resolve());
    let out = run(args).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(world.internal_requests(), 0, "{stderr}");
    for spelling in world.spellings() {
        let url = url::Url::parse(&spelling).unwrap();
        assert!(
            stderr.contains(&format!("sitemap {url}:")) && stderr.contains("address rule"),
            "{spelling}: {stderr}"
        );
    }
    assert_eq!(out.status.code(), Some(1), "{stderr}");

    // The caller's own: a site named on 127.0.0.1 hands on URLs into its network freely.
    let own = world.public.url("/");
    let out = run(strings(&[
        "sitemaps",
        "--expand",
        "--min-delay",
        "0",
        "--timeout",
        "5",
        "--format",
        "json",
        &own,
    ]))
    .await;
    assert!(
        world.inside.count("/s.xml") >= 1,
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines = json_lines(&out);
    assert!(
        lines.iter().any(|l| l["url"]
            .as_str()
            .is_some_and(|u| u.ends_with("/latest/meta-data/secret"))
            && l["allowed"] == Value::Bool(true)),
        "{lines:?}"
    );
}

/// Issue 53, point 3: a sitemap never waits on itself. robots.txt lives 1 s
/// (`--robots-min-ttl 1`, `max-age=1`); the sitemap streams its 4 pages over 3 s, so the copy
/// expires while its body is read. The pages read then are judged by the copy the sitemap was
/// fetched with, not by a refresh that would wait for the place the body holds (30 s, then the
/// `--timeout` cut the sitemap and pages were lost with exit 0). All 4 are crawled, exit 0; and
/// a sitemap that breaks off makes the crawl exit 1.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sitemap_read_while_its_robots_txt_expires_loses_no_page() {
    let base = std::sync::Arc::new(std::sync::OnceLock::<String>::new());
    let seen = base.clone();
    let site = Site::start(move |target, _| {
        let base = seen.get().cloned().unwrap_or_default();
        match target {
            "/robots.txt" => Answer {
                headers: vec!["Cache-Control: max-age=1".into()],
                ..Answer::ok(format!(
                    "User-agent: *\nAllow: /\nSitemap: {base}/slow.xml\nSitemap: {base}/broken.xml\n"
                ))
            },
            "/slow.xml" => Answer {
                body_delay: std::time::Duration::from_secs(3),
                ..Answer::ok(format!(
                    "<urlset>{}</urlset>",
                    (1..=4)
                        .map(|n| format!("<url><loc>{base}/page/{n}</loc></url>"))
                        .collect::<String>()
                ))
            },
            // Breaks off inside its root element.
            "/broken.xml" => Answer::ok(format!("<urlset><url><loc>{base}/page/5</loc></url>")),
            _ => Answer::ok("page"),
        }
    })
    .await;
    let _ = base.set(site.base.clone());
    let out = run(strings(&[
        "crawl",
        "--agent",
        "FooBot",
        "--min-delay",
        "0",
        "--robots-min-ttl",
        "1",
        "--timeout",
        "10",
        "--format",
        "json",
        "--sitemaps",
        &site.url("/"),
    ]))
    .await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    for n in 1..=5 {
        assert_eq!(site.count(&format!("/page/{n}")), 1, "page {n}: {stderr}");
    }
    assert!(!stderr.contains("kept unread"), "{stderr}");
    assert!(
        stderr.contains("/broken.xml") && stderr.contains("breaks off"),
        "{stderr}"
    );
    // The broken sitemap could not be read whole: exit 1.
    assert_eq!(out.status.code(), Some(1), "{stderr}");
}

/// A public site that hands on internal URLs in the three other places a server can: the
/// entries of a sitemap index, the pages of a sitemap, and the links of a page that
/// `crawl --follow` reads. 0 requests reach the internal servers; each index entry and each
/// sitemap page on an internal address is reported refused by the address rule (links lead
/// off the site, and
/// `--follow` follows a page's links on its own origin only, which the address rule allows by
/// construction: it judges the host the page was already fetched from).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn index_entries_sitemap_pages_and_links_into_internal_addresses_are_not_requested() {
    let inside = internal("127.0.0.2:0").await;
    let inside_v6 = match std::net::TcpListener::bind("[::1]:0") {
        Ok(probe) => {
            drop(probe);
            Some(internal("[::1]:0").await)
        }
        Err(_) => None,
    };
    let targets = spellings(inside.port(), inside_v6.as_ref().map(Site::port));
    let (entries, pages, links) = {
        let entries: String = targets
            .iter()
            .map(|url| format!("<sitemap><loc>{url}</loc></sitemap>"))
            .collect();
        let pages: String = targets
            .iter()
            .map(|url| format!("<url><loc>{}</loc></url>", url.replace("/s.xml", "/secret")))
            .collect();
        let links: String = targets
            .iter()
            .map(|url| format!("<a href=\"{}\">x</a>", url.replace("/s.xml", "/secret")))
            .collect();
        (entries, pages, links)
    };
    let own_port = std::sync::Arc::new(std::sync::OnceLock::<u16>::new());
    let port_seen = own_port.clone();
    let public = Site::start(move |target, _| match target {
        "/robots.txt" => {
            let own = format!("http://{PUBLIC}:{}", port_seen.get().copied().unwrap_or(0));
            Answer::ok(format!(
                "User-agent: *\nAllow: /\nSitemap: {own}/index.xml\nSitemap: {own}/pages.xml\n"
            ))
        }
        "/index.xml" => Answer::ok(format!("<sitemapindex>{entries}</sitemapindex>")),
        "/pages.xml" => Answer::ok(format!("<urlset>{pages}</urlset>")),
        _ => Answer {
            headers: vec!["Content-Type: text/html".into()],
            ..Answer::ok(format!("<html><body>{links}</body></html>"))
        },
    })
    .await;
    let _ = own_port.set(public.port());
    let resolve = vec![
        "--resolve".to_string(),
        format!("{PUBLIC}:{}:127.0.0.1", public.port()),
        "--resolve".into(),
        format!("{REBOUND}:{}:127.0.0.2", inside.port()),
    ];
    let internal_requests =
        || inside.seen().len() + inside_v6.as_ref().map_or(0, |s| s.seen().len());

    // sitemaps --expand: every entry and every page refused, by name.
    let mut args = strings(&[
        "sitemaps",
        "--expand",
        "--min-delay",
        "0",
        "--timeout",
        "5",
        "--format",
        "json",
    ]);
    args.extend(resolve.clone());
    args.push(public.url_as(PUBLIC, "/"));
    let out = run(args).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(internal_requests(), 0, "{stderr}");
    let lines = json_lines(&out);
    // Off the index's scope, so never fetched; the name that only resolves inside is judged
    // by its text there (no lookup for a URL that goes no further): off scope, counted.
    let summary = lines.iter().find(|l| l["summary"].is_object()).unwrap();
    assert_eq!(summary["summary"]["out_of_scope"], 2, "{lines:?}");
    for target in targets.iter().filter(|t| !t.contains(REBOUND)) {
        let entry = url::Url::parse(target).unwrap();
        assert!(
            lines
                .iter()
                .any(|l| l["sitemap"].as_str() == Some(entry.as_str())
                    && l["error"]
                        .as_str()
                        .is_some_and(|e| e.contains("address rule"))),
            "the index entry {entry} is not reported: {lines:?}"
        );
        let page = url::Url::parse(&target.replace("/s.xml", "/secret")).unwrap();
        assert!(
            lines
                .iter()
                .any(|l| l["url"].as_str() == Some(page.as_str())
                    && l["allowed"] == Value::Bool(false)
                    && l["refused"]
                        .as_str()
                        .is_some_and(|e| e.contains("address rule"))),
            "the sitemap page {page} is not reported refused: {lines:?}"
        );
    }
    assert_eq!(out.status.code(), Some(1), "{stderr}");

    // crawl --sitemaps --follow: the pages are address-refused, the links not followed.
    let mut args = strings(&[
        "crawl",
        "--agent",
        "FooBot",
        "--min-delay",
        "0",
        "--timeout",
        "5",
        "--format",
        "json",
        "--follow",
        "--max-pages",
        "10",
        "--sitemaps",
    ]);
    args.push(public.url_as(PUBLIC, "/"));
    args.extend(resolve);
    args.push(public.url_as(PUBLIC, "/start"));
    let out = run(args).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(internal_requests(), 0, "{stderr}");
    assert_eq!(public.count("/start"), 1, "{stderr}");
    let lines = json_lines(&out);
    let refused = lines
        .iter()
        .filter(|l| l["outcome"].as_str() == Some("address-refused"))
        .count();
    assert_eq!(refused, targets.len() - 1, "{lines:?} {stderr}");
    assert!(
        stderr.matches("address rule refuses it").count() >= targets.len() - 1,
        "{stderr}"
    );
}

/// Issue 54, point 9: a page a sitemap lists 36 times, in as many spellings (a fragment, the
/// scheme and host in capitals, the default port, a dot segment), is fetched once by
/// `crawl --sitemaps`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_listed_36_times_is_fetched_once() {
    let base = std::sync::Arc::new(std::sync::OnceLock::<(String, u16)>::new());
    let seen = base.clone();
    let site = Site::start(move |target, _| {
        let (base, port) = seen.get().cloned().unwrap_or_default();
        match target {
            "/robots.txt" => {
                Answer::ok(format!("User-agent: *\nAllow: /\nSitemap: {base}/s.xml\n"))
            }
            "/s.xml" => {
                let spellings = [
                    format!("{base}/dup"),
                    format!("{base}/dup#frag"),
                    format!("HTTP://127.0.0.1:{port}/dup"),
                    format!("http://127.0.0.1:{port}/x/../dup"),
                ];
                let locs: String = (0..36)
                    .map(|n| format!("<url><loc>{}</loc></url>", spellings[n % 4]))
                    .collect();
                Answer::ok(format!(
                    "<urlset>{locs}<url><loc>{base}/other</loc></url></urlset>"
                ))
            }
            _ => Answer::ok("page"),
        }
    })
    .await;
    let _ = base.set((site.base.clone(), site.port()));
    let out = run(strings(&[
        "crawl",
        "--agent",
        "FooBot",
        "--min-delay",
        "0",
        "--format",
        "json",
        "--sitemaps",
        &site.url("/"),
    ]))
    .await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(site.count("/dup"), 1, "{stderr}");
    assert_eq!(site.count("/other"), 1, "{stderr}");
    assert_eq!(out.status.code(), Some(0), "{stderr}");
}
