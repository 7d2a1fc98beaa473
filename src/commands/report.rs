//! `passk report RUN_DIR`: reads a run, computes its summary and writes `RUN_DIR/report/`
//! (`report.md`, `report.html`, `summary.json`, `conversations.csv`, `charts/*.svg`), plus the `--export-*`
//! copies; prints the headline table on stdout and the report's path on stderr. [`write`] does the
//! same without the terminal, for `passk run --report` and `passk calibrate`.

use crate::cli::{ExportArgs, ReportArgs};
use anyhow::Context;
use passk::analysis::{AnalysisOptions, CellRun, HOLD_UP_TO, load_run};
use passk::report::charts::charts;
use passk::report::csv::ConversationsCsv;
use passk::report::document::{self, Report};
use passk::report::folder::StagedFolder;
use passk::report::html::report::write_report_page;
use passk::report::html::transcripts;
use passk::report::html::trials::TrialSet;
use passk::report::json::JsonExporter;
use passk::report::summarized::{CELL_RECORDS, SummarizedRun};
use passk::report::{
    CHARTS_DIR, CONVERSATIONS_CSV, Destination, ExportManager, Exporter, REPORT_MD, ReportError,
    SUMMARY_JSON,
};
use passk::runner::record::{MANIFEST_FILE, Manifest};
use passk::spill::LineSpill;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The spill file of report.html's trial lines while a report is made, beside the records (named by
/// `report::temp_name`), so that nothing of it is in the report folder put in place.
const TRIAL_LINES: &str = "trial-lines";

/// Runs the command; returns the exit code.
pub(super) fn run(args: &ReportArgs) -> anyhow::Result<u8> {
    let mut stdout = std::io::stdout().lock();
    let pair = match args.pair.as_slice() {
        [] => None,
        [small, large] if small != large => Some((small.clone(), large.clone())),
        _ => {
            return Err(super::usage_error(
                "--pair takes two different models, small first: --pair SMALL,LARGE",
            ));
        }
    };
    let page = PageArgs {
        reference_model: args.reference_model.as_deref(),
        pair,
        inline_transcripts_mib: args.inline_transcripts_mib,
        hold_records_mib: args.hold_records_mib,
    };
    let (path, table) = match generate(&args.run, args.resamples, &page, &args.export, &mut stdout)
    {
        Ok(x) => x,
        Err(e) if is_broken_pipe(&e) => return Ok(crate::exit_code::SUCCESS),
        Err(e) => match e.downcast::<UnknownReferenceModel>() {
            Ok(u) => return Err(super::usage_error(&u.to_string())),
            Err(e) => return Err(e),
        },
    };
    let to_stdout = [
        &args.export.export_markdown,
        &args.export.export_json,
        &args.export.export_csv,
    ]
    .iter()
    .any(|p| p.as_deref() == Some(Path::new("-")));
    if !to_stdout
        && let Err(e) = stdout
            .write_all(table.as_bytes())
            .and_then(|()| stdout.flush())
        && e.kind() != std::io::ErrorKind::BrokenPipe
    {
        return Err(e).context("writing to standard output");
    }
    passk::errln!("report: {}", html_beside(&path).display());
    Ok(crate::exit_code::SUCCESS)
}

/// Writes the report of the run in `run_dir` into `run_dir/report/`; returns the path of
/// `report.md` and the terminal table. Prints nothing.
pub(super) fn write(run_dir: &Path, resamples: usize) -> anyhow::Result<(PathBuf, String)> {
    let none = ExportArgs {
        export_markdown: None,
        export_json: None,
        export_csv: None,
    };
    let page = PageArgs {
        reference_model: None,
        pair: None,
        inline_transcripts_mib: transcripts::INLINE_MAX_BYTES >> 20,
        hold_records_mib: HOLD_UP_TO >> 20,
    };
    generate(run_dir, resamples, &page, &none, &mut std::io::sink())
}

/// The page a person opens, beside report.md.
pub(super) fn html_beside(md: &Path) -> PathBuf {
    md.with_file_name(passk::report::html::REPORT_HTML)
}

/// What `passk report` asks beyond the resamples and exports.
struct PageArgs<'a> {
    /// `--reference-model`.
    reference_model: Option<&'a str>,
    /// `--pair`, (small, large).
    pair: Option<(String, String)>,
    /// `--inline-transcripts-mib`.
    inline_transcripts_mib: u64,
    /// `--hold-records-mib`.
    hold_records_mib: u64,
}

/// The terminal table of the run in `run_dir` (what `passk report` prints), writing no report
/// file; a large run's stripped records are set aside beside them while it is read, as
/// `passk report` does, and removed.
pub(super) fn table(run_dir: &Path, resamples: usize) -> anyhow::Result<String> {
    let spill = run_dir.join(passk::report::temp_name(CELL_RECORDS));
    let read = || -> Result<_, passk::analysis::RecordsError> {
        let run = CellRun::read(run_dir, HOLD_UP_TO, &spill, &mut |_| {})?;
        run.summarize(&options(&run.manifest, resamples))
    };
    let (summary, _) = read().with_context(|| format!("reading run {}", run_dir.display()))?;
    Ok(document::terminal_table(&summary))
}

