//! The bootstrap's random numbers: Python's `random.Random(seed)` reproduced exactly, so that the
//! reference's published confidence intervals come out digit for digit from its own records.
//!
//! Python seeds an integer through MT19937's `init_by_array` with the integer's 32-bit words as the
//! key (`[0]` for seed 0); `choice(seq)` is `seq[_randbelow(len(seq))]`, and `_randbelow(n)` draws
//! `k = n.bit_length()` bits (`next_u32() >> (32 - k)`) until the value is below `n`.

/// Words of MT19937's state.
const N: usize = 624;
/// The twist's middle word offset.
const M: usize = 397;
const MATRIX_A: u32 = 0x9908_b0df;
const UPPER: u32 = 0x8000_0000;
const LOWER: u32 = 0x7fff_ffff;

/// MT19937's tempering of one state word into an output.
#[inline]
fn temper(mut y: u32) -> u32 {
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c_5680;
    y ^= (y << 15) & 0xefc6_0000;
    y ^ (y >> 18)
}

/// A Mersenne Twister stream that behaves like Python's `random.Random`.
///
/// The generator is MT19937 as its authors' reference code (and CPython's `_randommodule.c`)
/// writes it: the state is regenerated 624 words at a time. The reference tempers each word as it
/// is read; here the whole block is tempered when it is made (a loop the compiler vectorizes) and
/// [`PyRandom::fill_below`] reads it without a bounds check per word. It was `rand_mt`'s until
/// the bootstrap's draws were a sixth of a large report's time; the stream is the same, which a
/// test checks against `rand_mt` over many blocks and seeds.
#[derive(Debug, Clone)]
pub struct PyRandom {
    state: Box<[u32; N]>,
    /// The state's words tempered, read in order; regenerated with the state.
    block: Box<[u32; N]>,
    index: usize,
}

impl PyRandom {
    /// The generator `random.Random(seed)` builds: `init_by_array` with the seed's 32-bit words,
    /// least significant first (`[0]` for 0).
    pub fn new(seed: u64) -> Self {
        let mut key = vec![seed as u32];
        if seed >> 32 != 0 {
            key.push((seed >> 32) as u32);
        }
        PyRandom::with_key(&key)
    }

    /// MT19937's `init_by_array(key)`.
    fn with_key(key: &[u32]) -> Self {
        let mut mt = [0u32; N];
        mt[0] = 19_650_218;
        for i in 1..N {
            let prev = mt[i - 1];
            mt[i] = 1_812_433_253u32
                .wrapping_mul(prev ^ (prev >> 30))
                .wrapping_add(i as u32);
        }
        let (mut i, mut j) = (1usize, 0usize);
        for _ in 0..N.max(key.len()) {
            let prev = mt[i - 1];
            mt[i] = (mt[i] ^ (prev ^ (prev >> 30)).wrapping_mul(1_664_525))
                .wrapping_add(key[j])
                .wrapping_add(j as u32);
            i += 1;
            j += 1;
            if i >= N {
                mt[0] = mt[N - 1];
                i = 1;
            }
            if j >= key.len() {
                j = 0;
            }
        }
        for _ in 0..N - 1 {
            let prev = mt[i - 1];
            mt[i] =
                (mt[i] ^ (prev ^ (prev >> 30)).wrapping_mul(1_566_083_941)).wrapping_sub(i as u32);
            i += 1;
            if i >= N {
                mt[0] = mt[N - 1];
                i = 1;
            }
        }
        mt[0] = 0x8000_0000;
        PyRandom {
            state: Box::new(mt),
            block: Box::new([0; N]),
            index: N,
        }
    }

    /// Regenerates the 624 words of state (the twist).
    fn twist(&mut self) {
        let mt = &mut *self.state;
        let next = |upper: u32, lower: u32, far: u32| {
            let y = (upper & UPPER) | (lower & LOWER);
            far ^ (y >> 1) ^ ((y & 1).wrapping_neg() & MATRIX_A)
        };
        for i in 0..N - M {
            mt[i] = next(mt[i], mt[i + 1], mt[i + M]);
        }
        for i in N - M..N - 1 {
            mt[i] = next(mt[i], mt[i + 1], mt[i + M - N]);
        }
        mt[N - 1] = next(mt[N - 1], mt[0], mt[M - 1]);
        // Tempered all at once, word by word alike, rather than as each word is read.
        for (out, &word) in self.block.iter_mut().zip(mt.iter()) {
            *out = temper(word);
        }
        self.index = 0;
    }

