//! Cache lifetimes, outages, back-off and sharing, on tokio's paused clock with a scripted
//! in-memory server (a tower service, so this is also the `ServiceClient` path).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use robots_fetch::{CacheConfig, Origin, RobotsCache, Source};
use tokio::time::{Instant, advance};
use wiremock::matchers::path;
use wiremock::{Mock, MockServer, ResponseTemplate};

const HOUR: Duration = Duration::from_secs(3600);
const DAY: Duration = Duration::from_secs(24 * 3600);

use crate::support::{self, Answer};

/// Answers robots.txt requests from a script; the last answer repeats.
#[derive(Clone)]
struct Script {
    answers: Arc<Mutex<VecDeque<Answer>>>,
    requests: Arc<AtomicUsize>,
}

impl Script {
    fn new(answers: Vec<Answer>) -> Script {
        Script {
            answers: Arc::new(Mutex::new(answers.into())),
            requests: Arc::new(AtomicUsize::new(0)),
        }
    }

    fn then(&self, status: u16, body: &'static str) {
        let mut answers = self.answers.lock().unwrap();
        answers.clear();
        answers.push_back((status, vec![], body));
    }

    fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }

    fn client(&self) -> impl robots_fetch::FetchClient + Clone + use<> {
        let script = self.clone();
        support::client(move |_headers| {
            script.requests.fetch_add(1, Ordering::SeqCst);
            let mut answers = script.answers.lock().unwrap();
            if answers.len() > 1 {
                answers.pop_front().unwrap()
            } else {
                answers[0].clone()
            }
        })
    }
}

const RULES: &str = "User-agent: *\nDisallow: /private\n";

fn origin() -> Origin {
    Origin::parse("https://example.com").unwrap()
}

fn blocked(entry: &robots_fetch::CachedRobots) -> bool {
    !entry.verdict_at(b"/private", Instant::now()).allowed
}

fn open(entry: &robots_fetch::CachedRobots) -> bool {
    entry.verdict_at(b"/anything", Instant::now()).allowed
}

#[tokio::test(start_paused = true)]
async fn a_good_copy_lives_24_hours() {
    let script = Script::new(vec![(200, vec![], RULES)]);
    let cache = RobotsCache::builder("FooBot").build();
    let client = script.client();
    let entry = cache.get(&client, &origin()).await;
    assert!(blocked(&entry));
    let Source::Parsed {
        fetched_at,
        expires_at,
        ..
    } = entry.source().clone()
    else {
        panic!("{:?}", entry.source())
    };
    assert_eq!(expires_at - fetched_at, DAY);
    advance(DAY - Duration::from_secs(1)).await;
    cache.get(&client, &origin()).await;
    assert_eq!(script.requests(), 1, "still fresh");
    advance(Duration::from_secs(2)).await;
    cache.get(&client, &origin()).await;
    assert_eq!(script.requests(), 2, "expired after 24 h");
    let stats = cache.stats();
    assert_eq!(
        (stats.hits, stats.misses, stats.fetches, stats.errors),
        (1, 2, 2, 0)
    );
}

#[tokio::test(start_paused = true)]
async fn max_age_is_honoured_within_bounds() {
    for (max_age, expected) in [
        ("max-age=7200", 2 * HOUR),
        ("max-age=5", Duration::from_secs(60)),
        ("max-age=604800", DAY),
        ("no-cache", Duration::from_secs(60)),
    ] {
        let script = Script::new(vec![(
            200,
            vec![("Cache-Control", max_age.to_string())],
            RULES,
        )]);
        let cache = RobotsCache::builder("FooBot").build();
        let entry = cache.get(&script.client(), &origin()).await;
        let Source::Parsed {
            fetched_at,
            expires_at,
            ..
        } = entry.source().clone()
        else {
            panic!()
        };
        assert_eq!(expires_at - fetched_at, expected, "{max_age}");
    }
    // The bounds are configurable.
    let script = Script::new(vec![(
        200,
        vec![("Cache-Control", "max-age=604800".into())],
        RULES,
    )]);
    let config = CacheConfig {
        max_ttl: 7 * DAY,
        ..Default::default()
    };
    let cache = RobotsCache::builder("FooBot").cache_config(config).build();
    let entry = cache.get(&script.client(), &origin()).await;
    assert_eq!(entry.refresh_at() - Instant::now(), 7 * DAY);
}

