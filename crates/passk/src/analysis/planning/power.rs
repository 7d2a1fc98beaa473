//! Power planning (`passk plan`): how many trials per task, and how many tasks, an experiment needs
//! to settle a question, with the GPU time that costs.
//!
//! The answer comes from simulation, not from a binomial formula: trials of one task are
//! correlated (a task one model finds hard, it finds hard every time), and a formula that treats
//! every trial as independent overstates the power. Each simulated experiment draws its tasks with
//! replacement from the pilot's tasks, plays k trials per task and model as Bernoulli draws at that
//! task's pilot pass rate (tokens drawn from the pilot's trials of that task with the same verdict),
//! and then asks the question the way the report answers it: the report's interval of the success
//! gap over the drawn tasks ([`interval::paired_gap`]), or for the break-even a paired percentile
//! bootstrap over them (docs/reference/metrics-validation.md, "Power planning"). Power is the share of simulated
//! experiments in which the interval settles the question; the same designs are also simulated
//! with no difference at all, to show how often the interval wrongly declares one.

use crate::analysis::intervals::bootstrap::for_each_fresh_resample;
use crate::analysis::intervals::interval;
use crate::analysis::intervals::mt19937::PyRandom;
use crate::analysis::planning::assurance::{self, Assurance, has_trials};
use crate::analysis::planning::pilot::{Pilot, PilotTask, PlanError, tokens_like};
use serde::{Deserialize, Serialize};

/// Fewer pilot tasks than this, and the pilot is too small to choose a design.
pub const MIN_TASKS: usize = 10;
/// Fewer graded trials than this of either model on some task, and the pilot is too small.
pub const MIN_TRIALS: usize = 2;

/// What an experiment must settle.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Question {
    /// The paired interval of the success difference (large - small) excludes 0, on the side of
    /// the true difference.
    Difference {
        /// The true difference to simulate (large - small, a fraction); `None`: the pilot's own
        /// per-task rates, so its observed difference.
        stated: Option<f64>,
    },
    /// The interval of the break-even price ratio lies wholly below this ratio.
    BreakEvenBelow {
        /// The ratio.
        ratio: f64,
    },
}

/// How the planner simulates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanOptions {
    /// Trials per task to try.
    pub ks: Vec<usize>,
    /// Task counts to try (tasks are drawn with replacement from the pilot's).
    pub task_counts: Vec<usize>,
    /// Two-sided level of the intervals (0.05: 95% intervals, as the report's).
    pub alpha: f64,
    /// Power wanted (for the recommendation).
    pub power: f64,
    /// Simulated experiments per design.
    pub simulations: usize,
    /// Bootstrap resamples per simulated experiment of the break-even question (a difference is
    /// judged by the report's interval of the gap, which does not resample).
    pub resamples: usize,
    /// Seed of the simulation.
    pub seed: u64,
    /// Resampled pilots the assurance averages over (0: point power only).
    #[serde(default)]
    pub assurance_draws: usize,
}

impl Default for PlanOptions {
    fn default() -> Self {
        PlanOptions {
            ks: vec![1, 2, 3, 4, 5, 6, 8, 10],
            task_counts: Vec::new(),
            alpha: 0.05,
            power: 0.8,
            simulations: 1000,
            resamples: 1000,
            seed: 0,
            assurance_draws: 20,
        }
    }
}

impl PlanOptions {
    /// Refuses options the simulation cannot honour.
    pub fn validate(&self) -> Result<(), PlanError> {
        let bad = |m: &str| Err(PlanError::Invalid(m.to_string()));
        if !(self.alpha > 0.0 && self.alpha < 1.0) {
            return bad("--alpha must lie strictly between 0 and 1");
        }
        if !(self.power > 0.0 && self.power < 1.0) {
            return bad("--power must lie strictly between 0 and 1");
        }
        if self.ks.is_empty() || self.ks.contains(&0) || self.ks.iter().any(|&k| k > 1000) {
            return bad("--k takes trial counts from 1 to 1000");
        }
        if self.task_counts.contains(&0) || self.task_counts.iter().any(|&t| t > 100_000) {
            return bad("--tasks takes task counts from 1 to 100000");
        }
        if !(10..=1_000_000).contains(&self.simulations) {
            return bad("--simulations must lie in 10..=1000000");
        }
        if !(10..=1_000_000).contains(&self.resamples) {
            return bad("--resamples must lie in 10..=1000000");
        }
        if self.assurance_draws == 1 || self.assurance_draws > 10_000 {
            return bad("--assurance-draws must be 0 or lie in 2..=10000");
        }
        Ok(())
    }
}

