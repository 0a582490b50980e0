//! Issue 69: the address rule where the connection is made, through the library's front ends.
//! The test runs in a network namespace of its own (`unshare -mn`, as root, as CI runs): a
//! "public" site on 203.0.113.7, internal servers on 10.9.9.9, 169.254.169.254, 127.0.0.2 and
//! `[::1]`, and a DNS server the test scripts as the system resolver. The internal servers must
//! see no request through `Frontier::run` written as its docs write it, the middleware, or the
//! tower layer over hyper-util's connector with our resolver, whatever DNS answers the second
//! time.

use std::net::Ipv4Addr;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use robots_fetch::BoxError;
use robots_test_support::netns::{self, Dns, Reply};
use robots_tower::{
    Dedup, FrontierConfig, Resolver, RobotsError, RobotsLayer, RobotsMiddleware, Visit,
};
use tower::{ServiceBuilder, ServiceExt};

use crate::site::{Answer, Site};

const UA: &str = "FooBot/1.0 (+https://foo.example/bot)";
const PUBLIC: Ipv4Addr = Ipv4Addr::new(203, 0, 113, 7);
const INTERNAL: Ipv4Addr = Ipv4Addr::new(10, 9, 9, 9);

/// Every request an internal server would answer: a page that links on.
fn internal_route(_: &str, _: usize) -> Answer {
    Answer::ok("User-agent: *\nAllow: /\n")
}

struct World {
    dns: Dns,
    public: Site,
    internal: Vec<Site>,
}

async fn world(links: &str) -> World {
    let dns = Dns::start().await;
    dns.script("www.pub.test", &[Reply::A(PUBLIC)]);
    dns.script("inner.pub.test", &[Reply::A(INTERNAL)]);
    let links = links.to_string();
    let public = Site::start_on("203.0.113.7:8081", move |target, _| match target {
        "/robots.txt" => Answer::ok("User-agent: *\nAllow: /\n"),
        "/" => Answer::ok(links.clone()),
        _ => Answer::ok("a page"),
    })
    .await;
    let mut internal = Vec::new();
    for address in [
        "10.9.9.9:8081",
        "169.254.169.254:8081",
        "127.0.0.2:8081",
        "[::1]:8081",
    ] {
        internal.push(Site::start_on(address, internal_route).await);
    }
    World {
        dns,
        public,
        internal,
    }
}

impl World {
    fn internal_requests(&self) -> Vec<String> {
        Site::requests_to(&self.internal)
    }

    /// `cdn.pub.test` answers public `times` times, then internal.
    fn rebind(&self, times: usize) {
        let mut replies = vec![Reply::A(PUBLIC); times];
        replies.push(Reply::A(INTERNAL));
        self.dns.script("cdn.pub.test", &replies);
    }
}

/// The links of the public page: the internal servers in the spellings a server may use, a
/// public name with an internal address, and a name that rebinds.
const LINKS: &str = "http://10.9.9.9:8081/secret \
    http://169.254.169.254:8081/latest/meta-data/ \
    http://127.0.0.2:8081/ http://2130706434:8081/x http://0x7f000002:8081/y \
    http://[::1]:8081/ http://[::ffff:127.0.0.2]:8081/z \
    http://inner.pub.test:8081/x \
    http://cdn.pub.test:8081/a http://cdn.pub.test:8081/b http://cdn.pub.test:8081/c";

#[test]
fn no_front_end_reaches_an_internal_server() {
    if !netns::inside(
        "netns::no_front_end_reaches_an_internal_server",
        &["203.0.113.7", "10.9.9.9", "169.254.169.254", "127.0.0.2"],
    ) {
        return;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let world = world(LINKS).await;
        frontier_run_as_its_docs_write_it(&world).await;
        the_middleware_after_a_rebinding(&world).await;
        the_layer_over_our_resolver(&world).await;
        a_callers_name_with_an_internal_address(&world).await;
    });
}

/// The middleware, quick, with a resolver that keeps no address: every connection looks the
/// name up again.
fn middleware() -> RobotsMiddleware {
    RobotsMiddleware::builder(UA)
        .min_delay(Duration::from_millis(10))
        .resolver(Resolver::with_ttl(Duration::ZERO))
        .build()
        .unwrap()
}

