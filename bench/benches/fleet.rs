//! What fleet mode costs: a request through the layer to a warm origin with no politeness wait,
//! in-process pacing against Redis pacing on loopback (criterion, then p50/p99 over 20,000
//! requests), and decisions per second with 1, 4, 16 and 64 processes sharing one Redis against
//! the same processes pacing in-process, then sharing a Redis Cluster of three masters. Starts
//! its own `redis-server`s on free ports. `ROBOTS_FLEET_PROCESSES=16,64` runs only those counts;
//! `ROBOTS_FLEET_WINDOW=6` measures each for 6 s instead of 2.
//!
//! ```sh
//! cargo bench -p robots-bench --bench fleet
//! ```

use robots_test_support::redis_server;

use std::hint::black_box;
use std::process::Command;
use std::time::{Duration, Instant};

use bytes::Bytes;
use criterion::Criterion;
use http_body_util::Full;
use robots_fetch::{BoxError, Origin};
use robots_tower::{RedisFleet, RobotsLayer};
use tower::{Layer, Service, ServiceExt};

const ORIGINS: usize = 1000;

/// The layer: robots.txt already cached for `origins`, with no interval, so that each request
/// costs the decision and the pacing bookkeeping only.
fn robots_layer(redis: Option<&str>, prefix: &str, origins: Vec<usize>) -> RobotsLayer {
    let mut config = RobotsLayer::builder("FooBot")
        .min_delay(Duration::ZERO)
        .delay_factor(0.0);
    if let Some(url) = redis {
        let fleet = RedisFleet::new(url).expect("redis url").prefix(prefix);
        config = config.fleet(&fleet);
    }
    let layer = config.build();
    for i in origins {
        let origin = Origin::parse(&format!("http://o{i}.example")).expect("origin");
        layer
            .cache()
            .insert(&origin, b"User-agent: *\nDisallow: /private\n");
    }
    layer
}

/// `layer` over an in-memory site.
fn service(
    layer: &RobotsLayer,
) -> impl Service<
    http::Request<Full<Bytes>>,
    Response = http::Response<robots_tower::PacedBody<Full<Bytes>>>,
    Error = BoxError,
    Future = impl Send + use<>,
> + Clone
+ use<> {
    let inner = tower::service_fn(|_request: http::Request<Full<Bytes>>| async {
        Ok::<_, BoxError>(http::Response::new(Full::new(Bytes::from_static(b"ok"))))
    });
    layer.layer(inner)
}

fn request(i: usize) -> http::Request<Full<Bytes>> {
    http::Request::get(format!("http://o{}.example/page", i % ORIGINS))
        .body(Full::default())
        .expect("request")
}

fn percentiles<S>(runtime: &tokio::runtime::Runtime, service: &S) -> (Duration, Duration)
where
    S: Service<
            http::Request<Full<Bytes>>,
            Response = http::Response<robots_tower::PacedBody<Full<Bytes>>>,
            Error = BoxError,
        > + Clone,
{
    let mut times: Vec<Duration> = runtime.block_on(async {
        let mut times = Vec::with_capacity(20_000);
        for i in 0..20_000 {
            let started = Instant::now();
            let response = service.clone().oneshot(request(i)).await;
            times.push(started.elapsed());
            black_box(response.is_ok());
        }
        times
    });
    times.sort();
    (times[times.len() / 2], times[times.len() * 99 / 100])
}

/// A worker process: decisions for `seconds` through its own layer (8 at a time, on its own
/// origins), printing how many.
fn worker(redis: Option<String>, id: usize, seconds: u64) {
    // One thread per process, as a crawler runs one process per core: with a worker thread
    // beside the main one, a quarter of a worker's CPU went to handing tasks between them.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    // (Each run its own keys: a run's last leases are not the next one's.)
    let prefix = std::env::var("ROBOTS_FLEET_PREFIX").unwrap_or_default();
    // Its origins' robots.txt cached, as the rest of the bench's (warm origins: decisions only).
    let origins = (id * 8..id * 8 + 8)
        .flat_map(|task| task * 100..task * 100 + 100)
        .collect();
    let layer = runtime.block_on(async { robots_layer(redis.as_deref(), &prefix, origins) });
    let service = runtime.block_on(async { service(&layer) });
    let count = runtime.block_on(async {
        let deadline = Instant::now() + Duration::from_secs(seconds);
        let tasks: Vec<_> = (0..8)
            .map(|t| {
                let service = service.clone();
                tokio::spawn(async move {
                    let mut n = 0usize;
                    while Instant::now() < deadline {
                        // Each task has its own origins: no politeness contention, only decisions.
                        let i = (id * 8 + t) * 10_000 + n;
                        let request = http::Request::get(format!(
                            "http://o{}.example/page",
                            (id * 8 + t) * 100 + i % 100
                        ))
                        .body(Full::default())
                        .expect("request");
                        if service.clone().oneshot(request).await.is_ok() {
                            n += 1;
                        }
                    }
                    n
                })
            })
            .collect();
        let mut total = 0;
        for task in tasks {
            total += task.await.unwrap_or(0);
        }
        // What a process about to exit does: its last requests' ends reach the fleet.
        layer.settle(Duration::from_secs(2)).await;
        total
    });
    println!("{count}");
}

