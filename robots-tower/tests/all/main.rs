//! robots-tower's integration tests, in one binary (one link instead of ten). `no_alloc` stays
//! apart: it installs a counting global allocator.

use robots_test_support::captured;
mod composition;
mod crawl_loop;
mod first_interval;
mod fleet;
mod frameworks;
mod frontier;
mod groups;
mod guarantees;
mod hostile;
mod http_semantics;
#[cfg(feature = "web-bot-auth")]
mod identity;
mod layer;
mod metrics;
mod netns;
mod observability;
mod overrides;
mod pacers;
#[cfg(feature = "redis")]
use robots_test_support::redis_server;
mod schedule;
mod sitemaps;
use robots_test_support::site;
mod support;
mod usage;
