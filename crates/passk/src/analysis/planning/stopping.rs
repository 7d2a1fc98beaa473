//! The stopping rule read from a run's records: which records a round's differences come from,
//! and the confidence sequence's state after each complete round. The runner, the summary and the
//! report all compute it here, so a resume and a report see the same sequence as the run that
//! stopped.

use crate::analysis::pair::order_models;
use crate::domain::{PromptVariant, ToolVariant};
use crate::runner::judge::{self, JudgeError, Judgement, RoundJudge};
use crate::runner::record::{ConversationRecord, Manifest, Mode, TrialKey};
use crate::runner::settings::{RunSettings, StopRule, SuiteChoice};
use crate::sequence::{Decision, RoundState, replay};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The records a stopping rule compares: the primary suite's agent trials at the first call cap
/// and the first cell of a factorial design, and the model pair every break-even of the report
/// uses (the first two models by parameter size when the manifest knows every size, else the
/// first two in manifest order).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoppingCell {
    /// Suite name.
    pub suite: String,
    /// The small model of the pair.
    pub small: String,
    /// The large model of the pair.
    pub large: String,
    /// How the pair was chosen, as the report's pairing says it.
    pub rule: String,
    /// Call cap.
    pub call_cap: u32,
    /// Tool docs variant (the first of a factorial design).
    pub tool_docs: ToolVariant,
    /// Router in front (the first level of a factorial design).
    pub router_in_front: bool,
    /// Prompt variant (the first of a factorial design).
    #[serde(default)]
    pub prompt: PromptVariant,
}

/// A round whose trials all have records, some of which ended ungraded (a wire failure): the
/// sequence waits at it until they are played again and graded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Waiting {
    /// Round number (the trial index, from 0).
    pub round: u32,
    /// The trials that ended ungraded, as (model, task).
    pub ungraded: Vec<(String, String)>,
}

/// The rounds a run's records hold for the rule.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Rounds {
    /// The task differences (large - small) of each complete round, in round order.
    pub complete: Vec<Vec<f64>>,
    /// The round after the complete ones, when it waits on ungraded trials.
    pub waiting: Option<Waiting>,
}

/// Each record of the pair's cell, by (trial, task), as [small, large]: `None` while a model
/// has no record of it, `Some(None)` when its latest record ended ungraded.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Verdicts(BTreeMap<(u32, String), [Option<Option<bool>>; 2]>);

impl StoppingCell {
    /// The pairing of a run with these settings and this manifest (which knows the models'
    /// parameter sizes); `None` without two models or a conversation suite.
    pub fn of(settings: &RunSettings, manifest: &Manifest) -> Option<StoppingCell> {
        let suite = settings
            .suites
            .iter()
            .find(|s| **s != SuiteChoice::Router)?;
        let models: BTreeSet<String> = settings.models.iter().cloned().collect();
        let pair = order_models(manifest, &models, None).1?;
        Some(StoppingCell {
            suite: suite.name().to_string(),
            small: pair.small,
            large: pair.large,
            rule: pair.rule,
            call_cap: *settings.call_caps.first()?,
            tool_docs: *settings.tool_docs.0.first()?,
            router_in_front: *settings.router_in_front.0.first()?,
            prompt: *settings.prompt.0.first()?,
        })
    }

    /// What a decision says about this pair, naming the models.
    pub fn says(&self, d: Decision) -> String {
        let (small, large) = (&self.small, &self.large);
        match d {
            Decision::Continue => "not decided".into(),
            Decision::LargeBetter => {
                format!("{large} succeeds more often than {small} (interval above 0)")
            }
            Decision::SmallBetter => {
                format!("{small} succeeds more often than {large} (interval below 0)")
            }
            Decision::Equivalent => format!(
                "{large} and {small} are equivalent within the margin (interval inside ±margin)"
            ),
        }
    }

