//! Issue 69: the address rule where the connection is made, at the binary. Each test runs in a
//! network namespace of its own (`unshare -mn`, as root, as CI runs), where "public" servers
//! listen on 203.0.113.7 and .8, internal ones on 10.9.9.9 and 169.254.169.254, and a DNS
//! server the test scripts is the system resolver: names that answer public and then internal
//! (rebinding), names that fail and then answer internal, a public name with an internal
//! address. The internal servers must see no request through any path of the tool.

use std::net::Ipv4Addr;

use robots_test_support::netns::{self, Dns, Reply};
use robots_test_support::site::{Answer, Site};

use crate::cli::robots;

const PUBLIC: Ipv4Addr = Ipv4Addr::new(203, 0, 113, 7);
const CDN: Ipv4Addr = Ipv4Addr::new(203, 0, 113, 8);
const INTERNAL: Ipv4Addr = Ipv4Addr::new(10, 9, 9, 9);

/// A site of `pages` pages at /p0…, each linking to the next ten, with a sitemap listing them
/// all as `http://NAME:8081/…` (the Host header names it).
fn pages_site(pages: usize) -> impl Fn(&str, usize) -> Answer + Send + Sync + 'static {
    move |target, _| match target {
        "/robots.txt" => Answer::ok("User-agent: *\nAllow: /\n"),
        "/sitemap.xml" => Answer::ok(format!(
            "<urlset>{}</urlset>",
            (0..pages)
                .map(|i| format!("<url><loc>http://cdn.pub.test:8081/p{i}</loc></url>"))
                .collect::<String>()
        )),
        page => {
            let at: usize = page
                .strip_prefix("/p")
                .and_then(|n| n.parse().ok())
                .unwrap_or(0);
            Answer::ok(
                (at + 1..(at + 11).min(pages))
                    .map(|i| format!("<a href=\"/p{i}\">p{i}</a>\n"))
                    .collect::<String>(),
            )
        }
    }
}

struct World {
    dns: Dns,
    public: Site,
    cdn: Site,
    internal: Vec<Site>,
    _runtime: tokio::runtime::Runtime,
}

impl World {
    fn start() -> World {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a runtime");
        let (dns, public, cdn, internal) = runtime.block_on(async {
            let dns = Dns::start().await;
            let public = Site::start_on("203.0.113.7:8081", |target, _| match target {
                "/robots.txt" => Answer::ok(
                    "User-agent: *\nAllow: /\nSitemap: http://cdn.pub.test:8081/sitemap.xml\n",
                ),
                _ => Answer::ok("<a href=\"/\">home</a>"),
            })
            .await;
            // Its robots.txt moves to a name whose lookups fail twice, then answer internal.
            let _moved = Site::start_on("203.0.113.7:8082", |target, _| match target {
                "/robots.txt" => Answer::status(
                    "301 Moved Permanently",
                    &["Location: http://flip.pub.test:8081/robots.txt"],
                ),
                _ => Answer::ok("page"),
            })
            .await;
            std::mem::forget(_moved);
            let cdn = Site::start_on("203.0.113.8:8081", pages_site(40)).await;
            // The user's own network: it answers like the CDN, so that every request a path
            // would send there is seen.
            let mut internal = Vec::new();
            for address in ["10.9.9.9:8081", "169.254.169.254:8081"] {
                internal.push(Site::start_on(address, pages_site(40)).await);
            }
            (dns, public, cdn, internal)
        });
        dns.script("www.pub.test", &[Reply::A(PUBLIC)]);
        dns.script("inner.pub.test", &[Reply::A(INTERNAL)]);
        World {
            dns,
            public,
            cdn,
            internal,
            _runtime: runtime,
        }
    }

    /// The CDN's name answers public `public_answers` times, then internal.
    fn rebind_cdn(&self, public_answers: usize) {
        let mut replies = vec![Reply::A(CDN); public_answers];
        replies.push(Reply::A(INTERNAL));
        self.dns.script("cdn.pub.test", &replies);
    }

    fn internal_requests(&self) -> Vec<String> {
        Site::requests_to(&self.internal)
    }

    fn clear(&self) {
        for site in self.internal.iter().chain([&self.public, &self.cdn]) {
            site.clear();
        }
    }
}

const FAST: [&str; 6] = [
    "--min-delay",
    "0.01",
    "--delay-factor",
    "0",
    "--dns-cache",
    "0",
];

fn lines_with(out: &std::process::Output, word: &str) -> usize {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|line| line.contains(word))
        .count()
}

