//! The pilot `passk plan` resamples: each task both models ran, with each model's pass rate and
//! the graded trials it came from, built from a run's records or from stated rates.

use crate::analysis::figures::cost::blended_calls;
use crate::analysis::intervals::mt19937::PyRandom;
use crate::analysis::load::Run;
use crate::runner::record::{ConversationRecord, Manifest, Mode};
use serde::{Deserialize, Serialize};

/// The output weight of blended tokens (metrics.md).
const OUTPUT_WEIGHT: f64 = 4.0;

/// One graded pilot trial, as the planner draws it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PilotTrial {
    /// Whether the conversation passed.
    pub passed: bool,
    /// Its blended tokens (input + 4 x output, the orchestrator's calls).
    pub tokens: f64,
}

/// One model's side of a pilot task: its pass rate and the trials it came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Side {
    /// Pass rate the simulation draws trials at.
    pub rate: f64,
    /// The pilot's trials (empty for stated rates: no tokens known).
    pub trials: Vec<PilotTrial>,
}

impl Side {
    fn from_trials(trials: Vec<PilotTrial>) -> Side {
        let passes = trials.iter().filter(|t| t.passed).count();
        Side {
            rate: passes as f64 / trials.len().max(1) as f64,
            trials,
        }
    }
}

/// One pilot task: both models' sides.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PilotTask {
    /// Task id.
    pub id: String,
    /// The first (smaller) model.
    pub small: Side,
    /// The second (larger) model.
    pub large: Side,
}

/// What the planner resamples: tasks both models ran, with their pass rates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pilot {
    /// Where the rates come from (a run directory, or "stated rates").
    pub source: String,
    /// The first (smaller) model.
    pub small: String,
    /// The second (larger) model.
    pub large: String,
    /// Tasks both models ran, in id order.
    pub tasks: Vec<PilotTask>,
    /// Mean seconds per conversation of each model (wall time), when known.
    pub seconds_per_conversation: Option<(f64, f64)>,
}

/// Why a pilot cannot be built.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum PlanError {
    /// The run has fewer than two models for the configuration.
    #[error("the pilot needs two models; {0}")]
    Models(String),
    /// No task has graded trials of both models.
    #[error("no task has graded trials of both {0} and {1} in the pilot")]
    NoSharedTasks(String, String),
    /// A rate or option is out of range.
    #[error("{0}")]
    Invalid(String),
    /// The question cannot be reached from the pilot.
    #[error("{0}")]
    Unreachable(String),
}

impl Pilot {
    /// The pilot of a run: the agent's graded conversations of `suite`, for `models` (default the
    /// pair the report compares: the two smallest by parameter size when the manifest knows every
    /// size, else the first two in manifest order), under `call_cap` (required only when the run
    /// swept several caps).
    pub fn from_run(
        run: &Run,
        suite: &str,
        models: Option<(&str, &str)>,
        call_cap: Option<u32>,
    ) -> Result<Pilot, PlanError> {
        let source = run.dir.display().to_string();
        Pilot::from_records(
            &source,
            &run.manifest,
            &run.conversations,
            suite,
            models,
            call_cap,
        )
    }

    /// [`Pilot::from_run`] over records already in memory (an import, a test).
    pub fn from_records(
        source: &str,
        manifest: &Manifest,
        conversations: &[ConversationRecord],
        suite: &str,
        models: Option<(&str, &str)>,
        call_cap: Option<u32>,
    ) -> Result<Pilot, PlanError> {
        let in_config: Vec<&ConversationRecord> = conversations
            .iter()
            .filter(|c| c.suite == suite && c.mode == Mode::Agent)
            .collect();
        let cap = choose_cap(&in_config, call_cap)?;
        let in_config: Vec<&ConversationRecord> = in_config
            .into_iter()
            .filter(|c| Some(c.call_cap) == cap)
            .collect();
        one_cell(&in_config)?;
        let (small, large) = choose_models(manifest, &in_config, models)?;
        let side = |model: &str, task: &str| -> Vec<PilotTrial> {
            in_config
                .iter()
                .filter(|c| c.model == model && c.task == task && c.outcome.is_graded())
                .map(|c| PilotTrial {
                    passed: c.verdict.passed,
                    tokens: blended_calls(c.orchestrator_calls(), OUTPUT_WEIGHT),
                })
                .collect()
        };
        let ids: std::collections::BTreeSet<&str> =
            in_config.iter().map(|c| c.task.as_str()).collect();
        let tasks: Vec<PilotTask> = ids
            .into_iter()
            .map(|id| PilotTask {
                id: id.to_string(),
                small: Side::from_trials(side(&small, id)),
                large: Side::from_trials(side(&large, id)),
            })
            .filter(|t| !t.small.trials.is_empty() && !t.large.trials.is_empty())
            .collect();
        if tasks.is_empty() {
            return Err(PlanError::NoSharedTasks(small, large));
        }
        let seconds = |model: &str| {
            let walls: Vec<f64> = in_config
                .iter()
                .filter(|c| c.model == model)
                .map(|c| c.wall_s)
                .collect();
            (!walls.is_empty()).then(|| walls.iter().sum::<f64>() / walls.len() as f64)
        };
        Ok(Pilot {
            source: source.to_string(),
            seconds_per_conversation: seconds(&small).zip(seconds(&large)),
            small,
            large,
            tasks,
        })
    }

