//! Checks `passk plan` against experiments resampled from real records: the reference's run 2
//! (`../shared/reference/.../results-run2`, 24 tasks x 5 trials x 2 models, a 27.5 pp gap).
//!
//! For each k, the planner's predicted power (its own simulation at the pilot's per-task rates) is
//! set beside the power observed when experiments are built from the records themselves: 24 tasks
//! drawn with replacement, for each drawn task and model k of that task's recorded trials drawn
//! with replacement, and the report's own paired bootstrap (`analysis::bootstrap`) run on them,
//! seeded as the report seeds it. The two must agree within 5 points at every k.
//!
//! Run with `cargo bench --bench plan_validation` (skips where `../shared` is absent).
//! `PASSK_VALIDATION_EXPERIMENTS` and `PASSK_VALIDATION_RESAMPLES` change the counts (defaults
//! 1,000 experiments and 2,000 resamples per experiment).

mod common;

use common::env_or;

use passk::analysis::bootstrap::{IdTotals, difference_bootstrap};
use passk::analysis::mt19937::PyRandom;
use passk::analysis::plan::{PlanOptions, Question, plan};
use passk::runner::record::ConversationRecord;
use std::collections::BTreeMap;

const KS: [usize; 6] = [1, 2, 3, 4, 5, 8];

fn main() {
    let experiments = env_or("PASSK_VALIDATION_EXPERIMENTS", 1000);
    let resamples = env_or("PASSK_VALIDATION_RESAMPLES", 2000);
    let Some((pilot, conversations)) = common::reference_pilot() else {
        return;
    };
    let opts = PlanOptions {
        ks: KS.to_vec(),
        simulations: experiments,
        resamples,
        ..PlanOptions::default()
    };
    let predicted = plan(&pilot, Question::Difference { stated: None }, &opts).expect("plan");
    let trials = trials_by_task(&conversations, &pilot.small, &pilot.large);
    println!("k  planner  resampled records  |difference|");
    let mut worst: f64 = 0.0;
    for (row, k) in predicted.rows.iter().zip(KS) {
        let observed = resampled_power(&trials, k, experiments, resamples, 7 + k as u64);
        let gap = (row.power - observed).abs();
        worst = worst.max(gap);
        println!(
            "{k:<2} {:>7.1}% {:>17.1}% {:>12.1} pp",
            100.0 * row.power,
            100.0 * observed,
            100.0 * gap
        );
    }
    println!(
        "largest difference {:.1} pp over {experiments} experiments per k ({resamples} resamples each): {}",
        100.0 * worst,
        if worst <= 0.05 {
            "within 5 points"
        } else {
            "OUTSIDE 5 points"
        }
    );
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
