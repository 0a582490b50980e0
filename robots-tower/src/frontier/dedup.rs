//! De-duplication with memory fixed when the frontier is made: the last N URLs by hash, or a
//! Bloom filter. (A Bloom filter is a bit array and a few hashes: written here rather than
//! taken from a crate for so little.)

use std::collections::{HashSet, VecDeque};
use std::hash::BuildHasher;

use super::config::Dedup;

/// Hashes a URL twice (two seeds): the Bloom filter's double hashing and the exact set's key.
fn hashes(url: &str) -> (u64, u64) {
    const A: foldhash::quality::FixedState = foldhash::quality::FixedState::with_seed(0x5eed_0001);
    const B: foldhash::quality::FixedState = foldhash::quality::FixedState::with_seed(0x5eed_0002);
    (A.hash_one(url), B.hash_one(url))
}

/// The `k` bits of a URL in a filter of `m` bits (double hashing), as (word, mask).
fn bloom_bits(a: u64, b: u64, m: u64, k: u32) -> impl Iterator<Item = (usize, u64)> {
    // An odd step: an even one would probe only part of a filter of 2^j words.
    let b = b | 1;
    (0..u64::from(k)).map(move |i| {
        let bit = a.wrapping_add(i.wrapping_mul(b)) % m.max(1);
        ((bit / 64) as usize, 1u64 << (bit % 64))
    })
}

/// What a frontier remembers of the URLs pushed.
pub(super) enum Seen {
    Off,
    Exact {
        set: HashSet<u64, foldhash::fast::RandomState>,
        order: VecDeque<u64>,
        last: usize,
    },
    Bloom {
        bits: Vec<u64>,
        /// Bits in the filter (`bits.len() * 64`).
        m: u64,
        /// Hashes per URL.
        k: u32,
    },
}

impl Seen {
    pub(super) fn new(dedup: Dedup) -> Seen {
        match dedup {
            Dedup::Off => Seen::Off,
            Dedup::Exact { last } => {
                let last = last.max(1);
                // Allocated in full now: the memory is known from the start and never grows.
                let mut set = HashSet::with_hasher(foldhash::fast::RandomState::default());
                set.reserve(last);
                Seen::Exact {
                    set,
                    order: VecDeque::with_capacity(last),
                    last,
                }
            }
            Dedup::Bloom {
                expected,
                false_positive_rate,
            } => {
                let rate = if false_positive_rate.is_finite() {
                    false_positive_rate.clamp(1e-9, 0.5)
                } else {
                    0.01
                };
                let n = expected.max(1) as f64;
                let ln2 = std::f64::consts::LN_2;
                let m = (-n * rate.ln() / (ln2 * ln2)).ceil().max(64.0);
                // At most 2^36 bits (8 GiB): asking for more is asking for the impossible.
                let words = ((m / 64.0).ceil() as u64).min(1 << 30) as usize;
                let m = words as u64 * 64;
                let k = ((m as f64 / n) * ln2).round().clamp(1.0, 30.0) as u32;
                Seen::Bloom {
                    bits: vec![0; words],
                    m,
                    k,
                }
            }
        }
    }

    /// Whether `url` was remembered (a Bloom filter may say yes wrongly, at its rate).
    pub(super) fn contains(&self, url: &str) -> bool {
        match self {
            Seen::Off => false,
            Seen::Exact { set, .. } => set.contains(&hashes(url).0),
            Seen::Bloom { bits, m, k } => {
                let (a, b) = hashes(url);
                bloom_bits(a, b, *m, *k)
                    .all(|(word, mask)| bits.get(word).is_some_and(|w| w & mask != 0))
            }
        }
    }

    /// Remembers `url` (queued: a URL refused for room is not remembered, so that it can be
    /// pushed again).
    pub(super) fn remember(&mut self, url: &str) {
        match self {
            Seen::Off => {}
            Seen::Exact { set, order, last } => {
                let (key, _) = hashes(url);
                if !set.insert(key) {
                    return;
                }
                if order.len() >= *last
                    && let Some(oldest) = order.pop_front()
                {
                    set.remove(&oldest);
                }
                order.push_back(key);
            }
            Seen::Bloom { bits, m, k } => {
                let (a, b) = hashes(url);
                for (word, mask) in bloom_bits(a, b, *m, *k) {
                    if let Some(w) = bits.get_mut(word) {
                        *w |= mask;
                    }
                }
            }
        }
    }

    /// The memory it holds, in bytes.
    pub(super) fn bytes(&self) -> usize {
        match self {
            Seen::Off => 0,
            Seen::Exact { set, order, .. } => {
                // hashbrown: a slot and a control byte per bucket.
                set.capacity() * 8 * 8 / 7
                    + set.capacity() * 8 / 7
                    + order.capacity() * std::mem::size_of::<u64>()
            }
            Seen::Bloom { bits, .. } => bits.capacity() * 8,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl Seen {
        fn check_and_remember(&mut self, url: &str) -> bool {
            let seen = self.contains(url);
            self.remember(url);
            seen
        }
    }

    #[test]
    fn exact_remembers_the_last_n_and_forgets_older_ones() {
        let mut seen = Seen::new(Dedup::Exact { last: 2 });
        assert!(!seen.check_and_remember("http://a/1"));
        assert!(seen.check_and_remember("http://a/1"));
        assert!(!seen.check_and_remember("http://a/2"));
        assert!(!seen.check_and_remember("http://a/3"));
        // /1 was the oldest of three: forgotten.
        assert!(!seen.check_and_remember("http://a/1"));
        assert!(seen.check_and_remember("http://a/3"));
    }

    #[test]
    fn bloom_never_forgets_and_keeps_near_its_rate() {
        let mut seen = Seen::new(Dedup::Bloom {
            expected: 10_000,
            false_positive_rate: 0.01,
        });
        for i in 0..10_000 {
            seen.check_and_remember(&format!("http://a/{i}"));
        }
        assert!((0..10_000).all(|i| seen.check_and_remember(&format!("http://a/{i}"))));
        let false_positives = (0..10_000)
            .filter(|i| seen.contains(&format!("http://b/{i}")))
            .count();
        // 1% asked: about 100 of 10,000 new URLs.
        assert!(false_positives < 200, "{false_positives} false positives");
        // About 9.6 bits a URL at 1%.
        assert!(seen.bytes() <= 10_000 * 10 / 8 + 64, "{}", seen.bytes());
    }

    #[test]
    fn hostile_settings_neither_panic_nor_allocate_the_impossible() {
        for rate in [0.0, -1.0, f64::NAN, f64::INFINITY, 1.0] {
            let mut seen = Seen::new(Dedup::Bloom {
                expected: 100,
                false_positive_rate: rate,
            });
            assert!(!seen.check_and_remember("http://a/"));
            assert!(seen.check_and_remember("http://a/"));
        }
        let mut seen = Seen::new(Dedup::Exact { last: 0 });
        assert!(!seen.check_and_remember("http://a/"));
        assert!(seen.check_and_remember("http://a/"));
    }
}