    /// A pilot from rates the user states: `tasks` tasks, every one at the same rate per model,
    /// the tasks independent of each other. Ignoring spread between tasks can be off either way:
    /// too hopeful when tasks differ in the gap, too gloomy when both models find the same tasks
    /// hard (the paired difference then varies less); a pilot run is better.
    pub fn from_rates(small: f64, large: f64, tasks: usize) -> Result<Pilot, PlanError> {
        for r in [small, large] {
            if !(0.0..=1.0).contains(&r) {
                return Err(PlanError::Invalid(format!(
                    "a stated success rate must lie in 0..=1 (got {r})"
                )));
            }
        }
        if tasks == 0 {
            return Err(PlanError::Invalid("--task-count must be at least 1".into()));
        }
        let side = |rate| Side {
            rate,
            trials: Vec::new(),
        };
        Ok(Pilot {
            source: "stated rates".into(),
            small: "small".into(),
            large: "large".into(),
            tasks: (0..tasks)
                .map(|i| PilotTask {
                    id: format!("task-{i}"),
                    small: side(small),
                    large: side(large),
                })
                .collect(),
            seconds_per_conversation: None,
        })
    }

    /// Mean pass rate of each model over the tasks (each task weighs the same).
    pub fn rates(&self) -> (f64, f64) {
        let n = self.tasks.len().max(1) as f64;
        (
            self.tasks.iter().map(|t| t.small.rate).sum::<f64>() / n,
            self.tasks.iter().map(|t| t.large.rate).sum::<f64>() / n,
        )
    }

    /// Whether every task has trials with tokens (needed for break-even questions).
    pub(crate) fn has_tokens(&self) -> bool {
        self.tasks
            .iter()
            .all(|t| !t.small.trials.is_empty() && !t.large.trials.is_empty())
    }

    /// The same pilot with the larger model's per-task rates moved on the logit scale, so that
    /// the mean difference (large - small) is `difference`. Tasks at 0 or 1 stay there.
    pub fn with_difference(&self, difference: f64) -> Result<Pilot, PlanError> {
        let mean_at = |shift: f64| {
            self.tasks
                .iter()
                .map(|t| shifted(t.small.rate, shift) - t.small.rate)
                .sum::<f64>()
                / self.tasks.len().max(1) as f64
        };
        let (lo, hi) = (mean_at(-40.0), mean_at(40.0));
        if !(lo..=hi).contains(&difference) {
            return Err(PlanError::Unreachable(format!(
                "a difference of {:+.1} pp cannot be reached from the smaller model's per-task \
                 rates (reachable: {:+.1} to {:+.1} pp; tasks at 0% or 100% cannot move)",
                100.0 * difference,
                100.0 * lo,
                100.0 * hi
            )));
        }
        let (mut a, mut b) = (-40.0, 40.0);
        for _ in 0..200 {
            let mid = (a + b) / 2.0;
            if mean_at(mid) < difference {
                a = mid;
            } else {
                b = mid;
            }
        }
        let shift = (a + b) / 2.0;
        let mut out = self.clone();
        for t in &mut out.tasks {
            t.large.rate = shifted(t.small.rate, shift);
        }
        Ok(out)
    }

    /// The same pilot with no difference: the larger model plays at the smaller one's rates.
    pub(crate) fn without_difference(&self) -> Pilot {
        let mut out = self.clone();
        for t in &mut out.tasks {
            t.large.rate = t.small.rate;
        }
        out
    }
}

