//! Reads a run directory (`manifest.json`, `conversations.jsonl`, `router.jsonl`) back into the
//! record types. A last line cut short by an interrupted write is skipped and counted; a bad line
//! anywhere else is an error naming the file and line.

use crate::analysis::RecordsError;
use crate::analysis::figures::behaviour::is_counted_argument;
use crate::runner::record::{
    CONVERSATIONS_FILE, CallRecord, ConversationRecord, MANIFEST_FILE, Manifest, ROUTER_FILE,
    Record, RecordedJson, RouterRecord, SCHEMA_VERSION, TrialKey,
};
use crate::runner::record_file::{self, RecordFileError};
use crate::wire::outcome::CallOutcome;
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// A run as read from its directory.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    /// The run directory.
    pub dir: PathBuf,
    /// `manifest.json`.
    pub manifest: Manifest,
    /// Every conversation record.
    pub conversations: Vec<ConversationRecord>,
    /// Every standalone router record.
    pub router: Vec<RouterRecord>,
    /// The grader digests the records carry, each once (superseded records included). Read here
    /// because the statistics drop each record's own copy: at 64 characters a record it was
    /// nearly a tenth of a large run's memory.
    pub grader_digests: BTreeSet<String>,
    /// Torn last lines skipped (at most one per file).
    pub torn_lines: usize,
    /// Records that ended on a wire failure and were superseded by a later record of the same
    /// trial (played again on resume); they are left out, graded records never are.
    pub superseded: usize,
}

impl Run {
    /// A run of records made in memory (simulated, or built by a test): nothing torn or
    /// superseded, the grader digests read off the records.
    pub fn of_records(
        dir: PathBuf,
        manifest: Manifest,
        conversations: Vec<ConversationRecord>,
        router: Vec<RouterRecord>,
    ) -> Run {
        let grader_digests = grader_digests(&conversations, &router);
        Run {
            dir,
            manifest,
            conversations,
            router,
            grader_digests,
            torn_lines: 0,
            superseded: 0,
        }
    }
}

/// The grader digests whole records carry, each once.
pub fn grader_digests(
    conversations: &[ConversationRecord],
    router: &[RouterRecord],
) -> BTreeSet<String> {
    conversations
        .iter()
        .map(|c| &c.grader_digest)
        .chain(router.iter().map(|r| &r.grader_digest))
        .cloned()
        .collect()
}

