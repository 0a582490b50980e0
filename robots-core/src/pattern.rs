//! Pattern matching (spec section 4): `*` matches any run of bytes, a trailing `$` anchors the
//! end, everything else is a literal byte. Matches are anchored at the path start and match a
//! prefix of the path.
//!
//! [`reference_matches`] is the spec's candidate-set algorithm, kept as the oracle.
//! [`Pattern`] is what checks use: literal segments placed greedily leftmost, which finds a match
//! exactly when one exists (each `*` may absorb anything, so the earliest placement of a segment
//! never rules out a later one). It never allocates and costs at most O(|path| × |pattern|).

use memchr::memmem;

use crate::directive::{find_byte, rfind_byte};
use crate::words::{splat, zero_bytes};

/// The spec's reference algorithm: a sorted set of candidate path positions, widened to every
/// later position by `*`. O(|path| × |pattern|). Slow but obviously right; used as the oracle.
pub fn reference_matches(pattern: &[u8], path: &[u8]) -> bool {
    let mut positions: Vec<usize> = vec![0];
    for (i, &p) in pattern.iter().enumerate() {
        if p == b'$' && i + 1 == pattern.len() {
            return positions.last() == Some(&path.len());
        }
        if p == b'*' {
            let first = positions[0];
            positions = (first..=path.len()).collect();
        } else {
            positions.retain(|&at| at < path.len() && path[at] == p);
            for at in &mut positions {
                *at += 1;
            }
            if positions.is_empty() {
                return false;
            }
        }
    }
    true
}

/// A pattern compiled for matching. Build one with [`Pattern::new`] from an escaped pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pattern {
    /// Pattern bytes without a trailing `$`; `*`s kept in place.
    body: Box<[u8]>,
    shape: Shape,
}

/// How a pattern body is matched; the body itself is stored by the owner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Shape {
    /// A trailing `$` was present: the match must end at the path's end.
    pub(crate) anchored: bool,
    /// Present when the body has a `*`.
    pub(crate) glob: Option<Glob>,
}

/// A body with `*`s: `first_star` ends the literal prefix, `last_star` starts the literal
/// suffix; what lies between is split on `*` at match time. For a body with more than one
/// `*`, `needs` holds every byte the pattern needs from its first `*` on (its literal prefix is
/// compared first), so a path lacking one is rejected without a scan (empty, and not
/// consulted, for one `*`). 32 bytes: a view keeps one per `*` rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Glob {
    first_star: u32,
    last_star: u32,
    min_len: u32,
    needs: Needs,
}

// The size the docs state: a view keeps one per `*` rule.
const _: () = assert!(std::mem::size_of::<Glob>() == 32);

/// The ASCII bytes a pattern needs, 128 bits. An escaped pattern is all ASCII (escaping writes
/// every byte ≥ 0x80 as `%XX`), so for a compiled view nothing is lost against a full byte set,
/// at half its size; a byte ≥ 0x80 (in a pattern not escaped) is left out, which only makes
/// the filter reject fewer paths, never a path that matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Needs([u64; 2]);

impl Needs {
    /// The ASCII bytes of `bytes`.
    #[cfg(test)]
    fn of(bytes: &[u8]) -> Needs {
        let mut needs = Needs::default();
        for &b in bytes {
            needs.insert(b);
        }
        needs
    }

    /// The ASCII bytes of a pattern's body (or a path) but `*`, and how many `*` it has, in
    /// one pass without a branch per byte: a compilation builds one per rule with several `*`,
    /// a check one for its path, and setting bits in memory one byte after another was a
    /// quarter of compiling a view full of them.
    fn of_pattern(body: &[u8]) -> (Needs, usize) {
        // Each byte's bit from a table: two loads and two ORs a byte (computing the bit was
        // vectorised into slower code, SSE2 having no variable shift).
        const BITS: [[u64; 2]; 256] = {
            let mut bits = [[0u64; 2]; 256];
            let mut b = 0;
            while b < 128 {
                bits[b][b / 64] = 1 << (b % 64);
                b += 1;
            }
            bits[b'*' as usize] = [0, 0];
            bits
        };
        let (mut low, mut high, mut stars) = (0u64, 0u64, 0usize);
        for &b in body {
            let [l, h] = BITS[usize::from(b)];
            low |= l;
            high |= h;
            stars += usize::from(b == b'*');
        }
        (Needs([low, high]), stars)
    }

