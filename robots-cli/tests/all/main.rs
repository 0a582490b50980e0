//! The `robots` tool's integration tests (the binary on the wire), in one binary.

mod address_rule;
mod cli;
mod cli_messages;
mod cli_network;
// The fleet crawl needs Redis (feature `redis`, on by default), and only it uses these.
#[cfg(feature = "redis")]
mod crawl;
mod crawl_input;
#[cfg(feature = "redis")]
mod hostile;
#[cfg(feature = "redis")]
mod identity;
#[cfg(feature = "redis")]
mod json_doc;
mod netns;
#[cfg(feature = "redis")]
mod politeness;
mod sitemaps;
#[cfg(feature = "redis")]
use robots_test_support::redis_server;
#[cfg(feature = "redis")]
use robots_test_support::site;
