//! A run read and summarized for the report files, a cell or a task of one at a time: the
//! summary ([`SummaryBuilder`]), `conversations.csv` ([`CsvCells`]) and the charts' observations
//! ([`ObservationSums`]) are each fed the same parts in turn, so a large run's records are held
//! one task at a time ([`CellRun`]). `passk report` and the `report_scale` bench read runs this
//! way.

use super::ReportError;
use super::csv::{CsvCells, WrittenCsv};
use super::document::{ObservationSums, Observations, Report};
use crate::analysis::{AnalysisOptions, Cell, CellRun, RecordsError, Summary, SummaryBuilder};
use crate::runner::record::{Manifest, Record};
use std::path::Path;

/// The spill file of a large run's stripped records while it is read, beside the records (named by
/// [`super::temp_name`]; a later report removes one a killed report left).
pub const CELL_RECORDS: &str = "cell-records";

/// The rows of conversations.csv while a report is made, written a part at a time, beside the
/// records (named by [`super::temp_name`]; the CSV's own temporary file has another name).
const CSV_ROWS: &str = "conversation-rows";

/// Why a run could not be read and summarized.
#[derive(Debug, thiserror::Error)]
pub enum SummarizeError {
    /// The records could not be read.
    #[error(transparent)]
    Records(#[from] RecordsError),
    /// A file set aside while reading could not be written.
    #[error(transparent)]
    Report(#[from] ReportError),
}

/// A run read and summarized, with what the report files need besides the summary.
#[derive(Debug)]
pub struct SummarizedRun {
    /// The run as read.
    pub run: CellRun,
    /// Its summary.
    pub summary: Summary,
    /// Conversation records counted (superseded ones left out).
    pub conversations: usize,
    /// Records left out as superseded (wire-failed, played again on resume).
    pub superseded: usize,
    /// `conversations.csv`, written.
    pub csv: WrittenCsv,
    /// What the charts plot besides the summary.
    pub observations: Observations,
}

impl SummarizedRun {
    /// Reads the run in `run_dir`, showing `observe` every whole record in file order, and
    /// summarizes it with the options `options` makes of its manifest; the files set aside while
    /// reading go to `spill_dir`. A run whose record files are over `hold_up_to` bytes is read back
    /// from disk a task at a time.
    pub fn read(
        run_dir: &Path,
        spill_dir: &Path,
        hold_up_to: u64,
        options: impl FnOnce(&Manifest) -> AnalysisOptions,
        observe: &mut dyn FnMut(&Record),
    ) -> Result<SummarizedRun, SummarizeError> {
        let spill = spill_dir.join(super::temp_name(CELL_RECORDS));
        let run = CellRun::read(run_dir, hold_up_to, &spill, observe)?;
        let opts = options(&run.manifest);
        let mut summary = SummaryBuilder::new(&run.manifest, run.shape.clone(), &opts);
        let mut observations = ObservationSums::new(run.gpu_utilization, run.call_times);
        let mut csv = CsvCells::create(&spill_dir.join(super::temp_name(CSV_ROWS)))?;
        let mut conversations = 0;
        let superseded = run.read_cells(|cell| -> Result<(), SummarizeError> {
            match cell {
                Cell::Conversations(records) => {
                    summary.add_conversations(records.iter().copied());
                    observations.add_conversations(&run.shape, records);
                    csv.add(records)?;
                    conversations += records.len();
                }
                Cell::Router(records) => {
                    summary.add_router(records.iter().copied());
                    observations.add_router(records);
                }
            }
            Ok(())
        })?;
        let summary = summary.finish();
        let observations = observations.observations(&summary, run.grader_digests.clone());
        Ok(SummarizedRun {
            summary,
            conversations,
            superseded,
            csv: csv.finish()?,
            observations,
            run,
        })
    }
}

impl SummarizedRun {
    /// The report of the run: what reading it left out (superseded records, torn last lines)
    /// goes to the warnings section.
    pub fn report(&self) -> Report<'_> {
        Report::of_cells(
            &self.run.manifest,
            &self.summary,
            self.conversations,
            &self.csv,
            &self.observations,
            self.reading_notes(),
        )
    }

    /// What reading the records left out, said at the top of the report: superseded wire-failed
    /// records and torn last lines.
    fn reading_notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        if self.superseded > 0 {
            notes.push(format!(
                "{} record(s) superseded: trials that ended on a transport or protocol failure \
                 and were played again on resume; only each trial's latest record is counted.",
                self.superseded
            ));
        }
        if self.run.torn_lines > 0 {
            notes.push(format!(
                "{} torn last line(s) skipped while reading the records (an interrupted write).",
                self.run.torn_lines
            ));
        }
        notes
    }
}
