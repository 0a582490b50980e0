//! # robots
//!
//! Polite web crawling for Rust. This facade re-exports the workspace's crates:
//!
//! - [`core`] (`robots-core`): the robots.txt parser and matcher, with Google's exact verdicts.
//!
//! ```
//! use robots::core::RobotsTxt;
//! let robots = RobotsTxt::parse(b"User-agent: *\nDisallow: /private\n");
//! assert!(!robots.is_allowed("FooBot", "https://example.com/private/page"));
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub use robots_core as core;
