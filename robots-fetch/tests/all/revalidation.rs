//! Conditional refresh (spec section 7): a kept copy's `ETag` and `Last-Modified` go back as
//! `If-None-Match` and `If-Modified-Since`, and a `304 Not Modified` keeps the rules and starts
//! the copy's life again. On the wire (wiremock, reqwest), in a cache on tokio's paused clock
//! (an in-memory site), and across a fleet on a real `redis-server`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::support::{self, Answer};
use robots_fetch::{
    FetchConfig, FetchOutcome, Origin, RobotsCache, Source, UnreachableCause, Validators, fetch,
    revalidate,
};
use tokio::time::{Instant, advance};
use wiremock::matchers::path;
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

const MODIFIED: &str = "Tue, 24 Nov 2026 10:00:00 GMT";

/// A site whose robots.txt has a version (its ETag): it answers 304 to a request whose
/// `If-None-Match` names the current version (or, without one, whose `If-Modified-Since` is the
/// file's date), and 200 otherwise; or 503 while down. It logs each request's conditional
/// headers.
#[derive(Clone, Default)]
struct Versioned {
    state: Arc<Mutex<State>>,
}

#[derive(Default)]
struct State {
    body: &'static str,
    etag: Option<&'static str>,
    modified: Option<&'static str>,
    /// `Cache-Control` on a 200, and on a 304.
    cache_200: Option<&'static str>,
    cache_304: Option<&'static str>,
    /// Answers 304 to every request, conditional or not (a broken server).
    always_304: bool,
    down: bool,
    /// (If-None-Match, If-Modified-Since) of each request.
    asked: Vec<(Option<String>, Option<String>)>,
}

impl Versioned {
    fn new(body: &'static str, etag: Option<&'static str>, cache_200: &'static str) -> Versioned {
        let site = Versioned::default();
        {
            let mut state = site.state.lock().unwrap();
            state.body = body;
            state.etag = etag;
            state.modified = Some(MODIFIED);
            state.cache_200 = Some(cache_200);
        }
        site
    }

    fn set(&self, change: impl FnOnce(&mut State)) {
        change(&mut self.state.lock().unwrap());
    }

    fn asked(&self) -> Vec<(Option<String>, Option<String>)> {
        self.state.lock().unwrap().asked.clone()
    }

    /// Status, headers and body for a request with these headers.
    fn answer(&self, headers: &http::HeaderMap) -> Answer {
        let text = |name| {
            headers
                .get(name)
                .map(|v: &http::HeaderValue| v.to_str().unwrap().to_string())
        };
        let (if_none_match, if_modified_since) = (
            text(http::header::IF_NONE_MATCH),
            text(http::header::IF_MODIFIED_SINCE),
        );
        let mut state = self.state.lock().unwrap();
        state
            .asked
            .push((if_none_match.clone(), if_modified_since.clone()));
        if state.down {
            return (503, vec![], "");
        }
        let unchanged = match (&if_none_match, state.etag) {
            (Some(asked), Some(etag)) => asked == etag,
            (Some(_), None) => false,
            (None, _) => {
                if_modified_since.is_some() && if_modified_since.as_deref() == state.modified
            }
        };
        let mut headers = vec![];
        if let Some(etag) = state.etag {
            headers.push(("etag", etag.to_string()));
        }
        if unchanged || state.always_304 {
            if let Some(cache) = state.cache_304 {
                headers.push(("cache-control", cache.to_string()));
            }
            return (304, headers, "");
        }
        if let Some(modified) = state.modified {
            headers.push(("last-modified", modified.to_string()));
        }
        if let Some(cache) = state.cache_200 {
            headers.push(("cache-control", cache.to_string()));
        }
        (200, headers, state.body)
    }

    fn client(&self) -> impl robots_fetch::FetchClient + Clone + use<> {
        let site = self.clone();
        support::client(move |headers| site.answer(headers))
    }
}

impl Respond for Versioned {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let (status, headers, body) = self.answer(&request.headers);
        let mut template = ResponseTemplate::new(status).set_body_string(body);
        for (name, value) in headers {
            template = template.insert_header(name, value.as_str());
        }
        template
    }
}

