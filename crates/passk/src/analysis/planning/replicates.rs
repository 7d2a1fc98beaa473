//! Simulated replicates of one configuration, for measuring the false-positive rate of `passk
//! compare`'s "measurable" rule (the `measurable_rule` bench and a unit test of `compare`): per
//! task a fixed pass probability and cost profile, per trial a fresh draw, and per run an overall
//! speed (every call's time scaled by one factor, 0.85 to 1.15, as a machine's speed drifts between
//! runs played at different times). Runs drawn from one [`Configuration`] differ by chance only, so
//! every metric called measurable between two of them is a false positive.

use crate::analysis::Run;
use crate::analysis::comparisons::compare::{RunComparison, compare, compare_with_noise};
use crate::analysis::intervals::mt19937::PyRandom;
use crate::analysis::{AnalysisOptions, fixtures};
use crate::runner::record::Timings;
use crate::runner::record::{CallRecord, ConversationRecord, Manifest, Node};
use serde_json::json;

/// Tasks of a simulated run.
pub const TASKS: usize = 24;
/// Trials per task.
pub const TRIALS: u32 = 5;

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

/// One simulated configuration: a model's profile on every task.
pub struct Configuration(Vec<TaskProfile>);

impl Configuration {
    /// A configuration of [`TASKS`] tasks drawn from `rng` (pass probability 0.1 to 0.9).
    pub fn draw(rng: &mut PyRandom) -> Configuration {
        Configuration(
            (0..TASKS)
                .map(|_| TaskProfile {
                    pass: 0.1 + 0.8 * uniform(rng),
                    calls: 2.0 + 4.0 * uniform(rng),
                    tokens: 800.0 + 1200.0 * uniform(rng),
                    seconds: 0.3 + 0.7 * uniform(rng),
                })
                .collect(),
        )
    }

    /// One run of the configuration ([`TRIALS`] trials per task) with base seed `seed`.
    pub fn run(&self, rng: &mut PyRandom, seed: u32) -> Run {
        let speed = 0.85 + 0.3 * uniform(rng);
        let conversations = self
            .0
            .iter()
            .enumerate()
            .flat_map(|(t, p)| (0..TRIALS).map(move |k| (t, k, p)))
            .map(|(t, k, p)| conversation(rng, t, k, p, speed))
            .collect();
        let manifest = Manifest {
            run_id: format!("sim-{seed}"),
            grader_digest: "sim".into(),
            settings: json!({"base_seed": seed, "trials": TRIALS}),
            ..Manifest::default()
        };
        Run::of_records("sim".into(), manifest, conversations, vec![])
    }
}

fn conversation(
    rng: &mut PyRandom,
    task: usize,
    trial: u32,
    p: &TaskProfile,
    speed: f64,
) -> ConversationRecord {
    let passed = uniform(rng) < p.pass;
    let n_calls = (p.calls * (0.5 + uniform(rng))).round().max(1.0) as u32;
    let calls = (0..n_calls)
        .map(|i| {
            let mut c = CallRecord::new(Node::Orchestrator, 0, i);
            c.wall_s = Some(speed * p.seconds * (0.7 + 0.6 * uniform(rng))).into();
            c.timings = Timings {
                prompt_eval_count: Some((p.tokens * (0.8 + 0.4 * uniform(rng))) as u64).into(),
                eval_count: Some((30.0 + 40.0 * uniform(rng)) as u64).into(),
                ..Timings::default()
            };
            c
        })
        .collect();
    let event = |tool: &str, ok: bool| fixtures::event(tool, json!({}), ok);
    let mut tool_events = Vec::new();
    if uniform(rng) < 0.8 {
        tool_events.push(event("find_customer", true));
    }
    tool_events.push(event("get_order", uniform(rng) < 0.85));
    let mut c = fixtures::conversation("m", &format!("T{task:02}"), trial, passed, calls);
    c.grader_digest = "sim".into();
    c.tool_events = tool_events;
    c.replies = vec![];
    c
}

/// One simulated comparison of replicates: `passk compare A B`, and with `--noise A′`.
pub struct ReplicateComparison {
    /// Without a noise run.
    pub plain: RunComparison,
    /// With the third replicate as the noise run.
    pub with_noise: RunComparison,
}

/// `sims` comparisons of three replicates (A, B and the noise run A′) of a fresh configuration
/// each, drawn from a generator started at `seed`.
pub fn comparisons(sims: usize, seed: u64, opts: &AnalysisOptions) -> Vec<ReplicateComparison> {
    let mut rng = PyRandom::new(seed);
    (0..sims)
        .map(|_| {
            let config = Configuration::draw(&mut rng);
            let (a, b, again) = (
                config.run(&mut rng, 0),
                config.run(&mut rng, 1),
                config.run(&mut rng, 2),
            );
            ReplicateComparison {
                plain: compare(&a, &b, opts, false).expect("same graders"),
                with_noise: compare_with_noise(&a, &b, Some(&again), opts, false)
                    .expect("a second run of A's configuration"),
            }
        })
        .collect()
}

/// (metrics called measurable, metrics judged) of `c` under `rule`.
pub fn verdicts(
    c: &RunComparison,
    rule: impl Fn(&crate::analysis::comparisons::compare::MetricPair) -> Option<bool>,
) -> (usize, usize) {
    c.groups
        .values()
        .flat_map(|m| m.values())
        .flat_map(|m| m.metrics.iter())
        .filter_map(rule)
        .fold((0, 0), |(y, n), v| (y + usize::from(v), n + 1))
}
