//! `robots sitemaps --expand` and `robots crawl --sitemaps` as a user runs them: the binary, a
//! local server holding robots.txt, an index of two sitemaps (one gzipped), and a disallowed one.

use std::io::Write;

use serde_json::{Value, json};
use wiremock::matchers::path;
use wiremock::{Mock, MockServer, ResponseTemplate};

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

async fn serve(server: &MockServer, at: &str, body: Vec<u8>) {
    Mock::given(path(at))
        .respond_with(ResponseTemplate::new(200).set_body_bytes(body))
        .mount(server)
        .await;
}

/// How many times `at` was asked for.
async fn asked(server: &MockServer, at: &str) -> usize {
    let requests = server.received_requests().await.unwrap_or_default();
    requests.iter().filter(|r| r.url.path() == at).count()
}

pub(crate) async fn run(args: Vec<String>) -> std::process::Output {
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        crate::cli::robots(&args, b"")
    })
    .await
    .unwrap()
}

pub(crate) fn json_lines(out: &std::process::Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect()
}

/// The site: robots.txt names an index (and a relative sitemap crawlers ignore); the index lists
/// a.xml, b.xml.gz (gzipped) and a disallowed sitemap.
async fn site() -> MockServer {
    let server = MockServer::start().await;
    let base = server.uri();
    let robots = format!(
        "User-agent: *\nDisallow: /private\nSitemap: {base}/index.xml\nSitemap: /relative.xml\n"
    );
    let index = format!(
        "<sitemapindex><sitemap><loc>{base}/a.xml</loc></sitemap><sitemap><loc>{base}/b.xml.gz</loc></sitemap><sitemap><loc>{base}/private/c.xml</loc></sitemap></sitemapindex>"
    );
    let a = format!(
        "<urlset><url><loc>{base}/new</loc><lastmod>2024-06-01</lastmod></url><url><loc>{base}/private/p</loc><lastmod>2024-07-01</lastmod></url><url><loc>http://elsewhere.example/x</loc></url></urlset>"
    );
    let b = format!(
        "<urlset><url><loc>{base}/old</loc><lastmod>2023-01-01</lastmod></url><url><loc>{base}/undated</loc></url></urlset>"
    );
    serve(&server, "/robots.txt", robots.into_bytes()).await;
    serve(&server, "/index.xml", index.into_bytes()).await;
    serve(&server, "/a.xml", a.into_bytes()).await;
    serve(&server, "/b.xml.gz", gzip(b.as_bytes())).await;
    serve(&server, "/private/c.xml", b"<urlset/>".to_vec()).await;
    serve(&server, "/new", b"page".to_vec()).await;
    serve(&server, "/old", b"page".to_vec()).await;
    serve(&server, "/undated", b"page".to_vec()).await;
    server
}

