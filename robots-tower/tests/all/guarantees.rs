//! The guarantees, checked on the wire: a raw local HTTP server logs every request line and
//! header it receives, and the tests assert what reached it through the tower layer (hyper's
//! client, tower-http's redirect following) and the reqwest middleware. No URL that resolves to a
//! disallowed path may arrive; every page request must say who is asking.

use crate::captured;
use crate::site;

use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use robots_fetch::BoxError;
use robots_tower::{IdentityHeaders, RobotsError, RobotsLayer, RobotsMiddleware};
use tower::{Service, ServiceBuilder, ServiceExt};
use tower_http::follow_redirect::FollowRedirectLayer;

use site::{Answer, Site};

const UA: &str = "FooBot/1.0 (+https://foo.example/bot)";
const FROM: &str = "ops@foo.example";

/// robots.txt disallows `/private`; `/go-private` redirects into `/private/`, `/go-file` to a
/// `file:` URL, `/go-js` to `javascript:`; anything else is a 200.
fn route(target: &str, _: usize) -> Answer {
    match target {
        "/robots.txt" => Answer::ok("User-agent: *\nDisallow: /private\n"),
        "/go-private" => Answer::status("301 Moved", &["Location: /private/"]),
        "/go-file" => Answer::status("302 Found", &["Location: file:///etc/passwd"]),
        "/go-js" => Answer::status("302 Found", &["Location: javascript:alert(1)"]),
        _ => Answer::ok("page"),
    }
}

/// Paths that servers resolve to `/private…`: dot segments, encoded ones, and a merged slash.
const DOT_SEGMENT_VARIANTS: [&str; 6] = [
    "/public/../private/x",
    "/public/%2e%2e/private/x",
    "/public/%2E%2E/private/x",
    "/./private/x",
    "/public/.%2e/private/x",
    "/a/..//private",
];

fn tower_client(
    layer: RobotsLayer,
) -> impl Service<
    http::Request<Full<Bytes>>,
    Response = http::Response<robots_tower::PacedBody<hyper::body::Incoming>>,
    Error = BoxError,
> + Clone {
    let client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
    ServiceBuilder::new()
        .layer(FollowRedirectLayer::new())
        .layer(layer)
        .service(client)
        .map_err(BoxError::from)
}

fn get(url: &str) -> http::Request<Full<Bytes>> {
    http::Request::get(url).body(Full::default()).unwrap()
}

fn middleware_error(error: &reqwest_middleware::Error) -> Option<&RobotsError> {
    RobotsError::from_middleware_error(error)
}

#[tokio::test]
async fn dot_segments_never_reach_the_server_through_the_layer() {
    let server = Site::start(route).await;
    let service = tower_client(RobotsLayer::builder(UA).min_delay(Duration::ZERO).build());
    for path in DOT_SEGMENT_VARIANTS {
        let error = service
            .clone()
            .oneshot(get(&server.url(path)))
            .await
            .unwrap_err();
        match error.downcast_ref::<RobotsError>() {
            Some(RobotsError::Disallowed {
                url,
                rule,
                resolved_path: Some(resolved),
            }) => {
                assert!(url.ends_with(path), "{url}");
                assert!(resolved.starts_with("/private"), "{path} → {resolved}");
                assert_eq!(rule.as_ref().map(|r| r.line), Some(2));
            }
            other => panic!("{path}: {other:?} ({error})"),
        }
    }
    // The control: an allowed path arrives as written, so the log is real.
    let response = service
        .clone()
        .oneshot(get(&server.url("/public/./x")))
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let pages: Vec<String> = server.pages().into_iter().map(|s| s.target).collect();
    assert_eq!(pages, ["/public/./x"]);
}

#[tokio::test]
async fn dot_segments_never_reach_the_server_through_the_middleware() {
    let server = Site::start(route).await;
    let client = RobotsMiddleware::builder(UA)
        .min_delay(Duration::ZERO)
        .build_client()
        .unwrap();
    for path in DOT_SEGMENT_VARIANTS {
        let error = client.get(server.url(path)).send().await.unwrap_err();
        assert!(
            matches!(
                middleware_error(&error),
                Some(RobotsError::Disallowed { .. })
            ),
            "{path}: {error}"
        );
    }
    let response = client.get(server.url("/public/x")).send().await.unwrap();
    assert_eq!(response.status(), 200);
    let pages: Vec<String> = server.pages().into_iter().map(|s| s.target).collect();
    assert_eq!(pages, ["/public/x"]);
}

