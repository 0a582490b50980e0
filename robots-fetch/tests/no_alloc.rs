//! The hot path allocates nothing: a cache-hit decision (origin lookup, rules, verdict) and a
//! core check, counted by a global allocator. This file is its own test binary, and its one test
//! does all the counting, so no other test allocates at the same time.

// The cache and its fetcher are feature `client`'s (on by default).
#![cfg(feature = "client")]

use robots_test_support::alloc::Counting;

use robots_fetch::{Origin, RobotsCache, path_of_url};

#[global_allocator]
static GLOBAL: Counting = Counting;

use robots_test_support::alloc::allocations_in;

#[test]
fn cache_hits_and_checks_do_not_allocate() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let _guard = runtime.enter();
    let cache = RobotsCache::builder("FooBot/1.0").build();
    let origin = Origin::parse("https://example.com").unwrap();
    let mut body = String::from("User-agent: *\n");
    for i in 0..200 {
        body.push_str(&format!(
            "Disallow: /section{i}/\nAllow: /section{i}/*.html$\n"
        ));
    }
    cache.insert(&origin, body.as_bytes());
    let urls: Vec<url::Url> = [
        "https://example.com/section7/page.html",
        "https://example.com/section7/x",
        "https://example.com/?q=1",
        "https://example.com/other",
    ]
    .iter()
    .map(|u| u.parse().unwrap())
    .collect();
    // Warm up once.
    for url in &urls {
        let _ = Origin::from_url(url)
            .ok()
            .and_then(|o| cache.cached(&o))
            .map(|e| e.check(url).allowed);
    }
    let mut verdicts = Vec::with_capacity(urls.len() * 100);
    let count = allocations_in(|| {
        for _ in 0..100 {
            for url in &urls {
                let entry = Origin::from_url(url).ok().and_then(|o| cache.cached(&o));
                verdicts.push(entry.map(|e| {
                    e.verdict_at(path_of_url(url).as_bytes(), tokio::time::Instant::now())
                        .allowed
                }));
            }
        }
    });
    assert_eq!(count, 0, "a cache-hit decision allocated");
    assert_eq!(
        &verdicts[..4],
        [Some(true), Some(false), Some(true), Some(true)]
    );

    let robots = robots_core::RobotsTxt::parse(body.as_bytes());
    let matcher = robots.matcher("FooBot");
    let mut allowed = 0;
    let count = allocations_in(|| {
        for _ in 0..100 {
            for url in [
                "https://example.com/section7/page.html",
                "https://example.com/section150/x",
                "http://h/",
            ] {
                allowed += usize::from(matcher.check_url(url).allowed);
            }
        }
    });
    assert_eq!(count, 0, "a core check allocated");
    assert_eq!(allowed, 200);

    // Usage preferences (both vocabularies, paths with wildcards) allocate nothing either, from
    // the view or from the cache.
    let mut with_usage = body.clone();
    with_usage.push_str("Content-Usage: train-ai=n\nContent-Usage: /section7/ train-ai=y, search=y;x=\"z\"\nContent-Signal: /*.html$ ai-train=no\n");
    let matcher = robots_core::RobotsTxt::parse(with_usage.as_bytes()).matcher("FooBot");
    cache.insert(&origin, with_usage.as_bytes());
    let url: url::Url = "https://example.com/section7/page.html".parse().unwrap();
    let mut no = 0;
    let count = allocations_in(|| {
        for _ in 0..100 {
            for url in [
                "https://example.com/section7/page.html",
                "https://example.com/section7/x",
                "https://example.com/other",
            ] {
                let usage = matcher.usage(url);
                no += usize::from(usage.preferences.may_train_ai() == robots_core::Preference::No);
            }
            if let Some(entry) = Origin::from_url(&url).ok().and_then(|o| cache.cached(&o)) {
                let usage =
                    entry.usage_at(path_of_url(&url).as_bytes(), tokio::time::Instant::now());
                no += usize::from(usage.preferences.may_train_ai() == robots_core::Preference::No);
            }
        }
    });
    assert_eq!(count, 0, "a usage query allocated");
    // `/section7/page.html` (train-ai=y, but ai-train=no on *.html) and `/other` say no, twice
    // per round with the cache's answer.
    assert_eq!(no, 300);
}
