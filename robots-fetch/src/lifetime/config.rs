//! The numbers every lifetime rule reads: one configuration for the cache and for a sans-I/O
//! caller (the Python package) alike.

use std::time::Duration;

/// Lifetimes, back-off and size of the cache. Every number has a polite default.
#[derive(Debug, Clone)]
pub struct CacheConfig {
    /// How long a good copy lives without `Cache-Control: max-age` (24 h).
    pub default_ttl: Duration,
    /// Bounds for `max-age` (1 min … 24 h).
    pub min_ttl: Duration,
    /// See `min_ttl`.
    pub max_ttl: Duration,
    /// First retry after an unreachable fetch, doubled per consecutive failure (1 min)…
    pub retry_base: Duration,
    /// …but the first retry after a 429 or 5xx that named no `Retry-After` comes sooner (10 s):
    /// a server that answered is often back in seconds. The retries after it back off from
    /// `retry_base` (10 s, 1, 2, 4 min…).
    pub status_retry_first: Duration,
    /// …up to this (1 h).
    pub retry_max: Duration,
    /// `Retry-After` is honoured up to this (24 h), and at least `retry_floor`.
    pub retry_after_max: Duration,
    /// The shortest wait before a retry, whatever `Retry-After` says (1 s).
    pub retry_floor: Duration,
    /// With no good copy, disallow all until the origin has been unreachable this long, then
    /// allow all (30 days).
    pub give_up_after: Duration,
    /// Treat 401 and 403 as disallow all (the older convention) instead of allow all.
    pub auth_errors_disallow: bool,
    /// How many origins are kept at most (100,000); the least useful are evicted beyond that.
    /// (Each entry weighs at least `max_bytes / capacity`, which is how both bounds hold.) The
    /// last `capacity` fresh copies evicted are remembered, about 40 bytes each beyond
    /// `max_bytes` (4 MB at the default), so that fetching one again counts in
    /// `CacheStats::refetches`.
    pub capacity: u64,
    /// Heap bytes the cached entries may hold together (256 MiB, at least 4 MiB); the least
    /// useful are evicted beyond that. An entry for a 500 KiB file takes 1.1–1.3× its size.
    pub max_bytes: u64,
}

impl Default for CacheConfig {
    fn default() -> CacheConfig {
        CacheConfig {
            default_ttl: Duration::from_secs(24 * 3600),
            min_ttl: Duration::from_secs(60),
            max_ttl: Duration::from_secs(24 * 3600),
            retry_base: Duration::from_secs(60),
            status_retry_first: Duration::from_secs(10),
            retry_max: Duration::from_secs(3600),
            retry_after_max: Duration::from_secs(24 * 3600),
            retry_floor: Duration::from_secs(1),
            give_up_after: Duration::from_secs(30 * 24 * 3600),
            auth_errors_disallow: false,
            capacity: 100_000,
            max_bytes: 256 * 1024 * 1024,
        }
    }
}
