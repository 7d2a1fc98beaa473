//! The interval of a figure per successful task (tokens, seconds or joules per success): a ratio
//! of two sums over the same tasks, Σ costᵢ / Σ passesᵢ, with the tasks as clusters (metrics.md,
//! "Per-success intervals"). Fieller's interval: the ratios R for which Σ costᵢ − R Σ passesᵢ is
//! not distinguishable from 0, with its variance from the tasks' own spread and Student's t on
//! T − 1 degrees of freedom, as the rates' intervals take it. Where the passes themselves are not
//! clearly above 0 the interval has no upper end (`∞`): a run with one lucky pass does not get a
//! finite cost per success.

use crate::analysis::intervals::bootstrap::Interval;
use crate::analysis::intervals::interval::{LEVEL, t_quantile};

/// The 95% interval of Σ cost / Σ passes over tasks given as (cost, passes); `None` without a
/// pass or with fewer than two tasks (no spread to read).
pub fn per_success(tasks: &[(f64, f64)]) -> Option<Interval> {
    per_success_at(tasks, LEVEL)
}

/// [`per_success`] at coverage `level`.
pub fn per_success_at(tasks: &[(f64, f64)], level: f64) -> Option<Interval> {
    let t = tasks.len();
    let passes: f64 = tasks.iter().map(|x| x.1).sum();
    if t < 2 || passes <= 0.0 {
        return None;
    }
    let tf = t as f64;
    let (my, mx) = (tasks.iter().map(|x| x.0).sum::<f64>() / tf, passes / tf);
    let (mut syy, mut sxx, mut sxy) = (0.0, 0.0, 0.0);
    for &(y, x) in tasks {
        let (dy, dx) = (y - my, x - mx);
        syy += dy * dy;
        sxx += dx * dx;
        sxy += dx * dy;
    }
    let q = t_quantile(0.5 + level / 2.0, tf - 1.0).powi(2) / (tf * (tf - 1.0));
    Some(fieller(mx, my, q * sxx, q * sxy, q * syy))
}

/// The R ≥ 0 with (ȳ − R x̄)² ≤ t² Var(ȳ − R x̄): the roots of a R² − 2b R + c, with
/// a = x̄² − t² s²ₓ/T, b = x̄ȳ − t² sₓᵧ/T, c = ȳ² − t² s²ᵧ/T (`vxx`, `vxy`, `vyy` are the t²-scaled
/// variance terms). Bounded when a > 0 (the mean passes clearly above 0); otherwise open upwards.
fn fieller(mx: f64, my: f64, vxx: f64, vxy: f64, vyy: f64) -> Interval {
    let (a, b, c) = (mx * mx - vxx, mx * my - vxy, my * my - vyy);
    let disc = (b * b - a * c).max(0.0);
    if a > 0.0 {
        let r = disc.sqrt();
        return Interval {
            low: ((b - r) / a).max(0.0),
            high: (b + r) / a,
        };
    }
    // a ≤ 0: the set runs to infinity; its finite end is the larger root when both are real and
    // the point lies above it, else 0.
    let low = if a < 0.0 && b * b > a * c {
        let roots = [(b + disc.sqrt()) / a, (b - disc.sqrt()) / a];
        let (lo, hi) = (roots[0].min(roots[1]), roots[0].max(roots[1]));
        if lo <= 0.0 { hi.max(0.0) } else { 0.0 }
    } else {
        0.0
    };
    Interval {
        low,
        high: f64::INFINITY,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_the_point_and_widens_with_the_spread() {
        let even = [(1000.0, 2.0), (1100.0, 2.0), (900.0, 2.0), (1000.0, 2.0)];
        let i = per_success(&even).unwrap();
        assert!(i.low < 500.0 && 500.0 < i.high, "{i:?}");
        let spread = [(1000.0, 1.0), (1100.0, 3.0), (900.0, 0.0), (1000.0, 4.0)];
        let j = per_success(&spread).unwrap();
        assert!(j.low < 500.0 && 500.0 < j.high, "{j:?}");
        assert!(j.high - j.low > i.high - i.low, "{i:?} {j:?}");
    }

    #[test]
    fn no_pass_or_one_task_gives_none_and_a_lucky_pass_no_upper_end() {
        assert_eq!(per_success(&[(100.0, 0.0), (100.0, 0.0)]), None);
        assert_eq!(per_success(&[(100.0, 3.0)]), None);
        let lucky = [(100.0, 1.0), (100.0, 0.0), (100.0, 0.0), (100.0, 0.0)];
        let i = per_success(&lucky).unwrap();
        assert_eq!(i.high, f64::INFINITY);
        assert!(i.low <= 400.0, "{i:?}");
    }

    #[test]
    fn matches_fieller_computed_by_hand() {
        // Two tasks (cost, passes) = (10, 1), (30, 3): costs proportional to passes, so no spread
        // in y − R x at R = 10 and the quadratic's roots meet there only when the passes do not
        // vary; here they vary, so the interval is (a, b) around 10 with t(0.975, 1) = 12.706.
        let i = per_success(&[(10.0, 1.0), (30.0, 3.0)]).unwrap();
        // x̄ = 2, ȳ = 20, s²ₓ = 2, sₓᵧ = 20, s²ᵧ = 200; q = 12.706² / 2 = 80.72:
        // a = 4 − 161.4 < 0: the passes are not clearly above 0 on two tasks.
        assert_eq!(i.high, f64::INFINITY);
        assert!(i.low <= 10.0, "{i:?}");
    }
}
