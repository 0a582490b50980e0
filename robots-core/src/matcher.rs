//! The per-crawler view (spec sections 3–4): the rules that apply to one crawler, compiled and
//! ordered so that the first rule that matches a path is the deciding one.
//!
//! Google keeps the best allow and the best disallow priority and compares them. Ordering the
//! rules by (priority descending, allow before disallow, line ascending) gives the same answer
//! with an early exit: the first match has the highest priority, ties go to allow, and among
//! equals the earliest line is the one reported.

use std::sync::Arc;
use std::time::Duration;

use std::borrow::Cow;

use crate::agent::{is_global_agent, product_token_bytes};
use crate::directive::{ValueHints, escape_pattern_hinted, find_byte, rfind_byte};
use crate::events::{Event, events};
use crate::mask::{BLOCK, mask_of};
use crate::pattern::{Glob, Subject, glob_matches, is_prefix, split_anchor};
use crate::records::{RequestRate, parse_crawl_delay};
use crate::robots::{Group, RobotsTxt};
use crate::url_path::path_of;
use crate::usage::{Usage, UsageKind, UsagePreferences, UsageTable, usage_kind};
pub use crate::verdict::{MatchedRule, RuleKind, Selection, Verdict};

/// A Crawl-delay value and the line it came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct CrawlDelay {
    /// The delay.
    pub delay: Duration,
    /// Line of the Crawl-delay record.
    pub line: u32,
}

/// A rule ready to match, 16 bytes: views of big files hold tens of thousands of these, and a
/// cached view must cost little more than the file itself. Its bytes live in `Inner::arena`;
/// the `*` analysis of the few rules that have one lives in `Inner::globs`.
#[derive(Debug, Clone, Copy)]
struct CompiledRule {
    /// Start of the escaped pattern without its trailing `$` (what is matched) in the arena.
    /// The pattern as written (what is reported) starts here too, `written_len` long, unless
    /// the rule is listed in `Inner::written`.
    start: u32,
    /// The body's length (low 24 bits: a body is one line's pattern, at most three times
    /// `MAX_LINE_BYTES` once escaped) and, above it, the rule's key: the body's second byte
    /// when the body is `/` and a literal byte, 0 when any path may match. A path whose second
    /// byte differs from a rule's key cannot match it, which a check sees without reading the
    /// body (it is the body's bytes, elsewhere in memory, that a check waits for).
    len_key: u32,
    line: u32,
    /// `FLAG_*` bits, and above them the index into `Inner::globs` (when `FLAG_GLOB`).
    meta: u32,
}

// The size the docs state: a view of a big file holds tens of thousands of these.
#[cfg(target_pointer_width = "64")]
const _: () = assert!(std::mem::size_of::<CompiledRule>() == 16);

const FLAG_ALLOW: u32 = 1;
const FLAG_ANCHORED: u32 = 1 << 1;
const FLAG_GLOB: u32 = 1 << 2;
/// The written form is not at `start` (escaping changed it, or an index.html retry).
const FLAG_WRITTEN_ELSEWHERE: u32 = 1 << 3;
const META_SHIFT: u32 = 4;
/// The bits of `CompiledRule::len_key` that hold the length.
const LEN_MASK: u32 = (1 << 24) - 1;

/// Views with at least this many `*` rules drop twins (same body, same anchoring).
const TWIN_CHECK_MIN_GLOBS: usize = 32;

/// Hashes a `*` rule's body and anchoring for the twin check. Seeded per process
/// (`foldhash`): the bodies come from the file, so collisions must not be predictable.
fn twin_hash(hasher: &foldhash::fast::RandomState, body: &[u8], anchored: bool) -> u64 {
    use std::hash::BuildHasher;
    hasher.hash_one((body, anchored))
}

impl CompiledRule {
    fn kind(&self) -> RuleKind {
        if self.meta & FLAG_ALLOW != 0 {
            RuleKind::Allow
        } else {
            RuleKind::Disallow
        }
    }

    fn body(&self) -> (u32, u32) {
        (self.start, self.start + self.len())
    }

    fn len(&self) -> u32 {
        self.len_key & LEN_MASK
    }

    /// See `len_key`.
    #[inline(always)]
    fn key(&self) -> u8 {
        (self.len_key >> 24) as u8
    }

    /// Its place in decision order, highest first: priority (the escaped pattern's length,
    /// `$` counted), then allow before disallow.
    #[inline]
    fn rank(&self) -> u32 {
        let priority = self.len() + u32::from(self.meta & FLAG_ANCHORED != 0);
        priority * 2 + u32::from(self.meta & FLAG_ALLOW != 0)
    }
}

#[derive(Debug)]
struct Inner {
    selection: Selection,
    rules: Box<[CompiledRule]>,
    /// `*` analysis of the rules with `FLAG_GLOB`.
    globs: Box<[Glob]>,
    /// Where the written form is for rules with `FLAG_WRITTEN_ELSEWHERE`: (rule position,
    /// start, end), sorted by rule position. For the others it is `start..start + len (+1 for
    /// `$`)`.
    written: Box<[(u32, u32, u32)]>,
    /// For views with many rules: which rules can match, by the path's second byte.
    index: Option<Box<RuleIndex>>,
    /// The rules' bytes; for a view without an index, followed by every rule's key (see
    /// `CompiledRule::len_key`) in decision order, so that a check finds the rules a path may
    /// match 64 at a time.
    arena: Box<[u8]>,
    /// Crawl-delay, Request-rate and usage rules, out of line: most files have none of them, and
    /// keeping them out keeps the part a check reads small.
    extras: Option<Box<Extras>>,
}

/// What a view keeps besides its rules.
#[derive(Debug, Default)]
struct Extras {
    crawl_delay: Option<CrawlDelay>,
    request_rate: Option<(RequestRate, u32)>,
    /// `Content-Usage` and `Content-Signal` rules.
    usage: Option<UsageTable>,
}

