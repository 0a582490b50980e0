//! The layer's added cost per request: a cache hit with no politeness wait, against the bare
//! inner service (in memory, so only our work is measured), under each politeness key (`host`,
//! the default; `domain`, a Public Suffix List lookup; `ip`, a resolver cache hit).
//!
//! ```text
//! cargo bench -p robots-bench --bench layer
//! ```

use std::convert::Infallible;
use std::hint::black_box;
use std::time::Duration;

use bytes::Bytes;
use criterion::{Criterion, criterion_group, criterion_main};
use http_body_util::Full;
use robots_fetch::Origin;
use robots_tower::{PolitenessKey, Resolver, RobotsLayer};
use tower::{Layer, ServiceExt};

fn benches(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let inner = tower::service_fn(|_request: http::Request<Full<Bytes>>| async {
        Ok::<_, Infallible>(http::Response::new(Full::new(Bytes::from_static(b"ok"))))
    });
    let layer_with = |key: PolitenessKey| {
        // The address is an override: the resolver answers from memory, as on a cache hit.
        let resolver = Resolver::new()
            .with_override_text("www.example.co.uk:443:192.0.2.10")
            .unwrap();
        RobotsLayer::builder("FooBot/1.0")
            .min_delay(Duration::ZERO)
            .concurrency(usize::MAX >> 4)
            .politeness_key(key)
            .resolver(resolver)
            .build()
    };
    let mut body = String::from("User-agent: *\n");
    for j in 0..20 {
        body.push_str(&format!(
            "Disallow: /private{j}/\nAllow: /private{j}/*.html$\n"
        ));
    }
    let service_with = |key| {
        let layer = layer_with(key);
        runtime.block_on(async {
            layer.cache().insert(
                &Origin::parse("https://www.example.co.uk").unwrap(),
                body.as_bytes(),
            )
        });
        layer.layer(inner)
    };
    let uri: http::Uri = "https://www.example.co.uk/blog/2024/some-article?ref=home"
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
    for (name, key) in [
        ("with_robots_layer", PolitenessKey::Host),
        ("with_robots_layer_domain_key", PolitenessKey::Domain),
        ("with_robots_layer_ip_key", PolitenessKey::Ip),
    ] {
        let service = service_with(key);
        group.bench_function(name, |b| {
            b.to_async(&runtime).iter(|| {
                let request = http::Request::get(uri.clone())
                    .body(Full::default())
                    .unwrap();
                let service = service.clone();
                async move { black_box(service.oneshot(request).await.is_ok()) }
            })
        });
    }
    group.finish();
}

criterion_group!(layer, benches);
criterion_main!(layer);
