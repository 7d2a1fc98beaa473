//! Checks `passk plan` against experiments resampled from real records: the reference's run 2
//! (`../shared/reference/.../results-run2`, 24 tasks x 5 trials x 2 models, a 27.5 pp gap).
//!
//! The power to predict, for each k, is the power observed when experiments are built from all
//! of run 2's records: 24 tasks drawn with replacement, for each drawn task and model k of that
//! task's recorded trials drawn with replacement, and the report's own interval of the gap
//! (`analysis::intervals::interval::paired_gap`) taken on them.
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
//! Then the assurance, over many pilots: each a fresh two-trial pilot of run 2 (for every task
//! and model, two of its recorded trials drawn without replacement), planned at k = 2 and 5. For
//! each it compares the point power and the assurance, before and after its bias correction, with
//! the resampled power, and reports the error averaged over pilots with its spread (10th-90th
//! percentile over pilots), over all pilots and over the quarter whose gap came out smallest, how
//! often the (corrected) assurance interval holds the resampled power, and how often the
//! too-small warning fires.
//!
//! Run with `cargo bench --profile dev --bench plan_validation` (skips where `../shared` is
//! absent). `PASSK_VALIDATION_EXPERIMENTS` changes the experiments per k and pilot (default
//! 1,000),
//! `PASSK_VALIDATION_OBSERVED_EXPERIMENTS` the experiments behind the resampled power the plans
//! are judged against (default: as many as the plans simulate; the figure every error is measured
//! from, so worth more), `PASSK_VALIDATION_PILOTS` the number of pilots (default 40) and
//! `PASSK_VALIDATION_DRAWS` the resampled pilots per plan (default 20). Each mean error is
//! printed with its standard error over the pilots.

mod common;

use common::env_or;

use passk::analysis::intervals::bootstrap::IdTotals;
use passk::analysis::intervals::interval;
use passk::analysis::intervals::mt19937::PyRandom;
use passk::analysis::planning::pilot::Pilot;
use passk::analysis::planning::power::{PlanOptions, Question, plan};
use passk::runner::record::ConversationRecord;
use std::collections::BTreeMap;

const KS: [usize; 6] = [1, 2, 3, 4, 5, 8];

/// Trials of run 2 a cheap pilot keeps per task.
const PILOT_TRIALS: u32 = 2;

fn main() {
    let experiments = env_or("PASSK_VALIDATION_EXPERIMENTS", 1000);
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
    let observed_experiments = env_or("PASSK_VALIDATION_OBSERVED_EXPERIMENTS", experiments);
    let truth: Vec<f64> = KS
        .iter()
        .map(|&k| resampled_power(&trials, k, observed_experiments, 7 + k as u64))
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
        .map(|(_, p, q)| predicted_power(p, *q, experiments))
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
    println!(
        "({experiments} experiments per k and pilot, {observed_experiments} for the resampled \
         power)"
    );
    let many = env_or("PASSK_VALIDATION_PILOTS", 40);
    let draws = env_or("PASSK_VALIDATION_DRAWS", 20);
    let observed: Vec<(usize, f64)> = KS
        .iter()
        .zip(&truth)
        .filter(|(k, _)| MANY_KS.contains(k))
        .map(|(&k, &t)| (k, t))
        .collect();
    let scale = Scale { experiments, draws };
    assurance_over_pilots(&manifest, &run2, &observed, many, &scale);
}

/// Trials per task the many pilots keep, and the designs they plan.
const MANY_KS: [usize; 2] = [2, 5];

/// The simulation's counts.
struct Scale {
    experiments: usize,
    draws: usize,
}

/// One pilot's gap and, per k of [`MANY_KS`], what its plan predicts.
struct PilotPlan {
    gap: f64,
    predicted: Vec<Predicted>,
    too_small: bool,
    /// The k recommended (by assurance), if any design reaches 80%.
    recommended: Option<usize>,
}

/// One design's prediction from one pilot.
struct Predicted {
    /// Power at the pilot's own rates.
    power: f64,
    /// The assurance, corrected for its bias, and its interval.
    mean: f64,
    low: f64,
    high: f64,
    /// The assurance before the correction.
    uncorrected: f64,
}