#[tokio::test(start_paused = true)]
async fn the_last_good_copy_is_used_during_an_outage() {
    let script = Script::new(vec![(200, vec![], RULES)]);
    let cache = RobotsCache::builder("FooBot").build();
    let client = script.client();
    assert!(blocked(&*cache.get(&client, &origin()).await));
    script.then(503, "");
    advance(DAY + Duration::from_secs(1)).await;
    let entry = cache.get(&client, &origin()).await;
    assert!(
        matches!(entry.source(), Source::Stale { status: 200, .. }),
        "{:?}",
        entry.source()
    );
    // The old rules still apply: /private blocked, the rest open.
    assert!(blocked(&entry) && open(&entry));
    assert!(!entry.is_blocked_by_outage(Instant::now()));
    // Back-off: the next fetch waits (10 s after a 503, then 1 min, 2 min…).
    cache.get(&client, &origin()).await;
    assert_eq!(script.requests(), 2);
    advance(Duration::from_secs(11)).await;
    let entry = cache.get(&client, &origin()).await;
    assert_eq!(script.requests(), 3);
    let Source::Stale {
        unreachable_since,
        next_retry,
        ..
    } = entry.source().clone()
    else {
        panic!()
    };
    assert_eq!(next_retry - Instant::now(), Duration::from_secs(60));
    assert!(
        unreachable_since < Instant::now(),
        "the outage start is kept"
    );
    // Recovery replaces the stale copy.
    script.then(200, "User-agent: *\nDisallow: /\n");
    advance(Duration::from_secs(61)).await;
    let entry = cache.get(&client, &origin()).await;
    assert!(matches!(entry.source(), Source::Parsed { .. }));
    assert!(!open(&entry));
}

#[tokio::test(start_paused = true)]
async fn with_no_good_copy_everything_is_disallowed_for_30_days() {
    let script = Script::new(vec![(500, vec![], "")]);
    let config = CacheConfig {
        retry_max: 7 * DAY,
        ..Default::default()
    };
    let cache = RobotsCache::builder("FooBot").cache_config(config).build();
    let client = script.client();
    let entry = cache.get(&client, &origin()).await;
    assert!(!open(&entry) && entry.is_blocked_by_outage(Instant::now()));
    let started = Instant::now();
    while Instant::now() - started < 29 * DAY {
        advance(DAY).await;
        let entry = cache.get(&client, &origin()).await;
        if Instant::now() - started < 30 * DAY {
            assert!(
                !open(&entry),
                "still disallowed after {:?}",
                Instant::now() - started
            );
        }
    }
    advance(DAY + HOUR).await;
    let entry = cache.get(&client, &origin()).await;
    assert!(matches!(entry.source(), Source::Unreachable { .. }));
    assert!(open(&entry), "after 30 days unreachable, allow all");
    assert!(!entry.is_blocked_by_outage(Instant::now()));
}

#[tokio::test(start_paused = true)]
async fn retry_after_sets_the_next_attempt_within_bounds() {
    for (asked, expected) in [
        ("90", Duration::from_secs(90)),
        ("0", Duration::from_secs(1)),
        ("9999999", DAY),
    ] {
        let script = Script::new(vec![(429, vec![("Retry-After", asked.to_string())], "")]);
        let cache = RobotsCache::builder("FooBot").build();
        let entry = cache.get(&script.client(), &origin()).await;
        let Source::Unreachable {
            next_retry, since, ..
        } = entry.source().clone()
        else {
            panic!()
        };
        assert_eq!(next_retry - since, expected, "Retry-After: {asked}");
    }
}

#[tokio::test(start_paused = true)]
async fn clones_share_the_cache_and_insert_invalidate_work() {
    let script = Script::new(vec![(200, vec![], RULES)]);
    let cache = RobotsCache::builder("FooBot").build();
    let other = cache.clone();
    cache.get(&script.client(), &origin()).await;
    assert!(other.cached(&origin()).is_some());
    other.invalidate(&origin());
    assert!(cache.cached(&origin()).is_none());
    let warm = Origin::parse("https://warm.example").unwrap();
    other.insert(&warm, b"User-agent: FooBot\nDisallow: /cold\n");
    let entry = cache.cached(&warm).unwrap();
    assert!(matches!(entry.source(), Source::Inserted { .. }));
    assert!(!entry.verdict_at(b"/cold", Instant::now()).allowed);
    assert_eq!(script.requests(), 1);
}

