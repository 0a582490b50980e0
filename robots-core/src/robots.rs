//! The parsed file (spec sections 1–3 and 6): groups of user-agents with their rules and
//! records, sitemaps, and the records outside any group. Independent of any crawler; compile a
//! [`crate::Matcher`] from it to check URLs.
//!
//! Google's parser tracks per-crawler state, but that state only changes on lines of a group that
//! applies to the crawler, so the groups themselves can be found once for every crawler: a
//! user-agent line after an allow/disallow line starts a new group; nothing else ends one.

use std::ops::Range;

use crate::agent::{is_global_agent, names_token, product_token_bytes};
use crate::directive::{ValueHints, escape_pattern, escape_pattern_hinted};
use crate::events::{Event, events};
pub use crate::verdict::RuleKind;

/// A span of the parsed file's byte arena.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Span {
    start: u32,
    end: u32,
}

impl Span {
    /// Bytes spanned.
    pub(crate) fn len(self) -> usize {
        self.end.saturating_sub(self.start) as usize
    }
}

#[derive(Debug, Clone)]
pub(crate) struct RuleData {
    pub(crate) line: u32,
    pub(crate) kind: RuleKind,
    /// What the line scan learnt of the value (a `*` in it or not), kept so that compiling a
    /// view need not scan each pattern again.
    pub(crate) hints: ValueHints,
    /// The only second byte a path this rule can decide for may have, or 0 for any (see
    /// [`scan_key`]): a scan skips the rule on it without reading the pattern. It sits in
    /// what was padding.
    pub(crate) key: u8,
    pub(crate) pattern: Span,
    pub(crate) written: Span,
}

/// A rule's key for a scan: the second byte of the escaped pattern's body (without a trailing
/// `$`) when the body is `/` and a literal byte (a path that matches has it too), else 0. An
/// allow whose `index.html` retry is `/$` (its only `/` is the first) may decide for `/`
/// itself: 0 too.
pub(crate) fn scan_key(kind: RuleKind, pattern: &[u8]) -> u8 {
    match crate::pattern::split_anchor(pattern).0 {
        [b'/', second, ..] if *second != b'*' => {
            let root_retry = kind == RuleKind::Allow
                && pattern.starts_with(b"/index.htm")
                && crate::directive::rfind_byte(b'/', pattern) == Some(0);
            if root_retry { 0 } else { *second }
        }
        _ => 0,
    }
}

#[derive(Debug, Clone)]
struct AgentData {
    line: u32,
    value: Span,
    global: bool,
}

#[derive(Debug, Clone)]
struct RecordData {
    line: u32,
    key: Span,
    value: Span,
    /// The value as written (the same span when escaping changed nothing).
    written: Span,
}

#[derive(Debug, Clone)]
struct GroupData {
    agents: Range<usize>,
    rules: Range<usize>,
    records: Range<usize>,
    /// Its rules that may hold a `*` (the parse's hint), and their patterns' bytes: bounds of
    /// what a scan of it may cost, known without reading its rules.
    starred: StarBound,
}

/// A group's position, and whether it names a token and whether it is a `*` group (see
/// [`RobotsTxt::group_marks`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct GroupMarks {
    pub(crate) position: usize,
    pub(crate) named: bool,
    pub(crate) global: bool,
}

/// Rules that may hold a `*`, and the bytes of their patterns (saturating).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct StarBound {
    pub(crate) rules: u32,
    pub(crate) bytes: u32,
}

impl StarBound {
    fn add(&mut self, pattern: Span) {
        self.rules = self.rules.saturating_add(1);
        self.bytes = self.bytes.saturating_add(pattern.len() as u32);
    }
}

/// A parsed robots.txt. Parsing never fails: whatever is not understood is ignored, as Google
/// does (see [`crate::lint()`] for what was ignored and why).
///
/// ```
/// use robots_core::RobotsTxt;
/// let robots = RobotsTxt::parse(b"User-agent: *\nDisallow: /private\nSitemap: https://e.com/s.xml\n");
/// let matcher = robots.matcher("FooBot");
/// assert!(!matcher.is_allowed("https://e.com/private/x"));
/// assert_eq!(robots.sitemaps().next().map(|s| s.url), Some(&b"https://e.com/s.xml"[..]));
/// ```
#[derive(Debug, Clone, Default)]
pub struct RobotsTxt {
    arena: Vec<u8>,
    agents: Vec<AgentData>,
    rules: Vec<RuleData>,
    records: Vec<RecordData>,
    sitemaps: Vec<RecordData>,
    groups: Vec<GroupData>,
    /// Allow/disallow lines before the first user-agent line (ignored for matching).
    orphan_rules: Vec<RuleData>,
    line_count: u32,
}

