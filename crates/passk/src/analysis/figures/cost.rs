//! Token cost of conversations (metrics.md): blended tokens (input + w * output), the cached
//! re-pricing of each call's re-sent prefix, tokens per successful task and the break-even price
//! ratio between two models.

use crate::runner::record::CallRecord;

/// Price factor of a cached (re-sent) prefix in the cached re-pricing, as the reference.
pub const CACHE_DISCOUNT: f64 = 0.1;

/// Output weights of the break-even sensitivity table.
pub const OUTPUT_WEIGHTS: [u32; 4] = [1, 2, 4, 8];

/// Blended tokens of one call: `input + w * output`.
pub fn blended(input: u64, output: u64, w: f64) -> f64 {
    input as f64 + w * output as f64
}

/// Blended tokens of a sequence of calls.
pub fn blended_calls<'a>(calls: impl IntoIterator<Item = &'a CallRecord>, w: f64) -> f64 {
    calls
        .into_iter()
        .map(|c| blended(c.input_tokens(), c.output_tokens(), w))
        .sum()
}

/// Cached re-pricing of one conversation's calls (in order): `prev = 0`; per call
/// `prefix = min(prev, input)`, add `discount * prefix + (input - prefix) + w * output`, `prev = input`.
pub fn cached_calls<'a>(
    calls: impl IntoIterator<Item = &'a CallRecord>,
    w: f64,
    discount: f64,
) -> f64 {
    let mut prev = 0u64;
    let mut total = 0.0;
    for c in calls {
        let input = c.input_tokens();
        let prefix = prev.min(input);
        total += discount * prefix as f64 + (input - prefix) as f64 + w * c.output_tokens() as f64;
        prev = input;
    }
    total
}

/// `total / passes`, `None` without a pass.
pub fn per_success(total: f64, passes: usize) -> Option<f64> {
    (passes > 0).then(|| total / passes as f64)
}

/// Break-even price ratio: how many times cheaper per token the small model must be to cost the
/// same per successful task (`small / large` of a per-success cost); `None` when undefined.
pub fn break_even(small_per_success: Option<f64>, large_per_success: Option<f64>) -> Option<f64> {
    match (small_per_success, large_per_success) {
        (Some(s), Some(l)) if l > 0.0 => Some(s / l),
        _ => None,
    }
}

/// The models on the cheapest-per-success frontier, by success rate: those that no other model
/// dominates (at least the same success at no higher cost per success, one of them strictly
/// better). `points` holds (model, success rate, cost per success).
pub fn frontier<'a>(points: &[(&'a str, f64, f64)]) -> Vec<&'a str> {
    let dominated = |&(_, s, c): &(&str, f64, f64)| {
        points
            .iter()
            .any(|&(_, s2, c2)| s2 >= s && c2 <= c && (s2 > s || c2 < c))
    };
    let mut on: Vec<(&str, f64, f64)> = points.iter().copied().filter(|p| !dominated(p)).collect();
    on.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.2.total_cmp(&b.2)));
    on.into_iter().map(|p| p.0).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixtures::call;

    #[test]
    fn blended_weights_output() {
        assert_eq!(blended(100, 10, 4.0), 140.0);
        let calls = [call(100, 10), call(150, 5)];
        assert_eq!(blended_calls(&calls, 4.0), 140.0 + 170.0);
        assert_eq!(blended_calls(&calls, 1.0), 265.0);
    }

    #[test]
    fn cached_reprices_the_previous_prompt() {
        // call 1: 0 cached, 100 + 40 = 140; call 2: prefix 100 -> 10 + 50 + 20 = 80;
        // call 3 shrinks to 120: prefix min(150, 120) = 120 -> 12 + 0 + 0 = 12.
        let calls = [call(100, 10), call(150, 5), call(120, 0)];
        let c = cached_calls(&calls, 4.0, 0.1);
        assert!((c - (140.0 + 80.0 + 12.0)).abs() < 1e-9);
    }

    #[test]
    fn the_frontier_keeps_models_no_other_beats_on_both() {
        // b costs more than a for less success: dominated. c is best but dearest.
        let pts = [
            ("a", 0.5, 100.0),
            ("b", 0.4, 150.0),
            ("c", 0.9, 300.0),
            ("d", 0.5, 120.0),
        ];
        assert_eq!(frontier(&pts), ["a", "c"]);
        assert!(frontier(&[]).is_empty());
    }

    #[test]
    fn break_even_is_a_ratio_of_per_success_costs() {
        assert_eq!(per_success(300.0, 0), None);
        assert_eq!(per_success(300.0, 3), Some(100.0));
        assert_eq!(break_even(Some(150.0), Some(100.0)), Some(1.5));
        assert_eq!(break_even(None, Some(100.0)), None);
    }
}