#[tokio::test(start_paused = true)]
async fn the_cache_is_bounded() {
    let cache = RobotsCache::builder("FooBot")
        .cache_config(CacheConfig {
            capacity: 100,
            ..Default::default()
        })
        .build();
    for i in 0..1000 {
        cache.insert(
            &Origin::parse(&format!("https://h{i}.example")).unwrap(),
            b"",
        );
    }
    assert!(cache.len() <= 100, "{} entries", cache.len());
}

#[tokio::test(start_paused = true)]
async fn rules_follow_the_configured_tokens() {
    let script = Script::new(vec![(
        200,
        vec![],
        "User-agent: Googlebot\nDisallow: /g\nUser-agent: Googlebot-Image\nDisallow: /i\n",
    )]);
    let cache = RobotsCache::builder("Mozilla/5.0 (compatible; Googlebot-Image/1.0)")
        .tokens(["Googlebot-Image", "Googlebot"])
        .build();
    let entry = cache.get(&script.client(), &origin()).await;
    assert!(!entry.verdict_at(b"/i", Instant::now()).allowed);
    assert!(entry.verdict_at(b"/g", Instant::now()).allowed);
    assert_eq!(cache.tokens(), ["Googlebot-Image", "Googlebot"]);
}

/// 1,000 concurrent lookups of a cold origin make exactly one request (real server, real time).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_lookups_share_one_fetch() {
    let server = MockServer::start().await;
    Mock::given(path("/robots.txt"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_string(RULES)
                .set_delay(Duration::from_millis(200)),
        )
        .expect(1)
        .mount(&server)
        .await;
    let cache = RobotsCache::builder("FooBot").build();
    let client = robots_fetch::reqwest_client(cache.fetch_config()).unwrap();
    let origin = Origin::parse(&server.uri()).unwrap();
    let tasks: Vec<_> = (0..1000)
        .map(|_| {
            let (cache, client, origin) = (cache.clone(), client.clone(), origin.clone());
            tokio::spawn(async move { blocked(&*cache.get(&client, &origin).await) })
        })
        .collect();
    for task in tasks {
        assert!(task.await.unwrap());
    }
    server.verify().await;
    assert_eq!(cache.stats().fetches, 1);
    // wiremock verifies again when the server is dropped, blocking the thread on its state's
    // lock. On a runtime worker that can starve the task holding the lock (it once spun a CI
    // run at 100% CPU): drop it on a blocking thread instead.
    tokio::task::spawn_blocking(move || drop(server))
        .await
        .unwrap();
}

#[tokio::test(start_paused = true)]
async fn every_lookup_counts_once() {
    let script = Script::new(vec![(200, vec![], RULES)]);
    let cache = RobotsCache::builder("FooBot").build();
    let client = script.client();
    let url: url::Url = "https://example.com/private/x".parse().unwrap();
    cache.get(&client, &Origin::from_url(&url).unwrap()).await;
    cache.get(&client, &Origin::from_url(&url).unwrap()).await;
    cache
        .get(&client, &Origin::parse("https://example.com").unwrap())
        .await;
    let stats = cache.stats();
    assert_eq!((stats.hits, stats.misses, stats.fetches), (2, 1, 1));
}

/// A server's enormous Retry-After with no configured bound pauses far ahead without panicking.
#[tokio::test(start_paused = true)]
async fn huge_delays_saturate_instead_of_overflowing() {
    let script = Script::new(vec![(
        503,
        vec![("Retry-After", "18446744073709551615".to_string())],
        "",
    )]);
    let config = CacheConfig {
        retry_after_max: Duration::MAX,
        max_ttl: Duration::MAX,
        ..Default::default()
    };
    let cache = RobotsCache::builder("FooBot").cache_config(config).build();
    let entry = cache.get(&script.client(), &origin()).await;
    assert!(entry.refresh_at() > Instant::now() + 365 * DAY);
}

