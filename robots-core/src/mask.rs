//! 64 bytes tested at once: which bytes of a block are among a few given ones (or at least
//! 0x80), as a bit mask. The parsers' tokenizer finds a body's special bytes with it, so it is
//! on the hot path of every parse (hand-written for that reason).
//!
//! Where the target has SSE2 (every x86-64 CPU), the block is compared sixteen bytes a step
//! through `safe_arch`'s safe wrappers, and each step's flags are packed by `movemask`, which no
//! loop compiles to: a parse is about 3% faster than with the portable version. Elsewhere a loop
//! the compiler vectorises sets a byte per flag, and a multiplication packs them.

/// Bytes tested at once.
pub(crate) const BLOCK: usize = 64;

/// Bit `i` set when `block[i]` is one of `bytes`, or, with `high`, is 0x80 or above.
#[inline(always)]
pub(crate) fn mask_of_any<const N: usize>(block: &[u8; BLOCK], bytes: [u8; N], high: bool) -> u64 {
    #[cfg(target_feature = "sse2")]
    return sse2::mask_of_any(block, bytes, high);
    #[cfg(not(target_feature = "sse2"))]
    return portable::mask_of_any(block, bytes, high);
}

#[cfg(target_feature = "sse2")]
mod sse2 {
    use super::BLOCK;
    use safe_arch::{
        bitor_m128i, cmp_eq_mask_i8_m128i, load_unaligned_m128i, move_mask_i8_m128i,
        set_splat_i8_m128i, zeroed_m128i,
    };

    #[inline(always)]
    pub(super) fn mask_of_any<const N: usize>(
        block: &[u8; BLOCK],
        bytes: [u8; N],
        high: bool,
    ) -> u64 {
        let (steps, _) = block.as_chunks::<16>();
        let mut mask = 0u64;
        for (i, step) in steps.iter().enumerate() {
            let v = load_unaligned_m128i(step);
            let is = |b: u8| cmp_eq_mask_i8_m128i(v, set_splat_i8_m128i(b as i8));
            // A byte of 0x80 or above has its high bit set already: OR-ing the bytes in flags
            // it for `movemask`, which reads only the high bits.
            let start = if high { v } else { zeroed_m128i() };
            // Written as a chain; the compiler ORs the independent compares pairwise.
            let hit = bytes
                .into_iter()
                .fold(start, |hit, b| bitor_m128i(hit, is(b)));
            // The 16 flags of the step, one bit each (the sign bit of an i32 never set).
            mask |= u64::from(move_mask_i8_m128i(hit) as u16) << (16 * i);
        }
        mask
    }
}

#[cfg(any(test, not(target_feature = "sse2")))]
mod portable {
    use super::BLOCK;

    /// The flags are one byte each (the vectorised loop), then packed eight at a time by a
    /// multiplication that gathers the low bit of each byte into the top byte.
    #[inline(always)]
    pub(super) fn mask_of_any<const N: usize>(
        block: &[u8; BLOCK],
        bytes: [u8; N],
        high: bool,
    ) -> u64 {
        let mut flags = [0u8; BLOCK];
        for (flag, &b) in flags.iter_mut().zip(block) {
            // Non-short-circuit `|`, so that the loop stays branch-free and vectorises.
            *flag = u8::from(
                bytes
                    .iter()
                    .fold(high & (b >= 0x80), |hit, &x| hit | (x == b)),
            );
        }
        let mut mask = 0u64;
        for (i, eight) in flags.as_chunks::<8>().0.iter().enumerate() {
            let packed = u64::from_le_bytes(*eight).wrapping_mul(0x0102_0408_1020_4080) >> 56;
            mask |= packed << (8 * i);
        }
        mask
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The mask as a byte-by-byte loop would have it.
    fn expected<const N: usize>(block: &[u8; BLOCK], bytes: [u8; N], high: bool) -> u64 {
        block.iter().enumerate().fold(0u64, |m, (i, &b)| {
            m | (u64::from(bytes.contains(&b) || (high && b >= 0x80)) << i)
        })
    }

    fn agrees<const N: usize>(block: &[u8; BLOCK], bytes: [u8; N], high: bool) {
        let want = expected(block, bytes, high);
        assert_eq!(mask_of_any(block, bytes, high), want);
        assert_eq!(portable::mask_of_any(block, bytes, high), want);
    }

    #[test]
    fn every_bit_is_its_byte() {
        let block: [u8; BLOCK] = std::array::from_fn(|i| (i * 37 % 251) as u8);
        for high in [false, true] {
            agrees(&block, [], high);
            agrees(&block, [0], high);
            agrees(&block, [0x80, 0xFF, 0x7F, b':'], high);
            agrees(&block, *b"\n\r\0#:%*", high);
        }
        assert_eq!(mask_of_any(&[0x80; BLOCK], [], true), u64::MAX);
        assert_eq!(mask_of_any(&[0x80; BLOCK], [], false), 0);
        assert_eq!(mask_of_any(&[b':'; BLOCK], [b':'], false), u64::MAX);
    }

    proptest! {
        #[test]
        fn agrees_with_a_byte_loop(
            block in proptest::collection::vec(any::<u8>(), BLOCK),
            bytes in any::<[u8; 3]>(),
            high in any::<bool>(),
        ) {
            let block: [u8; BLOCK] = block.try_into().unwrap_or([0; BLOCK]);
            agrees(&block, bytes, high);
        }
    }
}
