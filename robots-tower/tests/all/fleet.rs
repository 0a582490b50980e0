//! Fleet mode on a real `redis-server` (started on a free port of 127.0.0.1): several members,
//! each with its own Redis connection, cache and pacing — as separate processes would be — crawl
//! one local site. Request starts are measured at the site.
#![cfg(feature = "redis")]

use crate::redis_server;

use std::time::{Duration, Instant};

use crate::site::{Answer, Site};
use redis_server::RedisServer;
use robots_tower::{FleetFallback, RedisFleet, RobotsError, RobotsMiddleware};

/// The site: robots.txt disallows /private; /busy answers 429 with Retry-After: 2 once;
/// /slow-busy a 429 that takes 300 ms; /long/… pages take 1.5 s and /slow/… 30 ms. The shared
/// test site logs every request's arrival.
fn route(path: &str, seen_before: usize) -> Answer {
    match path {
        "/robots.txt" => Answer::ok("User-agent: *\nDisallow: /private\n"),
        "/busy" if seen_before == 0 => Answer::status("429 Too Many Requests", &["Retry-After: 2"]),
        "/slow-busy" => Answer {
            delay: Duration::from_millis(300),
            ..Answer::status("429 Too Many Requests", &["Retry-After: 2"])
        },
        p if p.starts_with("/long/") => Answer {
            delay: Duration::from_millis(1500),
            ..Answer::ok("page")
        },
        p if p.starts_with("/slow/") => Answer {
            delay: Duration::from_millis(30),
            ..Answer::ok("page")
        },
        _ => Answer::ok("page"),
    }
}

/// The site of these tests (the site, and the same as "the server" whose URLs are asked).
async fn start_site() -> (Site, Site) {
    let site = Site::start(route).await;
    (site.clone(), site)
}

/// The page requests (not robots.txt), as (path, arrival).
fn pages(site: &Site) -> Vec<(String, Instant)> {
    site.pages().into_iter().map(|s| (s.target, s.at)).collect()
}

/// When the page `path` arrived (the first time).
fn arrival(site: &Site, path: &str) -> Instant {
    pages(site)
        .into_iter()
        .find(|(p, _)| p == path)
        .unwrap_or_else(|| panic!("{path} never arrived"))
        .1
}

/// Marks the fleet's state for `group` as having begun long ago, as on a server that has run
/// for a while: a fresh test server would otherwise fence the first interval (spec 11: a
/// server's state that began less than an interval ago may have lost a request just made).
fn settled(redis: &RedisServer, group: &str) {
    let key = RedisFleet::new(&redis.url()).unwrap().epoch_key(group);
    assert_eq!(redis.command(&["SET", &key, "0"]).trim(), "+OK");
}

fn member(
    redis: &str,
    min_delay: Duration,
    configure: impl FnOnce(
        robots_tower::RobotsConfig<robots_tower::ForMiddleware>,
    ) -> robots_tower::RobotsConfig<robots_tower::ForMiddleware>,
) -> reqwest_middleware::ClientWithMiddleware {
    let fleet = RedisFleet::new(redis)
        .unwrap()
        .response_timeout(Duration::from_millis(300));
    configure(
        RobotsMiddleware::builder("FooBot/1.0")
            .fleet(&fleet)
            .min_delay(min_delay),
    )
    .build_client()
    .unwrap()
}

/// An inner service's page, answered at once.
async fn page(
    _: http::Request<http_body_util::Full<bytes::Bytes>>,
) -> Result<http::Response<http_body_util::Full<bytes::Bytes>>, robots_fetch::BoxError> {
    Ok(http::Response::new(http_body_util::Full::new(
        bytes::Bytes::from_static(b"page"),
    )))
}

/// A layer in the fleet over `page`, with robots.txt already cached for `o0.example` up to
/// `o{origins - 1}.example`.
fn fleet_layer(
    fleet: &RedisFleet,
    origins: usize,
    configure: impl FnOnce(
        robots_tower::RobotsConfig<robots_tower::ForLayer>,
    ) -> robots_tower::RobotsConfig<robots_tower::ForLayer>,
) -> robots_tower::RobotsLayer {
    let layer = configure(robots_tower::RobotsLayer::builder("FooBot").fleet(fleet)).build();
    for i in 0..origins {
        let origin = robots_fetch::Origin::parse(&format!("http://o{i}.example")).unwrap();
        layer
            .cache()
            .insert(&origin, b"User-agent: *\nDisallow: /private\n");
    }
    layer
}

/// Another member's 503s, left in the group's pace state: a streak of three, and a pause that
/// ends in 300 ms.
fn streak_left(redis: &RedisServer, pace: &str) {
    let now = wall_ms();
    let (until, paused) = ((now + 300).to_string(), now.to_string());
    redis.set_pace(
        pace,
        &[("pause", &until), ("paused", &paused), ("failures", "3")],
    );
    redis.command(&["PEXPIRE", pace, "60000"]);
}

fn gaps(mut starts: Vec<Instant>) -> Vec<Duration> {
    starts.sort();
    starts.windows(2).map(|w| w[1] - w[0]).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn members_share_one_interval_and_one_robots_fetch() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let (server, site) = start_site().await;
    let interval = Duration::from_millis(250);
    let members: Vec<_> = (0..3)
        .map(|_| member(&redis.url(), interval, |c| c))
        .collect();
    let mut tasks = Vec::new();
    for (m, client) in members.iter().enumerate() {
        for i in 0..3 {
            let client = client.clone();
            let url = server.url(&format!("/page-{m}-{i}"));
            tasks.push(tokio::spawn(async move {
                client.get(url).send().await.map(|r| r.status().as_u16())
            }));
        }
    }
    for task in tasks {
        assert_eq!(task.await.unwrap().unwrap(), 200);
    }
    assert_eq!(
        site.count("/robots.txt"),
        1,
        "one robots.txt fetch for three members"
    );
    let starts: Vec<Instant> = pages(&site).into_iter().map(|(_, t)| t).collect();
    assert_eq!(starts.len(), 9);
    for gap in gaps(starts) {
        // Measured at the site; the server's clock reserves whole milliseconds.
        assert!(gap >= interval - Duration::from_millis(5), "gap {gap:?}");
    }

    // Idle origins' keys expire: the pace state lives for at most the longest back-off plus
    // the interval.
    // Keyed by the group: the host, by default.
    let key = "robots:{127.0.0.1}:pace".to_string();
    let pttl = redis.integer(&["PTTL", &key]).unwrap();
    assert!(pttl > 0 && pttl <= 301_000, "PTTL {pttl}");
}

