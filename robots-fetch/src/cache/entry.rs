//! What the cache holds per origin: the compiled rules ([`ParsedRobots`]), where they came from
//! ([`Source`]), and the entry that ties them to their lifetimes ([`CachedRobots`]).

use std::sync::Arc;
use std::time::Duration;

use robots_core::{MatchedRule, Matcher, RobotsTxt, RulePattern, Usage, UsagePreferences, Verdict};
use tokio::time::Instant;
use url::Url;

use crate::origin::Origin;
use crate::outcome::{UnavailableReason, UnreachableCause};
use crate::validators::Validators;

/// What the cache keeps of a parsed robots.txt: the view compiled for the cache's crawler, the
/// sitemaps and the records that concern it. Not the file itself: that would double what every
/// entry costs.
#[derive(Debug)]
pub struct ParsedRobots {
    pub(super) matcher: Matcher,
    /// Views for the configured policy tokens (`Google-Extended`…), each compared as given.
    pub(super) policy: Box<[(Box<str>, Matcher)]>,
    pub(super) sitemaps: Box<[Box<str>]>,
    pub(super) records: Box<[CrawlerRecord]>,
    pub(super) body_len: usize,
}

/// A record (Crawl-delay, Host, Content-Signal, an unknown key…) of the crawler's groups or
/// outside any group, kept with its line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrawlerRecord {
    /// Line in robots.txt.
    pub line: u32,
    /// The key as written (invalid UTF-8 replaced).
    pub key: Box<str>,
    /// The value, escaped like a pattern as Google does (invalid UTF-8 replaced).
    pub value: Box<str>,
}

impl ParsedRobots {
    /// Parses `body` and keeps what the crawler with these tokens needs.
    pub fn new<S: AsRef<str>>(body: &[u8], tokens: &[S]) -> ParsedRobots {
        ParsedRobots::with_policy_tokens(body, tokens, &[] as &[&str])
    }

    /// [`ParsedRobots::new`], plus a view for each policy token (`Google-Extended`…), so that
    /// a URL can also be checked as that token ([`ParsedRobots::policy_matcher`]).
    pub fn with_policy_tokens<S: AsRef<str>, P: AsRef<str>>(
        body: &[u8],
        tokens: &[S],
        policy_tokens: &[P],
    ) -> ParsedRobots {
        let robots = RobotsTxt::parse(body);
        let matcher = robots.matcher_for(tokens);
        let policy = policy_tokens
            .iter()
            .map(|t| (Box::<str>::from(t.as_ref()), robots.matcher(t.as_ref())))
            .collect();
        let lossy = |bytes: &[u8]| -> Box<str> { String::from_utf8_lossy(bytes).into() };
        let sitemaps = robots.sitemaps().map(|s| lossy(s.url)).collect();
        let records = robots
            .records_for(matcher.selection())
            .into_iter()
            .map(|r| CrawlerRecord {
                line: r.line,
                key: lossy(r.key),
                value: lossy(r.value),
            })
            .collect();
        ParsedRobots {
            matcher,
            policy,
            sitemaps,
            records,
            body_len: body.len(),
        }
    }

    /// The view compiled for the cache's crawler.
    pub fn matcher(&self) -> &Matcher {
        &self.matcher
    }

    /// The view for a configured policy token (ASCII case-insensitive), if it was configured.
    pub fn policy_matcher(&self, token: &str) -> Option<&Matcher> {
        self.policy
            .iter()
            .find(|(t, _)| t.eq_ignore_ascii_case(token))
            .map(|(_, m)| m)
    }

    /// The pattern of a rule one of these views matched, owned without copying (see
    /// [`Matcher::pattern_of`]); a rule of another view is copied.
    pub fn pattern_of(&self, rule: &MatchedRule<'_>) -> RulePattern {
        std::iter::once(&self.matcher)
            .chain(self.policy.iter().map(|(_, m)| m))
            .find_map(|view| view.pattern_of(rule))
            .unwrap_or_else(|| RulePattern::from(rule.pattern))
    }

