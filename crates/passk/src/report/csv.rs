//! `conversations.csv`: one row per conversation record, for pandas, R or a spreadsheet.
//!
//! Rows are sorted by (suite, model, task, trial), then call cap, mode and router flag, whatever
//! order the records were appended in. The first line is the header ([`COLUMNS`]); fields are quoted
//! only where RFC 4180 requires it; lines end in `\n`. A value that was not recorded is an empty field,
//! never 0. Per-call columns (calls, tokens, latency, energy, retries) count the agent's own
//! (orchestrator) calls; router calls made in front of the agent are in the `router_*` columns.
//! The columns are defined in `docs/reference/report.md`.

use super::document::Report;
use super::{Exporter, ReportError};
use crate::runner::record::{ConversationRecord, Mode, Outcome, Status};
use crate::trace::{CallFormat, FailureMode};
use crate::wire::outcome::CallOutcome;
use std::path::{Path, PathBuf};

/// Output weight w of blended tokens (input + w * output), as metrics.md defines them.
pub const BLENDED_OUTPUT_WEIGHT: u64 = 4;

/// Prefix the agent loop gives the tool name of a call that did not parse.
const MALFORMED_PREFIX: &str = "__malformed__:";

/// The header row, in order.
pub const COLUMNS: [&str; 35] = [
    "suite",
    "task",
    "category",
    "model",
    "trial",
    "call_cap",
    "mode",
    "router_in_front",
    "tool_docs",
    "status",
    "outcome",
    "passed",
    "failure_mode",
    "trajectory_correct",
    "model_calls",
    "tool_calls",
    "rejected_calls",
    "malformed_calls",
    "native_calls",
    "text_calls",
    "input_tokens",
    "output_tokens",
    "blended_tokens",
    "latency_s",
    "wall_s",
    "energy_j",
    "retries",
    "transport_attempts",
    "truncated_calls",
    "context_overflow",
    "router_calls",
    "router_blended_tokens",
    "router_retries",
    "router_truncated_calls",
    "prompt",
];

/// Exporter of `conversations.csv` from a slice of conversation records.
#[derive(Debug, Clone, Copy, Default)]
pub struct ConversationsCsv;

impl Exporter<[ConversationRecord]> for ConversationsCsv {
    fn render(&self, report: &[ConversationRecord]) -> Result<Vec<u8>, ReportError> {
        conversations_csv(report)
    }

    fn write_to(
        &self,
        report: &[ConversationRecord],
        out: &mut dyn std::io::Write,
    ) -> Result<(), ReportError> {
        write_conversations_csv(report, out)
    }
}

/// `conversations.csv` of a report: its records', or the file written a part at a time.
impl Exporter<Report<'_>> for ConversationsCsv {
    fn render(&self, report: &Report<'_>) -> Result<Vec<u8>, ReportError> {
        let mut out = Vec::new();
        self.write_to(report, &mut out)?;
        Ok(out)
    }

    fn write_to(
        &self,
        report: &Report<'_>,
        out: &mut dyn std::io::Write,
    ) -> Result<(), ReportError> {
        match &report.csv {
            CsvRows::Records(records) => write_conversations_csv(records, out),
            CsvRows::Written(written) => {
                // A read fails on the written file, a write on the destination (named by the
                // caller), so the two are kept apart.
                use std::io::Read;
                let read = |source| ReportError::Io {
                    path: written.path.clone(),
                    source,
                };
                let mut file = std::fs::File::open(&written.path).map_err(read)?;
                let mut buf = vec![0; 1 << 16];
                loop {
                    let n = match file.read(&mut buf) {
                        Ok(n) => n,
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                        Err(e) => return Err(read(e)),
                    };
                    if n == 0 {
                        return Ok(());
                    }
                    out.write_all(&buf[..n]).map_err(|source| ReportError::Io {
                        path: PathBuf::new(),
                        source,
                    })?;
                }
            }
        }
    }
}

