//! A run read for a summary made a cell, or a task of one, at a time ([`SummaryBuilder`]).
//!
//! The records are read once in file order: each whole record is shown to an observer (the
//! report page's transcripts), its grader digest and its place in the run's [`Shape`] are noted,
//! and it is stripped of what the statistics never read. A run whose record files are at most
//! [`HOLD_UP_TO`] bytes is then held in memory; a larger one's stripped records are set aside in
//! a spill file, a line each, and read back one task of a cell at a time (one message of a
//! router model), so memory holds a task's records rather than the run's; the summary keeps
//! running totals between them (docs/decisions.md, "What the statistics keep of each record").
//! A stripped record is a few hundred bytes where the whole line was several KB, so reading it
//! back costs little.

use crate::analysis::cells::{Shape, SummaryBuilder};
use crate::analysis::load::{
    conversations_file, keep_latest, note_digest, read_manifest, records_error, strip, strip_router,
};
use crate::analysis::{AnalysisOptions, RecordsError, Summary};
use crate::numbered::Numbered;
use crate::runner::record::{
    CONVERSATIONS_FILE, CallRecord, ConversationRecord, Manifest, ROUTER_FILE, Record, RouterRecord,
};
use crate::runner::record_file;
use crate::spill::{LineRef, LineSpill, SpilledLines};
use serde::de::DeserializeOwned;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A run whose record files hold at most this many bytes together is held in memory as read;
/// a larger one is read back from disk a task at a time. Held records cost about a third of a
/// MiB per MB of record files (calibrate's run replicated 10 times, 34 MB of records, peaks at
/// 24 MiB held and 13 MiB read back), and reading back costs little CPU (0.21 s against 0.16 s
/// there), so only a small run is held: the reference's run 2 (1 MB) and calibrate's runs
/// (3.4 MB at most).
pub const HOLD_UP_TO: u64 = 8 << 20;

/// A run as read for a summary made a cell, or a task of one, at a time.
#[derive(Debug)]
pub struct CellRun {
    /// The run directory.
    pub dir: PathBuf,
    /// `manifest.json`.
    pub manifest: Manifest,
    /// What the configurations' keys and the placement depend on, read from every record
    /// (superseded ones included: a superseded record's configuration is its successor's, and
    /// the placement is checked again once made).
    pub shape: Shape,
    /// The grader digests the records carry, each once (superseded records included).
    pub grader_digests: BTreeSet<String>,
    /// Whether any call has a GPU utilization reading (superseded records included).
    pub gpu_utilization: bool,
    /// When the calls ran (superseded records included).
    pub call_times: CallTimes,
    /// Torn last lines skipped (at most one per file).
    pub torn_lines: usize,
    records: Records,
}

/// How many calls have a start time, and the span they ran in: what a timeline of the calls
/// needs to know before it is fed them in any order.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CallTimes {
    /// Calls with a start time.
    pub calls: usize,
    /// The earliest start, Unix milliseconds.
    pub first_ms: Option<u64>,
    /// The latest end (start plus wall time), Unix milliseconds.
    pub last_end_ms: f64,
}

impl CallTimes {
    /// Notes a call (one without a start time is not counted).
    pub fn add(&mut self, c: &CallRecord) {
        let Some(start) = c.started_unix_ms.get() else {
            return;
        };
        self.calls += 1;
        self.first_ms = Some(self.first_ms.map_or(start, |f| f.min(start)));
        let end = start as f64 + 1000.0 * c.wall_s.get().unwrap_or(0.0).max(0.0);
        self.last_end_ms = self.last_end_ms.max(end);
    }
}

/// Records as [`CellRun::read_cells`] hands them over: a whole cell, or a part of one.
#[derive(Debug, Clone, Copy)]
pub enum Cell<'a> {
    /// Conversation records of one suite's model: all of them, or every record of one or more
    /// of its tasks.
    Conversations(&'a [&'a ConversationRecord]),
    /// Standalone router records of one model: all of them, or every record of one or more of
    /// its messages.
    Router(&'a [&'a RouterRecord]),
}