    #[cfg(test)]
    #[inline]
    fn insert(&mut self, b: u8) {
        // Always taken for an escaped pattern, so the branch costs nothing.
        if let Some(word) = self.0.get_mut(usize::from(b >> 6)) {
            *word |= 1 << (b & 63);
        }
    }

    /// Whether every byte of `self` is in `set`.
    #[inline]
    fn is_within(&self, set: &Needs) -> bool {
        self.0[0] & !set.0[0] == 0 && self.0[1] & !set.0[1] == 0
    }
}

impl Glob {
    /// How many leading bytes of the body are literal (every match starts with them).
    pub(crate) fn literal_prefix_len(&self) -> usize {
        self.first_star as usize
    }
}

/// A path and what is learnt about it while it is checked against many patterns: the set of its
/// bytes (from the first wildcard rule on), and after a few wildcard scans, the first and last
/// position of each byte, which answer most single-byte searches with one lookup. All of it
/// lives on the stack.
#[derive(Debug)]
pub struct Subject<'p> {
    path: &'p [u8],
    /// The path's ASCII bytes (what `Needs` are compared with).
    bytes: Option<Needs>,
    scans: u32,
    /// Globs that asked for the byte set before it was built.
    asked: u32,
    positions: Option<Positions>,
}

/// `first[b]` and `last[b]`: 1 + the first and last position of byte `b`, 0 if absent.
#[derive(Debug)]
struct Positions {
    first: [u32; 256],
    last: [u32; 256],
}

impl<'p> Subject<'p> {
    /// Single-byte searches after which the position tables are built.
    const SCANS_BEFORE_TABLES: u32 = 16;
    /// Globs with a middle that are searched directly before the byte set is built.
    const ASKS_BEFORE_BYTE_SET: u32 = 2;

    /// Wraps a path for matching against many patterns.
    pub fn new(path: &'p [u8]) -> Subject<'p> {
        Subject {
            path,
            bytes: None,
            scans: 0,
            asked: 0,
            positions: None,
        }
    }

    /// Whether the path may have every byte of `needs`: after a few globs have asked, by the
    /// set of the path's bytes (built once per check). The set costs a pass over the path, more
    /// than the searches it saves a view with one or two such globs; a view with many pays it
    /// once and rejects most of them with it.
    fn may_have(&mut self, needs: &Needs) -> bool {
        if self.bytes.is_none() {
            self.asked = self.asked.saturating_add(1);
            if self.asked <= Self::ASKS_BEFORE_BYTE_SET {
                return true;
            }
        }
        let path = self.path;
        needs.is_within(self.bytes.get_or_insert_with(|| Needs::of_pattern(path).0))
    }

    /// The first position `>= at` and `< end` of byte `b`.
    fn find_byte_from(&mut self, b: u8, at: usize, end: usize) -> Option<usize> {
        if at >= end {
            return None;
        }
        self.scans = self.scans.saturating_add(1);
        if self.positions.is_none()
            && self.scans >= Self::SCANS_BEFORE_TABLES
            && self.path.len() < u32::MAX as usize
        {
            let (mut first, mut last) = ([0u32; 256], [0u32; 256]);
            for (i, &c) in self.path.iter().enumerate().rev() {
                first[usize::from(c)] = i as u32 + 1;
            }
            for (i, &c) in self.path.iter().enumerate() {
                last[usize::from(c)] = i as u32 + 1;
            }
            self.positions = Some(Positions { first, last });
        }
        if let Some(p) = &self.positions {
            let (first, last) = (
                p.first[usize::from(b)] as usize,
                p.last[usize::from(b)] as usize,
            );
            if last <= at {
                return None; // absent, or only before `at`
            }
            if first > at {
                return (first - 1 < end).then_some(first - 1);
            }
        }
        memchr::memchr(b, &self.path[at..end]).map(|i| i + at)
    }
}

impl Glob {
    /// The `*` analysis of a body, `None` when it has no `*`.
    #[inline]
    pub(crate) fn of(body: &[u8]) -> Option<Glob> {
        let (first_star, last_star) = (find_byte(b'*', body)?, rfind_byte(b'*', body)?);
        let mut needs = Needs::default();
        let min_len = if first_star == last_star {
            // One `*`: the byte set is never consulted (see `glob_matches`).
            body.len() - 1
        } else {
            // The literal prefix is compared before the set is consulted: only the bytes
            // from the first `*` on are worth a bit (fewer bytes to fold in, same filter).
            let stars;
            (needs, stars) = Needs::of_pattern(&body[first_star..]);
            body.len() - stars
        };
        let min_len = u32::try_from(min_len).unwrap_or(u32::MAX);
        Some(Glob {
            first_star: first_star as u32,
            last_star: last_star as u32,
            min_len,
            needs,
        })
    }
}

/// An escaped pattern's body (without a trailing `$`), and whether it had the `$`.
#[inline]
pub(crate) fn split_anchor(pattern: &[u8]) -> (&[u8], bool) {
    match pattern {
        [rest @ .., b'$'] => (rest, true),
        _ => (pattern, false),
    }
}

impl Shape {
    /// Splits an escaped pattern into its body (without a trailing `$`) and its shape.
    pub(crate) fn of(pattern: &[u8]) -> (&[u8], Shape) {
        let (body, anchored) = split_anchor(pattern);
        let glob = Glob::of(body);
        (body, Shape { anchored, glob })
    }