/// Rules whose literal prefix has byte `x` at position `at` can only match paths with `x` there.
/// The index lists, for each byte, the rules of that bucket, and separately the rules that may
/// match any path (a literal prefix too short to reach `at`); both lists are in decision order,
/// so a check walks the two merged and stops at the first match, as the plain scan would.
/// `at` is the position (1 to 8) that splits the view's rules best: the second byte for most
/// files, a later one when every rule starts with the same directory (`/private0/`,
/// `/private1/`…).
#[derive(Debug)]
struct RuleIndex {
    /// `lists[..anywhere]` are the rules in no bucket; `lists[anywhere..][start[b]..start[b + 1]]`
    /// the rules whose prefix has `b` at `at` (one allocation for both lists).
    lists: Lists,
    anywhere: u32,
    at: u32,
}

/// Bucket starts and rule positions, two bytes each when the view has fewer than 65,536 rules
/// (nearly all do): the index then costs 514 bytes and 2 bytes a rule.
#[derive(Debug)]
enum Lists {
    Narrow(Box<[u16; 257]>, Box<[u16]>),
    Wide(Box<[u32; 257]>, Box<[u32]>),
}

/// The first position in the merge of two ascending lists (decision order) for which `hit`
/// is true.
#[inline]
fn first_hit<T: Copy + Ord + Into<u32>>(
    mut a: &[T],
    mut b: &[T],
    mut hit: impl FnMut(usize) -> bool,
) -> Option<usize> {
    loop {
        let next = match (a.first(), b.first()) {
            (Some(&x), Some(&y)) if x < y => {
                a = &a[1..];
                x
            }
            (_, Some(&y)) => {
                b = &b[1..];
                y
            }
            (Some(&x), None) => {
                a = &a[1..];
                x
            }
            (None, None) => return None,
        };
        let next = next.into() as usize;
        if hit(next) {
            return Some(next);
        }
    }
}

/// For byte positions 1 to `N` of the rules' literal prefixes, in one pass over the rules: the
/// rules per byte (at `b + 1`), the sum of the squared bucket sizes (kept as they grow), and how
/// many rules have no byte there.
fn tally<'a, const N: usize>(
    rules: impl Iterator<Item = &'a CompiledRule>,
    prefix: impl Fn(&CompiledRule) -> &'a [u8],
) -> ([[u32; 257]; N], [u64; N], [usize; N]) {
    let mut counts = [[0u32; 257]; N];
    let mut squares = [0u64; N];
    let mut anywhere = [0usize; N];
    for rule in rules {
        let prefix = prefix(rule);
        for (k, at) in (1..=N).enumerate() {
            match prefix.get(at) {
                Some(&b) => {
                    let count = &mut counts[k][usize::from(b) + 1];
                    squares[k] += 2 * u64::from(*count) + 1;
                    *count += 1;
                }
                None => {
                    // Shorter than this position, so than every later one too.
                    for far in &mut anywhere[k..] {
                        *far += 1;
                    }
                    break;
                }
            }
        }
    }
    (counts, squares, anywhere)
}

impl RuleIndex {
    /// Views with fewer rules are scanned directly; the index would not pay for itself.
    const MIN_RULES: usize = 32;
    /// Byte positions tried: 1 to this (0 is always `/`).
    const POSITIONS: usize = 8;
    /// Rules the positions are scored on.
    const SAMPLE: usize = 128;

    fn build(rules: &[CompiledRule], globs: &[Glob], arena: &[u8]) -> Option<Box<RuleIndex>> {
        if rules.len() < Self::MIN_RULES {
            return None;
        }
        let prefix = |r: &CompiledRule| -> &[u8] {
            let (start, end) = r.body();
            let body = &arena[start as usize..end as usize];
            let prefix_len = if r.meta & FLAG_GLOB != 0 {
                globs[(r.meta >> META_SHIFT) as usize].literal_prefix_len()
            } else {
                body.len()
            };
            &body[..prefix_len]
        };
        // The position with the fewest expected candidates for a path: the rules that are in
        // no bucket, plus the mean bucket size seen from a rule (sum of squares / rules). The
        // positions are scored on at most `SAMPLE` rules spread over the view (counting eight
        // positions for every rule was a visible share of parsing a big file), then the chosen
        // one is counted over all of them.
        let step = rules.len().div_ceil(RuleIndex::SAMPLE).max(1);
        let sample = rules.iter().step_by(step);
        let (counts, squares, anywhere) = tally::<{ RuleIndex::POSITIONS }>(sample, &prefix);
        let sampled = rules.len().div_ceil(step) as u64;
        let score = |k: usize| anywhere[k] as u64 * sampled + squares[k];
        // The first of the best, as positions are tried in order.
        let best =
            (0..counts.len()).reduce(|best, k| if score(k) < score(best) { k } else { best })?;
        let (start, anywhere_len) = if step == 1 {
            (counts[best], anywhere[best])
        } else {
            let positions = rules.iter().map(|r| prefix(r).get(best + 1).copied());
            let mut start = [0u32; 257];
            let mut anywhere = 0;
            for byte in positions {
                match byte {
                    Some(b) => start[usize::from(b) + 1] += 1,
                    None => anywhere += 1,
                }
            }
            (start, anywhere)
        };
        let at = best + 1;
        let mut start = Box::new(start);
        // An index that leaves most rules in one list saves a check nothing, and costs 2 bytes
        // a rule: not worth keeping (a file of `/1…`, `/2…` paths only has ten buckets).
        let largest = (0..256).map(|b| start[b + 1]).max().unwrap_or(0) as usize;
        if (largest + anywhere_len) * 4 > rules.len() * 3 {
            return None;
        }
        for b in 1..257 {
            start[b] += start[b - 1];
        }
        let mut fill = start.clone();
        let mut lists = vec![0u32; anywhere_len + start[256] as usize];
        let (anywhere, by_byte) = lists.split_at_mut(anywhere_len);
        let mut next_anywhere = 0;
        for (i, rule) in rules.iter().enumerate() {
            match prefix(rule).get(at) {
                Some(&b) => {
                    by_byte[fill[usize::from(b)] as usize] = i as u32;
                    fill[usize::from(b)] += 1;
                }
                None => {
                    anywhere[next_anywhere] = i as u32;
                    next_anywhere += 1;
                }
            }
        }
        let lists = if rules.len() <= usize::from(u16::MAX) {
            // Starts are at most the number of rules: they fit too.
            Lists::Narrow(
                Box::new(start.map(|s| s as u16)),
                lists.iter().map(|&i| i as u16).collect(),
            )
        } else {
            Lists::Wide(start, lists.into())
        };
        Some(Box::new(RuleIndex {
            lists,
            anywhere: anywhere_len as u32,
            at: at as u32,
        }))
    }

