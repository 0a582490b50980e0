//! A crawler's rules checked by a scan of the parsed file, without compiling a view: Google's own
//! way (every rule tried, the best kept), for the few checks a broad crawl makes of each file,
//! where compiling a view costs more than the checks it would speed up.

use crate::directive::{ValueHints, find_byte, rfind_byte};
use crate::pattern::{Shape, Subject, glob_matches_from, is_prefix, split_anchor};
use crate::records::{RequestRate, parse_crawl_delay};
use crate::robots::{Group, Record, RobotsTxt, Rule};
use crate::url_path::path_of;
use crate::verdict::{MatchedRule, RuleKind, Selection, Verdict};

use super::search::with_leading_slash;
use super::{CrawlDelay, Matcher};

/// The groups of a parsed file that apply to one crawler, found once, whose rules a check scans.
///
/// A check by scan gives the verdict, and reports the rule, that the view compiled by
/// [`RobotsTxt::matcher`] for the same crawler gives; it allocates nothing. It costs time in
/// proportion to the crawler's rules (each is tried, unless one already found outranks it),
/// where a compiled [`Matcher`] goes to the few that can match, but finding the groups
/// is all it costs to make: a fraction of compiling a view. For a crawler that checks a few URLs
/// of each file (a broad crawl), scan; for many, compile.
///
/// A scan holds no borrow: it is checked against the [`RobotsTxt`] it was made from, passed
/// again with each check (another file's groups would give another file's answers).
///
/// ```
/// use robots_core::RobotsTxt;
/// let robots = RobotsTxt::parse(b"User-agent: *\nDisallow: /private\nAllow: /private/ok\n");
/// let scan = robots.rule_scan("FooBot");
/// assert!(!scan.check_url(&robots, "https://example.com/private/x").allowed);
/// assert!(scan.check_url(&robots, "https://example.com/private/ok.html").allowed);
/// assert_eq!(scan.rule_count(&robots), 2);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleScan {
    selection: Selection,
    /// Positions of the applicable groups, in file order.
    groups: Positions,
}

/// Group positions: a few in place (most crawlers get one or two groups), more on the heap.
/// A scan is made for a file's first check, where an allocation is a visible share.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Positions {
    Few(u8, [u32; Positions::FEW]),
    Many(Box<[u32]>),
}

/// [`Positions`] being collected, one at a time.
#[derive(Default)]
struct Collecting {
    len: usize,
    few: [u32; Positions::FEW],
    many: Vec<u32>,
}

impl Collecting {
    fn push(&mut self, position: usize) {
        // A file has fewer groups than lines, and lines are numbered in `u32`.
        let position = u32::try_from(position).unwrap_or(u32::MAX);
        match self.few.get_mut(self.len) {
            Some(slot) if self.many.is_empty() => {
                *slot = position;
                self.len += 1;
            }
            _ => {
                if self.many.is_empty() {
                    self.many.extend_from_slice(&self.few);
                }
                self.many.push(position);
            }
        }
    }

    fn finish(self) -> Positions {
        if self.many.is_empty() {
            Positions::Few(self.len as u8, self.few)
        } else {
            Positions::Many(self.many.into())
        }
    }
}

impl Positions {
    const FEW: usize = 4;

    fn collect(positions: impl Iterator<Item = usize>) -> Positions {
        let mut collecting = Collecting::default();
        positions.for_each(|p| collecting.push(p));
        collecting.finish()
    }

    fn as_slice(&self) -> &[u32] {
        match self {
            Positions::Few(len, few) => &few[..usize::from(*len).min(Positions::FEW)],
            Positions::Many(many) => many,
        }
    }

    /// The groups of `robots` at these positions, in file order.
    pub(super) fn groups<'r>(
        &self,
        robots: &'r RobotsTxt,
    ) -> impl Iterator<Item = Group<'r>> + Clone {
        let positions = self.as_slice().iter();
        positions.filter_map(|&g| robots.group(g as usize))
    }
}

impl RobotsTxt {
    /// The groups that apply to a crawler named by its product token, to check URLs by scan
    /// (see [`RuleScan`]). Selected as [`RobotsTxt::matcher`] selects them.
    pub fn rule_scan(&self, agent: &str) -> RuleScan {
        self.rule_scan_for([agent])
    }

