//! The ordered list of trials of a run, and which of them a resume skips.
//!
//! Model by model (one load per model), then call cap by call cap (budget sweep), then trial by
//! trial over all tasks, so that an interrupted run has spread its finished trials evenly over the
//! tasks; standalone router messages follow each model's conversations.

use crate::runner::record::{Mode, TrialKey};
use std::collections::BTreeSet;

/// One unit of work.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrialSpec {
    /// A conversation trial of a suite.
    Conversation {
        /// Suite name.
        suite: String,
        /// Model tag.
        model: String,
        /// Task id.
        task_id: String,
        /// Trial index.
        trial: u32,
        /// Call cap.
        call_cap: u32,
        /// Agent or toolless baseline.
        mode: Mode,
    },
    /// A standalone router call.
    Router {
        /// Model tag.
        model: String,
        /// Message index.
        index: u32,
        /// Trial index.
        trial: u32,
    },
}

impl TrialSpec {
    /// The key the record of this trial will carry.
    pub fn key(&self) -> TrialKey {
        match self {
            TrialSpec::Conversation {
                suite,
                model,
                task_id,
                trial,
                call_cap,
                mode,
                ..
            } => TrialKey {
                suite: suite.clone(),
                model: model.clone(),
                task: task_id.clone(),
                trial: *trial,
                call_cap: *call_cap,
                mode: *mode,
            },
            TrialSpec::Router {
                model,
                index,
                trial,
            } => TrialKey {
                suite: "router".into(),
                model: model.clone(),
                task: index.to_string(),
                trial: *trial,
                call_cap: 1,
                mode: Mode::Agent,
            },
        }
    }

    /// The model this trial runs on.
    pub fn model(&self) -> &str {
        match self {
            TrialSpec::Conversation { model, .. } | TrialSpec::Router { model, .. } => model,
        }
    }
}

/// What to plan over.
#[derive(Debug, Clone)]
pub struct PlanInput<'a> {
    /// Models in run order.
    pub models: &'a [String],
    /// Suites with their task ids (in suite order), already filtered.
    pub suites: Vec<(String, Vec<String>)>,
    /// Router message indices (empty: no standalone router).
    pub router_messages: Vec<u32>,
    /// Trials per task.
    pub trials: u32,
    /// Call caps.
    pub call_caps: &'a [u32],
    /// Modes (agent, and the toolless baseline when asked).
    pub modes: Vec<Mode>,
    /// Round by round (trial index outermost, every model in each), for a run that may stop
    /// after any round; otherwise model by model.
    pub rounds: bool,
}

/// The full plan and, separately, the trials a resume skips.
pub fn plan(input: &PlanInput<'_>, done: &BTreeSet<TrialKey>) -> (Vec<TrialSpec>, usize) {
    let mut all = Vec::new();
    if input.rounds {
        for trial in 0..input.trials {
            for model in input.models {
                all.extend(conversations(input, model, trial..trial + 1));
                all.extend(router_calls(input, model, trial..trial + 1));
            }
        }
    } else {
        for model in input.models {
            all.extend(conversations(input, model, 0..input.trials));
            all.extend(router_calls(input, model, 0..input.trials));
        }
    }
    let before = all.len();
    all.retain(|t| !done.contains(&t.key()));
    let skipped = before - all.len();
    (all, skipped)
}

/// One model's conversation trials over `trials`: mode by mode, cap by cap, trial by trial over
/// all tasks.
fn conversations(
    input: &PlanInput<'_>,
    model: &str,
    trials: std::ops::Range<u32>,
) -> Vec<TrialSpec> {
    let mut all = Vec::new();
    for &mode in &input.modes {
        // The toolless baseline makes one call per turn: the call cap does not apply to it.
        let caps = if mode == Mode::Toolless {
            &input.call_caps[..1]
        } else {
            input.call_caps
        };
        for &call_cap in caps {
            for trial in trials.clone() {
                for (suite, ids) in &input.suites {
                    for id in ids {
                        all.push(TrialSpec::Conversation {
                            suite: suite.clone(),
                            model: model.to_string(),
                            task_id: id.clone(),
                            trial,
                            call_cap,
                            mode,
                        });
                    }
                }
            }
        }
    }
    all
}

/// One model's standalone router calls over `trials`.
fn router_calls(
    input: &PlanInput<'_>,
    model: &str,
    trials: std::ops::Range<u32>,
) -> Vec<TrialSpec> {
    let mut all = Vec::new();
    for trial in trials {
        for &index in &input.router_messages {
            all.push(TrialSpec::Router {
                model: model.to_string(),
                index,
                trial,
            });
        }
    }
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_every_trial_once_and_skips_done() {
        let models = vec!["a".to_string(), "b".to_string()];
        let input = PlanInput {
            models: &models,
            suites: vec![("store".into(), vec!["L1".into(), "L2".into()])],
            router_messages: vec![0, 1, 2],
            trials: 2,
            call_caps: &[10],
            modes: vec![Mode::Agent],
            rounds: false,
        };
        let (all, skipped) = plan(&input, &BTreeSet::new());
        assert_eq!((all.len(), skipped), (2 * (2 * 2 + 3 * 2), 0));
        assert_eq!(all[0].model(), "a");
        let done: BTreeSet<TrialKey> = all.iter().take(3).map(TrialSpec::key).collect();
        let (rest, skipped) = plan(&input, &done);
        assert_eq!((rest.len(), skipped), (all.len() - 3, 3));
        assert!(rest.iter().all(|t| !done.contains(&t.key())));
        let rounds = PlanInput {
            rounds: true,
            ..input
        };
        let (by_round, _) = plan(&rounds, &BTreeSet::new());
        assert_eq!(by_round.len(), all.len());
        let trial = |t: &TrialSpec| t.key().trial;
        let order: Vec<(u32, &str)> = by_round.iter().map(|t| (trial(t), t.model())).collect();
        assert_eq!(order[..5], [(0, "a"); 5]);
        assert_eq!(order[5..10], [(0, "b"); 5]);
        assert!(order[10..].iter().all(|&(t, _)| t == 1));
    }
}