    /// The next 32 raw bits (`getrandbits(32)`).
    #[inline]
    pub fn next_u32(&mut self) -> u32 {
        if self.index >= N {
            self.twist();
        }
        let y = self.block[self.index];
        self.index += 1;
        y
    }

    /// A uniform integer in `0..n` drawn as Python's `_randbelow` does; 0 when `n` is 0.
    #[inline]
    pub fn randbelow(&mut self, n: usize) -> usize {
        if n <= 1 {
            return 0;
        }
        let k = usize::BITS - n.leading_zeros();
        debug_assert!(k <= 32, "randbelow is only used for small populations");
        loop {
            let r = (self.next_u32() >> (32 - k)) as usize;
            if r < n {
                return r;
            }
        }
    }

    /// Fills `out` with `randbelow(n)` draws, in order (the same stream as calling
    /// [`PyRandom::randbelow`] once per slot); `n` must fit in a `u32`.
    pub fn fill_below(&mut self, n: usize, out: &mut [u32]) {
        if n <= 1 {
            out.fill(0);
            return;
        }
        let shift = 32 - (usize::BITS - n.leading_zeros());
        let n = n as u32;
        // Each value is written to the next slot, which moves on only when the value is kept:
        // about half the values above `n` are rejected, a branch no predictor can guess, so the
        // rejection is taken without one. The block's words are read in one run until it or `out`
        // is used up.
        let mut filled = 0;
        while filled < out.len() {
            if self.index >= N {
                self.twist();
            }
            let mut taken = 0;
            for &word in &self.block[self.index..] {
                if filled == out.len() {
                    break;
                }
                let r = word >> shift;
                out[filled] = r;
                filled += usize::from(r < n);
                taken += 1;
            }
            self.index += taken;
        }
    }

    /// A uniform float in [0, 1) drawn as Python's `random()` does (53 bits from two draws).
    pub fn random(&mut self) -> f64 {
        let a = f64::from(self.next_u32() >> 5);
        let b = f64::from(self.next_u32() >> 6);
        (a * 67_108_864.0 + b) / 9_007_199_254_740_992.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stream_is_rand_mts() {
        // Several regenerations of the state, for seeds of one and of two key words.
        for seed in [0u64, 1, 7, 12_345, u64::from(u32::MAX), 1 << 40, u64::MAX] {
            let mut key = vec![seed as u32];
            if seed >> 32 != 0 {
                key.push((seed >> 32) as u32);
            }
            let mut want = rand_mt::Mt::new_with_key(key);
            let mut got = PyRandom::new(seed);
            for i in 0..5_000 {
                assert_eq!(got.next_u32(), want.next_u32(), "seed {seed}, draw {i}");
            }
        }
    }

    #[test]
    fn fill_below_is_randbelow_per_slot() {
        for n in [1usize, 2, 3, 24, 48, 1000, 2400, 65_537] {
            let (mut a, mut b) = (PyRandom::new(3), PyRandom::new(3));
            let mut filled = vec![0u32; 3000];
            a.fill_below(n, &mut filled);
            let one_by_one: Vec<u32> = (0..3000).map(|_| b.randbelow(n) as u32).collect();
            assert_eq!(filled, one_by_one, "n = {n}");
            assert_eq!(a.next_u32(), b.next_u32());
        }
    }

    #[test]
    fn seed_zero_matches_python_getrandbits() {
        // python3 -c "import random; r = random.Random(0); print([r.getrandbits(32) for _ in range(5)])"
        let mut r = PyRandom::new(0);
        let got: Vec<u32> = (0..5).map(|_| r.next_u32()).collect();
        assert_eq!(
            got,
            [3626764237, 1654615998, 3255389356, 3823568514, 1806341205]
        );
    }

    #[test]
    fn randbelow_takes_the_top_bits_and_rejects() {
        // n = 24 has bit length 5: the first raw value 3626764237 >> 27 = 27 is rejected,
        // the second 1654615998 >> 27 = 12 is accepted; the third (24) is rejected again.
        let mut r = PyRandom::new(0);
        assert_eq!(r.randbelow(24), 12);
        // python3 -c "import random; r = random.Random(0); print([r.choice(range(24)) for _ in range(6)])"
        let mut r = PyRandom::new(0);
        let got: Vec<usize> = (0..6).map(|_| r.randbelow(24)).collect();
        assert_eq!(got, [12, 13, 1, 8, 16, 15]);
    }
}