    /// [`RobotsTxt::rule_scan`] for a crawler known by several tokens, most specific first, as
    /// [`RobotsTxt::matcher_for`] takes them.
    pub fn rule_scan_for<I, S>(&self, agents: I) -> RuleScan
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        // The `*` groups are found in the same pass as the first token's.
        let mut everyone = None;
        for agent in agents {
            // Compared as given (spec section 3), as `matcher_for` compares it.
            let token = agent.as_ref();
            let (mut named, mut global) = (Collecting::default(), Collecting::default());
            for marks in self.group_marks(token) {
                if marks.named {
                    named.push(marks.position);
                }
                if marks.global {
                    global.push(marks.position);
                }
            }
            if named.len > 0 {
                return RuleScan {
                    selection: Selection::Agent(token.into()),
                    groups: named.finish(),
                };
            }
            everyone.get_or_insert(global);
        }
        let groups = match everyone {
            Some(global) => global.finish(),
            None => Positions::collect(self.groups_for_everyone()),
        };
        let selection = if groups.as_slice().is_empty() {
            Selection::None
        } else {
            Selection::Global
        };
        RuleScan { selection, groups }
    }
}

/// What a check by [`RuleScan`] may have to try (see [`RuleScan::cost`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ScanCost {
    /// Allow and disallow lines.
    pub rules: usize,
    /// Bytes of their patterns (escaped).
    pub pattern_bytes: usize,
    /// Rules whose pattern has a `*`.
    pub wildcard_rules: usize,
    /// `*` in their patterns, in all.
    pub stars: usize,
}

impl ScanCost {
    /// Views with more `*` rules than this are better compiled before their first check.
    pub const MAX_WILDCARD_RULES: usize = 128;
    /// Views with more `*` in all than this are better compiled before their first check.
    pub const MAX_STARS: usize = 1024;

    /// Whether one check by scan costs less than compiling the view would. A rule without `*`
    /// costs a scan at most its pattern's bytes, less than compiling it; a `*` rule may cost
    /// the path's length, where a compiled view first filters it. Within
    /// [`ScanCost::MAX_WILDCARD_RULES`] and [`ScanCost::MAX_STARS`], a scanned check stays
    /// within about what compiling the view costs, whatever the file holds (measured with 256
    /// rules `/*xxq*a$` and with 5 of 96 `*` each against a 2 KB path: 29 µs scanned, 10 µs
    /// compiled; 3.0 and 3.7 µs).
    pub fn scan_is_cheaper(&self) -> bool {
        self.wildcard_rules <= ScanCost::MAX_WILDCARD_RULES && self.stars <= ScanCost::MAX_STARS
    }
}

impl RuleScan {
    /// The selection and the positions of the applicable groups, for compiling the view (the
    /// groups are walked from them rather than collected: an allocation per view).
    pub(super) fn into_parts(self) -> (Selection, Positions) {
        (self.selection, self.groups)
    }

    /// Compiles the view of the groups this scan checks against `robots`: the view
    /// [`RobotsTxt::matcher_for`] compiles for the same tokens, without choosing the groups
    /// again (for a crawler that scanned a file's first checks and now checks enough of it to
    /// compile).
    ///
    /// ```
    /// use robots_core::RobotsTxt;
    /// let robots = RobotsTxt::parse(b"User-agent: FooBot\nDisallow: /private\n");
    /// let scan = robots.rule_scan("FooBot");
    /// assert!(!scan.check_url(&robots, "https://example.com/private").allowed);
    /// let view = scan.matcher(&robots);
    /// assert!(!view.is_allowed("https://example.com/private"));
    /// assert_eq!(view.selection(), scan.selection());
    /// ```
    pub fn matcher(&self, robots: &RobotsTxt) -> Matcher {
        Matcher::of_groups(robots, self.selection.clone(), &self.groups)
    }

    /// Which groups apply.
    pub fn selection(&self) -> &Selection {
        &self.selection
    }

