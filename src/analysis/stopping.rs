//! The stopping rule read from a run's records: which records a round's differences come from,
//! and the confidence sequence's state after each complete round. The runner and the report
//! both compute it here, so a resume and a report see the same sequence as the run that stopped.

use crate::analysis::sequence::{RoundState, replay};
use crate::runner::record::{ConversationRecord, Mode};
use crate::runner::settings::{RunSettings, SuiteChoice};
use crate::suite::ToolVariant;
use std::collections::{BTreeMap, BTreeSet};

/// The records a stopping rule compares: the primary suite's agent trials at the first call cap
/// and the first cell of a factorial design, the first two models (small, large), as the report's
/// break-even pairs them.
#[derive(Debug, Clone, PartialEq)]
pub struct Pairing {
    /// Suite name.
    pub suite: String,
    /// The first model.
    pub small: String,
    /// The second model.
    pub large: String,
    /// Call cap.
    pub call_cap: u32,
    /// Tool docs variant (the first of a factorial design).
    pub tool_docs: ToolVariant,
    /// Router in front (the first level of a factorial design).
    pub router_in_front: bool,
}

impl Pairing {
    /// The pairing of a run with these settings; `None` without two models or a conversation
    /// suite.
    pub fn of(settings: &RunSettings) -> Option<Pairing> {
        let suite = settings
            .suites
            .iter()
            .find(|s| **s != SuiteChoice::Router)?;
        Some(Pairing {
            suite: suite.name().to_string(),
            small: settings.models.first()?.clone(),
            large: settings.models.get(1)?.clone(),
            call_cap: *settings.call_caps.first()?,
            tool_docs: *settings.tool_docs.0.first()?,
            router_in_front: *settings.router_in_front.0.first()?,
        })
    }

    /// The task differences (large - small) of each complete round, in round order. A round is
    /// complete when every task seen has a record of both models at that trial; pairs where either
    /// record ended ungraded (a wire failure) are left out of the round.
    pub fn round_differences(&self, conversations: &[ConversationRecord]) -> Vec<Vec<f64>> {
        let mut verdicts: BTreeMap<(u32, &str), [Option<Option<bool>>; 2]> = BTreeMap::new();
        let mut tasks = BTreeSet::new();
        for c in conversations {
            let side = if c.model == self.small {
                0
            } else if c.model == self.large {
                1
            } else {
                continue;
            };
            let cell = c.tool_docs.is_none_or(|d| d == self.tool_docs)
                && c.router_in_front == self.router_in_front;
            if c.suite != self.suite
                || c.mode != Mode::Agent
                || c.call_cap != self.call_cap
                || !cell
            {
                continue;
            }
            tasks.insert(c.task.as_str());
            let graded = c.outcome.is_graded().then_some(c.verdict.passed);
            verdicts.entry((c.trial, c.task.as_str())).or_default()[side] = Some(graded);
        }
        let mut rounds = Vec::new();
        for round in 0.. {
            let mut diffs = Vec::new();
            for task in &tasks {
                match verdicts.get(&(round, *task)) {
                    Some([Some(small), Some(large)]) => {
                        if let (Some(s), Some(l)) = (small, large) {
                            diffs.push(f64::from(u8::from(*l)) - f64::from(u8::from(*s)));
                        }
                    }
                    _ => return rounds,
                }
            }
            if tasks.is_empty() {
                return rounds;
            }
            rounds.push(diffs);
        }
        rounds
    }
}

/// The sequence's state after each complete round of a run that stops when decided, up to the
/// first round that decides; `None` for a run without the rule.
pub fn states(
    settings: &RunSettings,
    conversations: &[ConversationRecord],
) -> Option<Vec<RoundState>> {
    let rule = settings.stop?.rule();
    let pairing = Pairing::of(settings)?;
    Some(replay(rule, &pairing.round_differences(conversations)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixtures::conversation;
    use crate::runner::record::Outcome;

    fn record(model: &str, task: &str, trial: u32, passed: Option<bool>) -> ConversationRecord {
        let mut c = conversation(model, task, trial, passed == Some(true), vec![]);
        if passed.is_none() {
            c.outcome = Outcome::TransportFail;
        }
        c
    }

    #[test]
    fn complete_rounds_only_and_ungraded_pairs_left_out() {
        let pairing = Pairing {
            suite: "store".into(),
            small: "s".into(),
            large: "l".into(),
            call_cap: 8,
            tool_docs: ToolVariant::Bare,
            router_in_front: false,
        };
        let records = vec![
            record("s", "A", 0, Some(false)),
            record("l", "A", 0, Some(true)),
            record("s", "B", 0, None),
            record("l", "B", 0, Some(true)),
            record("s", "A", 1, Some(true)),
            record("l", "A", 1, Some(true)),
            // Round 1 lacks B's large trial: incomplete.
            record("s", "B", 1, Some(true)),
            record("x", "B", 1, Some(true)),
        ];
        assert_eq!(pairing.round_differences(&records), vec![vec![1.0]]);
    }

    #[test]
    fn another_cell_of_a_factorial_is_not_compared() {
        let pairing = Pairing {
            suite: "store".into(),
            small: "s".into(),
            large: "l".into(),
            call_cap: 8,
            tool_docs: ToolVariant::Bare,
            router_in_front: false,
        };
        let mut records = vec![
            record("s", "A", 0, Some(false)),
            record("l", "A", 0, Some(true)),
        ];
        for (model, passed) in [("s", true), ("l", false)] {
            let mut routed = record(model, "A", 0, Some(passed));
            routed.router_in_front = true;
            records.push(routed);
            let mut documented = record(model, "A", 0, Some(passed));
            documented.tool_docs = Some(ToolVariant::Documented);
            records.push(documented);
        }
        assert_eq!(pairing.round_differences(&records), vec![vec![1.0]]);
    }
}
