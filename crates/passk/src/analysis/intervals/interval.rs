//! Intervals that keep their coverage near 0% and 100% and on few tasks (metrics.md, "Intervals
//! at the boundary"). A percentile bootstrap over tasks cannot leave the boundary: with every
//! task at 24/24 each resample is 100%, and `100%–100%` claims a certainty the data do not
//! support; on few tasks it is too narrow everywhere. So a rate's reported interval is an exact
//! (Clopper–Pearson) interval over the tasks as clusters: the count and trials are scaled to an
//! effective sample size by the design effect of the tasks (the cluster variance of the pooled
//! rate), and at the boundary, where that variance is 0, each task counts as one observation. A
//! difference or contrast of rates on the same tasks combines the rates' intervals with their
//! correlation over the tasks (MOVER). Everything here is a pure function of per-task counts, so
//! the resampling (`bootstrap`), which keeps the reference's own intervals, can change without
//! touching it.

use crate::analysis::intervals::bootstrap::{IdTotals, Interval};
use std::collections::BTreeMap;

/// Nominal coverage of every interval.
pub const LEVEL: f64 = 0.95;

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
            (widening(t, LEVEL) * m * (1.0 - m) / v).clamp(1.0, tf)
        } else {
            tf
        }
    };
    Some(exact(m * n_eff, n_eff))
}

/// (z / t)², z and t the `0.5 + level / 2` quantiles of the normal and of Student's t on
/// `clusters - 1` degrees of freedom: how much a variance estimated from that many clusters
/// shrinks the effective sample size.
fn widening(clusters: usize, level: f64) -> f64 {
    let q = 0.5 + level / 2.0;
    (normal_quantile(q) / t_quantile(q, clusters as f64 - 1.0)).powi(2)
}

/// One rate of a linear contrast: its weight, the rate and the rate's reported interval.
pub type Weighted = (f64, f64, Interval);

/// The interval to report for a linear contrast Σ wᵢ pᵢ of rates measured on the same tasks (a
/// success gap, what tools add, a factorial effect or interaction), each cell given as its weight
/// and its per-task (trials, passes), aligned task by task: [`mover`] from each rate's
/// [`success_rate`] interval with the rates' correlation over the tasks, so that cells which
/// move together (a task hard for both models, or for both levels of another factor) count as
/// such. The correlation of two cells is that of their tasks' residuals cᵢₜ − pᵢnᵢₜ (the cluster
/// estimate of the pooled rates' covariance), 0 where a cell has none (a rate at 0 or 1). Where
/// the contrast's own residuals Σ wᵢ(cᵢₜ − pᵢnᵢₜ)/Nᵢ are 0 on every task (each task's outcomes
/// cancel exactly, as two identical runs do), the correlation would remove every bit of width the
/// trials leave, so the rates are taken as independent there. `None` where a cell has no trials.
pub fn paired_contrast(cells: &[(f64, &[(usize, usize)])]) -> Option<Interval> {
    paired_contrast_at(cells, LEVEL)
}

/// [`paired_contrast`] at coverage `level` (0.95: the report's).
pub fn paired_contrast_at(cells: &[(f64, &[(usize, usize)])], level: f64) -> Option<Interval> {
    let rates: Vec<(f64, Interval)> = cells
        .iter()
        .map(|(_, t)| rate_at(t, level))
        .collect::<Option<_>>()?;
    let residuals: Vec<Vec<f64>> = cells
        .iter()
        .zip(&rates)
        .map(|((_, tasks), &(p, _))| {
            let n = totals(tasks).0 as f64;
            tasks
                .iter()
                .map(|&(tn, tc)| (tc as f64 - p * tn as f64) / n)
                .collect()
        })
        .collect();
    let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>();
    let spread: Vec<f64> = residuals.iter().map(|r| dot(r, r)).collect();
    let tasks = residuals.first().map_or(0, Vec::len);
    let own: f64 = (0..tasks)
        .map(|t| {
            let q: f64 = cells.iter().zip(&residuals).map(|(c, r)| c.0 * r[t]).sum();
            q * q
        })
        .sum();
    // The contrast's spread were the cells independent: the scale "no spread of its own" is read on.
    let apart: f64 = cells.iter().zip(&spread).map(|(c, s)| c.0 * c.0 * s).sum();
    let paired = own > 1e-12 * apart;
    let terms: Vec<Weighted> = cells
        .iter()
        .zip(rates)
        .map(|((w, _), (p, ci))| (*w, p, ci))
        .collect();
    Some(mover(&terms, |i, j| {
        let scale = (spread[i] * spread[j]).sqrt();
        if paired && scale > 0.0 {
            (dot(&residuals[i], &residuals[j]) / scale).clamp(-1.0, 1.0)
        } else {
            0.0
        }
    }))
}

