//! How long a crawl holds a site's URLs while its robots.txt cannot be had (spec section 14):
//! one rule for every crawl loop (robots-tower's `Frontier::run`, the Scrapy middleware).

use std::time::Duration;

/// How long a crawl holds a site's URLs while its robots.txt cannot be had, by default: a
/// minute, so that one dead site keeps a one-off crawl about that long, not for the cache's
/// whole retry schedule. With the default [`CacheConfig`](super::CacheConfig), a site that
/// answers 5xx is tried at 0 and 10 s (the next try, at 70 s, would come past the hold), one
/// that does not answer at 0 and 60 s.
pub const DEFAULT_HOLD_UNREACHABLE: Duration = Duration::from_secs(60);

/// The most times one URL waits for an unreachable robots.txt, whatever the hold: a robots.txt
/// that is reachable between outages starts each anew, and must not hold a URL for ever.
pub const MOST_UNREACHABLE_TRIES: u32 = 32;

/// Whether a URL refused because its robots.txt is unreachable waits for robots.txt's next try
/// (`true`) or is given up: it waits when that try comes within `hold` of the outage's start,
/// so no URL is held longer than `hold`. `unreachable_for` is how long the outage has lasted
/// (the cache's `CachedRobots::unreachable_for`), `next_try_in` when robots.txt is tried again.
///
/// ```
/// use std::time::Duration;
/// use robots_fetch::{DEFAULT_HOLD_UNREACHABLE, waits_for_robots};
/// let secs = Duration::from_secs;
/// // A dead site: tried at 0, then at 60 s (within the minute), then at 180 s (past it).
/// assert!(waits_for_robots(secs(0), secs(60), DEFAULT_HOLD_UNREACHABLE));
/// assert!(!waits_for_robots(secs(60), secs(120), DEFAULT_HOLD_UNREACHABLE));
/// // A hold of an hour waits those out.
/// assert!(waits_for_robots(secs(60), secs(120), secs(3600)));
/// ```
pub fn waits_for_robots(unreachable_for: Duration, next_try_in: Duration, hold: Duration) -> bool {
    unreachable_for.saturating_add(next_try_in) <= hold
}
