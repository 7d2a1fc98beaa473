//! False-positive rate of `passk compare`'s "measurable" rule, by simulation. Three runs of one
//! configuration are drawn from the same model of a run (A, B, and A′ as the noise run): per task a
//! fixed pass probability and cost profile, per trial a fresh draw. Since nothing differs, every
//! metric called "measurable" is a false positive. The rule is run through `compare_with_noise`
//! itself, with and without the noise run, and the share of metrics called measurable is printed.
//! docs/metrics.md quotes the figures ("Comparing two runs").
//!
//! Run with `cargo bench --bench measurable_rule` (optionally followed by the number of simulated
//! comparisons, default 200).

use passk::analysis::compare::{MetricPair, compare, compare_with_noise};
use passk::analysis::mt19937::PyRandom;
use passk::analysis::{AnalysisOptions, Run};
use passk::runner::record::{
    CallRecord, ConversationRecord, Manifest, Mode, Node, Outcome, Status,
};
use passk::trace::{ToolEvent, Verdict};
use passk::wire::api::Timings;
use serde_json::json;

const TASKS: usize = 24;
const TRIALS: u32 = 5;

/// A uniform draw in [0, 1).
fn uniform(rng: &mut PyRandom) -> f64 {
    f64::from(rng.next_u32()) / 4_294_967_296.0
}

/// What a task is like for the simulated model: fixed across runs.
struct TaskProfile {
    pass: f64,
    calls: f64,
    tokens: f64,
    seconds: f64,
}

fn profiles(rng: &mut PyRandom) -> Vec<TaskProfile> {
    (0..TASKS)
        .map(|_| TaskProfile {
            pass: 0.1 + 0.8 * uniform(rng),
            calls: 2.0 + 4.0 * uniform(rng),
            tokens: 800.0 + 1200.0 * uniform(rng),
            seconds: 0.3 + 0.7 * uniform(rng),
        })
        .collect()
}

fn conversation(
    rng: &mut PyRandom,
    task: usize,
    trial: u32,
    p: &TaskProfile,
) -> ConversationRecord {
    let passed = uniform(rng) < p.pass;
    let n_calls = (p.calls * (0.5 + uniform(rng))).round().max(1.0) as u32;
    let calls = (0..n_calls)
        .map(|i| {
            let mut c = CallRecord::new(Node::Orchestrator, 0, i);
            c.wall_s = Some(p.seconds * (0.7 + 0.6 * uniform(rng)));
            c.timings = Timings {
                prompt_eval_count: Some((p.tokens * (0.8 + 0.4 * uniform(rng))) as u64),
                eval_count: Some((30.0 + 40.0 * uniform(rng)) as u64),
                ..Timings::default()
            };
            c
        })
        .collect();
    let event = |tool: &str, ok: bool| ToolEvent {
        turn: 0,
        step: 0,
        tool: tool.into(),
        args: json!({}),
        ok,
        error: None,
        format: None,
    };
    let mut tool_events = Vec::new();
    if uniform(rng) < 0.8 {
        tool_events.push(event("find_customer", true));
    }
    tool_events.push(event("get_order", uniform(rng) < 0.85));
    ConversationRecord {
        schema_version: 1,
        grader_digest: "sim".into(),
        suite: "store".into(),
        task: format!("T{task:02}"),
        category: "lookup".into(),
        model: "m".into(),
        trial,
        call_cap: 8,
        mode: Mode::Agent,
        router_in_front: false,
        tool_docs: None,
        status: Status::Ok,
        outcome: if passed {
            Outcome::Pass
        } else {
            Outcome::ModelFail
        },
        calls,
        tool_events,
        replies: vec![],
        transcript: vec![],
        end_state: json!({}),
        verdict: Verdict {
            passed,
            ..Verdict::default()
        },
        wall_s: 1.0,
        imported: false,
        server_unreachable: false,
    }
}

/// One run of the configuration with base seed `seed`.
fn run(rng: &mut PyRandom, tasks: &[TaskProfile], seed: u32) -> Run {
    let conversations = tasks
        .iter()
        .enumerate()
        .flat_map(|(t, p)| (0..TRIALS).map(move |k| (t, k, p)))
        .map(|(t, k, p)| conversation(rng, t, k, p))
        .collect();
    Run {
        dir: "sim".into(),
        manifest: Manifest {
            run_id: format!("sim-{seed}"),
            grader_digest: "sim".into(),
            settings: json!({"base_seed": seed, "trials": TRIALS}),
            ..Manifest::default()
        },
        conversations,
        router: vec![],
        torn_lines: 0,
        superseded: 0,
    }
}

/// (metrics called measurable, metrics judged) of one comparison under `rule`.
fn count(
    c: &passk::analysis::RunComparison,
    rule: impl Fn(&MetricPair) -> Option<bool>,
) -> (usize, usize) {
    let verdicts = c
        .groups
        .values()
        .flat_map(|m| m.values())
        .flat_map(|m| m.metrics.iter())
        .filter_map(rule);
    verdicts.fold((0, 0), |(y, n), v| (y + usize::from(v), n + 1))
}

/// The rule passk used before: |B − A| beyond the noise band alone.
fn beyond_band(p: &MetricPair) -> Option<bool> {
    Some((p.b? - p.a?).abs() > p.noise_band?)
}

fn add(total: &mut (usize, usize), (y, n): (usize, usize)) {
    total.0 += y;
    total.1 += n;
}

fn main() {
    let sims: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(200);
    let opts = AnalysisOptions {
        resamples: 2_000,
        ..AnalysisOptions::default()
    };
    let mut rng = PyRandom::new(11);
    let (mut with_noise, mut interval_only, mut band_only) = ((0, 0), (0, 0), (0, 0));
    for _ in 0..sims {
        let tasks = profiles(&mut rng);
        let a = run(&mut rng, &tasks, 0);
        let b = run(&mut rng, &tasks, 1);
        let again = run(&mut rng, &tasks, 2);
        let c = compare_with_noise(&a, &b, Some(&again), &opts, false).expect("same graders");
        add(&mut with_noise, count(&c, |p| p.measurable));
        add(&mut band_only, count(&c, beyond_band));
        let c = compare(&a, &b, &opts, false).expect("same graders");
        add(&mut interval_only, count(&c, |p| p.measurable));
    }
    let share = |(y, n): (usize, usize)| 100.0 * y as f64 / n.max(1) as f64;
    println!(
        "{sims} comparisons of replicates ({TASKS} tasks x {TRIALS} trials, {} resamples):",
        opts.resamples
    );
    println!(
        "  beyond the band alone (old rule):    {} of {} metric verdicts measurable ({:.1}%)",
        band_only.0,
        band_only.1,
        share(band_only)
    );
    println!(
        "  interval excludes 0:                 {} of {} metric verdicts measurable ({:.1}%)",
        interval_only.0,
        interval_only.1,
        share(interval_only)
    );
    println!(
        "  interval excludes 0 and beyond band: {} of {} metric verdicts measurable ({:.1}%)",
        with_noise.0,
        with_noise.1,
        share(with_noise)
    );
}
