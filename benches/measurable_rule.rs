//! False-positive rate of `passk compare`'s "measurable" rule, by simulation. Three runs of one
//! configuration are drawn from the same simulated model (`analysis::planning::replicates`: A, B, and A′ as
//! the noise run), so every metric called "measurable" is a false positive. The rule is run through
//! `compare` and `compare_with_noise` themselves; the share of metric verdicts called measurable is
//! printed with a 95% interval from resampling the comparisons (verdicts within one comparison are
//! correlated), beside the rules passk used before. docs/reference/metrics-validation.md quotes the figures ("Comparing
//! two runs").
//!
//! Run with `cargo bench --profile dev --bench measurable_rule` (optionally followed by the number
//! of simulated comparisons, default 200).

use passk::analysis::AnalysisOptions;
use passk::analysis::comparisons::compare::{MetricPair, RunComparison};
use passk::analysis::comparisons::paired_metrics::excludes_zero;
use passk::analysis::intervals::bootstrap::{ci95, for_each_resample};
use passk::analysis::planning::replicates::{TASKS, TRIALS, comparisons, verdicts};

/// The rule passk used first: |B − A| beyond the noise band alone.
fn beyond_band(p: &MetricPair) -> Option<bool> {
    Some((p.b? - p.a?).abs() > p.noise_band?)
}

/// The rule passk used next: the 95% interval excludes 0.
fn interval_95(p: &MetricPair) -> Option<bool> {
    p.a?;
    p.b?;
    Some(excludes_zero(p.difference_ci95.as_ref()?))
}

/// The Bonferroni interval alone, timing metrics judged like the others (passk's rule before
/// timing differences between runs were called not comparable).
fn bonferroni_timing_included(p: &MetricPair) -> Option<bool> {
    p.a?;
    p.b?;
    Some(excludes_zero(p.verdict_ci.as_ref()?))
}

/// The same with a noise run: beyond the band as well.
fn bonferroni_timing_included_and_band(p: &MetricPair) -> Option<bool> {
    Some(bonferroni_timing_included(p)? && beyond_band(p)?)
}

/// The 95% interval and, with a noise run, beyond the band.
fn interval_95_and_band(p: &MetricPair) -> Option<bool> {
    Some(interval_95(p)? && beyond_band(p)?)
}

/// One line: the share of verdicts called measurable, its interval over resampled comparisons,
/// and the share of comparisons calling any metric measurable.
fn line(label: &str, per: &[(usize, usize)]) {
    let share = |sample: &mut dyn Iterator<Item = &(usize, usize)>| {
        let (y, n) = sample.fold((0, 0), |(y, n), (a, b)| (y + a, n + b));
        y as f64 / n.max(1) as f64
    };
    let mut draws = Vec::new();
    for_each_resample(per.len(), 2_000, 0, |s| {
        draws.push(share(&mut s.iter().map(|&i| &per[i])));
    });
    let ci = ci95(&mut draws).expect("comparisons");
    let (y, n) = per.iter().fold((0, 0), |(y, n), (a, b)| (y + a, n + b));
    let any = per.iter().filter(|(y, _)| *y > 0).count();
    println!(
        "  {label:<44} {y:>5} of {n} measurable ({:.2}%, 95% CI {:.2}%-{:.2}%); not measurable {:.2}%; comparisons with any: {any} of {} ({:.1}%)",
        100.0 * y as f64 / n.max(1) as f64,
        100.0 * ci.low,
        100.0 * ci.high,
        100.0 - 100.0 * y as f64 / n.max(1) as f64,
        per.len(),
        100.0 * any as f64 / per.len().max(1) as f64
    );
}

fn main() {
    let sims: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(200);
    let opts = AnalysisOptions {
        resamples: 2_000,
        ..AnalysisOptions::default()
    };
    let runs = comparisons(sims, 11, &opts);
    let per = |pick: fn(
        &passk::analysis::planning::replicates::ReplicateComparison,
    ) -> &RunComparison,
               rule: fn(&MetricPair) -> Option<bool>| {
        runs.iter()
            .map(|r| verdicts(pick(r), rule))
            .collect::<Vec<_>>()
    };
    println!(
        "{sims} comparisons of replicates ({TASKS} tasks x {TRIALS} trials, {} resamples):",
        opts.resamples
    );
    line(
        "beyond the noise band alone (first rule)",
        &per(|r| &r.with_noise, beyond_band),
    );
    line(
        "95% interval excludes 0 (second rule)",
        &per(|r| &r.plain, interval_95),
    );
    line(
        "95% interval and beyond the band",
        &per(|r| &r.with_noise, interval_95_and_band),
    );
    line(
        "Bonferroni, timing judged too (third rule)",
        &per(|r| &r.plain, bonferroni_timing_included),
    );
    line(
        "Bonferroni, timing judged, beyond the band",
        &per(|r| &r.with_noise, bonferroni_timing_included_and_band),
    );
    line(
        "Bonferroni interval excludes 0 (rule)",
        &per(|r| &r.plain, |p| p.measurable),
    );
    line(
        "Bonferroni interval and beyond the band",
        &per(|r| &r.with_noise, |p| p.measurable),
    );
}
