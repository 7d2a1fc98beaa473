//! Intervals that keep their coverage near 0% and 100% (metrics.md, "Intervals at the
//! boundary"). A percentile bootstrap over tasks cannot leave the boundary: with every task at
//! 24/24 each resample is 100%, and `100%–100%` claims a certainty the data do not support. Where
//! the bootstrap is degenerate (no interval, all resamples equal, or the point at 0 or 1) the
//! report uses an exact (Clopper–Pearson) interval over the tasks as clusters instead: the count
//! and trials are scaled to an effective sample size by the design effect of the tasks (the
//! cluster variance of the pooled rate), and at the boundary, where that variance is 0, each task
//! counts as one observation. Everything here is a pure function of per-task counts and the
//! bootstrap's own interval, so the resampling (`bootstrap`) can change without touching it.

use super::bootstrap::{IdTotals, Interval};
use std::collections::BTreeMap;

/// Nominal coverage of every interval.
pub const LEVEL: f64 = 0.95;

/// Whether a bootstrap interval of a share whose point is `point` is degenerate: absent, every
/// resample equal, or the point on the boundary (0 or 1), where a percentile interval cannot
/// reach past the point.
pub fn degenerate(point: Option<f64>, ci: Option<Interval>) -> bool {
    let Some(ci) = ci else { return true };
    ci.low == ci.high || point.is_some_and(|p| p <= 0.0 || p >= 1.0)
}

/// The interval to report for a success rate over tasks given as (trials, passes):
/// [`clustered_exact`], whose coverage holds from 0% to 100% where the percentile bootstrap's
/// does not (measured: metrics.md).
pub fn success_rate(tasks: &[(usize, usize)]) -> Option<Interval> {
    clustered_exact(tasks)
}

/// The interval to report for a mean of per-task shares (pass^k: each task's C(c, k) / C(n, k)),
/// one value per task: the exact interval of `mean · n_eff` in `n_eff`, with n_eff = m(1 − m) /
/// v widened by Student's t on T − 1 degrees of freedom (v = the sample variance of the values / T)
/// and kept within [1, T], so never narrower than each task counted as one observation; at 0 or 1
/// (v = 0) n_eff = T. `None` without tasks.
pub fn task_mean(values: &[f64]) -> Option<Interval> {
    let t = values.len();
    if t == 0 {
        return None;
    }
    let tf = t as f64;
    let m = values.iter().sum::<f64>() / tf;
    let n_eff = if t < 2 || m <= 0.0 || m >= 1.0 {
        tf
    } else {
        let v = values.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (tf - 1.0) / tf;
        if v > 0.0 {
            (widening(t) * m * (1.0 - m) / v).clamp(1.0, tf)
        } else {
            tf
        }
    };
    Some(exact(m * n_eff, n_eff))
}

/// (z / t)², t the quantile of Student's t on `clusters - 1` degrees of freedom: how much a
/// variance estimated from that many clusters shrinks the effective sample size.
fn widening(clusters: usize) -> f64 {
    (Z / t_quantile(0.5 + LEVEL / 2.0, clusters as f64 - 1.0)).powi(2)
}

/// The interval to report for the difference `large - small` of two rates with their reported
/// intervals: [`contrast`] with weights +1 and -1 (Newcombe's hybrid score interval wherever the
/// bootstrap is degenerate or a rate is on the boundary).
pub fn difference(
    small: (f64, Interval),
    large: (f64, Interval),
    bootstrap: Option<Interval>,
) -> Option<Interval> {
    contrast(
        &[(1.0, large.0, large.1), (-1.0, small.0, small.1)],
        bootstrap,
    )
}

/// One rate of a linear contrast: its weight, the rate and the rate's reported interval.
pub type Weighted = (f64, f64, Interval);

/// The interval to report for a linear contrast Σ wᵢ pᵢ of rates (a difference, a factorial
/// effect or interaction): the bootstrap's unless it is degenerate (absent or every resample
/// equal) or some rate is on the boundary, else the MOVER interval (Zou and Donner) built from
/// the rates' own intervals, which for a difference is Newcombe's hybrid score interval: each
/// bound moves from the point by the root of the summed squared distances to the bounds of the
/// rates that move it that way (the lower of a positive term, the upper of a negative one),
/// clipped to the range the contrast can take. It leaves the boundary wherever the rates'
/// intervals do.
pub fn contrast(terms: &[Weighted], bootstrap: Option<Interval>) -> Option<Interval> {
    let boundary = |p: f64| p <= 0.0 || p >= 1.0;
    let flat = bootstrap.is_none_or(|i| i.low == i.high);
    if terms.is_empty() || (!flat && !terms.iter().any(|t| boundary(t.1))) {
        return bootstrap;
    }
    let point: f64 = terms.iter().map(|&(w, p, _)| w * p).sum();
    // Distance a term can move the contrast down (`down`) or up (`!down`).
    let reach = |down: bool| -> f64 {
        terms
            .iter()
            .map(|&(w, p, ci)| {
                let toward_low = (w > 0.0) == down;
                let d = if toward_low { p - ci.low } else { ci.high - p };
                (w * d).powi(2)
            })
            .sum::<f64>()
            .sqrt()
    };
    let floor: f64 = terms.iter().map(|t| t.0.min(0.0)).sum();
    let ceiling: f64 = terms.iter().map(|t| t.0.max(0.0)).sum();
    Some(Interval {
        low: (point - reach(true)).max(floor),
        high: (point + reach(false)).min(ceiling),
    })
}

