//! The one-sweep tokenizer the parsers read a body through: line breaks, NUL, `#`, `:` and the
//! bytes values care about (`%`, `*`, bytes ≥ 0x80) are found 64 bytes at a time as a bit mask,
//! so a line costs a few bit operations instead of a search for its end plus a scan of its
//! content. Hand-written because it is the hot path of parsing (the masks are SIMD compares,
//! see [`crate::mask`]); it agrees with [`crate::lines::lines`] followed
//! by [`crate::directive::parse_line`] on every input, which a property test holds it to.
//!
//! A line with many specials (an HTML page served as robots.txt, ASCII art in a comment, a path
//! in Cyrillic) is read *quietly* once [`QUIET_AFTER`] of its specials changed nothing: the
//! block's specials are then split by class, and only those that can still change the line are
//! visited (its end and first NUL always; while its content is read, a `#`, the first `:`, the
//! first `*` and byte ≥ 0x80, and each `%` until one starts a lowercase escape), and once only
//! its end can, memchr finds it. Taken one by one, such lines cost up to five times robotxt's
//! parse of them.

use crate::directive::{
    KeyKind, Scanned, Wanted, classify_key, is_trim_space, starts_lowercase_escape, trim_start,
};
use crate::lines::{MAX_LINE_BYTES, strip_bom};
use crate::mask::{BLOCK, mask_of_any};

/// Bit `i` set when `block[i]` is a byte the tokenizer stops at.
#[inline]
fn specials(block: &[u8; BLOCK]) -> u64 {
    mask_of_any(block, *b"\n\r\0#:%*", true)
}

/// The specials of the block of `body` starting at `start` (a short last block is padded with
/// bytes that are not special).
#[inline]
fn specials_at(body: &[u8], start: usize) -> u64 {
    match body.get(start..).and_then(<[u8]>::first_chunk::<BLOCK>) {
        Some(block) => specials(block),
        None => specials_of_last(body, start),
    }
}

/// [`specials_at`] for the last block, shorter than 64 bytes: once per body.
#[cold]
#[inline(never)]
fn specials_of_last(body: &[u8], start: usize) -> u64 {
    specials(&padded_last(body, start))
}

/// `f` of the block of `body` starting at `start`, a short last block padded (as
/// [`padded_last`] pads it).
#[inline(always)]
fn of_block<R>(body: &[u8], start: usize, f: impl Fn(&[u8; BLOCK]) -> R) -> R {
    match body.get(start..).and_then(<[u8]>::first_chunk::<BLOCK>) {
        Some(block) => f(block),
        None => f(&padded_last(body, start)),
    }
}

/// The last block of `body`, from `start`, padded with bytes that are not special.
fn padded_last(body: &[u8], start: usize) -> [u8; BLOCK] {
    let rest = body.get(start..).unwrap_or_default();
    let mut padded = [b'a'; BLOCK];
    padded[..rest.len().min(BLOCK)].copy_from_slice(&rest[..rest.len().min(BLOCK)]);
    padded
}

/// The idle specials (that changed nothing: a class seen already, a colon after the first, any
/// after the content's end) after which the rest of a line is read quietly. Most lines have
/// none and never pay for the masks by class. Counting every special instead, the hostile
/// benchmark's files of 15,000 rules with seven `*` each parsed 15% to 40% slower from the
/// eighth (every line paid for those masks to skip its last `*` only).
const QUIET_AFTER: u32 = 8;

/// A block's specials by class, for a line read quietly.
#[derive(Debug, Clone, Copy)]
struct Classes {
    breaks: u64,
    nul: u64,
    hash: u64,
    colon: u64,
    percent: u64,
    star: u64,
    high: u64,
}

impl Classes {
    /// The classes of the block of `body` starting at `start` (a short last block is padded, as
    /// in [`specials_at`]).
    fn at(body: &[u8], start: usize) -> Classes {
        of_block(body, start, |block| Classes {
            breaks: mask_of_any(block, *b"\n\r", false),
            nul: mask_of_any(block, [0], false),
            hash: mask_of_any(block, [b'#'], false),
            colon: mask_of_any(block, [b':'], false),
            percent: mask_of_any(block, [b'%'], false),
            star: mask_of_any(block, [b'*'], false),
            high: mask_of_any(block, [], true),
        })
    }

