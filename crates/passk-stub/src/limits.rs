//! What the stub can represent. A setting past these bounds is refused where it is read, naming
//! its flag, variable or file key, rather than left to panic a worker later: a speed so slow that
//! one token's time overflows a `Duration`, a load time past a day, or more slots than a
//! semaphore holds.

use std::time::Duration;

/// The slowest simulated speed, tokens per second: even 10^7 tokens then take a time a
/// `Duration` holds.
pub const MIN_TOK_PER_S: f64 = 1e-3;

/// The longest simulated load, milliseconds (a day).
pub const MAX_MILLIS: f64 = 86_400_000.0;

/// The most requests a model serves at once (far below tokio's semaphore limit, far above any GPU).
pub const MAX_SLOTS: usize = 1 << 20;

/// A simulated speed, tokens per second: finite and at least [`MIN_TOK_PER_S`].
pub fn speed(what: &str, x: f64) -> Result<f64, String> {
    if x.is_finite() && x >= MIN_TOK_PER_S {
        Ok(x)
    } else {
        Err(format!(
            "{what} must be a finite speed of at least {MIN_TOK_PER_S} tokens/s, got {x:?}"
        ))
    }
}

/// A simulated time in milliseconds: finite, from 0 to [`MAX_MILLIS`].
pub fn millis(what: &str, ms: f64) -> Result<Duration, String> {
    if ms.is_finite() && (0.0..=MAX_MILLIS).contains(&ms) {
        Ok(Duration::from_secs_f64(ms / 1000.0))
    } else {
        Err(format!(
            "{what} must be from 0 to {MAX_MILLIS} ms (a day), got {ms:?}"
        ))
    }
}

/// A number of slots per model: at most [`MAX_SLOTS`] (0 is served as 1, as Ollama does).
pub fn slots(what: &str, n: usize) -> Result<usize, String> {
    if n <= MAX_SLOTS {
        Ok(n)
    } else {
        Err(format!("{what} must be at most {MAX_SLOTS}, got {n}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_a_worker_could_not_represent_are_refused_by_name() {
        for x in [1e-300, 0.0, -1.0, f64::NAN, f64::INFINITY] {
            let e = speed("decode_tok_per_s", x).expect_err("refused");
            assert!(e.starts_with("decode_tok_per_s must be"), "{e}");
        }
        assert_eq!(speed("s", 2000.0), Ok(2000.0));
        for ms in [1e300, -1.0, f64::NAN] {
            assert!(
                millis("load_ms", ms)
                    .expect_err("refused")
                    .starts_with("load_ms")
            );
        }
        assert_eq!(millis("load_ms", 250.0), Ok(Duration::from_millis(250)));
        assert!(slots("--num-parallel", 1 << 61).is_err());
        assert_eq!(slots("--num-parallel", 4), Ok(4));
        // The bounds hold what a worker computes from them.
        let _ = Duration::from_secs_f64(1e7 / MIN_TOK_PER_S);
        let _ = tokio::sync::Semaphore::new(MAX_SLOTS);
    }
}
