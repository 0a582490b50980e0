//! A broad crawl at scale (issue 33): a million distinct origins (`h{i}.test`) through the layer
//! over an in-memory service, robots.txt fetched through the same service (the layer's default:
//! `RobotsLayer::layer(service)` fetches each origin's robots.txt with the service it wraps).
//! Reports decisions per second cold (robots.txt fetched and parsed) and warm (a cache hit),
//! resident memory every 100,000 origins, and, for the revisit pattern (each origin visited
//! again W new origins later), how many robots.txt were fetched again.
//!
//! ```sh
//! cargo bench -p robots-bench --bench scale            # 1,000,000 origins
//! SCALE_ORIGINS=200000 cargo bench -p robots-bench --bench scale
//! ```

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use robots_tower::RobotsLayer;
use tower::{Layer, ServiceExt};

/// Resident memory of this process, from /proc (0 elsewhere).
fn resident_mb() -> f64 {
    let pages: f64 = std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse().ok())
        .unwrap_or(0.0);
    pages * 4096.0 / 1e6
}

fn main() {
    let origins: usize = std::env::var("SCALE_ORIGINS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let robots_fetches = Arc::new(AtomicU64::new(0));
    let fetches = robots_fetches.clone();
    let site = tower::service_fn(move |request: http::Request<Full<Bytes>>| {
        let body: &'static [u8] = if request.uri().path() == "/robots.txt" {
            fetches.fetch_add(1, Ordering::Relaxed);
            b"User-agent: *\nDisallow: /private/\nAllow: /private/ok\n"
        } else {
            b"page"
        };
        std::future::ready(Ok::<_, Infallible>(http::Response::new(Full::new(
            Bytes::from_static(body),
        ))))
    });
    // No interval: what is timed is the decision, not the politeness wait.
    let layer = RobotsLayer::builder("FooBot/1.0")
        .min_delay(Duration::ZERO)
        .delay_factor(0.0)
        .build();
    let service = layer.layer(site);
    let send = |i: usize| {
        let service = service.clone();
        async move {
            let request = http::Request::get(format!("http://h{i}.test/page"))
                .body(Full::default())
                .expect("request");
            let response = service.oneshot(request).await.expect("allowed");
            let _ = response.into_body().collect().await;
        }
    };
    runtime.block_on(async {
        println!("origins, cold decisions/s, resident MB");
        let started = Instant::now();
        let mut lap = Instant::now();
        for i in 0..origins {
            send(i).await;
            if (i + 1) % 100_000 == 0 {
                println!(
                    "{:>9}, {:>9.0}, {:>7.0}",
                    i + 1,
                    100_000.0 / lap.elapsed().as_secs_f64(),
                    resident_mb()
                );
                lap = Instant::now();
            }
        }
        let cold = origins as f64 / started.elapsed().as_secs_f64();
        // Warm: the last 50,000 origins again (cached, if the cache holds them).
        let warm_from = origins.saturating_sub(50_000);
        let before = robots_fetches.load(Ordering::Relaxed);
        let started = Instant::now();
        for i in warm_from..origins {
            send(i).await;
        }
        let warm = (origins - warm_from) as f64 / started.elapsed().as_secs_f64();
        println!(
            "cold {cold:.0} decisions/s, warm {warm:.0} decisions/s ({} robots.txt fetched again of {})",
            robots_fetches.load(Ordering::Relaxed) - before,
            origins - warm_from
        );
    });
    // The revisit pattern on a fresh layer: origin i, then origin i - W, counted in steady
    // state (after three capacities' worth of origins).
    let capacity = 100_000;
    for w in [capacity / 4, capacity / 2, capacity * 3 / 4] {
        let fetches = Arc::new(AtomicU64::new(0));
        let counted = fetches.clone();
        let site = tower::service_fn(move |request: http::Request<Full<Bytes>>| {
            if request.uri().path() == "/robots.txt" {
                counted.fetch_add(1, Ordering::Relaxed);
            }
            std::future::ready(Ok::<_, Infallible>(http::Response::new(Full::new(
                Bytes::from_static(b"User-agent: *\nDisallow: /private/\n"),
            ))))
        });
        let layer = RobotsLayer::builder("FooBot/1.0")
            .min_delay(Duration::ZERO)
            .delay_factor(0.0)
            .build();
        let service = layer.clone().layer(site);
        let total = (capacity * 5).min(origins.max(capacity * 4));
        let (mut revisits, mut refetched, mut counted_before) = (0u64, 0u64, 0u64);
        runtime.block_on(async {
            for i in 0..total {
                if i == 3 * capacity + 1 {
                    counted_before = layer.cache().stats().refetches;
                }
                let first = format!("http://h{i}.test/page");
                let request = http::Request::get(first)
                    .body(Full::default())
                    .expect("request");
                let _ = service.clone().oneshot(request).await;
                if i >= w {
                    let before = fetches.load(Ordering::Relaxed);
                    let again = format!("http://h{}.test/page", i - w);
                    let request = http::Request::get(again)
                        .body(Full::default())
                        .expect("request");
                    let _ = service.clone().oneshot(request).await;
                    if i > 3 * capacity {
                        revisits += 1;
                        refetched += fetches.load(Ordering::Relaxed) - before;
                    }
                }
            }
        });
        println!(
            "revisit after W = {w} ({:.2} of the capacity): {refetched} of {revisits} revisits fetched robots.txt again ({:.1}%), {} of them counted in CacheStats::refetches",
            w as f64 / capacity as f64,
            100.0 * refetched as f64 / revisits.max(1) as f64,
            layer.cache().stats().refetches - counted_before
        );
    }
}
