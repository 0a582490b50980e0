//! What scraping frameworks need: a redirect policy that does not weaken theirs, robots.txt
//! fetched through their own client, schedule-don't-wait, and refusals as plain responses. On
//! the wire, against a raw local server that logs every request it receives.

use crate::site;

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use robots_tower::{
    ForMiddleware, HopRule, RedirectPolicy, RedirectRefusal, RobotsConfig, RobotsError,
    RobotsMiddleware,
};

use site::{Answer, Site};

const UA: &str = "FooBot/1.0 (+https://foo.example/bot)";

/// A site whose `/go-loopback` redirects to `127.0.0.1` (its own address), `/go-other` to
/// another host name, and `/r1` → `/r2` → `/r3` → `/page`.
async fn redirecting_site() -> Site {
    let port: Arc<OnceLock<u16>> = Arc::default();
    let known = port.clone();
    let site = Site::start(move |target, _| {
        let port = known.get().copied().unwrap_or(0);
        let to =
            |location: String| Answer::status("302 Found", &[&format!("Location: {location}")]);
        match target {
            "/robots.txt" => Answer::ok("User-agent: *\nDisallow: /private\n"),
            "/go-loopback" => to(format!("http://127.0.0.1:{port}/secret")),
            "/go-other" => to(format!("http://other.example:{port}/page")),
            "/r1" => to("/r2".into()),
            "/r2" => to("/r3".into()),
            "/r3" => to("/page".into()),
            _ => Answer::ok("page"),
        }
    })
    .await;
    let _ = port.set(site.addr().port());
    site
}

/// The framework's client: its own DNS (here `public.example` and `other.example` resolve to the
/// local site, which no client of ours could know), redirects off.
fn framework_client(site: &Site) -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .resolve("public.example", site.addr())
        .resolve("other.example", site.addr())
        .build()
        .unwrap()
}

fn with_middleware(
    client: reqwest::Client,
    robots: RobotsMiddleware,
) -> reqwest_middleware::ClientWithMiddleware {
    reqwest_middleware::ClientBuilder::new(client)
        .with(robots)
        .build()
}

/// The framework's client with our middleware inside, fetching robots.txt through that client.
fn polite(
    site: &Site,
    configure: impl FnOnce(RobotsConfig<ForMiddleware>) -> RobotsConfig<ForMiddleware>,
) -> reqwest_middleware::ClientWithMiddleware {
    let framework = framework_client(site);
    let robots = configure(
        RobotsMiddleware::builder(UA)
            .min_delay(Duration::ZERO)
            .robots_client(framework.clone()),
    )
    .build()
    .unwrap();
    with_middleware(framework, robots)
}

fn refusal(error: &reqwest_middleware::Error) -> Option<&RobotsError> {
    RobotsError::from_middleware_error(error)
}

#[tokio::test]
async fn redirects_into_loopback_from_a_public_host_are_refused_by_default() {
    let site = redirecting_site().await;
    let port = site.addr().port();
    let client = polite(&site, |c| c);

    let error = client
        .get(format!("http://public.example:{port}/go-loopback"))
        .send()
        .await
        .unwrap_err();
    match refusal(&error) {
        Some(RobotsError::RedirectRefused { from, to, reason }) => {
            assert!(from.ends_with("/go-loopback"), "{from}");
            assert_eq!(to, &format!("http://127.0.0.1:{port}/secret"));
            assert!(matches!(reason, RedirectRefusal::Rule { .. }), "{reason:?}");
        }
        other => panic!("{other:?} ({error})"),
    }
    assert_eq!(site.count("/secret"), 0, "the refused target was requested");
    // robots.txt came through the framework's client: ours could not resolve public.example.
    assert_eq!(site.count("/robots.txt"), 1);

    // A crawl that starts on loopback may follow a redirect within it.
    let response = client.get(site.url("/go-loopback")).send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(site.count("/secret"), 1);
}

