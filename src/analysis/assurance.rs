//! Assurance for `passk plan`: the power of a design averaged over what the pilot leaves
//! uncertain, and the rule that says when a pilot is too small to choose a design.
//!
//! Each draw is a plausible pilot: the pilot's tasks resampled with replacement (the pilot's
//! sampling uncertainty, as the report's task bootstrap sees it). The planner simulates every
//! design under each draw, and the assurance of a design is the mean of its power over the draws,
//! with the 10th and 90th percentiles as its interval (docs/metrics.md, "Power planning").

use super::mt19937::PyRandom;
use super::plan::{DesignRow, Pilot};
use serde::{Deserialize, Serialize};

/// Fewer pilot tasks than this, and the pilot is too small to choose a design.
pub const MIN_TASKS: usize = 10;
/// Fewer graded trials than this of either model on some task, and the pilot is too small.
pub const MIN_TRIALS: usize = 2;

/// A design's power over the pilot's uncertainty.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Assurance {
    /// Mean power over the resampled pilots.
    pub mean: f64,
    /// 10th percentile of power over the resampled pilots.
    pub low: f64,
    /// 90th percentile of power over the resampled pilots.
    pub high: f64,
    /// Resampled pilots it averages over.
    pub draws: usize,
}

impl Assurance {
    /// The summary of one design's power under each draw; `None` when there are no draws.
    pub fn from_powers(powers: &[f64]) -> Option<Assurance> {
        if powers.is_empty() {
            return None;
        }
        let mut sorted = powers.to_vec();
        sorted.sort_by(f64::total_cmp);
        let at = |q: f64| sorted[((q * (sorted.len() - 1) as f64).round()) as usize];
        Some(Assurance {
            mean: powers.iter().sum::<f64>() / powers.len() as f64,
            low: at(0.1),
            high: at(0.9),
            draws: powers.len(),
        })
    }
}

/// Whether the pilot's rates come from trials (stated rates carry no sampling uncertainty).
pub fn has_trials(pilot: &Pilot) -> bool {
    pilot
        .tasks
        .iter()
        .all(|t| !t.small.trials.is_empty() && !t.large.trials.is_empty())
}

/// `draws` plausible pilots (the same for a seed, so every design is judged under the same
/// plausible truths): the pilot's tasks resampled with replacement, as the report's bootstrap
/// resamples them, each keeping its rates and trials.
pub fn plausible_pilots(pilot: &Pilot, draws: usize, seed: u64) -> Vec<Pilot> {
    let mut rng = PyRandom::new(seed);
    let n = pilot.tasks.len();
    (0..draws)
        .map(|_| {
            let mut out = pilot.clone();
            out.tasks = (0..n)
                .map(|_| pilot.tasks[rng.randbelow(n)].clone())
                .collect();
            out
        })
        .collect()
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