    /// Whether a trial is one the rule compares: an agent trial of either model of the pair in
    /// the pair's suite, call cap and factorial cell.
    pub fn compares(&self, key: &TrialKey) -> bool {
        (key.model == self.small || key.model == self.large)
            && key.suite == self.suite
            && key.mode == Mode::Agent
            && key.call_cap == self.call_cap
            && key.tool_docs.is_none_or(|d| d == self.tool_docs)
            && key.router_in_front == self.router_in_front
            && key.prompt.unwrap_or(PromptVariant::POLICY) == self.prompt
    }

    /// Notes a conversation's verdict among `verdicts` when it is of the pair's cell.
    pub fn note(&self, verdicts: &mut Verdicts, c: &ConversationRecord) {
        if !self.compares(&c.key()) {
            return;
        }
        let side = usize::from(c.model == self.large);
        let graded = c.outcome.is_graded().then_some(c.verdict.passed);
        let entry = verdicts.0.entry((c.trial, c.task.clone())).or_default();
        entry[side] = Some(graded);
    }

    /// The complete rounds, in round order, and the round that waits on ungraded trials. A round
    /// is complete when every task seen has a graded record of both models at that trial (a later
    /// record of a trial supersedes an earlier one). A round with a record of every pair, some
    /// ungraded, waits: it and every later round stay out of the sequence until those trials are
    /// graded, because the sequence's bet needs every task of a round (docs/decisions.md).
    pub fn rounds(&self, conversations: &[ConversationRecord]) -> Rounds {
        let mut verdicts = Verdicts::default();
        for c in conversations {
            self.note(&mut verdicts, c);
        }
        self.rounds_of(&verdicts)
    }

    /// [`StoppingCell::rounds`] of the verdicts noted.
    fn rounds_of(&self, verdicts: &Verdicts) -> Rounds {
        let verdicts = &verdicts.0;
        let tasks: BTreeSet<&str> = verdicts.keys().map(|k| k.1.as_str()).collect();
        let mut out = Rounds::default();
        if tasks.is_empty() {
            return out;
        }
        for round in 0.. {
            let mut diffs = Vec::new();
            let mut ungraded = Vec::new();
            for task in &tasks {
                let Some([Some(small), Some(large)]) = verdicts.get(&(round, (*task).to_string()))
                else {
                    return out;
                };
                match (small, large) {
                    (Some(s), Some(l)) => {
                        diffs.push(f64::from(u8::from(*l)) - f64::from(u8::from(*s)));
                    }
                    _ => {
                        for (model, verdict) in [(&self.small, small), (&self.large, large)] {
                            if verdict.is_none() {
                                ungraded.push((model.clone(), (*task).to_string()));
                            }
                        }
                    }
                }
            }
            if !ungraded.is_empty() {
                out.waiting = Some(Waiting { round, ungraded });
                return out;
            }
            out.complete.push(diffs);
        }
        out
    }
}

/// Where a run that stops when decided stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Standing {
    /// Decided before the k cap: the run stopped early.
    StoppedEarly,
    /// Decided at the last round the k cap allows.
    DecidedAtCap,
    /// Played every round the k cap allows without deciding.
    CapUndecided,
    /// A round waits on trials that ended ungraded.
    Waiting,
    /// Neither decided nor at the cap: the run is unfinished.
    Unfinished,
}

/// The stopping rule's whole state for a run: the rule, the pair, every complete round's state
/// and where the run stands (in `summary.json` as `stopping`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stopping {
    /// The records compared.
    pub pairing: StoppingCell,
    /// Error level of the sequence.
    pub alpha: f64,
    /// Equivalence margin, percentage points.
    pub margin_pp: f64,
    /// The k cap: the most rounds the run may play.
    pub k_cap: u32,
    /// The sequence's state after each complete round, up to the first that decides.
    pub rounds: Vec<RoundState>,
    /// The round that waits on ungraded trials, if one does.
    pub waiting: Option<Waiting>,
    /// Where the run stands.
    pub standing: Standing,
    /// The last round's decision ("not decided" before any round), naming the models.
    pub says: String,
}

impl Stopping {
    /// The last complete round's state.
    pub fn last(&self) -> Option<&RoundState> {
        self.rounds.last()
    }