/// The records, held or found.
#[derive(Debug)]
enum Records {
    /// Every record, stripped for the statistics, superseded ones left out.
    Held {
        conversations: Vec<ConversationRecord>,
        router: Vec<RouterRecord>,
        superseded: usize,
    },
    /// The stripped records set aside, and where each cell's lines lie in that file:
    /// conversations by (suite, model), router calls by model.
    OnDisk {
        spill: Spill,
        conversations: BTreeMap<(String, String), Vec<Spilled>>,
        router: BTreeMap<String, Vec<Spilled>>,
        /// The run's task names, numbered in the order first read ([`Spilled::part`]).
        tasks: Numbered<String>,
    },
}

/// Where a stripped record's line lies in the spill file, its line in its record file, and the
/// part of its cell it is read back with: its task's number in [`Records::OnDisk`]'s `tasks`, or
/// a router record's message index.
#[derive(Debug, Clone, Copy)]
struct Spilled {
    at: LineRef,
    line: u32,
    part: u32,
}

/// The stripped records set aside ([`LineSpill`]): written while the run is read, then read
/// back; the file is removed when the value drops.
#[derive(Debug)]
struct Spill {
    path: PathBuf,
    writing: Option<LineSpill>,
    written: Option<SpilledLines>,
    /// The first error writing it, reported once reading is done.
    failed: Option<std::io::Error>,
}

impl Spill {
    fn create(path: &Path) -> Result<Spill, RecordsError> {
        let lines = LineSpill::create(path).map_err(|source| RecordsError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(Spill {
            path: path.to_path_buf(),
            writing: Some(lines),
            written: None,
            failed: None,
        })
    }

    fn error(&self, source: std::io::Error) -> RecordsError {
        RecordsError::Io {
            path: self.path.clone(),
            source,
        }
    }

    /// Appends the record read from line `line` of its file; where it lies (nothing after a
    /// failure).
    fn put(&mut self, record: &impl serde::Serialize, line: usize, part: u32) -> Spilled {
        let mut at = LineRef::default();
        if let (None, Some(lines)) = (&self.failed, &mut self.writing) {
            let text = serde_json::to_string(record).map_err(std::io::Error::from);
            match text.and_then(|t| lines.push(&t)) {
                Ok(pushed) => at = pushed,
                Err(e) => self.failed = Some(e),
            }
        }
        Spilled {
            at,
            line: u32::try_from(line).unwrap_or(u32::MAX),
            part,
        }
    }

    /// Ends writing, or reports the first error writing.
    fn finish(&mut self) -> Result<(), RecordsError> {
        if let Some(e) = self.failed.take() {
            return Err(self.error(e));
        }
        if let Some(lines) = self.writing.take() {
            self.written = Some(lines.finish().map_err(|e| self.error(e))?);
        }
        Ok(())
    }

    /// Reads back these records, read from `source`; a record that does not read back is an
    /// error naming its line there.
    fn read<T: DeserializeOwned>(
        &self,
        lines: &[&Spilled],
        source: &Path,
    ) -> Result<Vec<T>, RecordsError> {
        let not_finished = || self.error(std::io::ErrorKind::NotFound.into());
        let written = self.written.as_ref().ok_or_else(not_finished)?;
        let mut buf = Vec::new();
        let mut out = Vec::with_capacity(lines.len());
        for at in lines {
            written.read(at.at, &mut buf).map_err(|e| self.error(e))?;
            let record = serde_json::from_slice(&buf).map_err(|e| RecordsError::Parse {
                path: source.to_path_buf(),
                line: at.line as usize,
                message: format!(
                    "its stripped copy in {} does not read back: {e}",
                    self.path.display()
                ),
            })?;
            out.push(record);
        }
        Ok(out)
    }
}

impl CellRun {
    /// Reads the run in `dir`, showing `observe` every whole record in file order (superseded
    /// ones included); holds its records when its record files are at most `hold_up_to` bytes,
    /// and otherwise sets them aside in a file at `spill` (removed when the value drops).
    pub fn read(
        dir: &Path,
        hold_up_to: u64,
        spill: &Path,
        observe: &mut dyn FnMut(&Record),
    ) -> Result<CellRun, RecordsError> {
        let manifest = read_manifest(dir)?;
        let files = [conversations_file(dir)?, dir.join(ROUTER_FILE)];
        let size: u64 = files
            .iter()
            .filter_map(|f| std::fs::metadata(f).ok())
            .map(|m| m.len())
            .sum();
        let records = if size <= hold_up_to {
            Records::Held {
                conversations: Vec::new(),
                router: Vec::new(),
                superseded: 0,
            }
        } else {
            Records::OnDisk {
                spill: Spill::create(spill)?,
                conversations: BTreeMap::new(),
                router: BTreeMap::new(),
                tasks: Numbered::default(),
            }
        };
        let mut run = CellRun {
            dir: dir.to_path_buf(),
            manifest,
            shape: Shape::default(),
            grader_digests: BTreeSet::new(),
            gpu_utilization: false,
            call_times: CallTimes::default(),
            torn_lines: 0,
            records,
        };
        for file in &files {
            let manifest = run.manifest.clone();
            let read = record_file::read_records(file, &manifest, |line| {
                observe(&line.record);
                run.note(line.record, line.number);
            })
            .map_err(records_error)?;
            run.torn_lines += usize::from(read.torn);
        }
        match &mut run.records {
            Records::Held {
                conversations,
                router,
                superseded,
            } => {
                *superseded =
                    keep_latest(conversations, ConversationRecord::key, |c| {
                        c.outcome.is_graded()
                    }) + keep_latest(router, RouterRecord::key, |r| r.outcome.is_graded());
            }
            Records::OnDisk { spill, .. } => spill.finish()?,
        }
        Ok(run)
    }

