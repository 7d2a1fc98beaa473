//! Checks `passk run --stop-when-decided` on experiments built from real records: the reference's
//! run 2 (`../shared/reference/.../results-run2`, 24 tasks x 5 trials x 2 models, a 27.5 pp gap),
//! read through `passk plan`'s `Pilot`.
//!
//! - **No difference.** Each experiment draws 24 tasks with replacement; each drawn task gets one
//!   of run 2's 48 per-task pass rates (either model's), the same for both models, so the true
//!   difference is 0. Rounds are played with that rate up to the k cap; the share of experiments
//!   that declare a difference must be at most alpha, at a cap of 5 and of 20 rounds.
//! - **A real difference.** Each experiment draws 24 tasks with replacement and, for each drawn
//!   task and model, 5 of that task's recorded trials with replacement. The fixed k = 5 design
//!   decides with the report's paired bootstrap interval (difference when it excludes 0); the
//!   stopping rule plays the same trials round by round and stops when decided. The median rounds
//!   used must be at most half of 5, and the two must decide the same way (a difference in the
//!   same direction, or none) in at least 95% of experiments.
//!
//! Run with `cargo bench --bench stop_validation` (skips where `../shared` is absent).
//! `PASSK_VALIDATION_EXPERIMENTS` (default 2,000) and `PASSK_VALIDATION_RESAMPLES` (default 2,000
//! bootstrap resamples per experiment) change the counts.

mod common;

use common::env_or;

use passk::analysis::intervals::bootstrap::{IdTotals, difference_bootstrap};
use passk::analysis::intervals::mt19937::PyRandom;
use passk::analysis::planning::pilot::Pilot;
use passk::sequence::{Decision, Rule, replay};
use std::collections::BTreeMap;

const RULE: Rule = Rule {
    alpha: 0.05,
    margin: 0.05,
};
const FIXED_K: usize = 5;

fn main() {
    let experiments = env_or("PASSK_VALIDATION_EXPERIMENTS", 2000);
    let resamples = env_or("PASSK_VALIDATION_RESAMPLES", 2000);
    let Some((pilot, _)) = common::reference_pilot() else {
        return;
    };
    let (small, large) = pilot.rates();
    println!(
        "reference run 2: {} tasks, {:.1}% vs {:.1}% ({:+.1} pp); alpha {}, margin {} pp",
        pilot.tasks.len(),
        100.0 * small,
        100.0 * large,
        100.0 * (large - small),
        RULE.alpha,
        100.0 * RULE.margin
    );
    for cap in [FIXED_K, 20] {
        no_difference(&pilot, experiments, cap);
    }
    real_difference(&pilot, experiments, resamples);
}

/// A difference declared where there is none, over experiments with equal per-task rates.
fn no_difference(pilot: &Pilot, experiments: usize, cap: usize) {
    let rates: Vec<f64> = pilot
        .tasks
        .iter()
        .flat_map(|t| [t.small.rate, t.large.rate])
        .collect();
    let mut rng = PyRandom::new(1000 + cap as u64);
    let (mut wrong, mut equivalent, mut rounds_used) = (0, 0, 0);
    for _ in 0..experiments {
        let task_rates: Vec<f64> = (0..pilot.tasks.len())
            .map(|_| rates[rng.randbelow(rates.len())])
            .collect();
        let rounds: Vec<Vec<f64>> = (0..cap)
            .map(|_| {
                task_rates
                    .iter()
                    .map(|&p| pass(&mut rng, p) - pass(&mut rng, p))
                    .collect()
            })
            .collect();
        let states = replay(RULE, &rounds);
        let last = states.last().map_or(Decision::Continue, |s| s.decision);
        wrong += usize::from(matches!(
            last,
            Decision::LargeBetter | Decision::SmallBetter
        ));
        equivalent += usize::from(last == Decision::Equivalent);
        rounds_used += states.len();
    }
    let rate = wrong as f64 / experiments as f64;
    println!(
        "no difference, k cap {cap}: {wrong} of {experiments} experiments declared a difference \
         ({:.2}%, target <= {:.0}%: {}); {:.1}% stopped as equivalent; mean rounds {:.2}",
        100.0 * rate,
        100.0 * RULE.alpha,
        if rate <= RULE.alpha { "met" } else { "MISSED" },
        100.0 * equivalent as f64 / experiments as f64,
        rounds_used as f64 / experiments as f64
    );
}

fn pass(rng: &mut PyRandom, p: f64) -> f64 {
    f64::from(u8::from(rng.random() < p))
}

/// The same direction, or no difference, from the sequence and from the fixed-k bootstrap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    LargeBetter,
    SmallBetter,
    None,
}

