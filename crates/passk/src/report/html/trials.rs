//! The grid's data: every trial of a run, placed in its configuration (the summary's group), task
//! and model, with its outcome, failure mode and the line of its details. Records are added as they
//! are read for the statistics (one pass over the records), each line set aside on disk at once;
//! the index and the lines come out sorted, so append order changes nothing.

use super::detail::{SharedTexts, router_line, trial_line};
use crate::analysis::Summary;
use crate::domain::{PromptVariant, ToolVariant};
use crate::numbered::Numbered;
use crate::report::ReportError;
use crate::runner::record::{ConversationRecord, Mode, Outcome, Record, TrialKey};
use crate::spill::{LineRef, LineSpill, SpilledLines};
use crate::trace::FailureMode;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::rc::Rc;

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

/// Each distinct name of the trials (suites, models, tasks, categories) held once: a trial refers
/// to its names by number, so a run of 100,000 trials holds some thousands of strings, not 400,000.
#[derive(Debug, Default)]
struct Names {
    names: Numbered<Rc<str>>,
    /// Each distinct [`Levels`] of the trials, numbered the same way.
    level_ids: HashMap<Levels, u32>,
    levels: Vec<Levels>,
}

impl Names {
    /// The number of `name`, given it if new.
    fn id(&mut self, name: &str) -> u32 {
        self.names.id(name)
    }

    fn name(&self, id: u32) -> &str {
        self.names.get(id).expect("a numbered name")
    }

    /// The number of `levels`, given it if new.
    fn levels_id(&mut self, levels: Levels) -> u32 {
        let next = u32::try_from(self.levels.len()).expect("fewer than 2^32 levels");
        *self.level_ids.entry(levels).or_insert_with(|| {
            self.levels.push(levels);
            next
        })
    }

    fn levels(&self, id: u32) -> Levels {
        self.levels[id as usize]
    }

    /// Each name's place in the names' sorted order, by number: comparing places compares names.
    fn ranks(&self) -> Vec<u32> {
        let mut order: Vec<u32> = (0..self.names.len() as u32).collect();
        order.sort_by(|&a, &b| self.name(a).cmp(self.name(b)));
        let mut ranks = vec![0; order.len()];
        for (rank, id) in order.into_iter().enumerate() {
            ranks[id as usize] = rank as u32;
        }
        ranks
    }
}

/// A trial's identity ([`TrialKey`]) with its names as numbers ([`Names`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Trial {
    suite: u32,
    model: u32,
    task: u32,
    trial: u32,
    /// The number of its [`Levels`] in [`Names`].
    levels: u32,
}

/// The fields of a [`TrialKey`] after its names and trial: call cap, mode, tool docs, router in
/// front, prompt. A run has a handful of these, so a trial holds their number (32 bytes fewer a
/// trial: the page's index was a large run's largest list).
type Levels = (u32, Mode, Option<ToolVariant>, bool, Option<PromptVariant>);

impl Trial {
    fn of(key: &TrialKey, names: &mut Names) -> Trial {
        Trial {
            suite: names.id(&key.suite),
            model: names.id(&key.model),
            task: names.id(&key.task),
            trial: key.trial,
            levels: names.levels_id((
                key.call_cap,
                key.mode,
                key.tool_docs,
                key.router_in_front,
                key.prompt,
            )),
        }
    }

    /// The key back, its names spelled out.
    fn key(&self, names: &Names) -> TrialKey {
        let (call_cap, mode, tool_docs, router_in_front, prompt) = names.levels(self.levels);
        TrialKey {
            suite: names.name(self.suite).to_string(),
            model: names.name(self.model).to_string(),
            task: names.name(self.task).to_string(),
            trial: self.trial,
            call_cap,
            mode,
            tool_docs,
            router_in_front,
            prompt,
        }
    }

    /// Orders trials as their keys order ([`TrialKey`]'s `Ord`), names compared by `ranks`.
    fn order(&self, other: &Trial, ranks: &[u32], names: &Names) -> std::cmp::Ordering {
        let rank = |id: u32| ranks[id as usize];
        let fields = |t: &Trial| {
            (
                rank(t.suite),
                rank(t.model),
                rank(t.task),
                t.trial,
                names.levels(t.levels),
            )
        };
        fields(self).cmp(&fields(other))
    }

    /// What places a trial in a configuration: its suite and levels.
    fn configuration(&self) -> Configuration {
        (self.suite, self.levels)
    }
}

/// The fields of a [`Trial`] that place it in a configuration: its suite's number and its
/// levels' (mode, call cap, tool docs, router in front, prompt).
type Configuration = (u32, u32);