    /// Every special: what [`specials`] gives.
    fn all(&self) -> u64 {
        self.breaks | self.nul | self.hash | self.colon | self.percent | self.star | self.high
    }

    /// The specials that can still change a line whose content is being read: its end, a NUL,
    /// a `#`, and the classes still `wanted`.
    fn wanted(&self, wanted: Wanted) -> u64 {
        let pick = |mask: u64, on: bool| if on { mask } else { 0 };
        self.breaks
            | self.nul
            | self.hash
            | pick(self.colon, wanted.colon)
            | pick(self.percent, wanted.percent)
            | pick(self.star, wanted.star)
            | pick(self.high, wanted.high)
    }
}

/// The bits of a block above `offset` (0 to 63).
fn above(offset: usize) -> u64 {
    u64::MAX.checked_shl(offset as u32 + 1).unwrap_or(0)
}

/// The state of the line being read, from its start.
struct Reading {
    start: usize,
    /// Where the content is cut (see [`MAX_LINE_BYTES`]).
    cap: usize,
    scanned: Scanned,
    /// Still reading the content: before a comment, a NUL and the length cap.
    content: bool,
    nul: Option<usize>,
}

impl Reading {
    /// Takes in the special byte `b` at `at` of `body`, which is not a line break.
    #[inline(always)]
    fn take(&mut self, body: &[u8], at: usize, b: u8) {
        if b == 0 {
            self.nul = self.nul.or(Some(at));
            self.content = false;
        } else if self.content {
            self.content = at < self.cap && self.scanned.take(at - self.start, b);
            // The line as far as its content may reach: no hex pair straddles its end (see
            // `starts_lowercase_escape`), except at the cap.
            if b == b'%'
                && self.content
                && starts_lowercase_escape(&body[..self.cap.min(body.len())], at)
            {
                self.scanned.take_lowercase_escape();
            }
        }
    }
}

/// One line: its number, its content (up to a NUL, at most [`MAX_LINE_BYTES`]), and what the
/// scan of the content found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SweptLine<'a> {
    pub(crate) number: u32,
    pub(crate) content: &'a [u8],
    pub(crate) scanned: Scanned,
}

/// The lines of a body, as [`crate::lines::lines`] splits them, each with its scan.
pub(crate) struct Sweep<'a> {
    body: &'a [u8],
    /// Where the next line starts.
    next: usize,
    number: u32,
    done: bool,
    /// The block being walked, and its specials not taken yet.
    block: usize,
    bits: u64,
}

impl<'a> Sweep<'a> {
    pub(crate) fn new(body: &'a [u8]) -> Sweep<'a> {
        let body = strip_bom(body);
        Sweep {
            body,
            next: 0,
            number: 0,
            done: false,
            block: 0,
            bits: specials_at(body, 0),
        }
    }

    /// The next special byte (they are taken in order).
    #[inline]
    fn take_special(&mut self) -> Option<usize> {
        while self.bits == 0 {
            if self.block + BLOCK >= self.body.len() {
                return None;
            }
            self.block += BLOCK;
            self.bits = specials_at(self.body, self.block);
        }
        let at = self.block + self.bits.trailing_zeros() as usize;
        self.bits &= self.bits - 1;
        Some(at)
    }

    /// The rest of a line after its special at `at`, read quietly: the break that ends it, as
    /// [`Iterator::next`] would have found it taking every special, the line's state then, and
    /// the walk left just after that break. (The state goes by value: a reference would keep
    /// it in memory, not registers, in the loop that reads every line.)
    #[cold]
    #[inline(never)]
    fn rest_quietly(&mut self, at: usize, mut line: Reading) -> (Option<usize>, Reading) {
        let end = self.quietly(at, &mut line);
        (end, line)
    }

    fn quietly(&mut self, mut at: usize, line: &mut Reading) -> Option<usize> {
        let body = self.body;
        let mut classes = Classes::at(body, self.block);
        loop {
            if line.content {
                let wanted = line.scanned.still_wanted();
                let mut bits = classes.wanted(wanted) & above(at - self.block);
                while bits == 0 {
                    if self.block + BLOCK >= body.len() {
                        self.bits = 0;
                        return None;
                    }
                    self.block += BLOCK;
                    classes = Classes::at(body, self.block);
                    bits = classes.wanted(wanted);
                }
                at = self.block + bits.trailing_zeros() as usize;
            } else {
                // Only the line's end, or its first NUL, can matter now: memchr finds them
                // faster than masks.
                let rest = body.get(at + 1..).unwrap_or_default();
                let next = match line.nul {
                    None => memchr::memchr3(b'\n', b'\r', 0, rest),
                    Some(_) => memchr::memchr2(b'\n', b'\r', rest),
                };
                let Some(next) = next else {
                    // The line runs to the end of the body: nothing left to take.
                    (self.block, self.bits) = (body.len(), 0);
                    return None;
                };
                at += 1 + next;
                self.block = at - at % BLOCK;
                classes = Classes::at(body, self.block);
            }
            match body[at] {
                b'\n' | b'\r' => {
                    self.bits = classes.all() & above(at - self.block);
                    return Some(at);
                }
                b => line.take(body, at, b),
            }
        }
    }
}

impl Sweep<'_> {
    /// The number of the last line read or passed.
    pub(crate) fn number(&self) -> u32 {
        self.number
    }

