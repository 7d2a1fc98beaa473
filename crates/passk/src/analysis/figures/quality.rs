//! Quality beyond pass/fail (new in passk): the four-state table (seed 003), control-flow rates
//! (seed 000) and run-to-run noise per task.

use crate::analysis::{Rate, count_per_task};
use crate::runner::record::ConversationRecord;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// Conversations by (trajectory correct?) x (end state and replies correct?).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FourState {
    /// Right trajectory, passed.
    pub right_path_right_answer: usize,
    /// Right trajectory, failed.
    pub right_path_wrong_answer: usize,
    /// Wrong trajectory, passed (right for the wrong reasons, or a shortcut).
    pub wrong_path_right_answer: usize,
    /// Wrong trajectory, failed.
    pub wrong_path_wrong_answer: usize,
    /// Graded conversations whose verdict does not say (imported records, suites without gold).
    pub trajectory_unknown: usize,
    /// Graded conversations on tasks that need tools.
    pub tool_task_conversations: usize,
    /// Passes on tasks that need tools.
    pub tool_task_passes: usize,
    /// Orchestrator model calls per pass on tasks that need tools (a toolless baseline cannot
    /// win it); `None` without a pass.
    pub steps_per_correct_answer: Option<f64>,
}

/// The four-state table as running totals over graded conversations.
#[derive(Debug, Default)]
pub struct FourStateSums {
    table: FourState,
    steps: usize,
}

impl FourStateSums {
    /// Adds one graded conversation; tasks in `toolless_tasks` are left out of the steps per
    /// correct answer.
    pub fn add(&mut self, c: &ConversationRecord, toolless_tasks: &BTreeSet<String>) {
        let f = &mut self.table;
        let passed = c.verdict.passed;
        match (c.verdict.trajectory_correct, passed) {
            (Some(true), true) => f.right_path_right_answer += 1,
            (Some(true), false) => f.right_path_wrong_answer += 1,
            (Some(false), true) => f.wrong_path_right_answer += 1,
            (Some(false), false) => f.wrong_path_wrong_answer += 1,
            (None, _) => f.trajectory_unknown += 1,
        }
        if !toolless_tasks.contains(&c.task) {
            f.tool_task_conversations += 1;
            f.tool_task_passes += usize::from(passed);
            self.steps += c.orchestrator_calls().count();
        }
    }

    /// The table.
    pub fn finish(self) -> FourState {
        let mut f = self.table;
        f.steps_per_correct_answer =
            (f.tool_task_passes > 0).then(|| self.steps as f64 / f.tool_task_passes as f64);
        f
    }
}

/// The four-state table over graded conversations; tasks in `toolless_tasks` are left out of the
/// steps per correct answer.
/// For the tests: the running totals fed these records.
#[cfg(test)]
pub fn four_state(convs: &[&ConversationRecord], toolless_tasks: &BTreeSet<String>) -> FourState {
    let mut f = FourStateSums::default();
    convs.iter().for_each(|c| f.add(c, toolless_tasks));
    f.finish()
}

/// Control-flow rates (seed 000), each over the conversations whose verdict says: a suite leaves a
/// flag unset (`None`) where it does not apply, so the triage suite's over-model rate is over its
/// rule-resolvable tickets and its under-tool rate over its lookup tickets.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ControlFlow {
    /// Invented tool names (outside the suite's tools).
    pub unknown_verb: Option<Rate>,
    /// A fact that needed a lookup stated without a successful one (store: an order fact in a
    /// reply; triage: a drafted reply before looking the ticket's order up, or no lookup at all).
    pub under_tool: Option<Rate>,
    /// More model calls than the gold trajectory needs, or the cap (triage: or never halted).
    pub loop_overrun: Option<Rate>,
    /// Rule-resolvable tickets on which a model call went to something the rule did not need
    /// before the ticket was closed (triage suite).
    pub over_model: Option<Rate>,
}

/// Control-flow rates as running totals over graded conversations: per task, (flag said, flag
/// set) for unknown verb, under tool, loop overrun and over model.
#[derive(Debug, Default)]
pub struct ControlFlowSums([BTreeMap<String, (usize, usize)>; 4]);

impl ControlFlowSums {
    /// Adds one graded conversation.
    pub fn add(&mut self, c: &ConversationRecord) {
        let k = &c.verdict.control;
        let flags = [k.unknown_verb, k.under_tool, k.loop_overrun, k.over_model];
        for (per_task, flag) in self.0.iter_mut().zip(flags) {
            if let Some(set) = flag {
                count_per_task(per_task, &c.task, set);
            }
        }
    }

    /// The rates.
    pub fn finish(self) -> ControlFlow {
        let [unknown_verb, under_tool, loop_overrun, over_model] =
            self.0.map(|per_task| Rate::over_tasks(&per_task));
        ControlFlow {
            unknown_verb,
            under_tool,
            loop_overrun,
            over_model,
        }
    }
}