    /// Whether the records are held in memory (rather than read back a task at a time).
    pub fn is_held(&self) -> bool {
        matches!(self.records, Records::Held { .. })
    }

    /// Notes one record as read.
    fn note(&mut self, record: Record, line: usize) {
        note_digest(&mut self.grader_digests, &record);
        let manifest = &self.manifest;
        match &record {
            Record::Conversation(c) => {
                self.shape.add_conversation(manifest, c);
                self.gpu_utilization |= c.calls.iter().any(CallRecord::has_gpu_utilization);
                c.calls.iter().for_each(|x| self.call_times.add(x));
            }
            Record::Router(r) => {
                self.shape.add_router(manifest, r);
                self.gpu_utilization |= r.call.has_gpu_utilization();
                self.call_times.add(&r.call);
            }
        }
        match (&mut self.records, record) {
            (Records::Held { conversations, .. }, Record::Conversation(mut c)) => {
                strip(&mut c, &manifest.example_values);
                conversations.push(*c);
            }
            (Records::Held { router, .. }, Record::Router(mut r)) => {
                strip_router(&mut r);
                router.push(*r);
            }
            (
                Records::OnDisk {
                    spill,
                    conversations,
                    tasks,
                    ..
                },
                Record::Conversation(mut c),
            ) => {
                strip(&mut c, &manifest.example_values);
                let at = spill.put(&c, line, tasks.id(c.task.as_str()));
                conversations
                    .entry((c.suite, c.model))
                    .or_default()
                    .push(at);
            }
            (Records::OnDisk { spill, router, .. }, Record::Router(mut r)) => {
                strip_router(&mut r);
                let at = spill.put(&r, line, r.index);
                router.entry(r.model).or_default().push(at);
            }
        }
    }

