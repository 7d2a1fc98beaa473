//! The whole analysis of one run as one serializable value ([`Summary`], written as
//! `summary.json`), and [`summarize`], which computes it from the records.

use crate::analysis::figures::behaviour::Behaviour;
use crate::analysis::figures::cost::{OUTPUT_WEIGHTS, break_even, per_success};
use crate::analysis::figures::factorial::Factorial;
use crate::analysis::figures::gpu::GpuSummary;
use crate::analysis::figures::latency::{LatencyFit, ServerSplit};
use crate::analysis::figures::placement::Placement;
use crate::analysis::figures::quality::{ControlFlow, FourState, Noise};
use crate::analysis::figures::router::{Pipeline, RouterSummary};
use crate::analysis::figures::server_process::ServerProcessSummary;
use crate::analysis::figures::shortfall::Shortfall;
use crate::analysis::figures::taxonomy::{CallBuckets, FailureModes, OutcomeCounts};
use crate::analysis::figures::tools_add::{ToolsAdd, toolless_key, tools_add};
use crate::analysis::intervals::bootstrap::{
    IdTotals, Interval, MessageBootstrap, TaskBootstrap, task_bootstrap, with_point,
};
use crate::analysis::intervals::interval;
pub use crate::analysis::pair::Pairing;
use crate::analysis::{AnalysisOptions, Rate};
use crate::domain::{PromptVariant, ToolVariant};
use crate::runner::record::{ConversationRecord, Manifest, Mode, TrialKey};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// Everything computed from one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Run id from the manifest.
    pub run_id: String,
    /// The suites the run played, in the order asked for: the first is the headline's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub suites: Vec<String>,
    /// What produced the run: passk, its commit, Ollama, the digests of models, suites, graders.
    #[serde(default)]
    pub provenance: crate::analysis::figures::provenance::Provenance,
    /// Backend that produced the records (`ollama`, `stub`, `imported`).
    pub backend: String,
    /// For imported runs: where the records came from.
    pub imported_from: Option<String>,
    /// Grader digest of the run.
    pub grader_digest: String,
    /// Settings the figures were computed with.
    pub settings: SummarySettings,
    /// Models in report order (see [`Pairing`]).
    pub models: Vec<String>,
    /// Which model is "small" and which "large" in every break-even.
    pub pairing: Option<Pairing>,
    /// The model of the ladder every other model is compared with, when the run has more than
    /// two models.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_model: Option<String>,
    /// Conversation results by configuration (suite, plus `/toolless` and `/cap=N` where needed).
    pub groups: BTreeMap<String, GroupSummary>,
    /// What tools add: per agent configuration that ran beside a toolless baseline, per model,
    /// the agent's success against the baseline's on the tasks both graded.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tools_add: BTreeMap<String, BTreeMap<String, ToolsAdd>>,
    /// Factor effects of a factorial run (tool docs x router in front), per suite; empty when
    /// the run held both fixed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub factorial: Vec<Factorial>,
    /// Standalone router results by model.
    pub router: BTreeMap<String, RouterSummary>,
    /// Router break-even between the paired models.
    pub router_comparison: Option<RouterComparison>,
    /// Servers and concurrency, when the run used several servers or played several
    /// conversations at once on one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<Placement>,
    /// The stopping rule's state, for a run played with `--stop-when-decided`: its pair, every
    /// round's confidence sequence and where the run stands. Its bootstrap intervals are then
    /// not valid after optional stopping; the sequence's are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopping: Option<crate::analysis::planning::stopping::Stopping>,
    /// Models partly offloaded to the CPU (flag them on every table).
    pub partly_on_cpu: Vec<String>,
    /// Those of them with nothing in VRAM (`size_vram` 0): wholly on the CPU.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub on_cpu: Vec<String>,
    /// Warnings carried over from the manifest.
    pub warnings: Vec<String>,
    /// Each configuration's model with fewer trials recorded than the run planned (an interrupted
    /// run); empty when every planned trial has a record, or the plan is not known.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub incomplete: Vec<Shortfall>,
}

