//! The grid's data: every trial of a run, placed in its configuration (the summary's group), task
//! and model, with its outcome, failure mode and the line of its details. Records are added as they
//! are read; the index and the lines come out sorted, so append order changes nothing.

use super::detail::{SharedTexts, router_line, trial_line};
use super::source::each_record;
use crate::analysis::Summary;
use crate::report::ReportError;
use crate::runner::record::{
    CONVERSATIONS_FILE, ConversationRecord, Outcome, ROUTER_FILE, Record, RouterRecord, TrialKey,
};
use crate::trace::FailureMode;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

/// The group key of the summary that `c` was counted in (`None`: in none, e.g. an unknown model).
pub fn group_of<'s>(summary: &'s Summary, c: &ConversationRecord) -> Option<&'s str> {
    summary
        .groups
        .iter()
        .find(|(_, g)| g.holds(c))
        .map(|(key, _)| key.as_str())
}

/// The configuration of the standalone router calls.
const ROUTER_CONFIG: &str = "router";

/// Every trial of the run in `dir` (`conversations.jsonl`, then `router.jsonl`), read one record
/// at a time, placed in the groups of `summary`.
pub fn read_run(summary: &Summary, dir: &Path) -> Result<TrialData, ReportError> {
    let mut set = TrialSet::new(summary);
    for file in [CONVERSATIONS_FILE, ROUTER_FILE] {
        each_record(&dir.join(file), |r| set.add_record(&r))?;
    }
    Ok(set.finish())
}

/// One trial as the grid knows it.
#[derive(Debug, Clone, PartialEq)]
struct Entry {
    config: String,
    category: String,
    outcome: Outcome,
    failure_mode: Option<FailureMode>,
    line: String,
}

/// Every trial of a run, ready for the page.
#[derive(Debug)]
pub struct TrialSet<'s> {
    summary: &'s Summary,
    trials: BTreeMap<TrialKey, Entry>,
    texts: SharedTexts,
}

/// The page's view of the trials: the index (JSON) and one details line per trial, in index order.
#[derive(Debug, Clone, PartialEq)]
pub struct TrialData {
    /// `models`, `configs` (key and tasks), `trials` (rows) and the shared `texts`.
    pub index: Value,
    /// One JSON line per trial row.
    pub lines: Vec<String>,
}

impl<'s> TrialSet<'s> {
    /// An empty set for the run that `summary` describes.
    pub fn new(summary: &'s Summary) -> TrialSet<'s> {
        TrialSet {
            summary,
            trials: BTreeMap::new(),
            texts: SharedTexts::default(),
        }
    }

    /// Adds a conversation or a standalone router record.
    pub fn add_record(&mut self, record: &Record) {
        match record {
            Record::Conversation(c) => self.add(c),
            Record::Router(r) => self.add_router(r),
        }
    }

    /// Adds a standalone router call: configuration `router`, task = message index, category =
    /// gold label.
    pub fn add_router(&mut self, r: &RouterRecord) {
        if !self.summary.router.contains_key(&r.model) {
            return;
        }
        let entry = || Entry {
            config: ROUTER_CONFIG.into(),
            category: r.label.clone(),
            outcome: r.outcome,
            failure_mode: None,
            line: router_line(r),
        };
        Self::insert_into(&mut self.trials, r.key(), entry);
    }

    /// Adds a record. A later record of the same trial replaces an earlier one that ended on the
    /// wire (a trial played again on resume), as the analysis does; a graded one is kept.
    pub fn add(&mut self, c: &ConversationRecord) {
        let Some(config) = group_of(self.summary, c) else {
            return;
        };
        let config = config.to_string();
        let texts = &mut self.texts;
        let entry = || Entry {
            config,
            category: c.category.clone(),
            outcome: c.outcome,
            failure_mode: c.verdict.failure_mode,
            line: trial_line(c, texts),
        };
        Self::insert_into(&mut self.trials, c.key(), entry);
    }

    /// Keeps a graded record against a later one of the same trial; anything else is replaced.
    fn insert_into(
        trials: &mut BTreeMap<TrialKey, Entry>,
        key: TrialKey,
        entry: impl FnOnce() -> Entry,
    ) {
        if trials.get(&key).is_some_and(|old| old.outcome.is_graded()) {
            return;
        }
        trials.insert(key, entry());
    }

    /// The index and lines, sorted by configuration, task, model and trial.
    pub fn finish(self) -> TrialData {
        let TrialSet {
            summary,
            mut trials,
            texts,
        } = self;
        let layout = Layout::of(summary, &trials);
        let mut rows: Vec<(usize, usize, usize, TrialKey)> = trials
            .iter()
            .filter_map(|(key, e)| {
                let (ci, ti) = *layout.task_at.get(&(e.config.clone(), key.task.clone()))?;
                let mi = layout.models.iter().position(|m| *m == key.model)?;
                Some((ci, ti, mi, key.clone()))
            })
            .collect();
        rows.sort_by_key(|r| (r.0, r.1, r.2, r.3.trial));
        let mut index_rows = Vec::with_capacity(rows.len());
        let mut lines = Vec::with_capacity(rows.len());
        for (ci, ti, mi, key) in rows {
            if let Some(e) = trials.remove(&key) {
                index_rows.push(json!([
                    ci,
                    ti,
                    mi,
                    key.trial,
                    e.outcome,
                    e.failure_mode,
                    lines.len()
                ]));
                lines.push(e.line);
            }
        }
        let configs: Vec<Value> = layout
            .configs
            .iter()
            .map(|(k, ts)| json!({"key": k, "tasks": ts}))
            .collect();
        let index = json!({
            "models": layout.models,
            "configs": configs,
            "trials": index_rows,
            "texts": texts.table(),
        });
        TrialData { index, lines }
    }
}

/// Where the grid puts each trial: models in report order, configurations (conversation groups in
/// key order, the standalone router calls last) with their tasks in natural order.
struct Layout {
    models: Vec<String>,
    configs: Vec<(String, Vec<(String, String)>)>,
    /// (configuration, task) -> (configuration index, task index).
    task_at: HashMap<(String, String), (usize, usize)>,
}

impl Layout {
    fn of(summary: &Summary, trials: &BTreeMap<TrialKey, Entry>) -> Layout {
        let mut models: Vec<String> = summary.models.clone();
        let mut tasks: BTreeMap<&str, BTreeSet<(TaskOrder, &str)>> = BTreeMap::new();
        for (key, e) in trials {
            if !models.contains(&key.model) {
                models.push(key.model.clone());
            }
            tasks
                .entry(&e.config)
                .or_default()
                .insert((TaskOrder::of(&key.task), &e.category));
        }
        let mut configs: Vec<(String, Vec<(String, String)>)> = tasks
            .iter()
            .map(|(k, set)| {
                let ts = set.iter().map(|(t, c)| (t.id.to_string(), c.to_string()));
                (k.to_string(), ts.collect())
            })
            .collect();
        configs.sort_by(|a, b| (a.0 == ROUTER_CONFIG, &a.0).cmp(&(b.0 == ROUTER_CONFIG, &b.0)));
        let mut task_at = HashMap::new();
        for (ci, (config, ts)) in configs.iter().enumerate() {
            for (ti, (task, _)) in ts.iter().enumerate() {
                task_at.insert((config.clone(), task.clone()), (ci, ti));
            }
        }
        Layout {
            models,
            configs,
            task_at,
        }
    }
}

/// Task ids in natural order: `L2` before `L10`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct TaskOrder<'a> {
    prefix: &'a str,
    number: u64,
    id: &'a str,
}