    /// Every sitemap URL in the file, in file order, as written.
    pub fn sitemaps(&self) -> impl ExactSizeIterator<Item = &str> + '_ {
        self.sitemaps.iter().map(|s| &**s)
    }

    /// The records of the crawler's groups and those outside any group, in file order.
    pub fn records(&self) -> &[CrawlerRecord] {
        &self.records
    }

    /// How long the fetched body was (after the 500 KiB cap).
    pub fn body_len(&self) -> usize {
        self.body_len
    }

    /// Heap bytes held (what the cache weighs it by).
    pub fn heap_bytes(&self) -> usize {
        let strings = |s: &str| s.len() + std::mem::size_of::<Box<str>>();
        std::mem::size_of::<Self>()
            + self.matcher.heap_bytes()
            + self
                .policy
                .iter()
                .map(|(t, m)| t.len() + m.heap_bytes() + std::mem::size_of::<(Box<str>, Matcher)>())
                .sum::<usize>()
            + self.sitemaps.iter().map(|s| strings(s)).sum::<usize>()
            + self
                .records
                .iter()
                .map(|r| std::mem::size_of::<CrawlerRecord>() + r.key.len() + r.value.len())
                .sum::<usize>()
    }
}

/// The rules an entry applies.
#[derive(Debug, Clone)]
pub enum Rules {
    /// A robots.txt was parsed.
    Parsed(Arc<ParsedRobots>),
    /// Everything is allowed (robots.txt unavailable, or unreachable for too long).
    AllowAll,
    /// Nothing is allowed (robots.txt unreachable, or 401/403 when so configured).
    DisallowAll,
}

/// Where an entry's rules came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// Fetched and parsed; fresh until `expires_at`.
    Parsed {
        /// The HTTP status of the final response.
        status: u16,
        /// Where the file was finally found, when robots.txt redirected (the rules belong to
        /// the original origin all the same).
        redirected_to: Option<Arc<str>>,
        /// When it was fetched, or last confirmed unchanged by a `304 Not Modified`.
        fetched_at: Instant,
        /// When it will be fetched again.
        expires_at: Instant,
        /// The last refresh was answered `304 Not Modified`: the rules are those of the copy
        /// fetched before, confirmed at `fetched_at`.
        not_modified: bool,
    },
    /// Given by [`crate::RobotsCache::insert`].
    Inserted {
        /// When.
        at: Instant,
        /// When it will be fetched.
        expires_at: Instant,
    },
    /// A 4xx (or an unfollowable redirect chain): allow all, or disallow all for 401/403 when so
    /// configured.
    Unavailable {
        /// The status.
        status: u16,
        /// Why.
        reason: UnavailableReason,
        /// When it was fetched.
        fetched_at: Instant,
        /// When it will be fetched again.
        expires_at: Instant,
    },
    /// Unreachable now, but the last good copy (fetched at `fetched_at` with `status`, or the
    /// last unavailable answer) is still used.
    Stale {
        /// The good copy's status.
        status: u16,
        /// When the good copy was fetched.
        fetched_at: Instant,
        /// Why the last fetch failed.
        cause: UnreachableCause,
        /// When the outage began.
        unreachable_since: Instant,
        /// When the next fetch will be tried.
        next_retry: Instant,
    },
    /// Unreachable with no good copy: disallow all until `give_up_after`, then allow all.
    Unreachable {
        /// Why.
        cause: UnreachableCause,
        /// When the outage began.
        since: Instant,
        /// When the next fetch will be tried.
        next_retry: Instant,
    },
}

impl Source {
    /// For people, with times relative to now: `parsed (HTTP 200), fetched 3 s ago, refreshed in
    /// 23 h 59 min`.
    pub fn describe(&self) -> impl std::fmt::Display + '_ {
        DescribeSource(self)
    }

    /// `"parsed"`, `"unavailable"` or `"unreachable"`, as the CLI reports it (an inserted copy is
    /// `"parsed"`; a stale one is `"parsed"` too, its rules being a parsed file).
    pub fn outcome(&self) -> &'static str {
        match self {
            Source::Parsed { .. } | Source::Inserted { .. } | Source::Stale { .. } => "parsed",
            Source::Unavailable { .. } => "unavailable",
            Source::Unreachable { .. } => "unreachable",
        }
    }

    /// The HTTP status behind the rules, if any.
    pub fn status(&self) -> Option<u16> {
        match self {
            Source::Parsed { status, .. }
            | Source::Unavailable { status, .. }
            | Source::Stale { status, .. } => Some(*status),
            Source::Inserted { .. } => None,
            Source::Unreachable { cause, .. } => cause.status(),
        }
    }
}

pub(super) struct DescribeSource<'a>(&'a Source);

