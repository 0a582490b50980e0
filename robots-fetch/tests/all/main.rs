//! robots-fetch's integration tests, in one binary. `no_alloc` and `memory` stay apart: each
//! installs a counting global allocator.

// The cache and its fetcher are feature `client`'s (on by default).
#![cfg(feature = "client")]

mod cache;
mod fleet;
mod outcomes;
mod revalidation;
mod status_table;
mod support;
#[cfg(feature = "redis")]
use robots_test_support::redis_server;