/// The MOVER interval (Zou and Donner) of a linear contrast Σ wᵢ pᵢ from each rate's interval
/// and the rates' pairwise correlation `correlation(i, j)`: each bound moves from the point by
/// √(Σ eᵢ² + 2 Σᵢ<ⱼ sᵢsⱼ rᵢⱼ eᵢeⱼ), eᵢ = |wᵢ| times the distance from pᵢ to the bound of its
/// interval that moves the contrast that way (the lower of a positive term, the upper of a
/// negative one), sᵢ the sign of wᵢ; clipped to the range the contrast can take. With every
/// correlation 0 and weights +1 and −1 it is Newcombe's hybrid score interval of a difference.
/// It leaves the boundary wherever the rates' intervals do.
pub fn mover(terms: &[Weighted], correlation: impl Fn(usize, usize) -> f64) -> Interval {
    let point: f64 = terms.iter().map(|&(w, p, _)| w * p).sum();
    let reach = |down: bool| -> f64 {
        let e: Vec<f64> = terms
            .iter()
            .map(|&(w, p, ci)| {
                let toward_low = (w > 0.0) == down;
                w.abs() * if toward_low { p - ci.low } else { ci.high - p }
            })
            .collect();
        let mut sum: f64 = e.iter().map(|x| x * x).sum();
        for i in 0..e.len() {
            for j in i + 1..e.len() {
                let sign = (terms[i].0 * terms[j].0).signum();
                sum += 2.0 * sign * correlation(i, j) * e[i] * e[j];
            }
        }
        sum.max(0.0).sqrt()
    };
    let floor: f64 = terms.iter().map(|t| t.0.min(0.0)).sum();
    let ceiling: f64 = terms.iter().map(|t| t.0.max(0.0)).sum();
    Interval {
        low: (point - reach(true)).max(floor),
        high: (point + reach(false)).min(ceiling),
    }
}

/// The pooled rate of per-task (trials, passes) with its reported interval ([`success_rate`]);
/// `None` without trials.
pub fn rate(tasks: &[(usize, usize)]) -> Option<(f64, Interval)> {
    rate_at(tasks, LEVEL)
}

/// [`rate`] with its interval at coverage `level`.
fn rate_at(tasks: &[(usize, usize)], level: f64) -> Option<(f64, Interval)> {
    let (n, c) = totals(tasks);
    Some((c as f64 / n as f64, clustered_exact_at(tasks, level)?))
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
/// totals over the tasks both have: the [`paired_contrast`] of +1 large and −1 small; `None`
/// where a side has no trials there.
pub fn paired_gap(
    small: &BTreeMap<String, IdTotals>,
    large: &BTreeMap<String, IdTotals>,
) -> Option<Interval> {
    paired_contrast(&[
        (1.0, &shared_counts(large, small)),
        (-1.0, &shared_counts(small, large)),
    ])
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
    clustered_exact_at(tasks, LEVEL)
}

/// [`clustered_exact`] at coverage `level`.
fn clustered_exact_at(tasks: &[(usize, usize)], level: f64) -> Option<Interval> {
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
            (widening(t, level) * p * (1.0 - p) / v).clamp(1.0, nf)
        } else {
            nf
        }
    };
    Some(no_narrower_than_the_boundary(
        exact_at(p * n_eff, n_eff, level),
        t as f64,
        level,
    ))
}

