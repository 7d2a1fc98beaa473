//! No input panics: property tests over the parsers that take model or user text. Each runs a few
//! hundred cases inside `cargo test`; `scripts/fuzz.sh` runs them long (`PASSK_FUZZ_CASES`).
//!
//! - the text tool-call parser (`wire::tool_call::extract_text`, its public entry point);
//! - tool-argument checking (each suite's environment executing any arguments);
//! - the record loader (`runner::record_file`, shared by run and report);
//! - the experiment-file loader (`runner::settings::ExperimentFile::load`).

use crate::util;
use passk::domain::Domain;
use passk::runner::record::{CallRecord, Manifest, Node, Outcome, Record};
use passk::runner::settings::{ExperimentFile, RunSettings};
use proptest::prelude::*;
use serde_json::Value;
use std::path::Path;
use std::sync::OnceLock;

/// Longest one case may take in a long run (`scripts/fuzz.sh`): a slower case is reported as a
/// hang. `cargo test`'s short run times nothing.
const CASE_LIMIT: std::time::Duration = std::time::Duration::from_secs(2);

/// Runs one case; in a long run, fails it when it takes longer than [`CASE_LIMIT`].
fn bounded<T>(what: &str, f: impl FnOnce() -> T) -> Result<T, TestCaseError> {
    let long_run = std::env::var_os("PASSK_FUZZ_CASES").is_some();
    let started = std::time::Instant::now();
    let out = f();
    let took = started.elapsed();
    if long_run && took > CASE_LIMIT {
        return Err(TestCaseError::fail(format!(
            "{what}: one case took {took:?} (a hang)"
        )));
    }
    Ok(out)
}

fn config() -> ProptestConfig {
    ProptestConfig {
        failure_persistence: None,
        ..ProptestConfig::with_cases(passk::fuzz_cases(256))
    }
}

/// JSON values of any shape, a few levels deep.
fn json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        "\\PC{0,12}".prop_map(Value::from),
        proptest::sample::select(vec!["ORD-1001", "C-1", "L1", "refund", "", "-1", "1e999"])
            .prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::btree_map("[a-z_]{1,10}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Text around, inside and instead of tool calls: fragments of the shapes the parser looks for.
fn call_text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        "\\PC{0,16}",
        json().prop_map(|v| v.to_string()),
        (json(), "[a-z_]{0,10}").prop_map(|(args, name)| {
            format!("{{\"name\": \"{name}\", \"arguments\": {args}}}")
        }),
        proptest::sample::select(vec![
            "{",
            "}",
            "[",
            "]",
            "\"",
            "\\",
            "```json",
            "```",
            "<tool_call>",
            "</tool_call>",
            "{\"function\": {",
            "\"parameters\":",
            "\"arguments\": \"{",
            "'name': ",
            "{'name'",
            "[TOOL_CALLS]",
            "[ARGS]",
            "<function=",
            "</function>",
            "[get_order(order_id=\"5105\")]",
            "(order_id=",
            "Action: ",
            "\nAction Input: ",
            "```python\n",
            "<think>",
            "</think>",
            "<tools>",
            "{\"tool_calls\": [",
            "{\"function\": \"x\", \"params\": ",
            "\"input\": ",
        ])
        .prop_map(String::from),
    ];
    // A dozen pieces reach every shape's edge cases; the parser's cost on long replies is
    // measured by `cargo bench --bench text_scan`.
    proptest::collection::vec(piece, 0..12).prop_map(|v| v.concat())
}

fn known_tools() -> Vec<String> {
    ["lookup_order", "refund", "get_customer", "escalate"]
        .map(String::from)
        .to_vec()
}

/// A record line as the journal writes it (a router call, the smallest record).
fn record_line(model: &str, index: u32, outcome: Outcome) -> String {
    let mut value = serde_json::json!({
        "type": "router", "schema_version": 1, "grader_digest": "g", "model": model,
        "index": index, "trial": 0, "label": "other", "correct": true, "outcome": outcome,
    });
    value["call"] = serde_json::to_value(CallRecord::new(Node::Router, 0, 0)).expect("call");
    let record: Record = serde_json::from_str(&value.to_string()).expect("a router record");
    serde_json::to_string(&record).expect("json") + "\n"
}

/// Edits that a kill, a disk or a person may make to a record file.
#[derive(Debug, Clone)]
enum Edit {
    Cut(usize),
    Flip(usize, u8),
    Insert(usize, String),
    Repeat(usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        any::<usize>().prop_map(Edit::Cut),
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Edit::Flip(i, b)),
        (any::<usize>(), "\\PC{0,8}|\n|\n\n|\\{|\\}").prop_map(|(i, t)| Edit::Insert(i, t)),
        any::<usize>().prop_map(Edit::Repeat),
    ]
}

fn apply(mut bytes: Vec<u8>, edit: &Edit) -> Vec<u8> {
    let at = |i: usize, len: usize| if len == 0 { 0 } else { i % (len + 1) };
    match edit {
        Edit::Cut(i) => bytes.truncate(at(*i, bytes.len())),
        Edit::Flip(i, b) => {
            if !bytes.is_empty() {
                let n = bytes.len();
                bytes[i % n] ^= b;
            }
        }
        Edit::Insert(i, t) => {
            let p = at(*i, bytes.len());
            bytes.splice(p..p, t.bytes());
        }
        Edit::Repeat(i) => {
            let p = at(*i, bytes.len());
            let copy = bytes[..p].to_vec();
            bytes.extend(copy);
        }
    }
    bytes
}