    /// The state of the round that decided, if one did.
    pub fn decided(&self) -> Option<&RoundState> {
        self.last().filter(|s| s.decision.stops())
    }
}

/// The stopping rule's state for a run with these settings; `None` for a run without the rule
/// (or without two models and a conversation suite).
pub fn state(
    settings: &RunSettings,
    manifest: &Manifest,
    conversations: &[ConversationRecord],
) -> Option<Stopping> {
    let mut sums = StoppingSums::new(settings.clone(), manifest)?;
    for c in conversations {
        sums.add(c);
    }
    Some(sums.stopping())
}

/// [`state`] fed one conversation at a time: the pair's verdicts.
#[derive(Debug, Clone)]
pub struct StoppingSums {
    stop: StopRule,
    settings: RunSettings,
    pairing: StoppingCell,
    verdicts: Verdicts,
}

impl StoppingSums {
    /// `None` for a run without the rule (or without two models and a conversation suite).
    pub fn new(settings: RunSettings, manifest: &Manifest) -> Option<StoppingSums> {
        let stop = settings.stop?;
        let pairing = StoppingCell::of(&settings, manifest)?;
        Some(StoppingSums {
            stop,
            settings,
            pairing,
            verdicts: Verdicts::default(),
        })
    }

    /// [`StoppingSums::new`] with the settings the manifest records.
    pub fn of_run(manifest: &Manifest) -> Option<StoppingSums> {
        let settings: RunSettings = serde_json::from_value(manifest.settings.clone()).ok()?;
        StoppingSums::new(settings, manifest)
    }

    /// Adds a conversation (one outside the pair's cell is not read).
    pub fn add(&mut self, c: &ConversationRecord) {
        self.pairing.note(&mut self.verdicts, c);
    }

    /// The rule's state after the conversations added.
    pub fn stopping(self) -> Stopping {
        let settings = &self.settings;
        let stop = self.stop;
        let seen = self.pairing.rounds_of(&self.verdicts);
        let rounds = replay(stop.rule(), &seen.complete);
        let last = rounds.last();
        let decided = last.is_some_and(|s| s.decision.stops());
        let at_cap = last.is_some_and(|s| s.round + 1 >= settings.trials);
        let standing = match (decided, at_cap) {
            (true, false) => Standing::StoppedEarly,
            (true, true) => Standing::DecidedAtCap,
            (false, true) => Standing::CapUndecided,
            (false, false) if seen.waiting.is_some() => Standing::Waiting,
            (false, false) => Standing::Unfinished,
        };
        let says = self
            .pairing
            .says(last.map_or(Decision::Continue, |s| s.decision));
        Stopping {
            pairing: self.pairing,
            alpha: stop.alpha,
            margin_pp: stop.margin_pp,
            k_cap: settings.trials,
            waiting: seen.waiting.filter(|_| !decided && !at_cap),
            rounds,
            standing,
            says,
        }
    }
}

/// The round judge a run that stops when decided is handed: it reads the run's records back and
/// computes the rule's [`state`] from them.
#[derive(Debug, Clone, Copy, Default)]
pub struct SequenceJudge;

impl RoundJudge for SequenceJudge {
    fn judge(
        &self,
        dir: &Path,
        settings: &RunSettings,
        manifest: &Manifest,
    ) -> Result<Option<Judgement>, JudgeError> {
        let run = crate::analysis::load_run_keeping(dir, crate::analysis::Keep::Statistics)?;
        Ok(
            state(settings, manifest, &run.conversations)
                .map(|st| st.judgement(&run.conversations)),
        )
    }
}

impl Stopping {
    /// What the runner acts on: the rounds, what they say, and the keys of the waiting round's
    /// ungraded trials among `conversations`.
    pub fn judgement(&self, conversations: &[ConversationRecord]) -> Judgement {
        let waiting = self.waiting.as_ref().map(|w| {
            let ungraded: Vec<TrialKey> = conversations
                .iter()
                .map(ConversationRecord::key)
                .filter(|k| {
                    k.trial == w.round
                        && self.pairing.compares(k)
                        && w.ungraded
                            .iter()
                            .any(|(m, task)| *m == k.model && *task == k.task)
                })
                .collect();
            judge::WaitingRound {
                round: w.round,
                ungraded,
            }
        });
        Judgement {
            rounds: self.rounds.clone(),
            says: self.says.clone(),
            waiting,
        }
    }
}