/// Issue 48: each member keeps its own frontier; the ready times come from the shared pacing, and
/// the front end still enforces every turn: three members' frontiers over one site never make it
/// faster than the one interval.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn members_frontiers_share_one_interval() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let (server, site) = start_site().await;
    let interval = Duration::from_millis(250);
    let mut tasks = Vec::new();
    let mut frontiers = Vec::new();
    for m in 0..3 {
        let fleet = RedisFleet::new(&redis.url())
            .unwrap()
            .response_timeout(Duration::from_millis(300));
        let robots = RobotsMiddleware::builder("FooBot/1.0")
            .fleet(&fleet)
            .min_delay(interval)
            .build()
            .unwrap();
        let client = robots.client().unwrap();
        let frontier = robots.frontier();
        for i in 0..3 {
            let url = server.url(&format!("/page-{m}-{i}")).parse().unwrap();
            frontier.push(url).await.unwrap();
        }
        frontier.close();
        // Two workers a member.
        for _ in 0..2 {
            let (client, frontier) = (client.clone(), frontier.clone());
            tasks.push(tokio::spawn(async move {
                let mut statuses = Vec::new();
                while let Some(job) = frontier.next().await {
                    let response = client.get(job.url().clone()).send().await.unwrap();
                    statuses.push(response.status().as_u16());
                    response.bytes().await.unwrap();
                }
                statuses
            }));
        }
        frontiers.push(frontier);
    }
    let mut statuses = Vec::new();
    for task in tasks {
        statuses.extend(task.await.unwrap());
    }
    assert_eq!(statuses, [200; 9]);
    let starts: Vec<Instant> = pages(&site).into_iter().map(|(_, t)| t).collect();
    assert_eq!(starts.len(), 9);
    for gap in gaps(starts) {
        assert!(gap >= interval - Duration::from_millis(5), "gap {gap:?}");
    }
    for frontier in frontiers {
        let stats = frontier.stats();
        assert_eq!(
            (stats.handed_out, stats.queued, stats.in_progress),
            (3, 0, 0)
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_429_seen_by_one_member_pauses_the_others() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let (server, site) = start_site().await;
    let a = member(&redis.url(), Duration::from_millis(10), |c| c);
    let b = member(&redis.url(), Duration::from_millis(10), |c| c);
    let response = a.get(server.url("/busy")).send().await.unwrap();
    assert_eq!(response.status(), 429);
    drop(response);
    let busy_at = pages(&site)[0].1;
    // Let the release (which carries the 429) reach Redis.
    tokio::time::sleep(Duration::from_millis(100)).await;
    b.get(server.url("/page")).send().await.unwrap();
    let page_at = pages(&site)[1].1;
    assert!(
        page_at - busy_at >= Duration::from_millis(1950),
        "the other member waited {:?}",
        page_at - busy_at
    );
}

/// Spec 11: a pause under way when Redis lost its state is set again from the memory of the
/// process that saw it, for every member.
#[tokio::test(flavor = "multi_thread")]
async fn a_pause_lost_with_redis_is_set_again_from_a_members_memory() {
    let Some(mut redis) = RedisServer::start() else {
        return;
    };
    let (server, site) = start_site().await;
    // Two places at the site: only the pause can hold the second member back.
    let a = member(&redis.url(), Duration::from_millis(10), |c| {
        c.concurrency(2)
    });
    let b = member(&redis.url(), Duration::from_millis(10), |c| {
        c.concurrency(2)
    });
    let response = a.get(server.url("/busy")).send().await.unwrap();
    assert_eq!(response.status(), 429);
    let busy_at = pages(&site)[0].1;
    tokio::time::sleep(Duration::from_millis(100)).await;
    // The server restarts without its state: the 2 s pause is gone from Redis.
    redis.stop();
    redis.restart();
    // The member that saw the 429 asks first (and waits its pause out)…
    let first = tokio::spawn({
        let url = server.url("/after");
        async move { a.get(url).send().await.unwrap().status() }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    // …and the other member, which never saw the 429, waits for it too.
    b.get(server.url("/page")).send().await.unwrap();
    assert_eq!(first.await.unwrap(), 200);
    for (path, at) in pages(&site).iter().skip(1) {
        assert!(
            *at - busy_at >= Duration::from_millis(1950),
            "{path} went {:?} after the 429",
            *at - busy_at
        );
    }
}

/// Spec 11: a server that loses the fleet's state without restarting (a `FLUSHALL`, an evicted
/// epoch key), after running for a while, is fenced as a restart is: the next request to the
/// group waits an interval from the loss.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flushall_is_fenced_like_a_restart() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let (server, site) = start_site().await;
    settled(&redis, "127.0.0.1");
    let interval = Duration::from_millis(500);
    let a = member(&redis.url(), interval, |c| c);
    let b = member(&redis.url(), interval, |c| c);
    b.get(server.url("/warm-b")).send().await.unwrap();
    // A server up for some seconds (its uptime is not what fences).
    while !redis
        .command(&["INFO", "server"])
        .contains("uptime_in_seconds:2\r\n")
    {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    a.get(server.url("/a")).send().await.unwrap();
    assert_eq!(redis.command(&["FLUSHALL"]).trim(), "+OK");
    b.get(server.url("/b")).send().await.unwrap();
    let at = |p: &str| arrival(&site, p);
    let gap = at("/b") - at("/a");
    assert!(
        gap >= interval - Duration::from_millis(5),
        "B started {gap:?} after A, its state flushed in between"
    );
}

/// Milliseconds of the wall clock (the one Redis reads).
/// The ids of the leases holding `group`'s places now: its first place (fields `lease` and
/// `lease_until` of its pace state) and the others (its sorted set of leases).
fn held(redis: &RedisServer, group: &str) -> Vec<String> {
    let fleet = RedisFleet::new(&redis.url()).unwrap();
    // The bulk strings of a reply (`None` for a nil one).
    let bulk = |reply: String| -> Vec<Option<String>> {
        let mut lines = reply.split("\r\n");
        let mut values = Vec::new();
        while let Some(line) = lines.next() {
            if line == "$-1" {
                values.push(None);
            } else if line.starts_with('$') {
                values.push(lines.next().map(str::to_string));
            }
        }
        values
    };
    let now = wall_ms();
    let mut ids = Vec::new();
    let pace = fleet.key(group, "pace");
    if let (Some(id), Some(until)) = (
        redis.pace_field(&pace, "lease"),
        redis.pace_field(&pace, "lease_until"),
    ) && until.parse::<u128>().is_ok_and(|until| until > now)
    {
        ids.push(id);
    }
    let others = redis.command(&[
        "ZRANGEBYSCORE",
        &fleet.key(group, "leases"),
        &format!("({now}"),
        "+inf",
    ]);
    ids.extend(bulk(others).into_iter().flatten());
    ids
}

fn wall_ms() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis()
}

/// Spec 11: a server that lost its state fences a full interval from when it started, even
/// when its uptime (a difference of whole seconds of the wall clock) already reads one second:
/// restarted just before a second turns, asked just after, about 0.2 s after its start.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_just_before_a_second_turns_is_fenced_from_its_start() {
    let Some(mut redis) = RedisServer::start() else {
        return;
    };
    let (server, site) = start_site().await;
    let interval = Duration::from_secs(1);
    let client = member(&redis.url(), interval, |c| c);
    // robots.txt is had before the restart: only the page is paced afterwards.
    client.get(server.url("/before")).send().await.unwrap();
    let (restarted, restarted_ms) = loop {
        redis.stop();
        // Restart at 0.8 s into a second of the wall clock, ask at 0.05 s into the next.
        let into = wall_ms() % 1000;
        tokio::time::sleep(Duration::from_millis(((1800 - into) % 1000) as u64)).await;
        let (at, at_ms) = (Instant::now(), wall_ms());
        redis.restart();
        tokio::time::sleep(Duration::from_millis(
            (1050 - wall_ms() % 1000) as u64 % 1000,
        ))
        .await;
        // Only a server whose uptime already reads a second tests the rounding (a machine
        // too slow to restart it within 0.2 s tries again).
        if redis
            .command(&["INFO", "server"])
            .contains("uptime_in_seconds:1\r\n")
        {
            break (at, at_ms);
        }
    };
    client.get(server.url("/after")).send().await.unwrap();
    let key = RedisFleet::new(&redis.url())
        .unwrap()
        .epoch_key("127.0.0.1");
    let epoch = redis.command(&["GET", &key]);
    let since: u128 = epoch
        .lines()
        .nth(1)
        .and_then(|value| value.split(':').next())
        .and_then(|since| since.parse().ok())
        .unwrap_or_else(|| panic!("no epoch: {epoch}"));
    assert!(
        since >= restarted_ms,
        "the state is said to have begun {} ms before the server started",
        restarted_ms - since
    );
    let (path, at) = pages(&site).pop().unwrap();
    assert_eq!(path, "/after");
    assert!(
        at - restarted >= interval - Duration::from_millis(5),
        "the first request went {:?} after the restart",
        at - restarted
    );
}
/// A member that died mid-request holds its place until its lease ends, whichever place it held:
/// the group's first (in its pace state) or another (its sorted set of leases, which the state's
/// `others` says may hold one).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_lease_of_a_dead_member_expires() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let (server, site) = start_site().await;
    let client = member(&redis.url(), Duration::from_millis(10), |c| c);
    for (n, first_place) in [(0, true), (1, false)] {
        // A member took the origin's only place and died mid-request: its lease ends in 800 ms.
        let expiry = (wall_ms() + 800).to_string();
        if first_place {
            let pace = "robots:{127.0.0.1}:pace";
            redis.set_pace(pace, &[("lease", "dead-member"), ("lease_until", &expiry)]);
            redis.command(&["PEXPIRE", pace, "60000"]);
        } else {
            // (As the acquire script takes another place: the lease in the set, and the pace
            // state's `others` saying until when the set may hold one.)
            let leases = "robots:{127.0.0.1}:leases";
            redis.command(&["ZADD", leases, &expiry, "dead-member"]);
            redis.set_pace("robots:{127.0.0.1}:pace", &[("others", &expiry)]);
        }
        let started = Instant::now();
        client.get(server.url("/page")).send().await.unwrap();
        let waited = pages(&site)[n].1 - started;
        assert!(
            waited >= Duration::from_millis(700) && waited < Duration::from_secs(5),
            "waited {waited:?} for the dead member's lease (first place: {first_place})"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_redis_the_fleet_stays_polite_and_recovers() {
    let Some(mut redis) = RedisServer::start() else {
        return;
    };
    let (server, site) = start_site().await;
    let interval = Duration::from_millis(150);
    let counted = RedisFleet::new(&redis.url())
        .unwrap()
        .response_timeout(Duration::from_millis(300));
    // The fleet settings hold whatever the order of the builder's calls.
    let fallback = RobotsMiddleware::builder("FooBot/1.0")
        .fleet_size(3)
        .fleet(&counted)
        .min_delay(interval)
        .build_client()
        .unwrap();
    let closed = member(&redis.url(), interval, |c| {
        c.fleet_fallback(FleetFallback::FailClosed)
    });
    // Learn robots.txt while Redis is up.
    fallback.get(server.url("/warm")).send().await.unwrap();

    redis.stop();
    // Disallowed stays disallowed.
    let error = fallback
        .get(server.url("/private/x"))
        .send()
        .await
        .unwrap_err();
    assert!(error.to_string().contains("disallowed"), "{error}");
    // Local pacing, with the interval multiplied by the fleet size.
    for i in 0..3 {
        fallback
            .get(server.url(&format!("/down-{i}")))
            .send()
            .await
            .unwrap();
    }
    let down: Vec<Instant> = pages(&site)
        .into_iter()
        .filter(|(p, _)| p.starts_with("/down-"))
        .map(|(_, t)| t)
        .collect();
    for gap in gaps(down) {
        assert!(
            gap >= interval * 3 - Duration::from_millis(5),
            "gap {gap:?}"
        );
    }
    // Fail closed: a typed refusal, nothing sent.
    let error = closed.get(server.url("/closed")).send().await.unwrap_err();
    match error {
        reqwest_middleware::Error::Middleware(e) => assert!(
            matches!(
                e.downcast_ref::<RobotsError>(),
                Some(RobotsError::FleetUnavailable { .. })
            ),
            "{e}"
        ),
        other => panic!("{other}"),
    }
    assert!(!pages(&site).iter().any(|(p, _)| p == "/closed"));

    assert_eq!(counted.outages(), 1, "one outage, counted once");
    assert!(counted.is_down());

    // Back: the fleet paces through Redis again.
    redis.restart();
    let deadline = Instant::now() + Duration::from_secs(10);
    // Keyed by the group: the host, by default.
    let key = "robots:{127.0.0.1}:pace".to_string();
    loop {
        let sent = closed.get(server.url("/back")).send().await;
        if sent.is_ok() && redis.command(&["EXISTS", &key]).trim() == ":1" {
            break;
        }
        assert!(Instant::now() < deadline, "no recovery: {sent:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // The connection reconnects on its own: within a few requests this member is back too.
    let deadline = Instant::now() + Duration::from_secs(10);
    while counted.is_down() {
        assert!(
            Instant::now() < deadline,
            "the end of the outage is never seen"
        );
        fallback.get(server.url("/after")).send().await.unwrap();
    }
    assert_eq!(counted.outages(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schedule_mode_tells_every_member_when_the_fleet_is_ready() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let (server, site) = start_site().await;
    settled(&redis, "127.0.0.1");
    let schedule = |c: robots_tower::RobotsConfig<robots_tower::ForMiddleware>| {
        c.when_not_ready(robots_tower::WhenNotReady::Fail)
    };
    let a = member(&redis.url(), Duration::from_secs(2), schedule);
    let b = member(&redis.url(), Duration::from_secs(2), schedule);
    // robots.txt's own request is in the group's budget: the first page is told when to come.
    let first = a.get(server.url("/one")).send().await.unwrap_err();
    match RobotsError::from_middleware_error(&first) {
        Some(RobotsError::NotReady {
            ready_in: Some(ready_in),
            ..
        // (Redis counts in whole milliseconds: a margin, as below.)
        }) => tokio::time::sleep(*ready_in + Duration::from_millis(20)).await,
        other => panic!("{other:?} ({first})"),
    }
    a.get(server.url("/one")).send().await.unwrap();
    // (The request's end reaches the fleet within a millisecond of its body's: on the member's
    // next call to Redis, or on one of its own.)
    tokio::time::sleep(Duration::from_millis(20)).await;
    let error = b.get(server.url("/two")).send().await.unwrap_err();
    let ready_in = match RobotsError::from_middleware_error(&error) {
        Some(RobotsError::NotReady {
            ready_in: Some(ready_in),
            reason: robots_tower::NotReadyReason::Spacing,
            ..
        }) => *ready_in,
        other => panic!("{other:?} ({error})"),
    };
    assert!(
        ready_in > Duration::from_millis(1500) && ready_in <= Duration::from_secs(2),
        "{ready_in:?}"
    );
    // The refusal reserved nothing: at the time it named, the other member goes.
    tokio::time::sleep(ready_in + Duration::from_millis(20)).await;
    b.get(server.url("/two")).send().await.unwrap();
    let pages = pages(&site);
    assert_eq!(pages.len(), 2, "{pages:?}");
    let gap = pages[1].1 - pages[0].1;
    assert!(
        gap >= Duration::from_millis(1950) && gap < Duration::from_millis(2600),
        "{gap:?}"
    );

    // A 429 seen by one member: the others are told the fleet is paused.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let busy = a.get(server.url("/busy")).send().await.unwrap();
    assert_eq!(busy.status(), 429);
    // Its body held the request's lease: dropped, the lease is released in the background.
    drop(busy);
    tokio::time::sleep(Duration::from_millis(100)).await;
    let error = b.get(server.url("/three")).send().await.unwrap_err();
    assert!(
        matches!(
            RobotsError::from_middleware_error(&error),
            Some(RobotsError::NotReady {
                reason: robots_tower::NotReadyReason::Paused,
                ready_in: Some(_),
                ..
            })
        ),
        "{error}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hooks_of_different_members_see_one_fleet_turn() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let (server, site) = start_site().await;
    let hooks = || {
        let fleet = RedisFleet::new(&redis.url()).unwrap();
        robots_tower::RobotsHooks::builder("FooBot/1.0")
            .fleet(&fleet)
            .min_delay(Duration::from_secs(3))
            .build()
            .unwrap()
    };
    settled(&redis, "127.0.0.1");
    let (a, b) = (hooks(), hooks());
    let origin = robots_fetch::Origin::parse(&server.base).unwrap();
    let url: url::Url = server.url("/page").parse().unwrap();
    assert_eq!(b.next_ready(&origin).await.unwrap(), Some(Duration::ZERO));
    let ticket = a.admit(&url).await.unwrap();
    // Member b asks the fleet (peek): the place is taken…
    assert_eq!(b.next_ready(&origin).await.unwrap(), None);
    ticket.finish(200, &reqwest::header::HeaderMap::new()).await;
    // …then the interval runs from the end, for everyone; peeking reserved nothing.
    let ready = b.next_ready(&origin).await.unwrap().unwrap();
    assert!(
        ready > Duration::from_millis(2500) && ready <= Duration::from_secs(3),
        "{ready:?}"
    );
    let again = b.next_ready(&origin).await.unwrap().unwrap();
    assert!(
        again <= ready && again > Duration::from_secs(2),
        "{again:?}"
    );
    assert_eq!(
        site.count("/robots.txt"),
        1,
        "one robots.txt fetch for the fleet"
    );
}

/// A response a hook saw without a ticket (`RobotsHooks::observe`) pauses the whole fleet, as
/// one seen through the middleware does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_response_observed_by_a_hook_pauses_every_member() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let (server, site) = start_site().await;
    let fleet = RedisFleet::new(&redis.url()).unwrap();
    let hooks = RobotsMiddleware::builder("FooBot/1.0")
        .fleet(&fleet)
        .min_delay(Duration::from_millis(10))
        .build()
        .unwrap()
        .hooks();
    let origin = robots_fetch::Origin::parse(&server.base).unwrap();
    let mut headers = http::HeaderMap::new();
    headers.insert("retry-after", http::HeaderValue::from_static("2"));
    let observed_at = Instant::now();
    hooks.observe(&origin, 503, &headers);
    // The fleet learns it in the background.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let other = member(&redis.url(), Duration::from_millis(10), |c| c);
    other.get(server.url("/page")).send().await.unwrap();
    let page_at = pages(&site)[0].1;
    assert!(
        page_at - observed_at >= Duration::from_millis(1950),
        "the other member waited {:?}",
        page_at - observed_at
    );
}

/// A reservation granted before another member's 429 set a pause does not fire inside the
/// pause: when its start comes, it checks again (issue 25, point 4).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reservation_waiting_for_its_start_honours_a_pause_set_meanwhile() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let (server, site) = start_site().await;
    let two_at_a_time = |c: robots_tower::RobotsConfig<robots_tower::ForMiddleware>| {
        c.concurrency(2).delay_factor(0.0)
    };
    let a = member(&redis.url(), Duration::from_secs(1), two_at_a_time);
    let b = member(&redis.url(), Duration::from_secs(1), two_at_a_time);
    // Both know robots.txt first, so that what follows is only pacing.
    a.get(server.url("/warm-a")).send().await.unwrap();
    b.get(server.url("/warm-b")).send().await.unwrap();
    tokio::time::sleep(Duration::from_secs(1)).await;
    let busy = tokio::spawn({
        let url = server.url("/slow-busy");
        async move { a.get(url).send().await.map(|r| r.status().as_u16()) }
    });
    // B's turn is reserved (a second after A's start) before A's 429 arrives.
    tokio::time::sleep(Duration::from_millis(50)).await;
    b.get(server.url("/page")).send().await.unwrap();
    assert_eq!(busy.await.unwrap().unwrap(), 429);
    let at = |p: &str| arrival(&site, p);
    let gap = at("/page") - at("/slow-busy");
    assert!(
        gap >= Duration::from_millis(2200),
        "B started {gap:?} after A's request, inside the pause its 429 set"
    );
}

/// A reservation given back at its start because the server's state changed (spec 11) is asked
/// again under a new lease: giving back the old one must not free the new one, or another
/// member would be let in while the request is in flight (one place at the site).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reservation_asked_again_keeps_its_new_place() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let (server, site) = start_site().await;
    settled(&redis, "127.0.0.1");
    let one_at_a_time = |c: robots_tower::RobotsConfig<robots_tower::ForMiddleware>| {
        c.concurrency(1).delay_factor(0.0)
    };
    let a = member(&redis.url(), Duration::from_secs(1), one_at_a_time);
    let b = member(&redis.url(), Duration::from_secs(1), one_at_a_time);
    a.get(server.url("/a")).send().await.unwrap();
    b.get(server.url("/warm-b")).send().await.unwrap();
    // A's long page is reserved a second after /warm-b…
    let long = tokio::spawn({
        let url = server.url("/long/page");
        async move { a.get(url).send().await.map(|r| r.status().as_u16()) }
    });
    tokio::time::sleep(Duration::from_millis(500)).await;
    let fleet = RedisFleet::new(&redis.url()).unwrap();
    let first = held(&redis, "127.0.0.1");
    // …and before its start the state it was granted under is no longer the server's (as after
    // a failover): at its start it is asked again, fenced a second further.
    let key = fleet.epoch_key("127.0.0.1");
    assert_eq!(redis.command(&["SET", &key, "1:another"]).trim(), "+OK");
    tokio::time::sleep(Duration::from_millis(1000)).await;
    // The old lease's release (in the background, racing the new ask) names the old lease only.
    let second = held(&redis, "127.0.0.1");
    assert!(
        first.len() == 1 && second.len() == 1 && first != second,
        "one lease, and a new one: {first:?} then {second:?}"
    );
    // B asks while A's request waits for its new start: it must wait for A's response.
    b.get(server.url("/b")).send().await.unwrap();
    assert_eq!(long.await.unwrap().unwrap(), 200);
    let at = |p: &str| arrival(&site, p);
    let gap = at("/b") - at("/long/page");
    assert!(
        gap >= Duration::from_millis(1500),
        "B started {gap:?} after A's request, which takes 1.5 s: two at once"
    );
}

/// Spec 8 and 11: starts are spaced by when they went, not only by when they were reserved. A
/// member whose start comes late (its process was busy when its timer fired) holds back the
/// next start, though that one was reserved before (two places at the site).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_start_that_goes_late_holds_back_the_next() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let (server, site) = start_site().await;
    settled(&redis, "127.0.0.1");
    let interval = Duration::from_secs(1);
    let two = |c: robots_tower::RobotsConfig<robots_tower::ForMiddleware>| {
        c.concurrency(2).delay_factor(0.0)
    };
    let b = member(&redis.url(), interval, two);
    b.get(server.url("/warm-b")).send().await.unwrap();
    tokio::time::sleep(interval + Duration::from_millis(100)).await;
    // A runs on a runtime of its own, one thread, which the test keeps busy at A's start.
    let (url, base) = (redis.url(), server.base.clone());
    let a = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let a = member(&url, interval, two);
            a.get(format!("{base}/a1")).send().await.unwrap();
            // /a2 is reserved an interval after /a1; its timer fires 0.6 s late.
            let busy = tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(800)).await;
                std::thread::sleep(Duration::from_millis(600));
            });
            a.get(format!("{base}/a2")).send().await.unwrap();
            busy.await.unwrap();
        });
    });
    // B asks once A's /a2 is reserved: its own start is reserved an interval after that.
    while !pages(&site).iter().any(|(p, _)| p == "/a1") {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    b.get(server.url("/b")).send().await.unwrap();
    a.join().unwrap();
    let at = |p: &str| arrival(&site, p);
    assert!(
        at("/a2") - at("/a1") >= Duration::from_millis(1300),
        "A's start was not late: the test did not test"
    );
    let gap = at("/b") - at("/a2");
    assert!(
        gap >= interval - Duration::from_millis(5),
        "B started {gap:?} after A's late start"
    );
}

