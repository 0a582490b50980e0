//! The frontier's own cost (issue 48): queuing URLs (`try_push`: the URL parsed for its origin
//! and group, its cached verdict looked up, its bytes counted), and handing them out (`next`:
//! the group asked when it can go, the URL judged, the job ended), for 100,000 URLs over 10,000
//! groups and over 100 groups. No interval: what is timed is the frontier, not a politeness
//! wait. Memory per queued URL is measured by `robots-tower`'s `frontier_memory` test.
//!
//! ```sh
//! cargo bench -p robots-bench --bench frontier
//! ```

use std::time::Duration;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use robots_tower::{Frontier, RobotsLayer};

const URLS: usize = 100_000;

fn urls(groups: usize) -> Vec<url::Url> {
    (0..URLS)
        .map(|i| {
            format!("https://site{}.example/articles/{i}.html", i % groups)
                .parse()
                .expect("a URL")
        })
        .collect()
}

fn frontier(layer: &RobotsLayer) -> Frontier {
    layer.frontier_with(robots_tower::FrontierConfig::default().max_bytes(1 << 30))
}

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let layer = RobotsLayer::builder("FooBot/1.0")
        .min_delay(Duration::ZERO)
        .delay_factor(0.0)
        .build();
    let mut group = c.benchmark_group("frontier");
    group.throughput(Throughput::Elements(URLS as u64));
    group.sample_size(10);
    for groups in [10_000, 100] {
        let urls = urls(groups);
        group.bench_function(format!("push {URLS} URLs over {groups} groups"), |b| {
            b.iter_batched(
                || (frontier(&layer), urls.clone()),
                |(frontier, urls)| {
                    for url in urls {
                        frontier.try_push(url).expect("room");
                    }
                    frontier
                },
                BatchSize::PerIteration,
            )
        });
        group.bench_function(format!("next {URLS} URLs over {groups} groups"), |b| {
            b.iter_batched(
                || {
                    let frontier = frontier(&layer);
                    for url in urls.clone() {
                        frontier.try_push(url).expect("room");
                    }
                    frontier.close();
                    frontier
                },
                |frontier| {
                    runtime.block_on(async {
                        while let Some(job) = frontier.next().await {
                            drop(job);
                        }
                    });
                    frontier
                },
                BatchSize::PerIteration,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