fn args(fixed: &[&str], base: &str) -> Vec<String> {
    fixed
        .iter()
        .map(|s| s.to_string())
        .chain([base.to_string()])
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn expand_lists_every_page_with_its_sitemap_lastmod_and_verdict() {
    let server = site().await;
    let base = server.uri();
    let out = run(args(
        &[
            "sitemaps",
            "--agent",
            "FooBot",
            "--expand",
            "--min-delay",
            "0.05",
            "--format",
            "json",
        ],
        &base,
    ))
    .await;
    // A sitemap failed (the disallowed one): exit 1, after every other line.
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines = json_lines(&out);
    let pages: Vec<&Value> = lines.iter().filter(|l| l.get("url").is_some()).collect();
    assert_eq!(
        pages,
        [
            &json!({"url": format!("{base}/new"), "lastmod": "2024-06-01", "sitemap": format!("{base}/a.xml"), "allowed": true, "refused": null}),
            &json!({"url": format!("{base}/private/p"), "lastmod": "2024-07-01", "sitemap": format!("{base}/a.xml"), "allowed": false, "refused": format!("{base}/private/p is disallowed by robots.txt (line 2: Disallow: /private)")}),
            &json!({"url": format!("{base}/old"), "lastmod": "2023-01-01", "sitemap": format!("{base}/b.xml.gz"), "allowed": true, "refused": null}),
            &json!({"url": format!("{base}/undated"), "lastmod": null, "sitemap": format!("{base}/b.xml.gz"), "allowed": true, "refused": null}),
        ]
    );
    let failed: Vec<&Value> = lines.iter().filter(|l| l.get("error").is_some()).collect();
    assert_eq!(failed.len(), 2, "{failed:?}");
    assert_eq!(failed[0]["sitemap"], "/relative.xml");
    assert_eq!(failed[1]["sitemap"], format!("{base}/private/c.xml"));
    assert!(
        failed[1]["error"]
            .as_str()
            .unwrap()
            .contains("disallowed by robots.txt")
    );
    assert_eq!(
        lines.last().unwrap(),
        &json!({"summary": {"sitemaps_fetched": 3, "sitemaps_failed": 1, "urls": 4, "out_of_scope": 1, "over_limit": 0, "disallowed": 1, "skipped": 0, "claimed_elsewhere": 0}})
    );
    // Each sitemap once; the disallowed one never; no page.
    for at in ["/robots.txt", "/index.xml", "/a.xml", "/b.xml.gz"] {
        assert_eq!(asked(&server, at).await, 1, "{at}");
    }
    for at in ["/private/c.xml", "/new", "/private/p"] {
        assert_eq!(asked(&server, at).await, 0, "{at}");
    }

    // In text, stdout is for pipes: the allowed pages one a line and nothing else (`| wc -l`
    // counts pages); refusals, limits and the summary on stderr.
    let out = run(args(
        &[
            "sitemaps",
            "--agent",
            "FooBot",
            "--expand",
            "--min-delay",
            "0.05",
            "--max-urls",
            "2",
        ],
        &base,
    ))
    .await;
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.lines().collect::<Vec<_>>(), [format!("{base}/new")]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains(&format!("{base}/private/p is disallowed by robots.txt")),
        "{said}"
    );
    assert!(said.contains("2 pages kept: the expansion stops"), "{said}");
    assert!(
        said.lines()
            .last()
            .unwrap()
            .starts_with("robots: summary: "),
        "{said}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn crawl_seeds_from_the_sitemaps_since_a_date() {
    let server = site().await;
    let base = server.uri();
    let out = run(args(
        &[
            "crawl",
            "--user-agent",
            "FooBot/1.0",
            "--min-delay",
            "0",
            "--format",
            "json",
            "--since",
            "2024-01-01",
            "--sitemaps",
        ],
        &base,
    ))
    .await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines = json_lines(&out);
    let fetched: Vec<&str> = lines.iter().filter_map(|l| l["url"].as_str()).collect();
    // /old is older, /undated has no date, /private/p is disallowed: never asked.
    assert_eq!(fetched, [format!("{base}/new")]);
    for at in ["/old", "/undated", "/private/p"] {
        assert_eq!(asked(&server, at).await, 0, "{at}");
    }
    // Without --since, bounded by --max-pages.
    let out = run(args(
        &[
            "crawl",
            "--user-agent",
            "FooBot/1.0",
            "--min-delay",
            "0",
            "--format",
            "json",
            "--max-pages",
            "2",
            "--sitemaps",
        ],
        &base,
    ))
    .await;
    let lines = json_lines(&out);
    assert_eq!(
        lines.iter().filter(|l| l["outcome"] == "fetched").count(),
        2
    );
    // A bad date is refused before anything is sent.
    let out = run(args(
        &[
            "crawl",
            "--user-agent",
            "FooBot/1.0",
            "--since",
            "last week",
            "--sitemaps",
        ],
        &base,
    ))
    .await;
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not a W3C date"));
}

#[tokio::test(flavor = "multi_thread")]
async fn depth_and_scope_are_the_users_to_set() {
    let server = MockServer::start().await;
    let base = server.uri();
    let robots = format!("User-agent: *\nSitemap: {base}/blog/index.xml\n");
    let index =
        format!("<sitemapindex><sitemap><loc>{base}/blog/posts.xml</loc></sitemap></sitemapindex>");
    let posts = format!(
        "<urlset><url><loc>{base}/blog/a</loc></url><url><loc>{base}/about</loc></url></urlset>"
    );
    serve(&server, "/robots.txt", robots.into_bytes()).await;
    serve(&server, "/blog/index.xml", index.into_bytes()).await;
    serve(&server, "/blog/posts.xml", posts.into_bytes()).await;
    let expand = |extra: &[&str]| {
        let mut fixed = vec![
            "sitemaps",
            "--agent",
            "FooBot",
            "--expand",
            "--min-delay",
            "0",
            "--format",
            "json",
        ];
        fixed.extend_from_slice(extra);
        run(args(&fixed, &base))
    };
    let urls = |out: &std::process::Output| -> Vec<String> {
        json_lines(out)
            .iter()
            .filter_map(|l| l["url"].as_str().map(String::from))
            .collect()
    };
    // Named by robots.txt: anywhere on its origin (cross-submission).
    let out = expand(&[]).await;
    assert_eq!(
        urls(&out),
        [format!("{base}/blog/a"), format!("{base}/about")]
    );
    // --max-depth 0: the index is read, the sitemap it lists is not fetched, and that is said.
    let out = expand(&["--max-depth", "0"]).await;
    assert!(urls(&out).is_empty());
    let lines = json_lines(&out);
    assert!(
        lines
            .iter()
            .any(|l| l["sitemap"] == format!("{base}/blog/posts.xml")
                && l["error"]
                    .as_str()
                    .is_some_and(|e| e.contains("nested deeper than 0"))),
        "{lines:?}"
    );
    assert_eq!(lines.last().unwrap()["summary"]["over_limit"], 1);
    // A bad scope is refused.
    let out = expand(&["--scope", "everything"]).await;
    assert_eq!(out.status.code(), Some(2));
}

/// Two `robots crawl --sitemaps --redis` processes on one site: each sitemap is fetched once for
/// the fleet, and each page once.
#[cfg(feature = "redis")]
#[tokio::test(flavor = "multi_thread")]
async fn two_processes_of_a_fleet_read_each_sitemap_once() {
    let Some(redis) = crate::redis_server::RedisServer::start() else {
        return;
    };
    let server = site().await;
    let base = server.uri();
    let crawl = || {
        run(args(
            &[
                "crawl",
                "--user-agent",
                "FooBot/1.0",
                "--min-delay",
                "0.05",
                "--format",
                "json",
                "--redis",
                &redis.url(),
                "--sitemaps",
            ],
            &base,
        ))
    };
    let (one, two) = tokio::join!(crawl(), crawl());
    for out in [&one, &two] {
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    for at in ["/robots.txt", "/index.xml", "/a.xml", "/b.xml.gz"] {
        assert_eq!(asked(&server, at).await, 1, "{at}");
    }
    for at in ["/new", "/old", "/undated"] {
        assert_eq!(asked(&server, at).await, 1, "{at}");
    }
    assert_eq!(asked(&server, "/private/p").await, 0);
}
