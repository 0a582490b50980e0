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
    let cache = RobotsCache::builder("FooBot").fleet(&fleet).build();
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
    let pttl = redis.integer(&["PTTL", &key]).unwrap();
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

/// robots.txt on `count` ports of 127.0.0.1 at once, answering at once, counting requests per
/// port: many origins without many mock servers.
struct ManyOrigins {
    origins: Vec<Origin>,
    requests: Arc<Vec<AtomicUsize>>,
}

async fn many_origins(count: usize) -> ManyOrigins {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let requests: Arc<Vec<AtomicUsize>> =
        Arc::new((0..count).map(|_| AtomicUsize::new(0)).collect());
    let mut origins = Vec::with_capacity(count);
    for index in 0..count {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        origins.push(Origin::parse(&format!("http://{}", listener.local_addr().unwrap())).unwrap());
        let requests = requests.clone();
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let requests = requests.clone();
                tokio::spawn(async move {
                    let mut head = Vec::new();
                    let mut buf = [0u8; 1024];
                    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                        match stream.read(&mut buf).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => head.extend_from_slice(&buf[..n]),
                        }
                    }
                    if head.starts_with(b"GET /robots.txt ") {
                        requests[index].fetch_add(1, Ordering::SeqCst);
                    }
                    let body = "User-agent: *\nDisallow: /private\n";
                    let answer = format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                        body.len()
                    );
                    let _ = stream.write_all(answer.as_bytes()).await;
                });
            }
        });
    }
    ManyOrigins { origins, requests }
}

/// Spec 11, "one fetch means one": 16 processes (16 caches, each with its own connection)
/// starting together on 100 origins fetch each robots.txt once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sixteen_processes_on_a_hundred_origins_fetch_each_file_once() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let site = many_origins(100).await;
    let members: Vec<_> = (0..16).map(|_| member(&redis)).collect();
    let crawls = members.iter().enumerate().map(|(m, (cache, client))| {
        let origins = &site.origins;
        async move {
            // Each member walks the origins from its own starting point, all at once.
            let lookups = (0..origins.len())
                .map(|i| cache.get(client, &origins[(i + m * 7) % origins.len()]));
            futures_util::future::join_all(lookups).await
        }
    });
    let entries = futures_util::future::join_all(crawls).await;
    for entries in &entries {
        for entry in entries {
            assert!(
                matches!(entry.source(), Source::Parsed { status: 200, .. }),
                "{:?}",
                entry.source()
            );
        }
    }
    let twice: Vec<(usize, usize)> = site
        .requests
        .iter()
        .map(|r| r.load(Ordering::SeqCst))
        .enumerate()
        .filter(|&(_, n)| n != 1)
        .collect();
    assert!(
        twice.is_empty(),
        "origins (index, fetches) not fetched exactly once: {twice:?}"
    );
}

/// A store whose lock answers late: the window between "nothing stored" and "the lock is mine"
/// in which another process can fetch, store and release.
struct SlowLock {
    inner: robots_fetch::RedisStore,
    delay: Duration,
}

impl robots_fetch::RobotsStore for SlowLock {
    fn load<'a>(
        &'a self,
        key: &'a str,
    ) -> robots_fetch::StoreFuture<'a, Option<robots_fetch::StoredRobots>> {
        self.inner.load(key)
    }
    fn save<'a>(
        &'a self,
        key: &'a str,
        record: &'a robots_fetch::StoredRobots,
        ttl: Duration,
    ) -> robots_fetch::StoreFuture<'a, ()> {
        self.inner.save(key, record, ttl)
    }
    fn try_lock<'a>(
        &'a self,
        key: &'a str,
        owner: &'a str,
        ttl: Duration,
    ) -> robots_fetch::StoreFuture<'a, bool> {
        Box::pin(async move {
            tokio::time::sleep(self.delay).await;
            self.inner.try_lock(key, owner, ttl).await
        })
    }
    fn unlock<'a>(&'a self, key: &'a str, owner: &'a str) -> robots_fetch::StoreFuture<'a, ()> {
        self.inner.unlock(key, owner)
    }
}