impl std::fmt::Display for DescribeSource<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use crate::human::Relative;
        match self.0 {
            Source::Parsed {
                status,
                redirected_to,
                fetched_at,
                expires_at,
                not_modified,
            } => {
                write!(f, "parsed (HTTP {status}")?;
                if let Some(url) = redirected_to {
                    write!(f, ", redirected to {url}")?;
                }
                if *not_modified {
                    write!(f, ", unchanged: 304 Not Modified")?;
                }
                write!(
                    f,
                    "), fetched {}, refreshed {}",
                    Relative(*fetched_at),
                    Relative(*expires_at)
                )
            }
            Source::Inserted { at, expires_at } => write!(
                f,
                "inserted {}, refreshed {}",
                Relative(*at),
                Relative(*expires_at)
            ),
            Source::Unavailable {
                status,
                reason,
                fetched_at,
                expires_at,
            } => write!(
                f,
                "unavailable (HTTP {status}, {reason:?}): allow all, fetched {}, refreshed {}",
                Relative(*fetched_at),
                Relative(*expires_at)
            ),
            Source::Stale {
                status,
                fetched_at,
                cause,
                unreachable_since,
                next_retry,
            } => write!(
                f,
                "last good copy (HTTP {status}, fetched {}) while unreachable since {} ({cause}), retried {}",
                Relative(*fetched_at),
                Relative(*unreachable_since),
                Relative(*next_retry)
            ),
            Source::Unreachable {
                cause,
                since,
                next_retry,
            } => write!(
                f,
                "unreachable since {} ({cause}): disallow all, retried {}",
                Relative(*since),
                Relative(*next_retry)
            ),
        }
    }
}

/// One origin's cached robots.txt: the rules, where they came from, and when to look again.
#[derive(Debug, Clone)]
pub struct CachedRobots {
    pub(super) origin: Origin,
    pub(super) rules: Rules,
    pub(super) source: Source,
    /// When the entry should be fetched again.
    pub(super) refresh_at: Instant,
    /// Consecutive unreachable fetches, for the back-off.
    pub(super) failures: u32,
    pub(super) give_up_after: Duration,
    /// Heap bytes held, computed once: the cache weighs entries often.
    pub(super) heap_bytes: usize,
    /// The policy tokens the cache was configured with (shared by all its entries).
    pub(super) policy_tokens: Arc<[String]>,
    /// The good copy's validators, for a conditional refresh.
    pub(super) validators: Validators,
}

impl CachedRobots {
    pub(super) fn new(
        origin: Origin,
        rules: Rules,
        source: Source,
        refresh_at: Instant,
        failures: u32,
        give_up_after: Duration,
        policy_tokens: &Arc<[String]>,
    ) -> CachedRobots {
        let cause_bytes = match &source {
            Source::Stale { cause, .. } | Source::Unreachable { cause, .. } => match cause {
                UnreachableCause::Network(e) => e.message.len(),
                UnreachableCause::Status { .. } => 0,
            },
            _ => 0,
        };
        let rules_bytes = match &rules {
            Rules::Parsed(parsed) => parsed.heap_bytes(),
            Rules::AllowAll | Rules::DisallowAll => 0,
        };
        CachedRobots {
            heap_bytes: std::mem::size_of::<CachedRobots>()
                + origin.heap_bytes()
                + rules_bytes
                + cause_bytes,
            origin,
            rules,
            source,
            refresh_at,
            failures,
            give_up_after,
            policy_tokens: policy_tokens.clone(),
            validators: Validators::default(),
        }
    }

    /// This entry, its good copy refreshed with `validators` (weighed with it).
    pub(super) fn with_validators(mut self, validators: Validators) -> CachedRobots {
        self.heap_bytes = self.heap_bytes - self.validators.heap_bytes() + validators.heap_bytes();
        self.validators = validators;
        self
    }
}

impl CachedRobots {
    /// The origin.
    pub fn origin(&self) -> &Origin {
        &self.origin
    }

    /// Where the rules came from.
    pub fn source(&self) -> &Source {
        &self.source
    }

    /// The good copy's `ETag` and `Last-Modified`, sent on its refresh (empty: the refresh is a
    /// plain fetch).
    pub fn validators(&self) -> &Validators {
        &self.validators
    }

    /// The rules as fetched (see [`CachedRobots::rules_at`] for what applies now).
    pub fn rules(&self) -> &Rules {
        &self.rules
    }

    /// What was kept of the parsed file, when there is one (the view, sitemaps, the crawler's
    /// records).
    pub fn parsed(&self) -> Option<&ParsedRobots> {
        match &self.rules {
            Rules::Parsed(parsed) => Some(parsed),
            _ => None,
        }
    }