/// Spec 8: a request's interval counts from the last start in its group, whichever member made
/// it: a member with a longer interval (a larger minimum delay, an origin's Crawl-delay) waits
/// its own interval after a start made with a shorter one, as the in-process pacer does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_longer_interval_counts_from_the_last_start_in_the_group() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let (server, site) = start_site().await;
    settled(&redis, "127.0.0.1");
    // Start to start: spacing from the end would hold the second back by itself.
    let config = |c: robots_tower::RobotsConfig<robots_tower::ForMiddleware>| {
        c.delay_factor(0.0)
            .spacing(robots_tower::Spacing::StartToStart)
    };
    let short = member(&redis.url(), Duration::from_millis(250), config);
    let long = member(&redis.url(), Duration::from_secs(1), config);
    long.get(server.url("/warm")).send().await.unwrap();
    tokio::time::sleep(Duration::from_millis(1100)).await;
    short.get(server.url("/short")).send().await.unwrap();
    // Asked once the short interval is over: granted at once without the long one's count.
    tokio::time::sleep(Duration::from_millis(300)).await;
    long.get(server.url("/long")).send().await.unwrap();
    let at = |p: &str| arrival(&site, p);
    let gap = at("/long") - at("/short");
    // (Measured where the server logs them, after each start: under load a request reaches it
    // some milliseconds late, so arrivals may be closer than the starts by that much. Counted
    // from its own last start instead, `/long` would have followed `/short` at once.)
    assert!(
        gap >= Duration::from_millis(950),
        "the 1 s member started {gap:?} after the 0.25 s member"
    );
}