/// Plans from `count` fresh two-trial pilots of run 2 and prints the prediction errors against
/// `observed` (k, resampled power).
fn assurance_over_pilots(
    manifest: &passk::runner::record::Manifest,
    run2: &[ConversationRecord],
    observed: &[(usize, f64)],
    count: usize,
    scale: &Scale,
) {
    let mut rng = PyRandom::new(2024);
    let plans: Vec<PilotPlan> = (0..count)
        .map(|i| {
            let records = two_trial_pilot(run2, &mut rng);
            let pilot = common::store_pilot(&format!("pilot {i}"), manifest, &records);
            let (s, l) = pilot.rates();
            let opts = PlanOptions {
                ks: MANY_KS.to_vec(),
                simulations: scale.experiments,
                seed: i as u64,
                assurance_draws: scale.draws,
                ..PlanOptions::default()
            };
            let plan = plan(&pilot, Question::Difference { stated: None }, &opts).expect("plan");
            PilotPlan {
                gap: l - s,
                predicted: plan
                    .rows
                    .iter()
                    .map(|r| {
                        let a = r.assurance.expect("a pilot run has trials to resample");
                        Predicted {
                            power: r.power,
                            mean: a.mean,
                            low: a.low,
                            high: a.high,
                            uncorrected: a.uncorrected,
                        }
                    })
                    .collect(),
                too_small: !plan.too_small.is_empty(),
                recommended: plan.recommended.as_ref().map(|r| r.k),
            }
        })
        .collect();
    let mut by_gap: Vec<&PilotPlan> = plans.iter().collect();
    by_gap.sort_by(|a, b| a.gap.total_cmp(&b.gap));
    let small_gap = &by_gap[..(count / 4).max(1)];
    println!(
        "\n{count} two-trial pilots of run 2 (gaps {:+.1} to {:+.1} pp; the smallest quarter up to \
         {:+.1} pp); {} say they are too small to choose, {} of the smallest-gap quarter",
        100.0 * by_gap[0].gap,
        100.0 * by_gap[count - 1].gap,
        100.0 * small_gap[small_gap.len() - 1].gap,
        plans.iter().filter(|p| p.too_small).count(),
        small_gap.iter().filter(|p| p.too_small).count()
    );
    let observed_k: Vec<String> = observed
        .iter()
        .map(|(k, t)| format!("k = {k} {:.1}%", 100.0 * t))
        .collect();
    let choices: Vec<String> = MANY_KS
        .iter()
        .map(Some)
        .chain([None])
        .map(|want| {
            let chose: Vec<&PilotPlan> = plans
                .iter()
                .filter(|p| p.recommended.as_ref() == want)
                .collect();
            format!(
                "{} {} ({} too small)",
                want.map_or("none reaching it".to_string(), |k| format!("k = {k}")),
                chose.len(),
                chose.iter().filter(|p| p.too_small).count()
            )
        })
        .collect();
    println!(
        "recommended for 80% (observed {}): {}",
        observed_k.join(", "),
        choices.join(", ")
    );
    println!(
        "k  observed | pilots | point power: mean error [10th-90th] | assurance before the \
         correction | assurance: mean error [10th-90th] | observed inside 10th-90th"
    );
    for (j, &(k, truth)) in observed.iter().enumerate() {
        for (name, set) in [("all", by_gap.as_slice()), ("small gap", small_gap)] {
            let errors = |f: fn(&Predicted) -> f64| -> Vec<f64> {
                set.iter().map(|p| f(&p.predicted[j]) - truth).collect()
            };
            let inside = set
                .iter()
                .filter(|p| (p.predicted[j].low..=p.predicted[j].high).contains(&truth))
                .count();
            println!(
                "{k:<2} {:>7.1}% | {name:<9} | {} | {} | {} | {inside}/{}",
                100.0 * truth,
                spread(&errors(|p| p.power)),
                spread(&errors(|p| p.uncorrected)),
                spread(&errors(|p| p.mean)),
                set.len()
            );
        }
    }
    println!(
        "({} experiments per design and pilot, shared among {} resampled pilots for the assurance; \
         the bias correction's 2 x {} experiments)",
        scale.experiments, scale.draws, scale.experiments
    );
}

/// "mean (± its standard error) [10th-90th]" of errors, in percentage points.
fn spread(errors: &[f64]) -> String {
    let mut sorted = errors.to_vec();
    sorted.sort_by(f64::total_cmp);
    let at = |q: f64| sorted[(q * (sorted.len() - 1) as f64).round() as usize];
    let mean = errors.iter().sum::<f64>() / errors.len() as f64;
    let n = errors.len() as f64;
    let sd = (errors.iter().map(|e| (e - mean).powi(2)).sum::<f64>() / (n - 1.0).max(1.0)).sqrt();
    format!(
        "{:+6.1} pp (± {:.1}) [{:+.1} to {:+.1}]",
        100.0 * mean,
        100.0 * sd / n.sqrt(),
        100.0 * at(0.1),
        100.0 * at(0.9)
    )
}

/// A fresh pilot of run 2: for every task and model, [`PILOT_TRIALS`] of its recorded graded
/// trials, drawn without replacement.
fn two_trial_pilot(run2: &[ConversationRecord], rng: &mut PyRandom) -> Vec<ConversationRecord> {
    let mut by: BTreeMap<(&str, &str), Vec<&ConversationRecord>> = BTreeMap::new();
    for c in run2.iter().filter(|c| c.outcome.is_graded()) {
        by.entry((c.model.as_str(), c.task.as_str()))
            .or_default()
            .push(c);
    }
    let mut out = Vec::new();
    for mut trials in by.into_values() {
        for _ in 0..(PILOT_TRIALS as usize).min(trials.len()) {
            let c = trials.swap_remove(rng.randbelow(trials.len()));
            out.push(c.clone());
        }
    }
    out
}

/// The planner's power at each k of [`KS`], from `pilot`.
fn predicted_power(pilot: &Pilot, question: Question, experiments: usize) -> Vec<f64> {
    let opts = PlanOptions {
        ks: KS.to_vec(),
        simulations: experiments,
        assurance_draws: 0,
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
        if interval::paired_gap(&small, &large).is_some_and(|ci| ci.low > 0.0) {
            settled += 1;
        }
    }
    settled as f64 / experiments as f64
}
