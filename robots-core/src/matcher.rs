//! The per-crawler view (spec sections 3–4): the rules that apply to one crawler, compiled and
//! ordered so that the first rule that matches a path is the deciding one.
//!
//! Google keeps the best allow and the best disallow priority and compares them. Ordering the
//! rules by (priority descending, allow before disallow, line ascending) gives the same answer
//! with an early exit: the first match has the highest priority, ties go to allow, and among
//! equals the earliest line is the one reported.

use std::sync::Arc;
use std::time::Duration;

use crate::agent::product_token;
use crate::pattern::Pattern;
use crate::records::{RequestRate, parse_crawl_delay};
use crate::robots::{Group, RobotsTxt, RuleKind};
use crate::url_path::path_of;

/// Which groups of the file apply to the crawler.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(
    feature = "serde",
    serde(rename_all = "kebab-case", tag = "kind", content = "token")
)]
pub enum Selection {
    /// Groups naming this token (the first of the given tokens that has any group).
    Agent(Box<str>),
    /// No group names the crawler; the `*` groups apply.
    Global,
    /// No group applies: everything is allowed.
    None,
}

/// A Crawl-delay value and the line it came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct CrawlDelay {
    /// The delay.
    pub delay: Duration,
    /// Line of the Crawl-delay record.
    pub line: u32,
}

#[derive(Debug)]
struct CompiledRule {
    pattern: Pattern,
    kind: RuleKind,
    line: u32,
    /// Range of `Inner::written`: the pattern as written in the file.
    written: (u32, u32),
}

#[derive(Debug)]
struct Inner {
    selection: Selection,
    rules: Box<[CompiledRule]>,
    written: Box<[u8]>,
    crawl_delay: Option<CrawlDelay>,
    request_rate: Option<(RequestRate, u32)>,
}

/// A robots.txt compiled for one crawler. Cheap to clone (one `Arc`), `Send + Sync`, and a check
/// never allocates (unless a URL has a query but no path, which needs a `/` put in front).
///
/// ```
/// use robots_core::{RobotsTxt, RuleKind};
/// let robots = RobotsTxt::parse(b"User-agent: *\nDisallow: /private\nAllow: /private/ok\n");
/// let matcher = robots.matcher("FooBot/2.1 (+https://foo.example/bot)");
/// let verdict = matcher.check_url("https://example.com/private/x");
/// assert!(!verdict.allowed);
/// let rule = verdict.rule.unwrap();
/// assert_eq!((rule.line, rule.kind, rule.pattern), (2, RuleKind::Disallow, &b"/private"[..]));
/// assert!(matcher.is_allowed("https://example.com/private/ok.html"));
/// ```
#[derive(Debug, Clone)]
pub struct Matcher {
    inner: Arc<Inner>,
}

/// The answer to a check, with the rule that decided it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verdict<'a> {
    /// Whether the crawler may fetch the URL.
    pub allowed: bool,
    /// The deciding rule, or `None` when no rule with a non-empty pattern matched.
    pub rule: Option<MatchedRule<'a>>,
}

/// The rule that decided a [`Verdict`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MatchedRule<'a> {
    /// Line number in the file.
    pub line: u32,
    /// Allow or disallow.
    pub kind: RuleKind,
    /// The pattern as written in the file (not escaped; an `index.html` rule that decided through
    /// its `/$` retry still shows as written).
    pub pattern: &'a [u8],
}

impl MatchedRule<'_> {
    /// The pattern as text (invalid UTF-8 replaced).
    pub fn pattern_lossy(&self) -> std::borrow::Cow<'_, str> {
        String::from_utf8_lossy(self.pattern)
    }
}

#[cfg(feature = "serde")]
impl serde::Serialize for MatchedRule<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut s = serializer.serialize_struct("MatchedRule", 3)?;
        s.serialize_field("line", &self.line)?;
        s.serialize_field("kind", &self.kind)?;
        s.serialize_field("pattern", &self.pattern_lossy())?;
        s.end()
    }
}

#[cfg(feature = "serde")]
impl serde::Serialize for Verdict<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut s = serializer.serialize_struct("Verdict", 2)?;
        s.serialize_field("allowed", &self.allowed)?;
        s.serialize_field("rule", &self.rule)?;
        s.end()
    }
}