/// One design: tasks x k, and what simulation says of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DesignRow {
    /// Tasks in the experiment.
    pub tasks: usize,
    /// Trials per task and model.
    pub k: usize,
    /// Share of simulated experiments that settle the question.
    pub power: f64,
    /// Share of simulated experiments with no true difference whose interval still excludes 0
    /// (difference questions only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub false_positive: Option<f64>,
    /// Expected GPU seconds (both models), from the pilot's seconds per conversation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_seconds: Option<f64>,
    /// Power averaged over resampled pilots, with its 10th-90th percentile interval (pilot
    /// runs only: stated rates carry no uncertainty).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub assurance: Option<Assurance>,
}

/// The planner's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// Where the pilot came from.
    pub source: String,
    /// The smaller model.
    pub small: String,
    /// The larger model.
    pub large: String,
    /// Tasks in the pilot.
    pub pilot_tasks: usize,
    /// The pilot's mean pass rates (small, large).
    pub pilot_rates: (f64, f64),
    /// What is asked.
    pub question: Question,
    /// How it was simulated.
    pub options: PlanOptions,
    /// One row per design, by tasks then k.
    pub rows: Vec<DesignRow>,
    /// The design with the fewest conversations that reaches the wanted power (by assurance
    /// when the rows carry it, else by point power).
    pub recommended: Option<DesignRow>,
    /// What the recommendation compares with the wanted power: "assurance" or "power".
    pub recommended_by: String,
    /// Why the pilot is too small to choose a design (empty when it is not).
    pub too_small: Vec<String>,
}

/// Simulates every design of `opts` for `question` on `pilot`.
pub fn plan(pilot: &Pilot, question: Question, opts: &PlanOptions) -> Result<Plan, PlanError> {
    opts.validate()?;
    let truth = truth_of(pilot, question)?;
    let null = matches!(question, Question::Difference { .. }).then(|| pilot.without_difference());
    let draws = plausible_truths(pilot, question, opts);
    let world = bias_world(pilot, question, opts);
    let direction = {
        let (small, large) = truth.rates();
        large - small
    };
    let task_counts = if opts.task_counts.is_empty() {
        vec![pilot.tasks.len()]
    } else {
        opts.task_counts.clone()
    };
    let designs: Vec<(usize, usize, usize, usize)> = task_counts
        .iter()
        .enumerate()
        .flat_map(|(ti, &tasks)| {
            opts.ks
                .iter()
                .enumerate()
                .map(move |(ki, &k)| (ti, tasks, ki, k))
        })
        .collect();
    let rows = in_parallel(&designs, |&(ti, tasks, ki, k)| {
        let seed = opts.seed ^ ((ti as u64) << 40) ^ ((ki as u64) << 20);
        let power = share_settled(&truth, question, tasks, k, opts, seed);
        let false_positive = null
            .as_ref()
            .map(|n| share_settled(n, question, tasks, k, opts, seed ^ 0x5eed));
        let gpu_seconds = pilot
            .seconds_per_conversation
            .map(|(a, b)| (tasks * k) as f64 * (a + b));
        let assurance = assurance_of(&draws, question, (tasks, k), opts, seed, direction).map(
            |a| match &world {
                Some(w) => {
                    let (predicted, truth) = w.bias((tasks, k), question, opts, seed, direction);
                    a.corrected(predicted, truth)
                }
                None => a,
            },
        );
        DesignRow {
            tasks,
            k,
            power,
            false_positive,
            gpu_seconds,
            assurance,
        }
    });
    let by_assurance = rows.iter().all(|r| r.assurance.is_some());
    let judged = |r: &DesignRow| match r.assurance {
        Some(a) if by_assurance => a.mean,
        _ => r.power,
    };
    let recommended = rows
        .iter()
        .filter(|r| judged(r) >= opts.power)
        .min_by_key(|r| (r.tasks * r.k, r.k))
        .cloned();
    let too_small = too_small(pilot, &rows, recommended.as_ref(), opts.power);
    Ok(Plan {
        source: pilot.source.clone(),
        small: pilot.small.clone(),
        large: pilot.large.clone(),
        pilot_tasks: pilot.tasks.len(),
        pilot_rates: pilot.rates(),
        question,
        options: opts.clone(),
        rows,
        recommended,
        recommended_by: if by_assurance { "assurance" } else { "power" }.into(),
        too_small,
    })
}