    /// Whether `body` with this shape matches (a prefix of) the subject's path.
    #[inline]
    pub(crate) fn matches(&self, body: &[u8], subject: &mut Subject<'_>) -> bool {
        glob_matches(self.anchored, self.glob.as_ref(), body, subject)
    }
}

/// Whether `body` matches (a prefix of) the subject's path, with a trailing `$` (`anchored`) and
/// the `*` analysis `glob` (none when the body has no `*`). Shapes stored apart from their
/// bodies (as compiled views do, to stay small) call this directly.
#[inline]
pub(crate) fn glob_matches(
    anchored: bool,
    glob: Option<&Glob>,
    body: &[u8],
    subject: &mut Subject<'_>,
) -> bool {
    let path = subject.path;
    let Some(glob) = glob else {
        return if anchored {
            path.len() == body.len() && is_prefix(body, path)
        } else {
            is_prefix(body, path)
        };
    };
    let (first_star, last_star) = (glob.first_star as usize, glob.last_star as usize);
    if path.len() < glob.min_len as usize || !is_prefix(&body[..first_star], path) {
        return false;
    }
    let suffix = &body[last_star + 1..];
    // With `$` the last literal must sit at the very end; it bounds the middle.
    let end = if anchored {
        let Some(end) = path.len().checked_sub(suffix.len()) else {
            return false;
        };
        if !is_prefix(suffix, &path[end..]) {
            return false;
        }
        end
    } else {
        path.len()
    };
    // Only a glob with segments between its first and last `*` needs the byte-set filter: the
    // set costs a pass over the path (once per check), and a single `*` is settled by one
    // search for the suffix below.
    if first_star < last_star && !subject.may_have(&glob.needs) {
        return false;
    }
    let mut at = first_star;
    if first_star < last_star {
        // The literal segments between the first and the last `*`, each placed at its earliest
        // position from `at`. Hand-written rather than `split`: most segments of a long glob
        // are one byte, and when that byte is the next one in the path (a run of `*a*a*a`
        // against `aaa…`) it is placed without a search.
        let middle = &body[first_star + 1..last_star];
        let mut i = 0;
        while i < middle.len() {
            let b = middle[i];
            if b == b'*' {
                i += 1;
                continue;
            }
            if middle.get(i + 1).is_none_or(|&next| next == b'*') {
                if path.get(at) == Some(&b) && at < end {
                    at += 1;
                } else {
                    match subject.find_byte_from(b, at, end) {
                        Some(found) => at = found + 1,
                        None => return false,
                    }
                }
                i += 2;
                continue;
            }
            let segment_end = find_byte(b'*', &middle[i..]).map_or(middle.len(), |j| i + j);
            let segment = &middle[i..segment_end];
            match find(&path[at.min(end)..end], segment) {
                Some(found) => at += found + segment.len(),
                None => return false,
            }
            i = segment_end + 1;
        }
    }
    if anchored {
        at <= end
    } else {
        at <= end && find(&path[at..], suffix).is_some()
    }
}

/// Whether `body`, whose first `*` is at `star`, matches (a prefix of) `path`, with a trailing
/// `$` (`anchored`), read as it goes: for a scan, which tries each rule once per check, where
/// [`Glob::of`]'s analysis (the last `*`, the byte set) would cost more than the match. Each
/// literal segment is placed at its earliest position after the one before (greedy placement
/// is exact for `*`), the last one at the end when anchored; every search starts where the
/// last one ended, so a rule costs at most a pass over the path.
pub(crate) fn glob_matches_from(body: &[u8], star: usize, anchored: bool, path: &[u8]) -> bool {
    if !is_prefix(&body[..star], path) {
        return false;
    }
    let (mut rest, mut at) = (&body[star + 1..], star);
    loop {
        match find_byte(b'*', rest) {
            Some(next) => {
                let segment = &rest[..next];
                match find(&path[at..], segment) {
                    Some(found) => at += found + segment.len(),
                    None => return false,
                }
                rest = &rest[next + 1..];
            }
            // The suffix: at the very end with `$`, else anywhere after the segments.
            None if anchored => {
                return path
                    .len()
                    .checked_sub(rest.len())
                    .is_some_and(|end| end >= at && is_prefix(rest, &path[end..]));
            }
            None => return find(&path[at..], rest).is_some(),
        }
    }
}

impl Pattern {
    /// Compiles an escaped pattern (as stored by the parser).
    pub fn new(pattern: &[u8]) -> Pattern {
        let (body, shape) = Shape::of(pattern);
        Pattern {
            body: body.into(),
            shape,
        }
    }

