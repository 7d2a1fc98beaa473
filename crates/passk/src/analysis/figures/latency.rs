//! Time (metrics.md): percentiles by linear interpolation, the least-squares latency fit and the
//! split of each call's latency into Ollama's own model time and the request overhead.

use crate::runner::record::CallRecord;
use serde::{Deserialize, Serialize};

/// Mean of the values; `None` when empty.
pub fn mean(xs: &[f64]) -> Option<f64> {
    (!xs.is_empty()).then(|| xs.iter().sum::<f64>() / xs.len() as f64)
}

/// Raises a running maximum to `x`, when there is one (the first value starts it).
pub fn max_with(m: &mut Option<f64>, x: Option<f64>) {
    if let Some(x) = x {
        *m = Some(m.map_or(x, |m| m.max(x)));
    }
}

/// A mean kept as a running sum: [`mean`] of the values added, to the last bit, since the sum
/// starts at -0.0 and adds in the same order as `Iterator::sum`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunningMean {
    sum: f64,
    n: usize,
}

impl Default for RunningMean {
    fn default() -> Self {
        RunningMean { sum: -0.0, n: 0 }
    }
}

impl RunningMean {
    /// Adds a value.
    pub fn add(&mut self, x: f64) {
        self.sum += x;
        self.n += 1;
    }

    /// The values' sum (-0.0 for none, as `Iterator::sum`).
    pub fn sum(&self) -> f64 {
        self.sum
    }

    /// How many values were added.
    pub fn count(&self) -> usize {
        self.n
    }

    /// The mean; `None` for no values.
    pub fn mean(&self) -> Option<f64> {
        (self.n > 0).then(|| self.sum / self.n as f64)
    }
}

/// The `p`-th percentile by linear interpolation between the sorted values at index `(n-1)p/100`.
pub fn percentile(xs: &[f64], p: f64) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let i = (v.len() - 1) as f64 * p / 100.0;
    let lo = i as usize;
    let hi = (lo + 1).min(v.len() - 1);
    Some(v[lo] + (v[hi] - v[lo]) * (i - lo as f64))
}

/// Ordinary least squares `latency = a + b1 * output + b2 * input` over calls.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencyFit {
    /// Calls in the fit.
    pub calls: usize,
    /// Intercept `a`: the fixed cost of one call, seconds.
    pub fixed_s_per_call: f64,
    /// `1 / b1`: output tokens per second.
    pub decode_tokens_per_s: f64,
    /// `1000 * b2`: seconds per thousand input tokens.
    pub s_per_1k_input_tokens: f64,
    /// Why the fit means nothing on these calls, when it does not: a negative coefficient (no
    /// call takes less time for more tokens) or a regressor that barely varies. The report then
    /// prints no coefficient.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_identifiable: Option<String>,
}

/// A regressor whose standard deviation is below this share of its mean barely varies: its
/// coefficient is not identifiable from the calls.
pub const LEAST_RELATIVE_SPREAD: f64 = 0.05;

/// Why a fit `(a, b1, b2)` over outputs `x1` and inputs `x2` is not identifiable, if it is not.
fn identifiability((a, b1, b2): (f64, f64, f64), x1: &[f64], x2: &[f64]) -> Option<String> {
    let spread = |xs: &[f64]| {
        let m = mean(xs)?;
        let var = xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / xs.len() as f64;
        (m > 0.0).then(|| var.sqrt() / m)
    };
    let mut why = Vec::new();
    for (name, xs) in [("output", x1), ("input", x2)] {
        let s = spread(xs).unwrap_or(0.0);
        if s < LEAST_RELATIVE_SPREAD {
            why.push(format!(
                "{name} tokens barely vary (spread {:.1}% of their mean)",
                s * 100.0
            ));
        }
    }
    for (name, v) in [
        ("fixed time", a),
        ("time per output token", b1),
        ("time per input token", b2),
    ] {
        if v < 0.0 {
            why.push(format!("negative {name}"));
        }
    }
    (!why.is_empty()).then(|| why.join("; "))
}

