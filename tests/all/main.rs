//! The `robots` package's integration tests (the CLI on the wire), in one binary.

// The fleet crawl needs Redis (feature `redis`, on by default), and only it uses these.
mod cli;
mod cli_messages;
mod cli_network;
#[cfg(feature = "redis")]
mod crawl;
#[cfg(feature = "redis")]
mod examples;
#[cfg(feature = "redis")]
mod hostile;
#[cfg(feature = "redis")]
mod identity;
#[cfg(feature = "redis")]
mod json_doc;
mod layout;
#[cfg(feature = "redis")]
mod politeness;
#[cfg(feature = "redis")]
use robots_test_support::redis_server;
#[cfg(feature = "redis")]
use robots_test_support::site;
