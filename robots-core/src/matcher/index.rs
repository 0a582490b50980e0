//! The rule index of a big view: rules bucketed by the byte at the position that separates
//! them best, so that a check scans only the rules that can match its path.

use crate::pattern::Glob;
use crate::words::splat;

use super::rule::{CompiledRule, FLAG_GLOB, META_SHIFT};

/// Rules whose literal prefix has byte `x` at position `at` can only match paths with `x` there.
/// The index lists, for each byte, the rules of that bucket, and separately the rules that may
/// match any path (a literal prefix too short to reach `at`); both lists are in decision order,
/// so a check walks the two merged and stops at the first match, as the plain scan would.
/// `at` is the position (1 to 8) that splits the view's rules best: the second byte for most
/// files, a later one when every rule starts with the same directory (`/private0/`,
/// `/private1/`…).
#[derive(Debug)]
pub(super) struct RuleIndex {
    /// `lists[..anywhere]` are the rules in no bucket; `lists[anywhere..][start[b]..start[b + 1]]`
    /// the rules whose prefix has `b` at `at` (one allocation for both lists).
    pub(super) lists: Lists,
    pub(super) anywhere: u32,
    pub(super) at: u32,
}

/// Bucket starts and rule positions, two bytes each when the view has fewer than 65,536 rules
/// (nearly all do): the index then costs 514 bytes and 2 bytes a rule.
#[derive(Debug)]
pub(super) enum Lists {
    Narrow(Box<[u16; 257]>, Box<[u16]>),
    Wide(Box<[u32; 257]>, Box<[u32]>),
}

