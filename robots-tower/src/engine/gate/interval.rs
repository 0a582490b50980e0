//! An origin's interval from its robots.txt (Crawl-delay, Request-rate), and what an overlong
//! one gets.

use std::time::Duration;

use robots_fetch::CachedRobots;
use tracing::{info, warn};

use super::Gate;
use crate::error::RobotsError;
use crate::pacing::rules::Interval;

impl Gate {
    /// The interval robots.txt asks for the origin, as applied (and the asked one when
    /// clamped); refused when it asks for more than the maximum and that is refused.
    #[inline]
    pub(crate) fn interval_for(
        &self,
        entry: &CachedRobots,
    ) -> Result<(Duration, Option<Duration>), RobotsError> {
        match self.interval_asked(entry) {
            Interval::Applied(interval, clamped_from) => Ok((interval, clamped_from)),
            Interval::TooLong(asked) => Err(self.too_long(entry, asked)),
        }
    }

    /// What robots.txt asks for the origin, under the configured maximum.
    pub(crate) fn interval_asked(&self, entry: &CachedRobots) -> Interval {
        let asked = [
            entry.crawl_delay().map(|c| c.delay),
            entry.request_rate().map(|r| r.interval()),
        ]
        .into_iter()
        .flatten()
        .max();
        self.pacing.config().interval(asked)
    }

    /// The refusal of an origin whose Crawl-delay is above the maximum (built off the usual
    /// path: the error is large).
    #[cold]
    pub(super) fn too_long(&self, entry: &CachedRobots, asked: Duration) -> RobotsError {
        let max = self.pacing.config().max_delay;
        info!(origin = %entry.origin(), ?asked, ?max, "Crawl-delay above the maximum: the origin is refused");
        RobotsError::CrawlDelayTooLong {
            origin: entry.origin().clone(),
            asked,
            max,
        }
    }

    /// Says, once per origin, that robots.txt asked for more than the maximum interval and the
    /// interval was clamped (as the caller chose).
    #[inline]
    pub(super) fn warn_if_clamped(
        &self,
        entry: &CachedRobots,
        applied: Duration,
        asked: Option<Duration>,
    ) {
        if let Some(asked) = asked {
            self.warn_clamped(entry, applied, asked);
        }
    }

    #[cold]
    pub(super) fn warn_clamped(&self, entry: &CachedRobots, applied: Duration, asked: Duration) {
        let mut warned = self.clamp_warned.lock().unwrap_or_else(|e| e.into_inner());
        if warned.contains(entry.origin()) {
            return;
        }
        // Bounded: a crawl of very many overlong origins warns again after a while.
        if warned.len() >= 4096 {
            warned.clear();
        }
        warned.insert(entry.origin().clone());
        warn!(origin = %entry.origin(), ?asked, ?applied, "Crawl-delay above the maximum: clamped, so this origin is crawled faster than it asked");
    }
}
