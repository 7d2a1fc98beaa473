//! The mapping from the reference's JSONL lines to passk records.
//!
//! - `spans` -> orchestrator [`CallRecord`]s: token counts into Ollama's counters, the `*_s`
//!   durations into nanoseconds, `wall_s = latency_s + load_s` (so that passk's latency,
//!   wall - load, gives back `latency_s`), `call_format` kept.
//! - `router_spans` -> router [`CallRecord`]s in front of the agent (with `predicted`), placed
//!   before the orchestrator calls of their turn.
//! - `tool_events` -> [`ToolEvent`]s; a `__malformed__:<name>` call keeps its name and gets format
//!   malformed, others take the format of the model call that made them.
//! - `snapshot` -> end state; `passed`/`reasons` -> verdict, with the failure mode the reference's
//!   own classifier gives; `status` ok/loop_cap; outcome pass/model_fail; `imported = true`.
//! - grader digest `imported:<sha256 of orchestrator.jsonl>`, suite `store`, trial = `seed`,
//!   call cap = the highest `step` + 1 seen in the file.

use super::RecordsError;
use crate::runner::optional::Opt;
use crate::runner::record::{
    CallRecord, ConversationRecord, Manifest, Mode, ModelInfo, Node, Outcome, RouterRecord,
    SCHEMA_VERSION, Status,
};
use crate::runner::record::{RecordedJson, Timings};
use crate::trace::{CallFormat, FailureMode, ToolEvent, Verdict};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::Path;

/// The reference's conversation file.
pub const ORCHESTRATOR_FILE: &str = "orchestrator.jsonl";
/// The reference's standalone router file.
pub const REFERENCE_ROUTER_FILE: &str = "router.jsonl";