/// The settings behind a summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SummarySettings {
    /// Output weight `w` of blended tokens.
    pub output_weight: f64,
    /// Price factor of the re-sent prefix in the cached re-pricing.
    pub cache_discount: f64,
    /// Bootstrap resamples.
    pub resamples: usize,
    /// Bootstrap seed.
    pub seed: u64,
    /// Documented example values searched for in tool arguments.
    pub example_values: Vec<String>,
    /// Tasks treated as needing no tools.
    pub toolless_tasks: BTreeSet<String>,
}

/// Results of one configuration (suite, mode, call cap).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroupSummary {
    /// Suite name.
    pub suite: String,
    /// Agent or toolless baseline.
    pub mode: Mode,
    /// Call cap, when the suite ran under several.
    pub call_cap: Option<u32>,
    /// Tool docs variant, when the run crossed several (the agent's cells of a factorial run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_docs: Option<ToolVariant>,
    /// Router in front, when the run crossed off and on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub router_in_front: Option<bool>,
    /// Prompt variant, when the run crossed several.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<PromptVariant>,
    /// Per model.
    pub models: BTreeMap<String, ModelSummary>,
    /// Small vs large, when both ran this configuration.
    pub comparison: Option<Comparison>,
    /// The ladder: every other model (as "small") against the reference model (as "large"),
    /// by model; empty unless the run has more than two models.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub ladder: BTreeMap<String, Comparison>,
}

impl GroupSummary {
    /// Whether a conversation (graded or not) was played in this configuration.
    pub fn holds(&self, c: &ConversationRecord) -> bool {
        self.holds_trial(Played {
            suite: &c.suite,
            mode: c.mode,
            call_cap: c.call_cap,
            tool_docs: c.tool_docs,
            router_in_front: c.router_in_front,
            prompt: c.prompt_variant(),
        })
    }

    /// Whether the trial with key `k` belongs to this configuration: [`GroupSummary::holds`] read
    /// from the key alone, which names every field it looks at.
    pub fn holds_key(&self, k: &TrialKey) -> bool {
        self.holds_trial(Played {
            suite: &k.suite,
            mode: k.mode,
            call_cap: k.call_cap,
            tool_docs: k.tool_docs,
            router_in_front: k.router_in_front,
            prompt: k.prompt.unwrap_or(PromptVariant::POLICY),
        })
    }

    fn holds_trial(&self, t: Played<'_>) -> bool {
        t.suite == self.suite
            && t.mode == self.mode
            && self.call_cap.is_none_or(|n| n == t.call_cap)
            && self.tool_docs.is_none_or(|v| Some(v) == t.tool_docs)
            && self.router_in_front.is_none_or(|r| r == t.router_in_front)
            && self.prompt.is_none_or(|p| p == t.prompt)
    }
}

/// The fields of a trial that place it in a configuration.
#[derive(Clone, Copy)]
struct Played<'a> {
    suite: &'a str,
    mode: Mode,
    call_cap: u32,
    tool_docs: Option<ToolVariant>,
    router_in_front: bool,
    prompt: PromptVariant,
}

