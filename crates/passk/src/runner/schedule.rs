//! The ordered list of trials of a run, and which of them a resume skips.
//!
//! Model by model (one load per model), then cell by cell of a factorial design (tool docs x router
//! in front), then call cap by call cap (budget sweep), then trial by trial over all tasks, so that
//! an interrupted run has spread its finished trials evenly over the
//! tasks; standalone router messages follow each model's conversations.

use crate::domain::{PromptVariant, ToolVariant};
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
        /// Tool documentation variant.
        tool_docs: ToolVariant,
        /// Router in front of the agent.
        router_in_front: bool,
        /// Prompt variant.
        prompt: PromptVariant,
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
                tool_docs,
                router_in_front,
                prompt,
            } => TrialKey {
                suite: suite.clone(),
                model: model.clone(),
                task: task_id.clone(),
                trial: *trial,
                call_cap: *call_cap,
                mode: *mode,
                tool_docs: Some(*tool_docs),
                router_in_front: *router_in_front,
                prompt: (!prompt.is_policy()).then_some(*prompt),
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
                tool_docs: None,
                router_in_front: false,
                prompt: None,
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

/// What to schedule.
#[derive(Debug, Clone)]
pub struct ScheduleInput<'a> {
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
    /// Tool documentation variants (never empty).
    pub tool_docs: &'a [ToolVariant],
    /// Router in front: off, on, or both (never empty).
    pub router_in_front: &'a [bool],
    /// Prompt variants (never empty).
    pub prompt: &'a [PromptVariant],
    /// Round by round (trial index outermost, every model in each), for a run that may stop
    /// after any round; otherwise model by model.
    pub rounds: bool,
}

/// The cells of the factorial design a mode plays: every (prompt, tool docs, router in front)
/// triple for the agent; the first only for the toolless baseline, which is shown no tools.
fn cells(input: &ScheduleInput<'_>, mode: Mode) -> Vec<(PromptVariant, ToolVariant, bool)> {
    let n = |len: usize| {
        if mode == Mode::Toolless {
            len.min(1)
        } else {
            len
        }
    };
    let docs = &input.tool_docs[..n(input.tool_docs.len())];
    let routers = &input.router_in_front[..n(input.router_in_front.len())];
    input.prompt[..n(input.prompt.len())]
        .iter()
        .flat_map(|&p| {
            docs.iter()
                .flat_map(move |&d| routers.iter().map(move |&r| (p, d, r)))
        })
        .collect()
}

/// The full schedule and, separately, the trials a resume skips.
pub fn schedule(input: &ScheduleInput<'_>, done: &BTreeSet<TrialKey>) -> (Vec<TrialSpec>, usize) {
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

/// One model's conversation trials over `trials`: mode by mode, cell by cell, cap by cap, trial
/// by trial over all tasks.
fn conversations(
    input: &ScheduleInput<'_>,
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
        for (prompt, tool_docs, router_in_front) in cells(input, mode) {
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
                                tool_docs,
                                router_in_front,
                                prompt,
                            });
                        }
                    }
                }
            }
        }
    }
    all
}

/// One model's standalone router calls over `trials`.
fn router_calls(
    input: &ScheduleInput<'_>,
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
    fn schedules_every_trial_once_and_skips_done() {
        let models = vec!["a".to_string(), "b".to_string()];
        let input = ScheduleInput {
            models: &models,
            suites: vec![("store".into(), vec!["L1".into(), "L2".into()])],
            router_messages: vec![0, 1, 2],
            trials: 2,
            call_caps: &[10],
            modes: vec![Mode::Agent],
            tool_docs: &[ToolVariant::BARE],
            router_in_front: &[false],
            prompt: &[PromptVariant::POLICY],
            rounds: false,
        };
        let (all, skipped) = schedule(&input, &BTreeSet::new());
        assert_eq!((all.len(), skipped), (2 * (2 * 2 + 3 * 2), 0));
        assert_eq!(all[0].model(), "a");
        let done: BTreeSet<TrialKey> = all.iter().take(3).map(TrialSpec::key).collect();
        let (rest, skipped) = schedule(&input, &done);
        assert_eq!((rest.len(), skipped), (all.len() - 3, 3));
        assert!(rest.iter().all(|t| !done.contains(&t.key())));
        let rounds = ScheduleInput {
            rounds: true,
            ..input
        };
        let (by_round, _) = schedule(&rounds, &BTreeSet::new());
        assert_eq!(by_round.len(), all.len());
        let trial = |t: &TrialSpec| t.key().trial;
        let order: Vec<(u32, &str)> = by_round.iter().map(|t| (trial(t), t.model())).collect();
        assert_eq!(order[..5], [(0, "a"); 5]);
        assert_eq!(order[5..10], [(0, "b"); 5]);
        assert!(order[10..].iter().all(|&(t, _)| t == 1));
    }

    #[test]
    fn a_factorial_plays_every_cell_once_and_the_baseline_once() {
        let models = vec!["a".to_string()];
        let input = ScheduleInput {
            models: &models,
            suites: vec![("store".into(), vec!["L1".into(), "L2".into()])],
            router_messages: Vec::new(),
            trials: 2,
            call_caps: &[4, 8],
            modes: vec![Mode::Agent, Mode::Toolless],
            tool_docs: &[ToolVariant::BARE, ToolVariant::DOCUMENTED],
            router_in_front: &[false, true],
            prompt: &[PromptVariant::POLICY],
            rounds: false,
        };
        let (all, _) = schedule(&input, &BTreeSet::new());
        let keys: BTreeSet<TrialKey> = all.iter().map(TrialSpec::key).collect();
        // Agent: 4 cells x 2 caps x 2 trials x 2 tasks; toolless: 1 cell x 1 cap x 2 x 2.
        assert_eq!((all.len(), keys.len()), (32 + 4, 36));
        let cells: BTreeSet<(Option<ToolVariant>, bool)> = keys
            .iter()
            .filter(|k| k.mode == Mode::Agent)
            .map(|k| (k.tool_docs, k.router_in_front))
            .collect();
        assert_eq!(cells.len(), 4);
    }

    #[test]
    fn prompts_cross_the_other_factors_and_the_baseline_plays_the_first() {
        let models = vec!["a".to_string()];
        let strict = PromptVariant::named("strict").expect("name");
        let input = ScheduleInput {
            models: &models,
            suites: vec![("store".into(), vec!["L1".into()])],
            router_messages: Vec::new(),
            trials: 1,
            call_caps: &[4],
            modes: vec![Mode::Agent, Mode::Toolless],
            tool_docs: &[ToolVariant::BARE, ToolVariant::DOCUMENTED],
            router_in_front: &[false, true],
            prompt: &[PromptVariant::POLICY, strict],
            rounds: false,
        };
        let (all, _) = schedule(&input, &BTreeSet::new());
        let keys: BTreeSet<TrialKey> = all.iter().map(TrialSpec::key).collect();
        // Agent: 2 prompts x 2 docs x 2 routers; toolless: one cell, at the policy.
        assert_eq!((all.len(), keys.len()), (9, 9));
        let toolless: Vec<&TrialKey> = keys.iter().filter(|k| k.mode == Mode::Toolless).collect();
        assert_eq!(toolless.len(), 1);
        assert_eq!(toolless[0].prompt, None);
        let strict_cells = keys.iter().filter(|k| k.prompt == Some(strict)).count();
        assert_eq!(strict_cells, 4);
    }
}
