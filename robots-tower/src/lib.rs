//! # robots-tower
//!
//! Makes any Rust HTTP client polite. As a tower [`RobotsLayer`] or a reqwest-middleware
//! [`RobotsMiddleware`], it checks every request against its origin's robots.txt (fetched and
//! cached with `robots-fetch`, Google's semantics) and
//!
//! - refuses a disallowed URL with [`RobotsError::Disallowed`] before it reaches the network —
//!   the path as given, and every path a server may resolve it to (dot segments, `%2e` forms,
//!   merged slashes), so `/public/../private/x` is refused by `Disallow: /private`;
//! - refuses non-HTTP URLs (a redirect to `file:`) with [`RobotsError::UnsupportedScheme`];
//! - refuses with [`RobotsError::Unreachable`] while robots.txt cannot be had and no good copy
//!   is known, so a crawler can reschedule;
//! - otherwise waits for the origin's politeness slot (one request in flight, 1 s from the
//!   previous request's start and from its response, raised by Crawl-delay up to 30 s, paused by
//!   429/503 and `Retry-After`) — a timer in the request's future, never a blocked thread — and
//!   sends the request with the crawler's `User-Agent` (and `From`) when it has none.
//!
//! Each response carries a [`RobotsInfo`] in its extensions: the deciding rule, where the rules
//! came from, the wait, and the parsed `X-Robots-Tag` directives.
//!
//! ```no_run
//! # async fn demo() -> Result<(), robots_fetch::BoxError> {
//! use bytes::Bytes;
//! use http_body_util::Full;
//! use hyper_util::client::legacy::Client;
//! use hyper_util::rt::TokioExecutor;
//! use robots_tower::{RobotsError, RobotsLayer};
//! use tower::{Service, ServiceBuilder, ServiceExt};
//! use tower_http::follow_redirect::FollowRedirectLayer;
//!
//! let client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
//! let mut service = ServiceBuilder::new()
//!     .layer(FollowRedirectLayer::new()) // outside: every hop goes through the robots check
//!     .layer(RobotsLayer::builder("FooBot/1.0 (+https://foo.example/bot)").build())
//!     .service(client);
//! let request = http::Request::get("http://example.com/page").body(Full::default())?;
//! match service.ready().await?.call(request).await {
//!     Ok(response) => println!("{}", response.status()),
//!     Err(e) => match e.downcast_ref::<RobotsError>() {
//!         Some(RobotsError::Disallowed { rule, .. }) => println!("blocked by {rule:?}"),
//!         _ => return Err(e),
//!     },
//! }
//! # Ok(()) }
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod config;
mod error;
#[cfg(feature = "redis")]
mod fleet;
mod gate;
#[cfg(feature = "reqwest")]
mod middleware;
mod politeness;
mod service;

pub use config::{ForLayer, ForMiddleware, RobotsConfig};
pub use error::{DecidingRule, RobotsError};
#[cfg(feature = "redis")]
pub use fleet::FleetFallback;
pub use gate::{IdentityHeaders, RobotsInfo};
#[cfg(feature = "reqwest")]
pub use middleware::RobotsMiddleware;
pub use politeness::{PolitenessConfig, Spacing};
#[cfg(feature = "redis")]
pub use robots_fetch::{FleetError, RedisFleet};
pub use service::{RobotsLayer, RobotsService};