/// One model's results in one configuration. Quality figures are over graded conversations;
/// `outcomes` says how many were excluded (transport, protocol) and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelSummary {
    /// How the conversations ended.
    pub outcomes: OutcomeCounts,
    /// The note printed beside every rate: `n = 118 of 120; 2 transport`.
    pub denominator_note: String,
    /// Distinct tasks with at least one graded trial.
    pub tasks: usize,
    /// Fewest graded trials of a task (pass^k goes up to it, and the headline pass^k is at it).
    pub trials_per_task: usize,
    /// Most graded trials of a task: when it differs from `trials_per_task`, the pooled success
    /// rate (passes / conversations) and pass^1 (mean over tasks) differ too.
    #[serde(default)]
    pub most_trials_per_task: usize,
    /// Passed conversations.
    pub passes: usize,
    /// passes / graded conversations.
    pub success_rate: Option<f64>,
    /// Unbiased pass^k, k = 1..trials_per_task.
    pub pass_hat_k: BTreeMap<usize, f64>,
    /// 95% interval of each pass^k over the model's tasks (metrics.md, "Intervals at the
    /// boundary").
    #[serde(default)]
    pub pass_hat_k_ci95: BTreeMap<usize, Interval>,
    /// 95% interval of the success rate, tasks as clusters (metrics.md, "Intervals at the
    /// boundary"): never `100%–100%` at 24/24.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub success_ci95: Option<Interval>,
    /// The success rate counting a pass only when every tool call it made came as a native call
    /// (calls read from text withheld), with its interval over the tasks as clusters: how much
    /// of the success rests on reading calls from text. Absent where some records do not say how
    /// their calls were written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub success_native_only: Option<Rate>,
    /// 95% intervals of the figures per successful task, tasks as clusters.
    #[serde(default)]
    pub per_success_ci95: PerSuccessCi,
    /// pass^k without text-call recovery: a pass counts only when every tool call it made came as
    /// Ollama's native `tool_calls` (what a harness reading only those would have seen pass; a
    /// lower bound, since the others count as failures without being replayed). Empty when some
    /// records do not say how their calls were written (imported run 1).
    #[serde(default)]
    pub pass_hat_k_native_only: BTreeMap<usize, f64>,
    /// Tasks whose every graded trial passed.
    pub tasks_passing_every_trial: usize,
    /// Success by task category.
    pub by_category: BTreeMap<String, CategorySummary>,
    /// Calls, rejected calls, identify-first and the like.
    pub behaviour: Behaviour,
    /// Tokens, blended and cached.
    pub tokens: Tokens,
    /// Latency and time per success.
    pub latency: Latency,
    /// Mean input tokens of the j-th orchestrator call (0-based), where at least 5 conversations
    /// reached it.
    pub context_growth: BTreeMap<usize, ContextPoint>,
    /// Buckets of every agent (orchestrator) model call (all conversations, failed ones
    /// included); router calls in front of the agent are in `router_calls`.
    pub calls: CallBuckets,
    /// Buckets of the router calls made in front of the agent, counted apart; absent when none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub router_calls: Option<CallBuckets>,
    /// Failure modes of failed conversations.
    pub failure_modes: FailureModes,
    /// Trajectory x answer table and steps per correct answer.
    pub four_state: FourState,
    /// Control-flow rates.
    pub control_flow: ControlFlow,
    /// Disagreement among trials of the same task.
    pub noise: Noise,
    /// GPU readings, when telemetry existed.
    pub gpu: Option<GpuSummary>,
    /// CPU and memory of the server process on this machine, when they were read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_process: Option<ServerProcessSummary>,
    /// Router calls in front of the agent, when it ran.
    pub pipeline: Option<Pipeline>,
    /// The model ran partly on the CPU.
    pub partly_on_cpu: bool,
}

/// Success in one task category.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CategorySummary {
    /// How the category's conversations ended (transport and protocol failures excluded).
    #[serde(default)]
    pub outcomes: OutcomeCounts,
    /// The note printed beside the category's rate: `n = 9 of 10; 1 transport`.
    #[serde(default)]
    pub denominator_note: String,
    /// Graded conversations.
    pub conversations: usize,
    /// Passes.
    pub passes: usize,
    /// passes / conversations.
    pub success_rate: Option<f64>,
    /// 95% bootstrap interval of the success rate, resampling the category's tasks.
    #[serde(default)]
    pub ci95: Option<Interval>,
}

/// Token figures of one model (orchestrator calls only; the pipeline adds the router).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tokens {
    /// Mean input tokens per conversation.
    pub input_per_conversation: Option<f64>,
    /// Mean output tokens per conversation.
    pub output_per_conversation: Option<f64>,
    /// Mean thinking tokens per conversation, part of the output ones (`None`: no call recorded
    /// any thinking).
    #[serde(default)]
    pub thinking_per_conversation: Option<f64>,
    /// Mean blended tokens per conversation.
    pub blended_per_conversation: Option<f64>,
    /// All blended tokens.
    pub blended_total: f64,
    /// All blended tokens with each call's re-sent prefix at the cache discount.
    pub cached_total: f64,
    /// Blended tokens per successful task (failures included in the numerator).
    pub blended_per_success: Option<f64>,
    /// Cached blended tokens per successful task.
    pub cached_blended_per_success: Option<f64>,
}