#[tokio::test]
async fn caches_sharing_an_in_process_store_fetch_once_per_crawler() {
    use std::sync::Arc;
    let script = Script::new(vec![(200, vec![], RULES)]);
    let client = script.client();
    let store = Arc::new(robots_fetch::InProcessStore::new(16 * 1024 * 1024));
    let a = RobotsCache::builder("FooBot").store(store.clone()).build();
    let b = RobotsCache::builder("FooBot").store(store.clone()).build();
    let origin = origin();
    let (ea, eb) = tokio::join!(a.get(&client, &origin), b.get(&client, &origin));
    assert!(blocked(&ea) && blocked(&eb));
    assert_eq!(script.requests(), 1, "one fetch for both caches");
    assert!(matches!(eb.source(), Source::Parsed { status: 200, .. }));
    // Another crawler never shares by accident: its identity is part of the key.
    let other = RobotsCache::builder("BarBot").store(store).build();
    other.get(&client, &origin).await;
    assert_eq!(script.requests(), 2);
}

#[tokio::test(start_paused = true)]
async fn a_url_is_also_checked_as_configured_policy_tokens() {
    let script = Script::new(vec![(
        200,
        vec![],
        "User-agent: *\nDisallow: /private\n\nUser-agent: Google-Extended\nDisallow: /articles/\n",
    )]);
    let cache = RobotsCache::builder("FooBot")
        .policy_tokens(["Google-Extended"])
        .build();
    let entry = cache.get(&script.client(), &origin()).await;
    let now = Instant::now();
    assert!(entry.verdict_at(b"/articles/a", now).allowed);
    let as_token = entry
        .verdict_for_token("google-extended", b"/articles/a", now)
        .unwrap();
    assert!(!as_token.allowed);
    assert_eq!(as_token.rule.map(|r| r.line), Some(5));
    assert_eq!(
        entry.verdict_for_token("Applebot-Extended", b"/articles/a", now),
        None
    );
    // Without a file (404: allow all), a configured token gets the same answer; others none.
    let missing = Script::new(vec![(404, vec![], "")]);
    let cache = RobotsCache::builder("FooBot")
        .policy_tokens(["Google-Extended"])
        .build();
    let entry = cache.get(&missing.client(), &origin()).await;
    assert!(
        entry
            .verdict_for_token("Google-Extended", b"/x", now)
            .unwrap()
            .allowed
    );
    assert_eq!(
        entry.verdict_for_token("Applebot-Extended", b"/x", now),
        None
    );
}

#[tokio::test(start_paused = true)]
async fn usage_preferences_come_with_the_fetched_rules() {
    use robots_core::Preference;
    let script = Script::new(vec![(
        200,
        vec![],
        "User-agent: *\nDisallow: /private\nContent-Usage: train-ai=n\nContent-Usage: /open/ train-ai=y\n\nUser-agent: Applebot-Extended\nContent-Signal: ai-train=no\n",
    )]);
    let cache = RobotsCache::builder("FooBot")
        .policy_tokens(["Applebot-Extended"])
        .build();
    let entry = cache.get(&script.client(), &origin()).await;
    let now = Instant::now();
    let usage = entry.usage_at(b"/open/data", now);
    assert!(usage.verdict.allowed);
    assert_eq!(usage.preferences.may_train_ai(), Preference::Yes);
    assert_eq!(usage.preferences.train_ai.line, Some(4));
    assert_eq!(
        entry.preferences_at(b"/x", now).may_train_ai(),
        Preference::No
    );
    // Disallowed: no preference applies.
    let private = entry.usage_at(b"/private/x", now);
    assert!(!private.verdict.allowed && !private.preferences.is_stated());
    // As a policy token, from the same parse.
    let extended = entry.usage_as("Applebot-Extended", b"/x", now).unwrap();
    assert_eq!(extended.preferences.may_train_ai(), Preference::No);
    assert!(entry.usage_as("Google-Extended", b"/x", now).is_none());

    // Unreachable with no good copy: disallowed, nothing stated.
    let down = Script::new(vec![(503, vec![], "")]);
    let cache = RobotsCache::builder("FooBot").build();
    let entry = cache.get(&down.client(), &origin()).await;
    let usage = entry.usage_at(b"/open/data", Instant::now());
    assert!(!usage.verdict.allowed && !usage.preferences.is_stated());
}