const MALFORMED_PREFIX: &str = "__malformed__";

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct RefEnv {
    ollama_version: Option<String>,
    ollama_host: Option<String>,
    model_digest: Option<String>,
    quantization: Option<String>,
    gpu: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct RefSpan {
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    latency_s: Option<f64>,
    prompt_eval_s: Option<f64>,
    eval_s: Option<f64>,
    load_s: Option<f64>,
    total_s: Option<f64>,
    turn: Option<u32>,
    step: Option<u32>,
    tool_calls: Option<u32>,
    call_format: Option<String>,
    predicted: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct RefToolEvent {
    turn: Option<u32>,
    step: Option<u32>,
    tool: Option<String>,
    args: Option<Value>,
    ok: Option<bool>,
    error: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct RefConversation {
    task: Option<String>,
    cat: Option<String>,
    model: Option<String>,
    seed: Option<u32>,
    status: Option<String>,
    spans: Vec<RefSpan>,
    tool_events: Vec<RefToolEvent>,
    replies: Vec<Option<String>>,
    snapshot: Option<Value>,
    wall_s: Option<f64>,
    router_spans: Vec<RefSpan>,
    run: Option<Value>,
    env: Option<RefEnv>,
    passed: Option<bool>,
    reasons: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct RefRouter {
    model: Option<String>,
    #[serde(flatten)]
    span: RefSpan,
    temperature: Option<f64>,
    raw: Option<String>,
    i: Option<u32>,
    seed: Option<u32>,
    label: Option<String>,
    correct: Option<bool>,
    env: Option<RefEnv>,
}

fn ns(seconds: Option<f64>) -> Option<u64> {
    seconds
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map(|s| (s * 1e9).round() as u64)
}

fn format_of(s: Option<&str>) -> Option<CallFormat> {
    match s? {
        "native" => Some(CallFormat::Native),
        "text" => Some(CallFormat::Text),
        "malformed" => Some(CallFormat::Malformed),
        _ => None,
    }
}

fn call_record(span: &RefSpan, node: Node) -> CallRecord {
    let mut call = CallRecord::new(node, span.turn.unwrap_or(0), span.step.unwrap_or(0));
    call.wall_s = span
        .latency_s
        .map(|l| l + span.load_s.unwrap_or(0.0))
        .into();
    call.timings = Timings {
        total_duration: ns(span.total_s).into(),
        load_duration: ns(span.load_s).into(),
        prompt_eval_count: span.input_tokens.into(),
        prompt_eval_duration: ns(span.prompt_eval_s).into(),
        prompt_eval_cached_count: Opt::NONE,
        eval_count: span.output_tokens.into(),
        eval_duration: ns(span.eval_s).into(),
        done_reason: None,
    };
    call.call_format = format_of(span.call_format.as_deref());
    call.tool_calls = span.tool_calls.unwrap_or(0);
    call.predicted = span.predicted.clone().map(Into::into);
    call
}

/// The reference's own failure label of a failed conversation (its `classify_failure`): the call
/// cap first; then only malformed calls and no accepted one; then reasons naming a status,
/// address or return (state); then a ticket; otherwise the answer.
pub fn reference_failure_mode(
    status: Status,
    reasons: &[String],
    events: &[ToolEvent],
) -> FailureMode {
    if status == Status::LoopCap {
        return FailureMode::LoopCap;
    }
    let reasons = reasons.join(" ");
    if events.iter().any(|e| e.tool.starts_with(MALFORMED_PREFIX)) && !events.iter().any(|e| e.ok) {
        return FailureMode::NoUsableToolCall;
    }
    if ["status", "address", "returns"]
        .iter()
        .any(|w| reasons.contains(w))
    {
        return FailureMode::WrongAction;
    }
    if reasons.contains("ticket") {
        return FailureMode::MissedEscalation;
    }
    FailureMode::WrongAnswer
}

fn category_of(task: &str) -> &'static str {
    match task.chars().next() {
        Some('L') => "lookup",
        Some('M') => "multi-hop",
        Some('W') => "write",
        Some('T') => "multi-turn",
        _ => "unknown",
    }
}

fn read_lines<T: DeserializeOwned>(
    path: &Path,
    text: &str,
) -> Result<Vec<(usize, T)>, RecordsError> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v = serde_json::from_str(line).map_err(|e| RecordsError::Parse {
            path: path.to_path_buf(),
            line: i + 1,
            message: e.to_string(),
        })?;
        out.push((i + 1, v));
    }
    Ok(out)
}

fn read(path: &Path) -> Result<Vec<u8>, RecordsError> {
    std::fs::read(path).map_err(|source| RecordsError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// Notes what a line says about its model (first appearance order, digest, quantization).
fn note_model(models: &mut Vec<ModelInfo>, name: &str, env: Option<&RefEnv>) {
    let idx = match models.iter().position(|m| m.name == name) {
        Some(i) => i,
        None => {
            models.push(ModelInfo {
                name: name.to_string(),
                ..ModelInfo::default()
            });
            models.len() - 1
        }
    };
    if let Some(env) = env {
        let m = &mut models[idx];
        if m.digest.is_none() {
            m.digest = env.model_digest.clone();
        }
        if m.quantization.is_none() {
            m.quantization = env.quantization.clone();
        }
    }
}

/// Imports the reference records in `dir` (`orchestrator.jsonl`, and `router.jsonl` when
/// present) as a passk manifest, conversation records and router records.
pub fn reference(
    dir: &Path,
) -> Result<(Manifest, Vec<ConversationRecord>, Vec<RouterRecord>), RecordsError> {
    let opath = dir.join(ORCHESTRATOR_FILE);
    let bytes = read(&opath)?;
    let digest = format!("imported:{:x}", Sha256::digest(&bytes));
    let text = String::from_utf8_lossy(&bytes);
    let rows: Vec<(usize, RefConversation)> = read_lines(&opath, &text)?;
    let call_cap = inferred_call_cap(&rows);

    let mut manifest = imported_manifest(dir, &digest);
    let mut models: Vec<ModelInfo> = Vec::new();
    let mut runs: BTreeMap<String, usize> = BTreeMap::new();
    let mut conversations = Vec::with_capacity(rows.len());
    for (line, r) in rows {
        let missing = |field| RecordsError::Missing {
            path: opath.clone(),
            line,
            field,
        };
        let task = r.task.clone().ok_or_else(|| missing("task"))?;
        let model = r.model.clone().ok_or_else(|| missing("model"))?;
        note_model(&mut models, &model, r.env.as_ref());
        if let Some(env) = &r.env {
            note_environment(&mut manifest, env);
        }
        if let Some(run) = &r.run {
            *runs.entry(run.to_string()).or_default() += 1;
        }
        conversations.push(conversation_record(r, task, model, call_cap, &digest));
    }
    let mut router = read_router(dir, &digest, &mut models)?;

    manifest.models = models;
    manifest.source_regrade = regrade_note(dir)?;
    manifest.settings = json!({
        "source": "reference harness records",
        "reference_runs": runs,
        "call_cap_inferred": call_cap,
    });
    // Several reference runs in one file repeat their seeds; every trial must keep its own key.
    let bumped = number_repeats(&mut conversations, |c| c.key(), |c| &mut c.trial)
        + number_repeats(&mut router, |r| r.key(), |r| &mut r.trial);
    if bumped > 0 {
        manifest.warnings.push(format!(
            "{bumped} records repeat a (model, task, seed) of an earlier line (several reference runs \
             in one file?); their trials are numbered seed + 100 x the repeat"
        ));
    }
    Ok((manifest, conversations, router))
}

/// The call cap the reference ran with: one more than the highest step any span reached.
fn inferred_call_cap(rows: &[(usize, RefConversation)]) -> u32 {
    rows.iter()
        .flat_map(|(_, r)| r.spans.iter().filter_map(|s| s.step))
        .max()
        .map_or(0, |s| s + 1)
}

/// The manifest of an imported run, before its models and settings are known.
fn imported_manifest(dir: &Path, digest: &str) -> Manifest {
    Manifest {
        schema_version: SCHEMA_VERSION,
        run_id: format!(
            "imported-{}",
            dir.file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
        ),
        passk_version: env!("CARGO_PKG_VERSION").to_string(),
        grader_digest: digest.to_string(),
        backend: "imported".into(),
        imported_from: Some(dir.display().to_string()),
        ..Manifest::default()
    }
}

/// Keeps the first Ollama version, host and GPU name the records mention.
fn note_environment(manifest: &mut Manifest, env: &RefEnv) {
    manifest.server_version = manifest
        .server_version
        .take()
        .or(env.ollama_version.clone());
    manifest.server_host = manifest.server_host.take().or(env.ollama_host.clone());
    manifest.gpu.name = manifest.gpu.name.take().or(env.gpu.clone());
}

/// One reference conversation as a passk record, verdict as recorded.
fn conversation_record(
    r: RefConversation,
    task: String,
    model: String,
    call_cap: u32,
    digest: &str,
) -> ConversationRecord {
    let status = match r.status.as_deref() {
        Some("loop_cap") => Status::LoopCap,
        _ => Status::Ok,
    };
    let tool_events = tool_events_of(&r);
    let mut calls: Vec<CallRecord> = r
        .router_spans
        .iter()
        .map(|s| call_record(s, Node::Router))
        .chain(r.spans.iter().map(|s| call_record(s, Node::Orchestrator)))
        .collect();
    // Router calls come before the agent's calls of the same turn (stable otherwise).
    calls.sort_by_key(|c| (c.turn, c.node == Node::Orchestrator));
    let passed = r.passed.unwrap_or(false);
    let failure_mode = (!passed).then(|| reference_failure_mode(status, &r.reasons, &tool_events));
    let wall_s = r
        .wall_s
        .unwrap_or_else(|| calls.iter().filter_map(|c| c.wall_s.get()).sum::<f64>());
    ConversationRecord {
        schema_version: SCHEMA_VERSION,
        grader_digest: digest.to_string(),
        suite: "store".into(),
        category: r
            .cat
            .clone()
            .unwrap_or_else(|| category_of(&task).to_string()),
        task,
        model,
        api: crate::wire::chat::ApiKind::Ollama,
        trial: r.seed.unwrap_or(0),
        call_cap,
        mode: Mode::Agent,
        router_in_front: !r.router_spans.is_empty(),
        tool_docs: None,
        tool_docs_sha256: None,
        prompt: None,
        prompt_sha256: None,
        status,
        outcome: if passed {
            Outcome::Pass
        } else {
            Outcome::ModelFail
        },
        calls,
        tool_events,
        replies: r.replies,
        transcript: Vec::new(),
        end_state: RecordedJson::from(&r.snapshot.unwrap_or(Value::Null)),
        verdict: Verdict {
            passed,
            reasons: r.reasons,
            failure_mode,
            ..Verdict::default()
        },
        wall_s,
        imported: true,
        server_unreachable: false,
        host: None,
        parallel: None,
    }
}

/// A reference conversation's tool events, each tagged with the format of the call that made it
/// (malformed calls by their tool name, the others by their span's `call_format`).
fn tool_events_of(r: &RefConversation) -> Vec<ToolEvent> {
    let formats: BTreeMap<(u32, u32), Option<CallFormat>> = r
        .spans
        .iter()
        .map(|s| {
            (
                (s.turn.unwrap_or(0), s.step.unwrap_or(0)),
                format_of(s.call_format.as_deref()),
            )
        })
        .collect();
    r.tool_events
        .iter()
        .map(|e| {
            let (turn, step) = (e.turn.unwrap_or(0), e.step.unwrap_or(0));
            let tool = e.tool.clone().unwrap_or_default();
            let format = if tool.starts_with(MALFORMED_PREFIX) {
                Some(CallFormat::Malformed)
            } else {
                formats.get(&(turn, step)).copied().flatten()
            };
            ToolEvent {
                turn,
                step,
                tool,
                args: e.args.clone().unwrap_or(Value::Null),
                ok: e.ok.unwrap_or(false),
                error: e.error.clone(),
                format,
            }
        })
        .collect()
}

/// The router records of `router.jsonl`, when the reference wrote one.
fn read_router(
    dir: &Path,
    digest: &str,
    models: &mut Vec<ModelInfo>,
) -> Result<Vec<RouterRecord>, RecordsError> {
    let rpath = dir.join(REFERENCE_ROUTER_FILE);
    if !rpath.exists() {
        return Ok(Vec::new());
    }
    let rbytes = read(&rpath)?;
    let rtext = String::from_utf8_lossy(&rbytes);
    let mut router = Vec::new();
    for (line, r) in read_lines::<RefRouter>(&rpath, &rtext)? {
        let missing = |field| RecordsError::Missing {
            path: rpath.clone(),
            line,
            field,
        };
        let model = r.model.clone().ok_or_else(|| missing("model"))?;
        let index = r.i.ok_or_else(|| missing("i"))?;
        note_model(models, &model, r.env.as_ref());
        router.push(router_record(r, model, index, digest));
    }
    Ok(router)
}

/// One reference router line as a passk record; a missing `correct` is recomputed from the labels.
fn router_record(r: RefRouter, model: String, index: u32, digest: &str) -> RouterRecord {
    let label = r.label.clone().unwrap_or_default();
    let correct = r
        .correct
        .unwrap_or_else(|| r.span.predicted.as_deref() == Some(label.as_str()));
    let mut call = call_record(&r.span, Node::Router);
    call.turn = 0;
    call.step = 0;
    RouterRecord {
        schema_version: SCHEMA_VERSION,
        grader_digest: digest.to_string(),
        model,
        api: crate::wire::chat::ApiKind::Ollama,
        index,
        trial: r.seed.unwrap_or(0),
        label,
        predicted: r.span.predicted.clone(),
        correct,
        raw: r.raw.clone().unwrap_or_default(),
        temperature: r.temperature,
        outcome: if correct {
            Outcome::Pass
        } else {
            Outcome::ModelFail
        },
        call,
        imported: true,
        server_unreachable: false,
        host: None,
        parallel: None,
    }
}

/// The reference's re-grading note beside its records.
pub(super) const REGRADE_FILE: &str = "regrade.md";

/// What the source folder's `regrade.md` says, when there is one: how many grades the reference
/// changed after the run (its line `N grades changed: ...`), and so whether its published figures
/// used other verdicts than the recorded ones this import keeps.
fn regrade_note(dir: &Path) -> Result<Option<String>, RecordsError> {
    let path = dir.join(REGRADE_FILE);
    if !path.is_file() {
        return Ok(None);
    }
    let text = String::from_utf8_lossy(&read(&path)?).into_owned();
    let changed = text.lines().find_map(|l| {
        l.trim()
            .split_once(" grades changed")
            .map(|(n, rest)| (n.to_string(), rest))
    });
    let note = match changed {
        Some((n, _)) if n == "0" => format!(
            "the source folder's {REGRADE_FILE} records 0 grades changed: the published figures \
             used the recorded verdicts, which this import keeps"
        ),
        Some((n, rest)) => format!(
            "the source folder's {REGRADE_FILE} records {n} grades changed{}: the published table \
             used the re-graded verdicts, while this import keeps the verdicts as recorded, so its \
             figures may differ from the published ones",
            rest.trim_end_matches('.')
        ),
        None => format!(
            "the source folder has a {REGRADE_FILE}: the published table may use re-graded \
             verdicts, while this import keeps the verdicts as recorded"
        ),
    };
    Ok(Some(note))
}

/// Renumbers the trial of every record whose key an earlier record already has (seed + 100 per
/// repeat); returns how many were renumbered.
fn number_repeats<T>(
    records: &mut [T],
    key: impl Fn(&T) -> crate::runner::record::TrialKey,
    trial: impl Fn(&mut T) -> &mut u32,
) -> usize {
    let mut seen: std::collections::HashMap<_, u32> = std::collections::HashMap::new();
    let mut bumped = 0;
    for r in records.iter_mut() {
        let repeats = seen.entry(key(r)).or_insert(0);
        if *repeats > 0 {
            *trial(r) += 100 * *repeats;
            bumped += 1;
        }
        *repeats += 1;
    }
    bumped
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROW: &str = r#"{"task": "W1", "model": "m:3b", "seed": 2, "status": "loop_cap", "spans": [{"input_tokens": 100, "output_tokens": 5, "latency_s": 0.3, "load_s": 0.1, "prompt_eval_s": 0.05, "eval_s": 0.2, "turn": 0, "step": 0, "tool_calls": 1, "call_format": "text"}, {"input_tokens": 150, "output_tokens": 5, "latency_s": 0.4, "turn": 0, "step": 1, "call_format": null}], "tool_events": [{"turn": 0, "step": 0, "tool": "find_customer", "args": {"query": "a"}, "ok": true, "error": null}, {"turn": 0, "step": 1, "tool": "__malformed__:get_order", "args": {}, "ok": false, "error": "bad"}], "replies": [null], "router_spans": [{"input_tokens": 120, "output_tokens": 3, "latency_s": 0.05, "node": "router", "predicted": "cancel_order", "turn": 0}], "passed": false, "reasons": ["order status wrong"]}
{"task": "L1", "model": "m:7b"}
"#;
    const ROUTER: &str = r#"{"model": "m:3b", "input_tokens": 117, "output_tokens": 3, "latency_s": 2.1, "predicted": null, "raw": "??", "i": 4, "seed": 1, "label": "order_status", "correct": false}
"#;

    fn import(
        rows: &str,
        router: Option<&str>,
    ) -> Result<(Manifest, Vec<ConversationRecord>, Vec<RouterRecord>), RecordsError> {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(ORCHESTRATOR_FILE), rows).unwrap();
        if let Some(r) = router {
            std::fs::write(dir.path().join(REFERENCE_ROUTER_FILE), r).unwrap();
        }
        reference(dir.path())
    }

    #[test]
    fn a_regrade_note_in_the_source_folder_is_carried_over() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(ORCHESTRATOR_FILE), ROW).unwrap();
        assert_eq!(reference(dir.path()).unwrap().0.source_regrade, None);
        std::fs::write(
            dir.path().join(REGRADE_FILE),
            "# Re-grading\n\n9 grades changed: 6 pass → fail, 3 fail → pass.\n",
        )
        .unwrap();
        let note = reference(dir.path()).unwrap().0.source_regrade.unwrap();
        assert!(
            note.contains("9 grades changed: 6 pass → fail, 3 fail → pass"),
            "{note}"
        );
        assert!(note.contains("keeps the verdicts as recorded"), "{note}");
        std::fs::write(dir.path().join(REGRADE_FILE), "0 grades changed: none.\n").unwrap();
        let note = reference(dir.path()).unwrap().0.source_regrade.unwrap();
        assert!(note.contains("used the recorded verdicts"), "{note}");
    }

    #[test]
    fn several_runs_in_one_file_keep_every_trial() {
        let rows = r#"{"task": "L1", "model": "m", "seed": 0, "run": 1, "passed": true}
{"task": "L1", "model": "m", "seed": 0, "run": 2, "passed": false}
"#;
        let (m, convs, _) = import(rows, None).unwrap();
        let trials: Vec<u32> = convs.iter().map(|c| c.trial).collect();
        assert_eq!(trials, [0, 100]);
        assert!(
            m.warnings
                .iter()
                .any(|w| w.contains("several reference runs"))
        );
    }

    #[test]
    fn maps_every_part_of_a_conversation() {
        let (m, convs, router) = import(ROW, Some(ROUTER)).unwrap();
        assert_eq!(m.backend, "imported");
        assert!(m.grader_digest.starts_with("imported:"));
        assert_eq!(
            m.models.iter().map(|x| x.name.as_str()).collect::<Vec<_>>(),
            ["m:3b", "m:7b"]
        );
        let c = &convs[0];
        assert_eq!(
            (c.suite.as_str(), c.category.as_str(), c.trial),
            ("store", "write", 2)
        );
        assert_eq!(c.call_cap, 2);
        assert_eq!(c.status, Status::LoopCap);
        assert_eq!(c.outcome, Outcome::ModelFail);
        assert!(c.imported && c.router_in_front);
        assert_eq!(c.calls.len(), 3);
        assert_eq!(c.calls[0].node, Node::Router);
        assert_eq!(c.calls[0].predicted.as_deref(), Some("cancel_order"));
        let first = &c.calls[1];
        assert_eq!(first.timings.prompt_eval_count, Some(100).into());
        assert_eq!(first.timings.load_duration, Some(100_000_000).into());
        assert_eq!(first.timings.eval_duration, Some(200_000_000).into());
        assert!((first.latency_s().unwrap() - 0.3).abs() < 1e-12);
        assert_eq!(first.call_format, Some(CallFormat::Text));
        assert_eq!(c.calls[2].wall_s, Some(0.4).into());
        assert_eq!(c.tool_events[0].format, Some(CallFormat::Text));
        assert_eq!(c.tool_events[1].tool, "__malformed__:get_order");
        assert_eq!(c.tool_events[1].format, Some(CallFormat::Malformed));
        assert_eq!(c.verdict.failure_mode, Some(FailureMode::LoopCap));
        // The bare second line imports with defaults.
        assert_eq!(convs[1].category, "lookup");
        assert_eq!(convs[1].outcome, Outcome::ModelFail);
        assert_eq!(
            convs[1].end_state,
            crate::runner::record::RecordedJson::null()
        );
        let r = &router[0];
        assert_eq!((r.index, r.trial, r.correct), (4, 1, false));
        assert_eq!(r.predicted, None);
        assert_eq!(r.call.wall_s, Some(2.1).into());
    }

    #[test]
    fn missing_identity_and_bad_json_name_the_line() {
        match import("{\"model\": \"m\"}\n", None) {
            Err(RecordsError::Missing {
                line: 1,
                field: "task",
                ..
            }) => {}
            other => panic!("unexpected {other:?}"),
        }
        match import("{\"task\": \"L1\", \"model\": \"m\"}\n{oops\n", None) {
            Err(RecordsError::Parse { line: 2, .. }) => {}
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn reference_failure_labels() {
        let ev = |tool: &str, ok| ToolEvent {
            turn: 0,
            step: 0,
            tool: tool.into(),
            args: Value::Null,
            ok,
            error: None,
            format: None,
        };
        let r = |s: &str| vec![s.to_string()];
        let mal = [ev("__malformed__:x", false)];
        assert_eq!(
            reference_failure_mode(Status::Ok, &r("answer"), &mal),
            FailureMode::NoUsableToolCall
        );
        assert_eq!(
            reference_failure_mode(Status::Ok, &r("order status is x"), &[]),
            FailureMode::WrongAction
        );
        assert_eq!(
            reference_failure_mode(Status::Ok, &r("no ticket opened"), &[]),
            FailureMode::MissedEscalation
        );
        assert_eq!(
            reference_failure_mode(Status::Ok, &r("answer missing"), &[]),
            FailureMode::WrongAnswer
        );
        assert_eq!(
            reference_failure_mode(Status::LoopCap, &[], &mal),
            FailureMode::LoopCap
        );
    }
}
