#![doc = include_str!("../docs/library.md")]
#![forbid(unsafe_code)]
#![warn(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

// The types most users touch, at the root: the front ends, their error and configuration, the
// crawl loop, the robots.txt types and the sitemap reader. Everything else is in the modules
// below, one per crate.

#[doc(no_inline)]
pub use robots_core::{Matcher, RobotsTxt};
#[doc(no_inline)]
pub use robots_fetch::{Origin, RobotsCache};
#[cfg(feature = "redis")]
#[doc(no_inline)]
pub use robots_tower::RedisFleet;
#[cfg(feature = "reqwest")]
#[doc(no_inline)]
pub use robots_tower::RobotsMiddleware;
#[doc(no_inline)]
pub use robots_tower::robots_sitemap::{AsyncSitemapReader, SitemapReader};
#[doc(no_inline)]
pub use robots_tower::{
    Frontier, FrontierConfig, Job, RobotsConfig, RobotsError, RobotsHooks, RobotsInfo, RobotsLayer,
    SitemapEvent, SitemapOptions, Visit,
};

/// robots.txt itself (the `robots-core` crate): the parser and matcher with Google's verdicts,
/// lint, the AI usage preferences, page-level directives. No I/O.
pub use robots_core as robots_txt;
/// Fetching and caching robots.txt per origin (the `robots-fetch` crate): status codes,
/// redirects, lifetimes, the resolver and address rule, identity.
pub use robots_fetch as fetch;
/// The polite client (the `robots-tower` crate): the tower layer, the reqwest-middleware
/// middleware, the hooks, per-server pacing, the fleet, the frontier and sitemap expansion.
pub use robots_tower as client;
/// The sitemap parser (the `robots-sitemap` crate): no I/O, bytes in, pages out. Expansion over
/// the polite client is [`RobotsHooks::sitemaps_of`] and the middleware's `sitemaps`.
pub use robots_tower::robots_sitemap as sitemap;

/// The `http` crate (1.x) the layer's requests and responses are made of.
pub use robots_tower::http;
/// The `reqwest` (0.13) the middleware works with: `polite_robots::reqwest::Client` always
/// matches.
#[cfg(feature = "reqwest")]
pub use robots_tower::reqwest;
/// The `reqwest-middleware` (0.5) the middleware plugs into.
#[cfg(feature = "reqwest")]
pub use robots_tower::reqwest_middleware;
/// The `url` crate (2.x) whose [`url::Url`] the frontier and the caches take.
pub use url;

/// Guides: what the crates do beside their API, for users.
pub mod guide {
    #[doc = include_str!("../docs/behaviour.md")]
    pub mod behaviour {}
    #[doc = include_str!("../docs/composition.md")]
    pub mod composition {}
    #[doc = include_str!("../docs/frameworks.md")]
    pub mod frameworks {}
    #[doc = include_str!("../docs/json.md")]
    pub mod json {}
}
