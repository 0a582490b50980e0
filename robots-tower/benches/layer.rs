//! The layer's added cost per request: a cache hit with no politeness wait, against the bare
//! inner service (in memory, so only our work is measured).
//!
//! ```text
//! cargo bench -p robots-tower --bench layer
//! ```

use std::convert::Infallible;
use std::hint::black_box;
use std::time::Duration;

use bytes::Bytes;
use criterion::{Criterion, criterion_group, criterion_main};
use http_body_util::Full;
use robots_fetch::Origin;
use robots_tower::RobotsLayer;
use tower::{Layer, ServiceExt};

fn benches(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let inner = tower::service_fn(|_request: http::Request<Full<Bytes>>| async {
        Ok::<_, Infallible>(http::Response::new(Full::new(Bytes::from_static(b"ok"))))
    });
    let layer = RobotsLayer::builder("FooBot/1.0")
        .min_delay(Duration::ZERO)
        .concurrency(usize::MAX >> 4)
        .build();
    let mut body = String::from("User-agent: *\n");
    for j in 0..20 {
        body.push_str(&format!(
            "Disallow: /private{j}/\nAllow: /private{j}/*.html$\n"
        ));
    }
    runtime.block_on(async {
        layer.cache().insert(
            &Origin::parse("https://example.com").unwrap(),
            body.as_bytes(),
        )
    });
    let service = layer.layer(inner);
    let uri: http::Uri = "https://example.com/blog/2024/some-article?ref=home"
        .parse()
        .unwrap();

    let mut group = c.benchmark_group("layer");
    group.measurement_time(Duration::from_secs(4));
    group.bench_function("bare_service", |b| {
        b.to_async(&runtime).iter(|| {
            let request = http::Request::get(uri.clone())
                .body(Full::default())
                .unwrap();
            async move { black_box(inner.oneshot(request).await.is_ok()) }
        })
    });
    group.bench_function("with_robots_layer", |b| {
        b.to_async(&runtime).iter(|| {
            let request = http::Request::get(uri.clone())
                .body(Full::default())
                .unwrap();
            let service = service.clone();
            async move { black_box(service.oneshot(request).await.is_ok()) }
        })
    });
    group.finish();
}

criterion_group!(layer, benches);
criterion_main!(layer);
