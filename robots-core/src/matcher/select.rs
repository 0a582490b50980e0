//! A crawler's view from a parsed file or straight from a body: which groups apply (the
//! selection), and the rules and records kept for it, in the thread's reused scratch.

use std::borrow::Cow;
use std::sync::LazyLock;

use crate::agent::{is_global_agent, names_token};
use crate::directive::{GROUP_KEY_HEADS, ValueHints, escape_pattern_hinted};
use crate::events::{Event, events_of_keys};
use crate::robots::{Group, RobotsTxt};
use crate::sweep::KeyHeads;
use crate::usage::{UsageKind, usage_kind};

use super::Matcher;
use super::rule::CompiledRule;
use super::scan::Positions;
use crate::verdict::{RuleKind, Selection};

/// A rule of a group that may apply, kept by `Matcher::from_body` until the end of the file
/// says which groups do: its value as a span of the body (no borrow, so the list outlives the
/// parse in [`Scratch`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct KeptRule {
    pub(super) start: usize,
    pub(super) len: u32,
    pub(super) group: u32,
    pub(super) line: u32,
    pub(super) kind: RuleKind,
    pub(super) hints: ValueHints,
}

/// The vectors a parse needs only while it runs, kept per thread from one parse to the next.
/// A crawler parses file after file: reusing them saves about 40% of a view's allocations. Each
/// is emptied after use and dropped when it holds more than [`Scratch::RETAINED_BYTES`]: a
/// thread keeps at most 96 KiB between parses (six lists), so what a cache holds is its
/// entries, and a big file's lists are given back at once.
#[derive(Debug, Default)]
pub(super) struct Scratch {
    /// `Matcher::from_body`'s rules kept until the end of the file.
    pub(super) kept: Vec<KeptRule>,
    /// Per group: which tokens (bits) it names and whether it names `*`.
    pub(super) groups: Vec<(u64, bool)>,
    pub(super) compile: CompileScratch,
}

/// What `Matcher::compile` needs while it runs.
#[derive(Debug, Default)]
pub(super) struct CompileScratch {
    /// The rules compiled, not yet in decision order (16 bytes each: a crafted file has tens
    /// of thousands, written into fresh memory).
    pub(super) pending: Vec<CompiledRule>,
    /// For the few pending rules whose written form is elsewhere (`FLAG_WRITTEN_ELSEWHERE`):
    /// (pending position, start, end), by position.
    pub(super) spans: Vec<(u32, u32, u32)>,
    pub(super) order: Vec<u32>,
    /// The `*` rules kept so far (positions in the view), by [`twin_hash`].
    pub(super) twins: hashbrown::HashTable<u32>,
}

thread_local! {
    /// Boxed so that taking it out and putting it back moves a pointer, not the lists' headers
    /// (a visible share of compiling a small view).
    pub(super) static SCRATCH: std::cell::Cell<Option<Box<Scratch>>> =
        const { std::cell::Cell::new(None) };
}

impl Scratch {
    /// Capacity kept per list between parses: several hundred rules, more than most files.
    pub(super) const RETAINED_BYTES: usize = 16 << 10;

    /// Runs `f` with this thread's scratch (a fresh one if it is in use or gone: a parse
    /// within a parse, or a thread being torn down).
    pub(super) fn with<R>(f: impl FnOnce(&mut Scratch) -> R) -> R {
        let mut scratch = SCRATCH
            .try_with(std::cell::Cell::take)
            .ok()
            .flatten()
            .unwrap_or_default();
        let result = f(&mut scratch);
        scratch.empty();
        // Gone only while the thread exits: the scratch is then simply dropped.
        let _ = SCRATCH.try_with(|cell| cell.set(Some(scratch)));
        result
    }

