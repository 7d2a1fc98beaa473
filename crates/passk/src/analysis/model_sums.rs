//! One model's figures in one configuration, kept as running totals: each conversation record is
//! added once, in the summary's order, and then dropped, so what is held grows with the tasks
//! and a few numbers per call rather than with the records (docs/decisions.md, "What the
//! statistics keep of each record"). Every figure is the one the whole records would give, to
//! the last bit: sums add in the same order, and what needs every value (a percentile, the
//! latency fit) keeps the values.

use crate::analysis::figures::behaviour::BehaviourSums;
use crate::analysis::figures::gpu::GpuSums;
use crate::analysis::figures::passk::{pass_hat_k, tasks_passing_every_trial};
use crate::analysis::figures::quality::{ControlFlowSums, FourStateSums, noise};
use crate::analysis::figures::router::PipelineSums;
use crate::analysis::figures::server_process::ServerProcessSums;
use crate::analysis::figures::taxonomy::{CallBuckets, FailureModes, OutcomeCounts};
use crate::analysis::intervals::bootstrap::IdTotals;
use crate::analysis::intervals::{interval, ratio};
use crate::analysis::summary::{
    CategorySummary, ModelSummary, ModelWork, PerSuccessCi, pass_hat_k_ci95, rate,
};
use crate::analysis::tally::{Tally, every_attempt_s};
use crate::analysis::{AnalysisOptions, Rate, entry};
use crate::runner::record::ConversationRecord;
use std::collections::BTreeMap;

/// Running totals of one model's conversations in one configuration.
pub(super) struct ModelSums<'a> {
    opts: &'a AnalysisOptions,
    /// How every conversation ended.
    outcomes: OutcomeCounts,
    /// Graded conversations that passed.
    passes: usize,
    /// Over the graded conversations.
    tally: Tally,
    categories: CategorySums,
    behaviour: BehaviourSums,
    failure_modes: FailureModes,
    four_state: FourStateSums,
    control_flow: ControlFlowSums,
    gpu: GpuSums,
    server_process: ServerProcessSums,
    pipeline: PipelineSums,
    /// Over every conversation: the agent's time counting every attempt (a sum from -0.0, as
    /// `Iterator::sum`), and the buckets of its calls and of the router calls in front of it.
    every_attempt_s: f64,
    calls: CallBuckets,
    router_calls: Option<CallBuckets>,
}

impl<'a> ModelSums<'a> {
    /// Nothing added yet.
    pub(super) fn new(opts: &'a AnalysisOptions) -> Self {
        ModelSums {
            opts,
            outcomes: OutcomeCounts::default(),
            passes: 0,
            tally: Tally::new(),
            categories: CategorySums::default(),
            behaviour: BehaviourSums::default(),
            failure_modes: FailureModes::default(),
            four_state: FourStateSums::default(),
            control_flow: ControlFlowSums::default(),
            gpu: GpuSums::default(),
            server_process: ServerProcessSums::default(),
            pipeline: PipelineSums::default(),
            every_attempt_s: -0.0,
            calls: CallBuckets::default(),
            router_calls: None,
        }
    }

    /// Adds one conversation; conversations come in the summary's order (task, then trial).
    pub(super) fn add(&mut self, c: &ConversationRecord) {
        self.outcomes.add(c.outcome);
        self.categories.add(c);
        for x in every_attempt_s(c) {
            self.every_attempt_s += x;
        }
        c.orchestrator_calls().for_each(|x| self.calls.add(x));
        for x in c.router_calls() {
            self.router_calls.get_or_insert_default().add(x);
        }
        if !c.outcome.is_graded() {
            return;
        }
        self.passes += usize::from(c.verdict.passed);
        let opts = self.opts;
        self.tally.add(c, opts.output_weight);
        self.behaviour
            .add(c, &opts.example_values, opts.examples_shown.as_ref());
        self.failure_modes.add(c);
        self.four_state.add(c, &opts.toolless_tasks);
        self.control_flow.add(c);
        for x in c.orchestrator_calls() {
            self.gpu.add(x);
            self.server_process.add(x);
        }
        self.pipeline.add(c, opts.output_weight);
    }

