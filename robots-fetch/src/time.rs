//! Instants computed from durations that configuration and servers give: a leaf, shared by the
//! cache and the stores.

use std::time::Duration;

use tokio::time::Instant;

/// `now + delay`, saturating far in the future instead of overflowing: delays come from
/// configuration and from servers (`Retry-After`, `max-age`), and neither may crash a crawler.
pub fn later(now: Instant, delay: Duration) -> Instant {
    now.checked_add(delay)
        .unwrap_or_else(|| now + Duration::from_secs(100 * 365 * 24 * 3600))
}
