//! AI usage preferences through both front ends, on the wire (a raw local site): robots.txt's
//! preferences for each URL and the response's `Content-Usage` header, in `RobotsInfo`, and
//! mirrored into headers for frameworks that keep only headers.

use crate::site;

use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use robots_core::Preference::{No, Unknown, Yes};
use robots_core::{AiPreferences, Preference};
use robots_tower::{RobotsError, RobotsInfo, RobotsLayer, RobotsMiddleware};
use site::{Answer, Site};
use tower::{ServiceBuilder, ServiceExt};

const ROBOTS: &str = "User-agent: *\nDisallow: /private/\nContent-Usage: train-ai=n\nContent-Usage: /open/ train-ai=y, search=y\nContent-Signal: /news/ ai-input=yes\n";

fn route(target: &str, _: usize) -> Answer {
    let mut answer = match target {
        "/robots.txt" => return Answer::ok(ROBOTS),
        _ => Answer::ok("page"),
    };
    match target {
        // The header says more for this response: search is not wanted.
        "/open/header" => answer.headers.push("Content-Usage: search=n".into()),
        // Two field lines make one dictionary; the last `train-ai` wins.
        "/open/two-lines" => {
            answer.headers.push("Content-Usage: train-ai=n".into());
            answer.headers.push("Content-Usage: train-ai=y".into());
        }
        "/broken" => answer.headers.push("Content-Usage: Train-AI=y".into()),
        _ => {}
    }
    answer
}

fn get(url: &str) -> http::Request<Full<Bytes>> {
    http::Request::get(url).body(Full::default()).unwrap()
}

fn expect(info: &RobotsInfo, train: Preference, search: Preference, header: Option<AiPreferences>) {
    assert_eq!(info.may_train_ai(), train, "{info:?}");
    assert_eq!(info.may_search(), search, "{info:?}");
    assert_eq!(info.content_usage(), header, "{info:?}");
}

#[tokio::test]
async fn the_layer_attaches_robots_txt_and_header_preferences() {
    let site = Site::start(route).await;
    let service = ServiceBuilder::new()
        .layer(
            RobotsLayer::builder("FooBot/1.0")
                .min_delay(Duration::ZERO)
                .build(),
        )
        .service(Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>());
    let info = |response: &http::Response<_>| {
        response
            .extensions()
            .get::<RobotsInfo>()
            .cloned()
            .expect("RobotsInfo on every allowed response")
    };

    // (Each response is dropped at once: its body holds its request's place until then.)
    let page = info(
        &service
            .clone()
            .oneshot(get(&site.url("/page")))
            .await
            .unwrap(),
    );
    expect(&page, No, Unknown, None);
    assert_eq!(page.usage().train_ai.line, Some(3));

    let open = info(
        &service
            .clone()
            .oneshot(get(&site.url("/open/data")))
            .await
            .unwrap(),
    );
    expect(&open, Yes, Yes, None);
    assert_eq!(open.usage().search.line, Some(4));

    // robots.txt says search=y for /open/, the response says n: combined, n.
    let header = info(
        &service
            .clone()
            .oneshot(get(&site.url("/open/header")))
            .await
            .unwrap(),
    );
    let said = AiPreferences {
        train_ai: Unknown,
        search: No,
    };
    expect(&header, Yes, No, Some(said));

    let two = info(
        &service
            .clone()
            .oneshot(get(&site.url("/open/two-lines")))
            .await
            .unwrap(),
    );
    assert_eq!(two.content_usage().map(|p| p.train_ai), Some(Yes));

    // A malformed header: present, every preference unknown; robots.txt still answers.
    let broken = info(
        &service
            .clone()
            .oneshot(get(&site.url("/broken")))
            .await
            .unwrap(),
    );
    expect(&broken, No, Unknown, Some(AiPreferences::UNKNOWN));

    // Content-Signal scoped to /news/.
    let news = info(
        &service
            .clone()
            .oneshot(get(&site.url("/news/today")))
            .await
            .unwrap(),
    );
    assert_eq!(news.usage().may_use_as_ai_input(), Yes);
    assert_eq!(
        news.usage().content_signal.map(|s| s.ai_input.line),
        Some(Some(5))
    );

    // Disallowed: refused before the network, no preference involved.
    let refused = service.clone().oneshot(get(&site.url("/private/x"))).await;
    assert!(matches!(
        refused.unwrap_err().downcast_ref::<RobotsError>(),
        Some(RobotsError::Disallowed { .. })
    ));
    assert_eq!(site.count("/private/x"), 0);

    // The explicit opt-out: fetched, but a disallowed URL still gets no preference, while an
    // allowed one gets robots.txt's.
    let skip = |url: &str| {
        let mut request = get(url);
        request
            .extensions_mut()
            .insert(robots_tower::SkipRobotsCheck::because("audit"));
        request
    };
    let skipped = info(
        &service
            .clone()
            .oneshot(skip(&site.url("/private/x")))
            .await
            .unwrap(),
    );
    assert!(!skipped.usage().is_stated(), "{skipped:?}");
    let skipped = info(
        &service
            .clone()
            .oneshot(skip(&site.url("/open/data")))
            .await
            .unwrap(),
    );
    assert_eq!(skipped.may_train_ai(), Yes);
}

#[tokio::test]
async fn the_middleware_attaches_and_mirrors_them() {
    let site = Site::start(route).await;
    let client = RobotsMiddleware::builder("FooBot/1.0")
        .min_delay(Duration::ZERO)
        .mirror_info_headers(true)
        .build_client()
        .unwrap();
    let response = client.get(site.url("/open/header")).send().await.unwrap();
    let info = response.extensions().get::<RobotsInfo>().cloned().unwrap();
    expect(
        &info,
        Yes,
        No,
        Some(AiPreferences {
            train_ai: Unknown,
            search: No,
        }),
    );
    // The mirror carries robots.txt's answer (the response's own header is there as sent).
    let mirrored = response
        .headers()
        .get("x-robots-usage")
        .and_then(|v| v.to_str().ok());
    assert_eq!(mirrored, Some("train-ai=y, search=y"));
    // (Its body holds the request's place until dropped.)
    drop(response);
    let response = client.get(site.url("/news/x")).send().await.unwrap();
    let mirrored = response
        .headers()
        .get("x-robots-usage")
        .and_then(|v| v.to_str().ok());
    assert_eq!(mirrored, Some("train-ai=n, ai-input=y"));
}