fn read(path: &Path) -> Result<String, RecordsError> {
    std::fs::read_to_string(path).map_err(|source| RecordsError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// What to keep of each conversation record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    /// Everything (re-grading needs the end state and replies).
    Everything,
    /// What the statistics need: the transcript, end state and replies, and every other text
    /// the statistics never read, are dropped as each line is read (see `strip`), so memory grows
    /// with calls and tool events, not with conversation text.
    Statistics,
}

/// Streams a JSONL file of records into `run` by the rules every reader shares
/// ([`record_file`]), stripped as `keep` says; returns the torn lines skipped (0 or 1).
fn read_records(path: &Path, run: &mut Run, keep: Keep) -> Result<usize, RecordsError> {
    let manifest = run.manifest.clone();
    let read =
        record_file::read_records(path, &manifest, |line| keep_record(run, line.record, keep))
            .map_err(records_error)?;
    Ok(usize::from(read.torn))
}

/// A record file's error as the analysis reports it.
pub(super) fn records_error(e: RecordFileError) -> RecordsError {
    match e {
        RecordFileError::Io { path, source } => RecordsError::Io { path, source },
        RecordFileError::Line {
            path,
            line,
            message,
        } => RecordsError::Parse {
            path,
            line,
            message,
        },
    }
}

/// Adds a record to `run`, stripped as `keep` says.
fn keep_record(run: &mut Run, record: Record, keep: Keep) {
    note_digest(&mut run.grader_digests, &record);
    match record {
        Record::Conversation(mut c) => {
            if keep == Keep::Statistics {
                strip(&mut c, &run.manifest.example_values);
            }
            run.conversations.push(*c);
        }
        Record::Router(mut r) => {
            if keep == Keep::Statistics {
                strip_router(&mut r);
            }
            run.router.push(*r)
        }
    }
}

/// Adds a record's grader digest to `digests`.
pub(super) fn note_digest(digests: &mut BTreeSet<String>, record: &Record) {
    let digest = match record {
        Record::Conversation(c) => &c.grader_digest,
        Record::Router(r) => &r.grader_digest,
    };
    if !digests.contains(digest) {
        digests.insert(digest.clone());
    }
}

/// Drops what the statistics do not read (the transcript, end state, replies, the grader's
/// reasons, error texts, the reasoning's text, whose presence is kept, the grader digest, read
/// into [`Run::grader_digests`], the tool-docs and prompt hashes, and every argument of a tool
/// call the behaviour counts do not read, see [`keep_counted_arguments`]) and the spare capacity
/// the parser left in every list, which at a few calls per conversation is most of a record's
/// size.
pub(super) fn strip(c: &mut ConversationRecord, example_values: &[String]) {
    c.transcript = Vec::new();
    c.grader_digest = String::new();
    c.tool_docs_sha256 = None;
    c.prompt_sha256 = None;
    c.end_state = RecordedJson::null();
    c.replies = Vec::new();
    c.verdict.reasons = Vec::new();
    c.calls.shrink_to_fit();
    c.calls.iter_mut().for_each(strip_call);
    c.tool_events.shrink_to_fit();
    for e in &mut c.tool_events {
        e.error = None;
        e.tool.shrink_to_fit();
        keep_counted_arguments(&mut e.args, e.ok, example_values);
    }
}

/// Keeps of a tool call's arguments the entries the behaviour counts read
/// ([`is_counted_argument`] with the run's documented example values, which the analysis counts
/// by), in the order written; arguments that are not an object count nothing and become `null`.
/// An argument map with its hash table was a sixth of a large run's memory, and almost none holds
/// an entry that is counted.
fn keep_counted_arguments(args: &mut serde_json::Value, ok: bool, example_values: &[String]) {
    let serde_json::Value::Object(m) = args else {
        *args = serde_json::Value::Null;
        return;
    };
    m.retain(|_, v| is_counted_argument(v, ok, example_values));
    fit(args);
}

/// [`strip`] for a standalone router call: the reply, the grader digest (read into
/// [`Run::grader_digests`]), the gold label (its grade is kept as `correct`), the predicted
/// label's text (its presence is kept: the statistics count the replies that gave none) and the
/// call's copy of the prediction.
pub(super) fn strip_router(r: &mut RouterRecord) {
    r.raw = String::new();
    r.grader_digest = String::new();
    r.label = String::new();
    if let Some(p) = r.predicted.as_mut() {
        *p = String::new();
    }
    strip_call(&mut r.call);
    r.call.predicted = None;
}

/// [`strip`] for one model call: its `done_reason` (read only as `truncated`), the attempts'
/// error texts and the reasoning's text go, and so does a lone successful attempt, which counts
/// no retry, no failure and no time the call's own figures do not (most calls have just it).
fn strip_call(call: &mut CallRecord) {
    call.timings.done_reason = None;
    if let [only] = &*call.attempts
        && only.outcome == CallOutcome::Ok
    {
        call.attempts = Box::default();
    }
    for a in &mut call.attempts {
        a.error = None;
    }
    if let Some(t) = call.thinking.as_mut() {
        *t = Box::default();
    }
}

/// Rebuilds every object and array in `v` at its exact size: the parser grows an object's map
/// as a list would, to four entries and a hash table for one argument.
fn fit(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(m) => {
            let mut exact: serde_json::Map<String, serde_json::Value> =
                std::mem::take(m).into_iter().collect();
            exact.values_mut().for_each(fit);
            *m = exact;
        }
        serde_json::Value::Array(a) => {
            a.shrink_to_fit();
            a.iter_mut().for_each(fit);
        }
        _ => {}
    }
}