impl RobotsTxt {
    /// Parses a robots.txt body. Input is bytes; nothing is decoded. The whole input is parsed:
    /// cap it at [`crate::MAX_BODY_BYTES`] first if it comes from the network.
    pub fn parse(body: &[u8]) -> RobotsTxt {
        // Rough sizes from typical files, so small files do not reallocate as they grow.
        let mut robots = RobotsTxt {
            arena: Vec::with_capacity(body.len()),
            rules: Vec::with_capacity(body.len() / 24),
            ..RobotsTxt::default()
        };
        let mut events = events(body);
        for (line, event) in events.by_ref() {
            match event {
                Event::UserAgent {
                    value,
                    starts_group,
                } => {
                    if starts_group {
                        let (a, r, c) = (
                            robots.agents.len(),
                            robots.rules.len(),
                            robots.records.len(),
                        );
                        robots.groups.push(GroupData {
                            agents: a..a,
                            rules: r..r,
                            records: c..c,
                            starred: StarBound::default(),
                        });
                    }
                    let span = robots.store(value);
                    robots.agents.push(AgentData {
                        line,
                        value: span,
                        global: is_global_agent(value),
                    });
                    if let Some(group) = robots.groups.last_mut() {
                        group.agents.end = robots.agents.len();
                    }
                }
                Event::Rule {
                    kind,
                    value,
                    in_group,
                    hints,
                } => {
                    let escaped = escape_pattern_hinted(value, hints);
                    let pattern = robots.store(&escaped);
                    let written = if *escaped == *value {
                        pattern
                    } else {
                        robots.store(value)
                    };
                    let rule = RuleData {
                        line,
                        kind,
                        hints,
                        key: scan_key(kind, &escaped),
                        pattern,
                        written,
                    };
                    match robots.groups.last_mut() {
                        Some(group) if in_group => {
                            if hints.may_have_star() {
                                group.starred.add(pattern);
                            }
                            robots.rules.push(rule);
                            group.rules.end = robots.rules.len();
                        }
                        _ => robots.orphan_rules.push(rule),
                    }
                }
                Event::Sitemap { key, value } => {
                    let record = robots.record(line, key, value, value);
                    robots.sitemaps.push(record);
                }
                Event::Other { key, value } => {
                    let record = robots.record(line, key, &escape_pattern(value), value);
                    robots.records.push(record);
                    if let Some(group) = robots.groups.last_mut() {
                        group.records.end = robots.records.len();
                    }
                }
            }
        }
        robots.line_count = events.line_count();
        robots
    }

    fn store(&mut self, bytes: &[u8]) -> Span {
        // Bodies over 4 GiB cannot be stored with u32 offsets; such input is cut, never wrapped.
        let room = (u32::MAX as usize).saturating_sub(self.arena.len());
        let bytes = &bytes[..bytes.len().min(room)];
        let start = self.arena.len() as u32;
        self.arena.extend_from_slice(bytes);
        Span {
            start,
            end: self.arena.len() as u32,
        }
    }

    fn record(&mut self, line: u32, key: &[u8], value: &[u8], written: &[u8]) -> RecordData {
        let key = self.store(key);
        let value_span = self.store(value);
        let written = if value == written {
            value_span
        } else {
            self.store(written)
        };
        RecordData {
            line,
            key,
            value: value_span,
            written,
        }
    }

    pub(crate) fn bytes(&self, span: Span) -> &[u8] {
        &self.arena[span.start as usize..span.end as usize]
    }

    /// Number of lines in the body (terminators + 1).
    pub fn line_count(&self) -> u32 {
        self.line_count
    }

    /// The groups, in file order.
    pub fn groups(&self) -> impl ExactSizeIterator<Item = Group<'_>> + '_ {
        self.groups
            .iter()
            .map(move |data| Group { robots: self, data })
    }

