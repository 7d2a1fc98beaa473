//! The unbiased pass^k estimator (tau-bench, the reference): for each task with `n` graded trials
//! of which `c` passed, `C(c, k) / C(n, k)` is the chance that `k` trials drawn without
//! replacement all pass; pass^k is its mean over tasks.

use std::collections::BTreeMap;

/// `C(n, k)` as a float (exact for the small `n` of a run).
pub fn binomial(n: usize, k: usize) -> f64 {
    if k > n {
        return 0.0;
    }
    let k = k.min(n - k);
    let mut acc = 1.0_f64;
    for i in 0..k {
        acc = acc * (n - i) as f64 / (i + 1) as f64;
    }
    acc.round()
}

/// pass^k of one task with `n` graded trials and `c` passes; `None` when `k > n` or `n == 0`.
pub fn pass_hat_k_task(n: usize, c: usize, k: usize) -> Option<f64> {
    (n > 0 && k <= n).then(|| binomial(c, k) / binomial(n, k))
}

/// pass^k for k = 1..=min n over tasks, given `(trials, passes)` per task; empty without tasks.
pub fn pass_hat_k(tasks: &[(usize, usize)]) -> BTreeMap<usize, f64> {
    let n_min = tasks.iter().map(|t| t.0).min().unwrap_or(0);
    let mut out = BTreeMap::new();
    for k in 1..=n_min {
        let sum: f64 = tasks
            .iter()
            .filter_map(|&(n, c)| pass_hat_k_task(n, c, k))
            .sum();
        out.insert(k, sum / tasks.len() as f64);
    }
    out
}

/// Tasks whose every graded trial passed (and that have at least one).
pub fn tasks_passing_every_trial(tasks: &[(usize, usize)]) -> usize {
    tasks.iter().filter(|&&(n, c)| n > 0 && n == c).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binomials() {
        assert_eq!(binomial(5, 2), 10.0);
        assert_eq!(binomial(5, 0), 1.0);
        assert_eq!(binomial(2, 3), 0.0);
        assert_eq!(binomial(10, 5), 252.0);
    }

    #[test]
    fn hand_computed_pass_hat_k() {
        // Task a: 3 of 5 pass; task b: 5 of 5; task c: 0 of 5.
        // k=1: (3/5 + 1 + 0)/3 = 0.5333..; k=2: (C(3,2)/C(5,2) = 3/10 + 1 + 0)/3 = 1.3/3;
        // k=3: (1/10 + 1)/3; k=4: (0 + 1)/3; k=5: 1/3.
        let t = [(5, 3), (5, 5), (5, 0)];
        let p = pass_hat_k(&t);
        assert_eq!(p.len(), 5);
        assert!((p[&1] - 1.6 / 3.0).abs() < 1e-12);
        assert!((p[&2] - 1.3 / 3.0).abs() < 1e-12);
        assert!((p[&3] - 1.1 / 3.0).abs() < 1e-12);
        assert!((p[&4] - 1.0 / 3.0).abs() < 1e-12);
        assert!((p[&5] - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(tasks_passing_every_trial(&t), 1);
    }

    #[test]
    fn k_stops_at_the_smallest_trial_count() {
        let p = pass_hat_k(&[(2, 1), (3, 3)]);
        assert_eq!(p.keys().copied().collect::<Vec<_>>(), [1, 2]);
        assert!((p[&2] - 0.5).abs() < 1e-12); // (0 + 1) / 2
        assert!(pass_hat_k(&[]).is_empty());
    }
}