const V1: &str = "User-agent: *\nDisallow: /private\n";
const V2: &str = "User-agent: *\nDisallow: /other\n";

fn origin() -> Origin {
    Origin::parse("https://example.com").unwrap()
}

fn allowed(entry: &robots_fetch::CachedRobots, path: &str) -> bool {
    entry.verdict_at(path.as_bytes(), Instant::now()).allowed
}

#[tokio::test]
async fn on_the_wire_the_validators_go_back_as_given_and_a_304_says_not_modified() {
    let server = MockServer::start().await;
    let site = Versioned::new(V1, Some("W/\"v1\""), "max-age=3600");
    site.set(|s| s.cache_304 = Some("max-age=60"));
    Mock::given(path("/robots.txt"))
        .respond_with(site.clone())
        .mount(&server)
        .await;
    let origin = Origin::parse(&server.uri()).unwrap();
    let config = FetchConfig::new(http::HeaderValue::from_static("FooBot/1.0"));
    let client = robots_fetch::reqwest_client(&config).unwrap();

    let FetchOutcome::Parsed { validators, .. } = fetch(&client, &origin, &config).await else {
        panic!("not parsed")
    };
    assert_eq!(validators.etag.as_ref().unwrap(), "W/\"v1\"");
    assert_eq!(validators.last_modified.as_ref().unwrap(), MODIFIED);

    let outcome = revalidate(&client, &origin, &config, &validators).await;
    assert_eq!(
        outcome,
        FetchOutcome::NotModified {
            max_age: Some(Duration::from_secs(60)),
            validators: Validators {
                etag: Some(http::HeaderValue::from_static("W/\"v1\"")),
                last_modified: None,
                max_age: Some(Duration::from_secs(60)),
            },
        }
    );
    // The first fetch asked nothing; the refresh asked with the weak ETag exactly as given.
    assert_eq!(
        site.asked(),
        [
            (None, None),
            (Some("W/\"v1\"".to_string()), Some(MODIFIED.to_string()))
        ]
    );

    // The file changed: a 200 with the new file and its validators.
    site.set(|s| {
        s.body = V2;
        s.etag = Some("\"v2\"");
    });
    match revalidate(&client, &origin, &config, &validators).await {
        FetchOutcome::Parsed {
            body, validators, ..
        } => {
            assert_eq!(&body[..], V2.as_bytes());
            assert_eq!(validators.etag.unwrap(), "\"v2\"");
        }
        other => panic!("{other:?}"),
    }

    // A 304 to a request that asked nothing is a malformed answer: unreachable.
    site.set(|s| s.always_304 = true);
    for outcome in [
        fetch(&client, &origin, &config).await,
        revalidate(&client, &origin, &config, &Validators::default()).await,
    ] {
        assert_eq!(
            outcome,
            FetchOutcome::Unreachable(UnreachableCause::Status {
                status: 304,
                retry_after: None
            })
        );
    }
    assert_eq!(site.asked().last().unwrap(), &(None, None));
}

