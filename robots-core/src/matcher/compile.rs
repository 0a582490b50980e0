//! The kept rules compiled: escaped, packed into 16-byte [`CompiledRule`]s over one byte arena,
//! twin `*` rules dropped, and put in decision order (priority, allow first, line).

use std::sync::Arc;

use std::borrow::Cow;

use crate::directive::{ValueHints, find_byte, rfind_byte};
use crate::pattern::{Glob, split_anchor};
use crate::records::{RequestRate, parse_crawl_delay};
use crate::usage::{UsageTable, usage_kind};

use super::index::{KEYED_MIN_RULES, RuleIndex};
use super::rule::{
    CompiledRule, FLAG_ALLOW, FLAG_ANCHORED, FLAG_GLOB, FLAG_WRITTEN_ELSEWHERE, LEN_MASK,
    META_SHIFT,
};
use super::select::CompileScratch;
use super::{CrawlDelay, Extras, Inner, Matcher};
use crate::verdict::{RuleKind, Selection};

/// Views with at least this many `*` rules drop twins (same body, same anchoring).
pub(super) const TWIN_CHECK_MIN_GLOBS: usize = 32;

/// Hashes a `*` rule's body and anchoring for the twin check. Seeded per process
/// (`foldhash`): the bodies come from the file, so collisions must not be predictable.
pub(super) fn twin_hash(hasher: &foldhash::fast::RandomState, body: &[u8], anchored: bool) -> u64 {
    use std::hash::BuildHasher;
    hasher.hash_one((body, anchored))
}

/// Rule indices `0..len` by rank, highest first, file order kept among equals (rules come in
/// file order), written into `order` (cleared first). `max` is the highest rank, learnt as the
/// rules were made (a pass of its own was a visible share of ordering a big view). Ranks are
/// small (twice a pattern length), so a counting sort does it in linear time.
pub(super) fn decision_order(
    len: usize,
    max: u32,
    rank: impl Fn(usize) -> u32,
    order: &mut Vec<u32>,
) {
    /// Views of at most this many rules are sorted on the stack.
    const SMALL: usize = 32;
    order.clear();
    if len == 0 {
        return;
    }
    if len <= SMALL {
        // A few rules (most views): their ranks, computed once, sorted on the stack with the
        // index in the low half of each key (unique keys: the order of a stable sort).
        let mut keys = [0u64; SMALL];
        for (i, key) in keys.iter_mut().enumerate().take(len) {
            *key = (u64::from(max - rank(i)) << 32) | i as u64;
        }
        keys[..len].sort_unstable();
        order.extend(keys[..len].iter().map(|&key| key as u32));
        return;
    }
    order.extend(0..len as u32);
    if max > 1 << 13 {
        // A pattern of thousands of bytes: a sort beats a count table (and its allocation).
        // Unstable, on keys made unique by the index: no scratch buffer, the same order as a
        // stable sort.
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

impl Matcher {
    /// Builds the view from the applicable rules `(line, kind, escaped pattern, as written,
    /// hints)` and records `(line, key, value)`, all in file order, with room for about the
    /// expected number of rules and bytes, in this thread's `scratch` (empty).
    pub(super) fn compile<'r>(
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
        let mut max_rank = 0u32;
        let store = |arena: &mut Vec<u8>, bytes: &[u8]| {
            let start = arena.len() as u32;
            arena.extend_from_slice(bytes);
            (start, arena.len() as u32)
        };
        let mut escapes = false;
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
            escapes |= find_byte(b'%', &pattern).is_some();
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
                max_rank = max_rank.max(compiled.rank());
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
        decision_order(rules.len(), max_rank, |i| rules[i].rank(), order);
        // Twins: `*` rules with the same body and anchoring match the same paths, and they have
        // the same priority. In decision order the first of them decides whenever any of them
        // would; the others are never reached with a different answer, so they are dropped. A
        // crafted file repeats a costly pattern thousands of times (the hostile benchmarks);
        // hashing costs too, so only views with many `*` rules look for twins.
        let check_twins = glob_count >= TWIN_CHECK_MIN_GLOBS;
        // Seeded only when used: a seed costs a visible share of compiling a small view.
        let hasher = check_twins.then(foldhash::fast::RandomState::default);
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
                if let Some(hasher) = &hasher {
                    let anchored = rule.meta & FLAG_ANCHORED != 0;
                    let hash = twin_hash(hasher, body, anchored);
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
                            twin_hash(hasher, body, other.meta & FLAG_ANCHORED != 0)
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
                escapes,
            }),
        }
    }
}