/// Spec 11 on a Redis Cluster (three masters started from `redis-server`): two members share one
/// robots.txt fetch per origin and one interval per group, with groups spread over the nodes and
/// every script on one node (a cross-slot script would fail, and the members would fall back).
#[tokio::test(flavor = "multi_thread")]
async fn a_fleet_on_a_redis_cluster_shares_fetches_and_intervals() {
    let Some(cluster) = redis_server::RedisCluster::start() else {
        return;
    };
    let mut sites = Vec::new();
    for _ in 0..6 {
        sites.push(start_site().await);
    }
    let fleets: Vec<RedisFleet> = (0..2)
        .map(|_| {
            RedisFleet::new(&cluster.url())
                .unwrap()
                .response_timeout(Duration::from_secs(2))
        })
        .collect();
    assert!(fleets[0].is_cluster());
    let members: Vec<_> = fleets
        .iter()
        .map(|fleet| {
            RobotsMiddleware::builder("FooBot/1.0")
                .fleet(fleet)
                .politeness_key(robots_tower::PolitenessKey::Origin)
                .min_delay(Duration::from_millis(300))
                .build_client()
                .unwrap()
        })
        .collect();
    let requests = members.iter().enumerate().flat_map(|(m, client)| {
        sites.iter().flat_map(move |(server, _)| {
            (0..3).map(move |n| {
                let url = server.url(&format!("/m{m}-{n}"));
                async move { client.get(url).send().await.unwrap().status() }
            })
        })
    });
    let statuses = futures_util::future::join_all(requests).await;
    assert!(statuses.iter().all(|s| s.is_success()), "{statuses:?}");
    for fleet in &fleets {
        assert_eq!(fleet.outages(), 0, "the cluster answered every script");
    }
    for (_, site) in &sites {
        assert_eq!(
            site.count("/robots.txt"),
            1,
            "one robots.txt fetch per origin"
        );
        let starts: Vec<Instant> = pages(site).iter().map(|(_, at)| *at).collect();
        assert_eq!(starts.len(), 6);
        for gap in gaps(starts) {
            assert!(gap >= Duration::from_millis(290), "{gap:?}");
        }
    }
    let keys = cluster.keys_per_node();
    assert!(
        keys.iter().filter(|&&k| k > 0).count() >= 2,
        "the groups' keys spread over the nodes: {keys:?}"
    );
}

