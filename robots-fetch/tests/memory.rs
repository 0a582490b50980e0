//! The cache is bounded in bytes, measured by a global allocator that counts live heap bytes:
//! what one cached 511 KB file really holds, that the weight the cache charges for it is honest,
//! and that 1,000 origins of 500 KB stay within the byte budget. This file is its own test
//! binary with one test, so nothing else allocates while it counts.

// The cache and its fetcher are feature `client`'s (on by default).
#![cfg(feature = "client")]

use robots_test_support::alloc::Counting;

use robots_fetch::{CacheConfig, Origin, RobotsCache};

#[global_allocator]
static GLOBAL: Counting = Counting;

use robots_test_support::alloc::live_bytes as live;

/// A legal robots.txt of about `size` bytes of `Disallow` lines, distinct per `seed`.
fn disallow_file(size: usize, seed: usize) -> Vec<u8> {
    let mut body = String::from("User-agent: *\n");
    let mut i = 0;
    while body.len() + 40 < size {
        body.push_str(&format!("Disallow: /catalog/s{seed}/product-{i}/\n"));
        i += 1;
    }
    body.into_bytes()
}

#[test]
fn cached_entries_are_weighed_in_bytes_and_the_budget_holds() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let _guard = runtime.enter();

    // One 511 KB file: what the entry holds once the body is gone.
    let cache = RobotsCache::builder("FooBot/1.0").build();
    let body = disallow_file(511_000, 0);
    let origin = Origin::parse("https://big.example").unwrap();
    let before = live();
    cache.insert(&origin, &body);
    let held = (live() - before) as f64;
    let entry = cache.cached(&origin).unwrap();
    let ratio = held / body.len() as f64;
    println!(
        "511 KB file: {} bytes of body, {held} bytes held ({ratio:.2}x), weighed {}",
        body.len(),
        entry.heap_bytes()
    );
    assert!(ratio <= 1.5, "an entry holds {ratio:.2}x its file");
    // The weight is the real heap within 10% (the map's own slot is not in it).
    let weighed = entry.heap_bytes() as f64;
    assert!(
        (weighed - held).abs() <= held * 0.1,
        "weighed {weighed}, held {held}"
    );
    drop(entry);
    // The extreme: the shortest useful patterns (`Disallow: /123456`, 7 bytes), where the
    // 20 bytes of bookkeeping per rule weigh most.
    let mut short = String::from("User-agent: *\n");
    let mut i = 0;
    while short.len() < 511_000 {
        short.push_str(&format!("Disallow: /{}\n", 100_000 + i));
        i += 1;
    }
    let origin = Origin::parse("https://short.example").unwrap();
    let before = live();
    cache.insert(&origin, short.as_bytes());
    let ratio = (live() - before) as f64 / short.len() as f64;
    println!("511 KB of 7-byte patterns: {ratio:.2}x");
    assert!(ratio <= 1.5, "{ratio:.2}x");
    drop(cache);

    // 1,000 hostile subdomains of 500 KB each against a 48 MiB budget.
    let budget: u64 = 48 * 1024 * 1024;
    let cache = RobotsCache::builder("FooBot/1.0")
        .cache_config(CacheConfig {
            max_bytes: budget,
            ..Default::default()
        })
        .build();
    let before = live();
    let mut peak = 0isize;
    for i in 0..1000 {
        let body = disallow_file(500_000, i);
        let origin = Origin::parse(&format!("https://h{i}.hostile.example")).unwrap();
        cache.insert(&origin, &body);
        drop(body);
        peak = peak.max(live() - before);
        assert!(cache.weight() <= budget, "weight {}", cache.weight());
    }
    println!(
        "1,000 x 500 KB: {} entries kept, weight {}, live heap at most {peak} (budget {budget})",
        cache.len(),
        cache.weight()
    );
    assert!(
        cache.len() < 1000 && cache.len() > 10,
        "{} kept",
        cache.len()
    );
    // Live memory: the budget, plus one file being parsed and the map's own tables.
    assert!(
        (peak as u64) < budget + 8 * 1024 * 1024,
        "peak {peak} over the budget {budget}"
    );
}
