//! The grid's data: every trial of a run, placed in its configuration (the summary's group), task
//! and model, with its outcome, failure mode and the line of its details. Records are added as they
//! are read for the statistics (one pass over the records), each line set aside on disk at once;
//! the index and the lines come out sorted, so append order changes nothing.

use super::detail::{SharedTexts, router_line, trial_line};
use super::spill::{LineRef, LineSpill, SpilledLines};
use crate::analysis::Summary;
use crate::report::ReportError;
use crate::runner::record::{ConversationRecord, Outcome, Record, TrialKey};
use crate::trace::FailureMode;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// The group key of the summary that `c` was counted in (`None`: in none, e.g. an unknown model).
pub fn group_of<'s>(summary: &'s Summary, c: &ConversationRecord) -> Option<&'s str> {
    summary
        .groups
        .iter()
        .find(|(_, g)| g.holds(c))
        .map(|(key, _)| key.as_str())
}

/// The group key of the summary that the trial with key `k` was counted in.
fn group_of_key<'s>(summary: &'s Summary, k: &TrialKey) -> Option<&'s str> {
    summary
        .groups
        .iter()
        .find(|(_, g)| g.holds_key(k))
        .map(|(key, _)| key.as_str())
}

/// The configuration of the standalone router calls.
const ROUTER_CONFIG: &str = "router";

/// One trial as the grid knows it; its details line waits in the spill file.
#[derive(Debug, Clone, PartialEq)]
struct Entry {
    router: bool,
    category: String,
    outcome: Outcome,
    failure_mode: Option<FailureMode>,
    line: LineRef,
}

/// Every trial of a run, gathered one record at a time as the records are read (before the
/// summary exists): what the grid needs of each, and its details line set aside on disk.
#[derive(Debug)]
pub struct TrialSet {
    trials: BTreeMap<TrialKey, Entry>,
    texts: SharedTexts,
    spill: LineSpill,
    failed: Option<std::io::Error>,
}

/// One row of the grid's index: configuration, task and model (indexes), trial, outcome, failure
/// mode, and the number of its details line.
pub type IndexRow = (
    usize,
    usize,
    usize,
    u32,
    Outcome,
    Option<FailureMode>,
    usize,
);

/// The grid's index as the page reads it (`D.models`, `D.configs`, `D.trials`, `D.texts`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TrialIndex {
    /// Models in report order.
    pub models: Vec<String>,
    /// Configurations with their tasks (id, category).
    pub configs: Vec<ConfigTasks>,
    /// One row per trial, sorted by configuration, task, model and trial.
    pub trials: Vec<IndexRow>,
    /// Long texts the lines share, by key.
    pub texts: BTreeMap<String, String>,
}

/// A configuration's key and its tasks in natural order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConfigTasks {
    /// The summary's group key (`router` for the standalone router calls).
    pub key: String,
    /// (task id, category).
    pub tasks: Vec<(String, String)>,
}

/// The page's view of the trials: the index and, in index order, where each details line is.
#[derive(Debug)]
pub struct TrialData {
    /// The grid's index.
    pub index: TrialIndex,
    /// Where each row's line is, in row order.
    pub lines: Vec<LineRef>,
    /// The lines.
    pub spilled: SpilledLines,
}

impl TrialData {
    /// Bytes of every line, together.
    pub fn line_bytes(&self) -> u64 {
        self.lines.iter().map(|l| l.len()).sum()
    }

    /// Calls `f` with every line in row order.
    pub fn each_line(
        &mut self,
        mut f: impl FnMut(usize, &[u8]) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        let mut buf = Vec::new();
        for (n, at) in self.lines.iter().enumerate() {
            self.spilled.read(*at, &mut buf)?;
            f(n, &buf)?;
        }
        Ok(())
    }
}

impl TrialSet {
    /// An empty set whose lines go to `spill`.
    pub fn new(spill: LineSpill) -> TrialSet {
        TrialSet {
            trials: BTreeMap::new(),
            texts: SharedTexts::default(),
            spill,
            failed: None,
        }
    }

    /// Adds a conversation or a standalone router record. A later record of the same trial
    /// replaces an earlier one that ended on the wire (a trial played again on resume), as the
    /// analysis does; a graded one is kept.
    pub fn add_record(&mut self, record: &Record) {
        let key = match record {
            Record::Conversation(c) => c.key(),
            Record::Router(r) => r.key(),
        };
        if self.failed.is_some()
            || self
                .trials
                .get(&key)
                .is_some_and(|old| old.outcome.is_graded())
        {
            return;
        }
        let (text, entry) = match record {
            Record::Conversation(c) => (
                trial_line(c, &mut self.texts),
                (false, &c.category, c.outcome, c.verdict.failure_mode),
            ),
            // Standalone router calls: task = message index, category = gold label.
            Record::Router(r) => (router_line(r), (true, &r.label, r.outcome, None)),
        };
        match self.spill.push(&text) {
            Ok(line) => {
                let (router, category, outcome, failure_mode) = entry;
                self.trials.insert(
                    key,
                    Entry {
                        router,
                        category: category.clone(),
                        outcome,
                        failure_mode,
                        line,
                    },
                );
            }
            Err(e) => self.failed = Some(e),
        }
    }

