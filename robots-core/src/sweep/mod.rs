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

use crate::directive::{Scanned, Wanted, starts_lowercase_escape};
use crate::lines::{MAX_LINE_BYTES, strip_bom};
use crate::mask::{BLOCK, mask_of_any};

mod pass;
#[cfg(test)]
mod tests;

pub(crate) use pass::KeyHeads;

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