/// Why the pilot is too small to choose a design (empty when it is not): fewer than
/// [`MIN_TASKS`] tasks; fewer than [`MIN_TRIALS`] trials of a model on some task; or the choice
/// flips among plausible truths: the recommended design's assurance interval reaches below
/// `wanted` while the next-cheaper design's reaches it.
pub fn too_small(
    pilot: &Pilot,
    rows: &[DesignRow],
    recommended: Option<&DesignRow>,
    wanted: f64,
) -> Vec<String> {
    let mut why = Vec::new();
    if pilot.tasks.len() < MIN_TASKS {
        why.push(format!(
            "the pilot has {} tasks (fewer than {MIN_TASKS})",
            pilot.tasks.len()
        ));
    }
    let fewest = pilot
        .tasks
        .iter()
        .flat_map(|t| [t.small.trials.len(), t.large.trials.len()])
        .min()
        .unwrap_or(0);
    if has_trials(pilot) && fewest < MIN_TRIALS {
        why.push(format!(
            "some task has {fewest} graded trial of a model (fewer than {MIN_TRIALS})"
        ));
    }
    if let Some(flip) = recommended.and_then(|r| flips_with(r, rows, wanted)) {
        why.push(flip);
    }
    why
}

/// The sentence saying the choice flips between `chosen` and the next-cheaper design, if it does.
fn flips_with(chosen: &DesignRow, rows: &[DesignRow], wanted: f64) -> Option<String> {
    let size = |r: &DesignRow| r.tasks * r.k;
    let a = chosen.assurance?;
    let cheaper = rows
        .iter()
        .filter(|r| size(r) < size(chosen))
        .max_by_key(|r| (size(r), std::cmp::Reverse(r.k)))?;
    let b = cheaper.assurance?;
    (a.low < wanted && b.high >= wanted).then(|| {
        format!(
            "the choice flips: {} tasks x k = {} has assurance interval {:.1}%-{:.1}%, and the \
             cheaper {} tasks x k = {} reaches {:.1}% at its 90th percentile",
            chosen.tasks,
            chosen.k,
            100.0 * a.low,
            100.0 * a.high,
            cheaper.tasks,
            cheaper.k,
            100.0 * b.high
        )
    })
}
/// `f` of every item, in order, shared among the machine's cores: each design is simulated from
/// its own seeds, so the rows are the same however many threads compute them.
fn in_parallel<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(items.len());
    if threads <= 1 {
        return items.iter().map(f).collect();
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut done: Vec<(usize, R)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(item) = items.get(i) else {
                            return mine;
                        };
                        mine.push((i, f(item)));
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().expect("a design's simulation panicked"))
            .collect()
    });
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, r)| r).collect()
}

/// The per-task rates the question is simulated at, from `pilot`'s.
fn truth_of(pilot: &Pilot, question: Question) -> Result<Pilot, PlanError> {
    match question {
        Question::Difference { stated: None } => Ok(pilot.clone()),
        Question::Difference {
            stated: Some(difference),
        } => pilot.with_difference(difference),
        Question::BreakEvenBelow { ratio } => {
            if !(ratio.is_finite() && ratio > 0.0) {
                return Err(PlanError::Invalid(
                    "--break-even-below must be a positive ratio".into(),
                ));
            }
            if !pilot.has_tokens() {
                return Err(PlanError::Invalid(
                    "a break-even question needs a pilot run (tokens), not stated rates".into(),
                ));
            }
            Ok(pilot.clone())
        }
    }
}

/// The truths of the resampled pilots (none for stated rates, or with no draws asked); a draw
/// from which a stated difference cannot be reached is left out.
fn plausible_truths(pilot: &Pilot, question: Question, opts: &PlanOptions) -> Vec<Pilot> {
    if opts.assurance_draws == 0 || !assurance::has_trials(pilot) {
        return Vec::new();
    }
    assurance::plausible_pilots(pilot, opts.assurance_draws, opts.seed ^ 0xa55e)
        .iter()
        .filter_map(|d| truth_of(d, question).ok())
        .collect()
}

/// A design's power under each resampled pilot (`opts.simulations` experiments shared among the
/// draws, at least 10 each), summarised.
fn assurance_of(
    draws: &[Pilot],
    question: Question,
    design: (usize, usize),
    opts: &PlanOptions,
    seed: u64,
    direction: f64,
) -> Option<Assurance> {
    let each = PlanOptions {
        simulations: (opts.simulations / draws.len().max(1)).max(10),
        ..opts.clone()
    };
    let powers: Vec<f64> = draws
        .iter()
        .enumerate()
        .map(|(d, truth)| {
            let seed = seed ^ (0xd0 + d as u64).wrapping_mul(0x9e37_79b9);
            share_settled_toward(truth, question, design, &each, seed, direction)
        })
        .collect();
    Assurance::from_powers(&powers)
}