    /// How many allow and disallow lines the applicable groups of `robots` hold: what a check
    /// scans at most.
    pub fn rule_count(&self, robots: &RobotsTxt) -> usize {
        self.rules(robots).count()
    }

    /// The applicable rules of `robots`, in file order, with what the parse learnt of each.
    fn rules<'r>(&self, robots: &'r RobotsTxt) -> impl Iterator<Item = (Rule<'r>, ValueHints)> {
        self.groups
            .groups(robots)
            .flat_map(|group| group.rules_with_hints())
    }

    /// The first valid `Crawl-delay` of the applicable groups of `robots`, as
    /// [`Matcher::crawl_delay`](crate::Matcher::crawl_delay) gives it.
    ///
    /// ```
    /// use robots_core::RobotsTxt;
    /// let robots = RobotsTxt::parse(b"User-agent: *\nCrawl-delay: soon\nCrawl-delay: 2.5\nRequest-rate: 1/10s\n");
    /// let scan = robots.rule_scan("FooBot");
    /// assert_eq!(scan.crawl_delay(&robots).map(|c| (c.delay.as_secs_f64(), c.line)), Some((2.5, 3)));
    /// assert_eq!(scan.request_rate(&robots).map(|(rate, line)| (rate.requests, line)), Some((1, 4)));
    /// ```
    pub fn crawl_delay(&self, robots: &RobotsTxt) -> Option<CrawlDelay> {
        self.records(robots)
            .filter(|r| r.key.eq_ignore_ascii_case(b"crawl-delay"))
            .find_map(|r| {
                let delay = parse_crawl_delay(r.written)?;
                Some(CrawlDelay {
                    delay,
                    line: r.line,
                })
            })
    }

    /// The first valid `Request-rate` of the applicable groups of `robots`, with its line, as
    /// [`Matcher::request_rate`](crate::Matcher::request_rate) gives it.
    pub fn request_rate(&self, robots: &RobotsTxt) -> Option<(RequestRate, u32)> {
        self.records(robots)
            .filter(|r| r.key.eq_ignore_ascii_case(b"request-rate"))
            .find_map(|r| Some((RequestRate::parse(r.written)?, r.line)))
    }

    /// The records of the applicable groups of `robots`, in file order.
    fn records<'r>(&self, robots: &'r RobotsTxt) -> impl Iterator<Item = Record<'r>> {
        self.groups.groups(robots).flat_map(|group| group.records())
    }

    /// What a check of this scan against `robots` may have to try: the applicable rules, their
    /// patterns' bytes, how many have a `*` and how many `*` they have in all (a rule with `*`
    /// may take time in proportion to the path, a rule without one only to its pattern). One
    /// pass over the rules; only the bytes of those with a `*` are read.
    ///
    /// ```
    /// use robots_core::RobotsTxt;
    /// let robots = RobotsTxt::parse(b"User-agent: *\nDisallow: /a*b*\nAllow: /c\n");
    /// let cost = robots.rule_scan("FooBot").cost(&robots);
    /// assert_eq!((cost.rules, cost.pattern_bytes, cost.wildcard_rules, cost.stars), (2, 7, 1, 2));
    /// ```
    pub fn cost(&self, robots: &RobotsTxt) -> ScanCost {
        let mut cost = ScanCost::default();
        // The rules as stored (no views of them made): a first check pays for this walk.
        for rule in self.groups.groups(robots).flat_map(|g| g.rule_data()) {
            cost.rules += 1;
            cost.pattern_bytes += rule.pattern.len();
            if rule.hints.may_have_star() {
                let stars = robots
                    .bytes(rule.pattern)
                    .iter()
                    .filter(|&&b| b == b'*')
                    .count();
                cost.wildcard_rules += usize::from(stars > 0);
                cost.stars += stars;
            }
        }
        cost
    }

    /// Whether one check by scan of `robots` costs less than compiling the view:
    /// `self.cost(robots).scan_is_cheaper()`, decided from what the parse tallied per group
    /// (the rules that may hold a `*`, and their bytes) when that is within the bounds, without
    /// reading the rules (a file's first check pays for this: most files are far within them).
    ///
    /// ```
    /// use robots_core::RobotsTxt;
    /// let robots = RobotsTxt::parse(b"User-agent: *\nDisallow: /a*b*\nAllow: /c\n");
    /// let scan = robots.rule_scan("FooBot");
    /// assert!(scan.scan_is_cheaper(&robots));
    /// assert_eq!(scan.scan_is_cheaper(&robots), scan.cost(&robots).scan_is_cheaper());
    /// ```
    pub fn scan_is_cheaper(&self, robots: &RobotsTxt) -> bool {
        let (mut starred, mut starred_bytes) = (0usize, 0usize);
        for group in self.groups.groups(robots) {
            let bound = group.starred();
            starred += bound.rules as usize;
            starred_bytes += bound.bytes as usize;
        }
        // Upper bounds of `wildcard_rules` and `stars`: within the limits, so is the count.
        (starred <= ScanCost::MAX_WILDCARD_RULES && starred_bytes <= ScanCost::MAX_STARS)
            || self.cost(robots).scan_is_cheaper()
    }

    /// Heap bytes held (the applicable groups' positions and the token).
    pub fn heap_bytes(&self) -> usize {
        let positions = match &self.groups {
            Positions::Few(..) => 0,
            Positions::Many(many) => many.len() * size_of::<u32>(),
        };
        positions
            + match &self.selection {
                Selection::Agent(token) => token.len(),
                _ => 0,
            }
    }

    /// Checks a URL against `robots` (the file this scan was made from), as
    /// [`Matcher::check_url`](crate::Matcher::check_url) does.
    #[inline]
    pub fn check_url<'r>(&self, robots: &'r RobotsTxt, url: &str) -> Verdict<'r> {
        self.check_path(robots, path_of(url).as_bytes())
    }

    /// Checks a path as produced by [`crate::path_of`] against `robots`, as
    /// [`Matcher::check_path`](crate::Matcher::check_path) does.
    pub fn check_path<'r>(&self, robots: &'r RobotsTxt, path: &[u8]) -> Verdict<'r> {
        self.check_as(robots, path, false)
    }

    /// Checks a path a server may serve for a URL against `robots`, as
    /// [`Matcher::check_served_path`](crate::Matcher::check_served_path) does: against the
    /// patterns with their escapes normalised.
    pub fn check_served_path<'r>(&self, robots: &'r RobotsTxt, path: &[u8]) -> Verdict<'r> {
        self.check_as(robots, &crate::url_path::normalise_escapes(path), true)
    }

    /// [`RuleScan::check_path`], or with `served` [`RuleScan::check_served_path`] (the path
    /// normalised by the caller).
    fn check_as<'r>(&self, robots: &'r RobotsTxt, path: &[u8], served: bool) -> Verdict<'r> {
        if path.first() != Some(&b'/') {
            return with_leading_slash(path, |p| self.check_as(robots, p, served));
        }
        let mut subject = Subject::new(path);
        // The best match so far: its place in decision order (twice the priority, plus one
        // for an allow: see `CompiledRule::rank`) and the rule. Rules come in file order, so
        // of equal ranks the first found (the earliest line) is kept, as a view decides.
        let mut best: Option<(usize, MatchedRule<'r>)> = None;
        let outranks = |rank: usize, best: &Option<(usize, MatchedRule<'r>)>| {
            best.as_ref().is_none_or(|(kept, _)| rank > *kept)
        };
        let want = path.get(1).copied().unwrap_or(0);
        for group in self.groups.groups(robots) {
            for rule in group.rule_data() {
                // A path whose second byte is not the rule's key matches neither the rule
                // nor its retry: skipped before its bytes are read (a scan of a big file
                // reads little more than its rules' spans).
                let pattern = robots.bytes(rule.pattern);
                // A served path meets the pattern normalised (whose key may differ: `/%62`).
                let normal = if served {
                    crate::url_path::normalise_escapes(pattern)
                } else {
                    std::borrow::Cow::Borrowed(pattern)
                };
                let keyed = !matches!(normal, std::borrow::Cow::Owned(_));
                if keyed && rule.key != 0 && rule.key != want {
                    continue;
                }
                let pattern = &*normal;
                // As a view compiles them: empty patterns never decide, and a pattern that
                // starts with neither `/` nor `*` never matches a path.
                if !matches!(pattern.first(), Some(b'/' | b'*')) {
                    continue;
                }
                let allow = rule.kind == RuleKind::Allow;
                // The priority is the escaped pattern's length, a trailing `$` counted; nothing
                // of a rule that cannot outrank the best match so far is read (its retry below
                // ranks lower still).
                let rank = pattern.len() * 2 + usize::from(allow);
                if !outranks(rank, &best) {
                    continue;
                }
                let (body, anchored) = split_anchor(pattern);
                // The parse saw whether the value may hold a `*`; without one, a length test
                // and a prefix compare decide.
                let hit = if rule.hints.may_have_star() {
                    // Matched as read: a view's analysis of the glob costs more than one try.
                    match find_byte(b'*', body) {
                        Some(star) => glob_matches_from(body, star, anchored, path),
                        None => (!anchored || path.len() == body.len()) && is_prefix(body, path),
                    }
                } else {
                    (!anchored || path.len() == body.len()) && is_prefix(body, path)
                };
                let found = || MatchedRule {
                    line: rule.line,
                    kind: rule.kind,
                    pattern: robots.bytes(rule.written),
                };
                if hit {
                    best = Some((rank, found()));
                    continue;
                }
                // Google's index.html retry: an allow whose last segment starts `/index.htm`
                // is tried again as everything up to that `/`, anchored (when the rule itself
                // matches, the retry, of lower priority, cannot decide).
                if allow
                    && let Some(slash) = rfind_byte(b'/', pattern)
                    && pattern[slash..].starts_with(b"/index.htm")
                {
                    let retry = &pattern[..=slash];
                    let rank = (retry.len() + 1) * 2 + 1;
                    if outranks(rank, &best) {
                        let (body, mut shape) = Shape::of(retry);
                        // `retry` ends in `/`: its anchor is the `$` added, not one of its own.
                        debug_assert_eq!(split_anchor(retry).0, body);
                        shape.anchored = true;
                        if shape.matches(body, &mut subject) {
                            best = Some((rank, found()));
                        }
                    }
                }
            }
        }
        match best {
            Some((_, rule)) => Verdict {
                allowed: rule.kind == RuleKind::Allow,
                rule: Some(rule),
            },
            None => Verdict {
                allowed: true,
                rule: None,
            },
        }
    }

    /// Shorthand for `check_url(robots, url).allowed`.
    #[inline]
    pub fn is_allowed(&self, robots: &RobotsTxt, url: &str) -> bool {
        self.check_url(robots, url).allowed
    }
}

