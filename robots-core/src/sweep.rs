//! The one-sweep tokenizer the parsers read a body through: line breaks, NUL, `#`, `:` and the
//! bytes values care about (`%`, `*`, bytes ≥ 0x80) are found 64 bytes at a time as a bit mask,
//! so a line costs a few bit operations instead of a search for its end plus a scan of its
//! content. Hand-written because it is the hot path of parsing (the masks are SIMD compares,
//! see [`crate::mask`]); it agrees with [`crate::lines::lines`] followed
//! by [`crate::directive::parse_line`] on every input, which a property test holds it to.

use crate::directive::Scanned;
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
    let rest = body.get(start..).unwrap_or_default();
    let mut padded = [b'a'; BLOCK];
    padded[..rest.len().min(BLOCK)].copy_from_slice(&rest[..rest.len().min(BLOCK)]);
    specials(&padded)
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
}

impl<'a> Iterator for Sweep<'a> {
    type Item = SweptLine<'a>;

    #[inline]
    fn next(&mut self) -> Option<SweptLine<'a>> {
        if self.done {
            return None;
        }
        let start = self.next;
        let cap = start.saturating_add(MAX_LINE_BYTES);
        let mut scanned = Scanned::default();
        // Still reading the content: before a comment, a NUL and the length cap.
        let mut reading = true;
        let mut nul = None;
        let end = loop {
            let Some(p) = self.take_special() else {
                break None;
            };
            match self.body[p] {
                b'\n' | b'\r' => break Some(p),
                0 => {
                    nul = nul.or(Some(p));
                    reading = false;
                }
                b if reading => {
                    reading = p < cap && scanned.take(p - start, b);
                }
                _ => {}
            }
        };
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

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

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
    }
}
