//! What a fleet keeps in Redis per origin (issue 25): the robots store's record for files of the
//! corpus (typical, large, the largest legal), stored deflated above 4 KiB as the store does, and
//! the politeness keys of a group after a request; with a projection for 1M and 10M origins.
//! Then (issue 33) the same server filled for real: 1,000,000 origins' records of the corpus's
//! files (`ROBOTS_FLEET_ORIGINS`) and 100,000 groups after a request each (`ROBOTS_FLEET_GROUPS`),
//! with `used_memory` per origin and per group and where the bytes go (`MEMORY STATS`).
//! Starts its own `redis-server` on a free port; the corpus comes from `ROBOTS_CORPUS`.
//!
//! ```sh
//! ROBOTS_CORPUS=../shared/corpus/robots cargo bench -p robots-bench --bench fleet_memory
//! ```

use robots_test_support::corpus;
use robots_test_support::redis_server;

use std::time::{Duration, Instant};

use bytes::Bytes;
use robots_fetch::{RedisFleet, RedisStore, RobotsStore, StoredKind, StoredRobots, Validators};

fn record(body: &[u8]) -> StoredRobots {
    StoredRobots {
        kind: StoredKind::Parsed,
        status: Some(200),
        body: Some(Bytes::copy_from_slice(body)),
        fetched_at_ms: 1_764_000_000_000,
        refresh_at_ms: 1_764_086_400_000,
        outage: None,
        // What most servers send with a static file: a strong ETag and a date.
        validators: Validators {
            etag: Some(http::HeaderValue::from_static("\"6745c0de-1f4a\"")),
            last_modified: Some(http::HeaderValue::from_static(
                "Tue, 24 Nov 2026 10:00:00 GMT",
            )),
            max_age: None,
        },
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
        .integer(&["MEMORY", "USAGE", key, "SAMPLES", "0"])
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
    begun_long_ago(
        &runtime,
        &fleet,
        (0..groups).map(|i| format!("g{i}.example")),
    );
    let before = used_memory(&redis);
    one_request_each(
        &runtime,
        &fleet,
        (0..groups).map(|i| format!("http://g{i}.example")),
    );
    let grown = (used_memory(&redis) - before) as f64;
    let pace = memory_usage(&redis, "m:{g1.example}:pace");
    let epochs = redis
        .integer(&["EVAL", "return #redis.call('KEYS', 'm:{epoch-*')", "0"])
        .unwrap_or(0) as f64;
    let epoch_key = memory_usage(&redis, &fleet.epoch_key("g1.example")) as f64;
    // (The epoch keys were set before `before`.)
    let pacing_per_group = grown / groups as f64;
    println!(
        "pacing: {pacing_per_group:.0} bytes per group after a request (the pace state {pace} bytes, the rest the keyspace's own; leases and waiters: none once released); epoch keys: {epochs} of {epoch_key} bytes (one per slot in use: at most 16,384, {:.1} MB)",
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
    if !files.is_empty() {
        measured(&redis, &runtime, &fleet, &files);
    }
}

/// One request through a fleet layer (interval 500 ms) to each of these origins, 64 at a time,
/// their robots.txt cached in the process; their ends settled in Redis.
fn one_request_each(
    runtime: &tokio::runtime::Runtime,
    fleet: &RedisFleet,
    origins: impl Iterator<Item = String>,
) {
    use futures_util::StreamExt;
    use tower::{Layer, ServiceExt};
    runtime.block_on(async {
        let layer = robots_tower::RobotsLayer::builder("FooBot")
            .fleet(fleet)
            .min_delay(Duration::from_millis(500))
            .delay_factor(0.0)
            .build();
        let inner = tower::service_fn(|_request: http::Request<String>| async {
            Ok::<_, robots_fetch::BoxError>(http::Response::new(String::new()))
        });
        let service = layer.layer(inner);
        let requests = origins.map(|origin| {
            let parsed = robots_fetch::Origin::parse(&origin).expect("origin");
            layer
                .cache()
                .insert(&parsed, b"User-agent: *\nDisallow: /private\n");
            let request = http::Request::get(format!("{origin}/page"))
                .body(String::new())
                .expect("request");
            service.clone().oneshot(request)
        });
        futures_util::stream::iter(requests)
            .buffer_unordered(64)
            .for_each(|response| async move {
                response.expect("a page");
            })
            .await;
        layer.settle(Duration::from_secs(10)).await;
    });
}

/// Marks the fleet's state of these groups' slots as begun long ago, as on a server that has run
/// a while: a fresh server fences each slot's first interval (spec 11), which would make each
/// group's first request wait.
fn begun_long_ago(
    runtime: &tokio::runtime::Runtime,
    fleet: &RedisFleet,
    groups: impl Iterator<Item = String>,
) {
    let keys: std::collections::BTreeSet<String> =
        groups.map(|group| fleet.epoch_key(&group)).collect();
    runtime.block_on(async {
        let mut connection = fleet.connection().expect("connection");
        let mut pipe = redis::pipe();
        for key in &keys {
            pipe.cmd("SET").arg(key).arg("0").ignore();
        }
        let _: () = pipe
            .query_async(&mut connection)
            .await
            .expect("the epochs are set");
    });
}

/// The text of a RESP bulk string reply.
fn bulk(reply: &str) -> &str {
    reply.lines().nth(1).unwrap_or_default()
}

fn env_count(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A field of `MEMORY STATS` (its reply, as RESP text: the name, then its integer).
fn memory_stat(stats: &str, name: &str) -> i64 {
    let mut lines = stats.lines().skip_while(|line| *line != name);
    lines
        .nth(1)
        .and_then(|line| line.strip_prefix(':'))
        .and_then(|v| v.parse().ok())
        .unwrap_or(-1)
}

/// Fills an empty server with the records of `ROBOTS_FLEET_ORIGINS` origins (the corpus's files
/// in turn, as the store encodes them, under the store's own key names and expiry) and the
/// politeness keys of `ROBOTS_FLEET_GROUPS` groups after one request each, and reports what the
/// server holds.
fn measured(
    redis: &redis_server::RedisServer,
    runtime: &tokio::runtime::Runtime,
    fleet: &RedisFleet,
    files: &[(String, Vec<u8>)],
) {
    let origins = env_count("ROBOTS_FLEET_ORIGINS", 1_000_000);
    let groups = env_count("ROBOTS_FLEET_GROUPS", 100_000);
    redis.command(&["FLUSHALL"]);
    let empty = used_memory(redis);
    let encoded: Vec<Vec<u8>> = files.iter().map(|(_, b)| record(b).encode()).collect();
    // The store's expiry for a copy: its refresh time plus the 30 days it is kept past it.
    let px = (Duration::from_secs(31 * 24 * 3600).as_millis()).to_string();
    let started = Instant::now();
    let mut key_bytes = 0usize;
    runtime.block_on(async {
        let mut connection = fleet.connection().expect("connection");
        for batch in (0..origins).collect::<Vec<_>>().chunks(1000) {
            let mut pipe = redis::pipe();
            for &i in batch {
                // What `RobotsCache` names a record: `<prefix>:{<origin>}:robots:<identity>`.
                let key = format!("m:{{https://h{i}.test}}:robots:foobot");
                key_bytes += key.len();
                pipe.cmd("SET")
                    .arg(key)
                    .arg(encoded[i % encoded.len()].as_slice())
                    .arg("PX")
                    .arg(&px)
                    .ignore();
            }
            let _: () = pipe
                .query_async(&mut connection)
                .await
                .expect("the records are stored");
        }
    });
    let with_store = used_memory(redis);
    let stats = redis.command(&["MEMORY", "STATS"]);
    let bodies: usize = (0..origins).map(|i| encoded[i % encoded.len()].len()).sum();
    let per_origin = (with_store - empty) as f64 / origins as f64;
    println!(
        "measured: {origins} origins' records in {:.0} s: used_memory {:.2} GB, {per_origin:.0} bytes per origin; of which values {:.0} bytes (encoded records), key names {:.0} bytes, the main hash table {:.0} bytes and the expiry table {:.0} bytes per key, the rest allocator rounding and the objects' headers",
        started.elapsed().as_secs_f64(),
        (with_store - empty) as f64 / 1e9,
        bodies as f64 / origins as f64,
        key_bytes as f64 / origins as f64,
        memory_stat(&stats, "overhead.hashtable.main") as f64 / origins as f64,
        memory_stat(&stats, "overhead.hashtable.expires") as f64 / origins as f64,
    );
    println!(
        "measured: a record's encoding: {}",
        bulk(&redis.command(&["OBJECT", "ENCODING", "m:{https://h0.test}:robots:foobot"]))
    );

    // The groups: one request each through the layer (robots.txt cached in the process), then
    // their keys as they stay while the group's state matters. (With the epoch keys of their
    // slots: at most 16,384, about 1 MB.)
    begun_long_ago(runtime, fleet, (0..groups).map(|i| format!("p{i}.test")));
    let started = Instant::now();
    one_request_each(
        runtime,
        fleet,
        (0..groups).map(|i| format!("https://p{i}.test")),
    );
    let with_groups = used_memory(redis);
    let per_group = (with_groups - with_store) as f64 / groups as f64;
    let after = redis.command(&["MEMORY", "STATS"]);
    let tables = |stats: &str| {
        memory_stat(stats, "overhead.hashtable.main")
            + memory_stat(stats, "overhead.hashtable.expires")
    };
    let listed = redis.command(&["KEYS", "m:{p1.test}:*"]);
    let group_keys: Vec<&str> = listed.lines().filter(|l| l.starts_with("m:")).collect();
    println!(
        "measured: {groups} groups after a request each ({:.0} s): {per_group:.0} bytes per group, of which {:.0} bytes the keyspace's two hash tables grown (they double in steps: {} → {} bytes); a group's keys {group_keys:?}, the pace state {} bytes ({}); together used_memory {:.2} GB",
        started.elapsed().as_secs_f64(),
        (tables(&after) - tables(&stats)) as f64 / groups as f64,
        tables(&stats),
        tables(&after),
        memory_usage(redis, "m:{p1.test}:pace"),
        bulk(&redis.command(&["OBJECT", "ENCODING", "m:{p1.test}:pace"])),
        (with_groups - empty) as f64 / 1e9,
    );
}
