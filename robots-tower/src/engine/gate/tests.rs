//! The engine on its own, without a front end: the verdict (`judge`), the admission and its
//! turn (`admit_now`, `admit`), and what a response teaches (`observe`).

use std::convert::Infallible;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use robots_fetch::{Origin, ServiceClient};
use tokio::time::Instant;

use super::{Admit, Gate, WhenNotReady};
use crate::engine::overrides::{AlsoCheckAs, Overrides, SkipRobotsCheck};
use crate::error::{NotReadyReason, RobotsError};
use crate::front::config::{ForLayer, RobotsConfig};

const BODY: &[u8] = b"User-agent: *\nDisallow: /private\nAllow: /private/ok\nCrawl-delay: 2\n\nUser-agent: PolicyBot\nDisallow: /\n";

fn origin() -> Origin {
    Origin::parse("https://example.com").unwrap()
}

/// A gate with `BODY` cached for `origin()`.
fn gate(
    configure: impl FnOnce(RobotsConfig<ForLayer>) -> RobotsConfig<ForLayer>,
) -> std::sync::Arc<Gate> {
    let gate = configure(RobotsConfig::new("FooBot/1.0")).gate();
    gate.cache.insert(&origin(), BODY);
    gate
}

fn url_of(path: &'static str) -> impl Fn() -> String {
    move || format!("https://example.com{path}")
}

fn judge(
    gate: &Gate,
    path: &'static str,
    overrides: &Overrides,
) -> Result<Option<u32>, RobotsError> {
    let entry = gate.cache.cached(&origin()).expect("cached");
    gate.judge(&entry, path, &url_of(path), overrides, Instant::now())
        .map(|rule| rule.map(|r| r.line))
}

#[tokio::test]
async fn judge_gives_the_deciding_rule_or_why_not() {
    let gate = gate(|c| c);
    let none = Overrides::default();
    assert_eq!(judge(&gate, "/public", &none), Ok(None));
    assert_eq!(judge(&gate, "/private/ok", &none), Ok(Some(3)));
    match judge(&gate, "/private/x", &none) {
        Err(RobotsError::Disallowed {
            url,
            rule,
            resolved_path,
        }) => {
            assert_eq!(url, "https://example.com/private/x");
            assert_eq!(rule.map(|r| r.line), Some(2));
            assert_eq!(resolved_path, None);
        }
        other => panic!("{other:?}"),
    }
    // Allowed as written, disallowed where a server resolves it.
    match judge(&gate, "/public/../private/x", &none) {
        Err(RobotsError::Disallowed { resolved_path, .. }) => {
            assert_eq!(resolved_path.as_deref(), Some("/private/x"));
        }
        other => panic!("{other:?}"),
    }
    // The explicit opt-out decides nothing.
    let skip = Overrides {
        skip: Some(SkipRobotsCheck::because("test")),
        ..Overrides::default()
    };
    assert_eq!(judge(&gate, "/private/x", &skip), Ok(None));
    // A policy token must be configured to be checked as.
    let unknown = Overrides {
        also: Some(AlsoCheckAs::new(["PolicyBot"])),
        ..Overrides::default()
    };
    assert!(matches!(
        judge(&gate, "/public", &unknown),
        Err(RobotsError::PolicyTokenNotConfigured { token }) if token == "PolicyBot"
    ));
    let gate = self::gate(|c| c.policy_tokens(["PolicyBot"]));
    assert!(matches!(
        judge(&gate, "/public", &unknown),
        Err(RobotsError::DisallowedFor { token, .. }) if token == "PolicyBot"
    ));
}

