//! Metrics through the `metrics` crate (feature `metrics`; without it these do nothing):
//!
//! | name | kind | labels | what |
//! |---|---|---|---|
//! | `robots_decisions_total` | counter | `outcome`: `allowed`, `disallowed`, `unreachable`, `skipped` | robots.txt verdicts, one per request decided (`skipped`: `SkipRobotsCheck`) |
//! | `robots_not_ready_total` | counter | `reason`: `spacing`, `paused`, `in_flight`, `robots_pending` | requests refused in schedule mode (`WhenNotReady::Fail`) because their origin was not ready; one allowed by robots.txt was counted `allowed` too |
//! | `robots_politeness_wait_seconds` | histogram | | time a request waited for its origin's turn |
//! | `robots_pauses_total` | counter | `status`: `429`, `503` | origins paused by a 429/503 |
//!
//! robots-fetch adds `robots_fetches_total`, `robots_cache_entries` and `robots_cache_bytes`.

use std::time::Duration;

/// A request was decided.
pub(crate) fn decided(outcome: &'static str) {
    #[cfg(feature = "metrics")]
    metrics::counter!("robots_decisions_total", "outcome" => outcome).increment(1);
    #[cfg(not(feature = "metrics"))]
    let _ = outcome;
}

/// A request was refused in schedule mode: its origin was not ready.
pub(crate) fn not_ready(reason: crate::NotReadyReason) {
    #[cfg(feature = "metrics")]
    metrics::counter!("robots_not_ready_total", "reason" => reason.as_str()).increment(1);
    #[cfg(not(feature = "metrics"))]
    let _ = reason;
}

/// A request waited this long for its origin's turn.
pub(crate) fn waited(wait: Duration) {
    #[cfg(feature = "metrics")]
    metrics::histogram!("robots_politeness_wait_seconds").record(wait.as_secs_f64());
    #[cfg(not(feature = "metrics"))]
    let _ = wait;
}

/// An origin was paused by a 429 or 503.
pub(crate) fn paused(status: u16) {
    #[cfg(feature = "metrics")]
    metrics::counter!("robots_pauses_total", "status" => status.to_string()).increment(1);
    #[cfg(not(feature = "metrics"))]
    let _ = status;
}
