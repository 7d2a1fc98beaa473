//! Fault injection: which failure a request gets, decided deterministically from the stub seed, the
//! model name and that model's request counter, so a run against the stub replays exactly.

use serde::{Deserialize, Serialize};

pub use passk::scripted::FaultKind;

/// Probability per chat request of each fault (0 to 1; they add up to at most 1).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FaultRates {
    /// Connection reset.
    pub reset: f64,
    /// Hang past the client timeout.
    pub hang: f64,
    /// HTTP 500.
    pub http500: f64,
    /// HTTP 503.
    pub http503: f64,
    /// HTTP 404 model not found.
    pub not_found: f64,
    /// HTTP 400 does not support tools.
    pub no_tools: f64,
    /// A truncated or non-JSON body (half each).
    pub bad_body: f64,
    /// A mid-stream `{"error"}` line.
    pub stream_error: f64,
    /// `done_reason: "length"`.
    pub length: f64,
}

impl FaultRates {
    /// The same rate for every kind.
    pub fn uniform(rate: f64) -> FaultRates {
        FaultRates {
            reset: rate,
            hang: rate,
            http500: rate,
            http503: rate,
            not_found: rate,
            no_tools: rate,
            bad_body: rate,
            stream_error: rate,
            length: rate,
        }
    }

    /// Sum of the rates.
    pub fn total(&self) -> f64 {
        self.reset
            + self.hang
            + self.http500
            + self.http503
            + self.not_found
            + self.no_tools
            + self.bad_body
            + self.stream_error
            + self.length
    }

    /// The fault for a uniform draw `u` in [0, 1): the rates are laid end to end.
    pub fn pick(&self, u: f64) -> Option<FaultKind> {
        let bands = [
            (self.reset, FaultKind::Reset),
            (self.hang, FaultKind::Hang),
            (self.http500, FaultKind::Http500),
            (self.http503, FaultKind::Http503),
            (self.not_found, FaultKind::NotFound),
            (self.no_tools, FaultKind::NoTools),
            (self.bad_body / 2.0, FaultKind::TruncatedBody),
            (self.bad_body / 2.0, FaultKind::NonJsonBody),
            (self.stream_error, FaultKind::StreamError),
            (self.length, FaultKind::Length),
        ];
        let mut edge = 0.0;
        for (rate, kind) in bands {
            edge += rate.max(0.0);
            if u < edge {
                return Some(kind);
            }
        }
        None
    }
}

/// splitmix64: a well-mixed 64-bit value from any 64-bit input.
pub(crate) fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// FNV-1a of a string (stable across platforms and runs).
pub(crate) fn hash_str(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// A uniform value in [0, 1) from a hash.
pub(crate) fn unit(x: u64) -> f64 {
    (x >> 11) as f64 / (1u64 << 53) as f64
}

/// The draw for request `n` of `model` under `seed`.
pub(crate) fn draw(seed: u64, model: &str, n: u64) -> f64 {
    unit(mix(mix(seed ^ hash_str(model)).wrapping_add(n)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bands_follow_the_rates() {
        let r = FaultRates {
            reset: 0.1,
            http500: 0.2,
            ..FaultRates::default()
        };
        assert_eq!(r.pick(0.05), Some(FaultKind::Reset));
        assert_eq!(r.pick(0.25), Some(FaultKind::Http500));
        assert_eq!(r.pick(0.35), None);
        assert_eq!(FaultRates::default().pick(0.0), None);
    }

    #[test]
    fn draws_are_deterministic_and_spread() {
        assert_eq!(draw(1, "m", 5), draw(1, "m", 5));
        assert_ne!(draw(1, "m", 5), draw(2, "m", 5));
        let r = FaultRates {
            http500: 0.3,
            ..FaultRates::default()
        };
        let hits = (0..10_000)
            .filter(|&n| r.pick(draw(7, "m", n)).is_some())
            .count();
        assert!((2_700..3_300).contains(&hits), "{hits}");
    }
}