#[tokio::test]
async fn every_request_says_who_sends_it() {
    let server = Site::start(route).await;
    let identity = |seen: &site::Seen| (seen.user_agent.clone(), seen.from.clone());
    let ours = (Some(UA.to_string()), Some(FROM.to_string()));
    let theirs = (
        Some("Custom/1".to_string()),
        Some("me@x.example".to_string()),
    );

    // The layer.
    for (policy, expected) in [
        (IdentityHeaders::IfMissing, theirs.clone()),
        (IdentityHeaders::Always, ours.clone()),
    ] {
        server.clear();
        let service = tower_client(
            RobotsLayer::builder(UA)
                .from(FROM)
                .identity_headers(policy)
                .min_delay(Duration::ZERO)
                .build(),
        );
        service
            .clone()
            .oneshot(get(&server.url("/page")))
            .await
            .unwrap();
        let mut own = get(&server.url("/page"));
        own.headers_mut()
            .insert("user-agent", "Custom/1".parse().unwrap());
        own.headers_mut()
            .insert("from", "me@x.example".parse().unwrap());
        service.clone().oneshot(own).await.unwrap();
        let seen = server.seen();
        assert!(seen.iter().all(|s| s.user_agent.is_some()), "{seen:?}");
        let pages = server.pages();
        assert_eq!(identity(&pages[0]), ours, "a request without identity");
        assert_eq!(identity(&pages[1]), expected, "{policy:?}");
    }

    // The middleware, on a plain client (no User-Agent of its own) and on build_client.
    for (policy, expected) in [
        (IdentityHeaders::IfMissing, theirs.clone()),
        (IdentityHeaders::Always, ours.clone()),
    ] {
        server.clear();
        let middleware = RobotsMiddleware::builder(UA)
            .from(FROM)
            .identity_headers(policy)
            .min_delay(Duration::ZERO)
            .build()
            .unwrap();
        let inner = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap();
        let client = reqwest_middleware::ClientBuilder::new(inner)
            .with(middleware)
            .build();
        client.get(server.url("/page")).send().await.unwrap();
        client
            .get(server.url("/page"))
            .header("user-agent", "Custom/1")
            .header("from", "me@x.example")
            .send()
            .await
            .unwrap();
        let pages = server.pages();
        assert_eq!(identity(&pages[0]), ours, "a request without identity");
        assert_eq!(identity(&pages[1]), expected, "{policy:?}");
    }
    server.clear();
    let client = RobotsMiddleware::builder(UA)
        .from(FROM)
        .min_delay(Duration::ZERO)
        .build_client()
        .unwrap();
    client.get(server.url("/page")).send().await.unwrap();
    let seen = server.seen();
    assert_eq!(seen.len(), 2, "{seen:?}");
    for request in seen {
        assert_eq!(identity(&request), ours, "{}", request.target);
    }
}

#[tokio::test]
async fn a_client_that_follows_redirects_itself_is_caught() {
    let (captured, _logs) = captured::capture_logs(tracing::Level::WARN);
    let server = Site::start(route).await;
    // Misuse: reqwest's default policy follows redirects inside the client.
    let middleware = RobotsMiddleware::builder(UA)
        .min_delay(Duration::ZERO)
        .build()
        .unwrap();
    let client = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
        .with(middleware)
        .build();
    let error = client
        .get(server.url("/go-private"))
        .send()
        .await
        .unwrap_err();
    match middleware_error(&error) {
        Some(RobotsError::Disallowed { url, rule, .. }) => {
            assert!(url.ends_with("/private/"), "{url}");
            assert_eq!(rule.as_ref().map(|r| r.line), Some(2));
        }
        other => panic!("{other:?} ({error})"),
    }
    // Allowed redirects still work (and only warn).
    let response = client.get(server.url("/public")).send().await.unwrap();
    assert_eq!(response.status(), 200);
    let logs = captured.text();
    assert_eq!(
        logs.matches("follows redirects itself").count(),
        1,
        "warned once per client: {logs}"
    );
    assert!(logs.contains("it was fetched, and is refused"), "{logs}");

    // The ready-made client follows hop by hop: the disallowed target is never requested.
    server.clear();
    let client = RobotsMiddleware::builder(UA)
        .min_delay(Duration::ZERO)
        .build_client()
        .unwrap();
    let error = client
        .get(server.url("/go-private"))
        .send()
        .await
        .unwrap_err();
    assert!(
        matches!(
            middleware_error(&error),
            Some(RobotsError::Disallowed { .. })
        ),
        "{error}"
    );
    let pages: Vec<String> = server.pages().into_iter().map(|s| s.target).collect();
    assert_eq!(pages, ["/go-private"]);
}