/// One experiment resampled from the pilot: `trials[slot][model][round]` for 24 tasks drawn with
/// replacement, each model's k trials drawn with replacement from the task's recorded ones.
fn draw_experiment(pilot: &Pilot, rng: &mut PyRandom) -> Vec<[Vec<bool>; 2]> {
    (0..pilot.tasks.len())
        .map(|_| {
            let task = &pilot.tasks[rng.randbelow(pilot.tasks.len())];
            [&task.small, &task.large].map(|side| {
                (0..FIXED_K)
                    .map(|_| side.trials[rng.randbelow(side.trials.len())].passed)
                    .collect()
            })
        })
        .collect()
}

/// The sequence's verdict on the experiment played round by round, and the rounds it used.
fn sequential_verdict(trials: &[[Vec<bool>; 2]]) -> (Verdict, usize) {
    let rounds: Vec<Vec<f64>> = (0..FIXED_K)
        .map(|r| {
            trials
                .iter()
                .map(|[s, l]| f64::from(u8::from(l[r])) - f64::from(u8::from(s[r])))
                .collect()
        })
        .collect();
    let states = replay(RULE, &rounds);
    let verdict = match states.last().map(|s| s.decision) {
        Some(Decision::LargeBetter) => Verdict::LargeBetter,
        Some(Decision::SmallBetter) => Verdict::SmallBetter,
        _ => Verdict::None,
    };
    (verdict, states.len())
}

/// The fixed k design's verdict: the report's paired bootstrap interval of the difference.
fn fixed_verdict(trials: &[[Vec<bool>; 2]], resamples: usize, seed: u64) -> Verdict {
    let totals = |m: usize| -> BTreeMap<String, IdTotals> {
        trials
            .iter()
            .enumerate()
            .map(|(slot, t)| {
                let passes = t[m].iter().filter(|p| **p).count();
                let totals = IdTotals {
                    trials: t[m].len() as f64,
                    passes: passes as f64,
                    ..IdTotals::default()
                };
                (format!("{slot:04}"), totals)
            })
            .collect()
    };
    match difference_bootstrap(&totals(0), &totals(1), resamples, seed) {
        Some(ci) if ci.low > 0.0 => Verdict::LargeBetter,
        Some(ci) if ci.high < 0.0 => Verdict::SmallBetter,
        _ => Verdict::None,
    }
}

/// Rounds used and agreement with the fixed k = 5 design, over experiments resampled from run 2.
fn real_difference(pilot: &Pilot, experiments: usize, resamples: usize) {
    let mut rng = PyRandom::new(2024);
    let mut rounds_used = Vec::with_capacity(experiments);
    let (mut same, mut seq_decided, mut fixed_decided) = (0, 0, 0);
    for e in 0..experiments {
        let trials = draw_experiment(pilot, &mut rng);
        let (sequential, used) = sequential_verdict(&trials);
        rounds_used.push(used);
        let fixed = fixed_verdict(&trials, resamples, e as u64);
        same += usize::from(sequential == fixed);
        seq_decided += usize::from(sequential != Verdict::None);
        fixed_decided += usize::from(fixed != Verdict::None);
    }
    report_real(&mut rounds_used, same, seq_decided, fixed_decided);
}

/// Prints the figures of [`real_difference`] against their targets.
fn report_real(rounds_used: &mut [usize], same: usize, seq_decided: usize, fixed_decided: usize) {
    let experiments = rounds_used.len();
    rounds_used.sort_unstable();
    let median = rounds_used[rounds_used.len() / 2] as f64;
    let mean = rounds_used.iter().sum::<usize>() as f64 / experiments as f64;
    let agree = same as f64 / experiments as f64;
    let histogram: Vec<String> = (1..=FIXED_K)
        .map(|r| {
            let n = rounds_used.iter().filter(|&&u| u == r).count();
            format!("{r}: {:.1}%", 100.0 * n as f64 / experiments as f64)
        })
        .collect();
    println!(
        "resampled run 2, k cap {FIXED_K}: median rounds {median} (target <= {}: {}), mean {mean:.2}; \
         rounds used {}",
        FIXED_K as f64 / 2.0,
        if median <= FIXED_K as f64 / 2.0 {
            "met"
        } else {
            "MISSED"
        },
        histogram.join(", ")
    );
    println!(
        "same decision as the fixed k = {FIXED_K} bootstrap in {same} of {experiments} \
         ({:.1}%, target >= 95%: {}); sequence declared a difference in {:.1}%, fixed design in {:.1}%",
        100.0 * agree,
        if agree >= 0.95 { "met" } else { "MISSED" },
        100.0 * seq_decided as f64 / experiments as f64,
        100.0 * fixed_decided as f64 / experiments as f64
    );
}