    /// Every list emptied, and dropped when it holds more than [`Scratch::RETAINED_BYTES`].
    fn empty(&mut self) {
        self.kept = emptied(std::mem::take(&mut self.kept));
        self.groups = emptied(std::mem::take(&mut self.groups));
        let compile = &mut self.compile;
        compile.pending = emptied(std::mem::take(&mut compile.pending));
        compile.spans = emptied(std::mem::take(&mut compile.spans));
        compile.order = emptied(std::mem::take(&mut compile.order));
        // A slot is a position and a control byte.
        if compile.twins.capacity() * 5 > Scratch::RETAINED_BYTES {
            compile.twins = hashbrown::HashTable::new();
        }
        compile.twins.clear();
    }
}

/// `v` cleared, or a new empty vector when it holds more than [`Scratch::RETAINED_BYTES`].
pub(super) fn emptied<T>(mut v: Vec<T>) -> Vec<T> {
    if v.capacity().saturating_mul(std::mem::size_of::<T>()) > Scratch::RETAINED_BYTES {
        return Vec::new();
    }
    v.clear();
    v
}

/// The keys a one-pass parse reads, by their first two letters: the groups' and the records'
/// a view keeps ([`is_kept_key`]). Every other line (comments, sitemaps, other keys, an HTML
/// page served as robots.txt) is passed over unread.
static VIEW_KEYS: KeyHeads = {
    let [user_agent, allow, disallow] = GROUP_KEY_HEADS;
    KeyHeads::of(&[user_agent, allow, disallow, *b"cr", *b"re", *b"co"])
};

/// Keys whose values the view keeps (the rest of the records is only in [`RobotsTxt`]). Each
/// starts with a head of [`VIEW_KEYS`].
pub(super) fn is_kept_key(key: &[u8]) -> bool {
    key.eq_ignore_ascii_case(b"crawl-delay")
        || key.eq_ignore_ascii_case(b"request-rate")
        || usage_kind(key).is_some()
}

/// A `Content-Signal` before any group applies to every crawler (spec section 10).
pub(super) fn is_global_record(key: &[u8]) -> bool {
    usage_kind(key) == Some(UsageKind::ContentSignal)
}

/// A parsed file's views for a crawler are compiled here (the parser knows nothing of them).
impl RobotsTxt {
    /// Compiles the view for one crawler, named by its product token (`FooBot`). The token is
    /// compared as given, as Google's library does: a name with bytes outside `[A-Za-z_-]`
    /// (`Foo Bar`, `FooBot/2.1`) matches only `*` groups. Reduce a full User-Agent string with
    /// [`crate::user_agent_token`] first, or use [`RobotsTxt::matcher_for_user_agent`].
    pub fn matcher(&self, agent: &str) -> Matcher {
        Matcher::new(self, [agent])
    }

    /// Compiles the view for a crawler known by several tokens, most specific first
    /// (`["Googlebot-Image", "Googlebot"]`): the first token that has any group is used.
    pub fn matcher_for<I, S>(&self, agents: I) -> Matcher
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        Matcher::new(self, agents)
    }

    /// Compiles the view for a crawler named by a full User-Agent string
    /// (`FooBot/2.1 (+https://foo.example/bot)` → `FooBot`). When the reduction cuts the name
    /// short (`AB42bot/1.0` → `AB`), [`crate::user_agent_token`] says so: name the tokens
    /// explicitly with [`RobotsTxt::matcher_for`] instead.
    ///
    /// ```
    /// use robots_core::RobotsTxt;
    /// let robots = RobotsTxt::parse(b"User-agent: FooBot\nDisallow: /\n");
    /// let bot = robots.matcher_for_user_agent("FooBot/2.1 (+https://foo.example/bot)");
    /// assert!(!bot.is_allowed("https://example.com/x"));
    /// ```
    pub fn matcher_for_user_agent(&self, user_agent: &str) -> Matcher {
        Matcher::new(self, [crate::product_token(user_agent)])
    }

    /// One-off check: is `url` allowed for `agent`? Answered by a scan of the rules (see
    /// [`crate::RuleScan`]) unless compiling the view costs less; compile a [`Matcher`] to check
    /// many URLs.
    pub fn is_allowed(&self, agent: &str, url: &str) -> bool {
        let scan = self.rule_scan(agent);
        if scan.scan_is_cheaper(self) {
            scan.is_allowed(self, url)
        } else {
            self.matcher(agent).is_allowed(url)
        }
    }
}