/// 95% intervals of one model's figures per successful task (metrics.md, "Per-success
/// intervals"): Fieller's interval of Σ cost / Σ passes over the tasks as clusters. Absent where
/// the figure is, or with fewer than two tasks; an upper end of `inf` where the passes are not
/// clearly above 0.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PerSuccessCi {
    /// Blended tokens per successful task (`tokens.blended_per_success`).
    pub tokens: Option<Interval>,
    /// Time per successful task, seconds (`latency.time_per_success_s`).
    pub time_s: Option<Interval>,
    /// Energy per successful task, joules (`gpu.energy_per_success_j`).
    pub energy_j: Option<Interval>,
}

/// Latency figures of one model (orchestrator calls; latency = wall - load_duration).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    /// Calls with a latency.
    pub calls: usize,
    /// Mean latency per call, seconds.
    pub per_call_mean_s: Option<f64>,
    /// Mean latency per conversation (sum of its calls), seconds.
    pub conversation_mean_s: Option<f64>,
    /// Median latency per conversation, seconds.
    pub conversation_p50_s: Option<f64>,
    /// 95th percentile latency per conversation, seconds.
    pub conversation_p95_s: Option<f64>,
    /// Total latency / passes, seconds: the graded conversations' calls, each at its final
    /// attempt (as the reference).
    pub time_per_success_s: Option<f64>,
    /// Every attempt's time / passes, seconds: failed attempts before a call's last (retries)
    /// and the conversations the infrastructure ended are included, since they cost time too.
    #[serde(default)]
    pub time_per_success_all_attempts_s: Option<f64>,
    /// Least-squares fit of call latency on output and input tokens.
    pub fit: Option<LatencyFit>,
    /// The server's own split into model time and overhead (summary.json's key predates
    /// other servers).
    #[serde(rename = "ollama_timing")]
    pub server_split: Option<ServerSplit>,
}

/// Context growth at one call position.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContextPoint {
    /// Mean input tokens of that call.
    pub mean_input_tokens: f64,
    /// Conversations that reached it.
    pub conversations: usize,
}

/// Small vs large in one configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// The small model.
    pub small: String,
    /// The large model.
    pub large: String,
    /// Large's success rate minus small's.
    pub success_rate_difference: Option<f64>,
    /// 95% interval of that gap over the tasks both ran: the rates' intervals combined with their
    /// correlation over the tasks (`interval::paired_gap`; metrics.md, "Intervals at the
    /// boundary"). `ci95.success_rate_difference` is the paired bootstrap's, as the reference's.
    #[serde(default)]
    pub success_rate_difference_ci95: Option<Interval>,
    /// Break-even price ratio (tokens per successful task, small / large).
    pub break_even: Option<f64>,
    /// Break-even with the re-sent prefix at the cache discount.
    pub break_even_cached: Option<f64>,
    /// Break-even of router + orchestrator, when the router ran in front for both.
    pub break_even_pipeline: Option<f64>,
    /// Break-even with output tokens weighted 1, 2, 4, 8.
    pub break_even_by_output_weight: BTreeMap<u32, Option<f64>>,
    /// Energy per successful task, small / large, when both have GPU energy.
    pub break_even_energy: Option<f64>,
    /// Paired task bootstrap 95% intervals.
    pub ci95: TaskBootstrap,
}

/// Small vs large on the standalone router.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RouterComparison {
    /// The small model.
    pub small: String,
    /// The large model.
    pub large: String,
    /// Break-even price ratio (blended tokens per correct call, small / large).
    pub break_even: Option<f64>,
    /// Paired message bootstrap 95% intervals.
    pub ci95: MessageBootstrap,
}

