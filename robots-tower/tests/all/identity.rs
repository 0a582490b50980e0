//! Web Bot Auth through the front ends: the layer signs robots.txt (fetched through the same
//! inner service) and every page, each redirect hop that passes through it signed anew; the
//! hooks sign the headers they hand the framework. Checked with the library's verifier against
//! the signer's key directory (the CLI's test checks with a verifier of its own).

use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use http_body_util::Full;
use robots_fetch::{
    BoxError, KeyDirectory, RequestSigner, ServiceClient, SigningKey, verify_request,
};
use robots_tower::{RobotsHooks, RobotsLayer};
use tower::{Layer, ServiceBuilder, ServiceExt};

type Seen = Arc<Mutex<Vec<(http::Uri, http::HeaderMap)>>>;

/// A site that records each request's URI and headers: robots.txt allows all but /private,
/// /go redirects to /page.
fn site(
    seen: Seen,
) -> impl tower::Service<
    http::Request<Full<Bytes>>,
    Response = http::Response<Full<Bytes>>,
    Error = BoxError,
    Future = impl Send,
> + Clone
+ Send
+ Sync
+ 'static {
    tower::service_fn(move |request: http::Request<Full<Bytes>>| {
        seen.lock()
            .unwrap()
            .push((request.uri().clone(), request.headers().clone()));
        let response = match request.uri().path() {
            "/robots.txt" => http::Response::new(Full::new(Bytes::from_static(
                b"User-agent: *\nDisallow: /private\n",
            ))),
            "/go" => http::Response::builder()
                .status(302)
                .header("location", "http://a.example/page")
                .body(Full::default())
                .unwrap(),
            _ => http::Response::new(Full::new(Bytes::from_static(b"page"))),
        };
        std::future::ready(Ok::<_, BoxError>(response))
    })
}

fn signer() -> (RequestSigner, KeyDirectory) {
    let (old, new) = (
        SigningKey::generate().unwrap(),
        SigningKey::generate().unwrap(),
    );
    let new_keyid = new.keyid().to_string();
    // Rotation: two keys known, the second one signs.
    let mut signer = RequestSigner::with_keys([old, new])
        .unwrap()
        .signature_agent("https://crawler.example".parse().unwrap())
        .unwrap()
        .validity(Duration::from_secs(60));
    assert!(signer.signing_with(&new_keyid));
    let directory = signer.directory();
    assert_eq!(directory.keys().len(), 2);
    (signer, directory)
}

fn verified(uri: &http::Uri, headers: &http::HeaderMap, directory: &KeyDirectory) -> String {
    let verified = verify_request(
        &http::Method::GET,
        uri,
        headers,
        directory,
        SystemTime::now(),
    )
    .unwrap_or_else(|e| panic!("{uri}: {e}"));
    assert_eq!(
        verified.signature_agent.as_deref(),
        Some("https://crawler.example")
    );
    assert_eq!(
        verified.expires.zip(verified.created).map(|(e, c)| e - c),
        Some(60)
    );
    verified.keyid
}

#[tokio::test]
async fn the_layer_signs_robots_txt_every_page_and_every_hop() {
    let (signer, directory) = signer();
    let signing = signer.keyid().to_string();
    let seen: Seen = Arc::default();
    let layer = RobotsLayer::builder("FooBot/1.0")
        .min_delay(Duration::ZERO)
        .signer(signer)
        .build();
    // tower-http's redirect following above the layer: each hop comes through it.
    let service = ServiceBuilder::new()
        .layer(tower_http::follow_redirect::FollowRedirectLayer::new())
        .layer(layer)
        .service(site(seen.clone()));
    let request = |path: &str| {
        http::Request::get(format!("http://a.example{path}"))
            .body(Full::default())
            .unwrap()
    };
    let response = service.clone().oneshot(request("/go")).await.unwrap();
    assert_eq!(response.status(), 200);
    assert!(
        service
            .clone()
            .oneshot(request("/private/x"))
            .await
            .is_err()
    );

    let seen = seen.lock().unwrap().clone();
    let paths: Vec<&str> = seen.iter().map(|(uri, _)| uri.path()).collect();
    assert_eq!(paths, ["/robots.txt", "/go", "/page"]);
    for (uri, headers) in &seen {
        assert_eq!(verified(uri, headers, &directory), signing, "{uri}");
        // The signature is for this authority only.
        let elsewhere: http::Uri = "http://b.example/page".parse().unwrap();
        assert!(
            verify_request(
                &http::Method::GET,
                &elsewhere,
                headers,
                &directory,
                SystemTime::now()
            )
            .is_err()
        );
    }
    let signatures: std::collections::HashSet<_> =
        seen.iter().map(|(_, h)| h["signature"].clone()).collect();
    assert_eq!(signatures.len(), 3, "each request signed anew");
}

#[tokio::test]
async fn the_hooks_sign_the_headers_they_hand_the_framework() {
    let (signer, directory) = signer();
    let seen: Seen = Arc::default();
    let hooks = RobotsHooks::builder("FooBot/1.0")
        .min_delay(Duration::ZERO)
        .signer(signer)
        .build_hooks_with(ServiceClient::new(site(seen.clone())));
    let url: url::Url = "http://a.example/page".parse().unwrap();
    let ticket = hooks.admit(&url).await.unwrap();
    let mut headers = http::HeaderMap::new();
    hooks.identify(&url, &mut headers);
    assert_eq!(headers["user-agent"], "FooBot/1.0");
    verified(
        &"http://a.example/page".parse().unwrap(),
        &headers,
        &directory,
    );
    drop(ticket);
    // robots.txt, fetched by the hooks' own client, was signed too.
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen[0].0.path(), "/robots.txt");
    verified(&seen[0].0, &seen[0].1, &directory);
    // Debug output names the keys, never prints them.
    let printed = format!("{:?}", RequestSigner::new(SigningKey::generate().unwrap()));
    assert!(
        printed.contains("keyid") && !printed.contains("private_key"),
        "{printed}"
    );
}

#[tokio::test]
async fn the_signature_agent_is_left_out_when_no_directory_is_named() {
    let key = SigningKey::generate().unwrap();
    let directory = KeyDirectory::of([key.public_key()]);
    let seen: Seen = Arc::default();
    let service = RobotsLayer::builder("FooBot/1.0")
        .min_delay(Duration::ZERO)
        .signer(RequestSigner::new(key))
        .build()
        .layer(site(seen.clone()));
    let request = http::Request::get("http://a.example/page")
        .body(Full::default())
        .unwrap();
    service.oneshot(request).await.unwrap();
    for (uri, headers) in seen.lock().unwrap().iter() {
        assert!(!headers.contains_key("signature-agent"));
        let verified = verify_request(
            &http::Method::GET,
            uri,
            headers,
            &directory,
            SystemTime::now(),
        )
        .unwrap();
        assert_eq!(verified.components, ["\"@authority\""]);
    }
}