impl Matcher {
    pub(crate) fn new<I, S>(robots: &RobotsTxt, agents: I) -> Matcher
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        // The groups are chosen as a scan chooses them (tokens compared as given, spec
        // section 3: no reduction to a product token here).
        let (selection, positions) = robots.rule_scan_for(agents).into_parts();
        Matcher::of_groups(robots, selection, &positions)
    }

    /// The view of the groups of `robots` at `positions`, chosen for `selection`.
    pub(super) fn of_groups(
        robots: &RobotsTxt,
        selection: Selection,
        positions: &Positions,
    ) -> Matcher {
        let groups = positions.groups(robots);
        // The parse's hints come along: without them, each pattern was scanned again for a `*`
        // (the compile's largest single cost on the corpus).
        let rules = groups
            .clone()
            .flat_map(|g| g.rules_with_hints())
            .map(|(r, hints)| (r.line, r.kind, Cow::Borrowed(r.pattern), r.written, hints));
        // Values as written: usage preferences are bytes, not patterns.
        let records: Vec<_> = robots
            .records_before_groups()
            .filter(|r| is_global_record(r.key))
            .chain(groups.clone().flat_map(|g| g.records()))
            .filter(|r| is_kept_key(r.key))
            .map(|r| (r.line, r.key, r.written))
            .collect();
        let count = groups.map(|g| g.rules().len()).sum();
        if count == 0
            && records.is_empty()
            && let Some(empty) = Matcher::empty(&selection)
        {
            return empty;
        }
        Scratch::with(|scratch| {
            let expected = (count, count * 32);
            Matcher::compile(selection, rules, &records, expected, &mut scratch.compile)
        })
    }

    /// The view with no rules and no records for a selection of no group or of `*` groups
    /// (most files checked by most crawlers have rules; the others, and the 404 pages and
    /// empty bodies a crawler parses, all share one of two views instead of compiling one).
    fn empty(selection: &Selection) -> Option<Matcher> {
        static NONE: LazyLock<Matcher> = LazyLock::new(|| Matcher::with_nothing(Selection::None));
        static GLOBAL: LazyLock<Matcher> =
            LazyLock::new(|| Matcher::with_nothing(Selection::Global));
        match selection {
            Selection::None => Some(NONE.clone()),
            Selection::Global => Some(GLOBAL.clone()),
            Selection::Agent(_) => None,
        }
    }

    fn with_nothing(selection: Selection) -> Matcher {
        Matcher::compile(
            selection,
            std::iter::empty(),
            &[],
            (0, 0),
            &mut CompileScratch::default(),
        )
    }

    /// The view of one group's rules alone (for lint).
    pub(crate) fn of_group(group: &Group<'_>) -> Matcher {
        let rules = group.rules().map(|r| {
            (
                r.line,
                r.kind,
                Cow::Borrowed(r.pattern),
                r.written,
                ValueHints::UNKNOWN,
            )
        });
        let count = group.rules().len();
        Scratch::with(|scratch| {
            let expected = (count, count * 32);
            Matcher::compile(Selection::None, rules, &[], expected, &mut scratch.compile)
        })
    }

    /// Parses a body straight into the view for one crawler, skipping what cannot apply to it:
    /// the fastest way from a fetched robots.txt to checks. Same verdicts as
    /// [`RobotsTxt::matcher_for`]; use [`RobotsTxt`] when you also need sitemaps, other records
    /// or several crawlers.
    ///
    /// The lists a parse needs only while it runs are kept per thread for the next parse (at
    /// most 96 KiB in all), which saves their allocations.
    ///
    /// ```
    /// use robots_core::Matcher;
    /// let bot = Matcher::from_body(b"User-agent: *\nDisallow: /tmp/\n", ["FooBot"]);
    /// assert!(!bot.is_allowed("https://example.com/tmp/x"));
    /// ```
    pub fn from_body<I, S>(body: &[u8], agents: I) -> Matcher
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut agents = agents.into_iter();
        let first = agents.next();
        let second = if first.is_some() { agents.next() } else { None };
        if let (Some(only), None) = (&first, &second) {
            // One name, as most callers give: no list to allocate.
            let names = std::slice::from_ref(only);
            return Scratch::with(|scratch| Matcher::from_body_with(body, names, scratch));
        }
        let names: Vec<S> = first.into_iter().chain(second).chain(agents).collect();
        if names.len() > 64 {
            // Group membership is tracked in a 64-bit mask; more names take the general path.
            let tokens: Vec<&str> = names.iter().map(|a| a.as_ref()).collect();
            return RobotsTxt::parse(body).matcher_for(&tokens);
        }
        Scratch::with(|scratch| Matcher::from_body_with(body, &names, scratch))
    }

    /// [`Matcher::from_body`] for at most 64 names, with this thread's [`Scratch`].
    pub(super) fn from_body_with<S: AsRef<str>>(
        body: &[u8],
        names: &[S],
        scratch: &mut Scratch,
    ) -> Matcher {
        // Per group (`scratch.groups`): which tokens (bits) it names and whether it names `*`.
        // Membership is final at a group's first rule, but a record may sit between the group's
        // user-agent lines, so kept lines point at their group and are sorted out at the end.
        // Rules and records apart: rules are most of a file, and a record's key would make
        // every rule larger (a hostile file has hundreds of thousands of them).
        struct Record<'a> {
            group: usize,
            line: u32,
            key: &'a [u8],
            value: &'a [u8],
        }
        const GLOBAL: usize = usize::MAX;
        let Scratch {
            kept,
            groups,
            compile,
        } = scratch;
        // Empty already after `Scratch::with`; cleared so that nothing else need hold to it.
        kept.clear();
        groups.clear();
        // Room for a rule per 16 bytes, more than files have: capacity not used costs no
        // memory touched, and growing would copy every rule kept so far.
        kept.reserve(body.len() / 16);
        let mut kept_records: Vec<Record<'_>> = Vec::new();
        // Values are slices of the body: kept as spans.
        let start_of = |value: &[u8]| value.as_ptr().addr().wrapping_sub(body.as_ptr().addr());
        // The names of the groups before the current one, and whether the current one may
        // still be chosen.
        let (mut named, mut may_apply) = (0u64, false);
        // Whether the current group that cannot apply had a rule already.
        let mut ruled = false;
        let mut events = events_of_keys(body, &VIEW_KEYS);
        while let Some((line, event)) = events.next() {
            match event {
                Event::UserAgent {
                    value,
                    starts_group,
                } => {
                    ruled = false;
                    if starts_group {
                        named |= groups.last().map_or(0, |&(mask, _)| mask);
                        groups.push((0, false));
                    }
                    let Some((mask, global)) = groups.last_mut() else {
                        continue;
                    };
                    if is_global_agent(value) {
                        *global = true;
                    } else {
                        // Each name compared with the value's start, not the value's whole
                        // product token found first (user-agent lines are long, and most
                        // names differ at their first byte).
                        for (i, t) in names.iter().map(AsRef::as_ref).enumerate() {
                            if names_token(value, t.as_bytes()) {
                                *mask |= 1 << i;
                            }
                        }
                    }
                    // The first name with a group wins, and `*` groups count only when no name
                    // has one.
                    may_apply = match named | *mask {
                        0 => *global,
                        // The names up to the first one with a group so far.
                        seen => *mask & (seen ^ (seen - 1)) != 0,
                    };
                }
                Event::Rule {
                    kind,
                    value,
                    in_group: true,
                    hints,
                } => {
                    // Only rules of groups that may apply are kept. The crawlers of a group
                    // are final at its first rule: the rest of a group that can no longer be
                    // chosen is passed over unread.
                    if !may_apply {
                        // From its second rule: most groups that end at their first rule
                        // (`Disallow: /` for a bot) leave nothing worth a pass.
                        if std::mem::replace(&mut ruled, true) {
                            events.skip_group();
                        }
                    } else {
                        kept.push(KeptRule {
                            start: start_of(value),
                            // A value of 4 GiB or more is longer than a view takes anyway.
                            len: u32::try_from(value.len()).unwrap_or(u32::MAX),
                            group: u32::try_from(groups.len().saturating_sub(1))
                                .unwrap_or(u32::MAX),
                            line,
                            kind,
                            hints,
                        });
                    }
                }
                Event::Other { key, value }
                    if is_kept_key(key) && (!groups.is_empty() || is_global_record(key)) =>
                {
                    // Before any group: a record for every crawler.
                    let group = groups.len().checked_sub(1).unwrap_or(GLOBAL);
                    kept_records.push(Record {
                        group,
                        line,
                        key,
                        value,
                    });
                }
                _ => {}
            }
        }
        let has_group = groups.iter().fold(0u64, |acc, (mask, _)| acc | mask);
        let any_global = groups.iter().any(|(_, global)| *global);
        // The first token that has a group wins; else the `*` groups; else nothing applies.
        let first = has_group.trailing_zeros();
        let selection = match names.get(first as usize).map(AsRef::as_ref) {
            Some(token) => Selection::Agent(token.into()),
            None if any_global => Selection::Global,
            None => Selection::None,
        };
        let (by_token, by_global) = (first < 64, first >= 64 && any_global);
        let groups = &*groups;
        let applies = |group: usize| {
            if group == GLOBAL {
                return true;
            }
            let Some(&(mask, global)) = groups.get(group) else {
                return false;
            };
            (by_token && mask & (1 << first) != 0) || (by_global && global)
        };
        let value_of = |k: &KeptRule| body.get(k.start..k.start.saturating_add(k.len as usize));
        let rules = kept
            .iter()
            .filter(|k| applies(k.group as usize))
            .filter_map(|k| {
                let value = value_of(k)?;
                Some((
                    k.line,
                    k.kind,
                    escape_pattern_hinted(value, k.hints),
                    value,
                    k.hints,
                ))
            });
        let records: Vec<_> = kept_records
            .iter()
            .filter(|r| applies(r.group))
            .map(|r| (r.line, r.key, r.value))
            .collect();
        if kept.is_empty()
            && records.is_empty()
            && let Some(empty) = Matcher::empty(&selection)
        {
            return empty;
        }
        let bytes = kept.iter().map(|k| k.len as usize).sum::<usize>();
        let expected = (kept.len(), bytes + bytes / 4);
        Matcher::compile(selection, rules, &records, expected, compile)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_view_reads_the_keys_of_groups_and_of_the_records_it_keeps() {
        let kept: [&[u8]; 4] = [
            b"crawl-delay",
            b"request-rate",
            b"content-usage",
            b"content-signal",
        ];
        for key in kept {
            assert!(is_kept_key(key), "{key:?}");
        }
        let heads = kept.map(|key| [key[0], key[1]]);
        for [first, second] in heads.into_iter().chain(GROUP_KEY_HEADS) {
            for case in [u8::to_ascii_lowercase, u8::to_ascii_uppercase] {
                assert!(
                    VIEW_KEYS.may_start(case(&first), case(&second)),
                    "{first} {second}"
                );
            }
        }
        for line in [
            &b"Sitemap: s"[..],
            b"# x",
            b"<html>",
            b"Host: h",
            b"Clean-param: p",
        ] {
            assert!(!VIEW_KEYS.may_start(line[0], line[1]), "{line:?}");
        }
    }
}
