//! Metrics through the `metrics` crate (feature `metrics`; without it these do nothing):
//!
//! | name | kind | labels | what |
//! |---|---|---|---|
//! | `robots_fetches_total` | counter | `outcome`: `parsed`, `not_modified`, `unavailable`, `unreachable` | robots.txt fetches made (`not_modified`: a refresh answered 304, the copy kept) |
//! | `robots_revalidations_total` | counter | | conditional refreshes sent (a kept copy's `ETag`/`Last-Modified`) |
//! | `robots_cache_entries` | gauge | `cache`: the cache's name | origins in the cache |
//! | `robots_cache_bytes` | gauge | `cache`: the cache's name | heap bytes the cached entries weigh |
//!
//! Each cache sets its own gauges (named by `RobotsCacheBuilder::metrics_name`, `cache-N` by
//! default); the process's total is their sum over `cache`.

/// A robots.txt fetch ended with this outcome.
pub(crate) fn fetched(outcome: &'static str) {
    #[cfg(feature = "metrics")]
    metrics::counter!("robots_fetches_total", "outcome" => outcome).increment(1);
    #[cfg(not(feature = "metrics"))]
    let _ = outcome;
}

/// A conditional refresh is sent.
pub(crate) fn revalidating() {
    #[cfg(feature = "metrics")]
    metrics::counter!("robots_revalidations_total").increment(1);
}

/// The cache's size after a change.
pub(crate) fn cache_size(cache: &str, entries: usize, bytes: u64) {
    #[cfg(feature = "metrics")]
    {
        metrics::gauge!("robots_cache_entries", "cache" => cache.to_string()).set(entries as f64);
        metrics::gauge!("robots_cache_bytes", "cache" => cache.to_string()).set(bytes as f64);
    }
    #[cfg(not(feature = "metrics"))]
    let _ = (cache, entries, bytes);
}