/// The store-then-release race: a process that found nothing stored, and takes the lock only
/// after another process fetched, stored and released it, uses what was stored.
#[tokio::test(flavor = "multi_thread")]
async fn a_lock_taken_after_another_fetch_was_stored_does_not_fetch_again() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let (server, robots) = site(200).await;
    let origin = Origin::parse(&server.uri()).unwrap();
    let (fast, fast_client) = member(&redis);
    let fleet = RedisFleet::new(&redis.url()).unwrap();
    let slow_store = SlowLock {
        inner: robots_fetch::RedisStore::new(fleet),
        delay: Duration::from_millis(400),
    };
    let slow = RobotsCache::builder("FooBot")
        .store(Arc::new(slow_store))
        .build();
    let slow_client = robots_fetch::reqwest_client(slow.fetch_config()).unwrap();
    // Both find nothing stored; the fast one fetches (100 ms) and releases before the slow one
    // gets to its lock.
    let (a, b) = tokio::join!(
        fast.get(&fast_client, &origin),
        slow.get(&slow_client, &origin)
    );
    assert!(matches!(a.source(), Source::Parsed { status: 200, .. }));
    assert!(matches!(b.source(), Source::Parsed { status: 200, .. }));
    assert_eq!(
        robots.requests.load(Ordering::SeqCst),
        1,
        "one fetch for both"
    );
}

/// A refresh of a stored file that the fleet fetches again parses the new body once: the stored
/// body is parsed only when the fetch fails and the stale copy is needed.
#[tokio::test(flavor = "multi_thread")]
async fn a_refresh_parses_the_new_body_once() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let (server, robots) = site(200).await;
    let origin = Origin::parse(&server.uri()).unwrap();
    let fleet = RedisFleet::new(&redis.url()).unwrap();
    let config = robots_fetch::CacheConfig {
        default_ttl: Duration::from_millis(300),
        min_ttl: Duration::from_millis(300),
        ..Default::default()
    };
    let cache = RobotsCache::builder("FooBot")
        .cache_config(config)
        .fleet(&fleet)
        .build();
    let client = robots_fetch::reqwest_client(cache.fetch_config()).unwrap();
    cache.get(&client, &origin).await;
    assert_eq!(cache.stats().parses, 1);
    tokio::time::sleep(Duration::from_millis(400)).await;
    // Due locally and in the store: fetched again, and only the new body parsed.
    let entry = cache.get(&client, &origin).await;
    assert!(matches!(entry.source(), Source::Parsed { status: 200, .. }));
    assert_eq!(robots.requests.load(Ordering::SeqCst), 2);
    assert_eq!(cache.stats().parses, 2, "{:?}", cache.stats());
    // A failed refresh still keeps the stored copy (parsed then, for the stale entry).
    *robots.status.lock().unwrap() = 503;
    tokio::time::sleep(Duration::from_millis(400)).await;
    let entry = cache.get(&client, &origin).await;
    assert!(
        matches!(entry.source(), Source::Stale { status: 200, .. }),
        "{:?}",
        entry.source()
    );
    let private: url::Url = format!("{}/private/x", server.uri()).parse().unwrap();
    assert!(!entry.check(&private).allowed);
    assert_eq!(cache.stats().parses, 3);
}

/// A fleet process whose cache dropped an origin's fresh copy for room reloads it from the
/// shared store, not from the network, and counts no refetch (issue 33).
#[tokio::test(flavor = "multi_thread")]
async fn a_copy_evicted_for_room_comes_back_from_the_store() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let (server, robots) = site(200).await;
    let origin = Origin::parse(&server.uri()).unwrap();
    let fleet = RedisFleet::new(&redis.url()).unwrap();
    let cache = RobotsCache::builder("FooBot")
        .fleet(&fleet)
        .cache_config(robots_fetch::CacheConfig {
            capacity: 1_000,
            ..robots_fetch::CacheConfig::default()
        })
        .build();
    let client = robots_fetch::reqwest_client(cache.fetch_config()).unwrap();
    cache.get(&client, &origin).await;
    assert_eq!(robots.requests.load(Ordering::SeqCst), 1);
    // Other origins, each visited twice, push it out of this process's cache.
    for i in 0..1_200 {
        let other = Origin::parse(&format!("http://o{i}.test")).unwrap();
        cache.insert(&other, b"");
        assert!(cache.cached(&other).is_some());
    }
    assert!(cache.cached(&origin).is_none(), "still cached");
    let entry = cache.get(&client, &origin).await;
    // The rules as the site gave them.
    assert!(
        !entry
            .verdict_at(b"/private", tokio::time::Instant::now())
            .allowed
    );
    assert_eq!(
        robots.requests.load(Ordering::SeqCst),
        1,
        "reloaded from the store, not fetched again"
    );
    assert_eq!(cache.stats().refetches, 0);
    assert!(cache.cached(&origin).is_some(), "cached again");
}
