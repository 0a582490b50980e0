//! `robots crawl`, driven as other tools drive it: its JSON contract and exit status against a
//! raw local site that logs every request, and several processes sharing one real
//! `redis-server` (started on a free port of 127.0.0.1) as one polite crawler.
#![cfg(feature = "redis")]

use crate::redis_server;
use crate::site;

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use redis_server::RedisServer;
use serde_json::Value;
use site::{Answer, Site};

pub(crate) const UA: &str = "FooBot/1.0 (+https://foo.example/bot)";

/// robots.txt disallows /private; /go redirects into it; /busy answers 429 (Retry-After: 2)
/// the first time; / links to a few pages; /missing is a 404.
fn route(target: &str, seen_before: usize) -> Answer {
    match target {
        "/robots.txt" => Answer::ok("User-agent: *\nDisallow: /private\n"),
        "/go" => Answer::status("302 Found", &["Location: /private/y"]),
        "/busy" if seen_before == 0 => Answer::status("429 Too Many Requests", &["Retry-After: 2"]),
        "/missing" => Answer::status("404 Not Found", &[]),
        "/slow" => Answer {
            delay: Duration::from_secs(30),
            ..Answer::ok("slow")
        },
        "/" => Answer::ok(
            r#"<a href="/a">a</a> <a href="/b">b</a> <a href="/private/p">p</a>
               <a href="http://elsewhere.example/x">x</a> <a href="/c">c</a> <a href="/d">d</a>"#,
        ),
        _ => Answer::ok("<p>page</p>"),
    }
}

pub(crate) fn crawl(args: &[&str]) -> Output {
    crawl_with_log(args, None)
}

/// `robots crawl` with `RUST_LOG` set to `log`, or unset (whatever the test's environment).
pub(crate) fn crawl_with_log(args: &[&str], log: Option<&str>) -> Output {
    let args: Vec<&str> = std::iter::once("crawl")
        .chain(args.iter().copied())
        .collect();
    let env: Vec<(&str, &str)> = log.map(|log| ("RUST_LOG", log)).into_iter().collect();
    crate::cli::robots_with_env(&args, b"", &env)
}

pub(crate) async fn crawl_async(args: Vec<String>) -> Output {
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        crawl(&args)
    })
    .await
    .expect("the crawl finishes")
}

/// The per-URL JSON lines of a crawl (its final `{"summary": …}` object left out).
pub(crate) fn json_lines(out: &Output) -> Vec<Value> {
    all_json_lines(out)
        .into_iter()
        .filter(|line| line.get("summary").is_none())
        .collect()
}