/// Every model with records in the group against the reference model.
pub(super) fn ladder(
    reference: Option<&String>,
    work: &BTreeMap<String, ModelWork>,
    opts: &AnalysisOptions,
) -> BTreeMap<String, Comparison> {
    let Some((r, rw)) = reference.and_then(|r| Some((r, work.get(r)?))) else {
        return BTreeMap::new();
    };
    work.iter()
        .filter(|(m, _)| *m != r)
        .map(|(m, w)| (m.clone(), comparison(m, r, w, rw, opts)))
        .collect()
}

/// Per-task totals of every configuration, per model: configuration key -> model -> task.
pub(super) type PerTask = BTreeMap<String, BTreeMap<String, BTreeMap<String, IdTotals>>>;

/// The server each trial was played on (records written before several servers: the manifest's).
pub(super) fn played_host<'a>(manifest: &'a Manifest, host: &'a Option<String>) -> &'a str {
    let fallback = manifest.server_host.as_deref().unwrap_or("unknown server");
    host.as_deref().unwrap_or(fallback)
}

/// hits / of; `None` when `of` is 0.
pub(super) fn rate(hits: usize, of: usize) -> Option<f64> {
    (of > 0).then(|| hits as f64 / of as f64)
}

/// One model in one configuration: the per-model figures and the bootstrap inputs.
pub(super) struct ModelWork {
    pub(super) summary: ModelSummary,
    pub(super) per_task: BTreeMap<String, IdTotals>,
    pub(super) by_weight: BTreeMap<u32, f64>,
    pub(super) has_pipeline: bool,
}

/// pass^k intervals of one model, k = 1..its fewest trials, each over the per-task values
/// C(c, k) / C(n, k) ([`interval::task_mean`], metrics.md "Intervals at the boundary").
pub(super) fn pass_hat_k_ci95(task_counts: &[(usize, usize)]) -> BTreeMap<usize, Interval> {
    let kmax = task_counts.iter().map(|t| t.0).min().unwrap_or(0);
    (1..=kmax)
        .filter_map(|k| {
            let values: Vec<f64> = task_counts
                .iter()
                .filter_map(|&(n, c)| crate::analysis::figures::passk::pass_hat_k_task(n, c, k))
                .collect();
            Some((k, interval::task_mean(&values)?))
        })
        .collect()
}

pub(super) fn comparison(
    small: &str,
    large: &str,
    a: &ModelWork,
    b: &ModelWork,
    opts: &AnalysisOptions,
) -> Comparison {
    let (sa, sb) = (&a.summary, &b.summary);
    let with_pipeline = a.has_pipeline && b.has_pipeline;
    let energy = |s: &ModelSummary| s.gpu.as_ref().and_then(|g| g.energy_per_success_j);
    let mut c = Comparison {
        small: small.to_string(),
        large: large.to_string(),
        success_rate_difference: match (sa.success_rate, sb.success_rate) {
            (Some(x), Some(y)) => Some(y - x),
            _ => None,
        },
        success_rate_difference_ci95: interval::paired_gap(&a.per_task, &b.per_task),
        break_even: break_even(sa.tokens.blended_per_success, sb.tokens.blended_per_success),
        break_even_cached: break_even(
            sa.tokens.cached_blended_per_success,
            sb.tokens.cached_blended_per_success,
        ),
        break_even_pipeline: if with_pipeline {
            break_even(
                sa.pipeline
                    .as_ref()
                    .and_then(|p| p.blended_tokens_per_success),
                sb.pipeline
                    .as_ref()
                    .and_then(|p| p.blended_tokens_per_success),
            )
        } else {
            None
        },
        break_even_by_output_weight: OUTPUT_WEIGHTS
            .iter()
            .map(|w| {
                let x = per_success(a.by_weight[w], sa.passes);
                let y = per_success(b.by_weight[w], sb.passes);
                (*w, break_even(x, y))
            })
            .collect(),
        break_even_energy: break_even(energy(sa), energy(sb)),
        ci95: task_bootstrap(
            &a.per_task,
            &b.per_task,
            with_pipeline,
            opts.resamples,
            opts.seed,
        ),
    };
    let ci = &mut c.ci95;
    ci.break_even = with_point(c.break_even, ci.break_even);
    ci.break_even_cached = with_point(c.break_even_cached, ci.break_even_cached);
    ci.break_even_pipeline = with_point(c.break_even_pipeline, ci.break_even_pipeline);
    c
}

