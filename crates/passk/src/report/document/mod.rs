//! `report.md`: the human-readable report of one run, and the short table `passk report` prints.
//!
//! A [`Report`] bundles what the report formats: the run's manifest (the setup), its finished
//! [`Summary`] (every figure) and the records (for `conversations.csv` and the two charts that plot
//! one point per conversation or call, see [`Observations`]). [`markdown`] formats it; nothing is
//! computed here beyond picking values out of the summary. The same report gives byte-identical text:
//! no wall-clock time, no host name, maps in key order, numbers with fixed digits. Every number is
//! defined in `docs/reference/metrics.md`; the layout is described in `docs/reference/report.md`.
//!
//! Each section of the report has its own file, named for the section; this file holds the
//! report value and the order of the sections.

/// The four resample counts of a bootstrap, in [`resample_split`]'s order.
macro_rules! split_counts {
    ($ci:expr) => {
        [
            $ci.resamples_with_defined_break_even,
            $ci.resamples_with_infinite_break_even,
            $ci.resamples_with_zero_break_even,
            $ci.resamples_without_break_even,
        ]
    };
}

mod behaviour;
mod break_even;
mod category;
mod context;
pub(crate) mod format;
mod gpu;
mod group;
mod headline;
mod ladder;
mod latency;
mod model_table;
mod observations;
mod order;
mod pass_k;
mod pipeline;
mod quality;
mod router;
mod server;
mod setup;
mod sweeps;
mod taxonomy;
mod terminal;
#[cfg(test)]
mod tests;
mod title;
mod warnings;

pub use break_even::{infinite_resamples, resample_split};
pub use format::{NO_CORRECT, ci_points, opt, per_success, points, rate, short_digest, tokens};
pub(crate) use group::group_notes;
pub(crate) use headline::headline;
pub use observations::{GpuPoint, ObservationSums, Observations, TIMELINE_POINTS};
pub use order::{group_models, group_order, ordered_groups, primary_group};
pub use terminal::terminal_table;
pub(crate) use title::{first_tool_call_forced, title};
pub(crate) use warnings::warnings;

use crate::analysis::Summary;
use crate::report::CHARTS_DIR;
use crate::report::csv::{CsvRows, WrittenCsv};
use crate::runner::record::{ConversationRecord, Manifest, RouterRecord};
use group::group;
use router::router;
use setup::setup;
use std::borrow::Cow;
use std::fmt::Write as _;
use sweeps::{budget_sweep, tools_add};

/// What the report files are made from.
#[derive(Debug, Clone)]
pub struct Report<'a> {
    /// The run's manifest (setup section).
    pub manifest: &'a Manifest,
    /// The finished analysis.
    pub summary: &'a Summary,
    /// Conversation records counted (superseded ones left out).
    pub conversations: usize,
    /// The rows of `conversations.csv`.
    pub csv: CsvRows<'a>,
    /// Per-conversation and per-call observations the charts plot.
    pub observations: Cow<'a, Observations>,
    /// Notes about reading the run (e.g. a torn last line skipped), listed under warnings.
    pub notes: Vec<String>,
}

impl<'a> Report<'a> {
    /// Bundles a run's manifest, summary and whole records (as written, grader digests
    /// included); `notes` go to the warnings section.
    pub fn new(
        manifest: &'a Manifest,
        summary: &'a Summary,
        conversations: &'a [ConversationRecord],
        router: &[RouterRecord],
        notes: Vec<String>,
    ) -> Report<'a> {
        let digests = crate::analysis::grader_digests(conversations, router);
        Report {
            manifest,
            summary,
            conversations: conversations.len(),
            csv: CsvRows::Records(conversations),
            observations: Cow::Owned(Observations::of(
                manifest,
                summary,
                conversations,
                router,
                digests,
            )),
            notes,
        }
    }

    /// Bundles a run read a cell, or a task of one, at a time (`analysis::CellRun`): its
    /// summary, the count of its conversation records, `conversations.csv` as written part by
    /// part and the observations summed the same way; `notes` go to the warnings section.
    pub fn of_cells(
        manifest: &'a Manifest,
        summary: &'a Summary,
        conversations: usize,
        csv: &'a WrittenCsv,
        observations: &'a Observations,
        notes: Vec<String>,
    ) -> Report<'a> {
        Report {
            manifest,
            summary,
            conversations,
            csv: CsvRows::Written(csv),
            observations: Cow::Borrowed(observations),
            notes,
        }
    }
}

/// The whole `report.md`.
pub fn markdown(r: &Report) -> String {
    let s = r.summary;
    let mut out = String::new();
    title(&mut out, r);
    if let Some(v) = crate::report::verdict::verdict(s) {
        let _ = writeln!(out, "## Verdict\n\n{v}\n");
    }
    out.push_str(&crate::report::stopping::section(r));
    crate::report::provenance::section(&mut out, s);
    setup(&mut out, r);
    if let Some((key, _)) = primary_group(s) {
        let _ = writeln!(
            out,
            "## Charts\n\nThe charts describe `{key}`{}.\n",
            if s.groups.len() > 1 {
                " (the agent at its full call budget)"
            } else {
                ""
            }
        );
        for (file, title) in crate::report::charts::linked(r) {
            let _ = writeln!(out, "- [{title}]({CHARTS_DIR}/{file})");
        }
        out.push('\n');
    }
    for (key, g) in ordered_groups(s) {
        group(&mut out, s, key, g);
    }
    budget_sweep(&mut out, s);
    tools_add(&mut out, s);
    crate::report::factorial::factorial_sections(&mut out, s);
    crate::report::placement::section(&mut out, s);
    router(&mut out, s);
    warnings(&mut out, r);
    out
}
