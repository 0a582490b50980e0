//! `robots check` without `--robots`: each origin's robots.txt fetched once per run, with the
//! outcome table applied, against real local servers.

use std::process::Output;
use std::time::{Duration, Instant};

use wiremock::matchers::path;
use wiremock::{Mock, MockServer, ResponseTemplate};

fn robots(args: &[&str]) -> Output {
    crate::cli::robots(args, b"")
}

/// A server whose robots.txt must be requested exactly `runs` times (once per CLI run).
async fn serve(status: u16, body: &str, runs: u64) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(path("/robots.txt"))
        .respond_with(ResponseTemplate::new(status).set_body_string(body))
        .expect(runs)
        .mount(&server)
        .await;
    server
}

fn lines(out: &Output) -> Vec<String> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(String::from)
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn fetched_rules_apply_once_per_origin() {
    let server = serve(200, "User-agent: *\nDisallow: /private\n", 1).await;
    let (a, b) = (
        format!("{}/private/x", server.uri()),
        format!("{}/public", server.uri()),
    );
    let out = tokio::task::spawn_blocking(move || {
        robots(&[
            "check",
            "--user-agent",
            "FooBot/1.0",
            "--format",
            "json",
            &a,
            &b,
        ])
    })
    .await
    .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines = lines(&out);
    assert_eq!(
        lines[0],
        format!(
            "{{\"url\": \"{}/private/x\", \"allowed\": false, \"rule\": {{\"line\": 2, \"kind\": \"disallow\", \"pattern\": \"/private\"}}, \"usage\": {{\"train-ai\": null, \"search\": null, \"content-signal\": null}}, \"resolved_path\": null, \"robots\": {{\"outcome\": \"parsed\", \"status\": 200}}}}",
            server.uri()
        )
    );
    assert_eq!(
        lines[1],
        format!(
            "{{\"url\": \"{}/public\", \"allowed\": true, \"rule\": null, \"usage\": {{\"train-ai\": null, \"search\": null, \"content-signal\": null}}, \"resolved_path\": null, \"robots\": {{\"outcome\": \"parsed\", \"status\": 200}}}}",
            server.uri()
        )
    );
    server.verify().await; // one request for both URLs
}

