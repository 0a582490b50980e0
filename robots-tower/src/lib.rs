#![doc = include_str!("../README.md")]
//!
//! Each response carries a [`RobotsInfo`] in its extensions: the deciding rule, where the rules
//! came from, the wait, and the parsed `X-Robots-Tag` directives.
//!
//! Here against an in-memory site (a `tower::service_fn`), so the example runs as a test; with
//! a real client, put hyper-util's `Client` where `site` is, and tower-http's
//! `FollowRedirectLayer` outside the robots layer so every redirect hop is checked too:
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), robots_fetch::BoxError> {
//! use bytes::Bytes;
//! use http_body_util::Full;
//! use robots_tower::{RobotsError, RobotsInfo, RobotsLayer};
//! use tower::{ServiceBuilder, ServiceExt};
//!
//! let site = tower::service_fn(|request: http::Request<Full<Bytes>>| async move {
//!     let body = match request.uri().path() {
//!         "/robots.txt" => "User-agent: *\nDisallow: /private\n",
//!         _ => "a page",
//!     };
//!     Ok::<_, robots_fetch::BoxError>(http::Response::new(Full::new(Bytes::from(body))))
//! });
//! let service = ServiceBuilder::new()
//!     .layer(RobotsLayer::builder("FooBot/1.0 (+https://foo.example/bot)").build())
//!     .service(site);
//!
//! let get = |url: &str| http::Request::get(url).body(Full::<Bytes>::default());
//! let response = service.clone().oneshot(get("http://example.com/page")?).await?;
//! let info = response.extensions().get::<RobotsInfo>().expect("every response has one");
//! println!("fetched; rules: {}", info.source().describe());
//!
//! let refused = service.clone().oneshot(get("http://example.com/private/x")?).await;
//! match refused.map(|_| ()).map_err(|e| e.downcast::<RobotsError>()) {
//!     Err(Ok(error)) => assert!(matches!(*error, RobotsError::Disallowed { .. })),
//!     other => panic!("expected a refusal, got {other:?}"),
//! }
//! # Ok(()) }
//! ```
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_docs)]

// Three rooms: the front ends a request comes in through, the engine that decides it, and the
// pacing that spaces a politeness group's requests (docs/architecture.md).
mod engine;
mod error;
mod front;
mod frontier;
mod pacing;
mod sitemaps;
pub mod telemetry;
pub use front::status;

pub use engine::gate::{IdentityHeaders, WhenNotReady};
pub use engine::info::RobotsInfo;
pub use engine::overrides::{AlsoCheckAs, HandedBy, SkipRobotsCheck};
pub use error::{DecidingRule, NotReadyReason, RobotsError};
pub use front::config::{DEFAULT_PAGE_TIMEOUT, ForHooks, ForLayer, ForMiddleware, RobotsConfig};
pub use front::hooks::{RobotsHooks, Ticket};
pub use front::layer::{ResponseFuture, RobotsLayer, RobotsService};
#[cfg(feature = "reqwest")]
pub use front::middleware::RobotsMiddleware;
#[cfg(feature = "reqwest-retry")]
pub use front::retry::RefusalAware;
pub use front::retry::Retries;
pub use front::status::{Refusals, RefusalsAsResponses, RefusalsAsResponsesLayer};
pub use frontier::{
    DEFAULT_HOLD_UNREACHABLE, Dedup, Dropped, Feeding, Frontier, FrontierConfig, FrontierStats,
    Job, NotCrawled, PushError, Pushed, Retried, Visit,
};
/// The `http` crate this crate is built with (requests and responses of the layer are its types).
pub use http;
pub use pacing::body::PacedBody;
#[cfg(feature = "redis")]
pub use pacing::fleet::FleetFallback;
pub use pacing::group::{PolitenessKey, PublicSuffixList, PublicSuffixListError};
pub use pacing::observed::{GroupPause, PauseReason};
pub use pacing::rules::{MAX_INTERVAL, OverlongCrawlDelay, Spacing};
/// The `reqwest` this crate is built with: build the client the middleware wraps with it, or
/// depend on the same major version (0.13), or the types will not match.
#[cfg(feature = "reqwest")]
pub use reqwest;
/// The `reqwest-middleware` this crate is built with (0.5).
#[cfg(feature = "reqwest")]
pub use reqwest_middleware;
#[cfg(feature = "redis")]
pub use robots_fetch::{FleetError, RedisFleet};
pub use robots_fetch::{HopRule, RedirectPolicy, RedirectRefusal};
pub use robots_fetch::{ResolveOverrideError, Resolver};
/// The sitemap parser expansions read with (its `LastMod`, `Limits`, and the reader itself).
pub use robots_sitemap;
pub use sitemaps::{
    ExpansionLimit, ListedPage, SitemapEvent, SitemapExpansion, SitemapFailure, SitemapOptions,
    SitemapScope, SitemapSummary,
};