impl Matcher {
    pub(crate) fn new<I, S>(robots: &RobotsTxt, agents: I) -> Matcher
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut selection = Selection::None;
        let mut groups: Vec<Group<'_>> = Vec::new();
        for agent in agents {
            let token = product_token(agent.as_ref());
            groups = robots.groups_for_token(token);
            if !groups.is_empty() {
                selection = Selection::Agent(token.into());
                break;
            }
        }
        if groups.is_empty() {
            groups = robots.global_groups().collect();
            if !groups.is_empty() {
                selection = Selection::Global;
            }
        }
        Matcher::compile(selection, &groups)
    }

    fn compile(selection: Selection, groups: &[Group<'_>]) -> Matcher {
        let mut written: Vec<u8> = Vec::new();
        let mut rules: Vec<(u32, CompiledRule)> = Vec::new();
        for rule in groups.iter().flat_map(|g| g.rules()) {
            let start = written.len() as u32;
            written.extend_from_slice(rule.written);
            let span = (start, written.len() as u32);
            let mut add = |pattern: &[u8]| {
                // Empty patterns (priority 0) never decide; patterns that start with neither `/`
                // nor `*` never match a path, which always starts with `/`.
                if matches!(pattern.first(), Some(b'/' | b'*')) {
                    let priority = u32::try_from(pattern.len()).unwrap_or(u32::MAX);
                    let compiled = CompiledRule {
                        pattern: Pattern::new(pattern),
                        kind: rule.kind,
                        line: rule.line,
                        written: span,
                    };
                    rules.push((priority, compiled));
                }
            };
            add(rule.pattern);
            // Google's index.html retry: an allow whose last segment starts with `/index.htm` is
            // tried again as everything up to that `/` plus `$`. Its priority is always lower than
            // the original's, so in priority order it only decides when the original does not match.
            if rule.kind == RuleKind::Allow
                && let Some(slash) = memchr::memrchr(b'/', rule.pattern)
                && rule.pattern[slash..].starts_with(b"/index.htm")
            {
                let mut retry = rule.pattern[..=slash].to_vec();
                retry.push(b'$');
                add(&retry);
            }
        }
        rules.sort_by_key(|(priority, r)| {
            (
                std::cmp::Reverse(*priority),
                r.kind == RuleKind::Disallow,
                r.line,
            )
        });

        let records = || groups.iter().flat_map(|g| g.records());
        let crawl_delay = records().filter(|r| r.is("crawl-delay")).find_map(|r| {
            parse_crawl_delay(r.value).map(|delay| CrawlDelay {
                delay,
                line: r.line,
            })
        });
        let request_rate = records()
            .filter(|r| r.is("request-rate"))
            .find_map(|r| RequestRate::parse(r.value).map(|rate| (rate, r.line)));
        Matcher {
            inner: Arc::new(Inner {
                selection,
                rules: rules.into_iter().map(|(_, r)| r).collect(),
                written: written.into(),
                crawl_delay,
                request_rate,
            }),
        }
    }

    /// Checks a URL (absolute, scheme-relative or a bare path; taken as given, not decoded).
    #[inline]
    pub fn check_url(&self, url: &str) -> Verdict<'_> {
        self.check_path(path_of(url).as_bytes())
    }

    /// Checks a path as produced by [`crate::path_of`] (path, params and query; starts with `/`).
    /// A path that does not start with `/` is checked as if it did.
    #[inline]
    pub fn check_path(&self, path: &[u8]) -> Verdict<'_> {
        if path.first() != Some(&b'/') {
            let mut slashed = Vec::with_capacity(path.len() + 1);
            slashed.push(b'/');
            slashed.extend_from_slice(path);
            return self.check_path(&slashed);
        }
        let inner = &*self.inner;
        for rule in inner.rules.iter() {
            if rule.pattern.matches(path) {
                let (start, end) = rule.written;
                return Verdict {
                    allowed: rule.kind == RuleKind::Allow,
                    rule: Some(MatchedRule {
                        line: rule.line,
                        kind: rule.kind,
                        pattern: &inner.written[start as usize..end as usize],
                    }),
                };
            }
        }
        Verdict {
            allowed: true,
            rule: None,
        }
    }

    /// Shorthand for `check_url(url).allowed`.
    #[inline]
    pub fn is_allowed(&self, url: &str) -> bool {
        self.check_url(url).allowed
    }

    /// Which groups apply.
    pub fn selection(&self) -> &Selection {
        &self.inner.selection
    }

    /// The first valid Crawl-delay of the applicable groups.
    pub fn crawl_delay(&self) -> Option<CrawlDelay> {
        self.inner.crawl_delay
    }

    /// The first valid Request-rate of the applicable groups, with its line.
    pub fn request_rate(&self) -> Option<(RequestRate, u32)> {
        self.inner.request_rate
    }

    /// How many compiled rules the view holds (index.html retries count as rules).
    pub fn rule_count(&self) -> usize {
        self.inner.rules.len()
    }

    /// Approximate heap bytes held by this view (shared by all its clones).
    pub fn heap_bytes(&self) -> usize {
        let inner = &*self.inner;
        std::mem::size_of::<Inner>()
            + inner.rules.len() * std::mem::size_of::<CompiledRule>()
            + inner
                .rules
                .iter()
                .map(|r| r.pattern.heap_bytes())
                .sum::<usize>()
            + inner.written.len()
            + match &inner.selection {
                Selection::Agent(token) => token.len(),
                _ => 0,
            }
    }
}