/// Issue 25: waiters for one group are served first come, first served. Two members each send
/// eight requests one after another to a site that takes 30 ms to answer, one place at a time:
/// the member whose request just ended asks again at once, but the one that has been waiting
/// goes first, so they take turns.
#[tokio::test(flavor = "multi_thread")]
async fn waiting_members_are_served_in_turn() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let (server, site) = start_site().await;
    settled(&redis, "127.0.0.1");
    let members: Vec<_> = (0..2)
        .map(|_| {
            member(&redis.url(), Duration::from_millis(20), |c| {
                c.delay_factor(0.0)
            })
        })
        .collect();
    let runs = members.iter().enumerate().map(|(m, client)| {
        let base = server.base.clone();
        async move {
            for n in 0..8 {
                let url = format!("{base}/slow/{m}-{n}");
                assert!(client.get(url).send().await.unwrap().status().is_success());
            }
        }
    });
    futures_util::future::join_all(runs).await;
    let order: Vec<char> = pages(&site)
        .iter()
        .filter_map(|(path, _)| path.strip_prefix("/slow/")?.chars().next())
        .collect();
    assert_eq!(order.len(), 16);
    // While both still have requests to send, neither goes more than twice in a row.
    let last_of = |m: char| order.iter().rposition(|&c| c == m).unwrap_or(0);
    let both_until = last_of('0').min(last_of('1'));
    let mut run = 1;
    for i in 1..=both_until {
        run = if order[i] == order[i - 1] { run + 1 } else { 1 };
        assert!(
            run <= 2,
            "served out of turn: {}",
            order.iter().collect::<String>()
        );
    }
}