#[tokio::test(start_paused = true)]
async fn a_304_keeps_the_rules_and_starts_the_copys_life_again() {
    let site = Versioned::new(V1, Some("\"v1\""), "max-age=3600");
    site.set(|s| s.cache_304 = Some("max-age=7200"));
    let cache = RobotsCache::builder("FooBot").build();
    let client = site.client();

    let entry = cache.get(&client, &origin()).await;
    assert!(!allowed(&entry, "/private"));
    assert_eq!(entry.validators().etag.as_ref().unwrap(), "\"v1\"");

    advance(Duration::from_secs(3601)).await;
    let entry = cache.get(&client, &origin()).await;
    // Asked with both validators; the rules kept, the disallowed URL still refused.
    assert_eq!(
        site.asked()[1],
        (Some("\"v1\"".to_string()), Some(MODIFIED.to_string()))
    );
    assert!(!allowed(&entry, "/private"));
    assert!(allowed(&entry, "/other"));
    let Source::Parsed {
        status,
        fetched_at,
        expires_at,
        not_modified,
        ..
    } = entry.source().clone()
    else {
        panic!("{:?}", entry.source())
    };
    assert!(not_modified);
    assert_eq!(status, 200, "the copy's own status");
    // Its life starts again from the 304's own max-age, and the copy was confirmed now.
    assert_eq!(expires_at - fetched_at, Duration::from_secs(7200));
    assert_eq!(fetched_at, Instant::now());
    assert!(
        entry
            .source()
            .describe()
            .to_string()
            .contains("304 Not Modified")
    );
    let stats = cache.stats();
    assert_eq!(
        (
            stats.fetches,
            stats.revalidations,
            stats.not_modified,
            stats.errors,
            stats.parses
        ),
        (2, 1, 1, 0, 1),
        "a successful fetch, not parsed again"
    );

    // Fresh for the 304's two hours, then asked again; by then the file changed: replaced.
    advance(Duration::from_secs(7199)).await;
    cache.get(&client, &origin()).await;
    assert_eq!(site.asked().len(), 2);
    site.set(|s| {
        s.body = V2;
        s.etag = Some("\"v2\"");
    });
    advance(Duration::from_secs(2)).await;
    let entry = cache.get(&client, &origin()).await;
    assert!(allowed(&entry, "/private"));
    assert!(!allowed(&entry, "/other"));
    assert!(matches!(
        entry.source(),
        Source::Parsed {
            not_modified: false,
            ..
        }
    ));
    assert_eq!(entry.validators().etag.as_ref().unwrap(), "\"v2\"");
    assert_eq!(cache.stats().parses, 2);
}