/// The first position in the merge of two ascending lists (decision order) for which `hit`
/// is true.
#[inline]
pub(super) fn first_hit<T: Copy + Ord + Into<u32>>(
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

/// For byte positions 1 to `N` of the rules' literal prefixes, in one pass over at most 255
/// rules (the counts are bytes: a small table to clear): the sum of the squared bucket sizes
/// per position (kept as they grow), and how many rules have no byte there.
pub(super) fn tally<'a, const N: usize>(
    rules: impl Iterator<Item = &'a CompiledRule>,
    prefix: impl Fn(&CompiledRule) -> &'a [u8],
) -> ([u64; N], [usize; N]) {
    let mut counts = [[0u8; 256]; N];
    let mut squares = [0u64; N];
    let mut anywhere = [0usize; N];
    for rule in rules {
        let prefix = prefix(rule);
        for (k, at) in (1..=N).enumerate() {
            match prefix.get(at) {
                Some(&b) => {
                    let count = &mut counts[k][usize::from(b)];
                    squares[k] += 2 * u64::from(*count) + 1;
                    *count = count.saturating_add(1);
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
    (squares, anywhere)
}

/// Bucket starts and rule positions in the index's integer type.
trait Position: Copy + Default + Ord + Into<u32> {
    fn of(value: usize) -> Self;
}

impl Position for u16 {
    fn of(value: usize) -> u16 {
        value as u16
    }
}

impl Position for u32 {
    fn of(value: usize) -> u32 {
        value as u32
    }
}

/// The bucket starts (`counts` made cumulative) and the two lists, in decision order: the
/// rules with no byte at `at` first, then the rules per byte.
fn lists<T: Position>(
    counts: &[u32; 257],
    (low, high): (usize, usize),
    anywhere_len: usize,
    positions: impl Iterator<Item = Option<u8>>,
) -> (Box<[T; 257]>, Box<[T]>) {
    // Only the bytes that occur (`low..=high`, a few dozen letters for most views) are walked;
    // the starts past them are all the total.
    let mut start = Box::new([T::default(); 257]);
    let mut fill = [0u32; 256];
    let mut total = 0u32;
    for b in low..=high {
        fill[b] = total;
        total += counts[b + 1];
        start[b + 1] = T::of(total as usize);
    }
    start[high + 1..].fill(T::of(total as usize));
    let mut lists = vec![T::default(); anywhere_len + total as usize];
    let (anywhere, by_byte) = lists.split_at_mut(anywhere_len);
    let mut next_anywhere = 0;
    for (i, byte) in positions.enumerate() {
        let slot = match byte {
            Some(b) => {
                let slot = &mut fill[usize::from(b)];
                *slot += 1;
                by_byte.get_mut(*slot as usize - 1)
            }
            None => {
                next_anywhere += 1;
                anywhere.get_mut(next_anywhere - 1)
            }
        };
        if let Some(slot) = slot {
            *slot = T::of(i);
        }
    }
    (start, lists.into())
}

impl RuleIndex {
    /// Views with fewer rules are scanned directly; the index would not pay for itself.
    const MIN_RULES: usize = 32;
    /// Byte positions tried: 1 to this (0 is always `/`).
    const POSITIONS: usize = 8;
    /// Rules the positions are scored on (at most 255: their counts are bytes). 32 choose as
    /// well as 128 did on the corpus (same check speed) and cost a quarter to count.
    const SAMPLE: usize = 32;

    pub(super) fn build(
        rules: &[CompiledRule],
        globs: &[Glob],
        arena: &[u8],
    ) -> Option<Box<RuleIndex>> {
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
        let (squares, anywhere) = tally::<{ RuleIndex::POSITIONS }>(sample, &prefix);
        let sampled = rules.len().div_ceil(step) as u64;
        let score = |k: usize| anywhere[k] as u64 * sampled + squares[k];
        // The first of the best, as positions are tried in order.
        let best = (0..RuleIndex::POSITIONS)
            .reduce(|best, k| if score(k) < score(best) { k } else { best })?;
        let at = best + 1;
        let byte_at = |r: &CompiledRule| prefix(r).get(at).copied();
        let mut counts = [0u32; 257];
        let (mut anywhere_len, mut largest, mut low, mut high) = (0, 0, 255, 0);
        for byte in rules.iter().map(byte_at) {
            match byte {
                Some(b) => {
                    let count = &mut counts[usize::from(b) + 1];
                    *count += 1;
                    largest = largest.max(*count as usize);
                    (low, high) = (low.min(usize::from(b)), high.max(usize::from(b)));
                }
                None => anywhere_len += 1,
            }
        }
        // An index that leaves most rules in one list saves a check nothing, and costs 2 bytes
        // a rule: not worth keeping (a file of `/1…`, `/2…` paths only has ten buckets).
        if (largest + anywhere_len) * 4 > rules.len() * 3 {
            return None;
        }
        let positions = rules.iter().map(byte_at);
        let lists = if rules.len() <= usize::from(u16::MAX) {
            // Starts are at most the number of rules: they fit too.
            let (start, lists) = self::lists::<u16>(&counts, (low, high), anywhere_len, positions);
            Lists::Narrow(start, lists)
        } else {
            let (start, lists) = self::lists::<u32>(&counts, (low, high), anywhere_len, positions);
            Lists::Wide(start, lists)
        };
        Some(Box::new(RuleIndex {
            lists,
            anywhere: anywhere_len as u32,
            at: at as u32,
        }))
    }

    /// The two candidate lists for a path.
    pub(super) fn candidates<'l, T: Copy + Into<u32>>(
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

    pub(super) fn heap_bytes(&self) -> usize {
        std::mem::size_of::<Self>()
            + match &self.lists {
                Lists::Narrow(_, l) => 257 * 2 + l.len() * 2,
                Lists::Wide(_, l) => 257 * 4 + l.len() * 4,
            }
    }
}

/// Views without an index keep their rules' keys from this many rules: a smaller view's rules
/// are a few cache lines, and its keys would only make it larger.
pub(super) const KEYED_MIN_RULES: usize = 16;

/// The high bit of byte `i` set when rule `i` of these eight may match a path whose second
/// byte is `want` (0: the path has none): its key is `want`, or 0 (any path). Eight keys in a
/// word, exactly: a view of 16 to 63 rules is one to eight words, where a 64-byte mask cost
/// more than the search it saved.
#[inline(always)]
pub(super) fn key_candidates(keys: [u8; 8], want: u8) -> u64 {
    let keys = u64::from_le_bytes(keys);
    exact_zero_bytes(keys ^ splat(want)) | exact_zero_bytes(keys)
}

/// The high bit of every zero byte of `x`, exactly: the low seven bits of each byte are added
/// to `0x7F` without a carry into the next byte.
#[inline(always)]
fn exact_zero_bytes(x: u64) -> u64 {
    const LOW: u64 = splat(0x7F);
    !(((x & LOW).wrapping_add(LOW)) | x | LOW)
}