/// A waiter given up (its request dropped) leaves the queue at once: it holds no one up.
#[tokio::test(flavor = "multi_thread")]
async fn a_waiter_given_up_leaves_the_queue() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let (server, site) = start_site().await;
    settled(&redis, "127.0.0.1");
    let a = member(&redis.url(), Duration::from_millis(10), |c| {
        c.delay_factor(0.0)
    });
    let b = member(&redis.url(), Duration::from_millis(10), |c| {
        c.delay_factor(0.0)
    });
    let first = tokio::spawn({
        let url = server.url("/slow/a-0");
        let a = a.clone();
        async move { a.get(url).send().await.unwrap().status() }
    });
    tokio::time::sleep(Duration::from_millis(10)).await;
    // b queues behind a's request in flight, then gives up.
    let given_up =
        tokio::time::timeout(Duration::from_millis(15), b.get(server.url("/page")).send()).await;
    assert!(given_up.is_err(), "b was still waiting");
    assert!(first.await.unwrap().is_success());
    let started = Instant::now();
    a.get(server.url("/page")).send().await.unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "a waited {:?} behind a waiter that had gone",
        started.elapsed()
    );
    assert_eq!(pages(&site).len(), 2);
}

/// The script calls a server has run so far (`EVALSHA`, and `EVAL` for a script it did not know
/// yet), from `INFO commandstats`.
fn script_calls(redis: &RedisServer) -> u64 {
    let stats = redis.command(&["INFO", "commandstats"]);
    stats
        .lines()
        .filter(|line| line.starts_with("cmdstat_evalsha:") || line.starts_with("cmdstat_eval:"))
        .filter_map(|line| {
            let calls = line.split("calls=").nth(1)?;
            calls.split(',').next()?.parse::<u64>().ok()
        })
        .sum()
}

