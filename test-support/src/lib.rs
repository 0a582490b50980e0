//! The workspace's test helpers, shared by the tests and benchmarks of every package: one
//! local site (and its in-memory twin for paused time), one real `redis-server` harness (with the fleet's pace state read and written field by field), one log capture, one corpus reader and one
//! counting allocator. Not published.

pub mod alloc;
#[cfg(feature = "logs")]
pub mod captured;
pub mod corpus;
#[cfg(feature = "memory")]
pub mod memory;
#[cfg(feature = "netns")]
pub mod netns;
pub mod pace;
pub mod redis_server;
#[cfg(feature = "site")]
pub mod site;