/// The pooled rate of per-task (trials, passes) with its reported interval ([`success_rate`]);
/// `None` without trials.
pub fn rate(tasks: &[(usize, usize)]) -> Option<(f64, Interval)> {
    let (n, c) = totals(tasks);
    Some((c as f64 / n as f64, success_rate(tasks)?))
}

/// Per-task (trials, passes) of `side` on the tasks `other` also has, in task order.
pub fn shared_counts(
    side: &BTreeMap<String, IdTotals>,
    other: &BTreeMap<String, IdTotals>,
) -> Vec<(usize, usize)> {
    side.iter()
        .filter(|(id, _)| other.contains_key(*id))
        .map(|(_, t)| (t.trials.round() as usize, t.passes.round() as usize))
        .collect()
}

/// The interval to report for the paired gap `large - small` of two models' (or runs') per-task
/// totals over the tasks both have, given the paired bootstrap's: [`difference`] of their
/// [`rate`]s, the bootstrap's own where a side has no trials.
pub fn paired_gap(
    small: &BTreeMap<String, IdTotals>,
    large: &BTreeMap<String, IdTotals>,
    bootstrap: Option<Interval>,
) -> Option<Interval> {
    match (
        rate(&shared_counts(small, large)),
        rate(&shared_counts(large, small)),
    ) {
        (Some(s), Some(l)) => difference(s, l, bootstrap),
        _ => bootstrap,
    }
}

fn totals(tasks: &[(usize, usize)]) -> (usize, usize) {
    tasks
        .iter()
        .fold((0, 0), |(n, c), &(tn, tc)| (n + tn, c + tc))
}

/// The design-effect-scaled exact interval of the pooled rate over tasks as clusters; `None`
/// without trials. Effective size n_eff = (z/t)² · p(1 - p) / v, v = T / (T - 1) · Σ(cᵢ - p·nᵢ)² /
/// N² (the cluster estimate of the pooled rate's variance; N / n_eff is the design effect), t on
/// T - 1 degrees of freedom, kept within [1, N]; at p = 0 or 1 (v = 0) n_eff = T, each task one
/// observation. The count is p · n_eff.
pub fn clustered_exact(tasks: &[(usize, usize)]) -> Option<Interval> {
    let (n, c) = totals(tasks);
    let t = tasks.iter().filter(|x| x.0 > 0).count();
    if n == 0 {
        return None;
    }
    let (nf, p) = (n as f64, c as f64 / n as f64);
    let n_eff = if c == 0 || c == n || t < 2 {
        t as f64
    } else {
        let ss: f64 = tasks
            .iter()
            .map(|&(tn, tc)| (tc as f64 - p * tn as f64).powi(2))
            .sum();
        let v = t as f64 / (t as f64 - 1.0) * ss / (nf * nf);
        // The variance comes from T clusters: widen by Student's t with T - 1 degrees of freedom.
        if v > 0.0 {
            (widening(t) * p * (1.0 - p) / v).clamp(1.0, nf)
        } else {
            nf
        }
    };
    Some(exact(p * n_eff, n_eff))
}

/// Clopper–Pearson interval of `x` successes in `n` (both may be fractional): the beta quantiles
/// `B(α/2; x, n - x + 1)` and `B(1 - α/2; x + 1, n - x)`, 0 and 1 at the ends.
pub fn exact(x: f64, n: f64) -> Interval {
    let a = (1.0 - LEVEL) / 2.0;
    let x = x.clamp(0.0, n);
    Interval {
        low: if x <= 0.0 {
            0.0
        } else {
            beta_quantile(a, x, n - x + 1.0)
        },
        high: if x >= n {
            1.0
        } else {
            beta_quantile(1.0 - a, x + 1.0, n - x)
        },
    }
}

