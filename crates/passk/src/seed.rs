//! Per-call seeds derived from (base seed, trial, turn, step), identical for every model so that
//! trials are paired across models. The encoding is decimal and invertible so that a reader of a
//! record (or the stub server) can tell which trial a call belongs to.

/// The parts a call seed is made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallSeed {
    /// Base seed of the run (0..=9_000_000).
    pub base: u32,
    /// Trial index (0..100).
    pub trial: u32,
    /// Customer turn (0..100).
    pub turn: u32,
    /// Model call within the turn (0..100).
    pub step: u32,
}

impl CallSeed {
    /// The seed sent in `options.seed`: `base*1_000_000 + trial*10_000 + turn*100 + step`.
    /// Parts beyond their range wrap (modulo 100), so the seed stays well-defined.
    pub fn encode(self) -> i64 {
        i64::from(self.base) * 1_000_000
            + i64::from(self.trial % 100) * 10_000
            + i64::from(self.turn % 100) * 100
            + i64::from(self.step % 100)
    }

    /// The parts of an encoded seed; `None` for a negative seed.
    pub fn decode(seed: i64) -> Option<CallSeed> {
        if seed < 0 {
            return None;
        }
        Some(CallSeed {
            base: u32::try_from(seed / 1_000_000).ok()?,
            trial: ((seed / 10_000) % 100) as u32,
            turn: ((seed / 100) % 100) as u32,
            step: (seed % 100) as u32,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        let s = CallSeed {
            base: 7,
            trial: 4,
            turn: 2,
            step: 9,
        };
        assert_eq!(s.encode(), 7_040_209);
        assert_eq!(CallSeed::decode(s.encode()), Some(s));
        assert_eq!(CallSeed::decode(-1), None);
    }
}
