//! Bytes to lines (spec section 1): BOM prefix, CR/LF/CRLF, the line-length cap, NUL.

use memchr::{memchr2, memchr3};

/// The longest line content kept, in bytes (2083 × 8 − 1, as in Google's library).
/// Bytes beyond it are dropped; the truncated line is still parsed.
pub const MAX_LINE_BYTES: usize = 2083 * 8 - 1;

const BOM: [u8; 3] = [0xEF, 0xBB, 0xBF];

/// One line of a robots.txt body, as the parser sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Line<'a> {
    /// 1-based line number; CR, LF and CRLF each end one line.
    pub number: u32,
    /// The content up to the first NUL byte, at most [`MAX_LINE_BYTES`] long.
    pub content: &'a [u8],
    /// The line was longer than [`MAX_LINE_BYTES`] and was cut.
    pub truncated: bool,
    /// A NUL byte ended the content early.
    pub has_nul: bool,
    /// The full line as in the file (before truncation and the NUL cut).
    pub raw: &'a [u8],
}

/// Splits a body into [`Line`]s exactly as Google's parser does.
pub fn lines(body: &[u8]) -> Lines<'_> {
    Lines {
        rest: strip_bom(body),
        number: 0,
        done: false,
    }
}

/// Skips the longest prefix of the UTF-8 byte order mark at offset 0 (1, 2 or 3 bytes).
pub(crate) fn strip_bom(body: &[u8]) -> &[u8] {
    let skip = body.iter().zip(BOM).take_while(|(b, m)| **b == *m).count();
    &body[skip..]
}

/// Iterator returned by [`lines`].
#[derive(Debug, Clone)]
pub struct Lines<'a> {
    rest: &'a [u8],
    number: u32,
    done: bool,
}

impl<'a> Iterator for Lines<'a> {
    type Item = Line<'a>;

    fn next(&mut self) -> Option<Line<'a>> {
        if self.done {
            return None;
        }
        // One scan finds the line end, and a NUL on the way if there is one.
        let mut nul = None;
        let end = match memchr3(b'\n', b'\r', 0, self.rest) {
            Some(at) if self.rest[at] == 0 => {
                nul = Some(at);
                memchr2(b'\n', b'\r', &self.rest[at..]).map(|n| at + n)
            }
            found => found,
        };
        let raw = match end {
            Some(end) => {
                let raw = &self.rest[..end];
                // An LF directly after a CR belongs to the same break.
                let crlf = self.rest[end] == b'\r' && self.rest.get(end + 1) == Some(&b'\n');
                self.rest = &self.rest[end + 1 + usize::from(crlf)..];
                raw
            }
            None => {
                self.done = true;
                self.rest
            }
        };
        self.number = self.number.saturating_add(1);
        let truncated = raw.len() > MAX_LINE_BYTES;
        let kept = &raw[..raw.len().min(MAX_LINE_BYTES)];
        let content = match nul {
            Some(at) if at < kept.len() => &kept[..at],
            _ => kept,
        };
        Some(Line {
            number: self.number,
            content,
            truncated,
            has_nul: nul.is_some_and(|at| at < kept.len()),
            raw,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn contents(body: &[u8]) -> Vec<&[u8]> {
        lines(body).map(|l| l.content).collect()
    }

    #[test]
    fn bom_prefixes_are_skipped_only_at_offset_zero() {
        assert_eq!(contents(b"\xEF\xBB\xBFab"), [b"ab"]);
        assert_eq!(contents(b"\xEF\xBBab"), [b"ab"]);
        assert_eq!(contents(b"\xEFab"), [b"ab"]);
        // The first byte that breaks the sequence ends BOM handling.
        assert_eq!(contents(b"\xEF\x11\xBFab"), [b"\x11\xBFab"]);
        // A second BOM is data.
        assert_eq!(contents(b"\xEF\xBB\xBF\xEF\xBB\xBFa"), [b"\xEF\xBB\xBFa"]);
        assert_eq!(contents(b"a\n\xEF\xBB\xBFb"), [&b"a"[..], b"\xEF\xBB\xBFb"]);
    }

    #[test]
    fn cr_lf_and_crlf_each_end_one_line() {
        assert_eq!(contents(b"a\nb\rc\r\nd"), [b"a", b"b", b"c", b"d"]);
        // \n\r is two breaks, \r\r\n two.
        assert_eq!(lines(b"a\n\rb").count(), 3);
        assert_eq!(lines(b"a\r\r\nb").count(), 3);
        // Line count = terminators + 1, even when the last line is empty.
        assert_eq!(lines(b"").count(), 1);
        assert_eq!(lines(b"a\n").count(), 2);
        assert_eq!(lines(b"\r\n\r\n").count(), 3);
        let numbers: Vec<u32> = lines(b"x\r\ny\n\nz").map(|l| l.number).collect();
        assert_eq!(numbers, [1, 2, 3, 4]);
    }

    #[test]
    fn long_lines_are_cut_and_flagged() {
        let mut body = vec![b'a'; MAX_LINE_BYTES + 10];
        body.extend_from_slice(b"\nb");
        let all: Vec<Line<'_>> = lines(&body).collect();
        assert_eq!(all[0].content.len(), MAX_LINE_BYTES);
        assert!(all[0].truncated);
        assert_eq!(all[0].raw.len(), MAX_LINE_BYTES + 10);
        assert_eq!(all[1].content, b"b");
        assert!(!all[1].truncated);
        let exact = vec![b'a'; MAX_LINE_BYTES];
        assert!(!lines(&exact).next().is_some_and(|l| l.truncated));
    }

    #[test]
    fn nul_ends_the_line_content() {
        let all: Vec<Line<'_>> = lines(b"Disallow: /a\0bc\nx").collect();
        assert_eq!(all[0].content, b"Disallow: /a");
        assert!(all[0].has_nul);
        assert_eq!(all[1].content, b"x");
    }

    #[test]
    fn lines_are_numbered_by_any_break() {
        let numbers: Vec<u32> = lines(b"a\r\nb\rc\n").map(|l| l.number).collect();
        assert_eq!(numbers, [1, 2, 3, 4]); // whatever follows the last break is a line too
    }
}