/// Sort key of a conversation record: (suite, model, task, trial), then the rest of its identity.
pub(super) fn conversation_order(
    a: &ConversationRecord,
    b: &ConversationRecord,
) -> std::cmp::Ordering {
    (
        &a.suite,
        &a.model,
        &a.task,
        a.trial,
        a.call_cap,
        a.mode as u8,
        a.tool_docs,
        a.router_in_front,
        a.prompt,
    )
        .cmp(&(
            &b.suite,
            &b.model,
            &b.task,
            b.trial,
            b.call_cap,
            b.mode as u8,
            b.tool_docs,
            b.router_in_front,
            b.prompt,
        ))
}

/// What tools add in every agent configuration that ran beside its toolless baseline.
pub(super) fn tools_add_by_group(
    groups: &BTreeMap<String, GroupSummary>,
    per_task: &PerTask,
) -> BTreeMap<String, BTreeMap<String, ToolsAdd>> {
    let mut out = BTreeMap::new();
    for (key, g) in groups.iter().filter(|(_, g)| g.mode == Mode::Agent) {
        let (Some(agent), Some(toolless)) = (per_task.get(key), per_task.get(&toolless_key(key)))
        else {
            continue;
        };
        let models: BTreeMap<String, ToolsAdd> = g
            .models
            .keys()
            .filter_map(|m| {
                let t = tools_add(agent.get(m)?, toolless.get(m)?);
                Some((m.clone(), t))
            })
            .collect();
        if !models.is_empty() {
            out.insert(key.clone(), models);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::cells::summarize;
    use crate::analysis::fixtures::{conversation, timed_call};
    use crate::analysis::pair::{order_models, reference_model};
    use crate::runner::record::{Node, Outcome};
    use crate::wire::outcome::{Attempt, CallOutcome};

    fn attempt(outcome: CallOutcome, elapsed_ms: f64) -> Attempt {
        Attempt {
            outcome,
            status: None,
            error: None,
            elapsed_ms,
        }
    }

    #[test]
    fn every_model_is_compared_with_the_reference() {
        let (manifest, recs) = crate::analysis::fixtures::ladder_run();
        let opts = AnalysisOptions {
            resamples: 100,
            ..AnalysisOptions::default()
        };
        let s = summarize(&manifest, &recs, &[], &opts);
        // The largest by parameter size, whatever the manifest order.
        assert_eq!(s.reference_model.as_deref(), Some("m:14b"));
        let g = &s.groups["store"];
        assert_eq!(g.ladder.keys().collect::<Vec<_>>(), ["m:1b", "m:3b"]);
        let one = &g.ladder["m:1b"];
        // 1b passes 1 of 3, 14b passes 2 of 3 (model index 1 in the list): gap +1/3.
        assert!((one.success_rate_difference.unwrap() - 1.0 / 3.0).abs() < 1e-12);
        assert!(one.ci95.break_even.is_some());
        let asked = AnalysisOptions {
            reference_model: Some("m:3b".into()),
            ..opts
        };
        let s = summarize(&manifest, &recs, &[], &asked);
        assert_eq!(s.reference_model.as_deref(), Some("m:3b"));
        assert!(s.groups["store"].ladder.contains_key("m:14b"));
        assert_eq!(reference_model(&["a".into(), "b".into()], None), None);
    }

    #[test]
    fn equal_parameter_sizes_pair_in_manifest_order_and_the_rule_says_so() {
        let info = |name: &str, size: &str| crate::runner::record::ModelInfo {
            name: name.into(),
            parameter_size: Some(size.into()),
            ..Default::default()
        };
        let present: BTreeSet<String> = ["b", "a", "c"].map(String::from).into();
        let mut manifest = Manifest {
            models: vec![info("b", "1B"), info("a", "1B"), info("c", "0.5B")],
            ..Manifest::default()
        };
        let (models, pair) = order_models(&manifest, &present, None);
        assert_eq!(models, ["c", "b", "a"]);
        assert_eq!(pair.unwrap().rule, "first two models by parameter size");
        manifest.models[2] = info("c", "1B");
        let (models, pair) = order_models(&manifest, &present, None);
        assert_eq!(models, ["b", "a", "c"]);
        assert_eq!(
            pair.unwrap().rule,
            "first two models by parameter size, equal sizes in manifest order"
        );
        // A pair named with --pair wins over the rule, when both have records.
        let named = ("c".to_string(), "a".to_string());
        let pair = order_models(&manifest, &present, Some(&named)).1.unwrap();
        assert_eq!((pair.small.as_str(), pair.large.as_str()), ("c", "a"));
        assert_eq!(pair.rule, crate::analysis::pair::NAMED);
        let absent = ("c".to_string(), "z".to_string());
        let pair = order_models(&manifest, &present, Some(&absent)).1.unwrap();
        assert_eq!(pair.small, "b");
    }

    #[test]
    fn pass_hat_k_and_categories_carry_intervals() {
        let mut recs = Vec::new();
        for (task, passed) in [("T1", true), ("T2", false)] {
            for trial in 0..2 {
                recs.push(conversation(
                    "m",
                    task,
                    trial,
                    passed,
                    vec![timed_call(1, 1, 1.0)],
                ));
            }
        }
        let opts = AnalysisOptions {
            resamples: 200,
            ..AnalysisOptions::default()
        };
        let s = summarize(&Manifest::default(), &recs, &[], &opts);
        let m = &s.groups["store"].models["m"];
        assert_eq!(
            m.pass_hat_k_ci95.keys().copied().collect::<Vec<_>>(),
            [1, 2]
        );
        // One task of two passing: no narrower than the tasks as the observations, 1 of 2.
        let half = crate::analysis::intervals::interval::exact(1.0, 2.0);
        let i = m.pass_hat_k_ci95[&2];
        assert!(i.low <= half.low && i.high >= half.high, "{i:?}");
        let c = m.by_category["lookup"].ci95.expect("category interval");
        assert!(c.low < 0.05 && c.high > 0.95, "{c:?}");
        assert_eq!(m.success_ci95, Some(c));
    }

    #[test]
    fn router_calls_are_counted_apart_and_failed_attempts_cost_time() {
        let mut router = timed_call(100, 1, 0.2);
        router.node = Node::Router;
        router.attempts = Box::new([
            attempt(CallOutcome::Transport, 300.0),
            attempt(CallOutcome::Ok, 200.0),
        ]);
        let mut agent = timed_call(10, 1, 1.0);
        agent.attempts = Box::new([
            attempt(CallOutcome::Transport, 500.0),
            attempt(CallOutcome::Ok, 1000.0),
        ]);
        let mut passed = conversation("m", "T1", 0, true, vec![router, agent]);
        passed.router_in_front = true;
        let mut cut = conversation("m", "T1", 1, false, vec![timed_call(10, 1, 2.0)]);
        cut.router_in_front = true;
        cut.outcome = Outcome::TransportFail;
        let s = summarize(
            &Manifest::default(),
            &[passed, cut],
            &[],
            &AnalysisOptions::default(),
        );
        let m = &s.groups["store"].models["m"];
        // Agent calls of every conversation; the router's call and retry apart.
        assert_eq!((m.calls.calls, m.calls.retries), (2, 1));
        let r = m.router_calls.as_ref().expect("router buckets");
        assert_eq!((r.calls, r.retries), (1, 1));
        // Final attempts of graded conversations: 1.0 s; every attempt: + 0.5 s retry + 2.0 s of
        // the conversation the transport ended.
        assert_eq!(m.latency.time_per_success_s, Some(1.0));
        assert_eq!(m.latency.time_per_success_all_attempts_s, Some(3.5));
    }
}