    /// The two candidate lists for a path.
    fn candidates<'l, T: Copy + Into<u32>>(
        &self,
        start: &[T; 257],
        lists: &'l [T],
        path: &[u8],
    ) -> (&'l [T], &'l [T]) {
        let (anywhere, by_byte) = lists.split_at((self.anywhere as usize).min(lists.len()));
        let bucket = path.get(self.at as usize).and_then(|&b| {
            let (from, to) = (start[usize::from(b)], start[usize::from(b) + 1]);
            by_byte.get(from.into() as usize..to.into() as usize)
        });
        (anywhere, bucket.unwrap_or_default())
    }

    fn heap_bytes(&self) -> usize {
        std::mem::size_of::<Self>()
            + match &self.lists {
                Lists::Narrow(_, l) => 257 * 2 + l.len() * 2,
                Lists::Wide(_, l) => 257 * 4 + l.len() * 4,
            }
    }
}

/// A robots.txt compiled for one crawler. Cheap to clone (one `Arc`), `Send + Sync`, and a check
/// never allocates (unless a URL has a query but no path, which needs a `/` put in front).
///
/// ```
/// use robots_core::{RobotsTxt, RuleKind};
/// let robots = RobotsTxt::parse(b"User-agent: *\nDisallow: /private\nAllow: /private/ok\n");
/// let matcher = robots.matcher("FooBot");
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

/// Rule indices `0..len` by rank, highest first, file order kept among equals (rules come in
/// file order), written into `order` (cleared first). Ranks are small (twice a pattern length), so a
/// counting sort does it in linear time.
fn decision_order(len: usize, rank: impl Fn(usize) -> u32, order: &mut Vec<u32>) {
    order.clear();
    let Some(max) = (0..len).map(&rank).max() else {
        return;
    };
    order.extend(0..len as u32);
    if max > 1 << 13 || len <= 32 {
        // A pattern of thousands of bytes, or a few rules: a sort beats a count table (and its
        // allocation). Unstable, on keys made unique by the index: no scratch buffer, the
        // same order as a stable sort.
        order.sort_unstable_by_key(|&i| (std::cmp::Reverse(rank(i as usize)), i));
        return;
    }
    let mut start = vec![0u32; max as usize + 2];
    for i in 0..len {
        start[(max - rank(i)) as usize + 1] += 1;
    }
    for i in 1..start.len() {
        start[i] += start[i - 1];
    }
    for i in 0..len {
        let slot = &mut start[(max - rank(i)) as usize];
        order[*slot as usize] = i as u32;
        *slot += 1;
    }
}

/// Runs `f` on `path` with a `/` put in front (a path must start with one; allocates, which
/// only a URL with a query but no path needs).
fn with_leading_slash<R>(path: &[u8], f: impl FnOnce(&[u8]) -> R) -> R {
    let mut slashed = Vec::with_capacity(path.len() + 1);
    slashed.push(b'/');
    slashed.extend_from_slice(path);
    f(&slashed)
}

/// A rule of a group that may apply, kept by `Matcher::from_body` until the end of the file
/// says which groups do: its value as a span of the body (no borrow, so the list outlives the
/// parse in [`Scratch`]).
#[derive(Debug, Clone, Copy)]
struct KeptRule {
    start: usize,
    len: u32,
    group: u32,
    line: u32,
    kind: RuleKind,
    hints: ValueHints,
}

/// The vectors a parse needs only while it runs, kept per thread from one parse to the next.
/// A crawler parses file after file: reusing them saves about 40% of a view's allocations. Each
/// is emptied after use and dropped when it holds more than [`Scratch::RETAINED_BYTES`]: a
/// thread keeps at most 64 KiB between parses, so what a cache holds is its entries, and a big
/// file's lists are given back at once.
#[derive(Debug, Default)]
struct Scratch {
    /// `Matcher::from_body`'s rules kept until the end of the file.
    kept: Vec<KeptRule>,
    /// Per group: which tokens (bits) it names and whether it names `*`.
    groups: Vec<(u64, bool)>,
    compile: CompileScratch,
}

/// What `Matcher::compile` needs while it runs.
#[derive(Debug, Default)]
struct CompileScratch {
    /// The rules compiled, not yet in decision order (16 bytes each: a crafted file has tens
    /// of thousands, written into fresh memory).
    pending: Vec<CompiledRule>,
    /// For the few pending rules whose written form is elsewhere (`FLAG_WRITTEN_ELSEWHERE`):
    /// (pending position, start, end), by position.
    spans: Vec<(u32, u32, u32)>,
    order: Vec<u32>,
    /// The `*` rules kept so far (positions in the view), by [`twin_hash`].
    twins: hashbrown::HashTable<u32>,
}

thread_local! {
    static SCRATCH: std::cell::Cell<Scratch> = std::cell::Cell::new(Scratch::default());
}

impl Scratch {
    /// Capacity kept per list between parses: several hundred rules, more than most files.
    const RETAINED_BYTES: usize = 16 << 10;

    /// Runs `f` with this thread's scratch (a fresh one if it is in use or gone: a parse
    /// within a parse, or a thread being torn down).
    fn with<R>(f: impl FnOnce(&mut Scratch) -> R) -> R {
        let mut scratch = SCRATCH.try_with(std::cell::Cell::take).unwrap_or_default();
        let result = f(&mut scratch);
        scratch.kept = emptied(std::mem::take(&mut scratch.kept));
        scratch.groups = emptied(std::mem::take(&mut scratch.groups));
        let compile = &mut scratch.compile;
        compile.pending = emptied(std::mem::take(&mut compile.pending));
        compile.spans = emptied(std::mem::take(&mut compile.spans));
        compile.order = emptied(std::mem::take(&mut compile.order));
        // A slot is a position and a control byte.
        if compile.twins.capacity() * 5 > Scratch::RETAINED_BYTES {
            compile.twins = hashbrown::HashTable::new();
        }
        compile.twins.clear();
        // Gone only while the thread exits: the scratch is then simply dropped.
        let _ = SCRATCH.try_with(|cell| cell.set(scratch));
        result
    }
}