#[cfg(test)]
mod tests {
    use super::Positions;
    use crate::RobotsTxt;

    #[test]
    fn positions_are_kept_in_place_up_to_four_then_on_the_heap() {
        for count in [0u32, 1, 4, 5, 9] {
            let positions = Positions::collect(0..count as usize);
            assert_eq!(positions.as_slice(), (0..count).collect::<Vec<_>>());
            assert_eq!(
                matches!(positions, Positions::Few(..)),
                count <= 4,
                "{count}"
            );
        }
    }

    /// `RobotsTxt::is_allowed` scans a file with few `*` rules and compiles one full of them;
    /// either way it answers as the compiled view does.
    #[test]
    fn a_one_off_check_scans_or_compiles_with_the_same_answers() {
        let few = RobotsTxt::parse(b"User-agent: *\nDisallow: /a*b\nAllow: /a/index.html\n");
        assert!(few.rule_scan("FooBot").cost(&few).scan_is_cheaper());
        let mut body = String::from("User-agent: *\n");
        for i in 0..=crate::ScanCost::MAX_WILDCARD_RULES {
            body.push_str(&format!("Disallow: /*{i}*x\n"));
        }
        let many = RobotsTxt::parse(body.as_bytes());
        assert!(!many.rule_scan("FooBot").cost(&many).scan_is_cheaper());
        for robots in [&few, &many] {
            for path in ["/", "/a/", "/axb", "/a/index.html", "/q7zx", "/128x"] {
                let url = format!("https://e.com{path}");
                let view = robots.matcher("FooBot").is_allowed(&url);
                assert_eq!(robots.is_allowed("FooBot", &url), view, "{path}");
            }
        }
        assert!(!many.is_allowed("FooBot", "https://e.com/q7zx"));
        assert!(few.is_allowed("FooBot", "https://e.com/a/"));
    }