/// A rate inside (0, 1) keeps at least the reach of the boundary's interval on the same tasks: its
/// low end no higher than all-pass's (`exact(T, T)`), its high end no lower than none-pass's. The
/// boundary counts each task once while an inside rate may count every trial, so without this
/// 142/144 could read 95%–100% beside 144/144 at 93%–100%: the better result with the wider
/// interval (docs/reference/metrics.md, "Intervals at the boundary").
fn no_narrower_than_the_boundary(i: Interval, tasks: f64, level: f64) -> Interval {
    let (all, none) = (exact_at(tasks, tasks, level), exact_at(0.0, tasks, level));
    Interval {
        low: i.low.min(all.low),
        high: i.high.max(none.high),
    }
}

/// Clopper–Pearson interval of `x` successes in `n` (both may be fractional): the beta quantiles
/// `B(α/2; x, n - x + 1)` and `B(1 - α/2; x + 1, n - x)`, 0 and 1 at the ends.
pub fn exact(x: f64, n: f64) -> Interval {
    exact_at(x, n, LEVEL)
}

/// [`exact`] at coverage `level`.
fn exact_at(x: f64, n: f64, level: f64) -> Interval {
    let a = (1.0 - level) / 2.0;
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
/// Kept per thread for the last few (q, df) asked: the planner asks the same one for every
/// simulated experiment of a design.
pub fn t_quantile(q: f64, df: f64) -> f64 {
    thread_local! {
        static SEEN: std::cell::RefCell<Vec<((u64, u64), f64)>> = const {
            std::cell::RefCell::new(Vec::new())
        };
    }
    let key = (q.to_bits(), df.to_bits());
    if let Some(t) = SEEN.with_borrow(|seen| seen.iter().find(|s| s.0 == key).map(|s| s.1)) {
        return t;
    }
    let t = bisect(0.0, 1e3, |t| {
        1.0 - 0.5 * inc_beta(df / (df + t * t), df / 2.0, 0.5) < q
    });
    SEEN.with_borrow_mut(|seen| {
        if seen.len() >= 16 {
            seen.remove(0);
        }
        seen.push((key, t));
    });
    t
}

/// The point of [lo, hi] where `below` turns false, by at most 100 halvings: the midpoint of the
/// last bracket. It stops early where a halving no longer moves the bracket (it has reached the
/// spacing of floats there, and every later halving would leave it as it is).
fn bisect(mut lo: f64, mut hi: f64, below: impl Fn(f64) -> bool) -> f64 {
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        let before = (lo, hi);
        if below(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
        if (lo, hi) == before {
            break;
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

/// The standard normal's `q`-quantile for q > 0.5: [`Z`] at the report's level, else by bisection
/// on [`normal_upper_tail`].
fn normal_quantile(q: f64) -> f64 {
    if q == 0.5 + LEVEL / 2.0 {
        return Z;
    }
    bisect(0.0, 40.0, |x| normal_upper_tail(x) > 1.0 - q)
}

/// The `q`-quantile of the Beta(a, b) distribution, by bisection on [`inc_beta`].
pub fn beta_quantile(q: f64, a: f64, b: f64) -> f64 {
    bisect(0.0, 1.0, |x| inc_beta(x, a, b) < q)
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
    fn bisection_stops_early_only_where_every_later_halving_would_change_nothing() {
        // The result of all 100 halvings, as the quantiles were computed before the early stop.
        let full = |below: &dyn Fn(f64) -> bool, (mut lo, mut hi): (f64, f64)| {
            for _ in 0..100 {
                let mid = 0.5 * (lo + hi);
                if below(mid) {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            0.5 * (lo + hi)
        };
        for (q, a, b) in [
            (0.025, 3.0, 8.0),
            (0.975, 0.5, 40.0),
            (1e-9, 1.0, 2.0),
            (0.5, 7.3, 7.3),
        ] {
            let f = |x: f64| inc_beta(x, a, b) < q;
            assert_eq!(
                beta_quantile(q, a, b).to_bits(),
                full(&f, (0.0, 1.0)).to_bits()
            );
        }
        for (q, df) in [(0.975, 5.0), (0.999, 23.0), (0.6, 1.0)] {
            let f = |t: f64| 1.0 - 0.5 * inc_beta(df / (df + t * t), df / 2.0, 0.5) < q;
            assert_eq!(t_quantile(q, df).to_bits(), full(&f, (0.0, 1e3)).to_bits());
            // Asked again: the kept value.
            assert_eq!(t_quantile(q, df).to_bits(), full(&f, (0.0, 1e3)).to_bits());
        }
    }

    #[test]
    fn t_quantiles_are_students() {
        // scipy.stats.t.ppf(0.975, 5) = 2.5706, (0.975, 23) = 2.0687.
        assert!(close(t_quantile(0.975, 5.0), 2.570_582, 1e-5));
        assert!(close(t_quantile(0.975, 23.0), 2.068_658, 1e-5));
        // scipy.stats.norm.ppf(0.995) = 2.5758293, (0.95) = 1.6448536.
        assert!(close(normal_quantile(0.995), 2.575_829_3, 1e-6));
        assert!(close(normal_quantile(0.95), 1.644_853_6, 1e-6));
        assert_eq!(normal_quantile(0.975), Z);
    }

    #[test]
    fn a_difference_at_the_boundary_leaves_it() {
        // 0 of 24 against 24 of 24: the bootstrap says +100 to +100 points.
        let d = paired_contrast(&[(1.0, &[(1, 1); 24]), (-1.0, &[(1, 0); 24])]).unwrap();
        assert!(d.high == 1.0 && d.low < 0.9 && d.low > 0.5, "{d:?}");
        // Both at 100%: Newcombe's ±(1 − 0.025^(1/T)), never the point 0.
        let same = paired_contrast(&[(1.0, &[(5, 5); 6]), (-1.0, &[(5, 5); 6])]).unwrap();
        let half = 1.0 - 0.025f64.powf(1.0 / 6.0);
        assert!(close(same.low, -half, 1e-9) && close(same.high, half, 1e-9));
    }

    #[test]
    fn uncorrelated_cells_move_each_bound_by_the_root_of_their_distances() {
        let mid = exact(12.0, 24.0);
        let half = 0.5 - mid.low;
        let i = mover(&[(1.0, 0.5, mid), (-1.0, 0.5, mid)], |_, _| 0.0);
        assert!(close(i.low, -(2f64).sqrt() * half, 1e-12), "{i:?}");
        // Four cells at 100% with weights ±1/2 (a main effect of 0 over two levels of another
        // factor): each bound moves by the root of four squared half-distances.
        let all = exact(6.0, 6.0);
        let cells = [0.5, -0.5, 0.5, -0.5].map(|w| (w, 1.0, all));
        let e = mover(&cells, |_, _| 0.0);
        let reach = (2.0 * (0.5 * (1.0 - all.low)).powi(2)).sqrt();
        assert!(close(e.low, -reach, 1e-12) && close(e.high, reach, 1e-12));
        // Perfectly correlated, opposite signs: the distances cancel.
        let c = mover(&[(1.0, 0.5, mid), (-1.0, 0.5, mid)], |_, _| 1.0);
        assert!(
            close(c.low, 0.0, 1e-12) && close(c.high, 0.0, 1e-12),
            "{c:?}"
        );
    }

    #[test]
    fn cells_that_move_together_narrow_a_gap_and_widen_an_effect_over_both_levels() {
        // Per task (trials, passes): the large model finds the same tasks hard as the small.
        let small = [
            (5, 0),
            (5, 1),
            (5, 2),
            (5, 2),
            (5, 3),
            (5, 1),
            (5, 0),
            (5, 3),
        ];
        let large = [
            (5, 2),
            (5, 3),
            (5, 5),
            (5, 4),
            (5, 5),
            (5, 3),
            (5, 2),
            (5, 5),
        ];
        let width = |i: Interval| i.high - i.low;
        let paired = paired_contrast(&[(1.0, &large), (-1.0, &small)]).unwrap();
        let terms: Vec<Weighted> = [(1.0, &large[..]), (-1.0, &small[..])]
            .iter()
            .map(|&(w, t)| {
                let (p, ci) = rate(t).unwrap();
                (w, p, ci)
            })
            .collect();
        let independent = mover(&terms, |_, _| 0.0);
        assert!(
            width(paired) < 0.8 * width(independent),
            "{paired:?} {independent:?}"
        );
        // The same two cells on one side of an effect (both +½, against two flat cells at 0%):
        // together they move the effect twice as far as independent cells would.
        let flat = [(5, 0); 8];
        let effect = [
            (0.5, &small[..]),
            (0.5, &large[..]),
            (-0.5, &flat),
            (-0.5, &flat),
        ];
        let together = paired_contrast(&effect).unwrap();
        let apart: Vec<Weighted> = effect
            .iter()
            .map(|&(w, t)| {
                let (p, ci) = rate(t).unwrap();
                (w, p, ci)
            })
            .collect();
        assert!(width(together) > width(mover(&apart, |_, _| 0.0)));
    }

    #[test]
    fn two_identical_runs_are_not_called_certain_to_agree() {
        // Every task's outcomes equal in both runs: the paired residuals cancel exactly, and the
        // correlation of 1 would leave the interval at the point 0.
        let tasks = [(5, 1), (5, 4), (5, 2), (5, 5), (5, 0), (5, 3)];
        let i = paired_contrast(&[(1.0, &tasks), (-1.0, &tasks)]).unwrap();
        let (p, ci) = rate(&tasks).unwrap();
        let independent = mover(&[(1.0, p, ci), (-1.0, p, ci)], |_, _| 0.0);
        assert_eq!(i, independent);
        assert!(i.low < -0.2 && i.high > 0.2, "{i:?}");
    }

    #[test]
    fn a_gap_on_six_tasks_keeps_its_coverage_where_the_paired_bootstrap_does_not() {
        // The paired bootstrap's worst cell (metrics.md): small at 50%, large at 95% on average,
        // each task's difficulty shared by both (rates uniform on 0–100% and 90–100%), 6 tasks of
        // 5 trials. The bootstrap covers the true gap of 45 points about 84% of the time.
        use crate::analysis::intervals::bootstrap::difference_bootstrap;
        use crate::analysis::intervals::mt19937::PyRandom;
        let mut rng = PyRandom::new(11);
        let totals = |counts: &[(usize, usize)]| -> BTreeMap<String, IdTotals> {
            let id = |i: usize, &(n, c): &(usize, usize)| {
                let t = IdTotals {
                    trials: n as f64,
                    passes: c as f64,
                    ..IdTotals::default()
                };
                (format!("{i}"), t)
            };
            counts.iter().enumerate().map(|(i, c)| id(i, c)).collect()
        };
        let (sims, truth) = (300, 0.45);
        let (mut reported, mut bootstrap) = (0, 0);
        for s in 0..sims {
            let (mut small, mut large) = (Vec::new(), Vec::new());
            for _ in 0..6 {
                let u = rng.random();
                for (side, p) in [(&mut small, u), (&mut large, 0.9 + 0.1 * u)] {
                    side.push((5, (0..5).filter(|_| rng.random() < p).count()));
                }
            }
            let (a, b) = (totals(&small), totals(&large));
            let covers = |i: Option<Interval>| i.is_some_and(|i| i.low <= truth && truth <= i.high);
            reported += usize::from(covers(paired_gap(&a, &b)));
            bootstrap += usize::from(covers(difference_bootstrap(&a, &b, 400, s)));
        }
        let share = |hits: usize| hits as f64 / sims as f64;
        assert!(share(reported) >= 0.94, "reported: {}", share(reported));
        assert!(share(bootstrap) < 0.9, "bootstrap: {}", share(bootstrap));
    }

    #[test]
    fn an_effect_on_six_tasks_keeps_its_coverage_where_the_paired_bootstrap_does_not() {
        // The bootstrap's worst effect cell (metrics.md): a 2 x 2 design with every cell at 50%,
        // 6 tasks of 10 trials per cell, no effect. The bootstrap of the contrast covers 0 about
        // 85% of the time.
        use crate::analysis::intervals::bootstrap::{ci95, for_each_resample};
        use crate::analysis::intervals::mt19937::PyRandom;
        let mut rng = PyRandom::new(5);
        let weights = [-0.5, -0.5, 0.5, 0.5];
        let sims = 300;
        let (mut reported, mut bootstrap) = (0, 0);
        for s in 0..sims {
            let cells: Vec<Vec<(usize, usize)>> = weights
                .iter()
                .map(|_| {
                    let mut play = || (10, (0..10).filter(|_| rng.random() < 0.5).count());
                    (0..6).map(|_| play()).collect()
                })
                .collect();
            let design: Vec<(f64, &[(usize, usize)])> = weights
                .iter()
                .zip(&cells)
                .map(|(w, c)| (*w, c.as_slice()))
                .collect();
            let mut draws = Vec::new();
            for_each_resample(6, 400, s, |sample| {
                let value = design.iter().map(|(w, counts)| {
                    let passes: usize = sample.iter().map(|&i| counts[i].1).sum();
                    w * passes as f64 / (10 * sample.len()) as f64
                });
                draws.push(value.sum::<f64>());
            });
            let covers = |i: Option<Interval>| i.is_some_and(|i| i.low <= 0.0 && 0.0 <= i.high);
            reported += usize::from(covers(paired_contrast(&design)));
            bootstrap += usize::from(covers(ci95(&mut draws)));
        }
        let share = |hits: usize| hits as f64 / sims as f64;
        assert!(share(reported) >= 0.94, "reported: {}", share(reported));
        assert!(share(bootstrap) < 0.9, "bootstrap: {}", share(bootstrap));
    }

    /// T tasks of k trials holding `c` passes spread as evenly as they go.
    fn spread(tasks: usize, k: usize, c: usize) -> Vec<(usize, usize)> {
        (0..tasks)
            .map(|i| (k, c / tasks + usize::from(i < c % tasks)))
            .collect()
    }

    #[test]
    fn no_rate_reads_surer_than_the_boundary_beside_it() {
        for (tasks, k) in [(24, 6), (48, 100), (6, 5), (2, 3)] {
            let n = tasks * k;
            let at = |c| success_rate(&spread(tasks, k, c)).expect("trials");
            let (none, all) = (at(0), at(n));
            for c in 1..n {
                let i = at(c);
                assert!(
                    i.low <= all.low,
                    "{tasks} x {k}: {c} passes {i:?}, all {all:?}"
                );
                assert!(
                    i.high >= none.high,
                    "{tasks} x {k}: {c} passes {i:?}, none {none:?}"
                );
            }
        }
        // The two cases a reader met: 142/144 beside 144/144, 4,797/4,800 beside 4,800/4,800.
        let (near, all) = (
            success_rate(&spread(24, 6, 142)),
            success_rate(&spread(24, 6, 144)),
        );
        assert!(near.unwrap().low <= all.unwrap().low);
        let near = success_rate(&spread(48, 100, 4797)).unwrap();
        assert!(near.low <= success_rate(&spread(48, 100, 4800)).unwrap().low);
    }
}
