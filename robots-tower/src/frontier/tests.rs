//! The frontier over a real gate and its pacing, on paused time: requests are made through
//! hooks sharing the gate (an admission, then its end), as a front end would.

use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use robots_fetch::{Origin, ServiceClient};
use tokio::time::Instant;
use url::Url;

use super::*;
use crate::front::config::{ForLayer, RobotsConfig};
use crate::front::hooks::RobotsHooks;

type Site = ServiceClient<
    tower::util::BoxCloneSyncService<
        http::Request<Full<Bytes>>,
        http::Response<Full<Bytes>>,
        Infallible,
    >,
    Full<Bytes>,
    Full<Bytes>,
>;

/// robots.txt per host: `slow.example` asks a Crawl-delay of 5 s; every host disallows
/// `/private`.
fn site() -> Site {
    let service = tower::service_fn(|request: http::Request<Full<Bytes>>| async move {
        let body = match (request.uri().host(), request.uri().path()) {
            (Some("slow.example"), "/robots.txt") => {
                "User-agent: *\nCrawl-delay: 5\nDisallow: /private\n"
            }
            (_, "/robots.txt") => "User-agent: *\nDisallow: /private\n",
            _ => "page",
        };
        Ok::<_, Infallible>(http::Response::new(Full::new(Bytes::from(body))))
    });
    ServiceClient::new(tower::util::BoxCloneSyncService::new(service))
}

fn setup(
    configure: impl FnOnce(RobotsConfig<ForLayer>) -> RobotsConfig<ForLayer>,
    frontier: FrontierConfig,
) -> (RobotsHooks<Site>, Frontier) {
    let gate = configure(RobotsConfig::new("FooBot/1.0").delay_factor(0.0)).gate();
    let hooks = RobotsHooks::from_gate(gate.clone(), site());
    (hooks, Frontier::new(gate, frontier))
}

fn url(text: &str) -> Url {
    text.parse().unwrap()
}

/// Fetches a job's URL as a front end would (verdict, turn, response), then ends the job.
async fn fetch(hooks: &RobotsHooks<Site>, job: Job) -> Instant {
    let ticket = hooks.admit(job.url()).await.expect("allowed");
    let at = Instant::now();
    ticket.finish(200, &http::HeaderMap::new()).await;
    drop(job);
    at
}

/// Takes every URL in turn, each job ended before the next is asked for.
async fn drain(frontier: &Frontier) -> Vec<String> {
    frontier.close();
    let mut order = Vec::new();
    while let Some(job) = frontier.next().await {
        order.push(job.url().to_string());
    }
    order
}

#[tokio::test(start_paused = true)]
async fn priority_first_then_first_in_first_out() {
    let (_, frontier) = setup(|c| c.min_delay(Duration::ZERO), FrontierConfig::default());
    for (path, priority) in [("/a", 0), ("/b", 5), ("/c", 0), ("/d", 5), ("/e", -1)] {
        let pushed = frontier.try_push_with(url(&format!("http://x.example{path}")), priority);
        assert_eq!(pushed.unwrap(), Pushed::Queued);
    }
    let order = drain(&frontier).await;
    let paths: Vec<&str> = order
        .iter()
        .map(|u| &u["http://x.example".len()..])
        .collect();
    assert_eq!(paths, ["/b", "/d", "/a", "/c", "/e"]);
}

#[tokio::test(start_paused = true)]
async fn ready_groups_take_turns() {
    let (_, frontier) = setup(|c| c.min_delay(Duration::ZERO), FrontierConfig::default());
    for u in [
        "http://a.example/1",
        "http://a.example/2",
        "http://a.example/3",
        "http://b.example/1",
        "http://b.example/2",
        "http://c.example/1",
    ] {
        frontier.try_push(url(u)).unwrap();
    }
    assert_eq!(
        drain(&frontier).await,
        [
            "http://a.example/1",
            "http://b.example/1",
            "http://c.example/1",
            "http://a.example/2",
            "http://b.example/2",
            "http://a.example/3",
        ]
    );
    let stats = frontier.stats();
    assert_eq!((stats.queued, stats.groups, stats.in_progress), (0, 0, 0));
    assert_eq!(stats.bytes, queues::FIXED_OVERHEAD, "every byte given back");
}