    /// The bounded decision reads the patterns only when the rules that may hold a `*` are
    /// over the bounds, and then decides by the count: a few long `*` rules are scanned, too
    /// many `*` are not, whether in many rules or in a few.
    #[test]
    fn the_scan_decision_is_the_counts_whatever_the_bound_says() {
        let file = |rules: &[String]| {
            let mut body = String::from("User-agent: *\n");
            for rule in rules {
                body.push_str(&format!("Disallow: {rule}\n"));
            }
            RobotsTxt::parse(body.as_bytes())
        };
        let long_few = (0..10)
            .map(|i| format!("/{i}*{}", "a".repeat(200)))
            .collect::<Vec<_>>();
        let starry = (0..5)
            .map(|i| format!("/{i}{}", "*a".repeat(300)))
            .collect::<Vec<_>>();
        let many = (0..200).map(|i| format!("/{i}*")).collect::<Vec<_>>();
        for (rules, cheaper) in [(long_few, true), (starry, false), (many, false)] {
            let robots = file(&rules);
            let scan = robots.rule_scan("FooBot");
            assert_eq!(scan.scan_is_cheaper(&robots), cheaper, "{}", rules[0]);
            assert_eq!(
                scan.cost(&robots).scan_is_cheaper(),
                cheaper,
                "{}",
                rules[0]
            );
        }
    }