/// Fits `y = a + b1 x1 + b2 x2`; `None` when the system is singular (fewer than 3 distinct points).
pub fn ols(y: &[f64], x1: &[f64], x2: &[f64]) -> Option<(f64, f64, f64)> {
    let n = y.len() as f64;
    if y.len() < 3 || x1.len() != y.len() || x2.len() != y.len() {
        return None;
    }
    let (m1, m2, my) = (
        x1.iter().sum::<f64>() / n,
        x2.iter().sum::<f64>() / n,
        y.iter().sum::<f64>() / n,
    );
    let (mut s11, mut s22, mut s12, mut s1y, mut s2y) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for i in 0..y.len() {
        let (a, b, c) = (x1[i] - m1, x2[i] - m2, y[i] - my);
        s11 += a * a;
        s22 += b * b;
        s12 += a * b;
        s1y += a * c;
        s2y += b * c;
    }
    let det = s11 * s22 - s12 * s12;
    if det == 0.0 || !det.is_finite() {
        return None;
    }
    let b1 = (s1y * s22 - s2y * s12) / det;
    let b2 = (s2y * s11 - s1y * s12) / det;
    Some((my - b1 * m1 - b2 * m2, b1, b2))
}

/// The calls a latency fit reads: each call's latency with its output and input tokens.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FitPoints {
    y: Vec<f64>,
    x1: Vec<f64>,
    x2: Vec<f64>,
}

impl FitPoints {
    /// Adds a call (one without a latency is left out).
    pub fn add(&mut self, c: &CallRecord) {
        if let Some(l) = c.latency_s() {
            self.y.push(l);
            self.x1.push(c.output_tokens() as f64);
            self.x2.push(c.input_tokens() as f64);
        }
    }

    /// The least-squares fit of latency on output and input tokens; `None` for fewer than 3
    /// calls or a singular design.
    pub fn fit(&self) -> Option<LatencyFit> {
        let (a, b1, b2) = ols(&self.y, &self.x1, &self.x2)?;
        Some(LatencyFit {
            calls: self.y.len(),
            fixed_s_per_call: a,
            decode_tokens_per_s: 1.0 / b1,
            s_per_1k_input_tokens: 1000.0 * b2,
            not_identifiable: identifiability((a, b1, b2), &self.x1, &self.x2),
        })
    }
}

/// The latency fit over the calls that have a latency; `None` when it cannot be fitted.
/// For the tests: the running totals fed these records.
#[cfg(test)]
pub fn latency_fit<'a>(calls: impl IntoIterator<Item = &'a CallRecord>) -> Option<LatencyFit> {
    let mut points = FitPoints::default();
    calls.into_iter().for_each(|c| points.add(c));
    points.fit()
}

/// The server's own split of call latency (calls that carry both prefill and decode durations).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerSplit {
    /// Calls with the server's durations.
    pub calls: usize,
    /// Mean model time (prompt_eval + eval durations), seconds.
    pub model_s_per_call: f64,
    /// Mean request overhead (latency - model time), seconds.
    pub overhead_s_per_call: f64,
    /// Median request overhead, seconds.
    pub overhead_s_p50: f64,
    /// sum(eval_count) / sum(eval_duration), tokens per second.
    pub decode_tokens_per_s: Option<f64>,
    /// Prompt tokens / sum(prompt_eval_duration), tokens per second: over the uncached prompt
    /// tokens when every call gave the server's cached count (`prefill_over_uncached`), else over
    /// all prompt tokens, cached ones included (flattered by Ollama's prefix cache).
    pub prefill_tokens_per_s: Option<f64>,
    /// The prefill speed is over uncached prompt tokens (every call had a cached count).
    #[serde(default)]
    pub prefill_over_uncached: bool,
}