/// Reads the run in `dir` for the statistics ([`Keep::Statistics`]); `router.jsonl` may be absent.
pub fn load_run(dir: &Path) -> Result<Run, RecordsError> {
    load_run_keeping(dir, Keep::Statistics)
}

/// Reads the run in `dir`, keeping what `keep` says. (`passk report` reads a run through
/// [`crate::analysis::CellRun`], which also shows each whole record to the report page.)
pub fn load_run_keeping(dir: &Path, keep: Keep) -> Result<Run, RecordsError> {
    let manifest = read_manifest(dir)?;
    let mut run = Run {
        dir: dir.to_path_buf(),
        manifest,
        conversations: Vec::new(),
        router: Vec::new(),
        grader_digests: BTreeSet::new(),
        torn_lines: 0,
        superseded: 0,
    };
    let cpath = conversations_file(dir)?;
    run.torn_lines += read_records(&cpath, &mut run, keep)?;
    run.torn_lines += read_records(&dir.join(ROUTER_FILE), &mut run, keep)?;
    run.superseded = keep_latest(&mut run.conversations, ConversationRecord::key, |c| {
        c.outcome.is_graded()
    }) + keep_latest(&mut run.router, RouterRecord::key, |r| {
        r.outcome.is_graded()
    });
    Ok(run)
}

/// Reads `manifest.json` of the run in `dir`, refusing another format version.
pub(super) fn read_manifest(dir: &Path) -> Result<Manifest, RecordsError> {
    let mpath = dir.join(MANIFEST_FILE);
    let manifest: Manifest =
        serde_json::from_str(&read(&mpath)?).map_err(|e| RecordsError::Parse {
            path: mpath.clone(),
            line: e.line(),
            message: e.to_string(),
        })?;
    if manifest.schema_version != SCHEMA_VERSION {
        return Err(RecordsError::Parse {
            path: mpath,
            line: 1,
            message: format!(
                "schema_version {}: this passk reads run directories of format version \
                 {SCHEMA_VERSION} only (written by another passk version?)",
                manifest.schema_version
            ),
        });
    }
    Ok(manifest)
}

/// `conversations.jsonl` of the run in `dir`, which must exist.
pub(super) fn conversations_file(dir: &Path) -> Result<PathBuf, RecordsError> {
    let cpath = dir.join(CONVERSATIONS_FILE);
    if !cpath.exists() {
        return Err(RecordsError::Io {
            path: cpath,
            source: std::io::Error::new(std::io::ErrorKind::NotFound, "no conversation records"),
        });
    }
    Ok(cpath)
}