#[tokio::test]
async fn redirects_to_other_schemes_have_their_own_error() {
    let server = Site::start(route).await;
    let client = RobotsMiddleware::builder(UA)
        .min_delay(Duration::ZERO)
        .build_client()
        .unwrap();
    for (path, scheme) in [("/go-file", "file"), ("/go-js", "javascript")] {
        let error = client.get(server.url(path)).send().await.unwrap_err();
        match middleware_error(&error) {
            Some(RobotsError::UnsupportedScheme { scheme: s, url }) => {
                assert_eq!(s, scheme, "{url}");
            }
            other => panic!("{path}: {other:?} ({error})"),
        }
    }
    // tower-http does not follow a redirect to `file:` (the 302 comes back as it is), and a
    // request that names another scheme is refused by the layer itself.
    let service = tower_client(RobotsLayer::builder(UA).min_delay(Duration::ZERO).build());
    let response = service
        .clone()
        .oneshot(get(&server.url("/go-file")))
        .await
        .unwrap();
    assert_eq!(response.status(), 302);
    for (url, scheme) in [
        ("file://localhost/etc/passwd", "file"),
        ("ftp://127.0.0.1/file", "ftp"),
    ] {
        let error = service.clone().oneshot(get(url)).await.unwrap_err();
        assert!(
            matches!(
                error.downcast_ref::<RobotsError>(),
                Some(RobotsError::UnsupportedScheme { scheme: s, .. }) if s == scheme
            ),
            "{url}: {error}"
        );
    }
}

/// Redirects through the middleware change the method as reqwest does: 301, 302 and 303 keep
/// GET and HEAD (a link checker's HEAD never downloads the redirected body) and turn every other
/// method into a GET without a body; 307 and 308 repeat the request as it was.
#[tokio::test]
async fn redirects_change_the_method_as_reqwest_does() {
    let server = Site::start(|target, _| match target {
        "/robots.txt" => Answer::ok("User-agent: *\nDisallow: /private\n"),
        "/go/301" => Answer::status("301 Moved Permanently", &["Location: /to"]),
        "/go/302" => Answer::status("302 Found", &["Location: /to"]),
        "/go/303" => Answer::status("303 See Other", &["Location: /to"]),
        "/go/307" => Answer::status("307 Temporary Redirect", &["Location: /to"]),
        "/go/308" => Answer::status("308 Permanent Redirect", &["Location: /to"]),
        _ => Answer::ok("page"),
    })
    .await;
    let client = RobotsMiddleware::builder(UA)
        .min_delay(Duration::ZERO)
        .build_client()
        .unwrap();
    for status in [301, 302, 303, 307, 308] {
        for method in ["GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS"] {
            server.clear();
            let method_value = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
            let mut request = client.request(method_value, server.url(&format!("/go/{status}")));
            if matches!(method, "POST" | "PUT") {
                request = request.body("payload");
            }
            let response = request.send().await.unwrap();
            assert_eq!(response.status(), 200, "{method} through {status}");
            let pages = server.pages();
            assert_eq!(pages.len(), 2, "{method} through {status}: {pages:?}");
            assert_eq!(pages[1].target, "/to");
            let arrived = pages[1].head.split(' ').next().unwrap_or_default();
            let expected = match (status, method) {
                (307 | 308, method) => method,
                (_, "HEAD") => "HEAD",
                _ => "GET",
            };
            assert_eq!(arrived, expected, "{method} through {status}");
            let has_body = pages[1]
                .head
                .to_ascii_lowercase()
                .contains("content-length: 7");
            assert_eq!(
                has_body,
                expected != "GET" && matches!(method, "POST" | "PUT"),
                "{method} through {status}: {}",
                pages[1].head
            );
        }
    }
}