    /// The sitemap URLs of the parsed file (none without one).
    pub fn sitemaps(&self) -> impl Iterator<Item = &str> + '_ {
        self.parsed().into_iter().flat_map(|p| p.sitemaps())
    }

    /// Heap bytes this entry holds (its share of a parsed file included), as the cache weighs it.
    pub fn heap_bytes(&self) -> usize {
        self.heap_bytes
    }

    /// When the cache will fetch this origin again.
    pub fn refresh_at(&self) -> Instant {
        self.refresh_at
    }

    /// The rules that apply at `now`: with no good copy, disallow all until the origin has been
    /// unreachable for the give-up period, then allow all.
    pub fn rules_at(&self, now: Instant) -> &Rules {
        match &self.source {
            Source::Unreachable { since, .. }
                if now.saturating_duration_since(*since) >= self.give_up_after =>
            {
                &Rules::AllowAll
            }
            _ => &self.rules,
        }
    }

    /// How long robots.txt has been unreachable at `now`, from the first failure of this
    /// outage; `None` when the last fetch had an answer.
    pub fn unreachable_for(&self, now: Instant) -> Option<Duration> {
        match &self.source {
            Source::Unreachable { since, .. }
            | Source::Stale {
                unreachable_since: since,
                ..
            } => Some(now.saturating_duration_since(*since)),
            _ => None,
        }
    }

    /// Whether the rules block everything because robots.txt is unreachable and there is no
    /// good copy (as opposed to a file that disallows): a crawler should reschedule.
    pub fn is_blocked_by_outage(&self, now: Instant) -> bool {
        matches!(self.source, Source::Unreachable { .. })
            && matches!(self.rules_at(now), Rules::DisallowAll)
    }

    /// The pattern of a rule that one of this entry's views matched, owned without copying
    /// (see [`ParsedRobots::pattern_of`]); copied when the entry holds no parsed file.
    pub fn pattern_of(&self, rule: &MatchedRule<'_>) -> RulePattern {
        match &self.rules {
            Rules::Parsed(parsed) => parsed.pattern_of(rule),
            _ => RulePattern::from(rule.pattern),
        }
    }

    /// The verdict for a path (see [`robots_core::path_of`]) at `now`. Does not allocate.
    pub fn verdict_at(&self, path: &[u8], now: Instant) -> Verdict<'_> {
        match self.rules_at(now) {
            Rules::Parsed(parsed) => parsed.matcher.check_path(path),
            Rules::AllowAll => Verdict {
                allowed: true,
                rule: None,
            },
            Rules::DisallowAll => Verdict {
                allowed: false,
                rule: None,
            },
        }
    }

    /// The verdict at `now` for `path` as a configured policy token would get it; `None` when
    /// the token was not configured ([`crate::RobotsCacheBuilder::policy_tokens`]). Without a parsed
    /// file, the same as the crawler's own (allow all, or disallow all).
    pub fn verdict_for_token(&self, token: &str, path: &[u8], now: Instant) -> Option<Verdict<'_>> {
        match self.rules_at(now) {
            Rules::Parsed(parsed) => parsed.policy_matcher(token).map(|m| m.check_path(path)),
            _ if self.policy_tokens_known(token) => Some(self.verdict_at(path, now)),
            _ => None,
        }
    }

    /// The verdict at `now` for a path a server may serve for a URL
    /// ([`robots_core::url_path::served_paths`]), against the patterns normalised as it was
    /// ([`robots_core::Matcher::check_served_path`], spec section 5); for the crawler, or for
    /// a configured policy token (`None` when it was not configured).
    pub fn served_verdict_at(
        &self,
        token: Option<&str>,
        path: &[u8],
        now: Instant,
    ) -> Option<Verdict<'_>> {
        match (self.rules_at(now), token) {
            (Rules::Parsed(parsed), None) => Some(parsed.matcher.check_served_path(path)),
            (Rules::Parsed(parsed), Some(token)) => parsed
                .policy_matcher(token)
                .map(|m| m.check_served_path(path)),
            (_, Some(token)) if !self.policy_tokens_known(token) => None,
            _ => Some(self.verdict_at(path, now)),
        }
    }

    /// Renamed [`CachedRobots::verdict_for_token`] (one letter from `verdict_at`, which takes
    /// a time).
    #[deprecated(since = "0.1.0", note = "renamed `verdict_for_token`")]
    #[doc(hidden)]
    pub fn verdict_as(&self, token: &str, path: &[u8], now: Instant) -> Option<Verdict<'_>> {
        self.verdict_for_token(token, path, now)
    }

    /// What the crawler may do with `path` at `now`: the verdict and, when it may be fetched,
    /// the AI usage preferences robots.txt states for it (`Content-Usage`, `Content-Signal`).
    /// Without a parsed file nothing is stated. Does not allocate.
    pub fn usage_at(&self, path: &[u8], now: Instant) -> Usage<'_> {
        match self.rules_at(now) {
            Rules::Parsed(parsed) => parsed.matcher.usage_path(path),
            _ => Usage {
                verdict: self.verdict_at(path, now),
                preferences: UsagePreferences::default(),
            },
        }
    }

    /// [`CachedRobots::usage_at`] as a configured policy token (`Google-Extended`…) would get
    /// it; `None` when the token was not configured.
    pub fn usage_as(&self, token: &str, path: &[u8], now: Instant) -> Option<Usage<'_>> {
        match self.rules_at(now) {
            Rules::Parsed(parsed) => parsed.policy_matcher(token).map(|m| m.usage_path(path)),
            _ if self.policy_tokens_known(token) => Some(self.usage_at(path, now)),
            _ => None,
        }
    }

    /// The usage preferences for a path the caller has already found allowed (no second
    /// check): nothing when the file has no usage lines for the crawler.
    pub fn preferences_at(&self, path: &[u8], now: Instant) -> UsagePreferences {
        match self.rules_at(now) {
            Rules::Parsed(parsed) => parsed.matcher.preferences_path(path),
            _ => UsagePreferences::default(),
        }
    }

    pub(super) fn policy_tokens_known(&self, token: &str) -> bool {
        self.policy_tokens
            .iter()
            .any(|t| t.eq_ignore_ascii_case(token))
    }

    /// The verdict for a URL now.
    pub fn check(&self, url: &Url) -> Verdict<'_> {
        self.verdict_at(path_of_url(url).as_bytes(), Instant::now())
    }

    /// The crawler's Crawl-delay from the parsed file, if any.
    pub fn crawl_delay(&self) -> Option<robots_core::CrawlDelay> {
        match &self.rules {
            Rules::Parsed(parsed) => parsed.matcher.crawl_delay(),
            _ => None,
        }
    }

    /// The crawler's Request-rate from the parsed file, if any.
    pub fn request_rate(&self) -> Option<robots_core::RequestRate> {
        match &self.rules {
            Rules::Parsed(parsed) => parsed.matcher.request_rate().map(|(rate, _)| rate),
            _ => None,
        }
    }

    pub(super) fn good_copy(&self) -> Option<(u16, Instant)> {
        match &self.source {
            Source::Parsed {
                status, fetched_at, ..
            }
            | Source::Unavailable {
                status, fetched_at, ..
            } => Some((*status, *fetched_at)),
            Source::Inserted { at, .. } => Some((200, *at)),
            Source::Stale {
                status, fetched_at, ..
            } => Some((*status, *fetched_at)),
            Source::Unreachable { .. } => None,
        }
    }
}