/// The split over calls with latency and both durations; `None` when no call has them.
/// For the tests: the running totals fed these records.
#[cfg(test)]
pub fn server_split<'a>(calls: impl IntoIterator<Item = &'a CallRecord>) -> Option<ServerSplit> {
    let mut sums = SplitSums::default();
    for c in calls {
        sums.add(c);
    }
    sums.split()
}

/// Ollama's split of a model's latency ([`ServerSplit`]), fed one call at a time: what it keeps
/// of each call with latency and both durations (the model time's running mean, each call's
/// overhead for its mean and median, and the token and duration sums).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SplitSums {
    model: RunningMean,
    overhead: Vec<f64>,
    out_tok: u64,
    in_tok: u64,
    eval_ns: u64,
    prompt_ns: u64,
    uncached: u64,
    missing_cached_count: bool,
}

impl SplitSums {
    /// Adds a call; one without latency or either duration is not counted.
    pub fn add(&mut self, c: &CallRecord) {
        let (Some(lat), Some(pe), Some(ev)) = (
            c.latency_s(),
            c.timings.prompt_eval_duration.get(),
            c.timings.eval_duration.get(),
        ) else {
            return;
        };
        let m = pe as f64 / 1e9 + ev as f64 / 1e9;
        self.model.add(m);
        self.overhead.push(lat - m);
        self.out_tok += c.output_tokens();
        self.in_tok += c.input_tokens();
        match c.timings.prompt_eval_cached_count.get() {
            Some(k) => self.uncached += c.input_tokens().saturating_sub(k),
            None => self.missing_cached_count = true,
        }
        self.eval_ns += ev;
        self.prompt_ns += pe;
    }

