//! What `robots crawl` prints: a line per URL (text or JSON) and the summary.

use std::time::Duration;

use robots_tower::{DecidingRule, RobotsError};
use serde::Serialize;

/// One line of `--format json`.
#[derive(Serialize)]
pub(super) struct Outcome {
    pub(super) url: String,
    pub(super) outcome: &'static str,
    pub(super) status: Option<u16>,
    pub(super) rule: Option<RuleJson>,
    pub(super) waited_ms: u64,
    pub(super) error: Option<String>,
}

/// How the crawl ended: what became of every URL, and whether `--max-pages` cut it short. The
/// final line in text, and the final JSON object (`{"summary": …}`).
#[derive(Default, Serialize)]
pub(super) struct Summary {
    /// Pages the server answered, whatever their status.
    pub(super) fetched: usize,
    /// The fetched pages by status class (`2xx`, `3xx`, `4xx`, `5xx`).
    pub(super) statuses: std::collections::BTreeMap<String, usize>,
    /// Refused by robots.txt.
    pub(super) disallowed: usize,
    /// Refused because the site asks for a longer Crawl-delay than `--max-delay`.
    pub(super) crawl_delay_too_long: usize,
    /// Not fetched: robots.txt could not be had (or the fleet's Redis, failing closed).
    pub(super) unreachable: usize,
    /// Not fetched: a server handed the URL on (a sitemap, a redirect), and it leads into an
    /// internal address.
    pub(super) address_refused: usize,
    /// Not fetched: the request failed, or the string was not a URL.
    pub(super) failed: usize,
    /// Not crawled: left by `--max-pages`, or a link found when the queue had no room.
    pub(super) not_crawled: usize,
    /// `max-pages` when `--max-pages` stopped the crawl with links left; otherwise `done`.
    pub(super) ended: &'static str,
}

impl Summary {
    pub(super) fn count(&mut self, outcome: &Outcome) {
        match outcome.outcome {
            "fetched" => {
                self.fetched += 1;
                let class = outcome
                    .status
                    .map_or_else(|| "other".to_string(), |s| format!("{}xx", s / 100));
                *self.statuses.entry(class).or_default() += 1;
            }
            "disallowed" => self.disallowed += 1,
            "crawl-delay-too-long" => self.crawl_delay_too_long += 1,
            "unreachable" => self.unreachable += 1,
            "address-refused" => self.address_refused += 1,
            "not-crawled" => self.not_crawled += 1,
            _ => self.failed += 1,
        }
    }

    pub(super) fn text(&self) -> String {
        let statuses: Vec<String> = self
            .statuses
            .iter()
            .map(|(class, n)| format!("{n} {class}"))
            .collect();
        let statuses = if statuses.is_empty() {
            String::new()
        } else {
            format!(" ({})", statuses.join(", "))
        };
        let ended = match self.ended {
            "max-pages" => "stopped by --max-pages with links left",
            _ => "done",
        };
        let address = if self.address_refused > 0 {
            format!(
                ", {} refused by the address rule (handed on into an internal address)",
                self.address_refused
            )
        } else {
            String::new()
        };
        let not_crawled = if self.not_crawled > 0 {
            format!(", {} not crawled", self.not_crawled)
        } else {
            String::new()
        };
        format!(
            "summary: {} fetched{statuses}, {} disallowed, {} refused for their Crawl-delay, {} unreachable{address}, {} failed{not_crawled}; {ended}",
            self.fetched, self.disallowed, self.crawl_delay_too_long, self.unreachable, self.failed
        )
    }
}

#[derive(Serialize)]
pub(super) struct RuleJson {
    pub(super) line: u32,
    pub(super) kind: &'static str,
    pub(super) pattern: robots_core::RulePattern,
}

impl RuleJson {
    pub(super) fn of(rule: &DecidingRule) -> RuleJson {
        RuleJson {
            line: rule.line,
            kind: rule.kind.as_str(),
            pattern: rule.pattern.clone(),
        }
    }
}

/// What one URL came to: its line.
pub(super) struct Done {
    pub(super) outcome: Outcome,
    /// The string given was not a URL to fetch (an input error: exit 2 at the end).
    pub(super) not_a_url: bool,
    /// Where its line came from (`stdin line N`), for an error about it.
    pub(super) at: Option<String>,
}

pub(super) fn outcome_of(
    url: String,
    outcome: &'static str,
    status: Option<u16>,
    rule: Option<&DecidingRule>,
    waited: Duration,
    error: Option<String>,
) -> Outcome {
    Outcome {
        url,
        outcome,
        status,
        rule: rule.map(RuleJson::of),
        waited_ms: u64::try_from(waited.as_millis()).unwrap_or(u64::MAX),
        error,
    }
}

/// The outcome of a URL the library refused, with the tool's words; `message` is the error's
/// own, for refusals said as it says them.
pub(super) fn refusal(url: String, robots: &RobotsError, message: String) -> Outcome {
    let outcome = |kind, rule, error| outcome_of(url, kind, None, rule, Duration::ZERO, error);
    match robots {
        RobotsError::Disallowed { rule, .. } | RobotsError::DisallowedFor { rule, .. } => {
            outcome("disallowed", rule.as_ref(), None)
        }
        // What happened, without the cache's "retry in": this process exits when done.
        RobotsError::RobotsUnreachable { origin, cause, .. } => outcome(
            "unreachable",
            None,
            Some(format!("robots.txt of {origin} unreachable: {cause}")),
        ),
        RobotsError::FleetUnavailable { .. } => outcome("unreachable", None, Some(message)),
        RobotsError::AddressRefused { .. } => outcome("address-refused", None, Some(message)),
        RobotsError::RedirectRefused {
            reason: robots_fetch::RedirectRefusal::Rule { .. },
            ..
        } => outcome("address-refused", None, Some(message)),
        // Said with the tool's flag, not the library's setting.
        RobotsError::CrawlDelayTooLong {
            origin, asked, max, ..
        } => outcome(
            "crawl-delay-too-long",
            None,
            Some(format!(
                "{origin} asks for a Crawl-delay of {}, above --max-delay {}: its pages are not fetched (`--overlong-crawl-delay honor` waits it out, `clamp` crawls faster than asked)",
                robots_fetch::HumanDuration(*asked),
                robots_fetch::HumanDuration(*max)
            )),
        ),
        _ => outcome("error", None, Some(message)),
    }
}

/// `fetched     200  <url>  (waited 1200 ms)` and the like: the outcome first.
pub(super) fn text_line(outcome: &Outcome) -> String {
    let rule = |r: &RuleJson| {
        let key = if r.kind == "allow" {
            "Allow"
        } else {
            "Disallow"
        };
        format!("line {}: {key}: {}", r.line, r.pattern)
    };
    match outcome.outcome {
        "fetched" => format!(
            "fetched      {}  {}  (waited {} ms)",
            outcome.status.unwrap_or(0),
            outcome.url,
            outcome.waited_ms
        ),
        "disallowed" => format!(
            "DISALLOWED   {}  ({})",
            outcome.url,
            outcome
                .rule
                .as_ref()
                .map_or("everything disallowed".into(), rule)
        ),
        kind => format!(
            "{:<12} {}  ({})",
            kind.to_ascii_uppercase(),
            outcome.url,
            outcome.error.as_deref().unwrap_or("")
        ),
    }
}