/// Issue 33: a paced request through the fleet costs one script call in the common case (a
/// response that pauses nothing). Its head and end ride on the process's next acquire, or go
/// together when none comes: 200 requests, one at a time and eight at a time over a layer
/// whose pages answer at once, take about 200 script calls, not 600 (acquire, head, end).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paced_request_costs_one_script_call() {
    use bytes::Bytes;
    use http_body_util::Full;
    use tower::{Layer, ServiceExt};
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let fleet = RedisFleet::new(&redis.url()).unwrap();
    let layer = fleet_layer(&fleet, 8, |c| c.min_delay(Duration::ZERO).delay_factor(0.0));
    let service = layer.layer(tower::service_fn(page));
    let request = |i: usize| {
        http::Request::get(format!("http://o{}.example/page", i % 8))
            .body(Full::<Bytes>::default())
            .unwrap()
    };
    // Once, so that the scripts are loaded.
    service.clone().oneshot(request(0)).await.unwrap();
    assert!(layer.settle(Duration::from_secs(2)).await);

    let before = script_calls(&redis);
    for i in 0..200 {
        let response = service.clone().oneshot(request(i)).await.unwrap();
        assert_eq!(response.status(), 200);
    }
    assert!(layer.settle(Duration::from_secs(2)).await);
    let one_at_a_time = script_calls(&redis) - before;

    let before = script_calls(&redis);
    let tasks: Vec<_> = (0..8)
        .map(|t| {
            let service = service.clone();
            tokio::spawn(async move {
                for n in 0..25 {
                    let response = service.clone().oneshot(request(t + 8 * n)).await;
                    assert_eq!(response.unwrap().status(), 200);
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    assert!(layer.settle(Duration::from_secs(2)).await);
    let eight_at_a_time = script_calls(&redis) - before;
    // (A settle due before the next acquire came goes on a call of its own, rarely.)
    for (calls, how) in [(one_at_a_time, "one"), (eight_at_a_time, "eight")] {
        assert!(
            (200..=220).contains(&calls),
            "{calls} script calls for 200 requests, {how} at a time"
        );
    }
    // Every lease was given back: nothing left in the groups' lease sets.
    for i in 0..8 {
        let leases = held(&redis, &format!("o{i}.example"));
        assert!(leases.is_empty(), "o{i}.example: {leases:?}");
    }
}

/// Issue 33: after a failover, a place still held on the new server by a request whose end went
/// to the old one (the replica never saw it) is given back by the live process that made the
/// request once it sees the new epoch, not waited out to its lease's expiry.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_failover_a_live_member_gives_back_the_places_its_ended_requests_held() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let (server, site) = start_site().await;
    settled(&redis, "127.0.0.1");
    let member = member(&redis.url(), Duration::from_millis(100), |c| {
        c.delay_factor(0.0)
    });
    // A request in flight, and its lease's id.
    let request = tokio::spawn({
        let member = member.clone();
        let url = server.url("/long/1");
        async move { member.get(url).send().await.unwrap().text().await.unwrap() }
    });
    let mut id = String::new();
    for _ in 0..200 {
        if let Some(found) = held(&redis, "127.0.0.1").pop() {
            id = found;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(!id.is_empty(), "the request held a lease");
    assert_eq!(request.await.unwrap(), "page");
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(held(&redis, "127.0.0.1").is_empty(), "released");

    // The failover: the new server still has the lease (in the group's first place) for a
    // minute, and another identity.
    let expiry = (wall_ms() + 60_000).to_string();
    let pace = "robots:{127.0.0.1}:pace";
    redis.set_pace(pace, &[("lease", &id), ("lease_until", &expiry)]);
    redis.command(&["PEXPIRE", pace, "120000"]);
    assert_eq!(held(&redis, "127.0.0.1"), [id.clone()]);
    let epoch = RedisFleet::new(&redis.url())
        .unwrap()
        .epoch_key("127.0.0.1");
    redis.command(&["SET", &epoch, "0:a-replica-promoted"]);

    let next = tokio::time::timeout(
        Duration::from_secs(5),
        member.get(server.url("/after")).send(),
    )
    .await;
    assert!(
        matches!(&next, Ok(Ok(response)) if response.status() == 200),
        "the member's own ended request no longer holds the place: {next:?}"
    );
    assert_eq!(site.count("/after"), 1);
}

/// A success ends the group's back-off streak for the whole fleet, also when it comes through
/// the middleware: its head is recorded, and its body's end, right after, must not drop what the
/// head taught (the end of a body says nothing of its own about the streak).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_success_through_the_middleware_ends_the_fleets_streak() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let (server, site) = start_site().await;
    settled(&redis, "127.0.0.1");
    let pace = "robots:{127.0.0.1}:pace";
    streak_left(&redis, pace);
    let client = member(&redis.url(), Duration::from_millis(10), |c| c);
    let response = client.get(server.url("/page")).send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.text().await.unwrap(), "page");
    assert_eq!(site.count("/page"), 1);
    tokio::time::sleep(Duration::from_millis(150)).await;
    assert_eq!(redis.pace_field(pace, "failures"), None, "the streak ended");
    assert_eq!(redis.pace_field(pace, "pause"), None, "its pause too");
}

/// The same through the tower layer: the head's record and the body's end, read to its last byte.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_success_through_the_layer_ends_the_fleets_streak() {
    use bytes::Bytes;
    use http_body_util::{BodyExt, Full};
    use tower::{Layer, ServiceExt};
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let fleet = RedisFleet::new(&redis.url()).unwrap();
    let layer = fleet_layer(&fleet, 1, |c| c.min_delay(Duration::from_millis(10)));
    settled(&redis, "o0.example");
    let pace = fleet.key("o0.example", "pace");
    streak_left(&redis, &pace);
    let service = layer.layer(tower::service_fn(page));
    let request = http::Request::get("http://o0.example/page")
        .body(Full::<Bytes>::default())
        .unwrap();
    let response = service.oneshot(request).await.unwrap();
    assert_eq!(response.status(), 200);
    let body = response.into_body().collect().await.unwrap().to_bytes();
    assert_eq!(&body[..], b"page");
    assert!(layer.settle(Duration::from_secs(2)).await);
    assert_eq!(
        redis.pace_field(&pace, "failures"),
        None,
        "the streak ended"
    );
    assert_eq!(redis.pace_field(&pace, "pause"), None, "its pause too");
}

/// Issue 33: an earlier release kept a group's pace state as a hash. A fleet stopped and started
/// again on this release keeps what it left (here a pause, from a 503 with `Retry-After`), and
/// its next write replaces the hash with the state as this release keeps it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pause_an_earlier_release_left_holds_after_an_upgrade() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let (server, site) = start_site().await;
    settled(&redis, "127.0.0.1");
    let pace = "robots:{127.0.0.1}:pace";
    let now = wall_ms();
    let (until, paused) = ((now + 1_000).to_string(), now.to_string());
    redis.command(&[
        "HSET", pace, "pause", &until, "paused", &paused, "failures", "1", "end", &paused,
    ]);
    redis.command(&["PEXPIRE", pace, "60000"]);
    let client = member(&redis.url(), Duration::from_millis(10), |c| c);
    let started = Instant::now();
    client.get(server.url("/page")).send().await.unwrap();
    let waited = pages(&site)[0].1 - started;
    assert!(
        waited >= Duration::from_millis(800) && waited < Duration::from_secs(5),
        "waited {waited:?} for the pause the earlier release left"
    );
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(redis.command(&["TYPE", pace]).trim(), "+string");
    let ended: u128 = redis
        .pace_field(pace, "ended")
        .and_then(|ended| ended.parse().ok())
        .unwrap_or(0);
    assert!(ended >= now + 1_000, "the end is recorded: {ended}");
    // (The streak it left was read over, and the success ended it.)
    assert_eq!(redis.pace_field(pace, "failures"), None, "the streak ended");
}

/// An earlier release held every place of a group in its set of leases, which its hash did not
/// announce: after an upgrade, a place it held (a member that died mid-request) is still waited
/// out to its lease's end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_place_an_earlier_release_held_is_waited_out_after_an_upgrade() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let (server, site) = start_site().await;
    settled(&redis, "127.0.0.1");
    let ended = (wall_ms() - 60_000).to_string();
    let expiry = (wall_ms() + 800).to_string();
    redis.command(&[
        "HSET",
        "robots:{127.0.0.1}:pace",
        "end",
        &ended,
        "tat",
        &ended,
    ]);
    redis.command(&["ZADD", "robots:{127.0.0.1}:leases", &expiry, "old-member"]);
    let client = member(&redis.url(), Duration::from_millis(10), |c| c);
    let started = Instant::now();
    client.get(server.url("/page")).send().await.unwrap();
    let waited = pages(&site)[0].1 - started;
    assert!(
        waited >= Duration::from_millis(700) && waited < Duration::from_secs(5),
        "waited {waited:?} for the place the earlier release held"
    );
}

