#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]
#![warn(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

/// The robots.txt parser and matcher (the `robots-core` crate).
pub use robots_core as core;
/// Fetching and caching robots.txt per origin (the `robots-fetch` crate).
pub use robots_fetch as fetch;
/// The tower layer and reqwest-middleware middleware (the `robots-tower` crate).
pub use robots_tower as tower;
/// The `http` crate (1.x) the layer's requests and responses are made of.
pub use robots_tower::http;
/// The `reqwest` (0.13) the middleware works with: `polite_robots::reqwest::Client` always
/// matches.
#[cfg(feature = "reqwest")]
pub use robots_tower::reqwest;
/// The `reqwest-middleware` (0.5) the middleware plugs into.
#[cfg(feature = "reqwest")]
pub use robots_tower::reqwest_middleware;
/// The sitemap parser (`robots-sitemap`): no I/O, bytes in, pages out. Expansion over the polite
/// stack is `tower::RobotsHooks::sitemaps_of`.
pub use robots_tower::robots_sitemap as sitemap;