    /// The group at `position` (in file order).
    pub(crate) fn group(&self, position: usize) -> Option<Group<'_>> {
        let data = self.groups.get(position)?;
        Some(Group { robots: self, data })
    }

    /// Every sitemap line, in file order, whatever group it is in; values as written.
    pub fn sitemaps(&self) -> impl ExactSizeIterator<Item = Sitemap<'_>> + '_ {
        self.sitemaps.iter().map(move |r| Sitemap {
            line: r.line,
            url: self.bytes(r.value),
        })
    }

    /// Every record that is neither a rule, a user-agent nor a sitemap (Crawl-delay, Host,
    /// Content-Signal, unknown keys), in file order, inside groups or not. Values are escaped
    /// like patterns, as Google does.
    pub fn records(&self) -> impl ExactSizeIterator<Item = Record<'_>> + '_ {
        self.records.iter().map(move |r| self.view_record(r))
    }

    /// The records that concern the crawler a view was compiled for (`selection` is
    /// [`crate::Matcher::selection`]): those of the selected groups, and those before the first group,
    /// which belong to no group (a leading `Host:` or `Content-Signal:`). In file order.
    ///
    /// ```
    /// use robots_core::RobotsTxt;
    /// let robots = RobotsTxt::parse(b"Host: e.com\nUser-agent: a\nCrawl-delay: 5\nUser-agent: *\nDisallow: /x\nUser-agent: b\nAllow: /\nCrawl-delay: 9\n");
    /// let view = robots.matcher("a");
    /// let lines: Vec<u32> = robots.records_for(view.selection()).iter().map(|r| r.line).collect();
    /// assert_eq!(lines, [1, 3]);
    /// ```
    pub fn records_for(&self, selection: &crate::Selection) -> Vec<Record<'_>> {
        let groups: Vec<usize> = match selection {
            crate::Selection::Agent(token) => self.groups_naming(token).collect(),
            crate::Selection::Global => self.groups_for_everyone().collect(),
            crate::Selection::None => Vec::new(),
        };
        let mut records: Vec<Record<'_>> = self.records_before_groups().collect();
        let groups = groups.into_iter().filter_map(|g| self.group(g));
        records.extend(groups.flat_map(|g| g.records()));
        records
    }

    /// The records before the first group (a leading `Host:` or `Content-Signal:`).
    pub(crate) fn records_before_groups(&self) -> impl Iterator<Item = Record<'_>> + '_ {
        let first_grouped = self
            .groups
            .first()
            .map_or(self.records.len(), |g| g.records.start);
        self.records[..first_grouped]
            .iter()
            .map(move |r| self.view_record(r))
    }

    /// Allow/disallow lines that came before any user-agent line; they apply to nobody.
    pub fn rules_outside_groups(&self) -> impl ExactSizeIterator<Item = Rule<'_>> + '_ {
        self.orphan_rules.iter().map(move |r| self.view_rule(r))
    }

    fn view_record(&self, r: &RecordData) -> Record<'_> {
        Record {
            line: r.line,
            key: self.bytes(r.key),
            value: self.bytes(r.value),
            written: self.bytes(r.written),
        }
    }

    pub(crate) fn view_rule(&self, r: &RuleData) -> Rule<'_> {
        Rule {
            line: r.line,
            kind: r.kind,
            pattern: self.bytes(r.pattern),
            written: self.bytes(r.written),
        }
    }

    /// Heap bytes held (the lines' bytes and their index), for callers that bound memory in
    /// bytes.
    ///
    /// ```
    /// use robots_core::RobotsTxt;
    /// let robots = RobotsTxt::parse(b"User-agent: *\nDisallow: /private\n");
    /// assert!(robots.heap_bytes() >= "/private".len());
    /// ```
    pub fn heap_bytes(&self) -> usize {
        fn held<T>(items: &Vec<T>) -> usize {
            items.capacity() * std::mem::size_of::<T>()
        }
        self.arena.capacity()
            + held(&self.agents)
            + held(&self.rules)
            + held(&self.records)
            + held(&self.sitemaps)
            + held(&self.groups)
            + held(&self.orphan_rules)
    }

    /// Whether any group names `token` (compared as [`RobotsTxt::matcher`] compares it). A
    /// crawler no group names gets the `*` groups, so its view is the same as every other such
    /// crawler's: one compiled view can serve them all.
    ///
    /// ```
    /// use robots_core::RobotsTxt;
    /// let robots = RobotsTxt::parse(b"User-agent: FooBot\nDisallow: /a\n\nUser-agent: *\nDisallow: /b\n");
    /// assert!(robots.names_token("foobot"));
    /// assert!(!robots.names_token("BarBot"));
    /// ```
    pub fn names_token(&self, token: &str) -> bool {
        self.groups_naming(token).next().is_some()
    }

    /// Positions of the groups whose user-agents name `token` (compared as given, ASCII
    /// case-insensitive, spec section 3), in file order: the one place a crawler's groups are
    /// chosen, for a compiled view, a scan and the records.
    pub(crate) fn groups_naming<'a>(&'a self, token: &'a str) -> impl Iterator<Item = usize> + 'a {
        self.group_marks(token)
            .filter(|marks| marks.named)
            .map(|marks| marks.position)
    }

    /// Every group in file order, marked with whether its user-agents name `token` (as
    /// [`RobotsTxt::groups_naming`] chooses) and whether one is `*`: both choices in one pass,
    /// for a crawler's first check, which makes one or the other.
    pub(crate) fn group_marks<'a>(
        &'a self,
        token: &'a str,
    ) -> impl Iterator<Item = GroupMarks> + 'a {
        self.groups.iter().enumerate().map(move |(position, data)| {
            let mut marks = GroupMarks {
                position,
                named: false,
                global: false,
            };
            for agent in &self.agents[data.agents.clone()] {
                if agent.global {
                    marks.global = true;
                } else if !marks.named {
                    marks.named = names_token(self.bytes(agent.value), token.as_bytes());
                }
            }
            marks
        })
    }

    /// Positions of the `*` groups, in file order.
    pub(crate) fn groups_for_everyone(&self) -> impl Iterator<Item = usize> + '_ {
        let global = |g: &Group<'_>| g.agents().any(|a| a.is_global);
        self.groups()
            .enumerate()
            .filter(move |(_, g)| global(g))
            .map(|(i, _)| i)
    }
}