/// Drops every record that ended on the wire (transport or protocol failure) when a later record
/// of the same trial exists, as the journal writes when a resume plays such a trial again; returns
/// how many were dropped. Graded records are never dropped.
pub(super) fn keep_latest<T>(
    records: &mut Vec<T>,
    key: impl Fn(&T) -> TrialKey,
    graded: impl Fn(&T) -> bool,
) -> usize {
    if records.iter().all(&graded) {
        // Only records that ended on the wire can be dropped: none, nothing to look up.
        return 0;
    }
    let mut last: HashMap<TrialKey, usize> = HashMap::new();
    for (i, r) in records.iter().enumerate() {
        last.insert(key(r), i);
    }
    let before = records.len();
    let mut i = 0;
    records.retain(|r| {
        let keep = graded(r) || last.get(&key(r)) == Some(&i);
        i += 1;
        keep
    });
    before - records.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixtures::{call, conversation};
    use crate::runner::record::Timings;

    fn write_run(dir: &Path, lines: &str) {
        write_run_documenting(dir, lines, &[]);
    }

    /// A run whose tools documented these example values.
    fn write_run_documenting(dir: &Path, lines: &str, example_values: &[&str]) {
        let m = Manifest {
            schema_version: 1,
            run_id: "r".into(),
            grader_digest: "g".into(),
            example_values: example_values.iter().map(|v| v.to_string()).collect(),
            ..Manifest::default()
        };
        std::fs::write(dir.join(MANIFEST_FILE), serde_json::to_string(&m).unwrap()).unwrap();
        std::fs::write(dir.join(CONVERSATIONS_FILE), lines).unwrap();
    }

    fn line(trial: u32) -> String {
        let c = conversation("m", "L1", trial, true, vec![call(10, 1)]);
        serde_json::to_string(&Record::Conversation(Box::new(c))).unwrap()
    }

    #[test]
    fn skips_and_counts_a_torn_last_line() {
        let dir = tempfile::tempdir().unwrap();
        let whole = line(1);
        write_run(
            dir.path(),
            &format!("{}\n{}", line(0), &whole[..whole.len() / 2]),
        );
        let run = load_run(dir.path()).unwrap();
        assert_eq!(run.conversations.len(), 1);
        assert_eq!(run.torn_lines, 1);
        assert!(run.router.is_empty());
    }

    #[test]
    fn the_statistics_keep_every_figure_and_drop_the_texts() {
        use crate::trace::ToolEvent;
        use crate::wire::outcome::{Attempt, CallOutcome};
        let dir = tempfile::tempdir().unwrap();
        let mut x = call(10, 1);
        x.timings.done_reason = Some("stop".into());
        x.attempts = Box::new([
            Attempt {
                outcome: CallOutcome::Transport,
                status: Some(503),
                error: Some("busy".into()),
                elapsed_ms: 4.0,
            },
            Attempt {
                outcome: CallOutcome::Ok,
                status: Some(200),
                error: None,
                elapsed_ms: 9.0,
            },
        ]);
        let lone = |outcome| {
            let mut y = call(10, 1);
            y.attempts = Box::new([Attempt {
                outcome,
                status: Some(200),
                error: None,
                elapsed_ms: 9.0,
            }]);
            y
        };
        let (ok, lost) = (lone(CallOutcome::Ok), lone(CallOutcome::Transport));
        let mut c = conversation("m", "L1", 0, false, vec![x, ok, lost]);
        c.tool_docs_sha256 = Some("d".repeat(64));
        let args = serde_json::json!({
            "z": {"b": 1, "a": 2},
            "order_id": "5111",
            "items": [{"sku": "A", "qty": 2}],
            "reason": {"type": "string"},
            "qty": 7
        });
        let event = |ok| ToolEvent {
            turn: 0,
            step: 0,
            tool: "cancel_order".into(),
            args: args.clone(),
            ok,
            error: (!ok).then(|| "order 5111 is not yours".into()),
            format: None,
        };
        c.tool_events = vec![event(false), event(true)];
        c.verdict.reasons = vec!["wrong state".into()];
        c.replies = vec![Some("done".into())];
        let record = serde_json::to_string(&Record::Conversation(Box::new(c.clone()))).unwrap();
        write_run_documenting(dir.path(), &format!("{record}\n"), &["7", "5111"]);
        let everything = load_run_keeping(dir.path(), Keep::Everything).unwrap();
        assert_eq!(everything.conversations, vec![c.clone()]);
        let run = load_run(dir.path()).unwrap();
        assert_eq!(run.grader_digests, BTreeSet::from(["g".to_string()]));
        let kept = &run.conversations[0];
        assert_eq!(
            (kept.grader_digest.as_str(), &kept.tool_docs_sha256),
            ("", &None)
        );
        let [rejected, accepted] = &kept.tool_events[..] else {
            panic!("two events")
        };
        assert_eq!(
            rejected.args.to_string(),
            r#"{"order_id":"5111","reason":{"type":"string"},"qty":7}"#,
            "a rejected call keeps its example values and schema fragments, in the order written"
        );
        assert_eq!(
            accepted.args.to_string(),
            r#"{"order_id":"5111","qty":7}"#,
            "a schema fragment counts only on a rejected call"
        );
        let e = rejected;
        assert_eq!((e.error.as_deref(), e.ok), (None, false));
        assert!(kept.verdict.reasons.is_empty() && kept.replies.is_empty());
        assert_eq!(kept.verdict.failure_mode, c.verdict.failure_mode);
        let k = &kept.calls[0];
        assert_eq!(k.timings.done_reason, None);
        assert_eq!(k.timings.eval_count, c.calls[0].timings.eval_count);
        let attempts: Vec<_> = k
            .attempts
            .iter()
            .map(|a| (a.outcome, a.status, a.error.clone(), a.elapsed_ms))
            .collect();
        assert_eq!(
            attempts,
            vec![
                (CallOutcome::Transport, Some(503), None, 4.0),
                (CallOutcome::Ok, Some(200), None, 9.0)
            ]
        );
        assert!(
            kept.calls[1].attempts.is_empty(),
            "a lone successful attempt adds nothing"
        );
        assert_eq!(kept.calls[1].retries(), 0);
        assert_eq!(
            kept.calls[2].attempts, c.calls[2].attempts,
            "a lone failure stays"
        );
    }

    #[test]
    fn a_router_call_keeps_its_grade_and_whether_it_predicted() {
        let dir = tempfile::tempdir().unwrap();
        let lines: String = [Some("b"), None]
            .into_iter()
            .enumerate()
            .map(|(i, predicted)| {
                let mut r =
                    crate::analysis::fixtures::router_record("m", i as u32, false, predicted);
                r.raw = "b, I think".into();
                r.call.predicted = r.predicted.clone().map(Into::into);
                let line = serde_json::to_string(&Record::Router(Box::new(r))).unwrap();
                format!("{line}\n")
            })
            .collect();
        write_run(dir.path(), "");
        std::fs::write(dir.path().join(ROUTER_FILE), lines).unwrap();
        let whole = load_run_keeping(dir.path(), Keep::Everything).unwrap();
        let read = load_run(dir.path()).unwrap();
        assert_eq!(whole.router[0].label, "a");
        assert_eq!(read.grader_digests, BTreeSet::from(["g".to_string()]));
        let kept: Vec<_> = read
            .router
            .iter()
            .map(|r| {
                let texts = (r.raw.as_str(), r.label.as_str(), &r.call.predicted);
                (
                    texts,
                    r.predicted.is_some(),
                    r.correct,
                    r.call.timings.clone(),
                )
            })
            .collect();
        let timings = whole.router[0].call.timings.clone();
        let timings = Timings {
            done_reason: None,
            ..timings
        };
        assert_eq!(
            kept,
            [
                (("", "", &None), true, false, timings.clone()),
                (("", "", &None), false, false, timings)
            ]
        );
    }

    #[test]
    fn a_bad_line_in_the_middle_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        write_run(dir.path(), &format!("{}\nnot json\n{}\n", line(0), line(1)));
        match load_run(dir.path()) {
            Err(RecordsError::Parse { line, .. }) => assert_eq!(line, 2),
            other => panic!("expected a parse error, got {other:?}"),
        }
    }

    #[test]
    fn blank_lines_and_repeated_trials_are_refused_as_run_refuses_them() {
        let dir = tempfile::tempdir().unwrap();
        write_run(dir.path(), &format!("{}\n\n{}\n", line(0), line(1)));
        match load_run(dir.path()) {
            Err(RecordsError::Parse { line, .. }) => assert_eq!(line, 2),
            other => panic!("expected a blank-line error, got {other:?}"),
        }
        write_run(dir.path(), &format!("{}\n{}\n", line(0), line(0)));
        let err = load_run(dir.path()).expect_err("duplicate");
        assert!(
            err.to_string()
                .contains("already has a graded record on line 1"),
            "{err}"
        );
    }
}
