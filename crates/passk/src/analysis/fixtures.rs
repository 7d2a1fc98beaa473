//! Small hand-built records shared by the analysis unit tests, the report tests and the benches.

use crate::runner::record::Timings;
use crate::runner::record::{
    CallRecord, ConversationRecord, Manifest, Mode, ModelInfo, Node, Outcome, RouterRecord,
    SCHEMA_VERSION, Status,
};
use crate::trace::{ToolEvent, Verdict};
use serde_json::{Value, json};

/// An ok orchestrator call with these token counts and no timings.
pub fn call(input: u64, output: u64) -> CallRecord {
    let mut call = CallRecord::new(Node::Orchestrator, 0, 0);
    call.timings = Timings {
        prompt_eval_count: Some(input).into(),
        eval_count: Some(output).into(),
        ..Timings::default()
    };
    call
}

/// A call with a wall time (seconds) as well.
pub fn timed_call(input: u64, output: u64, wall_s: f64) -> CallRecord {
    CallRecord {
        wall_s: Some(wall_s).into(),
        ..call(input, output)
    }
}

/// A tool event.
pub fn event(tool: &str, args: Value, ok: bool) -> ToolEvent {
    ToolEvent {
        turn: 0,
        step: 0,
        tool: tool.into(),
        args,
        ok,
        error: (!ok).then(|| "error".to_string()),
        format: None,
    }
}

/// A graded conversation of the store suite.
pub fn conversation(
    model: &str,
    task: &str,
    trial: u32,
    passed: bool,
    calls: Vec<CallRecord>,
) -> ConversationRecord {
    ConversationRecord {
        schema_version: 1,
        grader_digest: "g".into(),
        suite: "store".into(),
        task: task.into(),
        category: "lookup".into(),
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
        outcome: if passed {
            Outcome::Pass
        } else {
            Outcome::ModelFail
        },
        calls,
        tool_events: vec![],
        replies: vec![Some("done".into())],
        transcript: vec![],
        end_state: json!({}).into(),
        verdict: Verdict {
            passed,
            ..Verdict::default()
        },
        wall_s: 1.0,
        imported: false,
        server_unreachable: false,
        host: None,
        parallel: None,
    }
}

/// Three models of known sizes (listed 1B, 14B, 3B), the i-th passing i + 1 of the tasks T0..T2.
pub fn ladder_run() -> (Manifest, Vec<ConversationRecord>) {
    let sizes = [("m:1b", "1B"), ("m:14b", "14B"), ("m:3b", "3B")];
    let manifest = Manifest {
        models: sizes
            .iter()
            .map(|(n, p)| ModelInfo {
                name: n.to_string(),
                parameter_size: Some(p.to_string()),
                ..Default::default()
            })
            .collect(),
        ..Manifest::default()
    };
    let mut recs = Vec::new();
    for (i, (model, _)) in sizes.iter().enumerate() {
        for t in 0..3 {
            let c = conversation(
                model,
                &format!("T{t}"),
                0,
                t <= i,
                vec![timed_call(10, 1, 1.0)],
            );
            recs.push(c);
        }
    }
    (manifest, recs)
}

/// Every cell of tool docs (bare, documented) x router in front (off, on) for each of `models`,
/// four tasks `T0`..`T3`, two trials each: `pass(model, docs, router, task)` decides the verdict.
pub fn factorial_records(
    models: &[&str],
    pass: impl Fn(&str, crate::domain::ToolVariant, bool, usize) -> bool,
) -> Vec<ConversationRecord> {
    use crate::domain::ToolVariant;
    let mut out = Vec::new();
    for model in models {
        for docs in [ToolVariant::BARE, ToolVariant::DOCUMENTED] {
            for router in [false, true] {
                for task in 0..4 {
                    for trial in 0..2 {
                        let id = format!("T{task}");
                        let passed = pass(model, docs, router, task);
                        let mut c = conversation(model, &id, trial, passed, vec![call(1, 1)]);
                        c.tool_docs = Some(docs);
                        c.router_in_front = router;
                        out.push(c);
                    }
                }
            }
        }
    }
    out
}

/// A graded standalone router call of `model` on message `index` (label `a`), 100 + 2 tokens.
pub fn router_record(
    model: &str,
    index: u32,
    correct: bool,
    predicted: Option<&str>,
) -> RouterRecord {
    RouterRecord {
        schema_version: SCHEMA_VERSION,
        grader_digest: "g".into(),
        model: model.into(),
        api: crate::wire::chat::ApiKind::Ollama,
        index,
        trial: 0,
        label: "a".into(),
        predicted: predicted.map(String::from),
        correct,
        raw: String::new(),
        temperature: Some(0.0),
        outcome: if correct {
            Outcome::Pass
        } else {
            Outcome::ModelFail
        },
        call: timed_call(100, 2, 0.1),
        imported: false,
        server_unreachable: false,
        host: None,
        parallel: None,
    }
}

/// A run with a factorial suite (three models of known sizes), a second suite under two call
/// caps, some conversations ended on the wire, two servers at three concurrencies and standalone
/// router calls: every part of a summary that reads records in sequence has something to read.
pub fn varied_run() -> (Manifest, Vec<ConversationRecord>, Vec<RouterRecord>) {
    let (manifest, _) = ladder_run();
    let models = ["m:1b", "m:14b", "m:3b"];
    let mut convs = factorial_records(&models, |m, _, router, task| {
        (m.len() + task + usize::from(router)) % 3 != 0
    });
    for (i, c) in convs.iter_mut().enumerate() {
        c.calls = vec![timed_call(10 + i as u64, 2, 0.1 * (i % 7) as f64)];
        c.host = Some(format!("http://h{}", i % 2));
        c.parallel = Some(1 + (i % 3) as u32);
        if i % 11 == 0 {
            c.outcome = Outcome::TransportFail;
        }
    }
    for (i, model) in models.iter().enumerate() {
        for cap in [2, 8] {
            for task in 0..3 {
                let mut c = conversation(
                    model,
                    &format!("S{task}"),
                    0,
                    (task + i) % 2 == 0,
                    vec![timed_call(5, 1, 0.5)],
                );
                c.suite = "second".into();
                c.call_cap = cap;
                convs.push(c);
            }
        }
    }
    let router: Vec<RouterRecord> = (0..12)
        .map(|i| router_record(models[i % 3], i as u32 / 3, i % 4 != 0, Some("a")))
        .collect();
    (manifest, convs, router)
}