/// The rows of a report's `conversations.csv`.
#[derive(Debug, Clone, Copy)]
pub enum CsvRows<'a> {
    /// Made from these records, held in memory.
    Records(&'a [ConversationRecord]),
    /// Already written a part at a time ([`CsvCells`]).
    Written(&'a WrittenCsv),
}

/// The bytes of `conversations.csv` for these records (any order in, sorted rows out).
pub fn conversations_csv(records: &[ConversationRecord]) -> Result<Vec<u8>, ReportError> {
    let mut out = Vec::new();
    write_conversations_csv(records, &mut out)?;
    Ok(out)
}

/// Writes `conversations.csv` for these records into `out` a row at a time (any order in, sorted
/// rows out). An I/O error is [`ReportError::Io`] with an empty path, for the caller to name.
pub fn write_conversations_csv(
    records: &[ConversationRecord],
    out: &mut dyn std::io::Write,
) -> Result<(), ReportError> {
    let mut w = header(out)?;
    write_rows(&mut w, records.iter().collect())?;
    w.flush().map_err(|source| ReportError::Io {
        path: PathBuf::new(),
        source,
    })
}

/// `conversations.csv` written a cell (a suite's model), or a part of one holding whole tasks, at
/// a time into a file of its own, in (suite, model, task) order: the rows come out as
/// [`write_conversations_csv`] sorts them, and no more than a part's records need be held. The
/// file is removed when the value drops.
pub struct CsvCells {
    path: PathBuf,
    writer: ::csv::Writer<std::io::BufWriter<std::fs::File>>,
}

impl CsvCells {
    /// Creates the file at `path` with the header row.
    pub fn create(path: &Path) -> Result<CsvCells, ReportError> {
        let file = std::fs::File::create(path).map_err(|source| ReportError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let writer = header(std::io::BufWriter::new(file)).map_err(|e| named(path, e))?;
        Ok(CsvCells {
            path: path.to_path_buf(),
            writer,
        })
    }

    /// Writes the rows of one cell's records, or of one part of them holding whole tasks (any
    /// order in).
    pub fn add(&mut self, part: &[&ConversationRecord]) -> Result<(), ReportError> {
        write_rows(&mut self.writer, part.to_vec()).map_err(|e| named(&self.path, e))
    }

    /// The file, every row written.
    pub fn finish(mut self) -> Result<WrittenCsv, ReportError> {
        self.writer.flush().map_err(|source| ReportError::Io {
            path: self.path.clone(),
            source,
        })?;
        Ok(WrittenCsv {
            path: std::mem::take(&mut self.path),
        })
    }
}

impl Drop for CsvCells {
    fn drop(&mut self) {
        if !self.path.as_os_str().is_empty() {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// An I/O error of the file at `path` named by it; any other error as it is.
fn named(path: &Path, e: ReportError) -> ReportError {
    match e {
        ReportError::Io { source, .. } => ReportError::Io {
            path: path.to_path_buf(),
            source,
        },
        e => e,
    }
}

/// A `conversations.csv` written by [`CsvCells`], removed when the value drops.
#[derive(Debug)]
pub struct WrittenCsv {
    path: PathBuf,
}

impl Drop for WrittenCsv {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// A CSV writer into `out` with the header row written.
fn header<W: std::io::Write>(out: W) -> Result<::csv::Writer<W>, ReportError> {
    let mut w = ::csv::WriterBuilder::new()
        .terminator(::csv::Terminator::Any(b'\n'))
        .from_writer(out);
    w.write_record(COLUMNS).map_err(csv_error)?;
    Ok(w)
}

/// Writes these records' rows, sorted by (suite, model, task, trial), then call cap, mode,
/// router flag, tool docs and prompt.
fn write_rows<W: std::io::Write>(
    w: &mut ::csv::Writer<W>,
    mut sorted: Vec<&ConversationRecord>,
) -> Result<(), ReportError> {
    sorted.sort_by(|a, b| {
        (&a.suite, &a.model, &a.task, a.trial, a.call_cap)
            .cmp(&(&b.suite, &b.model, &b.task, b.trial, b.call_cap))
            .then_with(|| mode_str(a.mode).cmp(mode_str(b.mode)))
            .then_with(|| a.router_in_front.cmp(&b.router_in_front))
            .then_with(|| a.tool_docs.cmp(&b.tool_docs))
            .then_with(|| a.prompt.cmp(&b.prompt))
    });
    for r in sorted {
        w.write_record(row(r)).map_err(csv_error)?;
    }
    Ok(())
}

/// A CSV writer's error: an I/O one as [`ReportError::Io`] (path for the caller to name), any
/// other as [`ReportError::Csv`].
fn csv_error(e: ::csv::Error) -> ReportError {
    if e.is_io_error() {
        ReportError::Io {
            path: std::path::PathBuf::new(),
            source: std::io::Error::from(e),
        }
    } else {
        ReportError::Csv(e)
    }
}

/// The fields of one record, in [`COLUMNS`] order.
fn row(r: &ConversationRecord) -> Vec<String> {
    let calls: Vec<_> = r.orchestrator_calls().collect();
    let input: u64 = calls.iter().map(|c| c.input_tokens()).sum();
    let output: u64 = calls.iter().map(|c| c.output_tokens()).sum();
    let latencies: Vec<f64> = calls.iter().filter_map(|c| c.latency_s()).collect();
    // Energy only when every call has a reading: a sum over some calls would pass for a total.
    let energies: Vec<f64> = calls
        .iter()
        .map(|c| c.gpu.as_ref().and_then(|g| g.energy_j))
        .collect::<Option<Vec<f64>>>()
        .unwrap_or_default();
    let count_events = |f: &dyn Fn(&crate::trace::ToolEvent) -> bool| {
        r.tool_events.iter().filter(|e| f(e)).count().to_string()
    };
    let router_tokens: u64 = r
        .router_calls()
        .map(|c| blended(c.input_tokens(), c.output_tokens()))
        .sum();
    vec![
        r.suite.clone(),
        r.task.clone(),
        r.category.clone(),
        r.model.clone(),
        r.trial.to_string(),
        r.call_cap.to_string(),
        mode_str(r.mode).into(),
        r.router_in_front.to_string(),
        r.tool_docs.map(|v| v.as_str()).unwrap_or_default().into(),
        status_str(r.status).into(),
        outcome_str(r.outcome).into(),
        r.verdict.passed.to_string(),
        r.verdict
            .failure_mode
            .map(failure_mode_str)
            .unwrap_or_default()
            .into(),
        r.verdict
            .trajectory_correct
            .map(|b| b.to_string())
            .unwrap_or_default(),
        calls.len().to_string(),
        r.tool_events.len().to_string(),
        count_events(&|e| !e.ok),
        count_events(&|e| {
            e.format == Some(CallFormat::Malformed) || e.tool.starts_with(MALFORMED_PREFIX)
        }),
        count_events(&|e| e.format == Some(CallFormat::Native)),
        count_events(&|e| e.format == Some(CallFormat::Text)),
        input.to_string(),
        output.to_string(),
        blended(input, output).to_string(),
        sum_or_empty(&latencies, 3),
        fixed(r.wall_s, 3),
        sum_or_empty(&energies, 3),
        calls.iter().map(|c| c.retries()).sum::<u32>().to_string(),
        calls
            .iter()
            .flat_map(|c| &c.attempts)
            .filter(|a| a.outcome == CallOutcome::Transport)
            .count()
            .to_string(),
        calls.iter().filter(|c| c.truncated).count().to_string(),
        calls.iter().any(|c| c.context_overflow).to_string(),
        r.router_calls().count().to_string(),
        router_tokens.to_string(),
        r.router_calls()
            .map(|c| c.retries())
            .sum::<u32>()
            .to_string(),
        r.router_calls().filter(|c| c.truncated).count().to_string(),
        r.prompt_variant().as_str().into(),
    ]
}

fn blended(input: u64, output: u64) -> u64 {
    input.saturating_add(output.saturating_mul(BLENDED_OUTPUT_WEIGHT))
}

/// Sum with fixed decimals, or an empty field when no value was recorded.
fn sum_or_empty(values: &[f64], decimals: usize) -> String {
    if values.is_empty() {
        String::new()
    } else {
        fixed(values.iter().sum(), decimals)
    }
}

/// Fixed decimals; a non-finite value is an empty field.
fn fixed(value: f64, decimals: usize) -> String {
    if value.is_finite() {
        super::number::fixed(value, decimals)
    } else {
        String::new()
    }
}

fn mode_str(m: Mode) -> &'static str {
    match m {
        Mode::Agent => "agent",
        Mode::Toolless => "toolless",
    }
}

fn status_str(s: Status) -> &'static str {
    match s {
        Status::Ok => "ok",
        Status::LoopCap => "loop_cap",
        Status::Aborted => "aborted",
    }
}

fn outcome_str(o: Outcome) -> &'static str {
    match o {
        Outcome::Pass => "pass",
        Outcome::ModelFail => "model_fail",
        Outcome::TransportFail => "transport_fail",
        Outcome::ProtocolFail => "protocol_fail",
        Outcome::ToolServerFail => "tool_server_fail",
    }
}

fn failure_mode_str(f: FailureMode) -> &'static str {
    match f {
        FailureMode::LoopCap => "loop_cap",
        FailureMode::NoUsableToolCall => "no_usable_tool_call",
        FailureMode::ActionRequired => "action_required",
        FailureMode::WrongAction => "wrong_action",
        FailureMode::MissedEscalation => "missed_escalation",
        FailureMode::WrongAnswer => "wrong_answer",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::record::{CallRecord, GpuWindow, Node, SCHEMA_VERSION};
    use crate::trace::{ToolEvent, Verdict};
    use crate::wire::outcome::Attempt;
    use serde_json::json;

    fn call(node: Node, input: u64, output: u64, wall: Option<f64>, load_ns: u64) -> CallRecord {
        let mut c = CallRecord::new(node, 0, 0);
        c.timings.prompt_eval_count = Some(input).into();
        c.timings.eval_count = Some(output).into();
        c.timings.load_duration = Some(load_ns).into();
        c.wall_s = wall.into();
        c
    }

    fn event(tool: &str, ok: bool, format: CallFormat) -> ToolEvent {
        ToolEvent {
            turn: 0,
            step: 0,
            tool: tool.into(),
            args: json!({}),
            ok,
            error: None,
            format: Some(format),
        }
    }

    fn record(model: &str, task: &str, trial: u32) -> ConversationRecord {
        ConversationRecord {
            schema_version: SCHEMA_VERSION,
            grader_digest: "d".into(),
            suite: "store".into(),
            task: task.into(),
            category: "cancel".into(),
            model: model.into(),
            api: crate::wire::chat::ApiKind::Ollama,
            trial,
            call_cap: 8,
            mode: Mode::Agent,
            router_in_front: false,
            tool_docs: None,
            tool_docs_sha256: None,
            prompt: None,
            prompt_sha256: None,
            status: Status::Ok,
            outcome: Outcome::Pass,
            calls: vec![call(Node::Orchestrator, 100, 10, Some(0.5), 0)],
            tool_events: vec![],
            replies: vec![Some("done".into())],
            transcript: vec![],
            end_state: json!({}).into(),
            verdict: Verdict {
                passed: true,
                ..Verdict::default()
            },
            wall_s: 0.75,
            imported: false,
            server_unreachable: false,
            host: None,
            parallel: None,
        }
    }

    fn parse(bytes: &[u8]) -> Vec<Vec<String>> {
        let mut r = ::csv::ReaderBuilder::new()
            .has_headers(false)
            .from_reader(bytes);
        r.records()
            .map(|rec| rec.expect("record").iter().map(String::from).collect())
            .collect()
    }

    fn col(name: &str) -> usize {
        COLUMNS.iter().position(|c| *c == name).expect("column")
    }

    #[test]
    fn rows_are_sorted_and_fields_computed() {
        let mut failed = record("m,1 \"big\"", "t2", 1);
        failed.status = Status::LoopCap;
        failed.outcome = Outcome::ModelFail;
        failed.verdict = Verdict {
            passed: false,
            failure_mode: Some(FailureMode::LoopCap),
            trajectory_correct: Some(false),
            ..Verdict::default()
        };
        let mut first = call(Node::Orchestrator, 1000, 50, Some(2.0), 500_000_000);
        first.attempts = Box::new([
            Attempt {
                outcome: CallOutcome::Transport,
                status: Some(503),
                error: Some("queue full".into()),
                elapsed_ms: 3.0,
            },
            Attempt {
                outcome: CallOutcome::Ok,
                status: Some(200),
                error: None,
                elapsed_ms: 2000.0,
            },
        ]);
        first.gpu = Some(Box::new(GpuWindow {
            samples: 3,
            energy_j: Some(12.5),
            ..GpuWindow::default()
        }));
        let mut second = call(Node::Orchestrator, 1200, 20, Some(1.0), 0);
        second.gpu = Some(Box::new(GpuWindow {
            samples: 1,
            energy_j: Some(2.0),
            ..GpuWindow::default()
        }));
        second.truncated = true;
        second.context_overflow = true;
        // The router in front retried twice and was cut short: counted in its own columns only.
        let mut router = call(Node::Router, 30, 2, Some(0.1), 0);
        let lost = Attempt {
            outcome: CallOutcome::Transport,
            status: Some(500),
            error: Some("reset".into()),
            elapsed_ms: 1.0,
        };
        router.attempts = Box::new([
            lost.clone(),
            lost,
            Attempt {
                outcome: CallOutcome::Ok,
                status: Some(200),
                error: None,
                elapsed_ms: 100.0,
            },
        ]);
        router.truncated = true;
        failed.calls = vec![router, first, second];
        failed.router_in_front = true;
        failed.tool_events = vec![
            event("get_order", true, CallFormat::Native),
            event("get_order", false, CallFormat::Text),
            event("__malformed__:cancel", false, CallFormat::Malformed),
        ];
        let records = vec![
            failed,
            record("a", "t1", 1),
            record("a", "t1", 0),
            record("a", "t10", 0),
        ];
        let bytes = conversations_csv(&records).expect("render");
        let rows = parse(&bytes);
        assert_eq!(rows[0], COLUMNS.map(String::from).to_vec());
        assert_eq!(rows.len(), 5);
        let keys: Vec<(String, String, String)> = rows[1..]
            .iter()
            .map(|r| {
                (
                    r[col("model")].clone(),
                    r[col("task")].clone(),
                    r[col("trial")].clone(),
                )
            })
            .collect();
        let expected_keys = [
            ("a", "t1", "0"),
            ("a", "t1", "1"),
            ("a", "t10", "0"),
            ("m,1 \"big\"", "t2", "1"),
        ];
        assert_eq!(
            keys,
            expected_keys
                .map(|(m, t, k)| (m.to_string(), t.to_string(), k.to_string()))
                .to_vec()
        );

        let f = &rows[4];
        let get = |name: &str| f[col(name)].as_str();
        assert_eq!(get("status"), "loop_cap");
        assert_eq!(get("outcome"), "model_fail");
        assert_eq!(get("passed"), "false");
        assert_eq!(get("failure_mode"), "loop_cap");
        assert_eq!(get("trajectory_correct"), "false");
        assert_eq!(get("router_in_front"), "true");
        assert_eq!(get("model_calls"), "2");
        assert_eq!(get("tool_calls"), "3");
        assert_eq!(get("rejected_calls"), "2");
        assert_eq!(get("malformed_calls"), "1");
        assert_eq!(get("native_calls"), "1");
        assert_eq!(get("text_calls"), "1");
        assert_eq!(get("input_tokens"), "2200");
        assert_eq!(get("output_tokens"), "70");
        assert_eq!(get("blended_tokens"), "2480");
        // (2.0 - 0.5) + 1.0
        assert_eq!(get("latency_s"), "2.500");
        assert_eq!(get("wall_s"), "0.750");
        assert_eq!(get("energy_j"), "14.500");
        assert_eq!(get("retries"), "1");
        assert_eq!(get("transport_attempts"), "1");
        assert_eq!(get("truncated_calls"), "1");
        assert_eq!(get("context_overflow"), "true");
        assert_eq!(get("router_calls"), "1");
        assert_eq!(get("router_blended_tokens"), "38");
        assert_eq!(get("router_retries"), "2");
        assert_eq!(get("router_truncated_calls"), "1");

        let p = &rows[1];
        assert_eq!(p[col("failure_mode")], "");
        assert_eq!(p[col("trajectory_correct")], "");
        assert_eq!(p[col("energy_j")], "", "absent energy must be empty, not 0");
        assert_eq!(p[col("blended_tokens")], "140");
    }

    #[test]
    fn quoting_follows_rfc_4180() {
        let mut r = record("m,1 \"big\"", "t\n1", 0);
        r.category = "plain".into();
        let text = String::from_utf8(conversations_csv(&[r]).expect("render")).expect("utf-8");
        assert!(text.contains("\"m,1 \"\"big\"\"\""), "{text}");
        assert!(text.contains("\"t\n1\""), "{text}");
        assert!(text.contains(",plain,"), "{text}");
        assert!(text.starts_with("suite,task,category,model,trial,"));
    }

    #[test]
    fn enum_fields_match_the_record_format() {
        for o in [
            Outcome::Pass,
            Outcome::ModelFail,
            Outcome::TransportFail,
            Outcome::ProtocolFail,
            Outcome::ToolServerFail,
        ] {
            assert_eq!(json!(o), json!(outcome_str(o)));
        }
        for s in [Status::Ok, Status::LoopCap, Status::Aborted] {
            assert_eq!(json!(s), json!(status_str(s)));
        }
        for m in [Mode::Agent, Mode::Toolless] {
            assert_eq!(json!(m), json!(mode_str(m)));
        }
        for f in FailureMode::ALL {
            assert_eq!(json!(f), json!(failure_mode_str(f)));
        }
    }

    #[test]
    fn same_records_any_order_same_bytes() {
        let a = vec![record("b", "t1", 0), record("a", "t1", 0)];
        let b = [record("a", "t1", 0), record("b", "t1", 0)];
        assert_eq!(
            conversations_csv(&a).expect("a"),
            ConversationsCsv.render(&b[..]).expect("b")
        );
    }

    #[test]
    fn empty_input_is_just_the_header() {
        let text = String::from_utf8(conversations_csv(&[]).expect("render")).expect("utf-8");
        assert_eq!(text, format!("{}\n", COLUMNS.join(",")));
    }
}