/// Where the assurance's bias is measured: a world whose truth is known. Its rates are the shrunk
/// pilot's (the planner's own estimate of the truth); its pilots are simulated from them at the
/// pilot's size ([`assurance::simulated_pilot`]), and each gives one plausible truth, drawn as the
/// planner draws its own from the pilot (shrunk, tasks resampled). Over simulated pilots, the mean
/// over their plausible truths is the mean of their assurances, so one experiment per simulated
/// pilot measures it.
struct BiasWorld {
    /// The question's truth at the shrunk pilot's rates.
    truth: Pilot,
    /// One plausible truth from each simulated pilot.
    plausible: Vec<Pilot>,
}

impl BiasWorld {
    /// For `design`: the share of experiments settled under the simulated pilots' plausible
    /// truths (one experiment each), and the share settled at the world's truth, each with its
    /// number of experiments, both judged on the pilot's side.
    fn bias(
        &self,
        design: (usize, usize),
        question: Question,
        opts: &PlanOptions,
        seed: u64,
        direction: f64,
    ) -> ((f64, usize), (f64, usize)) {
        let at_truth = PlanOptions {
            resamples: opts.resamples.min(BIAS_RESAMPLES),
            ..opts.clone()
        };
        let each = PlanOptions {
            simulations: self.plausible.len(),
            ..at_truth.clone()
        };
        let seed = seed ^ 0xb1a5_0000_0000;
        let predicted =
            share_settled_over(&self.plausible, question, design, &each, seed, direction);
        let truth = share_settled_toward(
            &self.truth,
            question,
            design,
            &at_truth,
            seed ^ 1,
            direction,
        );
        ((predicted, self.plausible.len()), (truth, opts.simulations))
    }
}

/// Bootstrap resamples per break-even experiment behind the bias (at most `--resamples`): the bias
/// is a difference of two powers taken with the same count, so what a smaller count changes in
/// each largely cancels; at the full count these experiments would be two fifths of the plan's
/// work.
const BIAS_RESAMPLES: usize = 200;

/// The world the assurance's bias is measured in, with `opts.simulations` simulated pilots (one
/// per experiment behind the bias); none where there is no assurance, or where the question
/// cannot be asked of the shrunk pilot or of any simulated one.
fn bias_world(pilot: &Pilot, question: Question, opts: &PlanOptions) -> Option<BiasWorld> {
    if opts.assurance_draws == 0 || !assurance::has_trials(pilot) {
        return None;
    }
    let base = assurance::shrunk(pilot);
    let truth = truth_of(&base, question).ok()?;
    let mut rng = PyRandom::new(opts.seed ^ 0xb1a5);
    let plausible: Vec<Pilot> = (0..opts.simulations)
        .filter_map(|_| {
            let simulated = assurance::simulated_pilot(&base, &mut rng);
            let seed = u64::from(rng.next_u32());
            let drawn = assurance::plausible_pilots(&simulated, 1, seed).pop()?;
            truth_of(&drawn, question).ok()
        })
        .collect();
    (!plausible.is_empty()).then_some(BiasWorld { truth, plausible })
}

/// One simulated task's totals for both models.
#[derive(Debug, Clone, Copy, Default)]
struct Drawn {
    passes: [f64; 2],
    tokens: [f64; 2],
}

/// Share of `opts.simulations` experiments of `tasks` x `k` drawn from `pilot` whose interval
/// settles `question`. With no true difference (the null pilot), "settled" means the interval
/// excludes 0 on either side.
fn share_settled(
    pilot: &Pilot,
    question: Question,
    tasks: usize,
    k: usize,
    opts: &PlanOptions,
    seed: u64,
) -> f64 {
    let (small, large) = pilot.rates();
    share_settled_toward(pilot, question, (tasks, k), opts, seed, large - small)
}

/// [`share_settled`] with the side a difference must be settled on given (`direction`'s sign;
/// 0: either side), so that a resampled pilot whose gap changed sign is not counted as settling
/// the pilot's question.
fn share_settled_toward(
    pilot: &Pilot,
    question: Question,
    (tasks, k): (usize, usize),
    opts: &PlanOptions,
    seed: u64,
    direction: f64,
) -> f64 {
    share_settled_over(
        std::slice::from_ref(pilot),
        question,
        (tasks, k),
        opts,
        seed,
        direction,
    )
}