#[tokio::test(start_paused = true)]
async fn one_group_hands_out_no_more_than_its_concurrency() {
    let (_, frontier) = setup(|c| c.min_delay(Duration::ZERO), FrontierConfig::default());
    frontier.try_push(url("http://a.example/1")).unwrap();
    frontier.try_push(url("http://a.example/2")).unwrap();
    let first = frontier.next().await.unwrap();
    // The group's one place is held by `first`: nothing else comes, however long.
    let second = tokio::time::timeout(Duration::from_secs(3600), frontier.next()).await;
    assert!(second.is_err(), "a second URL of the group came out");
    drop(first);
    let second = frontier.next().await.unwrap();
    assert_eq!(second.url().path(), "/2");
}

#[tokio::test(start_paused = true)]
async fn a_slow_group_never_holds_up_the_others_and_is_never_asked_early() {
    let (hooks, frontier) = setup(
        |c| c.min_delay(Duration::from_millis(10)),
        FrontierConfig::default(),
    );
    for n in 0..5 {
        frontier
            .try_push(url(&format!("http://slow.example/{n}")))
            .unwrap();
    }
    for site in 0..5 {
        for n in 0..3 {
            frontier
                .try_push(url(&format!("http://fast{site}.example/{n}")))
                .unwrap();
        }
    }
    frontier.close();
    // Four workers, as a crawler has: one of them waits out the slow site's first turn after
    // its robots.txt, the others go on.
    let start = Instant::now();
    let hooks = Arc::new(hooks);
    let workers: Vec<_> = (0..4)
        .map(|_| {
            let (hooks, frontier) = (hooks.clone(), frontier.clone());
            tokio::spawn(async move {
                let mut done = Vec::new();
                while let Some(job) = frontier.next().await {
                    let slow = job.url().host_str() == Some("slow.example");
                    done.push((slow, fetch(&hooks, job).await));
                }
                done
            })
        })
        .collect();
    let mut slow = Vec::new();
    let mut fast_done = start;
    for worker in workers {
        for (is_slow, at) in worker.await.unwrap() {
            if is_slow {
                slow.push(at);
            } else {
                fast_done = fast_done.max(at);
            }
        }
    }
    slow.sort();
    // robots.txt's own request takes the slow site's first turn: its first page comes 5 s
    // later, while every fast page is done in well under a second.
    assert!(
        fast_done - start < Duration::from_secs(1),
        "{:?}",
        fast_done - start
    );
    assert_eq!(slow.len(), 5);
    for pair in slow.windows(2) {
        assert!(pair[1] - pair[0] >= Duration::from_secs(5), "{slow:?}");
    }
    // Asked once per URL: when its group got its first, and when each job ended.
    let stats = frontier.stats();
    assert_eq!(stats.handed_out, 20);
    assert!(stats.gate_asks <= 20, "{} asks", stats.gate_asks);
}

#[tokio::test(start_paused = true)]
async fn a_paused_group_opens_when_its_pause_ends() {
    let (hooks, frontier) = setup(|c| c.min_delay(Duration::ZERO), FrontierConfig::default());
    let mut headers = http::HeaderMap::new();
    headers.insert("retry-after", http::HeaderValue::from_static("30"));
    hooks.observe(&Origin::parse("http://a.example").unwrap(), 503, &headers);
    frontier.try_push(url("http://a.example/1")).unwrap();
    frontier.try_push(url("http://b.example/1")).unwrap();
    frontier.close();
    let start = Instant::now();
    let first = frontier.next().await.unwrap();
    assert_eq!(first.url().host_str(), Some("b.example"));
    assert_eq!(Instant::now(), start);
    drop(first);
    let second = frontier.next().await.unwrap();
    assert_eq!(second.url().host_str(), Some("a.example"));
    assert_eq!(Instant::now() - start, Duration::from_secs(30));
}

