//! Every row of the spec's outcome table against real local servers: wiremock, plus raw TCP
//! servers for the misbehaviour wiremock cannot produce.

use std::io::Write as _;
use std::time::Duration;

use robots_fetch::{
    FetchOutcome, NetworkErrorKind, Origin, RobotsCache, Rules, Source, UnavailableReason,
    UnreachableCause,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const UA: &str = "FooBot/1.0 (+https://foo.example/bot)";

fn cache() -> RobotsCache {
    RobotsCache::builder(UA)
        .from("crawler@foo.example")
        .fetch_timeout(Duration::from_secs(3))
        .build()
}

fn client(cache: &RobotsCache) -> reqwest::Client {
    robots_fetch::reqwest_client(cache.fetch_config()).expect("client builds")
}

async fn outcome_of(server_uri: &str) -> FetchOutcome {
    let cache = cache();
    let origin = Origin::parse(server_uri).expect("origin");
    robots_fetch::fetch(&client(&cache), &origin, cache.fetch_config()).await
}

async fn serve(status: u16, body: &str) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/robots.txt"))
        .respond_with(ResponseTemplate::new(status).set_body_string(body))
        .mount(&server)
        .await;
    server
}

#[tokio::test]
async fn success_is_parsed_and_applied() {
    let server = serve(200, "User-agent: *\nDisallow: /private\n").await;
    let cache = cache();
    let url = format!("{}/private/x", server.uri()).parse().unwrap();
    let entry = cache
        .get(&client(&cache), &Origin::from_url(&url).unwrap())
        .await;
    assert!(matches!(entry.source(), Source::Parsed { status: 200, .. }));
    assert!(!entry.check(&url).allowed);
    assert!(
        entry
            .check(&format!("{}/public", server.uri()).parse().unwrap())
            .allowed
    );
}

#[tokio::test]
async fn client_errors_allow_everything() {
    for status in [400, 401, 403, 404, 410, 451] {
        let server = serve(status, "User-agent: *\nDisallow: /\n").await;
        let outcome = outcome_of(&server.uri()).await;
        assert_eq!(
            outcome,
            FetchOutcome::Unavailable {
                status,
                reason: UnavailableReason::Status
            },
            "{status}"
        );
        let cache = cache();
        let url = format!("{}/x", server.uri()).parse().unwrap();
        let entry = cache
            .get(&client(&cache), &Origin::from_url(&url).unwrap())
            .await;
        assert!(entry.check(&url).allowed, "{status} allows all");
    }
}

#[tokio::test]
async fn auth_errors_can_disallow_everything() {
    for (status, allowed) in [(401, false), (403, false), (404, true)] {
        let server = serve(status, "").await;
        let config = robots_fetch::CacheConfig {
            auth_errors_disallow: true,
            ..Default::default()
        };
        let cache = RobotsCache::builder(UA).cache_config(config).build();
        let url = format!("{}/x", server.uri()).parse().unwrap();
        let entry = cache
            .get(&client(&cache), &Origin::from_url(&url).unwrap())
            .await;
        assert_eq!(entry.check(&url).allowed, allowed, "{status}");
        assert!(matches!(
            entry.rules(),
            Rules::DisallowAll | Rules::AllowAll
        ));
    }
}

#[tokio::test]
async fn too_many_requests_and_server_errors_are_unreachable() {
    for status in [429, 500, 502, 503, 504] {
        let server = MockServer::start().await;
        Mock::given(path("/robots.txt"))
            .respond_with(ResponseTemplate::new(status).insert_header("Retry-After", "120"))
            .mount(&server)
            .await;
        let outcome = outcome_of(&server.uri()).await;
        assert_eq!(
            outcome,
            FetchOutcome::Unreachable(UnreachableCause::Status {
                status,
                retry_after: Some(Duration::from_secs(120))
            }),
            "{status}"
        );
        let cache = cache();
        let url = format!("{}/x", server.uri()).parse().unwrap();
        let entry = cache
            .get(&client(&cache), &Origin::from_url(&url).unwrap())
            .await;
        assert!(!entry.check(&url).allowed, "{status} disallows all");
        assert!(entry.is_blocked_by_outage(tokio::time::Instant::now()));
    }
}

async fn redirect_chain(hops: usize) -> MockServer {
    let server = MockServer::start().await;
    for i in 0..hops {
        let from = if i == 0 {
            "/robots.txt".to_string()
        } else {
            format!("/hop{i}")
        };
        // Alternate relative and absolute Location values.
        let to = if i % 2 == 0 {
            format!("/hop{}", i + 1)
        } else {
            format!("{}/hop{}", server.uri(), i + 1)
        };
        Mock::given(path(from.as_str()))
            .respond_with(ResponseTemplate::new(301).insert_header("Location", to.as_str()))
            .mount(&server)
            .await;
    }
    Mock::given(path(format!("/hop{hops}").as_str()))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_string("User-agent: *\nDisallow: /after-redirects\n"),
        )
        .mount(&server)
        .await;
    server
}