/// Whatever else is stored under a group's pace key (a value cut short, another type) is read as
/// no state, and the next write replaces it: a request goes, paced, rather than failing on it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pace_key_holding_something_else_is_replaced() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let (server, site) = start_site().await;
    settled(&redis, "127.0.0.1");
    let pace = "robots:{127.0.0.1}:pace";
    let client = member(&redis.url(), Duration::from_millis(10), |c| c);
    for (n, junk) in [
        &["SET", pace, "not a state"][..],
        &["RPUSH", pace, "a", "list"],
    ]
    .into_iter()
    .enumerate()
    {
        redis.command(&["DEL", pace]);
        redis.command(junk);
        let response = client.get(server.url("/page")).send().await.unwrap();
        assert_eq!(response.status(), 200, "{junk:?}");
        assert_eq!(site.count("/page"), n + 1);
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(redis.command(&["TYPE", pace]).trim(), "+string", "{junk:?}");
        assert!(redis.pace_field(pace, "ended").is_some(), "{junk:?}");
    }
}

/// Issue 33: a group's pace state holds its first place and says until when its set of leases may
/// hold others, so it must outlive every place held, even when the group's idle ttl (here 1 s,
/// its back-off's longest) is far shorter than a lease (30 s): otherwise the first place would
/// be forgotten, and the set's unseen, while their requests are in flight.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pace_state_outlives_every_place_held() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let (server, site) = start_site().await;
    settled(&redis, "127.0.0.1");
    let client = member(&redis.url(), Duration::from_millis(10), |c| {
        c.concurrency(2)
            .delay_factor(0.0)
            .backoff(Duration::from_millis(500), Duration::from_secs(1))
            .fleet_lease(Duration::from_secs(30))
    });
    let requests: Vec<_> = ["/long/1", "/long/2"]
        .into_iter()
        .map(|path| {
            let client = client.clone();
            let url = server.url(path);
            tokio::spawn(async move { client.get(url).send().await.unwrap().status().as_u16() })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(600)).await;
    // Both in flight: one in the first place, one in the set, which the state says may hold it.
    assert_eq!(held(&redis, "127.0.0.1").len(), 2, "two places held");
    let pace = "robots:{127.0.0.1}:pace";
    let others: u128 = redis
        .pace_field(pace, "others")
        .and_then(|others| others.parse().ok())
        .unwrap_or(0);
    assert!(others > wall_ms() + 20_000, "others until {others}");
    let pttl = redis.integer(&["PTTL", pace]).unwrap();
    assert!(
        pttl > 25_000,
        "the pace state lives {pttl} ms, under the leases of its places"
    );
    for request in requests {
        assert_eq!(request.await.unwrap(), 200);
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(held(&redis, "127.0.0.1").is_empty(), "both given back");
    assert_eq!(site.count("/long/1") + site.count("/long/2"), 2);
}