/// The path checked for a URL: path and query, as [`robots_core::path_of`] takes them.
pub fn path_of_url(url: &Url) -> &str {
    &url[url::Position::BeforePath..url::Position::AfterQuery]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_share_the_bytes_of_the_view_that_matched() {
        let body = b"User-agent: *\nDisallow: /all\nUser-agent: Google-Extended\nDisallow: /ai\n";
        let parsed = ParsedRobots::with_policy_tokens(body, &["FooBot"], &["Google-Extended"]);
        let own = parsed.matcher().check_path(b"/all/x");
        let policy = parsed
            .policy_matcher("google-extended")
            .map(|m| m.check_path(b"/ai/x"));
        for rule in [own.rule, policy.and_then(|v| v.rule)] {
            let rule = rule.expect("a rule decides");
            let pattern = parsed.pattern_of(&rule);
            assert_eq!(pattern.as_bytes(), rule.pattern);
            // Shared: the very bytes the verdict pointed at, not a copy.
            assert!(std::ptr::eq(pattern.as_bytes(), rule.pattern));
        }
        // A rule of a view the entry does not hold is copied.
        let other = Matcher::from_body(b"User-agent: *\nDisallow: /other\n", ["FooBot"]);
        let foreign = other.check_path(b"/other").rule.expect("a rule decides");
        let copied = parsed.pattern_of(&foreign);
        assert_eq!(copied, "/other");
        assert!(!std::ptr::eq(copied.as_bytes(), foreign.pattern));
    }
}
