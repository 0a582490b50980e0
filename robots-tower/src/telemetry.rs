//! Metrics through the `metrics` crate (feature `metrics`; without it these do nothing):
//!
//! | name | kind | labels | what |
//! |---|---|---|---|
//! | `robots_decisions_total` | counter | `outcome`: `allowed`, `disallowed`, `unreachable`, `skipped`, `crawl_delay_too_long` | decisions, exactly one outcome per request decided: `allowed` once nothing refuses it (robots.txt, nor an overlong Crawl-delay: `crawl_delay_too_long`); `skipped`: `SkipRobotsCheck`. `RobotsHooks::check` and `verdict` count the verdict alone; `RobotsHooks::acquire` counts nothing |
//! | `robots_not_ready_total` | counter | `reason`: `spacing`, `paused`, `in_flight`, `robots_pending` | requests refused in schedule mode (`WhenNotReady::Fail`) because their origin was not ready; a separate series: such a request was also decided (`allowed`) |
//! | `robots_politeness_wait_seconds` | histogram | | time a request waited for its group's turn |
//! | `robots_pauses_total` | counter | `status`: the response's status (`429`, `503`…), `0` for a network error | groups paused by the back-off (distress, or a rate limit exhausted without a reset), once per pause, in the process that saw the response |
//!
//! robots-fetch adds `robots_fetches_total`, `robots_revalidations_total`, `robots_cache_entries`
//! and `robots_cache_bytes`.

use std::time::Duration;

/// A request was decided.
pub(crate) fn decided(outcome: &'static str) {
    #[cfg(feature = "metrics")]
    metrics::counter!("robots_decisions_total", "outcome" => outcome).increment(1);
    #[cfg(not(feature = "metrics"))]
    let _ = outcome;
}

/// A request was refused in schedule mode: its origin was not ready.
pub(crate) fn not_ready(reason: crate::error::NotReadyReason) {
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