#[tokio::test(start_paused = true)]
async fn push_waits_for_room_and_try_push_refuses() {
    let one_group =
        queues::FIXED_OVERHEAD + queues::GROUP_OVERHEAD + queues::BAND_OVERHEAD + "a.example".len();
    let room_for_two = one_group + 2 * ("http://a.example/1".len() + queues::URL_OVERHEAD);
    let (_, frontier) = setup(
        |c| c.min_delay(Duration::ZERO),
        FrontierConfig::default().max_bytes(room_for_two),
    );
    frontier.try_push(url("http://a.example/1")).unwrap();
    frontier.try_push(url("http://a.example/2")).unwrap();
    assert!(frontier.bytes() <= room_for_two);
    match frontier.try_push(url("http://a.example/3")) {
        Err(PushError::Full { url, .. }) => assert_eq!(url.path(), "/3"),
        other => panic!("{other:?}"),
    }
    // `push` waits, and goes in once a URL has left.
    let pusher = {
        let frontier = frontier.clone();
        tokio::spawn(async move { frontier.push(url("http://a.example/3")).await })
    };
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert!(!pusher.is_finished(), "push did not wait for room");
    let first = frontier.next().await.unwrap();
    assert_eq!(pusher.await.unwrap().unwrap(), Pushed::Queued);
    assert_eq!(frontier.len(), 2);
    drop(first);
    // A URL larger than the whole budget is refused at once, not waited for.
    let huge = url(&format!("http://a.example/{}", "x".repeat(room_for_two)));
    let length = huge.as_str().len();
    match frontier.push(huge).await {
        // What it counts is what it says: the URL and every part an empty frontier adds.
        Err(
            error @ PushError::TooLarge {
                bytes, max_bytes, ..
            },
        ) => {
            assert!(bytes > max_bytes && bytes >= length + super::queues::FIXED_OVERHEAD);
            let said = error.to_string();
            assert!(
                said.contains(&format!("needs {bytes} bytes of an empty frontier"))
                    && said.contains("fixed part"),
                "{said}"
            );
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test(start_paused = true)]
async fn a_group_at_its_cap_refuses_more() {
    let (_, frontier) = setup(|c| c, FrontierConfig::default().max_per_group(2));
    frontier.try_push(url("http://a.example/1")).unwrap();
    frontier.try_push(url("http://a.example/2")).unwrap();
    match frontier.push(url("http://a.example/3")).await {
        Err(PushError::GroupFull { group, max, .. }) => {
            assert_eq!((&*group, max), ("a.example", 2))
        }
        other => panic!("{other:?}"),
    }
    // Another group is not affected.
    assert_eq!(
        frontier.try_push(url("http://b.example/1")).unwrap(),
        Pushed::Queued
    );
    assert_eq!(frontier.stats().over_group_cap, 1);
}

#[tokio::test(start_paused = true)]
async fn duplicates_are_dropped_exactly_or_by_a_bloom_filter() {
    for dedup in [
        Dedup::Exact { last: 100 },
        Dedup::Bloom {
            expected: 100,
            false_positive_rate: 0.001,
        },
    ] {
        let (_, frontier) = setup(|c| c, FrontierConfig::default().dedup(dedup));
        assert_eq!(
            frontier.try_push(url("http://a.example/1")).unwrap(),
            Pushed::Queued
        );
        // The fragment is not part of what is fetched.
        assert_eq!(
            frontier.try_push(url("http://a.example/1#top")).unwrap(),
            Pushed::Duplicate
        );
        assert_eq!(
            frontier.try_push(url("http://a.example/2")).unwrap(),
            Pushed::Queued
        );
        let stats = frontier.stats();
        assert_eq!((stats.queued, stats.duplicates), (2, 1), "{dedup:?}");
        assert!(stats.dedup_bytes > 0);
    }
    // Off: both queued.
    let (_, frontier) = setup(|c| c, FrontierConfig::default());
    frontier.try_push(url("http://a.example/1")).unwrap();
    assert_eq!(
        frontier.try_push(url("http://a.example/1")).unwrap(),
        Pushed::Queued
    );
    // A URL refused for room is not remembered: pushed again later, it goes in.
    let (_, frontier) = setup(
        |c| c,
        FrontierConfig::default()
            .dedup(Dedup::Exact { last: 10 })
            .max_bytes(queues::FIXED_OVERHEAD),
    );
    assert!(matches!(
        frontier.try_push(url("http://a.example/1")),
        Err(PushError::TooLarge { .. })
    ));
    let (_, frontier) = setup(
        |c| c,
        FrontierConfig::default().dedup(Dedup::Exact { last: 10 }),
    );
    assert_eq!(
        frontier.try_push(url("http://a.example/1")).unwrap(),
        Pushed::Queued
    );
}

#[tokio::test(start_paused = true)]
async fn disallowed_urls_are_dropped_counted_and_told_never_handed_out() {
    let heard: Arc<Mutex<Vec<String>>> = Arc::default();
    let told = heard.clone();
    let (hooks, frontier) = setup(
        |c| c.min_delay(Duration::ZERO),
        FrontierConfig::default()
            .dedup(Dedup::Exact { last: 100 })
            .on_disallowed(move |dropped| {
                assert!(matches!(dropped.error, RobotsError::Disallowed { .. }));
                told.lock().unwrap().push(dropped.url.to_string());
            }),
    );
    // a.example's robots.txt is known: dropped at the push.
    hooks.check(&url("http://a.example/")).await.unwrap();
    assert_eq!(
        frontier
            .try_push(url("http://a.example/private/1"))
            .unwrap(),
        Pushed::Disallowed
    );
    // Linked again (with its fragment, too): one URL, refused, counted and told once.
    for again in [
        "http://a.example/private/1",
        "http://a.example/private/1#top",
    ] {
        assert_eq!(frontier.try_push(url(again)).unwrap(), Pushed::Duplicate);
    }
    // b.example's is not yet: queued, then dropped when its turn comes.
    for u in ["http://b.example/private/2", "http://b.example/ok"] {
        assert_eq!(frontier.try_push(url(u)).unwrap(), Pushed::Queued);
    }
    hooks.check(&url("http://b.example/")).await.unwrap();
    assert_eq!(drain(&frontier).await, ["http://b.example/ok"]);
    assert_eq!(
        *heard.lock().unwrap(),
        ["http://a.example/private/1", "http://b.example/private/2"]
    );
    assert_eq!(frontier.stats().disallowed, 2);
    assert_eq!(frontier.stats().duplicates, 2);
}

#[tokio::test(start_paused = true)]
async fn closed_refuses_pushes_and_ends_next_once_empty() {
    let (_, frontier) = setup(|c| c.min_delay(Duration::ZERO), FrontierConfig::default());
    frontier.try_push(url("http://a.example/1")).unwrap();
    // Not closed: `next` waits for more rather than ending.
    let waiting = {
        let frontier = frontier.clone();
        tokio::spawn(async move {
            let mut got = Vec::new();
            while let Some(job) = frontier.next().await {
                got.push(job.url().to_string());
            }
            got
        })
    };
    tokio::time::sleep(Duration::from_secs(10)).await;
    assert!(!waiting.is_finished());
    frontier.try_push(url("http://b.example/1")).unwrap();
    frontier.close();
    assert!(frontier.is_closed());
    assert!(matches!(
        frontier.try_push(url("http://c.example/1")),
        Err(PushError::Closed(_))
    ));
    assert_eq!(
        waiting.await.unwrap(),
        ["http://a.example/1", "http://b.example/1"]
    );
    // Not a URL a crawler fetches.
    assert!(matches!(
        frontier.try_push(url("mailto:someone@example.com")),
        Err(PushError::NotHttp { .. })
    ));
}

#[tokio::test(start_paused = true)]
async fn next_dropped_while_waiting_loses_nothing() {
    let (hooks, frontier) = setup(|c| c, FrontierConfig::default());
    frontier.try_push(url("http://slow.example/1")).unwrap();
    frontier.try_push(url("http://slow.example/2")).unwrap();
    let first = frontier.next().await.unwrap();
    fetch(&hooks, first).await;
    // The group waits out its Crawl-delay; a `next` given up meanwhile takes nothing with it.
    assert!(
        tokio::time::timeout(Duration::from_secs(1), frontier.next())
            .await
            .is_err()
    );
    let second = frontier.next().await.unwrap();
    assert_eq!(second.url().path(), "/2");
}

#[tokio::test(start_paused = true)]
async fn groups_are_the_politeness_groups() {
    // `domain`: two hosts of one registrable domain are one group, one URL out at a time.
    let (_, frontier) = setup(
        |c| {
            c.min_delay(Duration::ZERO)
                .politeness_key(crate::PolitenessKey::Domain)
        },
        FrontierConfig::default(),
    );
    frontier.try_push(url("http://a.example.com/1")).unwrap();
    frontier.try_push(url("https://b.example.com/2")).unwrap();
    frontier
        .try_push(url("http://other.example.org/3"))
        .unwrap();
    let first = frontier.next().await.unwrap();
    assert_eq!(first.group(), "example.com");
    let second = frontier.next().await.unwrap();
    assert_eq!(second.group(), "example.org");
    assert!(
        tokio::time::timeout(Duration::from_secs(60), frontier.next())
            .await
            .is_err(),
        "b.example.com came out while a.example.com's job held the group"
    );
    drop(first);
    assert_eq!(
        frontier.next().await.unwrap().url().host_str(),
        Some("b.example.com")
    );

    // `host` (the default): the scheme and port do not make another group.
    let (_, frontier) = setup(|c| c.min_delay(Duration::ZERO), FrontierConfig::default());
    frontier.try_push(url("http://a.example/1")).unwrap();
    frontier.try_push(url("https://a.example:8443/2")).unwrap();
    assert_eq!(frontier.stats().groups, 1);
}

/// A URL waiting for its retry keeps its room: a push from outside does not take it (the
/// budget bounds the queue and the retries together), and it comes out again when its time
/// comes, with its attempt counted, whatever the de-duplication.
#[tokio::test(start_paused = true)]
async fn a_retry_keeps_its_room_and_comes_back_after_its_wait() {
    let one_group =
        queues::FIXED_OVERHEAD + queues::GROUP_OVERHEAD + queues::BAND_OVERHEAD + "a.example".len();
    let room_for_two = one_group + 2 * ("http://a.example/1".len() + queues::URL_OVERHEAD);
    let (_, frontier) = setup(
        |c| c.min_delay(Duration::ZERO),
        FrontierConfig::default()
            .max_bytes(room_for_two)
            .dedup(Dedup::Exact { last: 100 }),
    );
    frontier.try_push(url("http://a.example/1")).unwrap();
    let job = frontier.next().await.unwrap();
    assert_eq!(job.attempt(), 0);
    let start = Instant::now();
    assert_eq!(
        job.retry_after(Duration::from_secs(10)),
        Retried::Scheduled { attempt: 1 }
    );
    // The retry holds one URL's room: one more fits, not two.
    frontier.try_push(url("http://a.example/2")).unwrap();
    assert!(matches!(
        frontier.try_push(url("http://a.example/3")),
        Err(PushError::Full { .. })
    ));
    assert!(frontier.bytes() <= room_for_two, "{:?}", frontier.stats());
    let second = frontier.next().await.unwrap();
    assert_eq!(second.url().path(), "/2");
    drop(second);
    let again = frontier.next().await.unwrap();
    assert_eq!((again.url().path(), again.attempt()), ("/1", 1));
    assert!(Instant::now() - start >= Duration::from_secs(10));
    assert_eq!(frontier.stats().retried, 1);
}

/// `Job::waited` is how long the URL stood first in its group's line with a place free:
/// never the time it was queued behind the others, or behind a request in flight. A site
/// asking 5 s: each URL after the first waits 5 s from the end of the one before (its
/// request ends at once here).
#[tokio::test(start_paused = true)]
async fn a_job_says_how_long_its_group_kept_it() {
    let (hooks, frontier) = setup(
        |c| c.min_delay(Duration::from_secs(5)),
        FrontierConfig::default(),
    );
    for n in 0..3 {
        frontier
            .try_push(url(&format!("http://a.example/{n}")))
            .unwrap();
    }
    let start = Instant::now();
    let first = frontier.next().await.unwrap();
    assert_eq!(first.waited(), Duration::ZERO);
    // Its request waits 5 s after robots.txt, in the front end: not the frontier's to count.
    fetch(&hooks, first).await;
    let second = frontier.next().await.unwrap();
    assert_eq!(second.waited(), Duration::from_secs(5));
    fetch(&hooks, second).await;
    let third = frontier.next().await.unwrap();
    assert_eq!(Instant::now() - start, Duration::from_secs(15));
    assert_eq!(third.waited(), Duration::from_secs(5));
}

/// A site whose robots.txt answers 503 holds its URLs for the hold under `Frontier::run`, then
/// they are given up and counted, while a live site's pages go at once: robots.txt is tried at
/// 0, 10, 70, 190, 430 s…, and by default the crawl ends at 10 s (the try at 70 s would come
/// past the minute), not after the cache's whole retry schedule; a longer hold waits out more
/// of it, and never past the hold.
#[tokio::test(start_paused = true)]
async fn an_unreachable_robots_txt_holds_its_site_for_the_hold_then_gives_it_up() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    for (hold, tries, ends_after) in [
        (DEFAULT_HOLD_UNREACHABLE, 2, Duration::from_secs(10)),
        (Duration::from_secs(600), 5, Duration::from_secs(430)),
    ] {
        let dead_tries = Arc::new(AtomicUsize::new(0));
        let counted = dead_tries.clone();
        let service = tower::service_fn(move |request: http::Request<Full<Bytes>>| {
            let counted = counted.clone();
            async move {
                let dead = request.uri().host() == Some("dead.example");
                let mut response = http::Response::new(Full::new(Bytes::from_static(b"page")));
                if dead && request.uri().path() == "/robots.txt" {
                    counted.fetch_add(1, Ordering::SeqCst);
                    *response.status_mut() = http::StatusCode::SERVICE_UNAVAILABLE;
                }
                Ok::<_, Infallible>(response)
            }
        });
        let gate = RobotsConfig::<ForLayer>::new("FooBot/1.0")
            .delay_factor(0.0)
            .min_delay(Duration::ZERO)
            .gate();
        let hooks = RobotsHooks::from_gate(
            gate.clone(),
            ServiceClient::new(tower::util::BoxCloneSyncService::new(service)),
        );
        let frontier = Frontier::new(gate, FrontierConfig::default().hold_unreachable(hold));
        for path in ["/1", "/2", "/3"] {
            frontier
                .try_push(url(&format!("http://dead.example{path}")))
                .unwrap();
            frontier
                .try_push(url(&format!("http://live.example{path}")))
                .unwrap();
        }
        let start = Instant::now();
        let stats = frontier
            .run(2, |job| {
                let hooks = &hooks;
                async move {
                    match hooks.admit(job.url()).await {
                        Ok(ticket) => {
                            ticket.finish(200, &http::HeaderMap::new()).await;
                            Visit::Fetched(Vec::new())
                        }
                        Err(error) => Visit::Refused(error),
                    }
                }
            })
            .await;
        let took = Instant::now() - start;
        assert_eq!(dead_tries.load(Ordering::SeqCst), tries, "hold {hold:?}");
        assert!(
            took >= ends_after && took < ends_after + Duration::from_secs(5),
            "hold {hold:?}: ended after {took:?}"
        );
        assert_eq!(stats.fetched, 3, "{stats:?}");
        assert_eq!(
            (stats.gave_up, stats.gave_up_unreachable),
            (3, 3),
            "{stats:?}"
        );
        // Each of its URLs waited for every try, whatever `max_retries` (3) says.
        assert_eq!(stats.retried, 3 * (tries as u64 - 1), "{stats:?}");
    }
}

/// A page answered 429 with `Retry-After: 1` once is retried by the loop after the pause, and
/// fetched, though the handler called it fetched (as a handler that looks at no status does):
/// counted once as distress and once as fetched, never lost.
#[tokio::test(start_paused = true)]
async fn a_distress_answer_is_retried_by_the_loop_whatever_the_handler_says() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let busy = Arc::new(Mutex::new(Vec::new()));
    let seen = busy.clone();
    let answered = Arc::new(AtomicUsize::new(0));
    let gate = RobotsConfig::<ForLayer>::new("FooBot/1.0")
        .delay_factor(0.0)
        .min_delay(Duration::ZERO)
        .gate();
    let hooks = RobotsHooks::from_gate(gate.clone(), site());
    let frontier = Frontier::new(gate, FrontierConfig::default());
    for path in ["/busy", "/a", "/b"] {
        frontier
            .try_push(url(&format!("http://a.example{path}")))
            .unwrap();
    }
    let stats = frontier
        .run(1, |job| {
            let (hooks, seen, answered) = (&hooks, seen.clone(), answered.clone());
            async move {
                let ticket = hooks.admit(job.url()).await.expect("allowed");
                let mut headers = http::HeaderMap::new();
                let status = if job.url().path() == "/busy" {
                    seen.lock().unwrap().push(Instant::now());
                    if answered.fetch_add(1, Ordering::SeqCst) == 0 {
                        headers.insert(http::header::RETRY_AFTER, "1".parse().unwrap());
                        429
                    } else {
                        200
                    }
                } else {
                    200
                };
                ticket.finish(status, &headers).await;
                Visit::Fetched(Vec::new())
            }
        })
        .await;
    let busy = busy.lock().unwrap();
    assert_eq!(busy.len(), 2, "{stats:?}");
    assert!(busy[1] - busy[0] >= Duration::from_secs(1), "{busy:?}");
    assert_eq!(
        (stats.fetched, stats.distress, stats.retried),
        (3, 1, 1),
        "{stats:?}"
    );
    assert_eq!(stats.gave_up, 0, "{stats:?}");
}

