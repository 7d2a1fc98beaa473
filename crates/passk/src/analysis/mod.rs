//! Analysis: records in, typed tables out. [`summarize`] turns a run's manifest, conversation
//! records and router records into one [`Summary`] (it becomes `summary.json`; the report
//! exporters format it); [`compare()`] sets two runs side by side; [`load_run`] reads a run
//! directory. Nothing here prints or writes files. Every definition is in `docs/reference/metrics.md`;
//! definitions marked "as the reference" reproduce the reference experiment's published figures
//! from its own records (see `import`).
//!
//! Records are sorted by (suite, model, task, trial) before anything is computed, maps are
//! `BTreeMap`s and the bootstrap is seeded, so the same records give the same summary, byte for
//! byte.

pub mod calibration;
pub mod cell_run;
pub mod cells;
pub mod comparisons;
pub mod figures;
#[doc(hidden)]
pub mod fixtures;
pub mod intervals;
mod load;
mod model_sums;
mod pair;
pub mod planning;
mod summary;
mod tally;

pub use crate::records_error::RecordsError;
pub use cell_run::{CallTimes, Cell, CellRun, HOLD_UP_TO};
pub use cells::{Shape, SummaryBuilder, summarize};
pub use comparisons::compare::{RunComparison, compare};
pub use load::{Keep, Run, grader_digests, load_run, load_run_keeping};
pub use pair::{order_models, parameter_count, reference_model};
pub use summary::*;

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// The value at `key` in a map keyed by owned strings, made when absent, without copying a key
/// already there (a record's names are counted once per record, and most are seen before).
pub(crate) fn entry<'m, V: Default>(map: &'m mut BTreeMap<String, V>, key: &str) -> &'m mut V {
    if !map.contains_key(key) {
        map.insert(key.to_string(), V::default());
    }
    map.get_mut(key).expect("just inserted")
}

/// Settings of one analysis.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnalysisOptions {
    /// Bootstrap resamples (10,000 as the reference).
    pub resamples: usize,
    /// Seed of the bootstrap generator (0 as the reference).
    pub seed: u64,
    /// Output weight `w` of blended tokens (4 as the reference).
    pub output_weight: f64,
    /// Documented example values of the tool schemas, for the example-copy count.
    pub example_values: Vec<String>,
    /// Tasks that need no tools, left out of the steps per correct answer (empty: every task
    /// needs tools).
    #[serde(default)]
    pub toolless_tasks: BTreeSet<String>,
    /// The model every other model is compared with in the ladder (`--reference-model`); `None`:
    /// the largest by parameter size (the last in report order).
    #[serde(default)]
    pub reference_model: Option<String>,
    /// Per suite, the tool-docs variants that show example values (`Manifest::examples_shown`);
    /// `None`: every variant but `bare`.
    #[serde(default)]
    pub examples_shown: Option<BTreeMap<String, Vec<String>>>,
    /// The pair of every break-even, (small, large), as named (`--pair`); `None`: by the rule
    /// (`pair::order_models`).
    #[serde(default)]
    pub pair: Option<(String, String)>,
}

impl AnalysisOptions {
    /// The defaults, with the example values and tool-free tasks the run's manifest recorded.
    pub fn for_manifest(manifest: &crate::runner::record::Manifest) -> Self {
        AnalysisOptions {
            example_values: manifest.example_values.clone(),
            examples_shown: manifest.examples_shown.clone(),
            toolless_tasks: manifest.tasks_without_tools.iter().cloned().collect(),
            ..AnalysisOptions::default()
        }
    }
}

impl Default for AnalysisOptions {
    fn default() -> Self {
        AnalysisOptions {
            resamples: 10_000,
            seed: 0,
            output_weight: 4.0,
            example_values: Vec::new(),
            toolless_tasks: BTreeSet::new(),
            reference_model: None,
            examples_shown: None,
            pair: None,
        }
    }
}

/// A count out of a denominator, with the share.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Rate {
    /// How many satisfied the condition.
    pub hits: usize,
    /// Out of how many.
    pub of: usize,
    /// `hits / of` (0 when `of` is 0).
    pub rate: f64,
    /// 95% interval over the tasks as clusters, for a rate counted per task (metrics.md,
    /// "Intervals at the boundary").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci95: Option<intervals::bootstrap::Interval>,
}

impl Rate {
    /// `hits` out of `of`.
    pub fn new(hits: usize, of: usize) -> Self {
        Rate {
            hits,
            of,
            rate: if of == 0 {
                0.0
            } else {
                hits as f64 / of as f64
            },
            ci95: None,
        }
    }

    /// The rate over per-task (of, hits), with its interval over the tasks as clusters; `None`
    /// where no task counts any.
    pub fn over_tasks(per_task: &BTreeMap<String, (usize, usize)>) -> Option<Self> {
        let counts: Vec<(usize, usize)> = per_task.values().copied().collect();
        let (of, hits) = counts
            .iter()
            .fold((0, 0), |(n, c), &(tn, tc)| (n + tn, c + tc));
        (of > 0).then(|| Rate {
            ci95: intervals::interval::success_rate(&counts),
            ..Rate::new(hits, of)
        })
    }
}

/// Per-task (of, hits) of a rate: one more conversation of `task` counted, a hit where `hit`.
pub fn count_per_task(per_task: &mut BTreeMap<String, (usize, usize)>, task: &str, hit: bool) {
    let t = entry(per_task, task);
    t.0 += 1;
    t.1 += usize::from(hit);
}
