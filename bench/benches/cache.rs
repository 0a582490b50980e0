//! A cache-hit decision: URL → origin → cached rules → verdict, on one thread and on two.
//!
//! ```text
//! cargo bench -p robots-bench --bench cache
//! ```

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use robots_fetch::{Origin, RobotsCache, path_of_url};
use url::Url;

fn setup() -> (RobotsCache, Vec<String>) {
    let cache = RobotsCache::builder("FooBot/1.0").build();
    let mut urls = Vec::new();
    // 1,000 cached origins with 40 rules each, like a crawl in progress.
    for i in 0..1000 {
        let origin = Origin::parse(&format!("https://site{i}.example")).unwrap();
        let mut body = String::from("User-agent: *\n");
        for j in 0..20 {
            body.push_str(&format!(
                "Disallow: /private{j}/\nAllow: /private{j}/*.html$\n"
            ));
        }
        cache.insert(&origin, body.as_bytes());
        urls.push(format!(
            "https://site{i}.example/private{}/page{}.html?ref=home",
            i % 20,
            i
        ));
        urls.push(format!("https://site{i}.example/blog/{i}/entry"));
    }
    (cache, urls)
}

/// One decision: one clock read, the origin's entry, the verdict.
fn decide(cache: &RobotsCache, url: &Url) -> bool {
    let now = tokio::time::Instant::now();
    let Ok(origin) = Origin::key_of_url(url) else {
        return false;
    };
    cache
        .cached_at(&origin, now)
        .is_some_and(|e| e.verdict_at(path_of_url(url).as_bytes(), now).allowed)
}

fn benches(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let _guard = runtime.enter();
    let (cache, urls) = setup();
    let parsed: Vec<Url> = urls.iter().map(|u| u.parse().unwrap()).collect();
    let mut group = c.benchmark_group("cache_hit");
    group.measurement_time(Duration::from_secs(3));
    // From a parsed URL (a tower request's URI, a crawler's frontier entry).
    group.bench_function("parsed_url/1_thread", |b| {
        let mut i = 0;
        b.iter(|| {
            i = (i + 1) % parsed.len();
            black_box(decide(&cache, black_box(&parsed[i])))
        })
    });
    // From text: the URL parse is included.
    group.bench_function("url_text/1_thread", |b| {
        let mut i = 0;
        b.iter(|| {
            i = (i + 1) % urls.len();
            let url = Url::parse(black_box(&urls[i])).unwrap();
            black_box(decide(&cache, &url))
        })
    });
    // Two threads deciding at once on the shared cache: time per decision on each thread.
    group.bench_function("parsed_url/2_threads", |b| {
        b.iter_custom(|iters| {
            let start = Instant::now();
            std::thread::scope(|s| {
                for t in 0..2 {
                    let (cache, parsed) = (&cache, &parsed);
                    s.spawn(move || {
                        let _guard = tokio::runtime::Builder::new_current_thread()
                            .enable_time()
                            .build()
                            .unwrap();
                        let mut i = t * 997;
                        for _ in 0..iters {
                            i = (i + 1) % parsed.len();
                            black_box(decide(cache, black_box(&parsed[i])));
                        }
                    });
                }
            });
            start.elapsed()
        })
    });
    group.finish();
}

criterion_group!(cache, benches);
criterion_main!(cache);