/// `max_pages` stops `Frontier::run` at exactly that many pages whatever the workers, and a
/// stop from a visit ends the crawl once the visits under way end: what was queued, and the
/// links found after, are counted as not crawled. Every URL ends fetched or not crawled.
#[tokio::test(start_paused = true)]
async fn a_page_limit_or_a_stop_ends_the_crawl_and_counts_what_was_left() {
    let (hooks, frontier) = setup(
        |c| c.min_delay(Duration::ZERO),
        FrontierConfig::default().max_pages(4),
    );
    for n in 0..10 {
        frontier
            .try_push(url(&format!("http://h{n}.example/")))
            .unwrap();
    }
    let stats = frontier
        .run(3, |job| {
            let hooks = &hooks;
            async move {
                fetch(hooks, job).await;
                Visit::Fetched(Vec::new())
            }
        })
        .await;
    assert_eq!((stats.fetched, stats.not_crawled), (4, 6), "{stats:?}");
    assert_eq!(stats.handed_out, 4, "{stats:?}");
    assert!(frontier.is_stopped() && frontier.is_closed());

    // Stopped by a visit: each page links to two more, and the third visit stops the crawl.
    let (hooks, frontier) = setup(|c| c.min_delay(Duration::ZERO), FrontierConfig::default());
    frontier.try_push(url("http://a.example/0")).unwrap();
    let visits = std::sync::atomic::AtomicUsize::new(0);
    let stats = frontier
        .run(1, |job| {
            let (hooks, frontier, visits) = (&hooks, &frontier, &visits);
            async move {
                let page = job.url().clone();
                fetch(hooks, job).await;
                if visits.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 2 {
                    frontier.stop();
                }
                let links = ["x", "y"]
                    .iter()
                    .map(|name| page.join(&format!("{}{name}", page.path())).unwrap())
                    .collect();
                Visit::Fetched(links)
            }
        })
        .await;
    // Pages 0, 0x, 0y fetched; queued at the stop: 0xx, 0xy; found after: 0yx, 0yy.
    assert_eq!((stats.fetched, stats.not_crawled), (3, 4), "{stats:?}");
    assert_eq!(stats.pushed, 5, "{stats:?}");
    assert_eq!(stats.queued, 0, "{stats:?}");
}