    /// Passes over the lines that cannot be user-agent lines, stopping before the first that
    /// may be one ([`may_start_user_agent`]) or at the end. Line numbers count the lines
    /// passed. A parse for one crawler calls this in a group that cannot apply to it: nothing
    /// before the next group can change its view, so those lines need only their ends found,
    /// not their keys and values read.
    #[inline]
    pub(crate) fn skip_to_user_agent(&mut self) {
        // The walk's state goes to the pass and back by value: passing the sweep by reference
        // made the loop that reads every line keep it in memory (0.8% more instructions over
        // the corpus).
        let walk = Walk {
            next: self.next,
            number: self.number,
            done: self.done,
            block: self.block,
            bits: self.bits,
        };
        Walk {
            next: self.next,
            number: self.number,
            done: self.done,
            block: self.block,
            bits: self.bits,
        } = pass_to_user_agent(self.body, walk);
    }
}

/// Where a [`Sweep`] is: the fields [`pass_to_user_agent`] moves.
#[derive(Debug, Clone, Copy)]
struct Walk {
    next: usize,
    number: u32,
    done: bool,
    block: usize,
    bits: u64,
}

/// [`Sweep::skip_to_user_agent`] from `walk`.
#[inline(never)]
fn pass_to_user_agent(body: &[u8], mut walk: Walk) -> Walk {
    // Within the block the walk is in, its specials not taken yet are at hand: a group of a
    // rule or two (many files have dozens) ends there, and costs no new mask. Past it, a
    // mask of the line breaks alone is cheaper to make than the specials', and a line costs
    // one bit, not one per special; the walk's block and bits are then made again at the
    // line where the pass stops.
    let mut in_walk = true;
    let (mut block, mut bits) = (walk.block, walk.bits);
    while !walk.done && !may_start_user_agent(body, walk.next) {
        walk.number = walk.number.saturating_add(1);
        let p = loop {
            while bits == 0 {
                if block + BLOCK >= body.len() {
                    // The line runs to the end of the body.
                    walk.done = true;
                    return walk;
                }
                block += BLOCK;
                in_walk = false;
                // Without the LF of a CRLF split by the blocks' edge.
                bits = breaks_at(body, block) & !below(walk.next.saturating_sub(block));
            }
            let p = block + bits.trailing_zeros() as usize;
            bits &= bits - 1;
            if matches!(body[p], b'\n' | b'\r') {
                break p;
            }
        };
        let crlf = body[p] == b'\r' && body.get(p + 1) == Some(&b'\n');
        walk.next = p + 1 + usize::from(crlf);
        if crlf {
            // The LF's bit, when it is in this block.
            bits &= !below(walk.next - block);
        }
    }
    // (A CRLF at the end of the walk's block puts the next line in the block after it.)
    if in_walk && walk.next < block + BLOCK {
        walk.bits = bits;
    } else {
        walk.block = walk.next - walk.next % BLOCK;
        walk.bits = specials_at(body, walk.block) & !below(walk.next - walk.block);
    }
    walk
}

/// Whether the line of `body` starting at `next` may be a user-agent line: its text (after
/// leading whitespace) starts with a spelling of the key, as [`classify_key`] takes it.
#[inline]
fn may_start_user_agent(body: &[u8], next: usize) -> bool {
    let rest = body.get(next..).unwrap_or_default();
    let text = match rest.first() {
        Some(&b) if is_trim_space(b) => trim_start(rest),
        _ => rest,
    };
    // Most lines fail on their first byte.
    matches!(text.first(), Some(b'u' | b'U')) && classify_key(text).0 == KeyKind::UserAgent
}

