//! Passing over lines a reader does not want: their ends found, their keys and values not read.
//! A parse for one crawler passes over the rest of a group that cannot apply to it, and over
//! every line whose key it never reads (comments, sitemaps, an HTML page served as robots.txt).

use super::{Sweep, of_block, specials_at};
use crate::directive::{KeyKind, classify_key, is_trim_space, trim_start};
use crate::mask::{BLOCK, mask_of_any};

/// The keys a reader wants, by their first two bytes (any case): a line whose text, after
/// leading whitespace, does not start with one of them holds none of those keys, whatever
/// follows (a key starts a line's text, and [`classify_key`] reads a key by its prefix).
#[derive(Debug)]
pub(crate) struct KeyHeads {
    /// Per first byte, a bit per second byte that may follow (the second byte OR-ed with 0x20,
    /// modulo 32: a test of a few instructions that passes every head in any case, and a few
    /// pairs that are not heads, which are then only read in full).
    second: [u32; 256],
}

impl KeyHeads {
    /// The heads of keys, each two ASCII letters (lowercase).
    pub(crate) const fn of(heads: &[[u8; 2]]) -> KeyHeads {
        let mut second = [0u32; 256];
        let mut i = 0;
        while i < heads.len() {
            let [first, next] = heads[i];
            let bit = 1 << ((next | 0x20) & 31);
            second[first.to_ascii_lowercase() as usize] |= bit;
            second[first.to_ascii_uppercase() as usize] |= bit;
            i += 1;
        }
        KeyHeads { second }
    }

    /// Whether a text starting with `first` and `second` may start with one of the heads.
    #[inline(always)]
    pub(crate) fn may_start(&self, first: u8, second: u8) -> bool {
        self.second[usize::from(first)] >> ((second | 0x20) & 31) & 1 != 0
    }

    /// Whether the line of `body` starting at `next` may hold one of the keys: its text starts
    /// with a head. An empty line does not.
    fn may_hold_key(&self, body: &[u8], next: usize) -> bool {
        match text_at(body, next) {
            [first, second, ..] => self.may_start(*first, *second),
            _ => false,
        }
    }
}

impl Sweep<'_> {
    /// Passes over the lines that cannot be user-agent lines, stopping before the first that
    /// may be one ([`may_start_user_agent`]) or at the end. Line numbers count the lines
    /// passed. A parse for one crawler calls this in a group that cannot apply to it: nothing
    /// before the next group can change its view, so those lines need only their ends found,
    /// not their keys and values read.
    #[inline]
    pub(crate) fn skip_to_user_agent(&mut self) {
        self.walk(pass_to_user_agent);
    }

    /// When the next line cannot hold a key of `heads` ([`KeyHeads`]), passes over it and the
    /// lines after it up to the first that may, or the end. Line numbers count the lines passed.
    /// An empty line next is left to be read (it costs less read than passed).
    #[inline(always)]
    pub(crate) fn pass_lines_without(&mut self, heads: &KeyHeads) {
        // Tested in the loop that reads every line: two bytes and a table.
        let Some(&[first, second]) = self.body.get(self.next..).and_then(<[u8]>::first_chunk)
        else {
            return;
        };
        if heads.may_start(first, second) || matches!(first, b'\n' | b'\r') {
            return;
        }
        self.pass_lines_without_cold(heads);
    }

    #[inline(never)]
    fn pass_lines_without_cold(&mut self, heads: &KeyHeads) {
        self.walk(|body, walk| pass_lines(body, walk, |body, next| heads.may_hold_key(body, next)));
    }

    /// Moves the walk by `pass`.
    #[inline(always)]
    fn walk(&mut self, pass: impl FnOnce(&[u8], Walk) -> Walk) {
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
        } = pass(self.body, walk);
    }
}

/// Where a [`Sweep`] is: the fields a pass moves.
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
fn pass_to_user_agent(body: &[u8], walk: Walk) -> Walk {
    pass_lines(body, walk, may_start_user_agent)
}

