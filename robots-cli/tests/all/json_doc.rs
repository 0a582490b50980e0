//! `docs/json.md` lists every JSON field of every command: each command runs here with
//! `--format json` on inputs that bring out its optional fields, and every field it prints must
//! be on that page.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::site::{Answer, Site};

/// Every field path of a JSON value (`rule.line`, `usage.content-signal.search`).
fn paths(value: &Value, prefix: &str, out: &mut BTreeSet<String>) {
    match value {
        Value::Object(map) => {
            for (key, inner) in map {
                let path = if prefix.is_empty() {
                    key.clone()
                } else {
                    format!("{prefix}.{key}")
                };
                paths(inner, &path, out);
                out.insert(path);
            }
        }
        Value::Array(items) => items.iter().for_each(|i| paths(i, prefix, out)),
        _ => {}
    }
}

fn run(args: &[&str], stdin: &[u8]) -> Vec<Value> {
    let out = crate::cli::robots(args, stdin);
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn every_json_field_of_every_command_is_documented() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/json.md"))
        .expect("docs/json.md");
    let robots_txt = "User-agent: *\nDisallow: /private\nContent-Usage: train-ai=n\nContent-Signal: search=yes\nSitemap: https://e.com/s.xml\nSitemap: /relative.xml\n";
    let site = Site::start(move |target, _| match target {
        "/robots.txt" => Answer::ok(robots_txt),
        _ => Answer::ok("page"),
    })
    .await;
    // (A short Retry-After: `crawl`, with no hold, gives the site up at once.)
    let down =
        Site::start(|_, _| Answer::status("503 Service Unavailable", &["Retry-After: 2"])).await;
    let mut found: Vec<(String, BTreeSet<String>)> = Vec::new();
    let mut collect = |command: &str, lines: Vec<Value>| {
        assert!(!lines.is_empty(), "{command} printed nothing");
        let mut set = BTreeSet::new();
        lines.iter().for_each(|l| paths(l, "", &mut set));
        found.push((command.to_string(), set));
    };
    let (public, private, dotted) = (
        site.url("/public"),
        site.url("/private/x"),
        site.url("/public/../private/x"),
    );
    let down_url = down.url("/x");
    let urls = [
        public.as_str(),
        private.as_str(),
        dotted.as_str(),
        down_url.as_str(),
        "mailto:a@b.c",
    ];
    let blocking = |args: Vec<String>, stdin: &'static [u8]| {
        tokio::task::spawn_blocking(move || {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            run(&args, stdin)
        })
    };
    let strings = |fixed: &[&str], extra: &[&str]| -> Vec<String> {
        fixed.iter().chain(extra).map(|s| s.to_string()).collect()
    };
    collect(
        "check --robots",
        blocking(
            strings(
                &[
                    "check", "--robots", "-", "--agent", "FooBot", "--format", "json",
                ],
                &urls[..3],
            ),
            robots_txt.as_bytes(),
        )
        .await
        .unwrap(),
    );
    collect(
        "check",
        blocking(
            strings(&["check", "--agent", "FooBot", "--format", "json"], &urls),
            b"",
        )
        .await
        .unwrap(),
    );
    collect(
        "lint",
        blocking(
            strings(&["lint", "--format", "json", "-"], &[]),
            b"Disallow: /x\nUser-agent: *\nCrawl-delay: 2\n",
        )
        .await
        .unwrap(),
    );
    collect(
        "sitemaps",
        blocking(
            strings(&["sitemaps", "--format", "json"], &[&public, &down_url]),
            b"",
        )
        .await
        .unwrap(),
    );
    // `sitemaps --expand`: a site whose robots.txt names a sitemap of its own (its address is
    // known once it has started) listing an allowed page, a disallowed one, and a failing
    // sitemap.
    let base: std::sync::Arc<std::sync::OnceLock<String>> = Default::default();
    let known = base.clone();
    let mapped = Site::start(move |target, _| {
        let base = known.get().cloned().unwrap_or_default();
        match target {
            "/robots.txt" => Answer::ok(format!(
                "User-agent: *\nDisallow: /private\nSitemap: {base}/index.xml\n"
            )),
            "/index.xml" => Answer::ok(format!(
                "<sitemapindex><sitemap><loc>{base}/s.xml</loc></sitemap><sitemap><loc>{base}/missing.xml</loc></sitemap></sitemapindex>"
            )),
            "/s.xml" => Answer::ok(format!(
                "<urlset><url><loc>{base}/a</loc><lastmod>2024-01-01</lastmod></url><url><loc>{base}/private/b</loc></url></urlset>"
            )),
            _ => Answer::status("404 Not Found", &[]),
        }
    })
    .await;
    let _ = base.set(mapped.url(""));
    collect(
        "sitemaps --expand",
        blocking(
            strings(
                &[
                    "sitemaps",
                    "--expand",
                    "--min-delay",
                    "0",
                    "--format",
                    "json",
                ],
                &[&mapped.url("/")],
            ),
            b"",
        )
        .await
        .unwrap(),
    );
    if cfg!(feature = "redis") {
        collect(
            "crawl",
            blocking(
                strings(
                    &[
                        "crawl",
                        "--user-agent",
                        "FooBot/1.0",
                        "--min-delay",
                        "0",
                        // (The two local sites are two servers: the 503's Retry-After on one
                        // must not pause the other.)
                        "--politeness-key",
                        "origin",
                        "--hold-unreachable",
                        "0",
                        "--format",
                        "json",
                    ],
                    &[&public, &private, &down_url, "not a url"],
                ),
                b"",
            )
            .await
            .unwrap(),
        );
    }
    // `key verify`, valid and not: a request signed here, against its key's directory.
    let key = robots_fetch::SigningKey::generate().unwrap();
    let directory =
        std::env::temp_dir().join(format!("robots-json-doc-{}.json", std::process::id()));
    std::fs::write(
        &directory,
        robots_fetch::KeyDirectory::of([key.public_key()]).to_json(),
    )
    .unwrap();
    let signer = robots_fetch::RequestSigner::new(key)
        .signature_agent("https://crawler.example".parse().unwrap())
        .unwrap();
    let mut headers = http::HeaderMap::new();
    signer
        .sign(&"https://example.com/".parse().unwrap(), &mut headers)
        .unwrap();
    let mut head = "GET / HTTP/1.1\r\nHost: example.com\r\n".to_string();
    for (name, value) in &headers {
        head.push_str(&format!("{name}: {}\r\n", value.to_str().unwrap()));
    }
    let head: &'static [u8] = Box::leak(format!("{head}\r\n").into_boxed_str()).as_bytes();
    let verify = strings(
        &["key", "verify", "--format", "json", "--directory"],
        &[directory.to_str().unwrap()],
    );
    let mut lines = blocking(verify.clone(), head).await.unwrap();
    lines.extend(
        blocking(verify, b"GET / HTTP/1.1\r\nHost: example.com\r\n\r\n")
            .await
            .unwrap(),
    );
    collect("key verify", lines);
    let _ = std::fs::remove_file(&directory);
    let mut missing = Vec::new();
    for (command, fields) in &found {
        for field in fields {
            if !doc.contains(&format!("`{field}`")) {
                missing.push(format!("{command}: `{field}`"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "fields docs/json.md does not list:\n{}",
        missing.join("\n")
    );
    // The optional fields were brought out, so the check means something.
    let all: BTreeSet<&String> = found.iter().flat_map(|(_, f)| f).collect();
    for field in [
        "resolved_path.path",
        "robots.reason",
        "robots.retry_after",
        "usage.content-signal.search",
        "severity",
        "sitemaps",
        "lastmod",
        "allowed",
        "sitemap",
        "summary.sitemaps_fetched",
        "signature_agent",
        "error",
        "waited_ms",
    ] {
        assert!(
            all.contains(&field.to_string()),
            "no command printed `{field}`: {all:?}"
        );
    }
}