/// `v` cleared, or a new empty vector when it holds more than [`Scratch::RETAINED_BYTES`].
fn emptied<T>(mut v: Vec<T>) -> Vec<T> {
    if v.capacity().saturating_mul(std::mem::size_of::<T>()) > Scratch::RETAINED_BYTES {
        return Vec::new();
    }
    v.clear();
    v
}

/// Keys whose values the view keeps (the rest of the records is only in [`RobotsTxt`]).
fn is_kept_key(key: &[u8]) -> bool {
    key.eq_ignore_ascii_case(b"crawl-delay")
        || key.eq_ignore_ascii_case(b"request-rate")
        || usage_kind(key).is_some()
}

/// A `Content-Signal` before any group applies to every crawler (spec section 10).
fn is_global_record(key: &[u8]) -> bool {
    usage_kind(key) == Some(UsageKind::ContentSignal)
}

/// Views without an index keep their rules' keys from this many rules: a smaller view's rules
/// are a few cache lines, and its keys would only make it larger.
const KEYED_MIN_RULES: usize = 16;

/// Bit `i` set when rule `i` of the block may match a path whose second byte is `want` (0: the
/// path has none): its key is `want`, or 0 (any path). A short last block is padded with a key
/// that is neither.
#[inline]
fn key_candidates(keys: &[u8], want: u8) -> u64 {
    let mut block = [if want == 0xFF { 0xFE } else { 0xFF }; BLOCK];
    let n = keys.len().min(BLOCK);
    block[..n].copy_from_slice(&keys[..n]);
    mask_of(&block, |key| (key == want) | (key == 0))
}

impl Inner {
    /// The rules' keys, at the arena's end (views without an index, of `KEYED_MIN_RULES` or
    /// more rules).
    #[inline]
    fn keys(&self) -> &[u8] {
        let start = self.arena.len().saturating_sub(self.rules.len());
        self.arena.get(start..).unwrap_or_default()
    }

    /// Whether `rule` matches the subject's `path`: the hot loop of every check, kept small. A
    /// rule without `*` is a length test and an inline prefix compare; the rarer `*` rules go
    /// out of line.
    #[inline(always)]
    fn hits(&self, rule: &CompiledRule, path: &[u8], subject: &mut Subject<'_>) -> bool {
        // A rule keyed by a second byte matches only paths with that second byte.
        let key = rule.key();
        if key != 0 && Some(&key) != path.get(1) {
            return false;
        }
        let (start, len) = (rule.start as usize, rule.len() as usize);
        let Some(body) = self.arena.get(start..start + len) else {
            return false;
        };
        if rule.meta & FLAG_GLOB == 0 {
            return (rule.meta & FLAG_ANCHORED == 0 || path.len() == len) && is_prefix(body, path);
        }
        // A `*` rule's literal prefix settles most of them within a byte or two: walked here,
        // before the call to the full match.
        for (i, &b) in body.iter().enumerate() {
            if b == b'*' {
                break;
            }
            if path.get(i) != Some(&b) {
                return false;
            }
        }
        self.glob_matches(rule, body, subject)
    }

    /// Whether a `*` rule matches; out of line so that the loop over rules stays small.
    #[inline(never)]
    fn glob_matches(&self, rule: &CompiledRule, body: &[u8], subject: &mut Subject<'_>) -> bool {
        let glob = self.globs.get((rule.meta >> META_SHIFT) as usize);
        glob.is_some() && glob_matches(rule.meta & FLAG_ANCHORED != 0, glob, body, subject)
    }

    /// Where rule `position`'s written form is in the arena.
    #[inline]
    fn written_span(&self, position: usize, rule: &CompiledRule) -> (u32, u32) {
        if rule.meta & FLAG_WRITTEN_ELSEWHERE == 0 {
            let (start, end) = rule.body();
            return (start, end + u32::from(rule.meta & FLAG_ANCHORED != 0));
        }
        let position = position as u32;
        match self.written.binary_search_by_key(&position, |&(p, _, _)| p) {
            Ok(i) => (self.written[i].1, self.written[i].2),
            // Every rule with the flag is listed; an empty span would only hide the pattern.
            Err(_) => (rule.start, rule.start),
        }
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
            // Compared as given (spec section 3): no reduction to a product token here.
            let token = agent.as_ref();
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
        let rules = groups.iter().flat_map(|g| g.rules()).map(|r| {
            (
                r.line,
                r.kind,
                Cow::Borrowed(r.pattern),
                r.written,
                ValueHints::UNKNOWN,
            )
        });
        // Values as written: usage preferences are bytes, not patterns.
        let records: Vec<_> = robots
            .records_before_groups()
            .filter(|r| is_global_record(r.key))
            .chain(groups.iter().flat_map(|g| g.records()))
            .filter(|r| is_kept_key(r.key))
            .map(|r| (r.line, r.key, r.written))
            .collect();
        let count = groups.iter().map(|g| g.rules().len()).sum();
        Scratch::with(|scratch| {
            let expected = (count, count * 32);
            Matcher::compile(selection, rules, &records, expected, &mut scratch.compile)
        })
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
    /// most 64 KiB in all), which saves their allocations.
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
        let names: Vec<S> = agents.into_iter().collect();
        if names.len() > 64 {
            // Group membership is tracked in a 64-bit mask; more names take the general path.
            let tokens: Vec<&str> = names.iter().map(|a| a.as_ref()).collect();
            return RobotsTxt::parse(body).matcher_for(&tokens);
        }
        Scratch::with(|scratch| Matcher::from_body_with(body, &names, scratch))
    }