/// RFC 9111 section 4.3.4 (issue 45): a 304 updates only the caching headers it carries. A
/// bare 304 keeps the `max-age` the copy was stored with (never the 24 h default, which let a
/// hostile site pin its rules for a day); one with its own `max-age` replaces it; the bounds hold.
#[tokio::test(start_paused = true)]
async fn a_304_keeps_the_stored_max_age_unless_it_gives_its_own() {
    for (cache_200, cache_304, expected) in [
        (Some("max-age=60"), None, Duration::from_secs(60)),
        (Some("max-age=600"), None, Duration::from_secs(600)),
        // A stored `max-age` below the floor is raised to it, after a bare 304 too.
        (Some("max-age=1"), None, Duration::from_secs(60)),
        // A copy stored without `max-age` lives the default after a bare 304 as before it.
        (None, None, Duration::from_secs(24 * 3600)),
        (
            Some("max-age=60"),
            Some("max-age=1"),
            Duration::from_secs(60),
        ),
        (
            Some("max-age=60"),
            Some("max-age=300"),
            Duration::from_secs(300),
        ),
        (
            Some("max-age=60"),
            Some("max-age=999999999"),
            Duration::from_secs(24 * 3600),
        ),
    ] {
        let site = Versioned::new(V1, Some("\"v1\""), "max-age=60");
        site.set(|s| {
            s.cache_200 = cache_200;
            s.cache_304 = cache_304;
        });
        let cache = RobotsCache::builder("FooBot").build();
        let client = site.client();
        let first = cache.get(&client, &origin()).await;
        advance(first.refresh_at() - Instant::now() + Duration::from_secs(1)).await;
        let entry = cache.get(&client, &origin()).await;
        assert!(matches!(
            entry.source(),
            Source::Parsed {
                not_modified: true,
                ..
            }
        ));
        assert_eq!(
            entry.refresh_at() - Instant::now(),
            expected,
            "{cache_200:?}, then {cache_304:?}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn a_copy_without_validators_is_refreshed_with_a_plain_fetch() {
    let site = Versioned::new(V1, None, "max-age=60");
    site.set(|s| s.modified = None);
    let cache = RobotsCache::builder("FooBot").build();
    let client = site.client();
    let entry = cache.get(&client, &origin()).await;
    assert!(entry.validators().is_empty());
    advance(Duration::from_secs(61)).await;
    cache.get(&client, &origin()).await;
    assert_eq!(site.asked(), [(None, None), (None, None)]);
    assert_eq!(cache.stats().revalidations, 0);
}

#[tokio::test(start_paused = true)]
async fn an_unsolicited_304_is_unreachable_not_allow_all() {
    let site = Versioned::new(V1, None, "max-age=60");
    site.set(|s| s.always_304 = true);
    let cache = RobotsCache::builder("FooBot").build();
    let entry = cache.get(&site.client(), &origin()).await;
    assert!(!allowed(&entry, "/anything"), "disallow all, temporarily");
    assert!(matches!(entry.source(), Source::Unreachable { .. }));
    assert_eq!(cache.stats().errors, 1);
}

#[tokio::test(start_paused = true)]
async fn after_an_outage_a_304_confirms_the_copy_kept_meanwhile() {
    let site = Versioned::new(V1, Some("\"v1\""), "max-age=60");
    let cache = RobotsCache::builder("FooBot").build();
    let client = site.client();
    cache.get(&client, &origin()).await;
    site.set(|s| s.down = true);
    advance(Duration::from_secs(61)).await;
    let entry = cache.get(&client, &origin()).await;
    assert!(matches!(entry.source(), Source::Stale { .. }));
    assert_eq!(entry.validators().etag.as_ref().unwrap(), "\"v1\"");
    site.set(|s| s.down = false);
    advance(Duration::from_secs(3600)).await;
    let entry = cache.get(&client, &origin()).await;
    assert_eq!(site.asked().last().unwrap().0.as_deref(), Some("\"v1\""));
    assert!(matches!(
        entry.source(),
        Source::Parsed {
            not_modified: true,
            ..
        }
    ));
    assert!(!allowed(&entry, "/private"));
    assert!(!entry.is_blocked_by_outage(Instant::now()));
}

/// The fleet: the process that refreshes asks with the stored validators, and the 304 renews the
/// shared record for every process (no other fetch, the rules intact).
#[cfg(feature = "redis")]
#[tokio::test(flavor = "multi_thread")]
async fn in_a_fleet_a_304_renews_the_shared_copy_for_everyone() {
    use crate::redis_server::RedisServer;
    use robots_fetch::{CacheConfig, RedisFleet};

    let Some(redis) = RedisServer::start() else {
        return;
    };
    let server = MockServer::start().await;
    // Fresh for 300 ms (max-age=0, within a floor of 300 ms), then fresh for an hour after the
    // 304.
    let site = Versioned::new(V1, Some("\"v1\""), "max-age=0");
    site.set(|s| s.cache_304 = Some("max-age=3600"));
    Mock::given(path("/robots.txt"))
        .respond_with(site.clone())
        .mount(&server)
        .await;
    let origin = Origin::parse(&server.uri()).unwrap();
    let member = || {
        let fleet = RedisFleet::new(&redis.url()).unwrap();
        let cache = RobotsCache::builder("FooBot")
            .cache_config(CacheConfig {
                min_ttl: Duration::from_millis(300),
                ..CacheConfig::default()
            })
            .fleet(&fleet)
            .build();
        let client = robots_fetch::reqwest_client(cache.fetch_config()).unwrap();
        (cache, client)
    };
    let (first, first_client) = member();
    let entry = first.get(&first_client, &origin).await;
    assert!(!allowed(&entry, "/private"));

    tokio::time::sleep(Duration::from_millis(400)).await;
    // Another process, which never saw the file, refreshes it: with the stored validators.
    let (second, second_client) = member();
    let entry = second.get(&second_client, &origin).await;
    assert_eq!(
        site.asked(),
        [
            (None, None),
            (Some("\"v1\"".to_string()), Some(MODIFIED.to_string()))
        ]
    );
    assert!(!allowed(&entry, "/private"), "the stored body's rules");
    assert!(matches!(
        entry.source(),
        Source::Parsed {
            not_modified: true,
            ..
        }
    ));
    assert_eq!(
        (second.stats().revalidations, second.stats().not_modified),
        (1, 1)
    );

    // A third process finds the renewed record: no fetch, the rules and validators intact.
    let (third, third_client) = member();
    let entry = third.get(&third_client, &origin).await;
    assert_eq!(site.asked().len(), 2, "renewed for the fleet");
    assert_eq!(third.stats().fetches, 0);
    assert!(!allowed(&entry, "/private"));
    assert!(allowed(&entry, "/public"));
    assert_eq!(entry.validators().etag.as_ref().unwrap(), "\"v1\"");
    assert!(entry.refresh_at() > Instant::now() + Duration::from_secs(3500));
}