    /// The rules a scan skips by a path's second byte: never one that can decide for it. `/$`
    /// matches `/` alone; `/index.html`'s retry is `/$`; a `*` or a `$` second never skips.
    #[test]
    fn a_scan_skips_by_second_byte_only_rules_that_cannot_match() {
        let body = b"User-agent: *\nDisallow: /\nAllow: /$\nAllow: /index.html\nAllow: /a$\n\
            Allow: /b/index.htm\nDisallow: /*c\nAllow: /$d\nDisallow: /e/\n";
        // The root's retry alone allows `/`.
        let retry = b"User-agent: *\nDisallow: /\nAllow: /index.html\n";
        for body in [&body[..], retry] {
            let robots = RobotsTxt::parse(body);
            let scan = robots.rule_scan("FooBot");
            let view = robots.matcher("FooBot");
            let paths = [
                "/", "/a", "/a/", "/b/", "/b/x", "/xc", "/$d", "/e/", "/e", "/?q",
            ];
            for path in paths {
                assert_eq!(
                    scan.check_path(&robots, path.as_bytes()),
                    view.check_path(path.as_bytes()),
                    "{path}"
                );
            }
            assert!(scan.is_allowed(&robots, "https://e.com/"));
            assert!(!scan.is_allowed(&robots, "https://e.com/e/"));
        }
    }

    /// Seven groups for one crawler, spread over the file: each one's rules count, in order.
    #[test]
    fn a_scan_takes_every_group_of_its_crawler() {
        let mut body = String::new();
        for i in 0..7 {
            body.push_str(&format!(
                "User-agent: FooBot\nDisallow: /{i}\nUser-agent: Other\nAllow: /\n\n"
            ));
        }
        body.push_str("User-agent: FooBot\nAllow: /3/ok\n");
        let robots = RobotsTxt::parse(body.as_bytes());
        let scan = robots.rule_scan("foobot");
        assert_eq!(scan.rule_count(&robots), 8);
        for path in ["/0", "/6/x", "/3/ok", "/3/no", "/7"] {
            let view = robots.matcher("foobot");
            assert_eq!(
                scan.check_path(&robots, path.as_bytes()),
                view.check_path(path.as_bytes()),
                "{path}"
            );
        }
        assert!(!scan.is_allowed(&robots, "https://e.com/6/x"));
        assert!(scan.is_allowed(&robots, "https://e.com/3/ok"));
    }
}