impl<'a> TaskOrder<'a> {
    fn of(id: &'a str) -> TaskOrder<'a> {
        let digits = id.len() - id.trim_start_matches(|c: char| !c.is_ascii_digit()).len();
        let (prefix, rest) = id.split_at(digits);
        let end = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        TaskOrder {
            prefix,
            number: rest[..end].parse().unwrap_or(0),
            id,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixtures::{call, conversation};
    use crate::analysis::{AnalysisOptions, summarize};
    use crate::runner::record::Manifest;

    fn records() -> Vec<ConversationRecord> {
        let mut out = Vec::new();
        for model in ["b", "a"] {
            for task in ["L10", "L2"] {
                for trial in 0..2 {
                    let passed = !(model == "a" && task == "L2" && trial == 1);
                    out.push(conversation(model, task, trial, passed, vec![call(10, 1)]));
                }
            }
        }
        out
    }

    #[test]
    fn index_is_sorted_and_independent_of_record_order() {
        let recs = records();
        let m = Manifest::default();
        let summary = summarize(&m, &recs, &[], &AnalysisOptions::default());
        let build = |recs: &[ConversationRecord]| {
            let mut set = TrialSet::new(&summary);
            recs.iter().for_each(|c| set.add(c));
            set.finish()
        };
        let data = build(&recs);
        let mut reversed = recs.clone();
        reversed.reverse();
        assert_eq!(data, build(&reversed));
        assert_eq!(data.lines.len(), 8);
        let tasks = &data.index["configs"][0]["tasks"];
        assert_eq!(tasks[0][0], "L2");
        assert_eq!(tasks[1][0], "L10");
        let fails: Vec<&Value> = data.index["trials"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t[4] == "model_fail")
            .collect();
        assert_eq!(fails.len(), 1);
    }

    #[test]
    fn a_replayed_wire_failure_is_replaced_but_a_graded_trial_is_kept() {
        let mut recs = records();
        let mut lost = recs[0].clone();
        lost.outcome = Outcome::TransportFail;
        recs.insert(0, lost);
        let summary = summarize(
            &Manifest::default(),
            &recs[1..],
            &[],
            &AnalysisOptions::default(),
        );
        let mut set = TrialSet::new(&summary);
        recs.iter().for_each(|c| set.add(c));
        let late = recs[1].clone();
        let mut later_loss = late.clone();
        later_loss.outcome = Outcome::TransportFail;
        set.add(&later_loss);
        let data = set.finish();
        assert_eq!(data.lines.len(), 8);
        assert!(
            data.index["trials"]
                .as_array()
                .unwrap()
                .iter()
                .all(|t| t[4] != "transport_fail")
        );
    }
}