/// [`state`] with the settings the manifest records.
pub fn of_run(manifest: &Manifest, conversations: &[ConversationRecord]) -> Option<Stopping> {
    let mut sums = StoppingSums::of_run(manifest)?;
    for c in conversations {
        sums.add(c);
    }
    Some(sums.stopping())
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

    fn pairing() -> StoppingCell {
        StoppingCell {
            suite: "store".into(),
            small: "s".into(),
            large: "l".into(),
            rule: "first two models in manifest order".into(),
            call_cap: 8,
            tool_docs: ToolVariant::BARE,
            router_in_front: false,
            prompt: PromptVariant::POLICY,
        }
    }

    #[test]
    fn complete_rounds_only() {
        let records = vec![
            record("s", "A", 0, Some(false)),
            record("l", "A", 0, Some(true)),
            record("s", "B", 0, Some(true)),
            record("l", "B", 0, Some(true)),
            record("s", "A", 1, Some(true)),
            record("l", "A", 1, Some(true)),
            // Round 1 lacks B's large trial: incomplete, and not waiting either.
            record("s", "B", 1, Some(true)),
            record("x", "B", 1, Some(true)),
        ];
        let rounds = pairing().rounds(&records);
        assert_eq!(rounds.complete, vec![vec![1.0, 0.0]]);
        assert_eq!(rounds.waiting, None);
    }

    #[test]
    fn a_round_with_an_ungraded_pair_waits_until_it_is_graded() {
        let mut records = vec![
            record("s", "A", 0, Some(false)),
            record("l", "A", 0, Some(true)),
            record("s", "B", 0, None),
            record("l", "B", 0, Some(true)),
            record("s", "A", 1, Some(true)),
            record("l", "A", 1, Some(true)),
            record("s", "B", 1, Some(true)),
            record("l", "B", 1, Some(true)),
        ];
        // Neither round 0 without B nor round 1 after it reaches the sequence.
        let rounds = pairing().rounds(&records);
        assert!(rounds.complete.is_empty(), "{rounds:?}");
        let ungraded = vec![("s".to_string(), "B".to_string())];
        assert_eq!(rounds.waiting, Some(Waiting { round: 0, ungraded }));
        // Played again and graded, the later record completes round 0, and round 1 follows.
        records.push(record("s", "B", 0, Some(false)));
        let rounds = pairing().rounds(&records);
        assert_eq!(rounds.complete, vec![vec![1.0, 1.0], vec![0.0, 0.0]]);
        assert_eq!(rounds.waiting, None);
    }

    #[test]
    fn a_decision_names_the_models() {
        let p = pairing();
        assert!(
            p.says(Decision::LargeBetter)
                .starts_with("l succeeds more often than s")
        );
        assert!(
            p.says(Decision::SmallBetter)
                .starts_with("s succeeds more often than l")
        );
        assert!(
            p.says(Decision::Equivalent)
                .starts_with("l and s are equivalent")
        );
    }

    #[test]
    fn another_cell_of_a_factorial_is_not_compared() {
        let pairing = pairing();
        let mut records = vec![
            record("s", "A", 0, Some(false)),
            record("l", "A", 0, Some(true)),
        ];
        for (model, passed) in [("s", true), ("l", false)] {
            let mut routed = record(model, "A", 0, Some(passed));
            routed.router_in_front = true;
            records.push(routed);
            let mut documented = record(model, "A", 0, Some(passed));
            documented.tool_docs = Some(ToolVariant::DOCUMENTED);
            records.push(documented);
        }
        assert_eq!(pairing.rounds(&records).complete, vec![vec![1.0]]);
    }
}