    /// The split of the calls added; `None` when none counted.
    pub fn split(&self) -> Option<ServerSplit> {
        let every_cached_count = !self.missing_cached_count;
        Some(ServerSplit {
            calls: self.model.count(),
            model_s_per_call: self.model.mean()?,
            overhead_s_per_call: mean(&self.overhead)?,
            overhead_s_p50: percentile(&self.overhead, 50.0)?,
            decode_tokens_per_s: (self.eval_ns > 0)
                .then(|| self.out_tok as f64 / (self.eval_ns as f64 / 1e9)),
            prefill_tokens_per_s: (self.prompt_ns > 0).then(|| {
                let tokens = if every_cached_count {
                    self.uncached
                } else {
                    self.in_tok
                };
                tokens as f64 / (self.prompt_ns as f64 / 1e9)
            }),
            prefill_over_uncached: every_cached_count,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixtures::call;

    #[test]
    fn percentile_interpolates() {
        let xs = [4.0, 1.0, 3.0, 2.0];
        // index (4-1)*0.5 = 1.5 -> 2 + 0.5 * (3 - 2)
        assert_eq!(percentile(&xs, 50.0), Some(2.5));
        // index 2.85 -> 3 + 0.85 * 1
        assert!((percentile(&xs, 95.0).unwrap() - 3.85).abs() < 1e-12);
        assert_eq!(percentile(&[5.0], 95.0), Some(5.0));
        assert_eq!(percentile(&[], 50.0), None);
        assert_eq!(mean(&xs), Some(2.5));
    }

    #[test]
    fn a_running_mean_is_the_mean_to_the_last_bit() {
        let sets: [&[f64]; 5] = [
            &[],
            &[-0.0],
            &[-0.0, 0.0],
            &[0.1, 0.2, 0.3, 1e16, -1e16, 0.7],
            &[1.0 / 3.0, 2.0 / 7.0, 5.0 / 11.0, 1e-300, 3.0],
        ];
        for xs in sets {
            let mut m = RunningMean::default();
            xs.iter().for_each(|&x| m.add(x));
            assert_eq!(
                m.mean().map(f64::to_bits),
                mean(xs).map(f64::to_bits),
                "{xs:?}"
            );
            let sum: f64 = xs.iter().sum();
            assert_eq!(m.sum().to_bits(), sum.to_bits(), "{xs:?}");
            assert_eq!(m.count(), xs.len());
        }
    }

    #[test]
    fn ols_recovers_an_exact_plane() {
        // y = 0.5 + 0.01 * x1 + 0.002 * x2
        let x1 = [10.0, 20.0, 5.0, 40.0, 8.0];
        let x2 = [100.0, 300.0, 700.0, 200.0, 900.0];
        let y: Vec<f64> = x1
            .iter()
            .zip(&x2)
            .map(|(a, b)| 0.5 + 0.01 * a + 0.002 * b)
            .collect();
        let (a, b1, b2) = ols(&y, &x1, &x2).unwrap();
        assert!((a - 0.5).abs() < 1e-9 && (b1 - 0.01).abs() < 1e-12 && (b2 - 0.002).abs() < 1e-12);
        // Collinear inputs cannot be fitted.
        assert!(ols(&[1.0, 2.0, 3.0], &[1.0, 2.0, 3.0], &[2.0, 4.0, 6.0]).is_none());
    }

    #[test]
    fn server_split_sums_durations() {
        let mut a = call(1000, 10);
        a.wall_s = Some(0.5).into();
        a.timings.load_duration = Some(100_000_000).into(); // latency 0.4
        a.timings.prompt_eval_duration = Some(100_000_000).into();
        a.timings.eval_duration = Some(200_000_000).into();
        let mut b = call(3000, 30);
        b.wall_s = Some(0.7).into();
        b.timings.prompt_eval_duration = Some(100_000_000).into();
        b.timings.eval_duration = Some(400_000_000).into();
        let s = server_split([&a, &b]).unwrap();
        assert_eq!(s.calls, 2);
        assert!((s.model_s_per_call - 0.4).abs() < 1e-12); // (0.3 + 0.5) / 2
        assert!((s.overhead_s_per_call - 0.15).abs() < 1e-12); // (0.1 + 0.2) / 2
        assert!((s.decode_tokens_per_s.unwrap() - 40.0 / 0.6).abs() < 1e-9);
        assert!((s.prefill_tokens_per_s.unwrap() - 4000.0 / 0.2).abs() < 1e-6);
        assert!(!s.prefill_over_uncached);
        let bare = call(1, 1);
        assert!(server_split([&bare]).is_none());
        // With the server's cached counts, prefill is over the uncached tokens only.
        a.timings.prompt_eval_cached_count = Some(900).into();
        b.timings.prompt_eval_cached_count = Some(2900).into();
        let s = server_split([&a, &b]).unwrap();
        assert!(s.prefill_over_uncached);
        assert!((s.prefill_tokens_per_s.unwrap() - 200.0 / 0.2).abs() < 1e-6);
    }

    #[test]
    fn a_fit_that_cannot_be_identified_says_so() {
        // Inputs that barely vary, and a few slow calls: the input term comes out negative.
        let calls: Vec<CallRecord> = [
            (1000, 10, 1.0),
            (1001, 20, 1.2),
            (1002, 30, 9.0),
            (1000, 40, 1.6),
        ]
        .iter()
        .map(|&(i, o, s)| {
            let mut c = call(i, o);
            c.wall_s = Some(s).into();
            c
        })
        .collect();
        let f = latency_fit(&calls).unwrap();
        let why = f.not_identifiable.expect("flagged");
        assert!(why.contains("input tokens barely vary"), "{why}");
        // A plane with spread inputs and positive terms is a result.
        let good: Vec<CallRecord> = [(100, 10), (300, 20), (700, 5), (200, 40), (900, 8)]
            .iter()
            .map(|&(i, o)| {
                let mut c = call(i, o);
                c.wall_s = Some(0.5 + 0.01 * o as f64 + 0.002 * i as f64).into();
                c
            })
            .collect();
        assert_eq!(latency_fit(&good).unwrap().not_identifiable, None);
    }
}
