//! 64 bytes tested at once without `unsafe`: a predicate over a fixed block, written as a loop
//! the compiler turns into SIMD compares, and its byte flags packed into a bit mask. The
//! parsers' tokenizer finds a body's special bytes with it.

/// Bytes tested at once.
pub(crate) const BLOCK: usize = 64;

/// Bit `i` set when `hit(block[i])`. The flags are one byte each (the vectorised loop), then
/// packed eight at a time by a multiplication that gathers the low bit of each byte into the
/// top byte.
#[inline(always)]
pub(crate) fn mask_of(block: &[u8; BLOCK], hit: impl Fn(u8) -> bool) -> u64 {
    let mut flags = [0u8; BLOCK];
    for (flag, &b) in flags.iter_mut().zip(block) {
        *flag = u8::from(hit(b));
    }
    let mut mask = 0u64;
    for (i, eight) in flags.as_chunks::<8>().0.iter().enumerate() {
        let packed = u64::from_le_bytes(*eight).wrapping_mul(0x0102_0408_1020_4080) >> 56;
        mask |= packed << (8 * i);
    }
    mask
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bit_is_its_byte() {
        let block: [u8; BLOCK] = std::array::from_fn(|i| (i * 37 % 251) as u8);
        for threshold in [0u8, 1, 100, 200, 255] {
            let expected = block
                .iter()
                .enumerate()
                .fold(0u64, |m, (i, &b)| m | (u64::from(b >= threshold) << i));
            assert_eq!(mask_of(&block, |b| b >= threshold), expected);
        }
        assert_eq!(mask_of(&block, |_| true), u64::MAX);
        assert_eq!(mask_of(&block, |_| false), 0);
    }
}
