//! The shared robots store on a real `redis-server` (started on a free port of 127.0.0.1):
//! one robots.txt fetch per origin across caches that share nothing but the server, a lock whose
//! owner died, outages shared by the fleet, keys that expire, and a Redis that dies and returns.
#![cfg(feature = "redis")]

use crate::redis_server;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use redis_server::RedisServer;
use robots_fetch::{Origin, RedisFleet, RobotsCache, Source};
use wiremock::matchers::path;
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// robots.txt answering `status`, counting requests.
#[derive(Clone)]
struct Robots {
    status: Arc<Mutex<u16>>,
    requests: Arc<AtomicUsize>,
}

impl Respond for Robots {
    fn respond(&self, _: &Request) -> ResponseTemplate {
        self.requests.fetch_add(1, Ordering::SeqCst);
        ResponseTemplate::new(*self.status.lock().unwrap())
            .set_body_string("User-agent: *\nDisallow: /private\n")
            .set_delay(Duration::from_millis(100))
    }
}

async fn site(status: u16) -> (MockServer, Robots) {
    let server = MockServer::start().await;
    let robots = Robots {
        status: Arc::new(Mutex::new(status)),
        requests: Arc::default(),
    };
    Mock::given(path("/robots.txt"))
        .respond_with(robots.clone())
        .mount(&server)
        .await;
    (server, robots)
}

/// A cache as one process of the fleet would have: its own connection to the server.
fn member(redis: &RedisServer) -> (RobotsCache, reqwest::Client) {
    let fleet = RedisFleet::new(&redis.url())
        .unwrap()
        .response_timeout(Duration::from_millis(500));
    let cache = RobotsCache::builder("FooBot").redis(&fleet).build();
    let client = robots_fetch::reqwest_client(cache.fetch_config()).unwrap();
    (cache, client)
}

#[tokio::test(flavor = "multi_thread")]
async fn one_fetch_per_origin_across_caches() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let (server, robots) = site(200).await;
    let origin = Origin::parse(&server.uri()).unwrap();
    let members: Vec<_> = (0..6).map(|_| member(&redis)).collect();
    let lookups = members
        .iter()
        .map(|(cache, client)| cache.get(client, &origin));
    let entries = futures_util::future::join_all(lookups).await;
    assert_eq!(
        robots.requests.load(Ordering::SeqCst),
        1,
        "one fetch for six caches"
    );
    for entry in &entries {
        assert!(matches!(entry.source(), Source::Parsed { status: 200, .. }));
        let private: url::Url = format!("{}/private/x", server.uri()).parse().unwrap();
        assert!(!entry.check(&private).allowed);
    }
    // A seventh process arriving later reads the stored copy.
    let (late, client) = member(&redis);
    late.get(&client, &origin).await;
    assert_eq!(robots.requests.load(Ordering::SeqCst), 1);
    assert_eq!(late.stats().fetches, 0);

    // The keys expire on their own: the record lives for its lifetime plus the 30-day rule,
    // and the fetch lock is gone.
    let key = format!("robots:{{{origin}}}:robots:FooBot|FooBot");
    let pttl: i64 = redis
        .command(&["PTTL", &key])
        .trim_start_matches(':')
        .trim()
        .parse()
        .unwrap();
    let day = 24 * 3600 * 1000;
    assert!(pttl > 30 * day && pttl <= 31 * day, "PTTL {pttl}");
    let lock = format!("robots:{{{origin}}}:lock:FooBot|FooBot");
    assert_eq!(redis.command(&["EXISTS", &lock]).trim(), ":0");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_lock_whose_owner_died_expires() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let (server, robots) = site(200).await;
    let origin = Origin::parse(&server.uri()).unwrap();
    // A process took the lock and died: its lock expires in 700 ms.
    let lock = format!("robots:{{{origin}}}:lock:FooBot|FooBot");
    assert_eq!(
        redis
            .command(&["SET", &lock, "dead-owner", "NX", "PX", "700"])
            .trim(),
        "+OK"
    );
    let (cache, client) = member(&redis);
    let started = Instant::now();
    let entry = cache.get(&client, &origin).await;
    let waited = started.elapsed();
    assert!(matches!(entry.source(), Source::Parsed { .. }));
    assert_eq!(robots.requests.load(Ordering::SeqCst), 1);
    assert!(
        waited >= Duration::from_millis(600) && waited < Duration::from_secs(5),
        "waited {waited:?} for the dead owner's lock"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_outage_is_shared_by_the_fleet() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let (server, robots) = site(503).await;
    let origin = Origin::parse(&server.uri()).unwrap();
    let (a, client_a) = member(&redis);
    let entry = a.get(&client_a, &origin).await;
    assert!(entry.is_blocked_by_outage(tokio::time::Instant::now()));
    // Another process learns of the outage from the store, without asking the site again.
    let (b, client_b) = member(&redis);
    let entry = b.get(&client_b, &origin).await;
    assert!(matches!(entry.source(), Source::Unreachable { .. }));
    assert!(entry.is_blocked_by_outage(tokio::time::Instant::now()));
    assert_eq!(robots.requests.load(Ordering::SeqCst), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_redis_that_dies_never_fails_open_and_is_used_again_when_back() {
    let Some(mut redis) = RedisServer::start() else {
        return;
    };
    let (server, robots) = site(200).await;
    let origin = Origin::parse(&server.uri()).unwrap();
    let (cache, client) = member(&redis);
    cache.get(&client, &origin).await;
    assert_eq!(robots.requests.load(Ordering::SeqCst), 1);

    redis.stop();
    cache.invalidate(&origin);
    let started = Instant::now();
    let entry = cache.get(&client, &origin).await;
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "a dead Redis costs at most its timeouts: {:?}",
        started.elapsed()
    );
    // Fetched here, with the spec's outcome: the rules apply as ever.
    assert_eq!(robots.requests.load(Ordering::SeqCst), 2);
    let private: url::Url = format!("{}/private/x", server.uri()).parse().unwrap();
    assert!(!entry.check(&private).allowed);

    redis.restart();
    cache.invalidate(&origin);
    let deadline = Instant::now() + Duration::from_secs(10);
    let key = format!("robots:{{{origin}}}:robots:FooBot|FooBot");
    loop {
        cache.get(&client, &origin).await;
        if redis.command(&["EXISTS", &key]).trim() == ":1" {
            break;
        }
        assert!(Instant::now() < deadline, "the store was not used again");
        cache.invalidate(&origin);
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
