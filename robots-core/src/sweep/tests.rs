//! The sweep against the line splitter and the line parser, on every kind of line.

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
}