/// Control-flow rates over graded conversations.
pub fn control_flow(convs: &[&ConversationRecord]) -> ControlFlow {
    let mut f = ControlFlowSums::default();
    convs.iter().for_each(|c| f.add(c));
    f.finish()
}

/// Disagreement among the trials of each task.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Noise {
    /// Per task: the share of its trials that disagree with its majority verdict
    /// (`min(passes, fails) / trials`; 0.5 on a tie).
    pub per_task: BTreeMap<String, f64>,
    /// Mean over tasks.
    pub mean: Option<f64>,
    /// Tasks whose trials did not all agree.
    pub tasks_with_disagreement: usize,
}

/// Noise from `(trials, passes)` per task.
pub fn noise(per_task: &BTreeMap<String, (usize, usize)>) -> Noise {
    let mut n = Noise::default();
    for (task, &(trials, passes)) in per_task {
        if trials == 0 {
            continue;
        }
        let minority = passes.min(trials - passes);
        n.tasks_with_disagreement += usize::from(minority > 0);
        n.per_task
            .insert(task.clone(), minority as f64 / trials as f64);
    }
    let v: Vec<f64> = n.per_task.values().copied().collect();
    n.mean = crate::analysis::figures::latency::mean(&v);
    n
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixtures::{call, conversation};

    #[test]
    fn four_state_cells_and_steps() {
        let mut a = conversation("m", "L1", 0, true, vec![call(1, 1), call(1, 1)]);
        a.verdict.trajectory_correct = Some(true);
        let mut b = conversation("m", "L1", 1, true, vec![call(1, 1)]);
        b.verdict.trajectory_correct = Some(false);
        let mut c = conversation(
            "m",
            "L1",
            2,
            false,
            vec![call(1, 1), call(1, 1), call(1, 1)],
        );
        c.verdict.trajectory_correct = Some(false);
        let d = conversation("m", "X1", 0, true, vec![call(1, 1)]);
        let toolless: BTreeSet<String> = ["X1".to_string()].into();
        let f = four_state(&[&a, &b, &c, &d], &toolless);
        assert_eq!(f.right_path_right_answer, 1);
        assert_eq!(f.wrong_path_right_answer, 1);
        assert_eq!(f.wrong_path_wrong_answer, 1);
        assert_eq!(f.trajectory_unknown, 1);
        // L1: 6 model calls over 2 passes; X1 is left out.
        assert_eq!(f.tool_task_conversations, 3);
        assert_eq!(f.steps_per_correct_answer, Some(3.0));
    }

    #[test]
    fn control_flow_counts_only_known_flags() {
        let mut a = conversation("m", "L1", 0, true, vec![]);
        a.verdict.control.unknown_verb = Some(true);
        let mut b = conversation("m", "L1", 1, true, vec![]);
        b.verdict.control.unknown_verb = Some(false);
        let c = conversation("m", "L1", 2, true, vec![]);
        let f = control_flow(&[&a, &b, &c]);
        assert_eq!(f.unknown_verb.map(|r| (r.hits, r.of)), Some((1, 2)));
        // Counted per task, so the rate carries its interval over the tasks.
        assert!(f.unknown_verb.unwrap().ci95.is_some());
        assert_eq!(f.under_tool, None);
    }

    #[test]
    fn over_model_is_over_the_conversations_that_set_it() {
        let mut rule = conversation("m", "TK-101", 0, true, vec![]);
        rule.verdict.control.over_model = Some(true);
        let mut rule2 = conversation("m", "TK-102", 0, true, vec![]);
        rule2.verdict.control.over_model = Some(false);
        let mut lookup = conversation("m", "TK-115", 0, true, vec![]);
        lookup.verdict.control.under_tool = Some(true);
        let f = control_flow(&[&rule, &rule2, &lookup]);
        assert_eq!(f.over_model.map(|r| (r.hits, r.of)), Some((1, 2)));
        assert_eq!(f.under_tool.map(|r| (r.hits, r.of)), Some((1, 1)));
        assert_eq!(f.loop_overrun, None);
    }

    #[test]
    fn noise_is_the_minority_share() {
        let t: BTreeMap<String, (usize, usize)> = [
            ("a".to_string(), (5, 5)),
            ("b".to_string(), (5, 1)),
            ("c".to_string(), (4, 2)),
        ]
        .into();
        let n = noise(&t);
        assert_eq!(n.per_task["a"], 0.0);
        assert_eq!(n.per_task["b"], 0.2);
        assert_eq!(n.per_task["c"], 0.5);
        assert!((n.mean.unwrap() - 0.7 / 3.0).abs() < 1e-12);
        assert_eq!(n.tasks_with_disagreement, 2);
    }
}