/// At scale the cache keeps what the crawl is working on (issue 33): with a cache of 10,000
/// origins, in steady state (after several capacities' worth of new origins), an origin
/// revisited after W new origins is still cached, for W a quarter and half of the capacity; and
/// the cache's weight stays flat within its budget.
#[tokio::test]
async fn an_origin_revisited_within_half_the_capacity_is_still_cached() {
    const CAPACITY: u64 = 10_000;
    const ORIGINS: usize = 50_000;
    for revisit_after in [CAPACITY as usize / 4, CAPACITY as usize / 2] {
        let cache = RobotsCache::builder("FooBot")
            .cache_config(CacheConfig {
                capacity: CAPACITY,
                ..CacheConfig::default()
            })
            .build();
        let body = b"User-agent: *\nDisallow: /private\n";
        let origin = |i: usize| Origin::parse(&format!("http://h{i}.test")).unwrap();
        // A visit: from the cache, or fetched (here: inserted) when it is not there.
        let visit = |i: usize| {
            let origin = origin(i);
            let cached = cache.cached(&origin).is_some();
            if !cached {
                cache.insert(&origin, body);
            }
            cached
        };
        let (mut revisits, mut refetched) = (0, 0);
        let mut weights = Vec::new();
        for i in 0..ORIGINS {
            visit(i);
            if i >= revisit_after {
                let cached = visit(i - revisit_after);
                if i > 3 * CAPACITY as usize {
                    revisits += 1;
                    refetched += usize::from(!cached);
                }
            }
            if i % 10_000 == 9_999 {
                weights.push(cache.weight());
                assert!(cache.len() as u64 <= CAPACITY, "{} entries", cache.len());
            }
        }
        assert!(revisits > 10_000);
        assert_eq!(
            refetched, 0,
            "W = {revisit_after}: {refetched} of {revisits} revisits were refetched"
        );
        // The plateau: full from the second sample on, and never above the budget.
        let budget = CacheConfig::default().max_bytes;
        assert!(weights.iter().all(|w| *w <= budget), "{weights:?}");
        let (low, high) = (weights[1..].iter().min(), weights[1..].iter().max());
        assert!(
            high.zip(low).is_some_and(|(h, l)| h - l <= h / 20),
            "not flat: {weights:?}"
        );
    }
}

/// A fetch of an origin whose fresh copy the cache dropped for room is counted as a refetch;
/// a first fetch, and a refresh of an expired copy, are not.
#[tokio::test(start_paused = true)]
async fn fetching_again_a_copy_dropped_for_room_counts_as_a_refetch() {
    let script = Script::new(vec![(200, vec![], "User-agent: *\nDisallow: /p\n")]);
    let cache = RobotsCache::builder("FooBot")
        // A 4 MiB budget is one shard: the cache is sharded by the machine's cores, and with
        // many shards how many of the others land in `a`'s shard (and push it out) varies.
        .cache_config(CacheConfig {
            capacity: 1_000,
            max_bytes: 4 * 1024 * 1024,
            ..CacheConfig::default()
        })
        .build();
    let a = Origin::parse("http://a.test").unwrap();
    cache.fetch(&script.client(), &a).await;
    assert_eq!(cache.stats().refetches, 0, "a first fetch");
    // Other origins, each visited twice, push it out while it is fresh (few enough that it
    // is among the evictions the cache remembers: the last capacity's worth).
    for i in 0..1_200 {
        let other = Origin::parse(&format!("http://o{i}.test")).unwrap();
        cache.insert(&other, b"");
        assert!(cache.cached(&other).is_some());
    }
    assert!(cache.cached(&a).is_none(), "still cached");
    cache.fetch(&script.client(), &a).await;
    assert_eq!(cache.stats().refetches, 1);
    assert_eq!(script.requests(), 2);
    // A copy that expired is refreshed, not refetched.
    let b = Origin::parse("http://b.test").unwrap();
    cache.fetch(&script.client(), &b).await;
    advance(Duration::from_secs(25 * 3600)).await;
    cache.fetch(&script.client(), &b).await;
    assert_eq!(cache.stats().refetches, 1);
}

/// A User-Agent in the compatible form gives the crawler's token, not `Mozilla`.
#[test]
fn a_compatible_user_agent_names_the_crawler() {
    let cache =
        RobotsCache::builder("Mozilla/5.0 (compatible; FooBot/1.0; +https://f.example)").build();
    assert_eq!(cache.tokens(), ["FooBot"]);
}