fn all_json_lines(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// The final JSON object of a crawl: its summary (the last line, always).
pub(crate) fn summary(out: &Output) -> Value {
    let lines = all_json_lines(out);
    let last = lines.last().expect("a summary line");
    assert!(last.get("summary").is_some(), "the last line: {last}");
    assert_eq!(
        lines.iter().filter(|l| l.get("summary").is_some()).count(),
        1,
        "one summary"
    );
    last["summary"].clone()
}

pub(crate) fn by_url<'a>(lines: &'a [Value], url: &str) -> &'a Value {
    lines
        .iter()
        .find(|l| l["url"] == url)
        .unwrap_or_else(|| panic!("no line for {url}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn json_lines_follow_the_contract() {
    let site = Site::start(route).await;
    let urls = ["/page", "/private/x", "/go", "/missing"].map(|p| site.url(p));
    let mut args = vec![
        "--user-agent",
        UA,
        "--min-delay",
        "0.05",
        "--format",
        "json",
    ];
    args.extend(urls.iter().map(String::as_str));
    args.push("not a url");
    let args = args.iter().map(|s| s.to_string()).collect();
    let out = crawl_async(args).await;
    assert_eq!(
        out.status.code(),
        Some(2),
        "a string that is not a URL means exit 2, after every other URL"
    );
    let lines = json_lines(&out);
    assert_eq!(lines.len(), 5);
    // The keys, in the contract's order and spacing.
    let text = String::from_utf8_lossy(&out.stdout);
    for line in text.lines().filter(|l| !l.starts_with("{\"summary\"")) {
        let at: Vec<usize> = [
            "{\"url\": ",
            ", \"outcome\": ",
            ", \"status\": ",
            ", \"rule\": ",
            ", \"waited_ms\": ",
            ", \"error\": ",
        ]
        .iter()
        .map(|k| line.find(k).unwrap_or_else(|| panic!("no {k} in {line}")))
        .collect();
        assert!(at.windows(2).all(|w| w[0] < w[1]) && at[0] == 0, "{line}");
    }
    let page = by_url(&lines, &urls[0]);
    assert_eq!(
        (page["outcome"].as_str(), page["status"].as_u64()),
        (Some("fetched"), Some(200))
    );
    assert!(page["rule"].is_null() && page["error"].is_null() && page["waited_ms"].is_u64());
    let private = by_url(&lines, &urls[1]);
    assert_eq!(private["outcome"], "disallowed");
    assert_eq!(
        private["rule"],
        serde_json::json!({"line": 2, "kind": "disallow", "pattern": "/private"})
    );
    assert!(private["status"].is_null());
    assert_eq!(
        by_url(&lines, &urls[2])["outcome"],
        "disallowed",
        "redirect target checked"
    );
    assert_eq!(by_url(&lines, &urls[3])["status"], 404);
    // The final object says how it ended; a 404 is a fetched page, counted by its class.
    assert_eq!(
        summary(&out),
        serde_json::json!({
            "fetched": 2,
            "statuses": {"2xx": 1, "4xx": 1},
            "disallowed": 2,
            "crawl_delay_too_long": 0,
            "unreachable": 0,
            "address_refused": 0,
            "failed": 1,
            "not_crawled": 0,
            "ended": "done",
        })
    );
    let bad = by_url(&lines, "not a url");
    assert_eq!(bad["outcome"], "error");
    assert_eq!(
        bad["error"],
        "`not a url` is neither a URL (it has no `://`), nor a host and path (`example.com/search`), nor a path starting with `/`"
    );

    // On the wire: no disallowed path, and the crawler's identity on every request.
    let seen = site.seen();
    assert!(
        seen.iter().all(|s| !s.target.starts_with("/private")),
        "{seen:?}"
    );
    assert!(
        seen.iter().all(|s| s.user_agent.as_deref() == Some(UA)),
        "{seen:?}"
    );
    assert_eq!(site.count("/robots.txt"), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn follow_queues_same_origin_links_until_max_pages() {
    let site = Site::start(route).await;
    let args = [
        "--user-agent",
        UA,
        "--min-delay",
        "0.02",
        "--follow",
        "--max-pages",
        "4",
        "--format",
        "json",
        &site.url("/"),
    ];
    let out = crawl_async(args.iter().map(|s| s.to_string()).collect()).await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines = json_lines(&out);
    let fetched = lines.iter().filter(|l| l["outcome"] == "fetched").count();
    assert_eq!(fetched, 4, "{lines:?}");
    // It says that --max-pages stopped it, with links left.
    let ended = summary(&out);
    assert_eq!(ended["ended"], "max-pages", "{ended}");
    assert_eq!(ended["fetched"], 4, "{ended}");
    // Breadth-first from /, same origin only, and never the disallowed link.
    let pages: Vec<String> = site.pages().iter().map(|s| s.target.clone()).collect();
    assert_eq!(pages[0], "/");
    assert!(
        pages.iter().all(|p| !p.starts_with("/private")),
        "{pages:?}"
    );
}

#[test]
fn usage_errors_exit_with_2() {
    assert_eq!(
        crawl(&["https://e.example/"]).status.code(),
        Some(2),
        "no --user-agent"
    );
    let out = crawl(&[
        "--user-agent",
        UA,
        "--redis",
        "not a redis url",
        "https://e.example/",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a Redis URL"));
    let out = crawl(&[
        "--user-agent",
        UA,
        "--min-delay",
        "5",
        "--max-delay",
        "1",
        "https://e.example/",
    ]);
    assert_eq!(out.status.code(), Some(2));
    // The politeness flags: each bad value is one line on stderr and exit 2, nothing fetched.
    for (flag, value, says) in [
        ("--politeness-key", "server", "unknown politeness key"),
        (
            "--overlong-crawl-delay",
            "skip",
            "expected refuse, honor or clamp",
        ),
        ("--resolve", "a.test:80", "HOST:PORT:ADDR"),
        ("--resolve", "a.test:80:not-an-ip", "not an IP address"),
        ("--backoff-base", "-1", "not a number of seconds"),
        ("--backoff-max", "NaN", "not a number of seconds"),
        ("--delay-factor", "-0.5", "not a factor"),
        ("--min-delay", "inf", "not a number of seconds"),
    ] {
        let out = crawl(&["--user-agent", UA, flag, value, "https://e.example/"]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flag} {value}: {stderr}");
        assert!(stderr.contains(says), "{flag} {value}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{flag} {value}: {stderr}");
    }
    // Fractional seconds are fine: the flags are taken, and the crawl runs (to its one line for
    // a string that is not a URL, exit 2 at the end).
    let out = crawl(&[
        "--user-agent",
        UA,
        "--backoff-base",
        "0.25",
        "--backoff-max",
        "0.5",
        "--delay-factor",
        "1.5",
        "not a url",
    ]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("ERROR"));
}

fn fleet_args(redis: &str, site: &Site, paths: &[String]) -> Vec<String> {
    let mut args: Vec<String> = [
        "--user-agent",
        UA,
        "--redis",
        redis,
        "--fleet-size",
        "3",
        "--min-delay",
        "0.3",
        "--format",
        "json",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(paths.iter().map(|p| site.url(p)));
    args
}

pub(crate) fn gaps(mut times: Vec<Instant>) -> Vec<Duration> {
    times.sort();
    times.windows(2).map(|w| w[1] - w[0]).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn three_processes_crawl_as_one_polite_crawler() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let site = Site::start(route).await;
    let runs = (0..3).map(|p| {
        let paths: Vec<String> = (0..4)
            .map(|i| format!("/p{p}-{i}"))
            .chain([format!("/private/{p}"), "/go".to_string()])
            .collect();
        crawl_async(fleet_args(&redis.url(), &site, &paths))
    });
    let outs = futures_util::future::join_all(runs).await;
    for out in &outs {
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let lines = json_lines(out);
        assert_eq!(
            lines.iter().filter(|l| l["outcome"] == "fetched").count(),
            4
        );
        assert_eq!(
            lines
                .iter()
                .filter(|l| l["outcome"] == "disallowed")
                .count(),
            2
        );
    }
    let seen = site.seen();
    assert_eq!(
        site.count("/robots.txt"),
        1,
        "one robots.txt fetch for the fleet"
    );
    assert!(
        seen.iter().all(|s| !s.target.starts_with("/private")),
        "{seen:?}"
    );
    assert!(seen.iter().all(|s| s.user_agent.as_deref() == Some(UA)));
    let starts: Vec<Instant> = site.pages().iter().map(|s| s.at).collect();
    assert_eq!(starts.len(), 15, "12 pages and 3 redirects");
    for gap in gaps(starts) {
        assert!(
            gap >= Duration::from_millis(295),
            "two starts {gap:?} apart"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_429_in_one_process_pauses_the_others() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let site = Site::start(route).await;
    let out = crawl_async(fleet_args(&redis.url(), &site, &["/busy".to_string()])).await;
    assert_eq!(json_lines(&out)[0]["status"], 429);
    let busy_at = site.pages()[0].at;
    let others =
        (0..2).map(|p| crawl_async(fleet_args(&redis.url(), &site, &[format!("/after-{p}")])));
    futures_util::future::join_all(others).await;
    let first_after = site.pages()[1].at;
    assert!(
        first_after - busy_at >= Duration::from_millis(1950),
        "the others waited {:?} after the 429",
        first_after - busy_at
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_fleet_stays_polite_when_redis_goes_away_mid_crawl() {
    let Some(mut redis) = RedisServer::start() else {
        return;
    };
    let site = Site::start(route).await;
    let runs: Vec<_> = (0..2)
        .map(|p| {
            let paths: Vec<String> = (0..8)
                .map(|i| format!("/p{p}-{i}"))
                .chain([format!("/private/{p}")])
                .collect();
            let mut args = fleet_args(&redis.url(), &site, &paths);
            // Two processes: during the outage each paces at twice the interval.
            args[5] = "2".to_string();
            tokio::spawn(crawl_async(args))
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(700)).await;
    redis.stop();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    redis.restart();
    for run in runs {
        let out = run.await.unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{stderr}");
        // The outage is said once, and its end once (issue 26: no silent outages).
        assert_eq!(
            stderr.matches("Redis is unreachable").count(),
            1,
            "{stderr}"
        );
        assert_eq!(
            stderr.matches("Redis is reachable again").count(),
            1,
            "{stderr}"
        );
    }
    let seen = site.seen();
    assert!(
        seen.iter().all(|s| !s.target.starts_with("/private")),
        "{seen:?}"
    );
    for p in 0..2 {
        let prefix = format!("/p{p}-");
        let starts: Vec<Instant> = seen
            .iter()
            .filter(|s| s.target.starts_with(&prefix))
            .map(|s| s.at)
            .collect();
        assert_eq!(starts.len(), 8);
        for gap in gaps(starts) {
            assert!(gap >= Duration::from_millis(295), "process {p}: {gap:?}");
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_place_of_a_killed_process_is_freed() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let site = Site::start(route).await;
    let args = |path: &str| {
        let mut args = fleet_args(&redis.url(), &site, &[path.to_string()]);
        args.extend(["--timeout".to_string(), "3".to_string()]);
        args
    };
    // A process holds the origin's only place (a slow page) and is killed mid-request.
    let mut holder = Command::new(env!("CARGO_BIN_EXE_robots"))
        .arg("crawl")
        .args(args("/slow"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the robots binary runs");
    let deadline = Instant::now() + Duration::from_secs(10);
    while site.count("/slow") == 0 {
        assert!(
            Instant::now() < deadline,
            "the holder never sent its request"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    holder.kill().expect("kill");
    let _ = holder.wait();
    let slow_at = site.pages()[0].at;
    // The next process waits for the dead holder's lease (3 s timeout + 2 s), not forever.
    let out = crawl_async(args("/after")).await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let after_at = site.pages()[1].at;
    let waited = after_at - slow_at;
    assert!(
        waited >= Duration::from_millis(4900) && waited < Duration::from_secs(15),
        "the place was freed after {waited:?}"
    );
}

/// A Redis that is never there is said once on stderr (the crawl goes on, paced alone);
/// `RUST_LOG` lowers what is printed and `--quiet` silences it.
#[tokio::test(flavor = "multi_thread")]
async fn an_unreachable_redis_is_said_once_unless_quiet() {
    let site = Site::start(route).await;
    let args = |extra: &[&str]| -> Vec<String> {
        let mut args: Vec<String> = [
            "--user-agent",
            UA,
            "--redis",
            "redis://127.0.0.1:1/",
            "--fleet-size",
            "2",
            "--min-delay",
            "0.05",
            "--format",
            "json",
        ]
        .iter()
        .chain(extra)
        .map(|s| s.to_string())
        .collect();
        args.extend([site.url("/a"), site.url("/b")]);
        args
    };
    let run = |args: Vec<String>, log: Option<&'static str>| {
        tokio::task::spawn_blocking(move || {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            crawl_with_log(&args, log)
        })
    };
    let (said, lowered, quiet) = tokio::join!(
        run(args(&[]), None),
        run(args(&[]), Some("error")),
        run(args(&["--quiet"]), None)
    );
    let (said, lowered, quiet) = (said.unwrap(), lowered.unwrap(), quiet.unwrap());
    for out in [&said, &lowered, &quiet] {
        assert_eq!(out.status.code(), Some(0));
        assert_eq!(json_lines(out).len(), 2, "both pages fetched, paced alone");
    }
    let stderr = String::from_utf8_lossy(&said.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("WARN") && stderr.contains("Redis is unreachable: falling back"),
        "{stderr}"
    );
    assert!(
        lowered.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&lowered.stderr)
    );
    assert!(
        quiet.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&quiet.stderr)
    );
}

/// A fleet Redis that evicts keys when full would lose pacing state without anyone knowing: the
/// tool says so once, on stderr; with the default policy (no eviction) it says nothing.
#[tokio::test(flavor = "multi_thread")]
async fn a_fleet_redis_that_evicts_keys_is_warned_about() {
    let Some(evicting) =
        RedisServer::start_with(&["--maxmemory", "64mb", "--maxmemory-policy", "allkeys-lru"])
    else {
        return;
    };
    let Some(plain) = RedisServer::start_with(&["--maxmemory", "64mb"]) else {
        return;
    };
    let site = Site::start(route).await;
    let paths = ["/a".to_string(), "/b".to_string()];
    let (warned, silent) = tokio::join!(
        crawl_async(fleet_args(&evicting.url(), &site, &paths)),
        crawl_async(fleet_args(&plain.url(), &site, &paths))
    );
    for out in [&warned, &silent] {
        assert_eq!(out.status.code(), Some(0));
        assert_eq!(json_lines(out).len(), 2, "both pages fetched");
    }
    let stderr = String::from_utf8_lossy(&warned.stderr);
    assert_eq!(
        stderr.matches("maxmemory-policy allkeys-lru").count(),
        1,
        "{stderr}"
    );
    assert!(
        stderr.contains("set maxmemory-policy noeviction"),
        "{stderr}"
    );
    assert!(
        silent.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&silent.stderr)
    );
}

/// Issue 26: URLs of one origin go in the order given (across origins too), and `waited` is the
/// politeness wait once it was the URL's turn, not the time it sat queued behind the others.
/// Issue 48: a URL leaves the frontier when its group is ready, so the front end has nothing
/// left to wait: the spacing is the server's to see.
#[tokio::test(flavor = "multi_thread")]
async fn urls_of_one_origin_go_in_order_and_waited_is_the_politeness_wait() {
    let one = Site::start(route).await;
    let two = Site::start(route).await;
    let paths = ["/d", "/b", "/e", "/a", "/c"];
    let mut args: Vec<String> = [
        "--user-agent",
        UA,
        "--min-delay",
        "0.3",
        "--delay-factor",
        "0",
        "--politeness-key",
        "origin",
        "--format",
        "json",
    ]
    .map(String::from)
    .to_vec();
    for path in paths {
        args.push(one.url(path));
        args.push(two.url(path));
    }
    let out = crawl_async(args).await;
    assert_eq!(out.status.code(), Some(0));
    for site in [&one, &two] {
        let pages = site.pages();
        let order: Vec<String> = pages.iter().map(|s| s.target.clone()).collect();
        assert_eq!(order, paths, "in the order given");
        // Never faster than --min-delay (a little under it, for the clock of the other end).
        for pair in pages.windows(2) {
            let apart = pair[1].at - pair[0].at;
            assert!(apart >= Duration::from_millis(280), "{apart:?} apart");
        }
    }
    let lines = json_lines(&out);
    for site in [&one, &two] {
        for (n, path) in paths.iter().enumerate() {
            let waited = by_url(&lines, &site.url(path))["waited_ms"]
                .as_u64()
                .unwrap();
            // Never the n intervals it was queued behind, but the one it was first in line
            // for (the first, the interval after robots.txt).
            assert!(waited <= 450, "{path} (number {n}) waited {waited} ms");
            assert!(waited >= 200, "{path} (number {n}) waited {waited} ms");
        }
    }
}

/// Issue 26: a one-shot command says what happened to robots.txt, not when the cache would try
/// again (the process exits when done).
#[tokio::test(flavor = "multi_thread")]
async fn one_shot_commands_say_unreachable_with_the_cause_only() {
    let down = Site::start(|_, _| Answer::status("503 Service Unavailable", &[])).await;
    let out = crawl_async(
        ["--user-agent", UA, "--format", "json", &down.url("/x")]
            .map(String::from)
            .to_vec(),
    )
    .await;
    assert_eq!(out.status.code(), Some(1));
    let lines = json_lines(&out);
    let origin = down.url("");
    let origin = origin.trim_end_matches('/');
    assert_eq!(
        lines[0]["error"],
        format!("robots.txt of {origin} unreachable: the server answered 503")
    );
    let out = crate::cli::robots(&["sitemaps", &down.url("/x")], b"");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(&format!(
            "robots: {origin}: no sitemaps (unreachable: the server answered 503)"
        )),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for text in [&out.stdout, &out.stderr] {
        let text = String::from_utf8_lossy(text);
        assert!(!text.contains("retr") && !text.contains("since"), "{text}");
    }
}

/// Issue 36, point 3: `crawl --agent` selects the rules as `check --agent` does, and is sent as
/// the User-Agent when no `--user-agent` is given; `--token` still works; with both, the
/// User-Agent is sent and the token selects the rules.
#[tokio::test(flavor = "multi_thread")]
async fn crawl_takes_agent_like_check() {
    let site = Site::start(|target, _| match target {
        "/robots.txt" => {
            Answer::ok("User-agent: FooBot\nDisallow: /foo\n\nUser-agent: *\nDisallow: /all\n")
        }
        _ => Answer::ok("page"),
    })
    .await;
    let run = |crawler: &[&str]| {
        let mut args: Vec<String> = crawler.iter().map(|s| s.to_string()).collect();
        args.extend(
            ["--min-delay", "0", "--format", "json"]
                .map(String::from)
                .into_iter()
                .chain([site.url("/foo"), site.url("/all")]),
        );
        crawl_async(args)
    };
    for crawler in [
        &["--agent", "FooBot"][..],
        &["--token", "FooBot"],
        &["--agent", "FooBot", "--user-agent", UA],
    ] {
        site.clear();
        let out = run(crawler).await;
        let lines = json_lines(&out);
        assert_eq!(
            by_url(&lines, &site.url("/foo"))["outcome"],
            "disallowed",
            "{crawler:?}: {lines:?}"
        );
        assert_eq!(by_url(&lines, &site.url("/all"))["outcome"], "fetched");
        let sent: Vec<Option<String>> = site.seen().into_iter().map(|s| s.user_agent).collect();
        let expected = if crawler.len() > 2 { UA } else { "FooBot" };
        assert!(
            sent.iter().all(|ua| ua.as_deref() == Some(expected)),
            "{crawler:?}: {sent:?}"
        );
    }
    // Neither: a usage error.
    let out = crawl(&[&site.url("/")]);
    assert_eq!(out.status.code(), Some(2));
}

/// Issue 36, point 4, for `crawl`: a stdin line that is not a URL is said with its line number,
/// every other line is still fetched, and the exit status is 2 at the end.
#[tokio::test(flavor = "multi_thread")]
async fn crawl_names_a_bad_stdin_line_and_fetches_the_others() {
    let site = Site::start(route).await;
    let stdin = format!("not a url\n{}\n", site.url("/a"));
    let out = tokio::task::spawn_blocking(move || {
        crate::cli::robots(
            &[
                "crawl",
                "--agent",
                "FooBot",
                "--min-delay",
                "0",
                "--format",
                "json",
            ],
            stdin.as_bytes(),
        )
    })
    .await
    .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let lines = json_lines(&out);
    let bad = by_url(&lines, "not a url");
    assert_eq!(bad["outcome"], "error");
    assert!(
        bad["error"]
            .as_str()
            .is_some_and(|e| e.starts_with("stdin line 1: ")),
        "{bad}"
    );
    assert_eq!(by_url(&lines, &site.url("/a"))["outcome"], "fetched");
}

/// Issue 36, point 5, and issue 56: in text, stdout is for pipes, one line a URL (`| wc -l`
/// counts them); the summary says on stderr how the crawl ended, fetched pages counted by
/// status class (a 404 is a fetched page, and exit 0).
#[tokio::test(flavor = "multi_thread")]
async fn the_text_output_is_a_line_a_url_and_the_summary_goes_to_stderr() {
    let site = Site::start(route).await;
    let urls = ["/page", "/private/x", "/missing"].map(|p| site.url(p));
    let args = ["--agent", "FooBot", "--min-delay", "0"]
        .into_iter()
        .map(String::from)
        .chain(urls.clone())
        .collect();
    let out = crawl_async(args).await;
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.lines().count(), 3, "{text}");
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        said.lines().last(),
        Some(
            "robots: summary: 2 fetched (1 2xx, 1 4xx), 1 disallowed, 0 refused for their \
             Crawl-delay, 0 unreachable, 0 failed; done"
        ),
        "{said}"
    );
    // As a user pipes it.
    let command = format!(
        "{} crawl --agent FooBot --min-delay 0 {} | wc -l",
        env!("CARGO_BIN_EXE_robots"),
        urls.join(" ")
    );
    let piped = tokio::task::spawn_blocking(move || {
        Command::new("sh")
            .args(["-c", &command])
            .output()
            .expect("sh runs")
    })
    .await
    .expect("the pipe finishes");
    assert_eq!(String::from_utf8_lossy(&piped.stdout).trim(), "3");
}

/// The fleet's record of `site`'s robots.txt in `redis`: its key and text.
fn stored_robots(redis: &RedisServer) -> (String, String) {
    let keys = redis.command(&["KEYS", "*}:robots:*"]);
    let key = keys
        .lines()
        .nth(2)
        .expect("a stored robots.txt")
        .to_string();
    let reply = redis.command(&["GET", &key]);
    let (length, rest) = reply.split_once("\r\n").expect("a bulk reply");
    let length: usize = length.trim_start_matches('$').parse().expect("a length");
    (key, rest[..length].to_string())
}

/// The wall-clock time a stored record is due for a refresh.
fn refresh_ms(record: &str) -> u64 {
    record
        .lines()
        .find_map(|l| l.strip_prefix("refresh="))
        .and_then(|ms| ms.parse().ok())
        .expect("refresh=")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_fleet_refreshes_robots_txt_with_its_validators_and_keeps_the_rules_on_a_304() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    // The first answer carries an ETag; every later one says "not modified", fresh for an hour.
    let site = Site::start(|target, seen_before| match (target, seen_before) {
        ("/robots.txt", 0) => Answer {
            headers: vec!["ETag: \"v1\"".into(), "Cache-Control: max-age=600".into()],
            ..Answer::ok("User-agent: *\nDisallow: /private\n")
        },
        ("/robots.txt", _) => Answer::status(
            "304 Not Modified",
            &["ETag: \"v1\"", "Cache-Control: max-age=3600"],
        ),
        _ => Answer::ok("<p>page</p>"),
    })
    .await;
    let paths = |tag: &str| vec![format!("/{tag}"), format!("/private/{tag}")];
    let out = crawl_async(fleet_args(&redis.url(), &site, &paths("a"))).await;
    assert_eq!(out.status.code(), Some(0));
    let (key, record) = stored_robots(&redis);
    assert!(record.contains("etag=\"v1\""), "{record}");

    // A day later, as far as the record says: due for a refresh.
    let due = record.replace(&format!("refresh={}", refresh_ms(&record)), "refresh=1");
    redis.command(&["SET", &key, &due]);
    let out = crawl_async(fleet_args(&redis.url(), &site, &paths("b"))).await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines = json_lines(&out);
    assert_eq!(by_url(&lines, &site.url("/b"))["outcome"], "fetched");
    assert_eq!(
        by_url(&lines, &site.url("/private/b"))["outcome"],
        "disallowed",
        "the rules kept after the 304"
    );
    let robots: Vec<_> = site
        .seen()
        .into_iter()
        .filter(|s| s.target == "/robots.txt")
        .collect();
    assert_eq!(robots.len(), 2);
    assert!(
        !robots[0]
            .head
            .to_ascii_lowercase()
            .contains("if-none-match")
    );
    assert!(
        robots[1]
            .head
            .to_ascii_lowercase()
            .contains("if-none-match: \"v1\""),
        "{}",
        robots[1].head
    );
    // The 304 renewed the fleet's copy: an hour from now, the body still there.
    let (_, renewed) = stored_robots(&redis);
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    assert!(refresh_ms(&renewed) > now_ms + 3_000_000, "{renewed}");
    assert!(renewed.ends_with("Disallow: /private\n"), "{renewed}");
    // So the next process fetches nothing.
    let out = crawl_async(fleet_args(&redis.url(), &site, &paths("c"))).await;
    assert_eq!(
        by_url(&json_lines(&out), &site.url("/private/c"))["outcome"],
        "disallowed"
    );
    assert_eq!(site.count("/robots.txt"), 2);
}

/// Issue 71: a page is fetched only when its whole body came. A body that breaks off (300 of
/// its 100,000 bytes, then the connection closes) or is cut by `--timeout` while it drips is an
/// `error` line with its status and how many bytes came, and the crawl exits 1.
#[tokio::test(flavor = "multi_thread")]
async fn a_body_that_breaks_off_is_an_error_not_a_page() {
    let site = Site::start(|target, _| match target {
        "/robots.txt" => Answer::ok("User-agent: *\nAllow: /\n"),
        "/cut" => Answer {
            cut_after: Some(300),
            ..Answer::ok("x".repeat(100_000))
        },
        "/drip" => Answer {
            body_delay: Duration::from_secs(5),
            ..Answer::ok("y".repeat(1000))
        },
        _ => Answer::ok("<a href=\"/cut\">a</a>"),
    })
    .await;
    let urls = ["/whole", "/cut", "/drip"].map(|p| site.url(p));
    let mut args = vec![
        "--user-agent",
        UA,
        "--min-delay",
        "0",
        "--timeout",
        "1",
        "--format",
        "json",
    ];
    args.extend(urls.iter().map(String::as_str));
    let out = crawl_async(args.iter().map(|s| s.to_string()).collect()).await;
    let lines = json_lines(&out);
    assert_eq!(by_url(&lines, &urls[0])["outcome"], "fetched", "{lines:?}");
    for (url, came) in [(&urls[1], "after 300 bytes"), (&urls[2], "after 500 bytes")] {
        let line = by_url(&lines, url);
        assert_eq!(line["outcome"], "error", "{line}");
        assert_eq!(line["status"], 200, "{line}");
        let error = line["error"].as_str().unwrap_or_default();
        assert!(
            error.contains("the body broke off") && error.contains(came),
            "{line}"
        );
    }
    assert_eq!(summary(&out)["failed"], 2);
    assert_eq!(out.status.code(), Some(1));
}

/// Issue 71: `--timeout` bounds robots.txt too. A robots.txt that drips a byte at a time is
/// given up at the timeout, and its origin's URLs are refused then: not held again for the
/// group's turn, which the slow answer lengthened, since a refusal sends nothing.
#[tokio::test(flavor = "multi_thread")]
async fn a_dripping_robots_txt_is_given_up_at_the_timeout() {
    let site = Site::start(|target, _| match target {
        "/robots.txt" => Answer {
            body_delay: Duration::from_secs(30),
            ..Answer::ok("User-agent: *\nAllow: /\n".repeat(10))
        },
        _ => Answer::ok("page"),
    })
    .await;
    let url = site.url("/x");
    let args = [
        "--user-agent",
        UA,
        "--min-delay",
        "0",
        "--timeout",
        "2",
        // (Not held for robots.txt's next try, a minute away: given up at once.)
        "--hold-unreachable",
        "0",
        "--format",
        "json",
        url.as_str(),
    ];
    let started = Instant::now();
    let out = crawl_async(args.iter().map(|s| s.to_string()).collect()).await;
    let took = started.elapsed();
    let lines = json_lines(&out);
    assert_eq!(by_url(&lines, &url)["outcome"], "unreachable", "{lines:?}");
    assert_eq!(site.pages().len(), 0);
    // The fetch's 2 s, and not the 2 s more the adaptive delay would add.
    assert!(took < Duration::from_millis(3500), "{took:?}");
}

/// Issue 71: a crawl of five live sites and a dead one (nothing listens on its port) ends
/// about a minute after it starts, by the default `--hold-unreachable`: the live sites' pages
/// are fetched at once, and the dead site's URLs wait for its robots.txt's next try, a minute
/// on, and are given up then (`unreachable`, exit status 1). Before, its URLs were tried at
/// +0, +60, +180 and +420 s.
#[tokio::test(flavor = "multi_thread")]
async fn a_dead_site_holds_a_crawl_about_a_minute_not_minutes() {
    let mut live = Vec::new();
    for _ in 0..5 {
        live.push(
            Site::start(|target, _| match target {
                "/robots.txt" => Answer::ok("User-agent: *\nAllow: /\n"),
                _ => Answer::ok("a page"),
            })
            .await,
        );
    }
    let dead = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
        listener.local_addr().expect("its address")
    };
    let mut args: Vec<String> = [
        "--user-agent",
        UA,
        "--min-delay",
        "0",
        // Each local site its own group: the dead one holds up no other.
        "--politeness-key",
        "origin",
        "--format",
        "json",
    ]
    .map(String::from)
    .to_vec();
    for n in 0..3 {
        args.extend(live.iter().map(|site| site.url(&format!("/p{n}"))));
        args.push(format!("http://{dead}/p{n}"));
    }
    let started = Instant::now();
    let out = crawl_async(args).await;
    let took = started.elapsed();
    let lines = json_lines(&out);
    for site in &live {
        assert_eq!(site.pages().len(), 3);
    }
    let given_up: Vec<&Value> = lines
        .iter()
        .filter(|l| {
            l["url"]
                .as_str()
                .is_some_and(|u| u.contains(&dead.to_string()))
        })
        .collect();
    assert_eq!(given_up.len(), 3, "{lines:?}");
    assert!(
        given_up.iter().all(|l| l["outcome"] == "unreachable"),
        "{given_up:?}"
    );
    assert_eq!(summary(&out)["fetched"], 15);
    assert_eq!(out.status.code(), Some(1));
    // Held for robots.txt's next try, a minute on; then given up, not held for the next.
    assert!(
        took >= Duration::from_secs(55) && took < Duration::from_secs(80),
        "{took:?}"
    );
}
