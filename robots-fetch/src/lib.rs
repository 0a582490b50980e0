#![doc = include_str!("../README.md")]
//!
//! It fetches with any `FetchClient`: `reqwest::Client` (feature `reqwest`), or a tower
//! service through `ServiceClient` (feature `client`, on by default; without it the crate is its
//! sans-I/O rules only).
//!
//! Here with a tower service standing in for the network (so the example runs as a test); with
//! reqwest, pass `robots_fetch::reqwest_client(cache.fetch_config())?` as the client instead:
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use bytes::Bytes;
//! use http_body_util::Full;
//! use robots_fetch::{Origin, RobotsCache, ServiceClient};
//!
//! let network = tower::service_fn(|request: http::Request<Full<Bytes>>| async move {
//!     assert_eq!(request.uri().path(), "/robots.txt");
//!     let body = Full::new(Bytes::from("User-agent: *\nDisallow: /private\n"));
//!     Ok::<_, std::convert::Infallible>(http::Response::new(body))
//! });
//! let client = ServiceClient::new(network);
//!
//! let cache = RobotsCache::builder("FooBot/1.0 (+https://foo.example/bot)").build();
//! let url: url::Url = "https://example.com/private/page".parse()?;
//! let origin = Origin::from_url(&url)?; // the cache's key: http(s) only, normalised
//! let entry = cache.get(&client, &origin).await; // fetched once per origin, then cached
//! assert!(!entry.check(&url).allowed);
//! println!("{}", entry.source().describe()); // parsed (HTTP 200), fetched now, refreshed in 1 d
//! # Ok(()) }
//! ```
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_docs)]

// Without feature `client` the crate is its sans-I/O rules only (origins, the status table,
// redirects, lifetimes, headers, the address rule's classification): what a caller with its own
// HTTP stack drives (the Python package), without tokio or a compression stack.
mod address;
#[cfg(feature = "client")]
mod body;
#[cfg(feature = "client")]
mod cache;
#[cfg(feature = "client")]
mod client;
mod distress;
#[cfg(feature = "client")]
mod fetch;
mod headers;
mod human;
#[cfg(feature = "web-bot-auth")]
pub mod identity;
mod lifetime;
mod origin;
mod outcome;
pub mod redirect;
#[cfg(feature = "redis")]
mod redis_store;
#[cfg(feature = "client")]
mod resolve;
mod retrieval;
#[cfg(feature = "client")]
mod store;
#[cfg(feature = "client")]
pub mod telemetry;
#[cfg(feature = "client")]
mod time;
mod validators;

#[cfg(feature = "client")]
pub use body::{BodyReader, body_reader};
#[cfg(feature = "client")]
pub use cache::{
    CacheStats, CachedRobots, CrawlerRecord, ParsedRobots, RobotsCache, RobotsCacheBuilder, Rules,
    Source, path_of_url,
};
#[cfg(feature = "client")]
pub use client::{BoxError, FetchClient, FollowedByClient, IntoBytes, ServiceClient};
pub use distress::{Backoff, DISTRESS_STATUSES, jittered};
#[cfg(feature = "client")]
pub use fetch::{FetchConfig, fetch, revalidate};
pub use headers::{RateLimitPause, max_age, rate_limit_pause, retry_after};
// Public because every crate's messages print durations one way (robots-tower's errors,
// `RobotsInfo`'s Debug, the CLI), and users' own messages can match them.
pub use address::{is_internal, is_internal_ip, normal_name};
pub use human::HumanDuration;
#[cfg(feature = "web-bot-auth")]
pub use identity::{
    KeyDirectory, KeyError, PublicKey, RequestSigner, SignError, SignatureAgentError, SigningKey,
    Verified, VerifyError, verify_request,
};
pub use lifetime::{
    CacheConfig, DEFAULT_HOLD_UNREACHABLE, Kept, KeptCopy, MOST_UNREACHABLE_TRIES, Next, NextRules,
    waits_for_robots,
};
pub use origin::{Origin, OriginError, OriginKey, OriginRef};
pub use outcome::{
    FetchOutcome, NetworkError, NetworkErrorKind, UnavailableReason, UnreachableCause,
};
pub use redirect::{HopRule, RedirectChain, RedirectPolicy, RedirectRefusal};
#[cfg(feature = "redis")]
pub use redis_store::{FleetConnection, FleetError, RedisFleet, RedisStore};
#[cfg(feature = "client")]
pub use resolve::{
    ConnectRefused, NameNotResolved, OverrideOnOtherPort, ResolveOverrideError, Resolver,
};
pub use retrieval::{Answer, MAX_REDIRECTS, Retrieval};
#[cfg(feature = "client")]
pub use store::{
    InProcessStore, RobotsStore, StoreError, StoreFuture, StoredKind, StoredOutage, StoredRobots,
};
// Public because robots-tower computes its deadlines (pauses, a group's next start) by the same
// saturating rule as the cache's: one rule for every instant fed from outside.
#[cfg(feature = "client")]
pub use time::later;
pub use validators::{MAX_VALIDATOR_BYTES, Validators};

/// A `reqwest::Client` set up for fetching robots.txt: no redirect following (the fetcher counts
/// hops itself), the configured connect and total timeouts, the crawler's User-Agent, and no
/// idle connections kept (an origin's robots.txt is fetched about once a day: a connection kept
/// for it would only hold memory, for every site a broad crawl meets).
#[cfg(feature = "reqwest")]
pub fn reqwest_client(config: &FetchConfig) -> Result<reqwest::Client, reqwest::Error> {
    reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(config.connect_timeout)
        .timeout(config.timeout)
        .user_agent(config.user_agent.clone())
        .dns_resolver(std::sync::Arc::new(config.resolver.clone()))
        .build()
}