#[tokio::test]
async fn a_client_that_follows_redirects_itself_into_loopback_is_refused_after_the_fact() {
    let site = redirecting_site().await;
    let port = site.addr().port();
    // Misuse: the framework's client follows redirects itself (reqwest's default policy).
    let following = reqwest::Client::builder()
        .resolve("public.example", site.addr())
        .build()
        .unwrap();
    let robots = RobotsMiddleware::builder(UA)
        .min_delay(Duration::ZERO)
        .robots_client(framework_client(&site))
        .build()
        .unwrap();
    let client = with_middleware(following, robots);
    let error = client
        .get(format!("http://public.example:{port}/go-loopback"))
        .send()
        .await
        .unwrap_err();
    // The hop happened inside the client (it cannot be undone), but its response is refused.
    assert!(
        matches!(
            refusal(&error),
            Some(RobotsError::RedirectRefused {
                reason: RedirectRefusal::Rule { .. },
                ..
            })
        ),
        "{error}"
    );
}

#[tokio::test]
async fn the_redirect_policy_limits_hops_and_composes() {
    let site = redirecting_site().await;
    let port = site.addr().port();
    let client = polite(&site, |c| {
        c.redirect_policy(
            RedirectPolicy::limited(2).with_rule(HopRule::same_origin().and(HopRule::default())),
        )
    });

    let error = client.get(site.url("/r1")).send().await.unwrap_err();
    assert!(
        matches!(
            refusal(&error),
            Some(RobotsError::RedirectRefused {
                reason: RedirectRefusal::TooManyHops { limit: 2 },
                ..
            })
        ),
        "{error}"
    );
    assert_eq!(site.count("/r3"), 1);
    assert_eq!(site.count("/page"), 0, "a third hop was followed");

    let error = client
        .get(format!("http://public.example:{port}/go-other"))
        .send()
        .await
        .unwrap_err();
    match refusal(&error) {
        Some(RobotsError::RedirectRefused { reason, .. }) => assert_eq!(
            reason.to_string(),
            "the redirect rule refuses it ((same origin and not from a public host into an internal address))"
        ),
        other => panic!("{other:?} ({error})"),
    }
    assert_eq!(site.count("/page"), 0);

    // Following off: the redirect itself comes back.
    site.clear();
    let client = polite(&site, |c| c.redirect_policy(RedirectPolicy::none()));
    let response = client.get(site.url("/r1")).send().await.unwrap();
    assert_eq!(response.status(), 302);
    assert_eq!(site.count("/r2"), 0);
}

#[tokio::test]
async fn status_only_frameworks_get_refusals_as_responses_and_info_as_headers() {
    let site = Site::start(|target, _| match target {
        "/robots.txt" => {
            Answer::ok("User-agent: *\nAllow: /ok\nDisallow: /private\nCrawl-delay: 30\n")
        }
        "/tagged" => Answer::status(
            "200 OK",
            &[
                "X-Robots-Tag: foobot: noindex",
                "X-Robots-Tag: otherbot: nofollow",
            ],
        ),
        _ => Answer::ok("page"),
    })
    .await;
    // robots.txt known already (its own request would hold the first page back 30 s).
    let known = || {
        let cache = robots_fetch::RobotsCache::builder(UA).build();
        cache.insert(
            &robots_fetch::Origin::parse(&site.url("/")).unwrap(),
            b"User-agent: *\nAllow: /ok\nDisallow: /private\nCrawl-delay: 30\n",
        );
        cache
    };
    let client = RobotsMiddleware::builder(UA)
        .cache(known())
        .refusals(robots_tower::Refusals::Responses)
        .when_not_ready(robots_tower::WhenNotReady::Fail)
        .mirror_info_headers(true)
        .build_client()
        .unwrap();

    let ok = client.get(site.url("/ok")).send().await.unwrap();
    assert_eq!(ok.status(), 200);
    let header = |response: &reqwest::Response, name: &str| {
        response
            .headers()
            .get(name)
            .map(|v| v.to_str().unwrap().to_string())
    };
    assert_eq!(
        header(&ok, "x-robots-rule").as_deref(),
        Some("line 2: Allow: /ok")
    );
    assert_eq!(
        header(&ok, "x-robots-interval-ms").as_deref(),
        Some("30000")
    );
    assert_eq!(header(&ok, "x-robots-waited-ms").as_deref(), Some("0"));
    assert_eq!(header(&ok, "x-robots-source").as_deref(), Some("parsed"));
    assert_eq!(header(&ok, "x-robots-directives"), None);

    // (Read: its body held the request's place.)
    ok.bytes().await.unwrap();

    // Disallowed: a 403 that names the reason and the rule; nothing reached the site.
    let refused = client.get(site.url("/private/x")).send().await.unwrap();
    assert_eq!(refused.status(), 403);
    assert_eq!(
        header(&refused, "x-robots-refusal").as_deref(),
        Some("disallowed")
    );
    assert_eq!(
        header(&refused, "x-robots-rule").as_deref(),
        Some("line 3: Disallow: /private")
    );
    assert_eq!(refused.url().as_str(), site.url("/private/x"));
    assert!(matches!(
        refused.extensions().get::<RobotsError>(),
        Some(RobotsError::Disallowed { .. })
    ));
    assert_eq!(site.count("/private/x"), 0);

    // Not now (Crawl-delay 30 s): a 429 with Retry-After, at once.
    let started = std::time::Instant::now();
    let later = client.get(site.url("/tagged")).send().await.unwrap();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(later.status(), 429);
    let retry: u64 = header(&later, "retry-after").unwrap().parse().unwrap();
    assert!((29..=30).contains(&retry), "{retry}");
    assert_eq!(
        header(&later, "x-robots-refusal").as_deref(),
        Some("not-ready; reason=spacing")
    );
    assert!(later.text().await.unwrap().contains("not ready"));
    assert_eq!(site.count("/tagged"), 0);

    // The page directives scoped to this crawler are mirrored (a fresh client, no wait).
    let client = RobotsMiddleware::builder(UA)
        .cache(known())
        .mirror_info_headers(true)
        .build_client()
        .unwrap();
    let tagged = client.get(site.url("/tagged")).send().await.unwrap();
    assert_eq!(
        header(&tagged, "x-robots-directives").as_deref(),
        Some("noindex")
    );
}