    /// Whether the pattern matches (a prefix of) `path` (the tests' entry point).
    #[cfg(test)]
    pub fn matches(&self, path: &[u8]) -> bool {
        self.matches_subject(&mut Subject::new(path))
    }

    /// Heap bytes held (the pattern's bytes).
    pub fn heap_bytes(&self) -> usize {
        self.body.len()
    }

    /// [`Pattern::matches`] for a path checked against many patterns.
    #[inline]
    pub fn matches_subject(&self, subject: &mut Subject<'_>) -> bool {
        self.shape.matches(&self.body, subject)
    }
}

/// Whether `path` starts with `prefix`. Hand-written because it is the hot path of a check:
/// most patterns are 5–30 bytes and most rules fail within the first bytes, where a call to
/// `memcmp` costs more than the comparison. Compares 8 bytes at a time, the tail with one
/// overlapping load.
#[inline(always)]
pub(crate) fn is_prefix(prefix: &[u8], path: &[u8]) -> bool {
    let n = prefix.len();
    let Some(path) = path.get(..n) else {
        return false;
    };
    let word = |b: &[u8], at: usize| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&b[at..at + 8]);
        u64::from_le_bytes(w)
    };
    if n >= 8 {
        let mut at = 0;
        while at + 8 <= n {
            if word(prefix, at) != word(path, at) {
                return false;
            }
            at += 8;
        }
        at == n || word(prefix, n - 8) == word(path, n - 8)
    } else if n >= 4 {
        let half = |b: &[u8], at: usize| {
            let mut w = [0u8; 4];
            w.copy_from_slice(&b[at..at + 4]);
            u32::from_le_bytes(w)
        };
        half(prefix, 0) == half(path, 0) && half(prefix, n - 4) == half(path, n - 4)
    } else {
        // Up to three bytes (a glob's `/` before its first `*`): one by one, where a slice
        // comparison would call `memcmp`.
        prefix.iter().zip(path).all(|(a, b)| a == b)
    }
}