/// The wrong order, RobotsLayer outside FollowRedirectLayer: the hops skip the layer, which sees
/// tower-http's `RequestUri` on the response. A response from a disallowed path (or another
/// origin) is refused with a typed error, and the fix is said once; never passed on silently.
#[tokio::test]
async fn a_redirect_followed_below_the_layer_is_refused_and_said() {
    let (captured, _logs) = captured::capture_logs(tracing::Level::WARN);
    let other = Site::start(|_, _| Answer::ok("another origin")).await;
    let elsewhere = format!("Location: {}", other.url("/x"));
    let server = Site::start(move |target, _| match target {
        "/go-elsewhere" => Answer {
            headers: vec![elsewhere.clone()],
            ..Answer::status("302 Found", &[])
        },
        "/go-public" => Answer::status("302 Found", &["Location: /public"]),
        other => route(other, 0),
    })
    .await;
    let client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
    let layer = RobotsLayer::builder(UA).min_delay(Duration::ZERO).build();
    // Misuse: the redirect follower inside the robots layer.
    let service = ServiceBuilder::new()
        .layer(layer)
        .layer(FollowRedirectLayer::new())
        .service(client)
        .map_err(BoxError::from);
    let get = |path: &str| {
        http::Request::get(server.url(path))
            .body(Full::<Bytes>::default())
            .unwrap()
    };
    let refused = service
        .clone()
        .oneshot(get("/go-private"))
        .await
        .unwrap_err();
    match refused.downcast_ref::<RobotsError>() {
        Some(RobotsError::RedirectRefused { to, reason, .. }) => {
            assert!(to.ends_with("/private/"), "{to}");
            assert_eq!(*reason, robots_tower::RedirectRefusal::FollowedBelow);
        }
        other => panic!("{other:?} ({refused})"),
    }
    // Another origin: refused too (its robots.txt was never read).
    let refused = service
        .clone()
        .oneshot(get("/go-elsewhere"))
        .await
        .unwrap_err();
    assert!(
        matches!(
            refused.downcast_ref::<RobotsError>(),
            Some(RobotsError::RedirectRefused { .. })
        ),
        "{refused}"
    );
    // An allowed hop within the origin is passed on, and the fix was said once.
    let response = service.clone().oneshot(get("/go-public")).await.unwrap();
    assert_eq!(response.status(), 200);
    let logs = captured.text();
    assert_eq!(logs.matches("is inside RobotsLayer").count(), 1, "{logs}");
    assert!(logs.contains("Put it outside"), "{logs}");
}

/// A timeout outside the layer counts the politeness wait: requests it gives up while they wait
/// for their turn are said, once; inside the layer, it times the network only and nothing is
/// said (docs/composition.md).
#[tokio::test]
async fn a_timeout_around_the_layer_is_said_not_silent() {
    use tower::timeout::TimeoutLayer;
    let (captured, _logs) = captured::capture_logs(tracing::Level::WARN);
    let server = Site::start(route).await;
    let client = || Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
    let get = |path: &str| {
        http::Request::get(server.url(path))
            .body(Full::<Bytes>::default())
            .unwrap()
    };
    // Inside: the 300 ms interval is waited out, the timeout only times the network.
    let layer = RobotsLayer::builder(UA)
        .min_delay(Duration::from_millis(300))
        .build();
    let inside = ServiceBuilder::new()
        .layer(layer)
        .layer(TimeoutLayer::new(Duration::from_millis(200)))
        .service(client());
    for path in ["/a", "/b"] {
        inside.clone().oneshot(get(path)).await.unwrap();
    }
    assert!(
        !captured.text().contains("given up while it waited"),
        "{}",
        captured.text()
    );
    // Outside: the first page's wait for its turn (300 ms after robots.txt's own request) runs
    // into the timeout, and it is given up before it is sent.
    let layer = RobotsLayer::builder(UA)
        .min_delay(Duration::from_millis(300))
        .build();
    let outside = ServiceBuilder::new()
        .layer(TimeoutLayer::new(Duration::from_millis(200)))
        .layer(layer)
        .service(client());
    let timed_out = outside.clone().oneshot(get("/c")).await;
    assert!(
        timed_out.is_err(),
        "the wait was not in the timeout's clock"
    );
    assert_eq!(server.count("/c"), 0, "given up before it was sent");
    let logs = captured.text();
    assert_eq!(
        logs.matches("given up while it waited").count(),
        1,
        "{logs}"
    );
    assert!(logs.contains("put it inside"), "{logs}");
}

