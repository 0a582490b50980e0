#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

/// The robots.txt parser and matcher (the `robots-core` crate).
pub use robots_core as core;
/// Fetching and caching robots.txt per origin (the `robots-fetch` crate).
pub use robots_fetch as fetch;
/// The tower layer and reqwest-middleware middleware (the `robots-tower` crate).
pub use robots_tower as tower;