/// Each cause has its own retry limit: a page answered 429 every time is retried
/// `distress_retries` times (3) and given up, though `max_retries` is 0.
#[tokio::test(start_paused = true)]
async fn distress_answers_have_a_retry_limit_of_their_own() {
    let gate = RobotsConfig::<ForLayer>::new("FooBot/1.0")
        .delay_factor(0.0)
        .min_delay(Duration::ZERO)
        .gate();
    let hooks = RobotsHooks::from_gate(gate.clone(), site());
    let frontier = Frontier::new(gate, FrontierConfig::default().max_retries(0));
    frontier.try_push(url("http://a.example/busy")).unwrap();
    let answers = std::sync::atomic::AtomicUsize::new(0);
    let stats = frontier
        .run(1, |job| {
            let (hooks, answers) = (&hooks, &answers);
            async move {
                let ticket = hooks.admit(job.url()).await.expect("allowed");
                answers.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let mut headers = http::HeaderMap::new();
                headers.insert(http::header::RETRY_AFTER, "1".parse().unwrap());
                ticket.finish(429, &headers).await;
                Visit::Fetched(Vec::new())
            }
        })
        .await;
    assert_eq!(answers.load(std::sync::atomic::Ordering::SeqCst), 4);
    assert_eq!(
        (
            stats.distress,
            stats.retried,
            stats.gave_up,
            stats.gave_up_distress,
            stats.fetched
        ),
        (4, 3, 1, 1, 0),
        "{stats:?}"
    );
}