#[tokio::test]
async fn redirects_are_followed_up_to_five_hops() {
    for hops in [1, 5] {
        let server = redirect_chain(hops).await;
        let outcome = outcome_of(&server.uri()).await;
        assert!(
            matches!(&outcome, FetchOutcome::Parsed { status: 200, body, .. } if body.starts_with(b"User-agent")),
            "{hops}: {outcome:?}"
        );
    }
    let server = redirect_chain(6).await;
    assert_eq!(
        outcome_of(&server.uri()).await,
        FetchOutcome::Unavailable {
            status: 301,
            reason: UnavailableReason::TooManyRedirects
        }
    );
}

#[tokio::test]
async fn a_redirect_loop_is_a_404() {
    let server = MockServer::start().await;
    Mock::given(path("/robots.txt"))
        .respond_with(ResponseTemplate::new(302).insert_header("Location", "/a"))
        .mount(&server)
        .await;
    Mock::given(path("/a"))
        .respond_with(ResponseTemplate::new(307).insert_header("Location", "/robots.txt"))
        .mount(&server)
        .await;
    assert_eq!(
        outcome_of(&server.uri()).await,
        FetchOutcome::Unavailable {
            status: 307,
            reason: UnavailableReason::RedirectLoop
        }
    );
    let missing = MockServer::start().await;
    Mock::given(path("/robots.txt"))
        .respond_with(ResponseTemplate::new(301))
        .mount(&missing)
        .await;
    assert_eq!(
        outcome_of(&missing.uri()).await,
        FetchOutcome::Unavailable {
            status: 301,
            reason: UnavailableReason::BadLocation
        }
    );
}

#[tokio::test]
async fn cross_host_redirects_give_rules_to_the_original_origin_only() {
    let other = serve(200, "User-agent: *\nDisallow: /moved\n").await;
    let server = MockServer::start().await;
    Mock::given(path("/robots.txt"))
        .respond_with(
            ResponseTemplate::new(301)
                .insert_header("Location", format!("{}/robots.txt", other.uri()).as_str()),
        )
        .mount(&server)
        .await;
    let cache = cache();
    let client = client(&cache);
    let url: url::Url = format!("{}/moved/x", server.uri()).parse().unwrap();
    let entry = cache.get(&client, &Origin::from_url(&url).unwrap()).await;
    assert!(!entry.check(&url).allowed);
    assert_eq!(entry.origin(), &Origin::from_url(&url).unwrap());
    // The redirect target's origin has no entry of its own.
    assert!(
        cache
            .cached(&Origin::parse(&other.uri()).unwrap())
            .is_none()
    );
}

/// A client that resolves `name` to the local server, so a public-looking host name reaches it
/// without DNS.
fn resolving(name: &str, server: &MockServer) -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .resolve(name, *server.address())
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_robots_redirect_from_a_public_host_into_loopback_is_refused() {
    let server = MockServer::start().await;
    let port = server.address().port();
    Mock::given(path("/robots.txt"))
        .respond_with(ResponseTemplate::new(301).insert_header(
            "Location",
            format!("http://127.0.0.1:{port}/internal/robots.txt").as_str(),
        ))
        .mount(&server)
        .await;
    Mock::given(path("/internal/robots.txt"))
        .respond_with(ResponseTemplate::new(200).set_body_string("User-agent: *\nAllow: /\n"))
        .mount(&server)
        .await;
    let client = resolving("public.example", &server);
    let cache = cache();
    let origin = Origin::parse(&format!("http://public.example:{port}")).unwrap();
    let outcome = robots_fetch::fetch(&client, &origin, cache.fetch_config()).await;
    match &outcome {
        FetchOutcome::Unreachable(UnreachableCause::Network(e)) => {
            assert_eq!(e.kind, NetworkErrorKind::RedirectRefused);
            assert!(e.message.contains("127.0.0.1"), "{}", e.message);
        }
        other => panic!("{other:?}"),
    }
    let hits = server.received_requests().await.unwrap_or_default();
    assert!(
        hits.iter().all(|r| r.url.path() != "/internal/robots.txt"),
        "the internal target was requested"
    );
    // Unknown rules allow nothing.
    let url = format!("http://public.example:{port}/page")
        .parse()
        .unwrap();
    assert!(
        !cache
            .get(&client, &Origin::from_url(&url).unwrap())
            .await
            .check(&url)
            .allowed
    );

    // A crawl that starts on loopback may redirect within it; and the rule is the cache's to set.
    let outcome = outcome_of(&server.uri()).await;
    assert!(
        matches!(outcome, FetchOutcome::Parsed { .. }),
        "{outcome:?}"
    );
    let lenient = RobotsCache::builder(UA)
        .robots_redirect_rule(robots_fetch::HopRule::any())
        .build();
    let outcome = robots_fetch::fetch(&client, &origin, lenient.fetch_config()).await;
    assert!(
        matches!(outcome, FetchOutcome::Parsed { .. }),
        "{outcome:?}"
    );
}

