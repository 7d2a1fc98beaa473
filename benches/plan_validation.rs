//! Checks `passk plan` against experiments resampled from real records: the reference's run 2
//! (`../shared/reference/.../results-run2`, 24 tasks x 5 trials x 2 models, a 27.5 pp gap).
//!
//! The power to predict, for each k, is the power observed when experiments are built from all
//! of run 2's records: 24 tasks drawn with replacement, for each drawn task and model k of that
//! task's recorded trials drawn with replacement, and the report's own paired bootstrap
//! (`analysis::bootstrap`) run on them, seeded as the report seeds it.
//!
//! Three pilots predict it:
//! - run 2 itself (in sample: the planner's model is this very resampling, so this checks the
//!   implementation, not the prediction);
//! - run 2's first two trials of every task (out of sample: a cheap pilot predicting what five
//!   trials show);
//! - run 1 (out of sample: another run of the same models and tasks, a week earlier, at router
//!   temperature 0.7 and with its graders of the time), at its own per-task rates, and with the
//!   difference to detect stated as run 2's (`--difference 27.5`).
//!
//! Run with `cargo bench --bench plan_validation` (skips where `../shared` is absent).
//! `PASSK_VALIDATION_EXPERIMENTS` and `PASSK_VALIDATION_RESAMPLES` change the counts (defaults
//! 1,000 experiments and 2,000 resamples per experiment).

mod common;

use common::env_or;

use passk::analysis::bootstrap::{IdTotals, difference_bootstrap};
use passk::analysis::mt19937::PyRandom;
use passk::analysis::plan::{Pilot, PlanOptions, Question, plan};
use passk::runner::record::ConversationRecord;
use std::collections::BTreeMap;

const KS: [usize; 6] = [1, 2, 3, 4, 5, 8];

/// Trials of run 2 a cheap pilot keeps per task.
const PILOT_TRIALS: u32 = 2;

fn main() {
    let experiments = env_or("PASSK_VALIDATION_EXPERIMENTS", 1000);
    let resamples = env_or("PASSK_VALIDATION_RESAMPLES", 2000);
    let Some((manifest, run2)) = common::reference_run("results-run2") else {
        return;
    };
    let Some((manifest1, run1)) = common::reference_run("results") else {
        return;
    };
    let first: Vec<ConversationRecord> = run2
        .iter()
        .filter(|c| c.trial < PILOT_TRIALS)
        .cloned()
        .collect();
    let own = Question::Difference { stated: None };
    let run1_pilot = common::store_pilot("run 1", &manifest1, &run1);
    let full = common::store_pilot("run 2", &manifest, &run2);
    let trials = trials_by_task(&run2, &full.small, &full.large);
    let gap = {
        let (s, l) = full.rates();
        l - s
    };
    let pilots = [
        ("run 2 (in sample)", full.clone(), own),
        (
            "run 2 trials 0-1",
            common::store_pilot("run 2, trials 0-1", &manifest, &first),
            own,
        ),
        ("run 1", run1_pilot.clone(), own),
        (
            "run 1 at run 2's gap",
            run1_pilot,
            Question::Difference { stated: Some(gap) },
        ),
    ];
    let truth: Vec<f64> = KS
        .iter()
        .map(|&k| resampled_power(&trials, k, experiments, resamples, 7 + k as u64))
        .collect();
    for (_, p, _) in pilots.iter().take(3) {
        let (s, l) = p.rates();
        println!(
            "pilot {}: {} tasks, {} {:.1}%, {} {:.1}%",
            p.source,
            p.tasks.len(),
            p.small,
            100.0 * s,
            p.large,
            100.0 * l
        );
    }
    let names: Vec<&str> = pilots.iter().map(|p| p.0).collect();
    println!(
        "\nk  resampled run 2 | planner (minus resampled) from: {}",
        names.join(" | ")
    );
    let predicted: Vec<Vec<f64>> = pilots
        .iter()
        .map(|(_, p, q)| predicted_power(p, *q, experiments, resamples))
        .collect();
    for (i, k) in KS.iter().enumerate() {
        let cells: Vec<String> = predicted
            .iter()
            .map(|p| {
                format!(
                    "{:>6.1}% ({:+5.1})",
                    100.0 * p[i],
                    100.0 * (p[i] - truth[i])
                )
            })
            .collect();
        println!("{k:<2} {:>14.1}% | {}", 100.0 * truth[i], cells.join("  "));
    }
    for ((name, _, _), power) in pilots.iter().zip(&predicted) {
        let worst = power
            .iter()
            .zip(&truth)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        println!(
            "planner from {name}: largest difference {:.1} pp ({})",
            100.0 * worst,
            if worst <= 0.05 {
                "within 5 points"
            } else {
                "OUTSIDE 5 points"
            }
        );
    }
    println!("({experiments} experiments per k and pilot, {resamples} resamples each)");
}

/// The planner's power at each k of [`KS`], from `pilot`.
fn predicted_power(
    pilot: &Pilot,
    question: Question,
    experiments: usize,
    resamples: usize,
) -> Vec<f64> {
    let opts = PlanOptions {
        ks: KS.to_vec(),
        simulations: experiments,
        resamples,
        ..PlanOptions::default()
    };
    let plan = plan(pilot, question, &opts).expect("plan");
    plan.rows.iter().map(|r| r.power).collect()
}

/// Each task's recorded verdicts, per model (small, large), tasks both models ran.
fn trials_by_task(
    conversations: &[ConversationRecord],
    small: &str,
    large: &str,
) -> Vec<(Vec<bool>, Vec<bool>)> {
    let mut by: BTreeMap<&str, (Vec<bool>, Vec<bool>)> = BTreeMap::new();
    for c in conversations.iter().filter(|c| c.outcome.is_graded()) {
        let e = by.entry(c.task.as_str()).or_default();
        if c.model == small {
            e.0.push(c.verdict.passed);
        } else if c.model == large {
            e.1.push(c.verdict.passed);
        }
    }
    by.into_values()
        .filter(|(a, b)| !a.is_empty() && !b.is_empty())
        .collect()
}

/// Share of experiments built from the recorded trials whose report interval of the success
/// difference lies above 0.
fn resampled_power(
    tasks: &[(Vec<bool>, Vec<bool>)],
    k: usize,
    experiments: usize,
    resamples: usize,
    seed: u64,
) -> f64 {
    let mut rng = PyRandom::new(seed);
    let mut settled = 0;
    for _ in 0..experiments {
        let (mut small, mut large) = (BTreeMap::new(), BTreeMap::new());
        for slot in 0..tasks.len() {
            let (a, b) = &tasks[rng.randbelow(tasks.len())];
            let mut draw = |trials: &[bool]| {
                let passes = (0..k)
                    .filter(|_| trials[rng.randbelow(trials.len())])
                    .count();
                IdTotals {
                    trials: k as f64,
                    passes: passes as f64,
                    ..IdTotals::default()
                }
            };
            let id = format!("{slot:04}");
            small.insert(id.clone(), draw(a));
            large.insert(id, draw(b));
        }
        if difference_bootstrap(&small, &large, resamples, 0).is_some_and(|ci| ci.low > 0.0) {
            settled += 1;
        }
    }
    settled as f64 / experiments as f64
}