/// A site whose `/go` redirects to its own address literal, and whose robots.txt does too when
/// `robots_moved` (to `/rules.txt`, which disallows `/private`).
async fn redirecting_into_its_literal(robots_moved: bool) -> Site {
    // The Location headers name the server by its address literal, known once it listens.
    let port = std::sync::Arc::new(std::sync::OnceLock::<u16>::new());
    let known = port.clone();
    let server = Site::start(move |target, _| {
        let inside = format!(
            "Location: http://127.0.0.1:{}",
            known.get().copied().unwrap_or(0)
        );
        match target {
            "/robots.txt" if robots_moved => {
                Answer::status("301 Moved", &[&format!("{inside}/rules.txt")])
            }
            "/robots.txt" | "/rules.txt" => Answer::ok("User-agent: *\nDisallow: /private\n"),
            "/go" => Answer::status("302 Found", &[&format!("{inside}/inside")]),
            _ => Answer::ok("page"),
        }
    })
    .await;
    let _ = port.set(server.port());
    server
}

/// robots.txt redirects and page redirects are decided by one rule (robots-fetch's
/// `RedirectChain`): a host the caller made internal-allowed may redirect both into an internal
/// address literal, and a host by a name of its own (an override the caller did not allow) may
/// redirect neither.
#[tokio::test]
async fn robots_txt_and_page_redirects_follow_one_rule() {
    let moved = redirecting_into_its_literal(true).await;
    let plain = redirecting_into_its_literal(false).await;
    let (m, p) = (moved.port(), plain.port());
    let resolver = robots_tower::Resolver::new()
        .with_override_text(&format!("intranet.test:{m}:127.0.0.1"))
        .and_then(|r| r.with_override_text(&format!("public.test:{m}:127.0.0.1")))
        .and_then(|r| r.with_override_text(&format!("other.test:{p}:127.0.0.1")))
        .unwrap()
        .with_internal_allowed("intranet.test");
    let client = RobotsMiddleware::builder(UA)
        .min_delay(Duration::ZERO)
        .resolver(resolver)
        .build_client()
        .unwrap();

    // The caller's intranet: its robots.txt's hop and its page's hop are both followed.
    let response = client
        .get(moved.url_as("intranet.test", "/go"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.url().path(), "/inside");
    let error = client
        .get(moved.url_as("intranet.test", "/private/x"))
        .send()
        .await
        .unwrap_err();
    assert!(
        matches!(
            middleware_error(&error),
            Some(RobotsError::Disallowed { .. })
        ),
        "the rules were read from the redirected robots.txt: {error}"
    );

    // Names the caller did not allow: the robots.txt hop is refused (robots.txt unreachable,
    // so the site is), and so is the page hop.
    moved.clear();
    let error = client
        .get(moved.url_as("public.test", "/go"))
        .send()
        .await
        .unwrap_err();
    assert!(
        matches!(
            middleware_error(&error),
            Some(RobotsError::RobotsUnreachable { .. })
        ),
        "{error}"
    );
    let requested: Vec<String> = moved.seen().into_iter().map(|s| s.target).collect();
    assert_eq!(requested, ["/robots.txt"], "nothing past the refused hop");
    let error = client
        .get(plain.url_as("other.test", "/go"))
        .send()
        .await
        .unwrap_err();
    match middleware_error(&error) {
        Some(RobotsError::RedirectRefused { to, .. }) => assert!(to.ends_with("/inside"), "{to}"),
        other => panic!("{other:?} ({error})"),
    }
    let requested: Vec<String> = plain.seen().into_iter().map(|s| s.target).collect();
    assert_eq!(requested, ["/robots.txt", "/go"]);
}

/// Issue 71: the clients the middleware builds time a page out (`DEFAULT_PAGE_TIMEOUT`, 30 s,
/// unless set), so a server that never finishes cannot hold a crawl: the request fails with a
/// timeout, from connecting to the body's last byte. `None` lifts it.
#[tokio::test]
async fn the_built_client_times_a_page_out() {
    let site = Site::start(|target, _| match target {
        "/robots.txt" => Answer::ok("User-agent: *\nAllow: /\n"),
        "/late" => Answer {
            delay: Duration::from_secs(2),
            ..Answer::ok("late")
        },
        _ => Answer {
            body_delay: Duration::from_secs(2),
            ..Answer::ok("a body that takes its time")
        },
    })
    .await;
    // (A timeout backs its server off: briefly here.)
    let builder = || {
        RobotsMiddleware::builder(UA)
            .min_delay(Duration::ZERO)
            .backoff(Duration::from_millis(10), Duration::from_millis(10))
    };
    assert_eq!(
        builder().build().unwrap().page_timeout(),
        Some(robots_tower::DEFAULT_PAGE_TIMEOUT)
    );
    assert_eq!(robots_tower::DEFAULT_PAGE_TIMEOUT, Duration::from_secs(30));

    let quick = builder()
        .page_timeout(Duration::from_millis(500))
        .build_client()
        .unwrap();
    for path in ["/late", "/slow-body"] {
        let started = std::time::Instant::now();
        let timed_out = match quick.get(site.url(path)).send().await {
            Ok(response) => response.bytes().await.err().map(|e| timed_out(&e)),
            Err(error) => Some(timed_out(&error)),
        };
        assert_eq!(timed_out, Some(true), "{path}");
        assert!(started.elapsed() < Duration::from_millis(1900), "{path}");
    }

    let patient = builder().page_timeout(None).build_client().unwrap();
    let body = patient
        .get(site.url("/late"))
        .send()
        .await
        .unwrap()
        .text()
        .await;
    assert_eq!(body.unwrap(), "late");
}

/// Whether `error` or one of its causes says it timed out (a body's timeout comes wrapped in
/// the errors of the bodies around it).
fn timed_out(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut cause = Some(error);
    while let Some(error) = cause {
        if error.to_string().contains("timed out") {
            return true;
        }
        cause = error.source();
    }
    false
}

/// Spec section 5: a served path meets the patterns normalised, so a file's own Allow keeps
/// its meaning. With `Disallow: /enc/` and `Allow: /enc/%62%61%7A`, `/enc/%62%61%7A.html`
/// (served as `/enc/baz.html`) reaches the server through the layer and the middleware, and
/// `/enc/baz` and `/%7Euser/` (under `Disallow: /~user`) do not.
#[tokio::test]
async fn served_paths_meet_the_files_patterns_normalised_on_the_wire() {
    fn encoded(target: &str, _: usize) -> Answer {
        match target {
            "/robots.txt" => Answer::ok(
                "User-agent: *\nDisallow: /enc/\nAllow: /enc/%62%61%7A\nDisallow: /~user\n",
            ),
            _ => Answer::ok("page"),
        }
    }
    let server = Site::start(encoded).await;
    let service = tower_client(RobotsLayer::builder(UA).min_delay(Duration::ZERO).build());
    let client = RobotsMiddleware::builder(UA)
        .min_delay(Duration::ZERO)
        .build_client()
        .unwrap();
    for (path, allowed) in [
        ("/enc/%62%61%7A.html", true),
        ("/enc/baz", false),
        ("/%7Euser/", false),
    ] {
        let layer = service.clone().oneshot(get(&server.url(path))).await;
        let middleware = client.get(server.url(path)).send().await;
        if allowed {
            assert_eq!(layer.unwrap().status(), 200, "{path}");
            assert_eq!(middleware.unwrap().status(), 200, "{path}");
        } else {
            let error = layer.unwrap_err();
            assert!(
                matches!(
                    error.downcast_ref::<RobotsError>(),
                    Some(RobotsError::Disallowed { .. })
                ),
                "{path}: {error}"
            );
            let error = middleware.unwrap_err();
            assert!(
                matches!(
                    middleware_error(&error),
                    Some(RobotsError::Disallowed { .. })
                ),
                "{path}: {error}"
            );
        }
    }
    let pages: Vec<String> = server.pages().into_iter().map(|s| s.target).collect();
    assert_eq!(pages, ["/enc/%62%61%7A.html", "/enc/%62%61%7A.html"]);
}