    /// The index and lines of the trials `summary` counted, sorted by configuration, task, model
    /// and trial.
    pub fn finish(self, summary: &Summary) -> Result<TrialData, ReportError> {
        let TrialSet {
            trials,
            texts,
            spill,
            failed,
        } = self;
        if let Some(source) = failed {
            return Err(ReportError::Io {
                path: "report.html's trial lines".into(),
                source,
            });
        }
        let placed = place(summary, trials);
        let layout = Layout::of(summary, &placed);
        let mut rows: Vec<(usize, usize, usize, u32, &Entry)> = placed
            .iter()
            .filter_map(|(key, config, e)| {
                let (ci, ti) = *layout
                    .task_at
                    .get(&(config.to_string(), key.task.clone()))?;
                let mi = layout.models.iter().position(|m| *m == key.model)?;
                Some((ci, ti, mi, key.trial, e))
            })
            .collect();
        rows.sort_by_key(|r| (r.0, r.1, r.2, r.3));
        let lines = rows.iter().map(|r| r.4.line).collect();
        let trials = rows
            .iter()
            .enumerate()
            .map(|(n, &(ci, ti, mi, trial, e))| (ci, ti, mi, trial, e.outcome, e.failure_mode, n))
            .collect();
        let configs = layout
            .configs
            .into_iter()
            .map(|(key, tasks)| ConfigTasks { key, tasks })
            .collect();
        let index = TrialIndex {
            models: layout.models,
            configs,
            trials,
            texts: texts.table().clone(),
        };
        Ok(TrialData {
            index,
            lines,
            spilled: spill.finish()?,
        })
    }
}

/// Each trial the summary counted with its configuration: a conversation in the group that holds
/// it, a standalone router call of a model the summary has router results for.
fn place(summary: &Summary, trials: BTreeMap<TrialKey, Entry>) -> Vec<(TrialKey, &str, Entry)> {
    trials
        .into_iter()
        .filter_map(|(key, e)| {
            let config = if e.router {
                summary
                    .router
                    .contains_key(&key.model)
                    .then_some(ROUTER_CONFIG)?
            } else {
                group_of_key(summary, &key)?
            };
            Some((key, config, e))
        })
        .collect()
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
    fn of(summary: &Summary, placed: &[(TrialKey, &str, Entry)]) -> Layout {
        let mut models: Vec<String> = summary.models.clone();
        let mut tasks: BTreeMap<&str, BTreeSet<(TaskOrder, &str)>> = BTreeMap::new();
        for (key, config, e) in placed {
            if !models.contains(&key.model) {
                models.push(key.model.clone());
            }
            tasks
                .entry(config)
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

    /// The index and every line's text, for the trials `summary` counted.
    fn build(summary: &Summary, recs: &[ConversationRecord]) -> (TrialIndex, Vec<String>) {
        let dir = tempfile::tempdir().unwrap();
        let mut set = TrialSet::new(LineSpill::create(&dir.path().join("l")).unwrap());
        for c in recs {
            set.add_record(&Record::Conversation(Box::new(c.clone())));
        }
        let mut data = set.finish(summary).unwrap();
        let mut lines = Vec::new();
        data.each_line(|_, l| {
            lines.push(String::from_utf8(l.to_vec()).unwrap());
            Ok(())
        })
        .unwrap();
        (data.index, lines)
    }

    #[test]
    fn index_is_sorted_and_independent_of_record_order() {
        let recs = records();
        let summary = summarize(
            &Manifest::default(),
            &recs,
            &[],
            &AnalysisOptions::default(),
        );
        let (index, lines) = build(&summary, &recs);
        let mut reversed = recs.clone();
        reversed.reverse();
        assert_eq!((index.clone(), lines.clone()), build(&summary, &reversed));
        assert_eq!(lines.len(), 8);
        let tasks = &index.configs[0].tasks;
        assert_eq!(tasks[0].0, "L2");
        assert_eq!(tasks[1].0, "L10");
        let fails: Vec<&IndexRow> = index
            .trials
            .iter()
            .filter(|t| t.4 == Outcome::ModelFail)
            .collect();
        assert_eq!(fails.len(), 1);
        let failing: serde_json::Value = serde_json::from_str(&lines[fails[0].6]).unwrap();
        assert_eq!(
            failing["outcome"], "model_fail",
            "the row points at its own line"
        );
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
        let mut later_loss = recs[1].clone();
        later_loss.outcome = Outcome::TransportFail;
        recs.push(later_loss);
        let (index, lines) = build(&summary, &recs);
        assert_eq!(lines.len(), 8);
        assert!(index.trials.iter().all(|t| t.4 != Outcome::TransportFail));
    }
}