/// Passes over lines from `walk` until one for which `stop` holds (given the body and where
/// the line starts), or the end.
#[inline(always)]
fn pass_lines(body: &[u8], mut walk: Walk, stop: impl Fn(&[u8], usize) -> bool) -> Walk {
    // Within the block the walk is in, its specials not taken yet are at hand: a group of a
    // rule or two (many files have dozens) ends there, and costs no new mask. Past it, a
    // mask of the line breaks alone is cheaper to make than the specials', and a line costs
    // one bit, not one per special; the walk's block and bits are then made again at the
    // line where the pass stops.
    let mut in_walk = true;
    let (mut block, mut bits) = (walk.block, walk.bits);
    while !walk.done && !stop(body, walk.next) {
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

/// The body from where the text of the line starting at `next` starts (after its leading
/// whitespace).
#[inline]
fn text_at(body: &[u8], next: usize) -> &[u8] {
    let mut rest = body.get(next..).unwrap_or_default();
    if rest.first().is_some_and(|&b| is_trim_space(b)) {
        // Indentation eight bytes at a time: an HTML page served as robots.txt is mostly
        // indentation, and its lines are passed over.
        while let Some((word, after)) = rest.split_first_chunk::<8>()
            && (*word == [b' '; 8] || *word == [b'\t'; 8])
        {
            rest = after;
        }
        rest = trim_start(rest);
    }
    rest
}

/// Whether the line of `body` starting at `next` may be a user-agent line: its text (after
/// leading whitespace) starts with a spelling of the key, as [`classify_key`] takes it.
#[inline]
fn may_start_user_agent(body: &[u8], next: usize) -> bool {
    let text = text_at(body, next);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::SweptLine;
    use proptest::prelude::*;

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

    /// Heads for the tests: `allow`, `disallow`, `user-agent`.
    const HEADS: KeyHeads = KeyHeads::of(&[*b"al", *b"di", *b"us"]);

    /// Reads the body passing, before each line, the lines [`Sweep::pass_lines_without`]
    /// passes: every line read is the plain sweep's line of the same number, and every plain
    /// line whose text starts with a head, in any case, is read.
    fn passes_like_the_plain_sweep(body: &[u8]) {
        let plain: Vec<SweptLine<'_>> = Sweep::new(body).collect();
        let mut sweep = Sweep::new(body);
        let mut read = Vec::new();
        loop {
            sweep.pass_lines_without(&HEADS);
            let Some(line) = sweep.next() else { break };
            read.push(line);
        }
        let shown = String::from_utf8_lossy(body);
        for line in &read {
            let number = line.number as usize;
            assert_eq!(Some(line), plain.get(number - 1), "{shown:?}");
        }
        for line in &plain {
            let text = crate::directive::trim_start(line.content);
            let headed = [&b"al"[..], b"di", b"us"]
                .iter()
                .any(|head| text.get(..2).is_some_and(|t| t.eq_ignore_ascii_case(head)));
            if headed {
                assert!(read.contains(line), "line {} of {shown:?}", line.number);
            }
        }
        assert_eq!(
            sweep.number(),
            plain.last().map_or(0, |l| l.number),
            "{shown:?}"
        );
    }

    #[test]
    fn heads_pass_every_case_of_theirs_and_few_other_pairs() {
        let mut others = 0;
        for first in 0..=255u8 {
            for second in 0..=255u8 {
                let pair = [first, second];
                let head = [&b"al"[..], b"di", b"us"]
                    .iter()
                    .any(|head| pair.eq_ignore_ascii_case(head));
                if head {
                    assert!(HEADS.may_start(first, second), "{pair:?}");
                } else if HEADS.may_start(first, second) {
                    others += 1;
                }
            }
        }
        // Per head and case of its first letter, the second bytes equal to its own modulo 32
        // that are not its letter: 6 of 256.
        assert_eq!(others, 3 * 2 * 6);
        for line in [
            &b"<html>"[..],
            b"# al",
            b"Sitemap: x",
            b"  ",
            b"a",
            b"	Disallow",
        ] {
            let [first, second] = [line[0], line.get(1).copied().unwrap_or(b'\n')];
            assert!(!HEADS.may_start(first, second), "{line:?}");
        }
    }

    #[test]
    fn passing_lines_without_heads_reads_every_line_with_one() {
        let body = b"# a\nSitemap: /s\n  Disallow: /a\n<html>\n\n   \n\tAllow: /b\r\nuser-agent: x\r\rhost: h\nDI: x\n\0Disallow: /c\nd\nAl";
        passes_like_the_plain_sweep(body);
        // Deep indentation, in spaces, tabs and both, before lines with heads and without.
        for indent in [&b" "[..], b"\t", b" \t", b"\x0b", b"\x0c "] {
            for depth in [1, 7, 8, 9, 40] {
                let pad = indent.repeat(depth);
                let mut body = Vec::new();
                for line in [
                    &b"<div>"[..],
                    b"Disallow: /x",
                    b"",
                    b"allow: /y",
                    b"class=a",
                ] {
                    body.extend_from_slice(&pad);
                    body.extend_from_slice(line);
                    body.push(b'\n');
                }
                passes_like_the_plain_sweep(&body);
            }
        }
        // Every alignment of the lines passed, and of a CRLF, across the blocks' edges.
        for pad in 0..130 {
            let mut body = b"<p>".to_vec();
            body.resize(body.len() + pad, b'x');
            body.extend_from_slice(b"\r\n# c:*%\xC3\r\rDisallow: /c\r\n\r\nSitemap: s\nAllow: /e");
            passes_like_the_plain_sweep(&body);
        }
    }

    #[test]
    fn an_html_page_is_passed_over_but_its_key_lines() {
        let mut body = b"<!DOCTYPE html>\n<html>\n".to_vec();
        for i in 0..200 {
            body.extend_from_slice(
                format!("    <a href=\"https://e.com/{i}#x\">caf\u{e9} %e2 *</a>\n").as_bytes(),
            );
        }
        body.extend_from_slice(b"  Disallow: /private\n</html>\n");
        passes_like_the_plain_sweep(&body);
        let mut sweep = Sweep::new(&body);
        sweep.pass_lines_without(&HEADS);
        assert_eq!(
            sweep.next().map(|l| (l.number, l.content)),
            Some((203, &b"  Disallow: /private"[..]))
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

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

        #[test]
        fn passes_like_the_plain_sweep_on_any_lines(
            parts in proptest::collection::vec(
                prop_oneof![
                    Just(&b"\n"[..]), Just(&b"\r"[..]), Just(&b"\r\n"[..]), Just(&b"\0"[..]),
                    Just(&b" "[..]), Just(&b"\t"[..]), Just(&b"        "[..]), Just(&b"a"[..]),
                    Just(&b"D"[..]), Just(&b"Disallow: /"[..]), Just(&b"al"[..]), Just(&b"US"[..]),
                    Just(&b"<a>"[..]), Just(&b"#"[..]), Just(&b"*"[..]), Just(&b"%"[..]),
                    Just(&b":"[..]), Just(&b"\xC3\xA9"[..]), Just(&b"x"[..]), Just(&b"Sitemap: "[..]),
                ],
                0..120,
            ),
        ) {
            passes_like_the_plain_sweep(&parts.concat());
        }
    }
}
