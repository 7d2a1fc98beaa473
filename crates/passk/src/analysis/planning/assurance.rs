//! Assurance for `passk plan`: the power of a design averaged over what the pilot leaves
//! uncertain.
//!
//! Each draw is a plausible pilot: the pilot's tasks resampled with replacement (the pilot's
//! sampling uncertainty, as the report's task bootstrap sees it). The planner simulates every
//! design under each draw, and the assurance of a design is the mean of its power over the draws,
//! with the 10th and 90th percentiles as its interval (docs/reference/metrics-validation.md, "Power planning").
//!
//! That mean is biased low where power is high: the power curve is concave there, so a pilot
//! whose gap came out small loses more power than one whose gap came out large gains, and
//! averaging over plausible pilots spread around the pilot applies the concavity again. The
//! planner corrects it with a parametric bootstrap of the whole procedure ([`simulated_pilot`]):
//! pilots of the same size are played at the shrunk pilot's rates, the assurance each would give
//! is compared with the power at those rates, and the assurance is moved by the mean miss, in
//! log-odds ([`Assurance::corrected`]).

use crate::analysis::intervals::mt19937::PyRandom;
use crate::analysis::planning::pilot::{Pilot, PilotTrial, Side, tokens_like};
use serde::{Deserialize, Serialize};

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
    /// The mean power over the resampled pilots before the bias correction.
    #[serde(default)]
    pub uncorrected: f64,
    /// The bias subtracted, in log-odds: the log-odds of what pilots simulated at the shrunk
    /// pilot's rates give as their assurance, minus the log-odds of the power at those rates
    /// (negative: the assurance ran low there, and is raised). 0 when uncorrected.
    #[serde(default)]
    pub shift: f64,
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
        let mean = powers.iter().sum::<f64>() / powers.len() as f64;
        Some(Assurance {
            mean,
            low: at(0.1),
            high: at(0.9),
            draws: powers.len(),
            uncorrected: mean,
            shift: 0.0,
        })
    }

    /// The assurance corrected for the bias measured where the truth is known: `predicted`, the
    /// share of experiments settled under the plausible pilots of simulated pilots (their mean
    /// assurance), and `truth`, the share settled at the rates they were simulated at, each with
    /// the experiments behind it. The mean moves by the difference of their log-odds (each share
    /// taken as (settled + 1/2) / (experiments + 1), so that 0 and 1 have one), which can never
    /// leave 0..1 and moves a power near 0 or 1 less than one in the middle. The interval runs
    /// from the lower of the two 10th percentiles, before and after the same move, to the higher
    /// of the two 90th: the correction is an estimate, and the interval keeps the powers it moved
    /// away from.
    pub fn corrected(self, predicted: (f64, usize), truth: (f64, usize)) -> Assurance {
        let log_odds = |(share, n): (f64, usize)| {
            let p = (share * n as f64 + 0.5) / (n as f64 + 1.0);
            (p / (1.0 - p)).ln()
        };
        let shift = log_odds(predicted) - log_odds(truth);
        let moved = |p: f64| {
            if p <= 0.0 || p >= 1.0 {
                p
            } else {
                1.0 / (1.0 + (((1.0 - p) / p).ln() + shift).exp())
            }
        };
        Assurance {
            mean: moved(self.mean),
            low: moved(self.low).min(self.low),
            high: moved(self.high).max(self.high),
            shift,
            ..self
        }
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
/// resamples them, each keeping its trials and its rates shrunk as [`shrunk`] shrinks them.
pub fn plausible_pilots(pilot: &Pilot, draws: usize, seed: u64) -> Vec<Pilot> {
    let pilot = &shrunk(pilot);
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

/// A pilot of the same tasks and size as `truth`, played at its rates: every task and model keeps
/// its number of trials, each trial passes with the task's rate, and its tokens are drawn from
/// `truth`'s trials of that task with the same verdict (any trial when none has it). The rates are
/// the passes over the trials, as a pilot run's are. The bias correction plans from such pilots,
/// drawn at the shrunk pilot's rates, to see how far the procedure lands from a known truth.
pub fn simulated_pilot(truth: &Pilot, rng: &mut PyRandom) -> Pilot {
    let mut out = truth.clone();
    for task in &mut out.tasks {
        for side in [&mut task.small, &mut task.large] {
            let played: Vec<PilotTrial> = (0..side.trials.len())
                .map(|_| {
                    let passed = rng.random() < side.rate;
                    PilotTrial {
                        passed,
                        tokens: tokens_like(&side.trials, passed, rng),
                    }
                })
                .collect();
            let passes = played.iter().filter(|t| t.passed).count();
            side.rate = passes as f64 / played.len().max(1) as f64;
            side.trials = played;
        }
    }
    out
}

/// The pilot with each model's per-task rates shrunk toward that model's mean rate, as an
/// empirical-Bayes posterior mean under a beta prior fitted to the pilot (beta-binomial, method
/// of moments). A task's rate from a few trials is 0, 1/2 or 1 more often than its true rate is:
/// the spread between tasks it shows is the true spread plus each task's binomial noise, and
/// simulating at the raw rates overstates how much tasks differ. The prior keeps only the spread
/// beyond that noise; with one trial per task it cannot be told apart, and the rates stay. A
/// task's passes are its rate times its trials.
pub fn shrunk(pilot: &Pilot) -> Pilot {
    let mut out = pilot.clone();
    for large in [false, true] {
        let mut sides: Vec<&mut Side> = out
            .tasks
            .iter_mut()
            .map(|t| if large { &mut t.large } else { &mut t.small })
            .collect();
        let counts: Vec<(f64, f64)> = sides
            .iter()
            .map(|s| {
                let n = s.trials.len() as f64;
                (s.rate * n, n)
            })
            .collect();
        let Some((a, b)) = beta_prior(&counts) else {
            continue;
        };
        for (s, (x, n)) in sides.iter_mut().zip(counts) {
            s.rate = (x + a) / (n + a + b);
        }
    }
    out
}

/// The beta prior (a, b) whose beta-binomial matches the mean and spread of the per-task rates
/// `(passes, trials)` by moments, or `None` where it cannot be fitted: fewer than two tasks, a
/// task without trials, fewer than two trials per task on average, or every rate at 0 or at 1.
/// Spread no larger than binomial noise gives a prior of weight [`MAX_PRIOR_WEIGHT`] (near
/// total pooling); spread at its largest possible gives none (the rates stay).
pub fn beta_prior(counts: &[(f64, f64)]) -> Option<(f64, f64)> {
    let tasks = counts.len() as f64;
    if counts.len() < 2 || counts.iter().any(|&(_, n)| n < 1.0) {
        return None;
    }
    let trials = counts.iter().map(|c| c.1).sum::<f64>() / tasks;
    let rates: Vec<f64> = counts.iter().map(|&(x, n)| x / n).collect();
    let mean = rates.iter().sum::<f64>() / tasks;
    if trials < 2.0 || mean <= 0.0 || mean >= 1.0 {
        return None;
    }
    let var = rates.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / (tasks - 1.0);
    // Var(rate) = m (1 - m) (1 + (n - 1) rho) / n, rho = 1 / (a + b + 1).
    let rho = (trials * var / (mean * (1.0 - mean)) - 1.0) / (trials - 1.0);
    if rho >= 1.0 {
        return None;
    }
    let weight = if rho <= 0.0 {
        MAX_PRIOR_WEIGHT
    } else {
        (1.0 / rho - 1.0).min(MAX_PRIOR_WEIGHT)
    };
    Some((mean * weight, (1.0 - mean) * weight))
}

/// The largest weight (a + b, in trials) the fitted prior may carry.
pub const MAX_PRIOR_WEIGHT: f64 = 1000.0;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::planning::pilot::PilotTask;

    fn side(verdicts: &[bool]) -> Side {
        let trials: Vec<PilotTrial> = verdicts
            .iter()
            .map(|&passed| PilotTrial {
                passed,
                tokens: 1.0,
            })
            .collect();
        let passes = verdicts.iter().filter(|&&p| p).count();
        Side {
            rate: passes as f64 / verdicts.len() as f64,
            trials,
        }
    }

    fn pilot(small: &[&[bool]], large: &[&[bool]]) -> Pilot {
        Pilot {
            source: "test".into(),
            small: "s".into(),
            large: "l".into(),
            tasks: small
                .iter()
                .zip(large)
                .enumerate()
                .map(|(i, (a, b))| PilotTask {
                    id: i.to_string(),
                    small: side(a),
                    large: side(b),
                })
                .collect(),
            seconds_per_conversation: None,
        }
    }

    #[test]
    fn two_trial_rates_are_shrunk_toward_the_models_mean_and_keep_their_order() {
        // Rates 0, 1/2 and 1 from two trials: spread beyond binomial noise, so a finite prior.
        let (none, half, all): (&[bool], &[bool], &[bool]) =
            (&[false, false], &[true, false], &[true, true]);
        let p = pilot(&[none, none, half, all, none, half], &[all; 6]);
        let (a, b) = beta_prior(&[
            (0.0, 2.0),
            (0.0, 2.0),
            (1.0, 2.0),
            (2.0, 2.0),
            (0.0, 2.0),
            (1.0, 2.0),
        ])
        .expect("a prior");
        assert!((a / (a + b) - 1.0 / 3.0).abs() < 1e-12, "{a} {b}");
        let s = shrunk(&p);
        let rates: Vec<f64> = s.tasks.iter().map(|t| t.small.rate).collect();
        assert!(rates[0] > 0.0 && rates[3] < 1.0, "{rates:?}");
        assert!(rates[0] < rates[2] && rates[2] < rates[3], "{rates:?}");
        // Each model keeps its mean; a model at 100% everywhere stays there.
        let (m, l) = s.rates();
        assert!((m - 1.0 / 3.0).abs() < 1e-9 && l == 1.0, "{m} {l}");
        // The trials themselves are untouched.
        assert_eq!(s.tasks[3].small.trials, p.tasks[3].small.trials);
    }

    #[test]
    fn spread_no_wider_than_noise_pools_and_one_trial_per_task_leaves_rates_alone() {
        // Every task at 1/2: less spread than binomial noise, so (nearly) total pooling.
        let (a, b) = beta_prior(&[(1.0, 2.0); 8]).expect("a prior");
        assert_eq!(a + b, MAX_PRIOR_WEIGHT);
        // Half the tasks at 0, half at 1, over five trials each: as wide as rates can spread.
        let wide: Vec<(f64, f64)> = [0.0, 5.0].repeat(4).into_iter().map(|x| (x, 5.0)).collect();
        assert_eq!(beta_prior(&wide), None);
        let one: Vec<(f64, f64)> = [0.0, 1.0].repeat(4).into_iter().map(|x| (x, 1.0)).collect();
        assert_eq!(beta_prior(&one), None);
        let p = pilot(&[&[true], &[false]], &[&[true], &[false]]);
        assert_eq!(shrunk(&p), p);
    }

    #[test]
    fn the_correction_moves_by_log_odds_and_keeps_what_it_moved_away_from() {
        let a = Assurance::from_powers(&[0.5, 0.6, 0.7, 0.8, 0.9]).expect("powers");
        // Simulated pilots gave 60% where the truth was 80%: the assurance runs low, and rises.
        let c = a.corrected((0.6, 1000), (0.8, 1000));
        assert!(c.shift < 0.0 && c.mean > a.mean && c.mean < 1.0, "{c:?}");
        assert_eq!(c.uncorrected, a.mean);
        // The interval reaches from the lower 10th percentile (before) to the higher 90th (after).
        assert_eq!(c.low, a.low);
        assert!(c.high > a.high && c.high < 1.0, "{c:?}");
        // The mean moves by the shift, in log-odds.
        let odds = |p: f64| (p / (1.0 - p)).ln();
        assert!((odds(c.mean) - odds(a.mean) + c.shift).abs() < 1e-9);
        // Running high instead lowers it, and keeps the old 90th percentile.
        let d = a.corrected((0.9, 1000), (0.8, 1000));
        assert!(
            d.mean < a.mean && d.low < a.low && d.high == a.high,
            "{d:?}"
        );
        // A share of 0 or 1 still has log-odds; powers of exactly 0 or 1 stay.
        let sure = Assurance::from_powers(&[1.0; 4]).expect("powers");
        let e = sure.corrected((0.0, 100), (1.0, 100));
        assert!(e.shift.is_finite() && e.mean == 1.0, "{e:?}");
        // Nothing to correct, nothing moves.
        assert_eq!(a.corrected((0.7, 500), (0.7, 500)).mean, a.mean);
    }

    #[test]
    fn a_simulated_pilot_keeps_each_tasks_size_and_plays_at_its_rates() {
        let (none, half, all): (&[bool], &[bool], &[bool]) =
            (&[false, false], &[true, false], &[true, true, true]);
        let p = pilot(&[none, half, all], &[all, half, none]);
        let mut rng = PyRandom::new(4);
        for _ in 0..20 {
            let s = simulated_pilot(&p, &mut rng);
            for (a, b) in s.tasks.iter().zip(&p.tasks) {
                for (x, y) in [(&a.small, &b.small), (&a.large, &b.large)] {
                    assert_eq!(x.trials.len(), y.trials.len());
                    let passes = x.trials.iter().filter(|t| t.passed).count();
                    assert_eq!(x.rate, passes as f64 / x.trials.len() as f64);
                    // A rate of 0 or 1 can only play as itself.
                    if y.rate == 0.0 || y.rate == 1.0 {
                        assert_eq!(x.rate, y.rate);
                    }
                }
            }
        }
    }

    #[test]
    fn plausible_pilots_carry_the_shrunk_rates() {
        let (none, half, all): (&[bool], &[bool], &[bool]) =
            (&[false, false], &[true, false], &[true, true]);
        let p = pilot(&[none, all, half, none, half, half], &[all; 6]);
        for d in plausible_pilots(&p, 5, 1) {
            assert!(
                d.tasks
                    .iter()
                    .all(|t| t.small.rate > 0.0 && t.small.rate < 1.0)
            );
        }
    }
}