/// Analysis settings for a run: the given resamples, and the documented example values and
/// tool-free tasks the manifest records.
pub(super) fn options(manifest: &Manifest, resamples: usize) -> AnalysisOptions {
    AnalysisOptions {
        resamples,
        ..AnalysisOptions::for_manifest(manifest)
    }
}

/// `--reference-model` names a model without records in the run: refused (a usage error) rather
/// than silently replaced by the default.
#[derive(Debug, thiserror::Error)]
#[error("{flag} {asked}: the run has no records of that model; its models: {models}")]
struct UnknownReferenceModel {
    flag: &'static str,
    asked: String,
    models: String,
}

/// Refuses a reference model the summary has no records of.
fn check_reference_model(
    asked: Option<&str>,
    summary: &passk::analysis::Summary,
) -> Result<(), UnknownReferenceModel> {
    match asked {
        Some(a) if !summary.models.iter().any(|m| m == a) => Err(UnknownReferenceModel {
            flag: "--reference-model",
            asked: a.to_string(),
            models: summary.models.join(", "),
        }),
        _ => Ok(()),
    }
}

/// Loads, summarizes and writes every file; `stdout` receives the exports sent to `-`. Returns the
/// path of `report.md` and the terminal table.
fn generate(
    run_dir: &Path,
    resamples: usize,
    page: &PageArgs<'_>,
    export: &ExportArgs,
    stdout: &mut dyn Write,
) -> anyhow::Result<(PathBuf, String)> {
    if !run_dir.join(MANIFEST_FILE).is_file() {
        // Refused as reading the run refuses it, before report/ (for the spill file) is made.
        load_run(run_dir).with_context(|| format!("reading run {}", run_dir.display()))?;
    }
    // Every file is written into a staging folder that replaces report/ whole at the end.
    let folder = StagedFolder::open(run_dir)?;
    let out_dir = folder.path().to_path_buf();
    // One pass over the records: each record's line for report.html is made as it is read and
    // set aside on disk, while the statistics keep the records without their text (or, for a
    // large run, set those aside too, to read back a task at a time).
    let lines = run_dir.join(passk::report::temp_name(TRIAL_LINES));
    let spill = LineSpill::create(&lines).map_err(|source| ReportError::Io {
        path: lines.clone(),
        source,
    })?;
    let mut trials = TrialSet::new(spill);
    let options = |manifest: &Manifest| AnalysisOptions {
        reference_model: page.reference_model.map(str::to_string),
        pair: page.pair.clone(),
        ..options(manifest, resamples)
    };
    let hold = page.hold_records_mib.saturating_mul(1 << 20);
    let read = SummarizedRun::read(run_dir, run_dir, hold, options, &mut |r| {
        trials.add_record(r)
    })
    .with_context(|| format!("reading run {}", run_dir.display()))?;
    let summary = &read.summary;
    check_reference_model(page.reference_model, summary)?;
    if let Some((small, large)) = &page.pair {
        for asked in [small, large] {
            check_reference_model(Some(asked), summary).map_err(|e| UnknownReferenceModel {
                flag: "--pair",
                ..e
            })?;
        }
    }
    let report = read.report();

    // Written once, for report.md, the page and --export-markdown alike.
    let markdown_text = document::markdown(&report);
    let markdown =
        |_: &Report| -> Result<Vec<u8>, ReportError> { Ok(markdown_text.clone().into_bytes()) };
    let json = |r: &Report| JsonExporter.render(r.summary);
    // Streamed to its file a row at a time (its size grows with the records).
    let csv = ConversationsCsv;
    let mut m: ExportManager<Report> = ExportManager::new();
    m.add(
        REPORT_MD,
        Destination::File(out_dir.join(REPORT_MD)),
        markdown,
    )?;
    m.add(
        SUMMARY_JSON,
        Destination::File(out_dir.join(SUMMARY_JSON)),
        json,
    )?;
    m.add(
        CONVERSATIONS_CSV,
        Destination::File(out_dir.join(CONVERSATIONS_CSV)),
        csv,
    )?;
    let charts = charts(&report);
    // The page may be hundreds of MB for a large run: streamed to a temporary file, put in place
    // once every other file is written.
    let html = write_report_page(
        &out_dir,
        &report,
        (&markdown_text, &charts),
        trials.finish(summary)?,
        page.inline_transcripts_mib << 20,
    )?;
    for c in charts {
        let dest = Destination::File(out_dir.join(CHARTS_DIR).join(c.file));
        m.add(c.file, dest, move |_: &Report| {
            Ok(c.svg.clone().into_bytes())
        })?;
    }
    m.add_optional(
        "--export-markdown",
        export.export_markdown.as_deref(),
        markdown,
    )?;
    m.add_optional("--export-json", export.export_json.as_deref(), json)?;
    m.add_optional("--export-csv", export.export_csv.as_deref(), csv)?;
    m.write(&report, stdout)?;
    html.commit()?;
    let md_path = folder.place().join(REPORT_MD);
    folder.commit()?;
    Ok((md_path, document::terminal_table(summary)))
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        matches!(c.downcast_ref::<ReportError>(), Some(ReportError::Stdout(io))
            if io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
