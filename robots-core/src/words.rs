//! Byte searches a word (eight bytes) at a time, for the short values, keys and paths the
//! parser and the matcher search (hand-written: below 64 bytes they beat memchr's set-up).

/// The first position of `haystack` that `flags` marks, eight bytes at a time: `flags` maps a
/// word (little-endian) to the high bit of each byte that matches, the lowest one exact (as
/// [`zero_bytes`] gives them). The tail is one more word, overlapping bytes already read (they
/// had no match); only a haystack under eight bytes goes byte by byte.
#[inline(always)]
pub(crate) fn first_in_words(haystack: &[u8], flags: impl Fn(u64) -> u64) -> Option<usize> {
    let (words, rest) = haystack.as_chunks::<8>();
    for (i, word) in words.iter().enumerate() {
        let found = flags(u64::from_le_bytes(*word));
        if found != 0 {
            return Some(i * 8 + (found.trailing_zeros() / 8) as usize);
        }
    }
    if rest.is_empty() {
        return None;
    }
    let tail_start = haystack.len().checked_sub(8);
    match tail_start.and_then(|at| Some((at, haystack.get(at..)?.first_chunk::<8>()?))) {
        Some((at, tail)) => {
            let found = flags(u64::from_le_bytes(*tail));
            (found != 0).then(|| at + (found.trailing_zeros() / 8) as usize)
        }
        None => {
            let mut padded = [0u8; 8];
            padded[..rest.len()].copy_from_slice(rest);
            // Padding bytes are never reported: only flags below the rest's length count.
            let found = flags(u64::from_le_bytes(padded)) & (u64::MAX >> (64 - 8 * rest.len()));
            (found != 0).then(|| (found.trailing_zeros() / 8) as usize)
        }
    }
}

/// `b` in every byte of a word.
#[inline(always)]
pub(crate) const fn splat(b: u8) -> u64 {
    u64::from_le_bytes([b; 8])
}

/// The high bit of the lowest zero byte of `x` set, and 0 when it has none (higher bytes may
/// be flagged wrongly after a zero byte: only the lowest flag is exact, which is the one a
/// search for the first match reads).
#[inline(always)]
pub(crate) const fn zero_bytes(x: u64) -> u64 {
    x.wrapping_sub(splat(1)) & !x & splat(0x80)
}