/// The first `needle` in `haystack`. A short haystack (a path, mostly) is searched for the
/// needle's first two bytes eight places at a time, with inline compares: a `memmem` searcher
/// costs more to set up than that search takes (at most 64 candidates, each compared in a few
/// loads). Hand-written: `*` rules search their segments in every path checked.
#[inline]
fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    match needle {
        [] => Some(0),
        [b] => find_byte(*b, haystack),
        [first, second, ..] if haystack.len() < 64 => {
            // Candidates are where the needle's first two bytes are, found eight at a time (a
            // path has many `/` or `.`, few `/f`); the last few starts one by one.
            let last_start = haystack.len().checked_sub(needle.len())?;
            let word = |at: usize| {
                let bytes = haystack.get(at..at + 8).unwrap_or_default();
                u64::from_le_bytes(bytes.try_into().unwrap_or_default())
            };
            let mut at = 0;
            while at <= last_start && at + 9 <= haystack.len() {
                // Every true pair is flagged (a flag may be false: compared below).
                let mut pairs = zero_bytes(word(at) ^ splat(*first))
                    & zero_bytes(word(at + 1) ^ splat(*second));
                while pairs != 0 {
                    let start = at + (pairs.trailing_zeros() / 8) as usize;
                    if start > last_start {
                        return None;
                    }
                    if is_prefix(needle, &haystack[start..]) {
                        return Some(start);
                    }
                    pairs &= pairs - 1;
                }
                at += 8;
            }
            while at <= last_start {
                if haystack[at] == *first && is_prefix(needle, &haystack[at..]) {
                    return Some(at);
                }
                at += 1;
            }
            None
        }
        _ => memmem::find(haystack, needle),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn both(pattern: &str, path: &str) -> bool {
        let reference = reference_matches(pattern.as_bytes(), path.as_bytes());
        let compiled = Pattern::new(pattern.as_bytes()).matches(path.as_bytes());
        assert_eq!(reference, compiled, "pattern {pattern:?} path {path:?}");
        compiled
    }

    #[test]
    fn a_glob_analysis_is_32_bytes() {
        // A view keeps one per `*` rule; a crafted file has tens of thousands.
        assert_eq!(std::mem::size_of::<Glob>(), 32);
    }

    #[test]
    fn the_byte_set_answers_after_a_few_globs_ask() {
        let mut subject = Subject::new(b"/abc");
        let needs_z = Needs::of(b"z");
        // The first asks are answered yes, without a pass over the path.
        for _ in 0..Subject::ASKS_BEFORE_BYTE_SET {
            assert!(subject.may_have(&needs_z));
            assert!(subject.bytes.is_none());
        }
        // Then the set answers: the path has no `z`, and has `c` and `a`.
        assert!(!subject.may_have(&needs_z));
        assert!(subject.may_have(&Needs::of(b"ca")));
        // A byte ≥ 0x80 is no requirement (escaped patterns have none): never a wrong no.
        assert!(subject.may_have(&Needs::of(b"a\xC3")));
        assert_eq!(Needs::of(b"a\xC3\xFF"), Needs::of(b"a"));
    }

    #[test]
    fn spec_examples() {
        assert!(both("/fish", "/fish.html"));
        assert!(both("/fish", "/fish/salmon.html"));
        assert!(!both("/fish", "/Fish.asp"));
        assert!(both("/fish*", "/fishheads"));
        assert!(both("/*.php", "/folder/filename.php?parameters"));
        assert!(both("/*.php$", "/filename.php"));
        assert!(!both("/*.php$", "/filename.php?parameters"));
        assert!(!both("/*.php$", "/filename.php5"));
        assert!(both("/fish*.php", "/fish/salmon.php"));
        assert!(!both("/fish*.php", "/Fish.PHP"));
        // `$` is literal except as the last byte.
        assert!(both("/a$b", "/a$b"));
        assert!(!both("/a$b", "/ab"));
        assert!(both("/a$$", "/a$"));
        assert!(both("/", "/anything"));
        assert!(both("*", "/anything"));
        assert!(both("", "/anything"));
        assert!(!both("$", "/"));
        assert!(both("/*$", "/x"));
        assert!(both("/**a**", "/ba"));
        assert!(!both("foo", "/foo"));
        assert!(both("/a*b*c$", "/abcbc"));
        assert!(!both("/a*bc*bc$", "/abc"));
        assert!(both("/a*a$", "/aa"));
        assert!(!both("/a*a$", "/a"));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]
        /// The registers' byte set is the set built one byte at a time, `*` left out.
        #[test]
        fn needs_of_a_pattern_are_its_ascii_bytes_but_stars(body in proptest::collection::vec(any::<u8>(), 0..40)) {
            let plain: Vec<u8> = body.iter().copied().filter(|&b| b != b'*').collect();
            let stars = body.len() - plain.len();
            prop_assert_eq!(Needs::of_pattern(&body), (Needs::of(&plain), stars));
        }

        #[test]
        fn is_prefix_agrees_with_starts_with(prefix in "[ab]{0,20}", path in "[ab]{0,24}") {
            prop_assert_eq!(
                is_prefix(prefix.as_bytes(), path.as_bytes()),
                path.as_bytes().starts_with(prefix.as_bytes())
            );
        }

        /// One subject checked against many patterns, as a view does: the byte set (built after
        /// a few globs ask) and the position tables (after 16 searches) change no answer.
        #[test]
        fn a_shared_subject_agrees_with_reference(
            patterns in prop::collection::vec("/[ab*]{0,3}\\*[abc][ab*]{0,4}\\$?", 1..40),
            path in "/[abc/]{0,30}",
        ) {
            let mut subject = Subject::new(path.as_bytes());
            for pattern in &patterns {
                let reference = reference_matches(pattern.as_bytes(), path.as_bytes());
                let compiled = Pattern::new(pattern.as_bytes()).matches_subject(&mut subject);
                prop_assert_eq!(reference, compiled, "pattern {}", pattern);
            }
        }

        #[test]
        fn compiled_agrees_with_reference(
            pattern in "[/ab*$]{0,10}",
            path in "/[/ab$*]{0,14}",
        ) {
            let reference = reference_matches(pattern.as_bytes(), path.as_bytes());
            let compiled = Pattern::new(pattern.as_bytes()).matches(path.as_bytes());
            prop_assert_eq!(reference, compiled);
        }

        /// The substring search is the first window equal to the needle, whatever the lengths
        /// (short haystacks by byte pairs, long ones by `memmem`) and however often the
        /// needle's first bytes repeat.
        #[test]
        fn find_is_the_first_equal_window(
            haystack in "[/ab]{0,80}",
            needle in "[/ab]{0,5}",
        ) {
            let (haystack, needle) = (haystack.as_bytes(), needle.as_bytes());
            let first = (0..=haystack.len())
                .find(|&i| haystack[i..].starts_with(needle));
            prop_assert_eq!(find(haystack, needle), first);
        }

        /// A scan's match, with no analysis made ahead, is the reference's.
        #[test]
        fn a_glob_read_as_it_goes_agrees_with_reference(
            pattern in "/[ab]{0,2}\\*[/ab*]{0,10}\\$?",
            path in "/[/ab$*]{0,14}",
        ) {
            let (body, anchored) = split_anchor(pattern.as_bytes());
            let star = find_byte(b'*', body).unwrap_or(body.len());
            prop_assert_eq!(
                glob_matches_from(body, star, anchored, path.as_bytes()),
                reference_matches(pattern.as_bytes(), path.as_bytes()),
                "pattern {}", pattern
            );
        }
    }

    #[test]
    fn pattern_new_matches_globs_and_anchors() {
        let p = Pattern::new(b"/a*b$");
        assert!(p.matches(b"/axxb") && !p.matches(b"/axxbc"));
    }

    #[test]
    fn reference_matches_examples() {
        assert!(reference_matches(b"/fish*.php", b"/fish/salmon.php?x"));
        assert!(!reference_matches(b"/*.php$", b"/index.php?x"));
    }
}