#[tokio::test(flavor = "multi_thread")]
async fn missing_robots_txt_allows_and_server_errors_disallow() {
    let missing = serve(404, "", 2).await;
    let failing = serve(503, "", 2).await;
    let (a, b) = (
        format!("{}/x", missing.uri()),
        format!("{}/x", failing.uri()),
    );
    let out = tokio::task::spawn_blocking(move || {
        robots(&["check", "--agent", "FooBot", "--format", "json", &a, &b])
    })
    .await
    .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let lines = lines(&out);
    // The existing fields keep their meaning; `reason` (and more) say why.
    assert!(lines[0].contains("\"allowed\": true, \"rule\": null, \"usage\": {\"train-ai\": null, \"search\": null, \"content-signal\": null}, \"resolved_path\": null, \"robots\": {\"outcome\": \"unavailable\", \"status\": 404, \"reason\": \"status\"}"), "{}", lines[0]);
    assert!(lines[1].contains("\"allowed\": false, \"rule\": null, \"usage\": {\"train-ai\": null, \"search\": null, \"content-signal\": null}, \"resolved_path\": null, \"robots\": {\"outcome\": \"unreachable\", \"status\": 503, \"reason\": \"status\"}"), "{}", lines[1]);
    let text = {
        let (a, b) = (
            format!("{}/x", missing.uri()),
            format!("{}/x", failing.uri()),
        );
        tokio::task::spawn_blocking(move || robots(&["check", "--agent", "FooBot", &a, &b]))
            .await
            .unwrap()
    };
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("robots.txt unreachable") && text.contains("HTTP 503"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_silent_server_costs_at_most_the_timeout() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    let url = format!("http://{addr}/page");
    let started = Instant::now();
    let out = tokio::task::spawn_blocking(move || {
        robots(&[
            "check",
            "--agent",
            "FooBot",
            "--timeout",
            "1",
            "--format",
            "json",
            &url,
        ])
    })
    .await
    .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "took {:?}",
        started.elapsed()
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(lines(&out)[0].contains("\"allowed\": false, \"rule\": null, \"usage\": {\"train-ai\": null, \"search\": null, \"content-signal\": null}, \"resolved_path\": null, \"robots\": {\"outcome\": \"unreachable\", \"status\": null, \"reason\": \"timeout\", \"message\": "), "{:?}", lines(&out));
    server.abort();
}

#[test]
fn urls_without_an_origin_are_input_errors() {
    for bad in ["/relative", "not a url"] {
        let out = robots(&["check", "--agent", "FooBot", bad]);
        assert_eq!(out.status.code(), Some(2), "{bad}");
        assert!(!out.stderr.is_empty());
    }
    // A URL of another scheme has no robots.txt: its own line says so, and it is not fetched.
    let out = robots(&["check", "--agent", "FooBot", "mailto:a@b.c"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .contains("[robots.txt unreachable, unsupported scheme, "),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let out = robots(&[
        "check",
        "--agent",
        "FooBot",
        "--timeout",
        "-1",
        "http://e.com/",
    ]);
    assert_eq!(out.status.code(), Some(2));
}

#[tokio::test(flavor = "multi_thread")]
async fn sitemaps_are_listed_once_per_origin() {
    let server = serve(
        200,
        "Sitemap: https://e.example/a.xml\nUser-agent: *\nDisallow: /x\nSitemap: https://e.example/b.xml\n",
        1,
    )
    .await;
    let down = serve(503, "", 1).await;
    let (a, b, c) = (
        format!("{}/one", server.uri()),
        format!("{}/two", server.uri()),
        format!("{}/", down.uri()),
    );
    let out =
        tokio::task::spawn_blocking(move || robots(&["sitemaps", "--format", "json", &a, &b, &c]))
            .await
            .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "an unreachable robots.txt means exit 1"
    );
    let lines = lines(&out);
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(
        lines[0],
        format!(
            "{{\"origin\": \"{}\", \"robots\": {{\"outcome\": \"parsed\", \"status\": 200}}, \"sitemaps\": [\"https://e.example/a.xml\", \"https://e.example/b.xml\"], \"ignored\": []}}",
            server.uri()
        )
    );
    assert!(
        lines[1].contains("\"outcome\": \"unreachable\"") && lines[1].contains("\"sitemaps\": []")
    );
    server.verify().await;
    down.verify().await;
}

/// A server whose robots.txt answers `status` with these headers.
async fn serve_with(status: u16, headers: &[(&str, &str)]) -> MockServer {
    serve_with_on("127.0.0.1:0", status, headers).await
}

/// [`serve_with`] on another loopback address: a server of its own politeness group (a pause it
/// asks for holds no other test server's robots.txt).
async fn serve_with_on(address: &str, status: u16, headers: &[(&str, &str)]) -> MockServer {
    let listener = std::net::TcpListener::bind(address).unwrap();
    let server = MockServer::builder().listener(listener).start().await;
    let mut response = ResponseTemplate::new(status);
    for (name, value) in headers {
        response = response.insert_header(*name, *value);
    }
    Mock::given(path("/robots.txt"))
        .respond_with(response)
        .mount(&server)
        .await;
    server
}

#[tokio::test(flavor = "multi_thread")]
async fn network_mode_says_why_robots_txt_could_not_be_used() {
    // On an address of its own: the 120 s it asks for pauses its server, not the others'.
    let throttled = serve_with_on("127.0.0.2:0", 503, &[("Retry-After", "120")]).await;
    let looping = serve_with(302, &[("Location", "/robots.txt")]).await;
    // A port nothing listens on: connection refused.
    let refused = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        drop(listener);
        format!("http://127.0.0.1:{port}/x")
    };
    let urls = vec![
        format!("{}/x", throttled.uri()),
        format!("{}/x", looping.uri()),
        refused,
        "ftp://127.0.0.1/file".to_string(),
    ];
    let json_urls = urls.clone();
    let out = tokio::task::spawn_blocking(move || {
        let mut args = vec![
            "check",
            "--agent",
            "FooBot",
            "--timeout",
            "3",
            "--format",
            "json",
        ];
        args.extend(json_urls.iter().map(String::as_str));
        robots(&args)
    })
    .await
    .unwrap();
    let lines = lines(&out);
    assert!(lines[0].contains("\"robots\": {\"outcome\": \"unreachable\", \"status\": 503, \"reason\": \"status\", \"retry_after\": 120}"), "{}", lines[0]);
    assert!(lines[1].contains("\"robots\": {\"outcome\": \"unavailable\", \"status\": 302, \"reason\": \"redirect_loop\"}"), "{}", lines[1]);
    assert!(
        lines[2].contains("\"reason\": \"connect\", \"message\": "),
        "{}",
        lines[2]
    );
    assert!(
        lines[3].contains("\"reason\": \"unsupported_scheme\""),
        "{}",
        lines[3]
    );
    // The same reasons, for people.
    let out = tokio::task::spawn_blocking(move || {
        let mut args = vec!["check", "--agent", "FooBot", "--timeout", "3"];
        args.extend(urls.iter().map(String::as_str));
        robots(&args)
    })
    .await
    .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].ends_with("[robots.txt unreachable, HTTP 503, Retry-After 120 s]"),
        "{text}"
    );
    assert!(
        lines[1].contains("[robots.txt unavailable, redirect loop, HTTP 302]"),
        "{text}"
    );
    assert!(
        lines[2].contains("[robots.txt unreachable, connect, "),
        "{text}"
    );
    assert!(
        lines[3].contains("[robots.txt unreachable, unsupported scheme, "),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_redirected_robots_txt_shows_where_it_was_found() {
    let server = MockServer::start().await;
    Mock::given(path("/robots.txt"))
        .respond_with(ResponseTemplate::new(301).insert_header("Location", "/moved/robots.txt"))
        .mount(&server)
        .await;
    Mock::given(path("/moved/robots.txt"))
        .respond_with(
            ResponseTemplate::new(200).set_body_string("User-agent: *\nDisallow: /private\n"),
        )
        .mount(&server)
        .await;
    let url = format!("{}/private/x", server.uri());
    let json_url = url.clone();
    let out = tokio::task::spawn_blocking(move || {
        robots(&["check", "--agent", "FooBot", "--format", "json", &json_url])
    })
    .await
    .unwrap();
    let line = &lines(&out)[0];
    assert!(
        line.ends_with(&format!(
            "\"robots\": {{\"outcome\": \"parsed\", \"status\": 200, \"final_url\": \"{}/moved/robots.txt\"}}}}",
            server.uri()
        )),
        "{line}"
    );
    let out = tokio::task::spawn_blocking(move || robots(&["check", "--agent", "FooBot", &url]))
        .await
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("redirected to ") && text.contains("/moved/robots.txt]"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn fetched_rules_carry_usage_preferences() {
    let server = serve(
        200,
        "User-agent: *\nDisallow: /private\nContent-Usage: train-ai=n\nContent-Signal: /news/ ai-input=yes\n",
        1,
    )
    .await;
    let urls = [
        format!("{}/news/a", server.uri()),
        format!("{}/private/x", server.uri()),
    ];
    let out = tokio::task::spawn_blocking(move || {
        robots(&[
            "check", "--agent", "FooBot", "--format", "json", &urls[0], &urls[1],
        ])
    })
    .await
    .unwrap();
    let lines = lines(&out);
    assert!(
        lines[0].contains("\"usage\": {\"train-ai\": \"n\", \"search\": null, \"content-signal\": {\"search\": null, \"ai-input\": \"yes\", \"ai-train\": null}}, \"resolved_path\": null, \"robots\": {\"outcome\": \"parsed\""),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].contains("\"allowed\": false")
            && lines[1].contains(
                "\"usage\": {\"train-ai\": null, \"search\": null, \"content-signal\": null}, \"resolved_path\": null"
            ),
        "{}",
        lines[1]
    );
}

/// A relative `Sitemap:` gets one answer: `lint` calls it an error crawlers ignore, and
/// `sitemaps` lists it as ignored (with the URL it would be if resolved), not as a sitemap, in
/// text and JSON.
#[tokio::test(flavor = "multi_thread")]
async fn a_relative_sitemap_is_ignored_in_every_command() {
    let body = "User-agent: *\nDisallow: /x\nSitemap: https://e.com/s.xml\nSitemap: /relative-sitemap.xml\n";
    let server = serve(200, body, 2).await;
    let origin = server.uri();
    let json = tokio::task::spawn_blocking({
        let origin = origin.clone();
        move || robots(&["sitemaps", "--format", "json", &format!("{origin}/")])
    })
    .await
    .unwrap();
    let line: serde_json::Value = serde_json::from_slice(&json.stdout).expect("one JSON object");
    assert_eq!(line["sitemaps"], serde_json::json!(["https://e.com/s.xml"]));
    assert_eq!(
        line["ignored"],
        serde_json::json!([{
            "value": "/relative-sitemap.xml",
            "resolved": format!("{origin}/relative-sitemap.xml"),
        }])
    );
    let text = tokio::task::spawn_blocking({
        let origin = origin.clone();
        move || robots(&["sitemaps", &format!("{origin}/")])
    })
    .await
    .unwrap();
    // Stdout: the sitemaps alone, a line each; what is said about them on stderr.
    let said = String::from_utf8_lossy(&text.stderr).to_string();
    let text = String::from_utf8_lossy(&text.stdout);
    assert_eq!(
        text.lines().collect::<Vec<_>>(),
        [format!("{origin}  https://e.com/s.xml")]
    );
    assert!(
        said.contains(&format!(
            "robots: {origin}: ignored by crawlers: `Sitemap: /relative-sitemap.xml` is not an absolute http(s) URL (it would be {origin}/relative-sitemap.xml if resolved; crawlers do not)"
        )),
        "{said}"
    );
    let lint = crate::cli::robots(&["lint", "-"], body.as_bytes());
    let lint = String::from_utf8_lossy(&lint.stdout);
    assert!(lint.contains("-:4: error: relative_sitemap:"), "{lint}");
}

/// Issue 36, point 3: `sitemaps` names the crawler as `check` and `crawl` do: `--agent` (sent as
/// the User-Agent without `--user-agent`), `--user-agent`, or by default `robots-sitemaps`.
#[tokio::test(flavor = "multi_thread")]
async fn sitemaps_names_the_crawler_as_the_other_commands_do() {
    let server = MockServer::start().await;
    let origin = server.uri();
    for (crawler, sent) in [
        (vec![], "robots-sitemaps"),
        (vec!["--agent", "FooBot"], "FooBot"),
        (vec!["--token", "FooBot"], "FooBot"),
        (
            vec!["--user-agent", "FooBot/2.1 (+https://foo.example/bot)"],
            "FooBot/2.1 (+https://foo.example/bot)",
        ),
    ] {
        server.reset().await;
        Mock::given(path("/robots.txt"))
            .respond_with(
                ResponseTemplate::new(200).set_body_string("Sitemap: https://e.com/s.xml\n"),
            )
            .mount(&server)
            .await;
        let url = format!("{origin}/");
        let args: Vec<String> = std::iter::once("sitemaps".to_string())
            .chain(crawler.iter().map(|s| s.to_string()))
            .chain([url])
            .collect();
        let out = tokio::task::spawn_blocking(move || {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            robots(&args)
        })
        .await
        .unwrap();
        assert_eq!(out.status.code(), Some(0), "{crawler:?}");
        assert!(String::from_utf8_lossy(&out.stdout).contains("https://e.com/s.xml"));
        let requests = server.received_requests().await.unwrap_or_default();
        let agents: Vec<&str> = requests
            .iter()
            .filter_map(|r| r.headers.get("user-agent")?.to_str().ok())
            .collect();
        assert_eq!(agents, [sent], "{crawler:?}");
    }
}

/// Issue 36, point 4, for `sitemaps`: a stdin line that is not a URL is said with its line
/// number, the other lines are still looked up and answered, and the exit status is 2 at the
/// end.
#[tokio::test(flavor = "multi_thread")]
async fn sitemaps_names_a_bad_stdin_line_and_answers_the_others() {
    let server = serve(200, "Sitemap: https://e.com/s.xml\n", 1).await;
    let stdin = format!("not a url\n\n{}/\n", server.uri());
    let out =
        tokio::task::spawn_blocking(move || crate::cli::robots(&["sitemaps"], stdin.as_bytes()))
            .await
            .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("stdin line 1") && stderr.contains("not a url"),
        "{stderr}"
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("https://e.com/s.xml"),
        "the good line is answered"
    );
}

/// Issue 69: `check` fetches robots.txt through the gate, as `crawl` does, so each redirect hop
/// to one server takes its place in the server's budget: at least the interval (1 s) apart, not
/// all at once.
#[tokio::test(flavor = "multi_thread")]
async fn robots_txt_redirect_hops_are_paced() {
    use robots_test_support::site::{Answer, Site};
    let site = Site::start(|target, _| match target {
        "/robots.txt" => Answer::status("301 Moved", &["Location: /r1"]),
        "/r1" => Answer::status("302 Found", &["Location: /r2"]),
        "/r2" => Answer::status("302 Found", &["Location: /r3"]),
        _ => Answer::ok("User-agent: *\nDisallow: /private\n"),
    })
    .await;
    let url = site.url("/private/x");
    let out = tokio::task::spawn_blocking(move || robots(&["check", "--agent", "FooBot", &url]))
        .await
        .unwrap();
    assert!(
        lines(&out)
            .iter()
            .any(|line| line.starts_with("DISALLOWED")),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let seen = site.seen();
    let targets: Vec<&str> = seen.iter().map(|s| s.target.as_str()).collect();
    assert_eq!(targets, ["/robots.txt", "/r1", "/r2", "/r3"]);
    for pair in seen.windows(2) {
        let gap = pair[1].at.duration_since(pair[0].at);
        assert!(
            gap >= Duration::from_millis(950),
            "{} after {gap:?}",
            pair[1].target
        );
    }
}

/// Issue 71: a rate-limit reset too long for any clock pauses the server for the clamp
/// (`--max-retry-after`), never for nothing.
#[tokio::test(flavor = "multi_thread")]
async fn a_huge_rate_limit_reset_pauses_for_the_clamp() {
    use robots_test_support::site::{Answer, Site};
    let site = Site::start(|target, _| match target {
        "/robots.txt" => Answer::ok("User-agent: *\nAllow: /\n"),
        "/a" => Answer {
            headers: vec!["RateLimit: \"b\";r=0;t=99999999999999999999".into()],
            ..Answer::ok("a")
        },
        _ => Answer::ok("b"),
    })
    .await;
    let (a, b) = (site.url("/a"), site.url("/b"));
    let out = tokio::task::spawn_blocking(move || {
        robots(&[
            "crawl",
            "--agent",
            "FooBot",
            "--min-delay",
            "0.01",
            "--delay-factor",
            "0",
            "--max-retry-after",
            "2",
            &a,
            &b,
        ])
    })
    .await
    .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let seen = site.seen();
    let at = |target: &str| seen.iter().find(|s| s.target == target).map(|s| s.at);
    let (Some(a), Some(b)) = (at("/a"), at("/b")) else {
        panic!("{seen:?}");
    };
    let gap = b.duration_since(a);
    assert!(
        gap >= Duration::from_millis(1900),
        "the next request {gap:?} after"
    );
}