#[tokio::test]
async fn a_client_that_follows_redirects_itself_is_judged_where_it_landed() {
    let server = MockServer::start().await;
    let port = server.address().port();
    Mock::given(path("/robots.txt"))
        .respond_with(ResponseTemplate::new(301).insert_header(
            "Location",
            format!("http://127.0.0.1:{port}/moved/robots.txt").as_str(),
        ))
        .mount(&server)
        .await;
    Mock::given(path("/moved/robots.txt"))
        .respond_with(
            ResponseTemplate::new(200).set_body_string("User-agent: *\nDisallow: /moved\n"),
        )
        .mount(&server)
        .await;
    let cache = cache();
    // reqwest's default policy follows redirects inside the client.
    let following = reqwest::Client::builder()
        .resolve("public.example", *server.address())
        .build()
        .unwrap();
    let local = Origin::parse(&server.uri()).unwrap();
    match robots_fetch::fetch(&following, &local, cache.fetch_config()).await {
        FetchOutcome::Parsed { redirected_to, .. } => assert_eq!(
            redirected_to.map(|u| u.to_string()),
            Some(format!("http://127.0.0.1:{port}/moved/robots.txt"))
        ),
        other => panic!("{other:?}"),
    }
    // From a public name into loopback: where the client landed is refused.
    let public = Origin::parse(&format!("http://public.example:{port}")).unwrap();
    let outcome = robots_fetch::fetch(&following, &public, cache.fetch_config()).await;
    assert!(
        matches!(&outcome, FetchOutcome::Unreachable(UnreachableCause::Network(e)) if e.kind == NetworkErrorKind::RedirectRefused && e.message.contains("followed by the client")),
        "{outcome:?}"
    );
}

#[tokio::test]
async fn only_the_first_512000_bytes_are_read() {
    let mut body = b"User-agent: *\nDisallow: /early\n".to_vec();
    while body.len() < 10_000_000 {
        body.extend_from_slice(b"# filler filler filler filler filler filler filler filler\n");
    }
    body.extend_from_slice(b"Disallow: /late\n");
    let server = MockServer::start().await;
    Mock::given(path("/robots.txt"))
        .respond_with(ResponseTemplate::new(200).set_body_bytes(body))
        .mount(&server)
        .await;
    let outcome = outcome_of(&server.uri()).await;
    let FetchOutcome::Parsed { body, .. } = &outcome else {
        panic!("{outcome:?}")
    };
    assert_eq!(body.len(), 512_000);
    let cache = cache();
    let url = format!("{}/late", server.uri()).parse().unwrap();
    let entry = cache
        .get(&client(&cache), &Origin::from_url(&url).unwrap())
        .await;
    assert!(
        entry.check(&url).allowed,
        "rules past 512,000 bytes are ignored"
    );
    assert!(
        !entry
            .check(&format!("{}/early", server.uri()).parse().unwrap())
            .allowed
    );
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    encoder.write_all(data).unwrap();
    encoder.finish().unwrap()
}

#[tokio::test]
async fn gzip_bodies_are_decoded_and_capped_after_decoding() {
    let server = MockServer::start().await;
    Mock::given(path("/robots.txt"))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("Content-Encoding", "gzip")
                .set_body_bytes(gzip(b"User-agent: *\nDisallow: /zipped\n")),
        )
        .mount(&server)
        .await;
    let outcome = outcome_of(&server.uri()).await;
    assert!(
        matches!(&outcome, FetchOutcome::Parsed { body, .. } if &body[..] == b"User-agent: *\nDisallow: /zipped\n"),
        "{outcome:?}"
    );

    // A compression bomb: 200 MB of NULs in about 200 KB. Only 512,000 decoded bytes are read.
    let mut bomb_body = b"User-agent: *\nDisallow: /bomb\n".to_vec();
    bomb_body.resize(200_000_000, 0);
    let bomb = MockServer::start().await;
    Mock::given(path("/robots.txt"))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("Content-Encoding", "gzip")
                .set_body_bytes(gzip(&bomb_body)),
        )
        .mount(&bomb)
        .await;
    let outcome = outcome_of(&bomb.uri()).await;
    assert!(
        matches!(&outcome, FetchOutcome::Parsed { body, .. } if body.len() == 512_000),
        "{:?}",
        outcome_name(&outcome)
    );

    // Garbage that claims to be gzip is a malformed body: unreachable.
    let broken = MockServer::start().await;
    Mock::given(path("/robots.txt"))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("Content-Encoding", "gzip")
                .set_body_bytes(b"not gzip at all".to_vec()),
        )
        .mount(&broken)
        .await;
    assert!(
        matches!(outcome_of(&broken.uri()).await, FetchOutcome::Unreachable(UnreachableCause::Network(e)) if e.kind == NetworkErrorKind::Decode)
    );
}

