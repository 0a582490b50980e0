//! The examples say what happened (issue 26): a failure exits non-zero and prints its cause;
//! the spider example says what was refused and why. Run as a user runs them, against a local
//! site whose robots.txt answers 503.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use crate::site::{Answer, Site};

/// The example's binary, built by `cargo test` beside the test binaries (built here when this
/// test runs alone).
fn example(package: &str, name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary");
    let dir = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("target/<profile>")
        .join("examples");
    let path = dir.join(name);
    if !path.exists() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = Command::new(cargo)
            .args(["build", "-p", package, "--example", name])
            .status()
            .expect("cargo runs");
        assert!(status.success(), "building the example {name}");
    }
    path
}

fn run(path: PathBuf, args: &[&str]) -> Output {
    Command::new(path)
        .args(args)
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .output()
        .expect("the example runs")
}

#[tokio::test(flavor = "multi_thread")]
async fn the_examples_exit_non_zero_and_say_why_when_robots_txt_is_unreachable() {
    let down = Site::start(|_, _| Answer::status("503 Service Unavailable", &[])).await;
    let start = down.url("/");
    let origin = start.trim_end_matches('/').to_string();
    let polite = example("polite-robots", "polite_crawl");
    let spider = example("robots-spider", "spider_crawl");
    let (crawl, spidered) = tokio::join!(
        tokio::task::spawn_blocking({
            let start = start.clone();
            move || run(polite, &[&start, "--max-pages", "3"])
        }),
        tokio::task::spawn_blocking({
            let start = start.clone();
            move || run(spider, &[&start])
        })
    );
    let (crawl, spidered) = (crawl.unwrap(), spidered.unwrap());
    let text = String::from_utf8_lossy(&crawl.stdout);
    assert_eq!(crawl.status.code(), Some(1), "{text}");
    assert!(
        text.contains(&format!(
            "unreachable  {start}  (robots.txt of {origin} unreachable: the server answered 503)"
        )),
        "{text}"
    );
    assert!(text.contains("1 failed"), "{text}");
    let text = String::from_utf8_lossy(&spidered.stdout);
    assert_eq!(spidered.status.code(), Some(1), "{text}");
    assert!(
        text.contains(&format!(
            "{start}  refused: robots.txt of {origin} unreachable: the server answered 503"
        )),
        "{text}"
    );
    // Nothing but robots.txt reached the site.
    assert!(
        down.seen().iter().all(|s| s.target == "/robots.txt"),
        "{:?}",
        down.seen()
    );
}

/// The demo's summary gives the same answer as `lint` and `sitemaps` for a relative
/// `Sitemap:`: not a sitemap, ignored by crawlers.
#[tokio::test(flavor = "multi_thread")]
async fn the_demo_summary_lists_only_the_sitemaps_crawlers_use() {
    let site = Site::start(|target, _| match target {
        "/robots.txt" => Answer::ok(
            "User-agent: *\nAllow: /\nSitemap: https://e.com/s.xml\nSitemap: /relative-sitemap.xml\n",
        ),
        _ => Answer::ok("<html>no links</html>"),
    })
    .await;
    let start = site.url("/");
    let polite = example("polite-robots", "polite_crawl");
    let crawl = tokio::task::spawn_blocking(move || run(polite, &[&start, "--max-pages", "1"]))
        .await
        .unwrap();
    let text = String::from_utf8_lossy(&crawl.stdout);
    assert!(text.contains("sitemaps: https://e.com/s.xml\n"), "{text}");
    assert!(
        text.contains("ignored by crawlers (not absolute http(s) URLs): /relative-sitemap.xml"),
        "{text}"
    );
}