/// [`share_settled_toward`] with experiment i drawn from `truths[i % truths.len()]`.
fn share_settled_over(
    truths: &[Pilot],
    question: Question,
    (tasks, k): (usize, usize),
    opts: &PlanOptions,
    seed: u64,
    direction: f64,
) -> f64 {
    let mut rng = PyRandom::new(seed);
    let mut settled = 0usize;
    let mut drawn = vec![Drawn::default(); tasks];
    let mut stats = Vec::with_capacity(opts.resamples);
    for sim in 0..opts.simulations {
        let pilot = &truths[sim % truths.len()];
        for d in drawn.iter_mut() {
            let task = &pilot.tasks[rng.randbelow(pilot.tasks.len())];
            *d = draw_task(task, k, &mut rng);
        }
        let (low, high) = match question {
            Question::Difference { .. } => {
                let counts = |m: usize| -> Vec<(usize, usize)> {
                    drawn.iter().map(|d| (k, d.passes[m] as usize)).collect()
                };
                let (small, large) = (counts(0), counts(1));
                let cells = [(1.0, large.as_slice()), (-1.0, small.as_slice())];
                match interval::paired_contrast_at(&cells, 1.0 - opts.alpha) {
                    Some(i) => (i.low, i.high),
                    None => (f64::NEG_INFINITY, f64::INFINITY),
                }
            }
            Question::BreakEvenBelow { .. } => {
                stats.clear();
                let boot_seed = seed.wrapping_add(1 + sim as u64);
                for_each_fresh_resample(tasks, opts.resamples, boot_seed, |sample| {
                    let mut t = Drawn::default();
                    for &i in sample {
                        let i = i as usize;
                        for m in 0..2 {
                            t.passes[m] += drawn[i].passes[m];
                            t.tokens[m] += drawn[i].tokens[m];
                        }
                    }
                    stats.push(break_even(&t));
                });
                interval(&mut stats, opts.alpha)
            }
        };
        let yes = match question {
            Question::Difference { .. } if direction > 0.0 => low > 0.0,
            Question::Difference { .. } if direction < 0.0 => high < 0.0,
            Question::Difference { .. } => low > 0.0 || high < 0.0,
            Question::BreakEvenBelow { ratio } => high < ratio,
        };
        settled += usize::from(yes);
    }
    settled as f64 / opts.simulations as f64
}

/// k trials of each model on one task: passes at the task's rate, each trial's tokens drawn from
/// the pilot's trials of that task with the same verdict (any trial when none has it).
fn draw_task(task: &PilotTask, k: usize, rng: &mut PyRandom) -> Drawn {
    let mut d = Drawn::default();
    for (m, side) in [&task.small, &task.large].into_iter().enumerate() {
        for _ in 0..k {
            let passed = uniform(rng) < side.rate;
            d.passes[m] += f64::from(u8::from(passed));
            if side.trials.is_empty() {
                continue;
            }
            d.tokens[m] += tokens_like(&side.trials, passed, rng);
        }
    }
    d
}

/// A resample's break-even ratio (infinite when the smaller model never passes, so such
/// resamples stay in the interval).
fn break_even(t: &Drawn) -> f64 {
    let per_success = |m: usize| t.tokens[m] / t.passes[m];
    if t.passes[0] == 0.0 {
        f64::INFINITY
    } else if t.passes[1] == 0.0 {
        0.0
    } else {
        per_success(0) / per_success(1)
    }
}

/// The central `1 - alpha` percentile interval, positions as the report's 95% interval takes them
/// (`int(a/2 N)` and `int((1 - a/2) N) - 1`).
fn interval(values: &mut [f64], alpha: f64) -> (f64, f64) {
    let n = values.len();
    let lo = ((alpha / 2.0 * n as f64) as usize).min(n - 1);
    let hi = (((1.0 - alpha / 2.0) * n as f64) as usize)
        .checked_sub(1)
        .unwrap_or(n - 1)
        .min(n - 1);
    // The values a sort would put at `lo` and `hi`, found without sorting the rest: the later
    // position first, then the earlier among the values before it.
    let (first, last) = (lo.min(hi), lo.max(hi));
    let (_, &mut at_last, _) = values.select_nth_unstable_by(last, f64::total_cmp);
    let (_, &mut at_first, _) = values[..=last].select_nth_unstable_by(first, f64::total_cmp);
    if lo <= hi {
        (at_first, at_last)
    } else {
        (at_last, at_first)
    }
}