#[tokio::test(start_paused = true)]
async fn judge_refuses_an_origin_whose_robots_txt_is_unreachable() {
    let gate = RobotsConfig::<ForLayer>::new("FooBot/1.0").gate();
    let down = ServiceClient::new(tower::service_fn(|_: http::Request<Full<Bytes>>| async {
        let mut response = http::Response::new(Full::new(Bytes::new()));
        *response.status_mut() = http::StatusCode::SERVICE_UNAVAILABLE;
        Ok::<_, Infallible>(response)
    }));
    let entry = gate.entry(&down, &origin()).await.unwrap();
    match gate.judge(
        &entry,
        "/public",
        &url_of("/public"),
        &Overrides::default(),
        Instant::now(),
    ) {
        Err(RobotsError::RobotsUnreachable {
            origin: refused,
            retry_after,
            ..
        }) => {
            assert_eq!(refused, origin());
            assert!(retry_after > Duration::ZERO);
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test(start_paused = true)]
async fn admit_now_decides_from_the_cache_and_takes_the_turn() {
    let none = Overrides::default();
    let gate = gate(|c| c.min_delay(Duration::from_millis(100)));
    let unknown = Origin::parse("https://elsewhere.example").unwrap();
    assert!(matches!(
        gate.admit_now(&unknown, "/", &url_of("/"), &none),
        Ok(Admit::Fetch)
    ));
    assert!(matches!(
        gate.admit_now(&origin(), "/private/x", &url_of("/private/x"), &none),
        Err(RobotsError::Disallowed { .. })
    ));
    let first = match gate.admit_now(&origin(), "/private/ok", &url_of("/private/ok"), &none) {
        Ok(Admit::Now(admission)) => admission,
        _ => panic!("the first request is admitted at once"),
    };
    // The interval is the Crawl-delay (2 s), above the minimum delay.
    assert_eq!(first.interval, Duration::from_secs(2));
    assert_eq!(first.rule.as_ref().map(|r| r.line), Some(3));
    // While it is in flight, the next one waits (the default mode).
    assert!(matches!(
        gate.admit_now(&origin(), "/a", &url_of("/a"), &none),
        Ok(Admit::Wait(_))
    ));
    drop(first);
    // In schedule mode the same request is refused with when to come back.
    let gate = self::gate(|c| c.when_not_ready(WhenNotReady::Fail));
    let _first = gate.admit_now(&origin(), "/a", &url_of("/a"), &none);
    match gate.admit_now(&origin(), "/b", &url_of("/b"), &none) {
        Err(RobotsError::NotReady {
            origin: refused,
            reason,
            ..
        }) => {
            assert_eq!(refused, origin());
            assert_eq!(reason, NotReadyReason::InFlight);
        }
        _ => panic!("a busy origin refuses in schedule mode"),
    }
}

#[tokio::test(start_paused = true)]
async fn observe_ends_the_turn_and_pauses_on_429() {
    let none = Overrides::default();
    let gate = gate(|c| c.min_delay(Duration::ZERO));
    let admission = match gate.admit_now(&origin(), "/a", &url_of("/a"), &none) {
        Ok(Admit::Now(admission)) => admission,
        _ => panic!("admitted"),
    };
    let mut headers = http::HeaderMap::new();
    headers.insert("retry-after", http::HeaderValue::from_static("30"));
    headers.insert("x-robots-tag", http::HeaderValue::from_static("noindex"));
    let info = gate.observe(admission, 429, &headers).await;
    assert_eq!(info.origin(), &origin());
    assert!(info.directives().noindex);
    assert_eq!(
        info.pause(),
        Some(crate::pacing::observed::GroupPause {
            duration: Duration::from_secs(30),
            reason: crate::pacing::observed::PauseReason::RetryAfter
        })
    );
    // The group is the host (the default key).
    let paused = gate.pacing.paused_until(origin().host()).expect("paused");
    let left = paused.saturating_duration_since(Instant::now());
    assert!(
        left > Duration::from_secs(29) && left <= Duration::from_secs(30),
        "{left:?}"
    );
    // Paused: the next request must wait, even with no request in flight.
    assert!(matches!(
        gate.admit_now(&origin(), "/b", &url_of("/b"), &none),
        Ok(Admit::Wait(_))
    ));
    tokio::time::advance(Duration::from_secs(31)).await;
    let admission = match gate.admit_now(&origin(), "/b", &url_of("/b"), &none) {
        Ok(Admit::Now(admission)) => admission,
        _ => panic!("admitted after the pause"),
    };
    // A success ends the pause.
    let info = gate.observe(admission, 200, &http::HeaderMap::new()).await;
    assert_eq!(info.pause(), None);
    assert_eq!(gate.pacing.paused_until(origin().host()), None);
}
