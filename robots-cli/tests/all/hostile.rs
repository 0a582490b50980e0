//! Hostile and careless servers against the `robots` binary (REP.md sections 8 and 11): values
//! that overflow, pauses that would shorten the back-off, malformed rate-limit members, names a
//! resolver override must agree on. Every case checks the process neither panics (a panic exits
//! 101, an error 2) nor crawls faster than it should, measured at the server.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::crawl::{by_url, crawl_async, gaps, json_lines};
use crate::politeness::{args, error_of, fleet, resolve, secs, site, starts, urls, with};
use crate::redis_server::RedisServer;
use crate::site::{Answer, Site};

/// The crawl ended normally (0, or 1 when some URL failed; not a panic's 101 nor a usage
/// error's 2), and said nothing about a panic on stderr.
fn no_panic(out: &std::process::Output, what: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("panicked") && matches!(out.status.code(), Some(0 | 1)),
        "{what}: exit {:?}\n{stderr}",
        out.status.code()
    );
}

/// A site whose first page answers `status` with `headers`, then pages.
async fn first_page_answers(status: &'static str, headers: &'static [&'static str]) -> Site {
    site("", move |n| match n {
        0 => Answer::status(status, headers),
        _ => Answer::ok("page"),
    })
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn overflowing_pause_headers_are_capped_not_fatal() {
    // Each asks for a pause too long to represent; capped at --max-retry-after (1 s here), the
    // next page comes no sooner, and the cap is said once per group.
    let cases: [(&str, &'static str, &'static [&'static str]); 5] = [
        (
            "X-RateLimit Unix reset past the clock",
            "200 OK",
            &[
                "X-RateLimit-Remaining: 0",
                "X-RateLimit-Reset: 9223372036854775808",
            ],
        ),
        (
            "RateLimit-Reset too large",
            "200 OK",
            &[
                "RateLimit-Remaining: 0",
                "RateLimit-Reset: 99999999999999999999",
            ],
        ),
        (
            "Retry-After too large",
            "503 Service Unavailable",
            &["Retry-After: 99999999999999999999"],
        ),
        (
            "Retry-After far in the future",
            "429 Too Many Requests",
            &["Retry-After: Fri, 31 Dec 9999 23:59:59 GMT"],
        ),
        (
            "a huge decimal reset",
            "200 OK",
            &[
                "X-RateLimit-Remaining: 0",
                "X-RateLimit-Reset: 18446744073709551615.5",
            ],
        ),
    ];
    let options = [
        "--min-delay",
        "0.05",
        "--delay-factor",
        "0",
        "--max-retry-after",
        "1",
        "--backoff-base",
        "0.2",
        "--backoff-max",
        "0.2",
    ];
    let mut sites = Vec::new();
    for (what, status, headers) in cases {
        sites.push((what, first_page_answers(status, headers).await));
    }
    let outs = futures_util::future::join_all(
        sites
            .iter()
            .map(|(_, site)| crawl_async(args(&options, &urls(site, &["/1", "/2"])))),
    )
    .await;
    for ((what, site), out) in sites.iter().zip(outs) {
        no_panic(&out, what);
        let lines = json_lines(&out);
        assert!(
            lines.iter().all(|l| l["outcome"] == "fetched"),
            "{what}: {lines:?}"
        );
        let gap = gaps(starts(&site.pages()))[0];
        assert!(secs(&gap) >= 0.95, "{what}: {gap:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            stderr.matches("above the maximum: clamped").count(),
            1,
            "{what}: {stderr}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_retry_after_shorter_than_the_back_off_still_backs_off() {
    // Four 503s saying "come back now" (0 s, a date in the past): the back-off (0.4, 0.8, then
    // the 1.0 cap) is waited all the same.
    let zero = site("", |n| match n {
        0 | 2 => Answer::status("503 Service Unavailable", &["Retry-After: 0"]),
        1 | 3 => Answer::status(
            "503 Service Unavailable",
            &["Retry-After: Thu, 01 Jan 1970 00:00:00 GMT"],
        ),
        _ => Answer::ok("page"),
    })
    .await;
    let options = [
        "--min-delay",
        "0.05",
        "--delay-factor",
        "0",
        "--backoff-base",
        "0.4",
        "--backoff-max",
        "1",
    ];
    let out = crawl_async(args(
        &options,
        &urls(&zero, &["/1", "/2", "/3", "/4", "/5"]),
    ))
    .await;
    no_panic(&out, "Retry-After: 0");
    let gaps = gaps(starts(&zero.pages()));
    // -10% jitter at most, and never above the maximum after it.
    for (gap, least) in gaps.iter().zip([0.36, 0.72, 0.9, 0.9]) {
        assert!(secs(gap) >= least, "{gaps:?}");
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("duration=0ns"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread")]
async fn rate_limit_members_only_lengthen_a_pause() {
    let options = [
        "--min-delay",
        "0.05",
        "--delay-factor",
        "0",
        "--backoff-base",
        "1.5",
        "--backoff-max",
        "1.5",
        // A reset too long for any clock pauses for this clamp (3 s), not for nothing.
        "--max-retry-after",
        "3",
    ];
    // An exhausted member without `t` or a window is a back-off step (1.5 s), however short
    // the other members' resets; a malformed member is ignored alone, and a huge reset is the
    // clamp; `t=1.5` is 2 s.
    let cases: [(&str, &'static [&'static str], f64); 3] = [
        (
            "a member without t",
            &["RateLimit: \"burst\";r=0;t=1, \"day\";r=0"],
            1.33,
        ),
        (
            "a malformed member beside a good one and a huge one",
            &["RateLimit: \"burst\";r=0;t=2, ;;x=\"\", \"huge\";r=0;t=99999999999999999999"],
            2.95,
        ),
        ("a decimal reset", &["RateLimit: \"burst\";r=0;t=1.5"], 1.95),
    ];
    let mut sites = Vec::new();
    for (what, headers, least) in cases {
        sites.push((what, least, first_page_answers("200 OK", headers).await));
    }
    let outs = futures_util::future::join_all(
        sites
            .iter()
            .map(|(_, _, site)| crawl_async(args(&options, &urls(site, &["/1", "/2"])))),
    )
    .await;
    for ((what, least, site), out) in sites.iter().zip(outs) {
        no_panic(&out, what);
        let gap = gaps(starts(&site.pages()))[0];
        assert!(secs(&gap) >= *least, "{what}: {gap:?}");
    }
}

/// Crawl-delay and Request-rate values above a day, under `honor`: refused like under `refuse`,
/// in one process and in a fleet (whose scripts must never see them).
#[tokio::test(flavor = "multi_thread")]
async fn a_crawl_delay_above_a_day_is_refused_even_when_honoured() {
    let huge = [
        "User-agent: *\nCrawl-delay: 18446744074\n",
        "User-agent: *\nRequest-rate: 1/99999999999999999999h\n",
        "User-agent: *\nCrawl-delay: 90000\n",
    ];
    let redis = RedisServer::start();
    for robots in huge {
        let site = site(robots, |_| Answer::ok("page")).await;
        let honour = ["--overlong-crawl-delay", "honor"];
        let mut runs = vec![("one process", args(&honour, &urls(&site, &["/a"])))];
        if let Some(redis) = &redis {
            runs.push(("a fleet", fleet(redis, &honour, urls(&site, &["/b"]))));
        }
        for (how, run) in runs {
            let out = crawl_async(run).await;
            no_panic(&out, robots);
            let lines = json_lines(&out);
            assert_eq!(lines.len(), 1, "{how}: {lines:?}");
            assert_eq!(
                lines[0]["outcome"], "crawl-delay-too-long",
                "{how}: {lines:?}"
            );
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(
                !stderr.contains("Redis is unreachable"),
                "{how}: a script error is not an outage\n{stderr}"
            );
        }
        assert!(site.pages().is_empty(), "{robots}: {:?}", site.pages());
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn check_prints_a_retry_after_as_capped() {
    let site = Site::start(|target, _| match target {
        "/robots.txt" => Answer::status(
            "503 Service Unavailable",
            &["Retry-After: 99999999999999999999"],
        ),
        _ => Answer::ok("page"),
    })
    .await;
    let url = site.url("/x");
    let out = tokio::task::spawn_blocking(move || {
        crate::cli::robots(
            &["check", "--agent", "FooBot", "--format", "json", &url],
            b"",
        )
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("\"retry_after\": 86400"), "{stdout}");
}

/// One resolution rule: an override holds for its port only, for the guard, the group and
/// the connection alike; names are compared without a trailing dot and in IDNA form.
#[tokio::test(flavor = "multi_thread")]
async fn one_resolution_rule_for_the_guard_the_groups_and_the_connection() {
    let port = Arc::new(AtomicUsize::new(0));
    let site = {
        let port = port.clone();
        Site::start(move |target, _| {
            let port = port.load(Ordering::SeqCst);
            match target {
                "/robots.txt" => Answer::ok(""),
                "/go" => Answer {
                    headers: vec![format!("Location: http://other.example:{port}/secret")],
                    ..Answer::status("302 Found", &[])
                },
                _ => Answer::ok("page"),
            }
        })
        .await
    };
    port.store(usize::from(site.port()), Ordering::SeqCst);
    // `other.example` is overridden on port 9 only: a hop to it on the site's port must not
    // connect to that override (curl's rule), and is refused rather than sent there.
    let mut extra = resolve(&site, &["public.example", "a.bücher.de"]);
    extra.extend([
        "--resolve".to_string(),
        "other.example:9:127.0.0.1".to_string(),
    ]);
    let options = with(&["--min-delay", "0.05"], &extra);
    let options: Vec<&str> = options.iter().map(String::as_str).collect();
    let go = site.url_as("public.example", "/go");
    let dotted = site.url_as("public.example.", "/dotted");
    let unicode = site.url_as("a.bücher.de", "/unicode");
    let out = crawl_async(args(
        &options,
        &[go.clone(), dotted.clone(), unicode.clone()],
    ))
    .await;
    no_panic(&out, "resolution");
    let lines = json_lines(&out);
    let refused = by_url(&lines, &go);
    assert_eq!(refused["outcome"], "error", "{refused}");
    assert!(error_of(refused).contains("port 9 only"), "{refused}");
    // A trailing dot and a Unicode name reach the override like their plain forms.
    assert_eq!(by_url(&lines, &dotted)["status"], 200, "{lines:?}");
    assert_eq!(by_url(&lines, &unicode)["status"], 200, "{lines:?}");
    let seen = site.seen();
    assert!(seen.iter().all(|s| s.target != "/secret"), "{seen:?}");
    // robots.txt once per host: the dotted name is the dotless one's origin.
    let robots_of = |host: &str| {
        seen.iter()
            .filter(|s| s.target == "/robots.txt" && s.host.as_deref() == Some(host))
            .count()
    };
    assert_eq!(robots_of("public.example"), 1, "{seen:?}");
    assert_eq!(robots_of("a.xn--bcher-kva.de"), 1, "{seen:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_page_redirect_loop_is_detected_not_counted() {
    let site = Site::start(|target, _| match target {
        "/robots.txt" => Answer::ok(""),
        "/a" => Answer::status("302 Found", &["Location: /b"]),
        "/b" => Answer::status("302 Found", &["Location: /a"]),
        _ => Answer::ok("page"),
    })
    .await;
    let url = site.url("/a");
    let out = crawl_async(args(&["--min-delay", "0.05"], std::slice::from_ref(&url))).await;
    no_panic(&out, "loop");
    let lines = json_lines(&out);
    let line = by_url(&lines, &url);
    assert_eq!(line["outcome"], "error", "{line}");
    assert!(error_of(line).contains("redirect loop"), "{line}");
    // /a and /b once each: the loop is seen when it closes, not after the hop limit.
    assert_eq!(site.pages().len(), 2, "{:?}", site.pages());
}

/// With several requests in flight per group, the URLs of an origin still start in the order
/// given after a pause holds them all back.
#[tokio::test(flavor = "multi_thread")]
async fn several_in_flight_start_in_the_order_given_after_a_pause() {
    let site = site("", |n| match n {
        0 => Answer::status("503 Service Unavailable", &["Retry-After: 1"]),
        _ => Answer::ok("page"),
    })
    .await;
    let paths = ["/p0", "/p1", "/p2", "/p3", "/p4", "/p5", "/p6"];
    let options = [
        "--min-delay",
        "0.05",
        "--delay-factor",
        "0",
        "--concurrency",
        "3",
        "--backoff-base",
        "0.2",
    ];
    let out = crawl_async(args(&options, &urls(&site, &paths))).await;
    no_panic(&out, "concurrency");
    let seen: Vec<String> = site.pages().iter().map(|s| s.target.clone()).collect();
    assert_eq!(seen, paths, "{seen:?}");
}

/// Every request to a server is in its group's budget (REP.md section 8), measured at the
/// server through the binary: robots.txt requests of several origins of one host are one at a
/// time and spaced like pages, the first page comes an interval after robots.txt, and a
/// response whose body streams slowly holds its place until its last byte.
#[tokio::test(flavor = "multi_thread")]
async fn robots_txt_and_slow_bodies_are_in_the_groups_budget() {
    // Four ports of 127.0.0.1, one host: robots.txt answers in 0.3 s on each.
    let mut sites = Vec::new();
    for _ in 0..4 {
        sites.push(
            Site::start(|target, _| match target {
                "/robots.txt" => Answer {
                    delay: std::time::Duration::from_millis(300),
                    ..Answer::ok("User-agent: *\nAllow: /\n")
                },
                "/slow" => Answer {
                    body_delay: std::time::Duration::from_millis(1500),
                    ..Answer::ok("a body that takes its time")
                },
                _ => Answer::ok("page"),
            })
            .await,
        );
    }
    // (--follow: the crawl reads bodies, for links; without it a body is dropped unread,
    // which ends its request at once.)
    let options = [
        "--min-delay",
        "0.4",
        "--delay-factor",
        "0",
        "--concurrency",
        "1",
        "--follow",
    ];
    let mut given: Vec<String> = sites.iter().map(|site| site.url("/page")).collect();
    given.push(sites[0].url("/slow"));
    given.push(sites[1].url("/after"));
    let out = crawl_async(args(&options, &given)).await;
    no_panic(&out, "budget");
    assert!(
        json_lines(&out).iter().all(|l| l["outcome"] == "fetched"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    // Everything the host saw, in order of arrival.
    let mut seen: Vec<(std::time::Instant, String)> = sites
        .iter()
        .flat_map(|site| site.seen().into_iter().map(|s| (s.at, s.target)))
        .collect();
    seen.sort();
    assert_eq!(seen.len(), 4 + 4 + 2, "{seen:?}");
    let robots: Vec<_> = seen
        .iter()
        .filter(|(_, target)| target == "/robots.txt")
        .map(|(at, _)| *at)
        .collect();
    // One at a time (0.3 s each) and spaced by the interval from each one's end.
    for gap in gaps(robots) {
        assert!(
            secs(&gap) >= 0.68,
            "robots.txt requests {gap:?} apart: {seen:?}"
        );
    }
    // Every request of any kind: at least the interval apart, robots.txt included.
    for gap in gaps(seen.iter().map(|(at, _)| *at).collect()) {
        assert!(secs(&gap) >= 0.38, "{gap:?} between two requests: {seen:?}");
    }
    // The request after the slow body came after its last byte (1.5 s) and the interval.
    let at = |target: &str| seen.iter().find(|(_, t)| t == target).map(|(at, _)| *at);
    let (slow, after) = (at("/slow").unwrap(), at("/after").unwrap());
    assert!(
        secs(&(after - slow)) >= 1.85,
        "the next request came {:?} after a body that took 1.5 s",
        after - slow
    );
}

/// `--retries N` (the middleware's `retries(n)`): a transient failure is sent again, each retry
/// a paced request that waits for the back-off the failure set; nothing is sent again without it.
#[tokio::test(flavor = "multi_thread")]
async fn retries_are_paced_requests_that_wait_for_the_back_off() {
    let flaky = site("", |n| match n {
        0 | 1 => Answer::status("503 Service Unavailable", &["Retry-After: 0"]),
        _ => Answer::ok("page"),
    })
    .await;
    let options = [
        "--min-delay",
        "0.05",
        "--delay-factor",
        "0",
        "--backoff-base",
        "0.4",
        "--backoff-max",
        "1",
        "--retries",
        "2",
    ];
    let out = crawl_async(args(&options, &urls(&flaky, &["/page"]))).await;
    no_panic(&out, "retries");
    let lines = json_lines(&out);
    assert_eq!(lines[0]["status"], 200, "{lines:?}");
    let gaps = gaps(starts(&flaky.pages()));
    assert_eq!(gaps.len(), 2, "two retries: {gaps:?}");
    // The back-off of the streak, not the server's "come back now": 0.4 s, then 0.8 s (-10%).
    assert!(secs(&gaps[0]) >= 0.36 && secs(&gaps[1]) >= 0.72, "{gaps:?}");
    // Without --retries, the 503 is the answer.
    let once = site("", |_| Answer::status("503 Service Unavailable", &[])).await;
    let out = crawl_async(args(&options[..8], &urls(&once, &["/page"]))).await;
    assert_eq!(json_lines(&out)[0]["status"], 503);
    assert_eq!(once.pages().len(), 1);
}

/// Issue 45: a bare 304 (the ETag alone) renews robots.txt for the `max-age` the copy was stored
/// with (RFC 9111 section 4.3.4), not for the 24-hour default: with a 1 s life, the crawl asks
/// again every second or so, in one process and in a fleet sharing the copy through Redis. With
/// the default it would ask once more, then never again.
#[tokio::test(flavor = "multi_thread")]
async fn a_bare_304_keeps_the_life_the_copy_was_given() {
    let answer = |target: &str, seen_before: usize| match (target, seen_before) {
        ("/robots.txt", 0) => Answer {
            headers: vec![
                "Content-Type: text/plain".into(),
                "ETag: \"v1\"".into(),
                "Cache-Control: max-age=1".into(),
            ],
            ..Answer::ok("User-agent: *\nAllow: /\n")
        },
        ("/robots.txt", _) => Answer::status("304 Not Modified", &["ETag: \"v1\""]),
        _ => Answer::ok("page"),
    };
    let options = [
        "--min-delay",
        "0.4",
        "--delay-factor",
        "0",
        "--robots-min-ttl",
        "1",
    ];
    // About 5 s at 0.4 s per request: a refresh waits for its turn behind pages, so a 1 s life
    // leaves time for three or more asks, where the bug's day-long life allows two.
    let pages = [
        "/1", "/2", "/3", "/4", "/5", "/6", "/7", "/8", "/9", "/10", "/11", "/12",
    ];
    let one = Site::start(answer).await;
    let out = crawl_async(args(&options, &urls(&one, &pages))).await;
    no_panic(&out, "one process");
    let redis = RedisServer::start();
    let mut runs = vec![("one process", one)];
    if let Some(redis) = &redis {
        let shared = Site::start(answer).await;
        futures_util::future::join(
            crawl_async(fleet(redis, &options, urls(&shared, &pages[..6]))),
            crawl_async(fleet(redis, &options, urls(&shared, &pages[6..]))),
        )
        .await;
        runs.push(("a fleet", shared));
    }
    for (how, site) in runs {
        let seen = site.seen();
        let robots: Vec<_> = seen.iter().filter(|s| s.target == "/robots.txt").collect();
        // Every refresh asked with the ETag, and got the bare 304.
        assert!(
            robots[1..].iter().all(|s| s
                .head
                .to_ascii_lowercase()
                .contains("if-none-match: \"v1\"")),
            "{how}: {seen:?}"
        );
        assert!(
            robots.len() >= 3,
            "{how}: robots.txt asked {} times in {:?}: the 304 renewed the copy for longer than its 1 s",
            robots.len(),
            seen.last().map(|s| s.at.duration_since(seen[0].at))
        );
        assert_eq!(
            seen.iter().filter(|s| s.target != "/robots.txt").count(),
            pages.len(),
            "{how}"
        );
    }
}

/// Issue 45: the rate-limit forms of the IETF drafts up to revision 07, which many APIs still
/// send, pause the group until their reset (or their policy's window), in one process and in a
/// fleet, where the second process waits out what the first was told.
#[tokio::test(flavor = "multi_thread")]
async fn the_earlier_drafts_rate_limit_forms_pause_the_group() {
    let options = ["--min-delay", "0.05", "--delay-factor", "0"];
    let cases: [(&str, &'static [&'static str], f64); 4] = [
        (
            "a dictionary",
            &["RateLimit: limit=1, remaining=0, reset=2"],
            1.95,
        ),
        (
            "a dictionary without reset, with its policy",
            &["RateLimit: limit=1, remaining=0", "RateLimit-Policy: 1;w=2"],
            1.95,
        ),
        (
            "separate fields without reset, with the policy",
            &[
                "RateLimit-Limit: 1",
                "RateLimit-Remaining: 0",
                "RateLimit-Policy: 1;w=2",
            ],
            1.95,
        ),
        (
            "a decimal reset",
            &["RateLimit: limit=1, remaining=0, reset=1.5"],
            1.95,
        ),
    ];
    let redis = RedisServer::start();
    for (what, headers, least) in cases {
        let alone = first_page_answers("200 OK", headers).await;
        let out = crawl_async(args(&options, &urls(&alone, &["/1", "/2"]))).await;
        no_panic(&out, what);
        let gap = gaps(starts(&alone.pages()))[0];
        assert!(secs(&gap) >= least, "{what}, one process: {gap:?}");
        if let Some(redis) = &redis {
            let shared = first_page_answers("200 OK", headers).await;
            crawl_async(fleet(redis, &options, urls(&shared, &["/first"]))).await;
            crawl_async(fleet(redis, &options, urls(&shared, &["/second"]))).await;
            let gap = gaps(starts(&shared.pages()))[0];
            assert!(secs(&gap) >= least, "{what}, a fleet: {gap:?}");
        }
    }
}