fn outcome_name(outcome: &FetchOutcome) -> String {
    match outcome {
        FetchOutcome::Parsed { body, .. } => format!("parsed {} bytes", body.len()),
        other => format!("{other:?}"),
    }
}

#[tokio::test]
async fn the_crawler_identity_is_sent() {
    let server = MockServer::start().await;
    Mock::given(path("/robots.txt"))
        .and(header("user-agent", UA))
        .and(header("from", "crawler@foo.example"))
        .respond_with(
            ResponseTemplate::new(200).set_body_string("User-agent: *\nDisallow: /identified\n"),
        )
        .expect(1)
        .mount(&server)
        .await;
    let outcome = outcome_of(&server.uri()).await;
    assert!(
        matches!(outcome, FetchOutcome::Parsed { .. }),
        "{outcome:?}"
    );
    server.verify().await;
}

#[tokio::test]
async fn a_server_that_never_answers_times_out() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket); // accept, read nothing, answer nothing
        }
    });
    let cache = RobotsCache::builder(UA)
        .fetch_timeout(Duration::from_millis(300))
        .build();
    let origin = Origin::parse(&format!("http://{addr}")).unwrap();
    let started = std::time::Instant::now();
    let outcome = robots_fetch::fetch(&client(&cache), &origin, cache.fetch_config()).await;
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "bounded by the timeout"
    );
    assert!(
        matches!(outcome, FetchOutcome::Unreachable(UnreachableCause::Network(e)) if e.kind == NetworkErrorKind::Timeout)
    );
    server.abort();
}

#[tokio::test]
async fn a_connection_reset_mid_body_is_unreachable() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = tokio::spawn(async move {
        if let Ok((mut socket, _)) = listener.accept().await {
            let mut request = [0u8; 1024];
            let _ = socket.read(&mut request).await;
            let head = "HTTP/1.1 200 OK\r\nContent-Length: 100000\r\nContent-Type: text/plain\r\n\r\nUser-agent: *\nDisallow: /";
            let _ = socket.write_all(head.as_bytes()).await;
            // Close with the body unfinished.
        }
    });
    let outcome = outcome_of(&format!("http://{addr}")).await;
    assert!(
        matches!(&outcome, FetchOutcome::Unreachable(UnreachableCause::Network(e)) if matches!(e.kind, NetworkErrorKind::Body | NetworkErrorKind::Reset)),
        "{outcome:?}"
    );
    server.abort();
}

#[tokio::test]
async fn connection_refused_and_dns_failures_are_unreachable() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let outcome = outcome_of(&format!("http://{addr}")).await;
    assert!(
        matches!(&outcome, FetchOutcome::Unreachable(UnreachableCause::Network(e)) if e.kind == NetworkErrorKind::Connect),
        "{outcome:?}"
    );
    // A DNS failure without touching any resolver: reqwest with a resolver that knows no name.
    struct NoNames;
    impl reqwest::dns::Resolve for NoNames {
        fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
            let error = std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!("failed to lookup address information: {}", name.as_str()),
            );
            Box::pin(std::future::ready(Err(error.into())))
        }
    }
    let cache = cache();
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .dns_resolver(std::sync::Arc::new(NoNames))
        .build()
        .unwrap();
    let origin = Origin::parse("http://robots-fetch-test.invalid").unwrap();
    let outcome = robots_fetch::fetch(&client, &origin, cache.fetch_config()).await;
    assert!(
        matches!(&outcome, FetchOutcome::Unreachable(UnreachableCause::Network(e)) if e.kind == NetworkErrorKind::Dns),
        "{outcome:?}"
    );
    let url = "http://robots-fetch-test.invalid/page".parse().unwrap();
    assert!(
        !cache
            .get(&client, &Origin::from_url(&url).unwrap())
            .await
            .check(&url)
            .allowed,
        "a DNS failure disallows all"
    );
}