/// The `q`-quantile (q > 0.5) of Student's t with `df` degrees of freedom, by bisection on its
/// distribution function `1 - I_{df/(df+t²)}(df/2, 1/2) / 2`.
pub fn t_quantile(q: f64, df: f64) -> f64 {
    let (mut lo, mut hi) = (0.0, 1e3);
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        let cdf = 1.0 - 0.5 * inc_beta(df / (df + mid * mid), df / 2.0, 0.5);
        if cdf < q {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// The tail a percentile bootstrap over `clusters` tasks should cut so that its interval has the
/// coverage a `tail` on each side promises (Hesterberg's expanded percentile interval): the
/// plain percentile interval is too narrow on few tasks, by the factor √((T − 1)/T) of the
/// bootstrap's variance and by taking normal tails where the variance is estimated from T tasks.
/// So the tail is Φ(−√(T/(T − 1)) · t), t the `1 − tail` quantile of Student's t on T − 1
/// degrees of freedom. Below 2 tasks `tail` itself.
pub fn expanded_tail(tail: f64, clusters: usize) -> f64 {
    if clusters < 2 || tail <= 0.0 || tail >= 0.5 {
        return tail;
    }
    let t = clusters as f64;
    let x = (t / (t - 1.0)).sqrt() * t_quantile(1.0 - tail, t - 1.0);
    normal_upper_tail(x)
}

/// 1 − Φ(x) for x ≥ 0, through erfc (Chebyshev fit, relative error under 1.2e-7).
fn normal_upper_tail(x: f64) -> f64 {
    const C: [f64; 10] = [
        -1.265_512_23,
        1.000_023_68,
        0.374_091_96,
        0.096_784_18,
        -0.186_288_06,
        0.278_868_07,
        -1.135_203_98,
        1.488_515_87,
        -0.822_152_23,
        0.170_872_77,
    ];
    let z = x / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = C.iter().rev().fold(0.0, |acc, c| c + t * acc);
    0.5 * t * (-z * z + poly).exp()
}

/// The standard normal's quantile at `0.5 + LEVEL / 2`.
const Z: f64 = 1.959_963_984_540_054;

/// The `q`-quantile of the Beta(a, b) distribution, by bisection on [`inc_beta`].
pub fn beta_quantile(q: f64, a: f64, b: f64) -> f64 {
    let (mut lo, mut hi) = (0.0, 1.0);
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if inc_beta(mid, a, b) < q {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// The regularized incomplete beta function I_x(a, b) (continued fraction, Lentz's method).
pub fn inc_beta(x: f64, a: f64, b: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln();
    if x < (a + 1.0) / (a + b + 2.0) {
        ln_front.exp() * beta_fraction(x, a, b) / a
    } else {
        1.0 - ln_front.exp() * beta_fraction(1.0 - x, b, a) / b
    }
}

fn beta_fraction(x: f64, a: f64, b: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..300 {
        let m = f64::from(m);
        let m2 = 2.0 * m;
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 + aa * d;
        d = if d.abs() < TINY { TINY } else { d };
        c = 1.0 + aa / c;
        c = if c.abs() < TINY { TINY } else { c };
        d = 1.0 / d;
        h *= d * c;
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 + aa * d;
        d = if d.abs() < TINY { TINY } else { d };
        c = 1.0 + aa / c;
        c = if c.abs() < TINY { TINY } else { c };
        d = 1.0 / d;
        let del = d * c;
        h *= del;
        if (del - 1.0).abs() < 1e-14 {
            break;
        }
    }
    h
}

/// ln Γ(x) for x > 0 (Lanczos, g = 7).
fn ln_gamma(x: f64) -> f64 {
    const G: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let t = x + 7.5;
    let s = G[1..]
        .iter()
        .enumerate()
        .fold(G[0], |s, (i, g)| s + g / (x + i as f64 + 1.0));
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + s.ln()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() < tol
    }

    #[test]
    fn exact_interval_matches_clopper_pearson() {
        // 0 of 6: upper = 1 - 0.025^(1/6); 6 of 6: lower = 0.025^(1/6).
        let z = exact(0.0, 6.0);
        assert_eq!(z.low, 0.0);
        assert!(close(z.high, 1.0 - 0.025f64.powf(1.0 / 6.0), 1e-9), "{z:?}");
        let all = exact(6.0, 6.0);
        assert!(close(all.low, 0.025f64.powf(1.0 / 6.0), 1e-9) && all.high == 1.0);
        // scipy.stats.beta.ppf(0.025, 3, 8), beta.ppf(0.975, 4, 7) for 3 of 10.
        let i = exact(3.0, 10.0);
        assert!(
            close(i.low, 0.066_739, 1e-5) && close(i.high, 0.652_453, 1e-5),
            "{i:?}"
        );
    }

    #[test]
    fn a_rate_at_100_percent_gets_an_interval_below_it() {
        // 24 tasks at 1/1 (the stopping report's 24/24): the bootstrap says 100%–100%.
        let tasks = vec![(1, 1); 24];
        let flat = Interval {
            low: 1.0,
            high: 1.0,
        };
        let i = success_rate(&tasks).unwrap();
        assert!(
            i.high == 1.0 && close(i.low, 0.025f64.powf(1.0 / 24.0), 1e-9),
            "{i:?}"
        );
        assert_ne!(i, flat);
        // 30 trials over 6 tasks, all passed: the tasks are the observations.
        let i = success_rate(&[(5, 5); 6]).unwrap();
        assert!(close(i.low, 0.025f64.powf(1.0 / 6.0), 1e-9), "{i:?}");
        let z = success_rate(&[(5, 0); 6]).unwrap();
        assert!(z.low == 0.0 && z.high > 0.4, "{z:?}");
        // Tasks that always agree within themselves count as one observation each (or less).
        let split = success_rate(&[(5, 5), (5, 0), (5, 5), (5, 0)]).unwrap();
        let per_task = exact(2.0, 4.0);
        assert!(split.low <= per_task.low + 1e-9 && split.high >= per_task.high - 1e-9);
        // pass^k at 1 over 24 tasks, and a mean of equal values.
        let p = task_mean(&[1.0; 24]).unwrap();
        assert!(p.low < 1.0 && p.high == 1.0);
        assert!(task_mean(&[]).is_none());
    }

    #[test]
    fn the_expanded_tail_is_smaller_on_few_tasks_and_the_plain_one_on_many() {
        // 1 - Phi(1.959964) = 0.025, 1 - Phi(3) = 0.0013499.
        assert!(close(normal_upper_tail(Z), 0.025, 1e-8));
        assert!(close(normal_upper_tail(3.0), 0.001_349_9, 1e-7));
        // 24 tasks at the Bonferroni tail of 13 metrics: t(23) = 3.255 (R: qt(1 - 0.05/26, 23)),
        // times sqrt(24/23), a tail near 0.00055, about a quarter of the plain 0.00192.
        let plain = 0.05 / 26.0;
        let tail = expanded_tail(plain, 24);
        assert!(tail > 0.0004 && tail < 0.0007, "{tail}");
        // Many tasks: nearly the plain tail. One task: the plain tail.
        assert!(close(expanded_tail(0.025, 100_000), 0.025, 1e-4));
        assert_eq!(expanded_tail(0.025, 1), 0.025);
    }

    #[test]
    fn t_quantiles_are_students() {
        // scipy.stats.t.ppf(0.975, 5) = 2.5706, (0.975, 23) = 2.0687.
        assert!(close(t_quantile(0.975, 5.0), 2.570_582, 1e-5));
        assert!(close(t_quantile(0.975, 23.0), 2.068_658, 1e-5));
    }

    #[test]
    fn a_difference_at_the_boundary_leaves_it() {
        let zero = exact(0.0, 24.0);
        let all = exact(24.0, 24.0);
        let flat = Interval {
            low: 1.0,
            high: 1.0,
        };
        let d = difference((0.0, zero), (1.0, all), Some(flat)).unwrap();
        assert!(d.high == 1.0 && d.low < 0.9 && d.low > 0.5, "{d:?}");
    }

    #[test]
    fn a_contrast_off_the_boundary_keeps_the_bootstrap_and_on_it_moves_each_bound() {
        let mid = exact(12.0, 24.0);
        let boot = Interval {
            low: 0.1,
            high: 0.3,
        };
        // Off the boundary with a bootstrap of width: the bootstrap's.
        let terms = [(1.0, 0.5, mid), (-1.0, 0.5, mid)];
        assert_eq!(contrast(&terms, Some(boot)), Some(boot));
        // A degenerate bootstrap: the MOVER interval, symmetric here, each side √2 half-widths.
        let i = contrast(&terms, None).unwrap();
        let half = 0.5 - mid.low;
        assert!(close(i.low, -(2f64).sqrt() * half, 1e-12), "{i:?}");
        // Four cells at 100% with weights ±1/2 (a main effect of 0 over two levels of another
        // factor): each bound moves by the root of four squared half-distances.
        let all = exact(6.0, 6.0);
        let cells = [
            (0.5, 1.0, all),
            (-0.5, 1.0, all),
            (0.5, 1.0, all),
            (-0.5, 1.0, all),
        ];
        let e = contrast(
            &cells,
            Some(Interval {
                low: 0.0,
                high: 0.0,
            }),
        )
        .unwrap();
        let reach = (2.0 * (0.5 * (1.0 - all.low)).powi(2)).sqrt();
        assert!(
            close(e.low, -reach, 1e-12) && close(e.high, reach, 1e-12),
            "{e:?}"
        );
        // The difference is the contrast of +1 and -1.
        let (s, l) = ((0.0, exact(0.0, 24.0)), (1.0, exact(24.0, 24.0)));
        assert_eq!(
            difference(s, l, None),
            contrast(&[(1.0, l.0, l.1), (-1.0, s.0, s.1)], None)
        );
    }
}
