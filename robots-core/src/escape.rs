//! Google's escaping of rule values (spec section 2): `%` and two hex digits get their digits
//! uppercased, every byte ≥ 0x80 becomes `%XX`; and whether a `%` starts an escape that this
//! changes, which the line scan records as a hint.

use std::borrow::Cow;

use crate::words::{first_in_words, splat, zero_bytes};

/// [`crate::directive::escape_pattern_hinted`] for a value that may have a `%` or a high byte.
#[inline(never)]
pub(crate) fn escape_pattern_scanned(value: &[u8]) -> Cow<'_, [u8]> {
    // Most values are plain ASCII, and most of the others' escapes are uppercase already: the
    // checks visit only the `%` signs, found a word at a time (escapes come every three bytes
    // in a path of them, where memchr's set-up per call cost more than the search).
    if value.is_ascii() {
        let mut from = 0;
        let lowercase_escape = loop {
            let rest = value.get(from..).unwrap_or_default();
            let Some(at) = first_in_words(rest, |word| zero_bytes(word ^ splat(b'%'))) else {
                break false;
            };
            let at = from + at;
            if starts_lowercase_escape(value, at) {
                break true;
            }
            from = at + 1;
        };
        if !lowercase_escape {
            return Cow::Borrowed(value);
        }
    }
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    // Each high byte becomes three: sized once (a path in Cyrillic is most of its bytes).
    let high = value.iter().filter(|&&b| b >= 0x80).count();
    let mut out = Vec::with_capacity(value.len() + 2 * high);
    let mut i = 0;
    while let Some(&b) = value.get(i) {
        if b == b'%'
            && let Some((h, l)) = hex_pair(value, i)
        {
            out.extend_from_slice(&[b'%', h.to_ascii_uppercase(), l.to_ascii_uppercase()]);
            i += 3;
        } else {
            if b >= 0x80 {
                out.extend_from_slice(&[b'%', HEX[usize::from(b >> 4)], HEX[usize::from(b & 0xF)]]);
            } else {
                out.push(b);
            }
            i += 1;
        }
    }
    Cow::Owned(out)
}

/// Whether the `%` at `at` of `text` starts an escape with a lowercase hex digit (`%2f`), which
/// escaping rewrites. Bytes past a value's end never make one: what follows a value on its line
/// (whitespace, `#`, NUL, a break) is no hex digit.
#[inline]
pub(crate) fn starts_lowercase_escape(text: &[u8], at: usize) -> bool {
    hex_pair(text, at).is_some_and(|(h, l)| is_lower(h) || is_lower(l))
}

fn hex_pair(value: &[u8], percent_at: usize) -> Option<(u8, u8)> {
    match value.get(percent_at + 1..percent_at + 3) {
        Some(&[h, l]) if h.is_ascii_hexdigit() && l.is_ascii_hexdigit() => Some((h, l)),
        _ => None,
    }
}

fn is_lower(b: u8) -> bool {
    b.is_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Google's escaping, a byte at a time, for the property below.
    fn escaped_byte_by_byte(value: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < value.len() {
            match (value[i], value.get(i + 1..i + 3)) {
                (b'%', Some(&[h, l])) if h.is_ascii_hexdigit() && l.is_ascii_hexdigit() => {
                    out.extend_from_slice(&[b'%', h.to_ascii_uppercase(), l.to_ascii_uppercase()]);
                    i += 3;
                }
                (b, _) if b >= 0x80 => {
                    out.extend_from_slice(format!("%{b:02X}").as_bytes());
                    i += 1;
                }
                (b, _) => {
                    out.push(b);
                    i += 1;
                }
            }
        }
        out
    }

    proptest! {
        #[test]
        fn escaping_agrees_with_a_byte_loop_and_borrows_when_nothing_changes(
            parts in proptest::collection::vec(
                prop_oneof![
                    Just(&b"%"[..]), Just(&b"%a"[..]),
                    Just(&b"%A"[..]), Just(&b"f"[..]),
                    Just(&b"9"[..]), Just(&b"g"[..]),
                    Just(&b"/"[..]), Just(&b"\xC3\xA9"[..]),
                    Just(&b"*"[..]),
                ],
                0..40,
            )
        ) {
            let value = parts.concat();
            let escaped = escape_pattern_scanned(&value);
            prop_assert_eq!(&*escaped, &escaped_byte_by_byte(&value)[..]);
            prop_assert_eq!(
                matches!(escaped, std::borrow::Cow::Borrowed(_)),
                *escaped == *value
            );
        }
    }

    #[test]
    fn escape_pattern_escapes_and_borrows() {
        assert_eq!(
            &*escape_pattern_scanned(b"/a%2fb/\xC3\xA9"),
            b"/a%2Fb/%C3%A9"
        );
        assert!(matches!(
            escape_pattern_scanned(b"/plain"),
            std::borrow::Cow::Borrowed(_)
        ));
    }
}