/// A uniform draw in [0, 1) with 53 bits, as Python's `random()` makes it.
fn uniform(rng: &mut PyRandom) -> f64 {
    rng.random()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::planning::pilot::{PilotTrial, Side};

    fn pilot(small: &[f64], large: &[f64]) -> Pilot {
        let side = |rate: f64| Side {
            rate,
            trials: vec![
                PilotTrial {
                    passed: true,
                    tokens: 1000.0,
                },
                PilotTrial {
                    passed: false,
                    tokens: 3000.0,
                },
            ],
        };
        Pilot {
            source: "test".into(),
            small: "s".into(),
            large: "l".into(),
            tasks: small
                .iter()
                .zip(large)
                .enumerate()
                .map(|(i, (&a, &b))| PilotTask {
                    id: i.to_string(),
                    small: side(a),
                    large: side(b),
                })
                .collect(),
            seconds_per_conversation: Some((2.0, 4.0)),
        }
    }

    fn quick() -> PlanOptions {
        PlanOptions {
            ks: vec![1, 5],
            simulations: 200,
            resamples: 200,
            ..PlanOptions::default()
        }
    }

    #[test]
    fn a_large_gap_is_found_and_power_grows_with_k() {
        let p = pilot(&[0.2; 24], &[0.8; 24]);
        let plan = plan(&p, Question::Difference { stated: None }, &quick()).unwrap();
        let (k1, k5) = (plan.rows[0].power, plan.rows[1].power);
        assert!(k5 >= k1 && k5 > 0.95, "{k1} {k5}");
        // 24 tasks x 5 trials x (2 + 4) s.
        assert_eq!(plan.rows[1].gpu_seconds, Some(24.0 * 5.0 * 6.0));
        assert!(plan.recommended.is_some());
    }

    #[test]
    fn without_a_difference_the_interval_rarely_claims_one() {
        let p = pilot(
            &[0.3, 0.9, 0.5, 0.7, 0.1, 0.6],
            &[0.3, 0.9, 0.5, 0.7, 0.1, 0.6],
        );
        let opts = PlanOptions {
            task_counts: vec![24],
            ..quick()
        };
        let plan = plan(&p, Question::Difference { stated: Some(0.0) }, &opts).unwrap();
        for r in &plan.rows {
            let fp = r.false_positive.unwrap();
            assert!(fp < 0.12, "false positives {fp} at k = {}", r.k);
            // With no true difference, "power" is the same false-positive rate.
            assert!(r.power < 0.12);
        }
    }

    #[test]
    fn spread_between_tasks_costs_power_a_binomial_formula_would_not_see() {
        // Same mean rates (0.5 vs 0.7), so a binomial formula gives both the same power; but in
        // one pilot the larger model is better on every task, in the other much better on half
        // and worse on the rest, and that spread between tasks widens the paired interval.
        let alike = pilot(&[0.5; 10], &[0.7; 10]);
        let mixed = pilot(
            &[0.5; 10],
            &[1.0, 0.4, 1.0, 0.4, 1.0, 0.4, 1.0, 0.4, 1.0, 0.4],
        );
        let opts = PlanOptions {
            ks: vec![5],
            ..quick()
        };
        let q = Question::Difference { stated: None };
        let a = plan(&alike, q, &opts).unwrap().rows[0].power;
        let m = plan(&mixed, q, &opts).unwrap().rows[0].power;
        assert!(a > m, "alike {a} vs mixed {m}");
    }

    #[test]
    fn stated_rates_can_be_too_gloomy_when_both_models_share_hard_tasks() {
        // Mean rates 0.4 vs 0.7 either way; in the pilot both models find the same half of the
        // tasks hard, so each task's difference is 0.3 and the paired interval is narrower than
        // with every task at the mean rates: stated rates are not the most hopeful case.
        let shared = pilot(&[0.1, 0.7].repeat(12), &[0.4, 1.0].repeat(12));
        let stated = Pilot::from_rates(0.4, 0.7, 24).unwrap();
        let opts = PlanOptions {
            ks: vec![1],
            ..quick()
        };
        let q = Question::Difference { stated: None };
        let a = plan(&shared, q, &opts).unwrap().rows[0].power;
        let b = plan(&stated, q, &opts).unwrap().rows[0].power;
        assert!(a > b + 0.1, "shared difficulty {a} vs stated rates {b}");
    }

    #[test]
    fn a_stated_difference_moves_the_larger_models_rates() {
        let p = pilot(&[0.2, 0.5, 0.8, 1.0], &[0.2, 0.5, 0.8, 1.0]);
        let moved = p.with_difference(0.1).unwrap();
        let (a, b) = moved.rates();
        assert!((b - a - 0.1).abs() < 1e-9);
        // A task at 100% cannot move.
        assert_eq!(moved.tasks[3].large.rate, 1.0);
        assert!(matches!(
            pilot(&[1.0, 0.0], &[1.0, 0.0]).with_difference(0.2),
            Err(PlanError::Unreachable(_))
        ));
    }

    #[test]
    fn break_even_keeps_infinite_resamples_and_needs_tokens() {
        // The small model passes rarely and costs 6x per success: below 15 is settled often,
        // below 1 never.
        let p = pilot(&[0.3; 24], &[0.9; 24]);
        let opts = quick();
        let easy = plan(&p, Question::BreakEvenBelow { ratio: 15.0 }, &opts).unwrap();
        let hard = plan(&p, Question::BreakEvenBelow { ratio: 1.0 }, &opts).unwrap();
        assert!(
            easy.rows[1].power > 0.9 && hard.rows[1].power == 0.0,
            "{:?} {:?}",
            easy.rows,
            hard.rows
        );
        assert!(easy.rows[0].false_positive.is_none());
        let t = Drawn {
            passes: [0.0, 3.0],
            tokens: [10.0, 10.0],
        };
        assert!(break_even(&t).is_infinite());
        let stated = Pilot::from_rates(0.3, 0.9, 12).unwrap();
        assert!(plan(&stated, Question::BreakEvenBelow { ratio: 2.0 }, &opts).is_err());
    }

    #[test]
    fn a_pilot_run_carries_assurance_and_stated_rates_do_not() {
        // Half the tasks show a gap, half none: resampling the pilot's tasks moves the gap, so
        // the assurance interval has width, and the recommendation is judged by assurance. Ten
        // trials per task, so the spread is more than binomial noise and shrinkage keeps it.
        let mut p = pilot(&[0.3; 24], &[0.9, 0.3].repeat(12));
        for t in &mut p.tasks {
            t.large.trials = t.large.trials.repeat(5);
        }
        let got = plan(&p, Question::Difference { stated: None }, &quick()).unwrap();
        assert_eq!(got.recommended_by, "assurance");
        for r in &got.rows {
            let a = r.assurance.expect("assurance");
            assert!(
                a.low <= a.mean && a.mean <= a.high && a.low < a.high,
                "{a:?}"
            );
            assert_eq!(a.draws, 20);
        }
        let stated = Pilot::from_rates(0.3, 0.6, 24).unwrap();
        let got = plan(&stated, Question::Difference { stated: None }, &quick()).unwrap();
        assert_eq!(got.recommended_by, "power");
        assert!(got.rows.iter().all(|r| r.assurance.is_none()));
        let json = serde_json::to_value(&got).unwrap();
        assert!(json["too_small"].is_array(), "{json}");
    }

    #[test]
    fn the_bias_correction_moves_the_assurance_toward_the_power_at_the_true_rates() {
        // Known per-task rates (the reference's run 2: many tasks at 0% or 100%) where power is
        // high, so the power curve is concave: pilots of two trials per task and model, played at
        // those rates, give an assurance that runs low on average; the correction, measured from
        // each pilot's records alone, brings it nearer.
        let truth = pilot(
            &[
                1.0, 0.8, 0.6, 0.8, 0.8, 1.0, 0.0, 0.0, 0.2, 0.2, 0.0, 0.0, 0.2, 1.0, 0.0, 0.2,
                0.2, 0.6, 0.8, 0.6, 0.0, 0.4, 0.4, 0.0,
            ],
            &[
                1.0, 1.0, 1.0, 1.0, 0.8, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.6, 0.6, 0.6, 0.0, 1.0,
                0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.6, 0.2,
            ],
        );
        let q = Question::Difference { stated: None };
        let opts = PlanOptions {
            ks: vec![2],
            simulations: 100,
            resamples: 100,
            assurance_draws: 10,
            ..PlanOptions::default()
        };
        let exact = PlanOptions {
            simulations: 4000,
            assurance_draws: 0,
            ..opts.clone()
        };
        let power = plan(&truth, q, &exact).unwrap().rows[0].power;
        let mut rng = PyRandom::new(11);
        let pilots = 16;
        let (mut before, mut after) = (0.0, 0.0);
        for i in 0..pilots {
            let sample = assurance::simulated_pilot(&truth, &mut rng);
            let seeded = PlanOptions {
                seed: i,
                ..opts.clone()
            };
            let a = plan(&sample, q, &seeded).unwrap().rows[0]
                .assurance
                .expect("assurance");
            assert!(a.low <= a.high, "{a:?}");
            before += (a.uncorrected - power) / pilots as f64;
            after += (a.mean - power) / pilots as f64;
        }
        // Low by more than 5 points before, raised by more than 3 and not past the truth by as
        // much as it was short.
        assert!(before < -0.05, "{power} {before}");
        assert!(
            after > before + 0.03 && after.abs() < before.abs(),
            "{power} {before} {after}"
        );
    }

    #[test]
    fn the_interval_takes_the_values_a_sort_would_put_at_its_positions() {
        let mut rng = PyRandom::new(5);
        for (n, alpha) in [
            (1000, 0.05),
            (200, 0.05),
            (37, 0.1),
            (10, 0.5),
            (10, 0.95),
            (3, 0.9),
            (1, 0.05),
        ] {
            // Few distinct values, as a difference of whole passes takes.
            let values: Vec<f64> = (0..n)
                .map(|_| (rng.randbelow(9) as f64 - 4.0) / 8.0)
                .collect();
            let mut sorted = values.clone();
            sorted.sort_by(f64::total_cmp);
            let lo = ((alpha / 2.0 * n as f64) as usize).min(n - 1);
            let hi = (((1.0 - alpha / 2.0) * n as f64) as usize)
                .checked_sub(1)
                .unwrap_or(n - 1)
                .min(n - 1);
            let mut work = values.clone();
            assert_eq!(
                interval(&mut work, alpha),
                (sorted[lo], sorted[hi]),
                "{n} {alpha}"
            );
        }
    }

    #[test]
    fn designs_shared_among_threads_come_back_in_order() {
        let items: Vec<u64> = (0..37).collect();
        let doubled = in_parallel(&items, |&x| 2 * x);
        assert_eq!(doubled, items.iter().map(|x| 2 * x).collect::<Vec<_>>());
        assert!(in_parallel(&[] as &[u64], |&x| x).is_empty());
    }

    #[test]
    fn a_small_pilot_is_called_too_small_and_a_big_one_is_not() {
        let q = Question::Difference { stated: None };
        let small = pilot(&[0.3, 0.5, 0.4, 0.2], &[0.9, 0.5, 0.8, 0.3]);
        let why = plan(&small, q, &quick()).unwrap().too_small;
        assert!(why.iter().any(|w| w.contains("4 tasks")), "{why:?}");
        let big = pilot(&[0.1; 48], &[0.9; 48]);
        let why = plan(&big, q, &quick()).unwrap().too_small;
        assert!(why.is_empty(), "{why:?}");
    }

    #[test]
    fn the_choice_flips_when_a_cheaper_design_may_be_enough() {
        let row = |k: usize, low: f64, high: f64| DesignRow {
            tasks: 24,
            k,
            power: 0.8,
            false_positive: None,
            gpu_seconds: None,
            assurance: Some(Assurance {
                mean: (low + high) / 2.0,
                low,
                high,
                draws: 20,
                uncorrected: (low + high) / 2.0,
                shift: 0.0,
            }),
        };
        let p = pilot(&[0.3; 24], &[0.9; 24]);
        let rows = [row(1, 0.5, 0.85), row(2, 0.7, 0.95)];
        let why = too_small(&p, &rows, Some(&rows[1]), 0.8);
        assert!(why.iter().any(|w| w.contains("choice flips")), "{why:?}");
        let settled = [row(1, 0.3, 0.6), row(2, 0.85, 0.95)];
        assert!(too_small(&p, &settled, Some(&settled[1]), 0.8).is_empty());
    }

    #[test]
    fn bad_options_are_refused() {
        let p = pilot(&[0.5], &[0.6]);
        for bad in [
            PlanOptions {
                alpha: 0.0,
                ..quick()
            },
            PlanOptions {
                ks: vec![0],
                ..quick()
            },
            PlanOptions {
                power: f64::NAN,
                ..quick()
            },
        ] {
            assert!(plan(&p, Question::Difference { stated: Some(0.1) }, &bad).is_err());
        }
        assert!(Pilot::from_rates(1.5, 0.2, 3).is_err());
    }

    #[test]
    fn the_uniform_draw_is_pythons_random() {
        // python3 -c "import random; print(random.Random(0).random())"
        let mut r = PyRandom::new(0);
        assert_eq!(uniform(&mut r), 0.8444218515250481);
    }
}
