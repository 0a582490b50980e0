//! robots-tower's integration tests, in one binary (one link instead of ten). `no_alloc` stays
//! apart: it installs a counting global allocator.

#[path = "../../../tests/support/captured.rs"]
mod captured;
mod composition;
mod fleet;
mod frameworks;
mod groups;
mod guarantees;
mod hostile;
mod http_semantics;
mod layer;
mod metrics;
mod observability;
mod overrides;
mod pacers;
#[path = "../../../tests/support/redis_server.rs"]
mod redis_server;
mod schedule;
#[path = "../../../tests/support/site.rs"]
mod site;
mod support;
mod usage;