/// `p` moved by `shift` on the logit scale; 0 and 1 stay where they are.
fn shifted(p: f64, shift: f64) -> f64 {
    if p <= 0.0 || p >= 1.0 {
        return p;
    }
    let logit = (p / (1.0 - p)).ln() + shift;
    1.0 / (1.0 + (-logit).exp())
}

/// A pilot from a factorial run would pool cells that differ in what is being planned for: refused.
fn one_cell(convs: &[&ConversationRecord]) -> Result<(), PlanError> {
    let cells: std::collections::BTreeSet<_> = convs
        .iter()
        .map(|c| (c.tool_docs, c.router_in_front))
        .collect();
    if cells.len() > 1 {
        return Err(PlanError::Invalid(format!(
            "the pilot crossed {} cells of tool docs x router in front; a power plan needs one \
             configuration: pilot with one --tool-docs and one --router-in-front",
            cells.len()
        )));
    }
    Ok(())
}

fn choose_cap(
    convs: &[&ConversationRecord],
    wanted: Option<u32>,
) -> Result<Option<u32>, PlanError> {
    let caps: std::collections::BTreeSet<u32> = convs.iter().map(|c| c.call_cap).collect();
    match (wanted, caps.len()) {
        (Some(c), _) if caps.contains(&c) => Ok(Some(c)),
        (Some(c), _) => Err(PlanError::Invalid(format!(
            "the pilot has no conversations under call cap {c} (it has {caps:?})"
        ))),
        (None, 0) => Ok(None),
        (None, 1) => Ok(caps.into_iter().next()),
        (None, _) => Err(PlanError::Invalid(format!(
            "the pilot swept several call caps ({caps:?}); choose one with --call-cap"
        ))),
    }
}

fn choose_models(
    manifest: &Manifest,
    convs: &[&ConversationRecord],
    wanted: Option<(&str, &str)>,
) -> Result<(String, String), PlanError> {
    let present = |m: &str| convs.iter().any(|c| c.model == m);
    if let Some((a, b)) = wanted {
        for m in [a, b] {
            if !present(m) {
                return Err(PlanError::Models(format!(
                    "the pilot has no agent conversations of '{m}'"
                )));
            }
        }
        return Ok((a.to_string(), b.to_string()));
    }
    let with_agent: std::collections::BTreeSet<String> =
        convs.iter().map(|c| c.model.clone()).collect();
    let (ordered, pair) = crate::analysis::pair::order_models(manifest, &with_agent, None);
    match pair {
        Some(p) => Ok((p.small, p.large)),
        _ => Err(PlanError::Models(format!(
            "it has {} with agent conversations; name two with --models",
            ordered.len()
        ))),
    }
}

/// The tokens of one of `trials` (not empty) with the verdict `passed`, drawn uniformly (any
/// trial when none has it).
pub(crate) fn tokens_like(trials: &[PilotTrial], passed: bool, rng: &mut PyRandom) -> f64 {
    let same = trials.iter().filter(|t| t.passed == passed).count();
    if same == 0 {
        return trials[rng.randbelow(trials.len())].tokens;
    }
    let nth = rng.randbelow(same);
    trials
        .iter()
        .filter(|t| t.passed == passed)
        .nth(nth)
        .map_or(0.0, |t| t.tokens)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pilot_pairs_the_models_by_parameter_size_as_the_report_does() {
        use crate::analysis::fixtures::ladder_run;
        // Listed 1B, 14B, 3B: the pair is the two smallest, 1B then 3B.
        let (manifest, convs) = ladder_run();
        let p = Pilot::from_records("t", &manifest, &convs, "store", None, None).expect("pilot");
        assert_eq!((p.small.as_str(), p.large.as_str()), ("m:1b", "m:3b"));
    }

    #[test]
    fn a_pilot_that_crossed_cells_is_refused() {
        use crate::analysis::fixtures::{call, conversation};
        let mut convs: Vec<ConversationRecord> = ["s", "l"]
            .iter()
            .map(|m| conversation(m, "L1", 0, true, vec![call(1, 1)]))
            .collect();
        let from = |convs: &[ConversationRecord]| {
            Pilot::from_records(
                "t",
                &Manifest::default(),
                convs,
                "store",
                Some(("s", "l")),
                None,
            )
        };
        assert!(from(&convs).is_ok());
        let mut routed = convs[0].clone();
        routed.router_in_front = true;
        convs.push(routed);
        let err = from(&convs).expect_err("two cells");
        assert!(err.to_string().contains("crossed 2 cells"), "{err}");
    }
}