/// `Frontier::run` with the handler of its docs: the links a visit returns are the page's,
/// never the caller's.
async fn frontier_run_as_its_docs_write_it(world: &World) {
    world.rebind(2);
    let robots = middleware();
    let client = robots.client().unwrap();
    let heard = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let hear = heard.clone();
    let frontier = robots.frontier_with(
        FrontierConfig::default()
            .dedup(Dedup::Exact { last: 100_000 })
            .on_disallowed(move |dropped| hear.lock().unwrap().push(dropped.error.to_string())),
    );
    frontier
        .push("http://www.pub.test:8081/".parse().unwrap())
        .await
        .unwrap();
    let stats = frontier
        .run(4, |job| {
            let client = client.clone();
            async move {
                let response = match client.get(job.url().clone()).send().await {
                    Ok(response) => response,
                    Err(error) => {
                        return match RobotsError::from_middleware_error(&error) {
                            Some(refused) => Visit::Refused(refused.clone()),
                            None => Visit::Failed,
                        };
                    }
                };
                let base = response.url().clone();
                let body = response.text().await.unwrap_or_default();
                let links = body
                    .split_whitespace()
                    .filter_map(|l| base.join(l).ok())
                    .collect();
                Visit::Fetched(links)
            }
        })
        .await;
    assert_eq!(
        world.internal_requests(),
        Vec::<String>::new(),
        "Frontier::run"
    );
    assert!(world.public.count("/") >= 1);
    // The four literal addresses (the spellings of 127.0.0.2 are one URL each), at the push;
    // the public name with an internal address, at its connection.
    assert!(stats.address_refused >= 5, "{stats:?}");
    // Each refusal is said, with the URL, the address and the rule.
    let heard = heard.lock().unwrap().clone();
    assert_eq!(heard.len() as u64, stats.address_refused, "{heard:?}");
    for (url, address) in [
        ("http://10.9.9.9:8081/secret", "10.9.9.9"),
        (
            "http://169.254.169.254:8081/latest/meta-data/",
            "169.254.169.254",
        ),
        ("http://[::1]:8081/", "::1"),
        ("http://inner.pub.test:8081/x", "address rule"),
    ] {
        assert!(
            heard
                .iter()
                .any(|said| said.contains(url) && said.contains(address)),
            "{url}: {heard:?}"
        );
    }
    assert_eq!(stats.failed, 0, "{stats:?}");
}

/// The middleware's own client: a name that answered public is refused at its connection once
/// it answers internal, with the URL and the address said.
async fn the_middleware_after_a_rebinding(world: &World) {
    world.rebind(2);
    let robots = middleware();
    let client = robots.client().unwrap();
    let mut refused = Vec::new();
    for page in 0..6 {
        let url = format!("http://cdn.pub.test:8081/m{page}");
        match client.get(&url).send().await {
            Ok(response) => drop(response.bytes().await),
            Err(error) => refused.push(
                RobotsError::from_middleware_error(&error)
                    .map(ToString::to_string)
                    .unwrap_or_else(|| error.to_string()),
            ),
        }
    }
    assert_eq!(
        world.internal_requests(),
        Vec::<String>::new(),
        "middleware"
    );
    assert!(world.public.count("/robots.txt") >= 1);
    assert!(!refused.is_empty(), "the rebinding was seen");
    for refusal in &refused {
        assert!(
            refusal.contains("address rule") && refusal.contains("10.9.9.9"),
            "{refusal}"
        );
    }
}

/// The tower layer over hyper-util's client whose connector resolves through our resolver, as
/// the docs show for a client of one's own.
async fn the_layer_over_our_resolver(world: &World) {
    world.rebind(2);
    let resolver = Resolver::with_ttl(Duration::ZERO);
    let layer = RobotsLayer::builder(UA)
        .min_delay(Duration::from_millis(10))
        .resolver(resolver.clone())
        .build();
    let connector = HttpConnector::new_with_resolver(resolver);
    let client = Client::builder(TokioExecutor::new()).build::<_, Empty<Bytes>>(connector);
    let service = ServiceBuilder::new()
        .layer(layer)
        .service(client)
        .map_err(BoxError::from);
    let mut refused = 0;
    for page in 0..6 {
        let request = http::Request::get(format!("http://cdn.pub.test:8081/l{page}"))
            .body(Empty::<Bytes>::new())
            .unwrap();
        match service.clone().oneshot(request).await {
            Ok(response) => drop(response.into_body().collect().await),
            Err(error) => {
                let refusal = error.downcast_ref::<RobotsError>();
                assert!(
                    matches!(refusal, Some(RobotsError::AddressRefused { .. })),
                    "{error}"
                );
                refused += 1;
            }
        }
    }
    assert_eq!(world.internal_requests(), Vec::<String>::new(), "layer");
    assert!(refused >= 1, "the rebinding was seen");
}

/// A name the caller gives that resolves to an internal address, not allowed: robots.txt's
/// connection is refused, and the URL with it, naming the address and the rule.
async fn a_callers_name_with_an_internal_address(world: &World) {
    // The default resolver, which keeps a name's addresses (the refusal names the one seen).
    let client = RobotsMiddleware::builder(UA)
        .min_delay(Duration::from_millis(10))
        .build_client()
        .unwrap();
    let error = client
        .get("http://inner.pub.test:8081/x")
        .send()
        .await
        .unwrap_err();
    match RobotsError::from_middleware_error(&error) {
        Some(RobotsError::AddressRefused { address, rule, .. }) => {
            assert_eq!(*address, Some(INTERNAL.into()), "{rule}");
            assert!(rule.contains("robots.txt's connection"), "{rule}");
        }
        other => panic!("{other:?} ({error})"),
    }
    assert_eq!(
        world.internal_requests(),
        Vec::<String>::new(),
        "the caller's name"
    );
}