/// `Job::will_retry` tells a handler which answers the loop will send again, so that it says
/// each URL's end once: a 429 retried says nothing, the last one (past `distress_retries`)
/// is the end. The last answer counts: a page the handler retried itself and got is no
/// distress for the loop.
#[tokio::test(start_paused = true)]
async fn will_retry_tells_a_handler_which_answers_are_not_the_urls_end() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let gate = RobotsConfig::<ForLayer>::new("FooBot/1.0")
        .delay_factor(0.0)
        .min_delay(Duration::ZERO)
        .gate();
    let hooks = RobotsHooks::from_gate(gate.clone(), site());
    let frontier = Frontier::new(gate, FrontierConfig::default().distress_retries(1));
    for path in ["/busy", "/flaky", "/ok"] {
        frontier
            .try_push(url(&format!("http://a.example{path}")))
            .unwrap();
    }
    let ends = Mutex::new(Vec::new());
    let sent = AtomicUsize::new(0);
    let stats = frontier
        .run(1, |job| {
            let (hooks, ends, sent) = (&hooks, &ends, &sent);
            async move {
                let mut headers = http::HeaderMap::new();
                headers.insert(http::header::RETRY_AFTER, "1".parse().unwrap());
                let status = match job.url().path() {
                    "/busy" => 429,
                    "/flaky" => {
                        // The handler's own retry, within the visit, gets the page.
                        let ticket = hooks.admit(job.url()).await.expect("allowed");
                        sent.fetch_add(1, Ordering::SeqCst);
                        ticket.finish(503, &headers).await;
                        200
                    }
                    _ => 200,
                };
                let ticket = hooks.admit(job.url()).await.expect("allowed");
                sent.fetch_add(1, Ordering::SeqCst);
                ticket.finish(status, &headers).await;
                let visit = Visit::Fetched(Vec::new());
                if !job.will_retry(&visit) {
                    ends.lock()
                        .unwrap()
                        .push((job.url().path().to_string(), status));
                }
                visit
            }
        })
        .await;
    let ends = ends.into_inner().unwrap();
    assert_eq!(
        ends,
        [
            ("/flaky".into(), 200),
            ("/ok".into(), 200),
            ("/busy".into(), 429)
        ],
        "one end per URL, in the order their ends came (a retry goes behind its group's queue)"
    );
    // /busy twice, /flaky twice (one visit), /ok once.
    assert_eq!(sent.load(Ordering::SeqCst), 5);
    assert_eq!(
        (
            stats.distress,
            stats.retried,
            stats.gave_up_distress,
            stats.fetched
        ),
        (2, 1, 1, 2),
        "{stats:?}"
    );
    // A job from `next` is never retried by the frontier itself.
    frontier.close();
    let (_hooks, frontier) = setup(|c| c, FrontierConfig::default());
    frontier.try_push(url("http://a.example/x")).unwrap();
    frontier.close();
    let job = frontier.next().await.expect("queued");
    assert!(!job.will_retry(&Visit::Retry(Duration::ZERO)));
}