/// One group: user-agent lines and the rules and records that follow them.
#[derive(Debug, Clone, Copy)]
pub struct Group<'a> {
    robots: &'a RobotsTxt,
    data: &'a GroupData,
}

impl<'a> Group<'a> {
    /// The user-agent lines that open this group.
    pub fn agents(&self) -> impl ExactSizeIterator<Item = Agent<'a>> + 'a {
        let robots = self.robots;
        robots.agents[self.data.agents.clone()]
            .iter()
            .map(move |a| Agent {
                line: a.line,
                value: robots.bytes(a.value),
                is_global: a.global,
            })
    }

    /// The allow and disallow rules, in file order.
    pub fn rules(&self) -> impl ExactSizeIterator<Item = Rule<'a>> + 'a {
        let robots = self.robots;
        robots.rules[self.data.rules.clone()]
            .iter()
            .map(move |r| robots.view_rule(r))
    }

    /// Bounds of the `*` its rules hold (see [`StarBound`]).
    pub(crate) fn starred(&self) -> StarBound {
        self.data.starred
    }

    /// The rules as stored (spans into the file's arena), for a scan.
    pub(crate) fn rule_data(&self) -> &'a [RuleData] {
        &self.robots.rules[self.data.rules.clone()]
    }

    /// The rules with what the parse learnt of each value, for compiling a view.
    pub(crate) fn rules_with_hints(
        &self,
    ) -> impl Iterator<Item = (Rule<'a>, ValueHints)> + use<'a> {
        let robots = self.robots;
        robots.rules[self.data.rules.clone()]
            .iter()
            .map(move |r| (robots.view_rule(r), r.hints))
    }

    /// Other records (Crawl-delay, Request-rate, Host…) inside this group, in file order.
    pub fn records(&self) -> impl ExactSizeIterator<Item = Record<'a>> + use<'a> {
        let robots = self.robots;
        robots.records[self.data.records.clone()]
            .iter()
            .map(move |r| robots.view_record(r))
    }
}

/// A user-agent line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Agent<'a> {
    /// Line number.
    pub line: u32,
    /// The value as written.
    pub value: &'a [u8],
    /// `*` (see [`crate::is_global_agent`]).
    pub is_global: bool,
}

impl<'a> Agent<'a> {
    /// The product token the value is compared by (`Googlebot/2.1` gives `Googlebot`).
    pub fn token(&self) -> &'a [u8] {
        product_token_bytes(self.value)
    }
}

/// An allow or disallow rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule<'a> {
    /// Line number.
    pub line: u32,
    /// Allow or disallow.
    pub kind: RuleKind,
    /// The pattern after escaping: what is matched, and whose length is the priority.
    pub pattern: &'a [u8],
    /// The pattern as written in the file.
    pub written: &'a [u8],
}

/// A `Sitemap:` line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sitemap<'a> {
    /// Line number.
    pub line: u32,
    /// The URL as written (not escaped, not validated).
    pub url: &'a [u8],
}

impl Sitemap<'_> {
    /// Whether crawlers use it: its value is an absolute `http(s)` URL. A relative one
    /// (`/sitemap.xml`) is ignored by crawlers (and reported by lint).
    ///
    /// ```
    /// use robots_core::RobotsTxt;
    /// let robots = RobotsTxt::parse(b"Sitemap: https://e.com/s.xml\nSitemap: /s.xml\n");
    /// let used: Vec<bool> = robots.sitemaps().map(|s| s.is_absolute()).collect();
    /// assert_eq!(used, [true, false]);
    /// ```
    pub fn is_absolute(&self) -> bool {
        is_absolute_sitemap(self.url)
    }
}