/// A configuration's tasks in natural order: (id, category, the id's number in [`Names`]).
type TaskList<'n> = Vec<(&'n str, &'n str, u32)>;

/// One record of a trial as the grid knows it; its details line waits in the spill file.
#[derive(Debug, Clone, PartialEq)]
struct Entry {
    trial: Trial,
    router: bool,
    /// The category's number in [`Names`].
    category: u32,
    outcome: Outcome,
    failure_mode: Option<FailureMode>,
    line: LineRef,
}

/// A placed trial on its way into the index: (configuration, task, model) indexes and trial.
struct Row {
    place: (u32, u32, u32, u32),
    line: LineRef,
    outcome: Outcome,
    failure_mode: Option<FailureMode>,
}

/// Every trial of a run, gathered one record at a time as the records are read (before the
/// summary exists): what the grid needs of each, and its details line set aside on disk.
#[derive(Debug)]
pub struct TrialSet {
    names: Names,
    /// Every record added, in the order added (a trial played again on resume appears twice).
    entries: Vec<Entry>,
    texts: SharedTexts,
    spill: LineSpill,
    failed: Option<std::io::Error>,
}

/// One row of the grid's index: configuration, task and model (indexes), trial, outcome, failure
/// mode, and the number of its details line.
pub type IndexRow = (u32, u32, u32, u32, Outcome, Option<FailureMode>, u32);

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
            names: Names::default(),
            entries: Vec::new(),
            texts: SharedTexts::default(),
            spill,
            failed: None,
        }
    }

    /// Adds a conversation or a standalone router record. Of several records of one trial, the
    /// page shows the first graded one, or the last when none is graded (a trial that ended on
    /// the wire and was played again on resume), as the analysis does.
    pub fn add_record(&mut self, record: &Record) {
        if self.failed.is_some() {
            return;
        }
        let (key, text, router, category, outcome, failure_mode) = match record {
            Record::Conversation(c) => (
                c.key(),
                trial_line(c, &mut self.texts),
                false,
                &c.category,
                c.outcome,
                c.verdict.failure_mode,
            ),
            // Standalone router calls: task = message index, category = gold label.
            Record::Router(r) => (r.key(), router_line(r), true, &r.label, r.outcome, None),
        };
        match self.spill.push(&text) {
            Ok(line) => self.entries.push(Entry {
                trial: Trial::of(&key, &mut self.names),
                router,
                category: self.names.id(category),
                outcome,
                failure_mode,
                line,
            }),
            Err(e) => self.failed = Some(e),
        }
    }

    /// The index and lines of the trials `summary` counted, sorted by configuration, task, model
    /// and trial.
    pub fn finish(self, summary: &Summary) -> Result<TrialData, ReportError> {
        let TrialSet {
            names,
            entries,
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
        let entries = one_per_trial(entries, &names);
        let configs = place(summary, &names, &entries);
        let placed = || {
            entries
                .iter()
                .zip(&configs)
                .filter_map(|(e, config)| Some(((*config)?, e)))
        };
        let layout = Layout::of(summary, &names, placed());
        // The rows take the entries' place (a collect from a vector's own iterator into smaller
        // items reuses its buffer), as the index rows then take the rows': at a large run's size a
        // second copy of each was its report's peak.
        let mut rows: Vec<Row> = entries
            .into_iter()
            .zip(configs)
            .filter_map(|(e, config)| {
                let (ci, ti) = *layout.task_at.get(&(config?, e.trial.task))?;
                let mi = *layout.model_at.get(&e.trial.model)?;
                Some(Row {
                    place: (ci, ti, mi, e.trial.trial),
                    line: e.line,
                    outcome: e.outcome,
                    failure_mode: e.failure_mode,
                })
            })
            .collect();
        rows.sort_unstable_by_key(|r| (r.place, r.line));
        let lines = rows.iter().map(|r| r.line).collect();
        let trials = (0..)
            .zip(rows)
            .map(|(n, r)| {
                let (ci, ti, mi, trial) = r.place;
                (ci, ti, mi, trial, r.outcome, r.failure_mode, n)
            })
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
        let path = spill.path().to_path_buf();
        let spilled = spill
            .finish()
            .map_err(|source| ReportError::Io { path, source })?;
        Ok(TrialData {
            index,
            lines,
            spilled,
        })
    }
}