#[tokio::test]
async fn a_tower_stack_applies_hop_rules_through_tower_http() {
    use bytes::Bytes;
    use http_body_util::Full;
    use tower::{ServiceBuilder, ServiceExt};
    use tower_http::follow_redirect::FollowRedirectLayer;
    use tower_http::follow_redirect::policy::{self, Action, Attempt, PolicyExt};

    let requested: Arc<std::sync::Mutex<Vec<String>>> = Arc::default();
    let log = requested.clone();
    let site = tower::service_fn(move |request: http::Request<Full<Bytes>>| {
        log.lock().unwrap().push(request.uri().to_string());
        async move {
            let mut response = http::Response::builder();
            let body = match request.uri().path() {
                "/robots.txt" => "User-agent: *\nAllow: /\n",
                "/go" => {
                    response = response
                        .status(302)
                        .header("location", "http://127.0.0.1/secret");
                    ""
                }
                _ => "page",
            };
            response.body(Full::new(Bytes::from(body)))
        }
    });

    // The hop rule inside tower-http's redirect policy: tower-http follows, the robots layer
    // (inside it) checks every hop, and the rule decides which hops are followed at all.
    let rule = HopRule::default();
    let hops = policy::redirect_fn(move |attempt: &Attempt<'_>| {
        let parse = |uri: &http::Uri| url::Url::parse(&uri.to_string()).ok();
        let allowed = match (parse(attempt.previous()), parse(attempt.location())) {
            (Some(from), Some(to)) => rule.allows(&from, &to),
            _ => false,
        };
        Ok::<_, robots_fetch::BoxError>(if allowed {
            Action::Follow
        } else {
            Action::Stop
        })
    });
    let policy = policy::Limited::new(10).and::<_, Full<Bytes>, robots_fetch::BoxError>(hops);
    let service = ServiceBuilder::new()
        .layer(FollowRedirectLayer::with_policy(policy))
        .layer(
            robots_tower::RobotsLayer::builder(UA)
                .min_delay(Duration::ZERO)
                .build(),
        )
        .service(site);
    let request = http::Request::get("http://public.example/go")
        .body(Full::<Bytes>::default())
        .unwrap();
    let response = service.oneshot(request).await.unwrap();
    // Stopped: the redirect comes back as it is, and the loopback target was never requested.
    assert_eq!(response.status(), 302);
    let requested = requested.lock().unwrap().clone();
    assert!(
        !requested.iter().any(|u| u.contains("/secret")),
        "{requested:?}"
    );
}