/// Whether a `Sitemap:` value is an absolute `http(s)` URL, the only kind crawlers use: the one
/// rule `lint`, `robots sitemaps` and the front ends apply.
pub fn is_absolute_sitemap(value: &[u8]) -> bool {
    let starts = |scheme: &[u8]| {
        value.len() > scheme.len() && value[..scheme.len()].eq_ignore_ascii_case(scheme)
    };
    starts(b"http://") || starts(b"https://")
}

/// Any other `key: value` line, kept so users can read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record<'a> {
    /// Line number.
    pub line: u32,
    /// The key as written.
    pub key: &'a [u8],
    /// The value, escaped like a pattern (as Google stores it).
    pub value: &'a [u8],
    /// The value as written: what `Content-Usage` and `Content-Signal` are read from (their
    /// preferences are bytes, not patterns).
    pub written: &'a [u8],
}

impl Record<'_> {
    /// Whether the key is `name`, ASCII case-insensitively.
    pub fn is(&self, name: &str) -> bool {
        self.key.eq_ignore_ascii_case(name.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each group tallies its rules with a `*` and their escaped bytes; rules before any group
    /// and rules without one count for nothing.
    #[test]
    fn groups_tally_their_starred_rules() {
        let robots = RobotsTxt::parse(
            b"Disallow: /*orphan\nUser-agent: a\nDisallow: /*.php$\nAllow: /x\nDisallow: /\xC3\xA9*\n\
              User-agent: b\nDisallow: /plain\n",
        );
        let tallies: Vec<StarBound> = robots.groups().map(|g| g.starred()).collect();
        let bytes = (b"/*.php$".len() + b"/%C3%A9*".len()) as u32;
        assert_eq!(
            tallies,
            [StarBound { rules: 2, bytes }, StarBound::default()]
        );
    }

    fn agents_per_group(robots: &RobotsTxt) -> Vec<Vec<&[u8]>> {
        robots
            .groups()
            .map(|g| g.agents().map(|a| a.value).collect())
            .collect()
    }

    #[test]
    fn other_records_never_end_a_group() {
        let robots = RobotsTxt::parse(
            b"User-agent: a\nCrawl-delay: 5\nSitemap: /s\n\n# c\nUser-agent: *\nDisallow: /x\nUser-agent: b\nAllow: /",
        );
        assert_eq!(
            agents_per_group(&robots),
            [vec![&b"a"[..], b"*"], vec![b"b"]]
        );
        let first = robots.groups().next().map(|g| g.records().count());
        assert_eq!(first, Some(1));
    }

    #[test]
    fn rules_before_any_agent_are_kept_apart() {
        let robots = RobotsTxt::parse(b"Disallow: /a\nUser-agent: *\nDisallow: /b\n");
        assert_eq!(
            robots
                .rules_outside_groups()
                .map(|r| r.line)
                .collect::<Vec<_>>(),
            [1]
        );
        assert_eq!(robots.groups().len(), 1);
    }

    #[test]
    fn rule_values_are_escaped_and_kept_as_written() {
        let robots = RobotsTxt::parse("User-agent: *\nDisallow: /caf\u{e9}%2f\n".as_bytes());
        let rule = robots.groups().next().and_then(|g| g.rules().next());
        let rule = rule.map(|r| (r.pattern.to_vec(), r.written.to_vec()));
        assert_eq!(
            rule,
            Some((
                b"/caf%C3%A9%2F".to_vec(),
                "/caf\u{e9}%2f".as_bytes().to_vec()
            ))
        );
    }

    #[test]
    fn sitemaps_and_records() {
        let robots = RobotsTxt::parse(
            b"Sitemap: https://e/1.xml\nUser-agent: x\nSitemaps: https://e/2\nHost: e.com\n",
        );
        let maps: Vec<_> = robots.sitemaps().map(|s| (s.line, s.url)).collect();
        assert_eq!(maps, [(1, &b"https://e/1.xml"[..]), (3, b"https://e/2")]);
        let records: Vec<_> = robots.records().map(|r| (r.line, r.key, r.value)).collect();
        assert_eq!(records, [(4, &b"Host"[..], &b"e.com"[..])]);
        assert!(robots.records().all(|r| r.is("host")));
        assert_eq!(robots.line_count(), 5);
    }
}