/// One record per trial, in key order: the first graded record of each, or its last when none is.
fn one_per_trial(mut entries: Vec<Entry>, names: &Names) -> Vec<Entry> {
    let ranks = names.ranks();
    // A trial's records in the order they were added, which is their lines' order on disk.
    entries.sort_unstable_by(|a, b| {
        let trial = a.trial.order(&b.trial, &ranks, names);
        trial.then(a.line.cmp(&b.line))
    });
    // `later` is dropped once it has taken `kept`'s place where it should.
    entries.dedup_by(|later, kept| {
        let same = later.trial == kept.trial;
        if same && !kept.outcome.is_graded() {
            std::mem::swap(later, kept);
        }
        same
    });
    entries
}

/// The configuration of each trial the summary counted (`None`: not counted): for a conversation
/// the group that holds it, for a standalone router call `router` where the summary has router
/// results for its model.
fn place<'s>(summary: &'s Summary, names: &Names, trials: &[Entry]) -> Vec<Option<&'s str>> {
    let mut groups: HashMap<Configuration, Option<&'s str>> = HashMap::new();
    trials
        .iter()
        .map(|e| {
            if e.router {
                let model = names.name(e.trial.model);
                summary.router.contains_key(model).then_some(ROUTER_CONFIG)
            } else {
                // A trial's group depends only on its configuration's fields: found once for each.
                *groups
                    .entry(e.trial.configuration())
                    .or_insert_with(|| group_of_key(summary, &e.trial.key(names)))
            }
        })
        .collect()
}

/// Where the grid puts each trial: models in report order, configurations (conversation groups in
/// key order, the standalone router calls last) with their tasks in natural order.
struct Layout<'s> {
    models: Vec<String>,
    /// Model (its number in [`Names`]) -> model index.
    model_at: HashMap<u32, u32>,
    configs: Vec<(String, Vec<(String, String)>)>,
    /// (configuration, task number) -> (configuration index, task index).
    task_at: HashMap<(&'s str, u32), (u32, u32)>,
}

impl<'s> Layout<'s> {
    fn of<'e>(
        summary: &Summary,
        names: &Names,
        placed: impl Iterator<Item = (&'s str, &'e Entry)>,
    ) -> Layout<'s> {
        let mut models: Vec<String> = summary.models.clone();
        let mut model_at = HashMap::new();
        let mut tasks: BTreeMap<&'s str, BTreeSet<(TaskOrder, &str, u32)>> = BTreeMap::new();
        for (config, e) in placed {
            model_at.entry(e.trial.model).or_insert_with(|| {
                let name = names.name(e.trial.model);
                let at = models.iter().position(|m| m == name).unwrap_or_else(|| {
                    models.push(name.to_string());
                    models.len() - 1
                });
                at as u32
            });
            let task = names.name(e.trial.task);
            tasks.entry(config).or_default().insert((
                TaskOrder::of(task),
                names.name(e.category),
                e.trial.task,
            ));
        }
        let mut configs: Vec<(&'s str, TaskList)> = tasks
            .into_iter()
            .map(|(k, set)| (k, set.into_iter().map(|(t, c, id)| (t.id, c, id)).collect()))
            .collect();
        configs.sort_by(|a, b| (a.0 == ROUTER_CONFIG, a.0).cmp(&(b.0 == ROUTER_CONFIG, b.0)));
        let mut task_at = HashMap::new();
        for (ci, (config, ts)) in (0..).zip(&configs) {
            for (ti, (_, _, id)) in (0..).zip(ts) {
                task_at.insert((*config, *id), (ci, ti));
            }
        }
        let configs = configs
            .into_iter()
            .map(|(k, ts)| {
                let ts = ts
                    .into_iter()
                    .map(|(t, c, _)| (t.to_string(), c.to_string()));
                (k.to_string(), ts.collect())
            })
            .collect();
        Layout {
            models,
            model_at,
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
        let failing: serde_json::Value = serde_json::from_str(&lines[fails[0].6 as usize]).unwrap();
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

    #[test]
    fn of_two_graded_records_of_a_trial_the_first_is_shown() {
        let mut recs = records();
        let summary = summarize(
            &Manifest::default(),
            &recs,
            &[],
            &AnalysisOptions::default(),
        );
        let mut second = recs[0].clone();
        second.verdict.passed = !second.verdict.passed;
        second.outcome = Outcome::ModelFail;
        assert_eq!(recs[0].outcome, Outcome::Pass);
        recs.push(second);
        let (index, lines) = build(&summary, &recs);
        assert_eq!(lines.len(), 8);
        assert_eq!(
            index
                .trials
                .iter()
                .filter(|t| t.4 == Outcome::ModelFail)
                .count(),
            1,
            "only the fixture's own failure: the later record of a graded trial is not shown"
        );
    }
}