    /// [`Matcher::from_body`] for at most 64 names, with this thread's [`Scratch`].
    fn from_body_with<S: AsRef<str>>(body: &[u8], names: &[S], scratch: &mut Scratch) -> Matcher {
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
        for (line, event) in events(body) {
            match event {
                Event::UserAgent {
                    value,
                    starts_group,
                } => {
                    if starts_group {
                        groups.push((0, false));
                    }
                    let Some((mask, global)) = groups.last_mut() else {
                        continue;
                    };
                    if is_global_agent(value) {
                        *global = true;
                    } else {
                        let token = product_token_bytes(value);
                        for (i, t) in names.iter().map(AsRef::as_ref).enumerate() {
                            if token.eq_ignore_ascii_case(t.as_bytes()) {
                                *mask |= 1 << i;
                            }
                        }
                    }
                }
                Event::Rule {
                    kind,
                    value,
                    in_group: true,
                    hints,
                } => {
                    // Only rules of groups that may apply are kept.
                    if let Some(&(mask, global)) = groups.last()
                        && (mask != 0 || global)
                    {
                        kept.push(KeptRule {
                            start: start_of(value),
                            // A value of 4 GiB or more is longer than a view takes anyway.
                            len: u32::try_from(value.len()).unwrap_or(u32::MAX),
                            group: u32::try_from(groups.len() - 1).unwrap_or(u32::MAX),
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
        let bytes = kept.iter().map(|k| k.len as usize).sum::<usize>();
        let expected = (kept.len(), bytes + bytes / 4);
        Matcher::compile(selection, rules, &records, expected, compile)
    }

    /// Builds the view from the applicable rules `(line, kind, escaped pattern, as written,
    /// hints)` and records `(line, key, value)`, all in file order, with room for about the
    /// expected number of rules and bytes, in this thread's `scratch` (empty).
    fn compile<'r>(
        selection: Selection,
        applicable_rules: impl Iterator<Item = (u32, RuleKind, Cow<'r, [u8]>, &'r [u8], ValueHints)>,
        records: &[(u32, &'r [u8], &'r [u8])],
        (expected_rules, expected_bytes): (usize, usize),
        scratch: &mut CompileScratch,
    ) -> Matcher {
        let CompileScratch {
            pending: rules,
            spans,
            order,
            twins,
        } = scratch;
        // Empty already after `Scratch::with`; cleared so that nothing else need hold to it.
        rules.clear();
        spans.clear();
        order.clear();
        twins.clear();
        // Sized up front: growing these one rule at a time was a visible share of parse time.
        let mut arena: Vec<u8> = Vec::with_capacity(expected_bytes);
        // Per rule before sorting, in file order.
        rules.reserve(expected_rules);
        let mut glob_count = 0usize;
        let store = |arena: &mut Vec<u8>, bytes: &[u8]| {
            let start = arena.len() as u32;
            arena.extend_from_slice(bytes);
            (start, arena.len() as u32)
        };
        for (line, kind, pattern, written, hints) in applicable_rules {
            // Empty patterns (priority 0) never decide; patterns that start with neither `/` nor
            // `*` never match a path, which always starts with `/`.
            if !matches!(pattern.first(), Some(b'/' | b'*')) {
                continue;
            }
            // Offsets are u32: a view stops taking rules before its bytes would reach 4 GiB
            // (a rule stores at most its written form, its escaped form and a retry), or before
            // glob indices would overflow the bits left for them (or, never for a line of a file, a
            // pattern would be longer than its 24 bits of length).
            let needed = written.len() + 2 * pattern.len() + 1;
            if arena.len().saturating_add(needed) > u32::MAX as usize
                || glob_count >= (u32::MAX >> META_SHIFT) as usize
                || pattern.len() > LEN_MASK as usize
            {
                break;
            }
            let written_span = store(&mut arena, written);
            let mut add = |arena: &mut Vec<u8>, pattern: &[u8]| {
                // The `*` analysis waits for the sorted pass: twins never get one.
                let (body, anchored) = split_anchor(pattern);
                let is_glob = hints.may_have_star() && find_byte(b'*', body).is_some();
                // The written form doubles as the body when the body is its prefix (no escaping
                // changed it); the reported pattern is then the body plus any `$`.
                // Unescaped, the pattern *is* the written bytes: no need to compare them.
                let prefix = &written[..body.len().min(written.len())];
                let shares = std::ptr::eq(body, prefix) || body == prefix;
                let body_span = if shares {
                    (written_span.0, written_span.0 + body.len() as u32)
                } else {
                    store(arena, body)
                };
                let written_elsewhere = !(shares
                    && written_span.1 - written_span.0 == body.len() as u32 + u32::from(anchored));
                let mut meta = 0;
                if kind == RuleKind::Allow {
                    meta |= FLAG_ALLOW;
                }
                if anchored {
                    meta |= FLAG_ANCHORED;
                }
                if is_glob {
                    meta |= FLAG_GLOB;
                    glob_count += 1;
                }
                if written_elsewhere {
                    meta |= FLAG_WRITTEN_ELSEWHERE;
                }
                let key = match body {
                    [b'/', second, ..] if *second != b'*' => *second,
                    _ => 0,
                };
                let compiled = CompiledRule {
                    start: body_span.0,
                    len_key: (body_span.1 - body_span.0) | (u32::from(key) << 24),
                    line,
                    meta,
                };
                if written_elsewhere {
                    spans.push((rules.len() as u32, written_span.0, written_span.1));
                }
                rules.push(compiled);
            };
            // Google's index.html retry: an allow whose last segment starts with `/index.htm` is
            // tried again as everything up to that `/` plus `$`. Its priority is always lower than
            // the original's, so in priority order it only decides when the original does not match.
            let retry = if kind == RuleKind::Allow
                && let Some(slash) = rfind_byte(b'/', &pattern)
                && pattern[slash..].starts_with(b"/index.htm")
            {
                let mut retry = pattern[..=slash].to_vec();
                retry.push(b'$');
                Some(retry)
            } else {
                None
            };
            // One call site, so that `add` is inlined into the loop.
            for pattern in std::iter::once(&*pattern).chain(retry.as_deref()) {
                add(&mut arena, pattern);
            }
        }
        decision_order(rules.len(), |i| rules[i].rank(), order);
        // Twins: `*` rules with the same body and anchoring match the same paths, and they have
        // the same priority. In decision order the first of them decides whenever any of them
        // would; the others are never reached with a different answer, so they are dropped. A
        // crafted file repeats a costly pattern thousands of times (the hostile benchmarks);
        // hashing costs too, so only views with many `*` rules look for twins.
        let check_twins = glob_count >= TWIN_CHECK_MIN_GLOBS;
        let hasher = foldhash::fast::RandomState::default();
        if check_twins {
            // Room for every `*` rule up front: the table never grows while rules are added.
            twins.reserve(glob_count, |_| 0);
        }
        let mut written = Vec::new();
        let mut sorted: Vec<CompiledRule> = Vec::with_capacity(order.len());
        // `*` analyses in decision order too: a check reads them in that order.
        let mut globs: Vec<Glob> = Vec::with_capacity(glob_count);
        for &i in order.iter() {
            let mut rule = rules[i as usize];
            if rule.meta & FLAG_GLOB != 0 {
                let (start, end) = rule.body();
                let body = &arena[start as usize..end as usize];
                if check_twins {
                    let anchored = rule.meta & FLAG_ANCHORED != 0;
                    let hash = twin_hash(&hasher, body, anchored);
                    let twin_of = |&kept: &u32| {
                        sorted
                            .get(kept as usize)
                            .is_some_and(|other: &CompiledRule| {
                                let (start, end) = other.body();
                                (other.meta & FLAG_ANCHORED != 0) == anchored
                                    && arena.get(start as usize..end as usize) == Some(body)
                            })
                    };
                    if twins.find(hash, twin_of).is_some() {
                        continue;
                    }
                    // Never grows (reserved above), so positions are never hashed again.
                    twins.insert_unique(hash, sorted.len() as u32, |&kept| {
                        sorted.get(kept as usize).map_or(0, |other| {
                            let (start, end) = other.body();
                            let body = arena.get(start as usize..end as usize).unwrap_or_default();
                            twin_hash(&hasher, body, other.meta & FLAG_ANCHORED != 0)
                        })
                    });
                }
                // A body flagged as a glob has a `*`; were it not so, the rule is kept plain.
                match Glob::of(body) {
                    Some(glob) => {
                        rule.meta |= (globs.len() as u32) << META_SHIFT;
                        globs.push(glob);
                    }
                    None => rule.meta &= !FLAG_GLOB,
                }
            }
            if rule.meta & FLAG_WRITTEN_ELSEWHERE != 0
                && let Ok(k) = spans.binary_search_by_key(&i, |&(at, _, _)| at)
            {
                written.push((sorted.len() as u32, spans[k].1, spans[k].2));
            }
            sorted.push(rule);
        }
        let sorted: Box<[CompiledRule]> = sorted.into();

        let is = |key: &[u8], name: &str| key.eq_ignore_ascii_case(name.as_bytes());
        let crawl_delay = records
            .iter()
            .filter(|(_, key, _)| is(key, "crawl-delay"))
            .find_map(|&(line, _, value)| {
                parse_crawl_delay(value).map(|delay| CrawlDelay { delay, line })
            });
        let request_rate = records
            .iter()
            .filter(|(_, key, _)| is(key, "request-rate"))
            .find_map(|&(line, _, value)| RequestRate::parse(value).map(|rate| (rate, line)));
        let usage = UsageTable::build(
            records
                .iter()
                .filter_map(|&(line, key, value)| usage_kind(key).map(|kind| (line, kind, value))),
        );
        let extras =
            (crawl_delay.is_some() || request_rate.is_some() || usage.is_some()).then(|| {
                Box::new(Extras {
                    crawl_delay,
                    request_rate,
                    usage,
                })
            });
        let index = RuleIndex::build(&sorted, &globs, &arena);
        if index.is_none() && sorted.len() >= KEYED_MIN_RULES {
            arena.extend(sorted.iter().map(CompiledRule::key));
        }
        arena.shrink_to_fit();
        Matcher {
            inner: Arc::new(Inner {
                extras,
                index,
                selection,
                rules: sorted,
                globs: globs.into(),
                written: written.into(),
                arena: arena.into(),
            }),
        }
    }

    /// The view's bytes, which every [`MatchedRule::pattern`] it gives is a slice of (see
    /// [`Matcher::pattern_of`]).
    pub(crate) fn arena(&self) -> &[u8] {
        &self.inner.arena
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
            return with_leading_slash(path, |p| self.check_path(p));
        }
        let inner = &*self.inner;
        let mut subject = Subject::new(path);
        let mut hit = |rule: &CompiledRule| inner.hits(rule, path, &mut subject);
        let found = match &inner.index {
            None if inner.rules.len() < KEYED_MIN_RULES => {
                let mut found = None;
                for (position, rule) in inner.rules.iter().enumerate() {
                    if hit(rule) {
                        found = Some(position);
                        break;
                    }
                }
                found
            }
            None => {
                // The rules whose key allows the path, 64 at a time, in decision order.
                let want = path.get(1).copied().unwrap_or(0);
                let keys = inner.keys();
                let mut found = None;
                'blocks: for (block, keys) in keys.chunks(BLOCK).enumerate() {
                    let mut candidates = key_candidates(keys, want);
                    while candidates != 0 {
                        let position = block * BLOCK + candidates.trailing_zeros() as usize;
                        if inner.rules.get(position).is_some_and(&mut hit) {
                            found = Some(position);
                            break 'blocks;
                        }
                        candidates &= candidates - 1;
                    }
                }
                found
            }
            Some(index) => match &index.lists {
                Lists::Narrow(start, lists) => {
                    let (a, b) = index.candidates(start, lists, path);
                    first_hit(a, b, |i| inner.rules.get(i).is_some_and(&mut hit))
                }
                Lists::Wide(start, lists) => {
                    let (a, b) = index.candidates(start, lists, path);
                    first_hit(a, b, |i| inner.rules.get(i).is_some_and(&mut hit))
                }
            },
        };
        match found.and_then(|position| Some((position, inner.rules.get(position)?))) {
            Some((position, rule)) => {
                let (start, end) = inner.written_span(position, rule);
                Verdict {
                    allowed: rule.meta & FLAG_ALLOW != 0,
                    rule: Some(MatchedRule {
                        line: rule.line,
                        kind: rule.kind(),
                        pattern: &inner.arena[start as usize..end as usize],
                    }),
                }
            }
            None => Verdict {
                allowed: true,
                rule: None,
            },
        }
    }

    /// What the crawler may do with a URL: the crawl verdict and, when the URL may be fetched,
    /// the AI usage preferences robots.txt states for it (`Content-Usage`, `Content-Signal`;
    /// see [`crate::usage`]). Allocates nothing; a view without usage rules answers at the cost
    /// of [`Matcher::check_url`].
    ///
    /// ```
    /// use robots_core::{Preference, RobotsTxt};
    /// let robots = RobotsTxt::parse(b"User-agent: *\nContent-Usage: train-ai=n\nContent-Usage: /open/ train-ai=y\n");
    /// let bot = robots.matcher("FooBot");
    /// let usage = bot.usage("https://example.com/open/data.csv");
    /// assert!(usage.verdict.allowed);
    /// assert_eq!(usage.preferences.may_train_ai(), Preference::Yes);
    /// assert_eq!(usage.preferences.train_ai.line, Some(3));
    /// ```
    #[inline]
    pub fn usage(&self, url: &str) -> Usage<'_> {
        self.usage_path(path_of(url).as_bytes())
    }

    /// [`Matcher::usage`] for a path as produced by [`crate::path_of`].
    pub fn usage_path(&self, path: &[u8]) -> Usage<'_> {
        let verdict = self.check_path(path);
        let preferences = if verdict.allowed {
            self.preferences_path(path)
        } else {
            UsagePreferences::default()
        };
        Usage {
            verdict,
            preferences,
        }
    }

    /// The usage preferences for a path **without** the crawl check: for a caller that has
    /// just checked the path and found it allowed (preferences never apply to a disallowed
    /// URL; [`Matcher::usage_path`] does both).
    pub fn preferences_path(&self, path: &[u8]) -> UsagePreferences {
        let Some(table) = self.inner.extras.as_ref().and_then(|e| e.usage.as_ref()) else {
            return UsagePreferences::default();
        };
        if path.first() != Some(&b'/') {
            return with_leading_slash(path, |p| table.preferences(p));
        }
        table.preferences(path)
    }

    /// Whether any `Content-Usage` or `Content-Signal` line applies to this crawler.
    pub fn has_usage_rules(&self) -> bool {
        self.inner
            .extras
            .as_ref()
            .is_some_and(|e| e.usage.is_some())
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
        self.inner.extras.as_ref().and_then(|e| e.crawl_delay)
    }

    /// The first valid Request-rate of the applicable groups, with its line.
    pub fn request_rate(&self) -> Option<(RequestRate, u32)> {
        self.inner.extras.as_ref().and_then(|e| e.request_rate)
    }

    /// How many compiled rules the view holds (index.html retries count as rules; of `*` rules
    /// with the same body and anchoring, a view of 32 or more keeps only the first, as only it
    /// can decide).
    pub fn rule_count(&self) -> usize {
        self.inner.rules.len()
    }

    /// Approximate heap bytes held by this view (shared by all its clones).
    pub fn heap_bytes(&self) -> usize {
        let inner = &*self.inner;
        std::mem::size_of::<Inner>()
            + inner.rules.len() * std::mem::size_of::<CompiledRule>()
            + inner.globs.len() * std::mem::size_of::<Glob>()
            + inner.written.len() * std::mem::size_of::<(u32, u32, u32)>()
            + inner.index.as_ref().map_or(0, |i| i.heap_bytes())
            + inner.arena.len()
            + inner.extras.as_ref().map_or(0, |e| {
                std::mem::size_of::<Extras>() + e.usage.as_ref().map_or(0, |u| u.heap_bytes())
            })
            + match &inner.selection {
                Selection::Agent(token) => token.len(),
                _ => 0,
            }
    }
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

    /// One-off check: is `url` allowed for `agent`? Compile a [`Matcher`] to check many URLs.
    pub fn is_allowed(&self, agent: &str, url: &str) -> bool {
        self.matcher(agent).is_allowed(url)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Views without an index that scan their rules' keys (16 or more rules, more than one
        /// block of 64 for some): rules of every key kind (a literal second byte, `*` there,
        /// `/` alone) and paths of every kind (no second byte, one that no key has), same
        /// verdicts and lines as Google's.
        #[test]
        fn keyed_views_agree_with_google(
            rules in prop::collection::vec(
                ("(Allow|Disallow)", "/([ab*][ab/]{0,4}(\\*[ab])?)?\\$?"),
                16..140,
            ),
            path in "/[abc/]{0,8}",
        ) {
            let mut body = String::from("User-agent: *\n");
            for (kind, pattern) in &rules {
                body.push_str(&format!("{kind}: {pattern}\n"));
            }
            let matcher = Matcher::from_body(body.as_bytes(), ["FooBot"]);
            // Rules starting `/a`, `/b`, `/*` and `/` spread too little for an index.
            prop_assume!(matcher.inner.index.is_none());
            prop_assert!(matcher.inner.rules.len() < KEYED_MIN_RULES || !matcher.inner.keys().is_empty());
            let url = format!("https://example.com{path}");
            let ours = matcher.check_url(&url);
            let google = crate::reference::google_verdict(body.as_bytes(), &["FooBot"], &url);
            prop_assert_eq!((ours.allowed, ours.rule.map_or(0, |r| r.line)), google);
        }
    }

    /// What this thread's scratch holds between parses: (kept, pending) capacities in bytes.
    fn retained() -> (usize, usize) {
        let scratch = SCRATCH.take();
        let held = (
            scratch.kept.capacity() * std::mem::size_of::<KeptRule>(),
            scratch.compile.pending.capacity() * std::mem::size_of::<CompiledRule>(),
        );
        let compile = &scratch.compile;
        assert!(scratch.kept.is_empty() && compile.pending.is_empty() && compile.order.is_empty());
        assert!(compile.twins.is_empty());
        SCRATCH.set(scratch);
        held
    }

    /// A parse leaves its vectors empty for the next one on the thread, keeps them when small
    /// (no allocation next time), and drops them when they hold more than the budget.
    #[test]
    fn scratch_is_reused_empty_and_bounded() {
        let small = b"User-agent: *\nDisallow: /a\nAllow: /a/b\n";
        let view = Matcher::from_body(small, ["FooBot"]);
        let (kept, pending) = retained();
        assert!(
            kept > 0 && pending > 0,
            "small vectors are kept: {kept} {pending}"
        );
        assert_eq!(view.rule_count(), 2);

        // 60,000 rules: the lists outgrow the budget and are dropped.
        let mut big = String::from("User-agent: *\n");
        for i in 0..60_000 {
            big.push_str(&format!("Disallow: /{i}\n"));
        }
        let view = Matcher::from_body(big.as_bytes(), ["FooBot"]);
        assert_eq!(view.rule_count(), 60_000);
        let (kept, pending) = retained();
        assert!(kept <= Scratch::RETAINED_BYTES && pending <= Scratch::RETAINED_BYTES);
        assert_eq!(kept, 0, "an oversized list is not kept");

        // The twin table too is emptied, and a second parse finds the same twins.
        let mut twins = String::from("User-agent: *\n");
        for i in 0..40 {
            twins.push_str(&format!("Disallow: /*{}*x\n", i % 3));
        }
        for _ in 0..2 {
            assert_eq!(
                Matcher::from_body(twins.as_bytes(), ["FooBot"]).rule_count(),
                3
            );
            retained();
        }

        // Nothing of the big parse leaks into the next view on this thread.
        let view = Matcher::from_body(small, ["FooBot"]);
        assert_eq!(view.rule_count(), 2);
        assert!(view.is_allowed("/a/b/c") && !view.is_allowed("/a/x") && view.is_allowed("/1"));
        let robots = RobotsTxt::parse(small);
        assert_eq!(robots.matcher("FooBot").rule_count(), 2);
    }

    #[test]
    fn emptied_keeps_small_vectors_and_drops_large_ones() {
        let small: Vec<u32> = Vec::with_capacity(16);
        let small = emptied(small);
        assert!(small.is_empty() && small.capacity() >= 16);
        let mut large: Vec<u8> = vec![1; Scratch::RETAINED_BYTES + 1];
        large.push(2);
        assert_eq!(emptied(large).capacity(), 0);
    }

    #[test]
    fn key_candidates_pad_a_short_block_with_no_candidate() {
        assert_eq!(key_candidates(&[b'a', 0, b'b', b'a'], b'a'), 0b1011);
        assert_eq!(key_candidates(&[b'a', 0, b'b'], 0), 0b010);
        assert_eq!(key_candidates(&[0xFF, 0xFE], 0xFF), 0b01);
        assert_eq!(key_candidates(&[0xFE; 64], 0xFE), u64::MAX);
    }

    /// 40 `*` rules, only four distinct (body, anchoring): the view keeps the first of each in
    /// decision order, and that one reports — the allow of a twin pair, else the earliest line.
    #[test]
    fn twin_wildcard_rules_are_kept_once() {
        let mut body = String::from("User-agent: *\n");
        for i in 0..10 {
            body.push_str(&format!(
                "Disallow: /*.php$\nDisallow: /*x*y\nAllow: /*x*y\nDisallow: /*q*{}\n",
                i % 2
            ));
        }
        let view = Matcher::from_body(body.as_bytes(), ["FooBot"]);
        assert_eq!(view.rule_count(), 4);
        let verdict = view.check_path(b"/a.php");
        assert_eq!(
            (verdict.allowed, verdict.rule.map(|r| r.line)),
            (false, Some(2))
        );
        let verdict = view.check_path(b"/axy");
        assert_eq!(
            (verdict.allowed, verdict.rule.map(|r| r.line)),
            (true, Some(4))
        );
        let verdict = view.check_path(b"/q1");
        assert_eq!(
            verdict.rule.map(|r| (r.line, r.pattern)),
            Some((9, &b"/*q*1"[..]))
        );
        // Below the threshold every rule is kept.
        let few = Matcher::from_body(b"User-agent: *\nDisallow: /*a\nDisallow: /*a\n", ["FooBot"]);
        assert_eq!(few.rule_count(), 2);
    }

    /// The view of `body` for FooBot splits its index on byte position `at`, and its verdicts
    /// (with their lines) for `paths` are Google's.
    fn assert_index_at(body: &str, at: u32, paths: &[&str]) {
        let view = Matcher::from_body(body.as_bytes(), ["FooBot"]);
        assert_eq!(view.inner.index.as_ref().map(|i| i.at), Some(at));
        for path in paths {
            let ours = view.check_path(path.as_bytes());
            let google = crate::reference::google_verdict(body.as_bytes(), &["FooBot"], path);
            assert_eq!(
                (ours.allowed, ours.rule.map_or(0, |r| r.line)),
                google,
                "{path}"
            );
        }
    }

    /// Every rule starts with `/private`: the index splits on the digit after it (found on all
    /// 40 rules, and on a sample of 128 of 400), and the verdicts (with their lines) stay
    /// Google's.
    #[test]
    fn the_index_splits_on_the_position_that_separates_the_rules() {
        let mut many = String::from("User-agent: *\n");
        for j in 0..200 {
            let d = j % 10;
            many.push_str(&format!(
                "Disallow: /private{d}/{j}\nAllow: /private{d}/*.html$\n"
            ));
        }
        let paths = [
            "/private3/13",
            "/private3/130.html",
            "/private4/13",
            "/privateX",
        ];
        assert_index_at(&many, 8, &paths);

        let mut body = String::from("User-agent: *\n");
        for j in 0..20 {
            body.push_str(&format!(
                "Disallow: /private{j}/\nAllow: /private{j}/*.html$\n"
            ));
        }
        let paths = [
            "/",
            "/p",
            "/private",
            "/private1",
            "/private1/",
            "/private1/a.html",
            "/private12/x",
            "/private19/a.html?x",
            "/private7/b.html",
            "/blog/1",
            "/private2x/",
        ];
        assert_index_at(&body, 8, &paths);
    }
}