/// The script calls the servers ran so far, and the microseconds they took (`INFO
/// commandstats`: `EVALSHA`, and `EVAL` for a script a server did not know yet).
fn script_stats(servers: &[&redis_server::RedisServer]) -> (u64, u64) {
    let mut total = (0, 0);
    for server in servers {
        for line in server.command(&["INFO", "commandstats"]).lines() {
            if !(line.starts_with("cmdstat_evalsha:") || line.starts_with("cmdstat_eval:")) {
                continue;
            }
            let field = |name: &str| {
                line.split(name)
                    .nth(1)
                    .and_then(|rest| rest.split([',', '.']).next())
                    .and_then(|n| n.parse::<u64>().ok())
                    .unwrap_or(0)
            };
            total.0 += field("calls=");
            total.1 += field("usec=");
        }
    }
    total
}

/// Each process's window in seconds: 2 unless `ROBOTS_FLEET_WINDOW` says otherwise (a longer one
/// narrows the run-to-run spread, the processes' start-up weighing less).
fn window() -> u64 {
    std::env::var("ROBOTS_FLEET_WINDOW")
        .ok()
        .and_then(|s| s.parse().ok())
        .filter(|&s| s > 0)
        .unwrap_or(2)
}

fn throughput(redis: Option<&str>, processes: usize) -> f64 {
    let seconds = window();
    let exe = std::env::current_exe().expect("the bench binary");
    // All workers run at once: spawned first, waited for after.
    let children: Vec<_> = (0..processes)
        .map(|id| {
            let mut command = Command::new(&exe);
            command
                .env("ROBOTS_FLEET_WORKER", id.to_string())
                .env("ROBOTS_FLEET_SECONDS", seconds.to_string())
                .env(
                    "ROBOTS_FLEET_PREFIX",
                    format!("bench-{processes}-{}", fastrand::u32(..)),
                )
                .stdout(std::process::Stdio::piped());
            if let Some(url) = redis {
                command.env("ROBOTS_FLEET_REDIS", url);
            }
            command.spawn().expect("worker")
        })
        .collect();
    let total: usize = children
        .into_iter()
        .map(|child| {
            let output = child.wait_with_output().expect("worker output");
            String::from_utf8_lossy(&output.stdout)
                .trim()
                .parse::<usize>()
                .unwrap_or(0)
        })
        .sum();
    total as f64 / seconds as f64
}

fn main() {
    if let Ok(id) = std::env::var("ROBOTS_FLEET_WORKER") {
        let seconds = std::env::var("ROBOTS_FLEET_SECONDS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(2);
        worker(
            std::env::var("ROBOTS_FLEET_REDIS").ok(),
            id.parse().unwrap_or(0),
            seconds,
        );
        return;
    }
    let Some(redis) = redis_server::RedisServer::start() else {
        return;
    };
    let url = redis.url();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let local = runtime.block_on(async { robots_layer(None, "", (0..ORIGINS).collect()) });
    let local = runtime.block_on(async { service(&local) });
    let shared =
        runtime.block_on(async { robots_layer(Some(&url), "bench", (0..ORIGINS).collect()) });
    let shared = runtime.block_on(async { service(&shared) });

    let mut criterion = Criterion::default().configure_from_args();
    let mut group = criterion.benchmark_group("fleet_request");
    let mut i = 0usize;
    group.bench_function("in-process", |b| {
        b.to_async(&runtime).iter(|| {
            i += 1;
            local.clone().oneshot(request(i))
        })
    });
    group.bench_function("redis", |b| {
        b.to_async(&runtime).iter(|| {
            i += 1;
            shared.clone().oneshot(request(i))
        })
    });
    group.finish();

    let (p50, p99) = percentiles(&runtime, &local);
    println!("percentiles: in-process  p50 {p50:?}  p99 {p99:?}");
    let (p50, p99) = percentiles(&runtime, &shared);
    println!("percentiles: redis       p50 {p50:?}  p99 {p99:?}");
    let counts: Vec<usize> = std::env::var("ROBOTS_FLEET_PROCESSES")
        .ok()
        .map(|list| {
            list.split(',')
                .filter_map(|n| n.trim().parse().ok())
                .collect()
        })
        .unwrap_or_else(|| vec![1, 4, 16, 64]);
    for &processes in &counts {
        let inproc = throughput(None, processes);
        let before = script_stats(&[&redis]);
        let fleet = throughput(Some(&url), processes);
        let (calls, usec) = script_stats(&[&redis]);
        let decisions = fleet * window() as f64;
        println!(
            "throughput: {processes:>2} processes: in-process {inproc:>9.0} decisions/s, redis {fleet:>9.0} decisions/s; \
             {:.2} script calls and {:.1} µs of the server's script time per decision",
            (calls - before.0) as f64 / decisions,
            (usec - before.1) as f64 / decisions,
        );
    }
    drop(redis);
    // The same on a Redis Cluster of three masters: each takes its slots' share.
    let Some(cluster) = redis_server::RedisCluster::start() else {
        return;
    };
    let url = cluster.url();
    let masters: Vec<&redis_server::RedisServer> = cluster.nodes.iter().take(3).collect();
    for &processes in &counts {
        let before = script_stats(&masters);
        let fleet = throughput(Some(&url), processes);
        let (calls, usec) = script_stats(&masters);
        let decisions = fleet * window() as f64;
        println!(
            "throughput: {processes:>2} processes: redis cluster (3 masters) {fleet:>9.0} decisions/s; \
             {:.2} script calls and {:.1} µs of the servers' script time per decision",
            (calls - before.0) as f64 / decisions,
            (usec - before.1) as f64 / decisions,
        );
    }
}
