//! The bootstrap's random numbers: Python's `random.Random(seed)` reproduced exactly, so that the
//! reference's published confidence intervals come out digit for digit from its own records.
//!
//! Python seeds an integer through MT19937's `init_by_array` with the integer's 32-bit words as the
//! key (`[0]` for seed 0); `choice(seq)` is `seq[_randbelow(len(seq))]`, and `_randbelow(n)` draws
//! `k = n.bit_length()` bits (`next_u32() >> (32 - k)`) until the value is below `n`.

use rand_mt::Mt;

/// A Mersenne Twister stream that behaves like Python's `random.Random`.
#[derive(Debug, Clone)]
pub struct PyRandom {
    mt: Mt,
}

impl PyRandom {
    /// The generator `random.Random(seed)` builds: `init_by_array` with the seed's 32-bit words,
    /// least significant first (`[0]` for 0).
    pub fn new(seed: u64) -> Self {
        let mut key = vec![seed as u32];
        if seed >> 32 != 0 {
            key.push((seed >> 32) as u32);
        }
        PyRandom {
            mt: Mt::new_with_key(key),
        }
    }

    /// The next 32 raw bits (`getrandbits(32)`).
    pub fn next_u32(&mut self) -> u32 {
        self.mt.next_u32()
    }

    /// A uniform integer in `0..n` drawn as Python's `_randbelow` does; 0 when `n` is 0.
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