fn manifest() -> Manifest {
    serde_json::from_value(serde_json::json!({
        "schema_version": 1,
        "run_id": "r",
        "grader_digest": "g",
        "settings": {"call_caps": [10], "toolless": false},
        "models": [{"name": "m"}],
        "suite_digests": {"router": {"tasks": "t", "tools": "", "policy": ""}},
    }))
    .unwrap_or_default()
}

/// Runs the record loader over `bytes`; the property is that it returns, and that what it accepts
/// keeps its own rules.
fn load_records(bytes: &[u8], manifest: &Manifest) {
    let mut seen = Vec::new();
    let read = passk::runner::record_file::read_from(Path::new("r.jsonl"), bytes, manifest, |l| {
        seen.push(l.number)
    });
    if let Ok(read) = read {
        assert!(read.good_len as usize <= bytes.len());
        assert!(seen.windows(2).all(|w| w[0] < w[1]));
    }
}

/// Runs the experiment-file loader on `text`; what it accepts applies, validates and converts.
fn load_experiment_file(text: &str) {
    if let Ok(file) = ExperimentFile::load("exp.toml", text) {
        let mut s = RunSettings::default();
        file.apply(&mut s).expect("a loaded file applies");
        s.validate(&|k| k.to_string())
            .expect("a loaded file is valid");
        s.wire_durations()
            .expect("valid settings convert to durations");
        let _ = s.default_run_id();
    }
}

fn toml_value() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<f64>().prop_map(|v| format!("{v:?}")),
        any::<i64>().prop_map(|v| v.to_string()),
        proptest::sample::select(vec![
            "inf",
            "-inf",
            "nan",
            "1e300",
            "-1",
            "0",
            "true",
            "\"\"",
            "[]",
            "[\"\"]",
            "[\",\"]",
            "[\"a\", \"a\"]",
            "\"store\"",
            "[\"store\", \"store\"]",
            "[0]",
            "[10, 10]",
            "{}",
        ])
        .prop_map(String::from),
        "\"[^\"\\\\]{0,8}\"",
        proptest::collection::vec(any::<i32>(), 0..4).prop_map(|v| format!("{v:?}")),
    ]
}

fn toml_key() -> impl Strategy<Value = String> {
    prop_oneof![
        proptest::sample::select(vec![
            "models",
            "suite",
            "trials",
            "tool-docs",
            "router-in-front",
            "baseline",
            "temperature",
            "router-temperature",
            "num-ctx",
            "num-predict",
            "router-num-predict",
            "keep-alive",
            "call-cap",
            "base-seed",
            "tasks",
            "stream",
            "timeout",
            "connect-timeout",
            "retry-backoff",
            "retries",
            "think",
            "hosts",
            "parallel",
            "gpu-metrics",
            "scrape-interval",
        ])
        .prop_map(String::from),
        "[a-z-]{1,12}",
    ]
}

/// Every conversation suite, loaded once.
fn domains() -> &'static Vec<Box<dyn Domain>> {
    static DOMAINS: OnceLock<Vec<Box<dyn Domain>>> = OnceLock::new();
    DOMAINS.get_or_init(|| {
        passk::suites::AllSuites::load(&util::root())
            .expect("suites")
            .domains
    })
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn the_text_tool_call_parser_never_panics(text in call_text()) {
        let calls = bounded("text parser", || {
            passk::wire::tool_call::extract_text(&text, &known_tools())
        })?;
        prop_assert!(calls.len() <= text.len());
    }

    #[test]
    fn tool_argument_checking_never_panics(
        domain in 0..2usize,
        tool in any::<prop::sample::Index>(),
        name in "[a-z_]{0,12}",
        known in any::<bool>(),
        args in json(),
    ) {
        let d = &domains()[domain];
        let tools: Vec<String> = d
            .tools(passk::domain::ToolVariant::BARE)
            .iter()
            .filter_map(|t| t["function"]["name"].as_str().map(String::from))
            .collect();
        prop_assert!(!tools.is_empty(), "the suite offers tools");
        let tool = if known { tool.get(&tools).clone() } else { name };
        bounded("tool arguments", || {
            let mut env = d.new_environment();
            let _ = env.execute(&tool, &args);
            let _ = env.snapshot();
        })?;
    }

    #[test]
    fn the_record_loader_never_panics(
        outcomes in proptest::collection::vec(0..5usize, 0..5),
        edits in proptest::collection::vec(edit(), 0..3),
    ) {
        let all = [Outcome::Pass, Outcome::ModelFail, Outcome::TransportFail, Outcome::ProtocolFail, Outcome::ToolServerFail];
        let mut bytes: Vec<u8> = outcomes
            .iter()
            .enumerate()
            .flat_map(|(i, o)| record_line(if i % 3 == 2 { "x" } else { "m" }, (i % 2) as u32, all[*o]).into_bytes())
            .collect();
        for e in &edits {
            bytes = apply(bytes, e);
        }
        bounded("record loader", || {
            load_records(&bytes, &manifest());
            load_records(&bytes, &Manifest::default());
        })?;
    }

    #[test]
    fn the_experiment_file_loader_never_panics(
        lines in proptest::collection::vec((toml_key(), toml_value()), 0..6),
        noise in "\\PC{0,40}",
    ) {
        let text: String = lines.iter().map(|(k, v)| format!("{k} = {v}\n")).collect();
        bounded("experiment file", || {
            load_experiment_file(&text);
            load_experiment_file(&noise);
            load_experiment_file(&(text + &noise));
        })?;
    }
}