/// The line breaks in the block of `body` starting at `start`.
#[inline]
fn breaks_at(body: &[u8], start: usize) -> u64 {
    of_block(body, start, |block| mask_of_any(block, *b"\n\r", false))
}

/// The bits of a block below `offset` (all of them from 64 on).
fn below(offset: usize) -> u64 {
    1u64.checked_shl(offset as u32)
        .map_or(u64::MAX, |bit| bit - 1)
}

impl<'a> Iterator for Sweep<'a> {
    type Item = SweptLine<'a>;

    #[inline]
    fn next(&mut self) -> Option<SweptLine<'a>> {
        if self.done {
            return None;
        }
        let start = self.next;
        let mut line = Reading {
            start,
            cap: start.saturating_add(MAX_LINE_BYTES),
            scanned: Scanned::default(),
            content: true,
            nul: None,
        };
        // Specials that changed nothing (a class seen already, a colon after the first, any
        // after the content's end).
        let mut idle = 0u32;
        let end = loop {
            let Some(p) = self.take_special() else {
                break None;
            };
            let seen = line.scanned.seen;
            match self.body[p] {
                b'\n' | b'\r' => break Some(p),
                b => line.take(self.body, p, b),
            }
            idle += u32::from(line.scanned.seen == seen);
            if idle >= QUIET_AFTER {
                let (end, read) = self.rest_quietly(p, line);
                line = read;
                break end;
            }
        };
        let Reading {
            cap, scanned, nul, ..
        } = line;
        let raw_end = match end {
            Some(end) => {
                // An LF directly after a CR belongs to the same break (it is the next special).
                let crlf = self.body[end] == b'\r' && self.body.get(end + 1) == Some(&b'\n');
                if crlf {
                    self.take_special();
                }
                self.next = end + 1 + usize::from(crlf);
                end
            }
            None => {
                self.done = true;
                self.body.len()
            }
        };
        let content_end = nul.unwrap_or(raw_end).min(cap);
        self.number = self.number.saturating_add(1);
        Some(SweptLine {
            number: self.number,
            content: self.body.get(start..content_end).unwrap_or_default(),
            scanned,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::directive::{parse_line, parse_scanned};
    use crate::lines::lines;
    use proptest::prelude::*;

    /// The sweep's lines and their parse, against the line splitter and the line parser.
    fn agrees(body: &[u8]) {
        let swept: Vec<_> = Sweep::new(body)
            .map(|l| (l.number, l.content, parse_scanned(l.content, l.scanned)))
            .collect();
        let reference: Vec<_> = lines(body)
            .map(|l| (l.number, l.content, parse_line(l.content)))
            .collect();
        assert_eq!(swept, reference, "{:?}", String::from_utf8_lossy(body));
    }

    /// Reads `before` lines, passes over lines with [`Sweep::skip_to_user_agent`], and reads the
    /// rest: the lines read after the pass are the plain sweep's from the first line after
    /// `before` whose content starts with a spelling of the user-agent key, with the same
    /// numbers.
    fn skips_like_the_plain_sweep(body: &[u8], before: usize) {
        let plain: Vec<SweptLine<'_>> = Sweep::new(body).collect();
        let mut sweep = Sweep::new(body);
        let read: Vec<_> = sweep.by_ref().take(before).collect();
        assert_eq!(read[..], plain[..read.len()]);
        sweep.skip_to_user_agent();
        let rest: Vec<_> = sweep.collect();
        let may_be_user_agent = |l: &SweptLine<'_>| {
            let text = crate::directive::trim(l.content);
            [&b"user-agent"[..], b"useragent", b"user agent"]
                .iter()
                .any(|key| text.len() >= key.len() && text[..key.len()].eq_ignore_ascii_case(key))
        };
        let expected: Vec<_> = plain
            .iter()
            .skip(read.len())
            .skip_while(|l| !may_be_user_agent(l))
            .copied()
            .collect();
        assert_eq!(
            rest,
            expected,
            "{:?} after {before}",
            String::from_utf8_lossy(body)
        );
    }

    #[test]
    fn skipping_stops_at_a_line_that_may_be_a_user_agent() {
        let body = b"User-agent: a\nDisallow: /x*%e2\r\n\n  Allow: /u\rurl: x\nuser\nUser-ag\0ent: x\nuser-agen: y\n\t User-agent: b\n\0u\n \x0bUSERAGENT c\n# u\nuser agent: d";
        for before in 0..15 {
            skips_like_the_plain_sweep(body, before);
        }
        // The last line, after a break or not, and lines that pass the blocks' edges.
        skips_like_the_plain_sweep(b"User-agent: a\nDisallow: /\n", 2);
        skips_like_the_plain_sweep(b"User-agent: a\nDisallow: /", 1);
        let mut long = b"User-agent: a\nDisallow: /".to_vec();
        long.extend_from_slice(&[b'*'; 200]);
        long.extend_from_slice(b"\r\nAllow: /b\r\n user-agent: c\nDisallow: /d");
        for before in 0..4 {
            skips_like_the_plain_sweep(&long, before);
        }
        // Every alignment of a CRLF, a CR and a stopping line across the blocks' edges.
        for pad in 0..130 {
            let mut body = b"User-agent: a\nDisallow: /".to_vec();
            body.resize(body.len() + pad, b'x');
            body.extend_from_slice(
                b"\r\nAllow: /b\r\rDisallow: /c\r\n\r\nuser-agent: d\nAllow: /e",
            );
            for before in 1..4 {
                skips_like_the_plain_sweep(&body, before);
            }
        }
    }

    #[test]
    fn masks_have_a_bit_per_special_byte() {
        let mut block = [b'a'; BLOCK];
        for (i, b) in block.iter_mut().enumerate() {
            *b = b"\n\r\0#:%*\x80\xFFab/$ \t"[i * 7 % 15];
        }
        let expected = block.iter().enumerate().fold(0u64, |m, (i, &b)| {
            let special = matches!(b, b'\n' | b'\r' | 0 | b'#' | b':' | b'%' | b'*') || b >= 0x80;
            m | (u64::from(special) << i)
        });
        assert_eq!(specials(&block), expected);
        assert_eq!(specials(&[b'/'; BLOCK]), 0);
        assert_eq!(specials(&[b':'; BLOCK]), u64::MAX);
    }

    #[test]
    fn agrees_on_edges() {
        for body in [
            &b""[..],
            b"\n",
            b"\r\n",
            b"\r\r\n\n",
            b"a",
            b"\xEF\xBB\xBFUser-agent: *\nDisallow: /a",
            b"\xEF\xBBx",
            b"Disallow: /a#b:c\r\nAllow: /%e2*\x80$",
            b"Disallow: /a\0:b#c\nAllow /x",
            b"#:\n:#\n::\n\0\n",
            b"User-agent:  FooBot  \n  Disallow :/private/ # why\n",
        ] {
            agrees(body);
        }
        // Lines at, just below and just above the cap, with the separator and comment around it.
        for len in [MAX_LINE_BYTES - 1, MAX_LINE_BYTES, MAX_LINE_BYTES + 1] {
            for tail in [&b":x"[..], b"#x", b"\0x", b"*%\xC3"] {
                let mut body = b"Disallow: /".to_vec();
                body.resize(len, b'a');
                body.extend_from_slice(tail);
                body.extend_from_slice(b"\nAllow: /b\r");
                agrees(&body);
                let mut body = b"Disallow /".to_vec();
                body.resize(len - 1, b'a');
                body.extend_from_slice(tail);
                agrees(&body);
            }
        }
        // Every alignment of a break across the 64-byte blocks.
        for pad in 0..130 {
            let mut body = vec![b'x'; pad];
            body.extend_from_slice(b"\r\nAllow: /*a%20\r\rDisallow: /b#c\n");
            agrees(&body);
        }
    }

    /// Lines with more than [`QUIET_AFTER`] idle specials, read quietly from there: every class
    /// repeated after its first, a comment or a NUL then more specials, runs of NULs, and such
    /// lines across blocks, at the length cap and at the end of the body.
    #[test]
    fn agrees_on_lines_read_quietly() {
        let runs: [&[u8]; 9] = [
            b"\xD0\x9F",
            b"%d0%9F",
            b"*",
            b":",
            b"\0",
            b"#",
            b"\xE2\x96\x91 ",
            b"a:b%c*\xC3\xA9",
            b"\0\0#",
        ];
        for run in runs {
            for count in [4, 9, 40, 300] {
                for head in [&b"Disallow: /"[..], b"# ", b"Allow: /x\0", b"", b"key"] {
                    for tail in [&b"\nAllow: /b\r\nDisallow: /c*%e2\n"[..], b"\r", b""] {
                        let mut body = head.to_vec();
                        for _ in 0..count {
                            body.extend_from_slice(run);
                        }
                        body.extend_from_slice(tail);
                        agrees(&body);
                        // Shifted across the blocks' edges.
                        for pad in [1, 31, 63] {
                            let mut shifted = vec![b'x'; pad];
                            shifted.push(b'\n');
                            shifted.extend_from_slice(&body);
                            agrees(&shifted);
                        }
                    }
                }
            }
        }
        // Past the cap with specials of classes not seen yet after it, and one that is.
        for late in [&b":"[..], b"*", b"%", b"#", b"\0", b"\xC3"] {
            let mut body = b"Disallow: /".to_vec();
            while body.len() < MAX_LINE_BYTES + 200 {
                body.extend_from_slice(b"\xD0\x9Fa");
            }
            body.extend_from_slice(late);
            body.extend_from_slice(b"zz\r\nAllow: /%41\n");
            agrees(&body);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// Long lines of runs of specials: most are read quietly across several blocks.
        #[test]
        fn agrees_on_lines_of_many_specials(
            parts in proptest::collection::vec(
                (
                    prop_oneof![
                        Just(&b"\n"[..]), Just(&b"\r"[..]), Just(&b"\r\n"[..]), Just(&b"\0"[..]),
                        Just(&b"#"[..]), Just(&b":"[..]), Just(&b"%"[..]), Just(&b"*"[..]),
                        Just(&b"\xC3\xA9"[..]), Just(&b" "[..]), Just(&b"Disallow: /"[..]),
                        Just(&b"ab"[..]),
                    ],
                    1..40usize,
                ),
                0..40,
            )
        ) {
            let mut body = Vec::new();
            for (part, times) in parts {
                // Breaks stay single: a run of them is only many empty lines.
                let times = if part.iter().any(|b| matches!(b, b'\n' | b'\r')) { 1 } else { times };
                for _ in 0..times {
                    body.extend_from_slice(part);
                }
            }
            agrees(&body);
        }

        #[test]
        fn agrees_with_lines_and_parse_line(
            parts in proptest::collection::vec(
                prop_oneof![
                    Just(&b"\n"[..]), Just(&b"\r"[..]), Just(&b"\r\n"[..]), Just(&b"\0"[..]),
                    Just(&b"#"[..]), Just(&b":"[..]), Just(&b"%"[..]), Just(&b"*"[..]),
                    Just(&b" "[..]), Just(&b"\t"[..]), Just(&b"\xC3\xA9"[..]), Just(&b"\xEF\xBB\xBF"[..]),
                    Just(&b"User-agent"[..]), Just(&b"Disallow"[..]), Just(&b"allow"[..]),
                    Just(&b"/path"[..]), Just(&b"$"[..]), Just(&b"x"[..]),
                ],
                0..200,
            )
        ) {
            agrees(&parts.concat());
        }

        #[test]
        fn agrees_on_any_bytes(body in proptest::collection::vec(any::<u8>(), 0..400)) {
            agrees(&body);
        }

        #[test]
        fn skips_like_the_plain_sweep_on_any_lines(
            parts in proptest::collection::vec(
                prop_oneof![
                    Just(&b"\n"[..]), Just(&b"\r"[..]), Just(&b"\r\n"[..]), Just(&b"\0"[..]),
                    Just(&b" "[..]), Just(&b"\t"[..]), Just(&b"\x0b"[..]), Just(&b"u"[..]),
                    Just(&b"U"[..]), Just(&b"User-agent: "[..]), Just(&b"Disallow: /"[..]),
                    Just(&b"user"[..]), Just(&b"-"[..]), Just(&b"AGENT"[..]), Just(&b"agent"[..]),
                    Just(&b"#"[..]), Just(&b"*"[..]), Just(&b"%"[..]), Just(&b"\xC3\xA9"[..]),
                    Just(&b"x"[..]),
                ],
                0..120,
            ),
            before in 0..6usize,
        ) {
            skips_like_the_plain_sweep(&parts.concat(), before);
        }
    }
}
