//! What a fleet keeps in Redis per origin (issue 25): the robots store's record for files of the
//! corpus (typical, large, the largest legal), stored deflated above 4 KiB as the store does, and
//! the politeness keys of a group after a request; with a projection for 1M and 10M origins.
//! Starts its own `redis-server` on a free port; the corpus comes from `ROBOTS_CORPUS`.
//!
//! ```sh
//! ROBOTS_CORPUS=../shared/corpus/robots cargo bench -p robots-tower --features redis --bench fleet_memory
//! ```

use robots_test_support::corpus;
use robots_test_support::redis_server;

use std::time::{Duration, Instant};

use bytes::Bytes;
use robots_fetch::{RedisFleet, RedisStore, RobotsStore, StoredKind, StoredRobots};

fn record(body: &[u8]) -> StoredRobots {
    StoredRobots {
        kind: StoredKind::Parsed,
        status: Some(200),
        body: Some(Bytes::copy_from_slice(body)),
        fetched_at_ms: 1_764_000_000_000,
        refresh_at_ms: 1_764_086_400_000,
        outage: None,
    }
}

fn used_memory(redis: &redis_server::RedisServer) -> i64 {
    let info = redis.command(&["INFO", "memory"]);
    info.lines()
        .find_map(|l| l.strip_prefix("used_memory:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

fn memory_usage(redis: &redis_server::RedisServer, key: &str) -> i64 {
    redis
        .command(&["MEMORY", "USAGE", key, "SAMPLES", "0"])
        .trim()
        .trim_start_matches(':')
        .parse()
        .unwrap_or(-1)
}

fn main() {
    // `cargo bench` passes `--bench`; nothing to configure.
    let Some(redis) = redis_server::RedisServer::start() else {
        return;
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let fleet = RedisFleet::new(&redis.url())
        .expect("redis url")
        .prefix("m");
    let store = RedisStore::new(fleet.clone());
    let ttl = Duration::from_secs(3600);

    // The robots store: one record per origin.
    let files = corpus::corpus_dir(
        env!("CARGO_MANIFEST_DIR"),
        "the corpus part of fleet_memory",
    )
    .map(|dir| corpus::corpus_files(&dir, robots_core::MAX_BODY_BYTES))
    .unwrap_or_default();
    let mut sizes: Vec<usize> = files.iter().map(|(_, b)| b.len()).collect();
    sizes.sort();
    let mut store_per_origin = 0.0;
    if !files.is_empty() {
        let quantile = |q: f64| sizes[((sizes.len() - 1) as f64 * q) as usize];
        for (label, size) in [
            ("median", quantile(0.5)),
            ("p90", quantile(0.9)),
            ("p99", quantile(0.99)),
        ] {
            let (name, body) = files
                .iter()
                .find(|(_, b)| b.len() == size)
                .expect("a file of that size");
            let key = format!("{{{label}}}:robots:FooBot");
            runtime
                .block_on(store.save(&key, &record(body), ttl))
                .expect("save");
            println!(
                "record: {label:>7} file ({name}, {size} bytes): {} bytes in Redis",
                memory_usage(&redis, &format!("m:{key}"))
            );
        }
        // The largest legal file: the corpus's largest, cut at 512,000 bytes.
        let largest = files
            .iter()
            .map(|(_, b)| b)
            .max_by_key(|b| b.len())
            .expect("a file");
        runtime
            .block_on(store.save("{largest}:robots:FooBot", &record(largest), ttl))
            .expect("save");
        println!(
            "record: largest legal file ({} bytes): {} bytes in Redis",
            largest.len(),
            memory_usage(&redis, "m:{largest}:robots:FooBot")
        );
        // Every file of the corpus, one origin each: the average per origin, and the time to
        // encode (deflate) and decode (inflate) them all.
        let before = used_memory(&redis);
        let started = Instant::now();
        let encoded: Vec<Vec<u8>> = files.iter().map(|(_, b)| record(b).encode()).collect();
        let encode_time = started.elapsed();
        let started = Instant::now();
        for bytes in &encoded {
            assert!(StoredRobots::decode(bytes).is_some());
        }
        let decode_time = started.elapsed();
        runtime.block_on(async {
            for (i, (_, body)) in files.iter().enumerate() {
                store
                    .save(
                        &format!("{{o{i}.example}}:robots:FooBot"),
                        &record(body),
                        ttl,
                    )
                    .await
                    .expect("save");
            }
        });
        store_per_origin = (used_memory(&redis) - before) as f64 / files.len() as f64;
        // The same bodies as plain strings (no header, not deflated), for comparison.
        let before_raw = used_memory(&redis);
        runtime.block_on(async {
            use redis::AsyncCommands;
            let mut connection = fleet.connection().expect("connection");
            for (i, (_, body)) in files.iter().enumerate() {
                let _: () = connection
                    .set(format!("raw:{{o{i}.example}}"), body.as_slice())
                    .await
                    .expect("set");
            }
        });
        let raw_per_origin = (used_memory(&redis) - before_raw) as f64 / files.len() as f64;
        let raw: usize = files.iter().map(|(_, b)| b.len()).sum();
        let stored: usize = encoded.iter().map(Vec::len).sum();
        println!(
            "store: {} files, {raw} bytes of bodies, {stored} bytes encoded ({:.0}%); Redis grew by {store_per_origin:.0} bytes per origin ({raw_per_origin:.0} for the bodies stored raw); encode {:.1} µs, decode {:.1} µs per file",
            files.len(),
            100.0 * stored as f64 / raw as f64,
            encode_time.as_secs_f64() * 1e6 / files.len() as f64,
            decode_time.as_secs_f64() * 1e6 / files.len() as f64,
        );
    }

    // The politeness keys: 10,000 groups, one request each through the layer, then idle.
    let groups = 10_000;
    let before = used_memory(&redis);
    runtime.block_on(async {
        use tower::{Layer, ServiceExt};
        let layer = robots_tower::RobotsLayer::builder("FooBot")
            .fleet(&fleet)
            .min_delay(Duration::from_millis(500))
            .delay_factor(0.0)
            .build();
        let inner = tower::service_fn(|_request: http::Request<String>| async {
            Ok::<_, robots_fetch::BoxError>(http::Response::new(String::new()))
        });
        let service = layer.layer(inner);
        for i in 0..groups {
            let origin =
                robots_fetch::Origin::parse(&format!("http://g{i}.example")).expect("origin");
            layer
                .cache()
                .insert(&origin, b"User-agent: *\nDisallow: /private\n");
            let request = http::Request::get(format!("http://g{i}.example/page"))
                .body(String::new())
                .expect("request");
            service.clone().oneshot(request).await.expect("a page");
        }
    });
    let grown = (used_memory(&redis) - before) as f64;
    let pace = memory_usage(&redis, "m:{g1.example}:pace");
    let epochs: f64 = redis
        .command(&["EVAL", "return #redis.call('KEYS', 'm:{epoch-*')", "0"])
        .trim()
        .trim_start_matches(':')
        .parse()
        .unwrap_or(0.0);
    let epoch_key = memory_usage(&redis, &fleet.epoch_key("g1.example")) as f64;
    let pacing_per_group = (grown - epochs * epoch_key) / groups as f64;
    println!(
        "pacing: {pacing_per_group:.0} bytes per group after a request (the pace hash {pace} bytes, the rest the keyspace's own; leases and waiters: none once released); epoch keys: {epochs} of {epoch_key} bytes (one per slot in use: at most 16,384, {:.1} MB)",
        16_384.0 * epoch_key / 1e6
    );
    for origins in [1_000_000f64, 10_000_000f64] {
        println!(
            "projection: {origins:.0} origins: robots store {:.2} GB, pacing {:.2} GB (while each group's keys live), together {:.2} GB",
            origins * store_per_origin / 1e9,
            origins * pacing_per_group / 1e9,
            origins * (store_per_origin + pacing_per_group) / 1e9
        );
    }
}