    /// The model's figures and what the pair's comparison and the bootstraps read.
    pub(super) fn finish(self, partly_on_cpu: bool) -> ModelWork {
        let tally = self.tally;
        let (graded, passes) = (self.outcomes.graded, self.passes);
        let task_counts = tally.task_counts();
        let mut summary = ModelSummary {
            denominator_note: self.outcomes.denominator_note(),
            outcomes: self.outcomes,
            tasks: tally.tasks.len(),
            trials_per_task: task_counts.iter().map(|t| t.0).min().unwrap_or(0),
            most_trials_per_task: task_counts.iter().map(|t| t.0).max().unwrap_or(0),
            passes,
            success_rate: rate(passes, graded),
            pass_hat_k: pass_hat_k(&task_counts),
            pass_hat_k_ci95: pass_hat_k_ci95(&task_counts),
            success_ci95: interval::success_rate(&task_counts),
            per_success_ci95: PerSuccessCi::default(),
            success_native_only: if tally.formats_known {
                Rate::over_tasks(&tally.native_only)
            } else {
                None
            },
            pass_hat_k_native_only: if tally.formats_known {
                pass_hat_k(&tally.native_only.values().copied().collect::<Vec<_>>())
            } else {
                BTreeMap::new()
            },
            tasks_passing_every_trial: tasks_passing_every_trial(&task_counts),
            by_category: self.categories.finish(),
            behaviour: self.behaviour.finish(),
            tokens: tally.tokens(graded, passes),
            latency: tally.latency(self.every_attempt_s, passes),
            context_growth: tally.context_growth(),
            calls: self.calls,
            router_calls: self.router_calls,
            failure_modes: self.failure_modes,
            four_state: self.four_state.finish(),
            control_flow: self.control_flow.finish(),
            noise: noise(&tally.tasks),
            gpu: self.gpu.finish(passes),
            server_process: self.server_process.finish(),
            pipeline: self
                .pipeline
                .finish(tally.blended, tally.total_latency(), passes),
            partly_on_cpu,
        };
        summary.per_success_ci95 = per_success_ci95(&summary, &tally.per_task);
        let has_pipeline = summary.pipeline.is_some();
        ModelWork {
            summary,
            per_task: tally.per_task,
            by_weight: tally.by_weight,
            has_pipeline,
        }
    }
}

/// Each figure per successful task's interval, where the figure itself is defined.
fn per_success_ci95(s: &ModelSummary, per_task: &BTreeMap<String, IdTotals>) -> PerSuccessCi {
    let of = |figure: Option<f64>, cost: fn(&IdTotals) -> f64| {
        figure?;
        let tasks: Vec<(f64, f64)> = per_task.values().map(|t| (cost(t), t.passes)).collect();
        ratio::per_success(&tasks)
    };
    PerSuccessCi {
        tokens: of(s.tokens.blended_per_success, |t| t.tokens),
        time_s: of(s.latency.time_per_success_s, |t| t.seconds),
        energy_j: of(s.gpu.as_ref().and_then(|g| g.energy_per_success_j), |t| {
            t.joules
        }),
    }
}

/// Success by category as running totals: each category's outcomes count every conversation
/// (graded or not), so its rate carries its own denominator note; its interval takes the
/// category's tasks as clusters.
#[derive(Debug, Default)]
struct CategorySums {
    outcomes: BTreeMap<String, OutcomeCounts>,
    /// Per category, per task: (graded trials, passes).
    tasks: BTreeMap<String, BTreeMap<String, (usize, usize)>>,
}

impl CategorySums {
    fn add(&mut self, c: &ConversationRecord) {
        entry(&mut self.outcomes, &c.category).add(c.outcome);
        if c.outcome.is_graded() {
            let t = entry(entry(&mut self.tasks, &c.category), &c.task);
            t.0 += 1;
            t.1 += usize::from(c.verdict.passed);
        }
    }

    fn finish(mut self) -> BTreeMap<String, CategorySummary> {
        self.outcomes
            .into_iter()
            .map(|(k, outcomes)| {
                let counts: Vec<(usize, usize)> = self
                    .tasks
                    .remove(&k)
                    .map(|t| t.into_values().collect())
                    .unwrap_or_default();
                let s = CategorySummary {
                    conversations: outcomes.graded,
                    passes: outcomes.pass,
                    success_rate: rate(outcomes.pass, outcomes.graded),
                    ci95: interval::success_rate(&counts),
                    denominator_note: outcomes.denominator_note(),
                    outcomes,
                };
                (k, s)
            })
            .collect()
    }
}