/// Nothing a crawl is given or finds ends unheard: what a stop left queued or waiting for a
/// retry, the links found after it, and a job's links past its overdraft all reach
/// `on_not_crawled`, each once, and are counted.
#[tokio::test(start_paused = true)]
async fn what_a_crawl_leaves_is_heard_as_not_crawled() {
    let left = Arc::new(Mutex::new(Vec::new()));
    let heard = left.clone();
    let config = FrontierConfig::default()
        .max_pages(2)
        // About 20 short links beyond the fixed part (9.5 KB, `Frontier::bytes`).
        .max_bytes(10_500)
        .job_overdraft(0)
        .on_not_crawled(move |not| {
            let kind = if not.by_the_callers_limit() {
                "stopped"
            } else {
                "refused"
            };
            heard
                .lock()
                .unwrap()
                .push((kind, not.url().path().to_string()));
        });
    let (hooks, frontier) = setup(|c| c.min_delay(Duration::ZERO), config);
    frontier.try_push(url("http://a.example/0")).unwrap();
    let stats = frontier
        .run(1, |job| {
            let hooks = &hooks;
            async move {
                let page = job.url().clone();
                fetch(hooks, job).await;
                // More links than the budget holds.
                let links = (0..40)
                    .map(|n| {
                        page.join(&format!("/{}-{n:02}", page.path().trim_start_matches('/')))
                            .unwrap()
                    })
                    .collect();
                Visit::Fetched(links)
            }
        })
        .await;
    let left = left.lock().unwrap();
    assert_eq!(stats.fetched, 2, "{stats:?}");
    let stopped = left.iter().filter(|(kind, _)| *kind == "stopped").count() as u64;
    let refused = left.iter().filter(|(kind, _)| *kind == "refused").count() as u64;
    assert_eq!(stopped, stats.not_crawled, "{left:?} {stats:?}");
    assert_eq!(refused, stats.over_budget, "{left:?} {stats:?}");
    assert!(refused > 0 && stopped > 0, "{left:?}");
    // Every link of both pages, and nothing else: queued ones were fetched or stopped.
    let mut heard: Vec<&str> = left.iter().map(|(_, path)| path.as_str()).collect();
    heard.sort_unstable();
    heard.dedup();
    assert_eq!(heard.len(), left.len(), "each heard once: {left:?}");
    assert_eq!(
        left.len() as u64 + stats.fetched - 1,
        80,
        "{left:?} {stats:?}"
    );
}

/// A crawl fed from outside as it runs does not end between two seeds while a `Feeding`
/// guard is held, and ends by itself once it is dropped and the work is done.
#[tokio::test(start_paused = true)]
async fn a_crawl_fed_as_it_runs_ends_once_the_feeding_ends() {
    let (hooks, frontier) = setup(|c| c.min_delay(Duration::ZERO), FrontierConfig::default());
    let feeding = frontier.feeding();
    let seeder = frontier.clone();
    let seeds = tokio::spawn(async move {
        for n in 0..3 {
            tokio::time::sleep(Duration::from_secs(10)).await;
            seeder
                .push(url(&format!("http://a.example/{n}")))
                .await
                .unwrap();
        }
        drop(feeding);
    });
    let started = Instant::now();
    let stats = frontier
        .run(2, |job| {
            let hooks = &hooks;
            async move {
                fetch(hooks, job).await;
                Visit::Fetched(Vec::new())
            }
        })
        .await;
    seeds.await.unwrap();
    assert_eq!(stats.fetched, 3, "{stats:?}");
    assert!(started.elapsed() >= Duration::from_secs(30));
    assert!(frontier.is_closed());
}