#[test]
fn no_path_of_the_tool_reaches_an_internal_server() {
    if !netns::inside(
        "netns::no_path_of_the_tool_reaches_an_internal_server",
        &["203.0.113.7", "203.0.113.8", "10.9.9.9", "169.254.169.254"],
    ) {
        return;
    }
    let world = World::start();
    let agent = ["--agent", "FooBot"];

    // `crawl --follow` on a name that answers public, then 10.9.9.9: the pages fetched are the
    // CDN's; once the name rebinds, each connection is refused, and said.
    world.rebind_cdn(4);
    let mut args = vec!["crawl", "--follow", "--format", "json"];
    args.extend(agent);
    args.extend(FAST);
    args.extend([
        "http://cdn.pub.test:8081/p0",
        "http://inner.pub.test:8081/p0",
    ]);
    let out = robots(&args, b"");
    assert_eq!(
        world.internal_requests(),
        Vec::<String>::new(),
        "crawl --follow"
    );
    assert!(
        !world.cdn.pages().is_empty(),
        "the CDN was crawled while public"
    );
    assert!(
        lines_with(&out, "address-refused") >= 2,
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let refused = String::from_utf8_lossy(&out.stdout)
        .lines()
        .find(|line| line.contains("inner.pub.test") && line.contains("address-refused"))
        .map(str::to_string)
        .unwrap_or_default();
    assert!(
        refused.contains("10.9.9.9"),
        "the address is named: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    world.clear();

    // `crawl --sitemaps`: the sitemap is on the CDN's name, which rebinds after six answers.
    world.rebind_cdn(6);
    let mut args = vec!["crawl", "--format", "json"];
    args.extend(agent);
    args.extend(FAST);
    args.extend(["--sitemaps", "http://www.pub.test:8081/"]);
    let out = robots(&args, b"");
    assert_eq!(
        world.internal_requests(),
        Vec::<String>::new(),
        "crawl --sitemaps"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        lines_with(&out, "address-refused") >= 1 || stderr.contains("the address rule refuses"),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    world.clear();

    // `sitemaps --expand`: the same sitemap, its pages listed, nothing fetched from inside.
    world.rebind_cdn(1);
    let mut args = vec![
        "sitemaps",
        "--expand",
        "--format",
        "json",
        "--dns-cache",
        "0",
    ];
    args.extend(agent);
    args.push("http://www.pub.test:8081/");
    let _ = robots(&args, b"");
    assert_eq!(
        world.internal_requests(),
        Vec::<String>::new(),
        "sitemaps --expand"
    );
    world.clear();

    // `check`: robots.txt redirects to a name that fails twice, then answers 10.9.9.9. The
    // internal file is never fetched, so never answers for the public site.
    world.dns.script(
        "flip.pub.test",
        &[Reply::ServFail, Reply::ServFail, Reply::A(INTERNAL)],
    );
    let mut args = vec!["check", "--format", "json"];
    args.extend(agent);
    args.push("http://www.pub.test:8082/page");
    let out = robots(&args, b"");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        world.internal_requests(),
        Vec::<String>::new(),
        "check: {text}"
    );
    assert!(
        !text.contains("\"final_url\":\"http://flip.pub.test"),
        "{text}"
    );
    assert!(
        world.dns.queries("flip.pub.test") >= 1,
        "the redirect was judged by a lookup"
    );

    // The caller's word makes a name of its own network internal-allowed.
    let mut args = vec![
        "crawl",
        "--format",
        "json",
        "--allow-internal",
        "inner.pub.test",
    ];
    args.extend(agent);
    args.extend(FAST);
    args.push("http://inner.pub.test:8081/p0");
    let out = robots(&args, b"");
    assert_eq!(
        world.internal[0].count("/p0"),
        1,
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    world.clear();
    // And in `sitemaps --expand`, whose robots.txt is fetched there only by that word.
    for (allowed, fetched) in [(false, 0), (true, 1)] {
        let mut args = vec![
            "sitemaps",
            "--expand",
            "--format",
            "json",
            "--min-delay",
            "0",
        ];
        if allowed {
            args.extend(["--allow-internal", "inner.pub.test"]);
        }
        args.extend(agent);
        args.push("http://inner.pub.test:8081/");
        let out = robots(&args, b"");
        assert_eq!(
            world.internal[0].count("/robots.txt"),
            fetched,
            "--allow-internal given: {allowed}; {}",
            String::from_utf8_lossy(&out.stdout)
        );
        world.clear();
    }

    // The caller's own server on a loopback address is still crawled, its links followed.
    let local = world._runtime.block_on(Site::start(pages_site(5)));
    let mut args = vec!["crawl", "--follow", "--format", "json"];
    args.extend(agent);
    args.extend(FAST);
    let start = local.url("/p0");
    args.push(&start);
    let out = robots(&args, b"");
    assert_eq!(
        local.pages().len(),
        5,
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}