    /// The run's summary with these options, and how many records were left out as superseded.
    pub fn summarize(&self, opts: &AnalysisOptions) -> Result<(Summary, usize), RecordsError> {
        let mut builder = SummaryBuilder::new(&self.manifest, self.shape.clone(), opts);
        let superseded = self.read_cells(|cell| -> Result<(), RecordsError> {
            match cell {
                Cell::Conversations(c) => builder.add_conversations(c.iter().copied()),
                Cell::Router(r) => builder.add_router(r.iter().copied()),
            }
            Ok(())
        })?;
        Ok((builder.finish(), superseded))
    }

    /// Hands `visit` every cell's records, in (suite, model) order, then every router model's, in
    /// model order; returns how many records were left out as superseded (a trial's wire-failed
    /// record played again on resume). Held records come a whole cell at a time, in file order;
    /// records read back from disk come a task at a time (a message at a time for a router
    /// model), in task order, and each part is dropped before the next is read.
    pub fn read_cells<E: From<RecordsError>>(
        &self,
        mut visit: impl FnMut(Cell<'_>) -> Result<(), E>,
    ) -> Result<usize, E> {
        match &self.records {
            Records::Held {
                conversations,
                router: routs,
                superseded,
            } => {
                let mut cells: BTreeMap<(&str, &str), Vec<&ConversationRecord>> = BTreeMap::new();
                for c in conversations {
                    cells.entry((&c.suite, &c.model)).or_default().push(c);
                }
                for records in cells.values() {
                    visit(Cell::Conversations(records))?;
                }
                let mut models: BTreeMap<&str, Vec<&RouterRecord>> = BTreeMap::new();
                for r in routs {
                    models.entry(&r.model).or_default().push(r);
                }
                for records in models.values() {
                    visit(Cell::Router(records))?;
                }
                Ok(*superseded)
            }
            Records::OnDisk {
                spill,
                conversations,
                router: routs,
                tasks,
            } => {
                let mut superseded = 0;
                let (conversations_file, router_file) = (
                    self.dir.join(CONVERSATIONS_FILE),
                    self.dir.join(ROUTER_FILE),
                );
                for lines in conversations.values() {
                    let by_task = parts(lines, |part| tasks.get(part));
                    for lines in by_task.values() {
                        let mut records: Vec<ConversationRecord> =
                            spill.read(lines, &conversations_file)?;
                        // Stripped already: this only trims the spare room parsing left in its
                        // lists.
                        for c in &mut records {
                            strip(c, &self.manifest.example_values);
                        }
                        superseded += keep_latest(&mut records, ConversationRecord::key, |c| {
                            c.outcome.is_graded()
                        });
                        visit(Cell::Conversations(&records.iter().collect::<Vec<_>>()))?;
                    }
                }
                for lines in routs.values() {
                    for lines in parts(lines, |index| index).values() {
                        let mut records: Vec<RouterRecord> = spill.read(lines, &router_file)?;
                        records.iter_mut().for_each(strip_router);
                        superseded +=
                            keep_latest(&mut records, RouterRecord::key, |r| r.outcome.is_graded());
                        visit(Cell::Router(&records.iter().collect::<Vec<_>>()))?;
                    }
                }
                Ok(superseded)
            }
        }
    }
}

/// A cell's lines grouped by their part, in the order of what `name` makes of each part's number
/// (a task's name, a message's index), each group in file order.
fn parts<K: Ord>(lines: &[Spilled], name: impl Fn(u32) -> K) -> BTreeMap<K, Vec<&Spilled>> {
    let mut by_part: BTreeMap<K, Vec<&Spilled>> = BTreeMap::new();
    for at in lines {
        by_part.entry(name(at.part)).or_default().push(at);
    }
    by_part
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixtures::varied_run;
    use crate::analysis::{load_run, summarize};
    use crate::runner::record::{CONVERSATIONS_FILE, MANIFEST_FILE, Outcome, SCHEMA_VERSION};

    /// Writes `varied_run` as a run directory: one trial played twice (its first record ended
    /// on the wire, so it is superseded) and a torn last line.
    fn write_run(dir: &Path) {
        let (mut manifest, convs, router) = varied_run();
        manifest.schema_version = SCHEMA_VERSION;
        manifest.grader_digest = "g".into();
        let line = |r: Record| serde_json::to_string(&r).expect("json") + "\n";
        let mut lines = String::new();
        for (i, c) in convs.into_iter().enumerate() {
            if i == 5 {
                let mut failed = c.clone();
                failed.outcome = Outcome::TransportFail;
                lines += &line(Record::Conversation(Box::new(failed)));
            }
            lines += &line(Record::Conversation(Box::new(c)));
        }
        lines += r#"{"type":"conversation","schema"#;
        let routs: String = router
            .into_iter()
            .map(|r| line(Record::Router(Box::new(r))))
            .collect();
        let manifest = serde_json::to_string(&manifest).expect("json");
        std::fs::write(dir.join(MANIFEST_FILE), manifest).expect("manifest");
        std::fs::write(dir.join(CONVERSATIONS_FILE), lines).expect("conversations");
        std::fs::write(dir.join(ROUTER_FILE), routs).expect("router");
    }

    /// The summary of a run read cell by cell as JSON, and the superseded records left out.
    fn summary_of(run: &CellRun, opts: &AnalysisOptions) -> (String, usize) {
        let (summary, superseded) = run.summarize(opts).expect("cells");
        (serde_json::to_string(&summary).expect("json"), superseded)
    }

    #[test]
    fn a_run_held_or_read_back_cell_by_cell_gives_the_summary_of_the_whole_records() {
        let dir = tempfile::tempdir().expect("dir");
        write_run(dir.path());
        let opts = AnalysisOptions {
            resamples: 200,
            ..AnalysisOptions::default()
        };
        let whole = load_run(dir.path()).expect("run");
        assert_eq!((whole.superseded, whole.torn_lines), (1, 1));
        let expected = summarize(&whole.manifest, &whole.conversations, &whole.router, &opts);
        let expected = serde_json::to_string(&expected).expect("json");

        let spill = dir.path().join("spill");
        let mut seen = 0;
        let held = CellRun::read(dir.path(), u64::MAX, &spill, &mut |_| seen += 1).expect("held");
        assert!(held.is_held() && !spill.exists());
        let on_disk = CellRun::read(dir.path(), 0, &spill, &mut |_| {}).expect("on disk");
        assert!(!on_disk.is_held() && spill.exists());
        assert_eq!(seen, whole.conversations.len() + whole.router.len() + 1);
        for run in [&held, &on_disk] {
            assert_eq!(summary_of(run, &opts), (expected.clone(), 1));
            assert_eq!(run.torn_lines, 1);
            assert_eq!(run.grader_digests, whole.grader_digests);
            assert!(!run.gpu_utilization);
        }
        // Read back, a part is one task of a cell (one message of a router model).
        let mut parts = (0, 0);
        on_disk
            .read_cells(|cell| -> Result<(), RecordsError> {
                let distinct = match cell {
                    Cell::Conversations(c) => {
                        parts.0 += 1;
                        c.iter()
                            .map(|c| (&c.suite, &c.model, &c.task))
                            .collect::<BTreeSet<_>>()
                            .len()
                    }
                    Cell::Router(r) => {
                        parts.1 += 1;
                        r.iter()
                            .map(|r| (&r.model, r.index))
                            .collect::<BTreeSet<_>>()
                            .len()
                    }
                };
                assert_eq!(distinct, 1);
                Ok(())
            })
            .expect("parts");
        let tasks: BTreeSet<_> = (whole.conversations.iter())
            .map(|c| (&c.suite, &c.model, &c.task))
            .collect();
        let messages: BTreeSet<_> = whole.router.iter().map(|r| (&r.model, r.index)).collect();
        assert_eq!(parts, (tasks.len(), messages.len()));
        drop(on_disk);
        assert!(!spill.exists(), "the spill file goes with the run");
    }
}
