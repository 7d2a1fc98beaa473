//! The summary made one cell at a time, a cell given whole or a task at a time. A cell is one
//! suite's model: every conversation record of that suite and model. Records sort by (suite,
//! model, task, trial, ...) before anything is computed, so a cell is an unbroken stretch of that
//! order and a task an unbroken stretch of a cell, and what reads records in sequence (a model's
//! running totals, the placement's sums, the stopping rule's verdicts) reads the same values fed
//! task after task. Only a configuration's own figures read its records, as running totals
//! (`ModelSums`); the pair's comparison, the ladder and the bootstraps read what a cell leaves
//! behind (per-task totals), so a reader need hold one task's records at a time
//! (docs/decisions.md, "What the statistics keep of each record").
//!
//! [`summarize`] is this builder fed from records held in memory; a reader of a
//! large run feeds it from disk.

use crate::analysis::AnalysisOptions;
use crate::analysis::figures::cost::{CACHE_DISCOUNT, break_even};
use crate::analysis::figures::factorial::FactorialSums;
use crate::analysis::figures::placement::{Placement, PlacementSums, PlayedTrial, is_notable_play};
use crate::analysis::figures::router::{RouterSummary, RouterSums};
use crate::analysis::intervals::bootstrap::{IdTotals, message_bootstrap, with_point};
use crate::analysis::intervals::interval;
use crate::analysis::model_sums::ModelSums;
use crate::analysis::pair::{order_models, reference_model};
use crate::analysis::planning::stopping::StoppingSums;
use crate::analysis::summary::{
    GroupSummary, ModelWork, RouterComparison, Summary, SummarySettings, comparison,
    conversation_order, ladder, played_host, tools_add_by_group,
};
use crate::domain::{PromptVariant, ToolVariant};
use crate::runner::record::{ConversationRecord, Manifest, Mode, RouterRecord};
use std::collections::{BTreeMap, BTreeSet};

/// What a configuration's key depends on across the whole run, read from every trial before any
/// cell: the call caps of each suite, the tool docs, router and prompt levels of the agent's
/// trials, and whether the trials ran on more than one server or beside one another.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Shape {
    caps: BTreeMap<String, BTreeSet<u32>>,
    docs: BTreeSet<Option<ToolVariant>>,
    routers: BTreeSet<bool>,
    prompts: BTreeSet<PromptVariant>,
    first_host: Option<String>,
    notable_play: bool,
}

impl Shape {
    /// The shape of these records.
    pub fn of<'a>(
        manifest: &Manifest,
        conversations: impl IntoIterator<Item = &'a ConversationRecord>,
        router: impl IntoIterator<Item = &'a RouterRecord>,
    ) -> Shape {
        let mut shape = Shape::default();
        for c in conversations {
            shape.add_conversation(manifest, c);
        }
        for r in router {
            shape.add_router(manifest, r);
        }
        shape
    }

    /// Adds a conversation record.
    pub fn add_conversation(&mut self, manifest: &Manifest, c: &ConversationRecord) {
        self.caps
            .entry(c.suite.clone())
            .or_default()
            .insert(c.call_cap);
        if c.mode == Mode::Agent {
            self.docs.insert(c.tool_docs);
            self.routers.insert(c.router_in_front);
            self.prompts.insert(c.prompt_variant());
        }
        self.played(played_host(manifest, &c.host), c.parallel);
    }

    /// Adds a standalone router record.
    pub fn add_router(&mut self, manifest: &Manifest, r: &RouterRecord) {
        self.played(played_host(manifest, &r.host), r.parallel);
    }

    /// Notes where a trial was played ([`is_notable_play`], read in any order).
    fn played(&mut self, host: &str, parallel: Option<u32>) {
        let first = self.first_host.get_or_insert_with(|| host.to_string());
        let here = [(first.as_str(), 1), (host, parallel.unwrap_or(1))];
        self.notable_play |= is_notable_play(here);
    }

    /// The key of a conversation's configuration in [`Summary::groups`].
    pub fn key(&self, c: &ConversationRecord) -> String {
        group_key(&self.group(c))
    }

    /// The identity of a conversation's configuration, its figures empty: suite, mode, and, where
    /// the run varied them, the call cap, the prompt variant, the tool docs variant and the
    /// router in front (the toolless baseline plays one cell of a factorial, so only its cap can
    /// vary).
    fn group(&self, c: &ConversationRecord) -> GroupSummary {
        let several = self.caps.get(&c.suite).is_some_and(|s| s.len() > 1);
        let agent = c.mode == Mode::Agent;
        let tool_docs = (agent && self.docs.len() > 1)
            .then_some(c.tool_docs)
            .flatten();
        let router_in_front = (agent && self.routers.len() > 1).then_some(c.router_in_front);
        let prompt = (agent && self.prompts.len() > 1).then(|| c.prompt_variant());
        GroupSummary {
            suite: c.suite.clone(),
            mode: c.mode,
            call_cap: several.then_some(c.call_cap),
            tool_docs,
            router_in_front,
            prompt,
            models: BTreeMap::new(),
            comparison: None,
            ladder: BTreeMap::new(),
        }
    }
}

/// A configuration's key in [`Summary::groups`]: its suite, then each level it names, as in
/// `store/prompt=strict/docs=bare/router=on/cap=4` (`store/toolless` for the toolless baseline).
fn group_key(g: &GroupSummary) -> String {
    let mut key = g.suite.clone();
    if g.mode != Mode::Agent {
        key.push_str("/toolless");
    }
    if let Some(p) = g.prompt {
        key.push_str(&format!("/prompt={}", p.as_str()));
    }
    if let Some(v) = g.tool_docs {
        key.push_str(&format!("/docs={}", v.as_str()));
    }
    if let Some(on) = g.router_in_front {
        key.push_str(if on { "/router=on" } else { "/router=off" });
    }
    if let Some(n) = g.call_cap {
        key.push_str(&format!("/cap={n}"));
    }
    key
}

/// A configuration's identity and what each of its models left behind.
type GroupWork = (GroupSummary, BTreeMap<String, ModelWork>);

/// A router model's summary and its per-message totals.
type RouterWork = (RouterSummary, BTreeMap<u32, IdTotals>);

/// The cell being added: its (suite, model), the last task added, and each of its
/// configurations' running totals.
struct OpenCell<'a> {
    id: (String, String),
    last_task: String,
    groups: BTreeMap<String, (GroupSummary, ModelSums<'a>)>,
}

/// The router model being added: its name, the last message added, its running totals and its
/// per-message totals.
struct OpenRouter {
    model: String,
    last_index: u32,
    sums: RouterSums,
    totals: BTreeMap<u32, IdTotals>,
}

/// Builds a run's [`Summary`] from its cells: every conversation cell in (suite, model) order,
/// then every standalone router model in model order. A cell may come in parts, each one or
/// more whole tasks, in task order; a router model in parts of whole messages, in message order.
/// Only running totals are kept between parts.
pub struct SummaryBuilder<'a> {
    manifest: &'a Manifest,
    opts: &'a AnalysisOptions,
    shape: Shape,
    partly_on_cpu: BTreeSet<String>,
    present: BTreeSet<String>,
    groups: BTreeMap<String, GroupWork>,
    router: BTreeMap<String, RouterWork>,
    factorial: FactorialSums,
    stopping: Option<StoppingSums>,
    /// Kept only when the run is worth the placement section.
    placement: Option<PlacementSums>,
    /// The cell being added.
    cell: Option<OpenCell<'a>>,
    /// The last cell closed, to check the order.
    last: Option<(String, String)>,
    /// The router model being added.
    router_model: Option<OpenRouter>,
}

impl<'a> SummaryBuilder<'a> {
    /// A builder for a run of this shape ([`Shape::of`] its records).
    pub fn new(manifest: &'a Manifest, shape: Shape, opts: &'a AnalysisOptions) -> Self {
        let partly_on_cpu = manifest
            .models
            .iter()
            .filter(|m| m.is_partly_on_cpu())
            .map(|m| m.name.clone())
            .collect();
        SummaryBuilder {
            manifest,
            opts,
            placement: shape.notable_play.then(PlacementSums::default),
            shape,
            partly_on_cpu,
            present: BTreeSet::new(),
            groups: BTreeMap::new(),
            router: BTreeMap::new(),
            factorial: FactorialSums::default(),
            stopping: StoppingSums::of_run(manifest),
            cell: None,
            last: None,
            router_model: None,
        }
    }

    /// Adds conversation records of one suite's model: a whole cell, or a part of one holding
    /// one or more whole tasks (a trial's records all fall in its task), in any order among
    /// themselves. Parts of a cell come in task order, cells in (suite, model) order, all before
    /// any router model.
    pub fn add_conversations<'c>(
        &mut self,
        part: impl IntoIterator<Item = &'c ConversationRecord>,
    ) {
        let mut records: Vec<&ConversationRecord> = part.into_iter().collect();
        records.sort_by(|a, b| conversation_order(a, b));
        let (Some(first), Some(last)) = (records.first(), records.last()) else {
            return;
        };
        assert!(
            (&first.suite, &first.model) == (&last.suite, &last.model),
            "a part is of one suite's model"
        );
        self.open_cell(first);
        let cell = self.cell.as_mut().expect("opened");
        cell.last_task.clone_from(&last.task);
        for c in records {
            self.factorial.add(c);
            if let Some(s) = &mut self.stopping {
                s.add(c);
            }
            if let Some(p) = &mut self.placement {
                p.add(&played(self.manifest, c));
            }
            let group = self.shape.group(c);
            let sums = cell
                .groups
                .entry(group_key(&group))
                .or_insert_with(|| (group, ModelSums::new(self.opts)));
            sums.1.add(c);
        }
    }

    /// Makes `first`'s cell the open one, closing the one before; checks the order in every
    /// build: a cell out of order would change float sums and the placement's server order, and
    /// a cell given twice would replace the first.
    fn open_cell(&mut self, first: &ConversationRecord) {
        if let Some(open) = &self.cell
            && (&open.id.0, &open.id.1) == (&first.suite, &first.model)
        {
            assert!(
                open.last_task < first.task,
                "parts of a cell hold whole tasks, in task order"
            );
            return;
        }
        self.close_cell();
        let id = (first.suite.clone(), first.model.clone());
        assert!(
            self.last.as_ref().is_none_or(|last| *last < id)
                && self.router.is_empty()
                && self.router_model.is_none(),
            "cells come once each, in (suite, model) order, before the router"
        );
        self.present.insert(id.1.clone());
        self.cell = Some(OpenCell {
            id,
            last_task: String::new(),
            groups: BTreeMap::new(),
        });
    }

    /// Turns the open cell's running totals into its models' figures.
    fn close_cell(&mut self) {
        let Some(cell) = self.cell.take() else {
            return;
        };
        let model = &cell.id.1;
        let cpu = self.partly_on_cpu.contains(model);
        for (key, (group, sums)) in cell.groups {
            let entry = self.groups.entry(key).or_insert((group, BTreeMap::new()));
            entry.1.insert(model.clone(), sums.finish(cpu));
        }
        self.last = Some(cell.id);
    }

    /// Adds standalone router records of one model: all of them, or a part holding one or more
    /// whole messages, in any order among themselves. Parts of a model come in message order,
    /// models in name order, after every cell.
    pub fn add_router<'c>(&mut self, part: impl IntoIterator<Item = &'c RouterRecord>) {
        self.close_cell();
        let mut records: Vec<&RouterRecord> = part.into_iter().collect();
        records.sort_by_key(|r| (r.index, r.trial));
        let (Some(first), Some(last)) = (records.first(), records.last()) else {
            return;
        };
        assert!(first.model == last.model, "a part is of one model");
        self.open_router(first);
        let open = self.router_model.as_mut().expect("opened");
        open.last_index = last.index;
        let w = self.opts.output_weight;
        for r in records {
            if let Some(p) = &mut self.placement {
                p.add(&PlayedTrial {
                    host: played_host(self.manifest, &r.host),
                    parallel: r.parallel.unwrap_or(1),
                    model: &r.model,
                    conversation: false,
                    passed: r.outcome.is_graded().then_some(r.correct),
                    calls: vec![],
                    router_calls: vec![&r.call],
                });
            }
            open.sums.add(r, w);
            if r.outcome.is_graded() {
                let t = open.totals.entry(r.index).or_default();
                t.trials += 1.0;
                t.passes += f64::from(u8::from(r.correct));
                t.tokens += crate::analysis::figures::cost::blended(
                    r.call.input_tokens(),
                    r.call.output_tokens(),
                    w,
                );
            }
        }
    }

    /// Makes `first`'s model the open router model, closing the one before, and checks the
    /// order in every build.
    fn open_router(&mut self, first: &RouterRecord) {
        if let Some(open) = &self.router_model
            && open.model == first.model
        {
            assert!(
                open.last_index < first.index,
                "parts of a router model hold whole messages, in message order"
            );
            return;
        }
        self.close_router();
        assert!(
            self.router
                .last_key_value()
                .is_none_or(|(m, _)| *m < first.model),
            "router models come once each, in order"
        );
        self.present.insert(first.model.clone());
        self.router_model = Some(OpenRouter {
            model: first.model.clone(),
            last_index: 0,
            sums: RouterSums::default(),
            totals: BTreeMap::new(),
        });
    }

    /// Turns the open router model's running totals into its summary.
    fn close_router(&mut self) {
        let Some(open) = self.router_model.take() else {
            return;
        };
        let mut summary = open.sums.finish();
        let counts: Vec<(usize, usize)> = open
            .totals
            .values()
            .map(|t| (t.trials as usize, t.passes as usize))
            .collect();
        summary.accuracy_ci95 = interval::success_rate(&counts);
        self.router.insert(open.model, (summary, open.totals));
    }

    /// The summary of every cell and router model added.
    pub fn finish(mut self) -> Summary {
        self.close_cell();
        self.close_router();
        let manifest = self.manifest;
        let opts = self.opts;
        let present = &self.present;
        let (models, pairing) = order_models(manifest, present, opts.pair.as_ref());
        let reference = reference_model(&models, opts.reference_model.as_deref());
        let mut groups = BTreeMap::new();
        let mut per_task = BTreeMap::new();
        for (key, (mut group, work)) in self.groups {
            group.comparison = pairing.as_ref().and_then(|p| {
                let (a, b) = (work.get(&p.small)?, work.get(&p.large)?);
                Some(comparison(&p.small, &p.large, a, b, opts))
            });
            group.ladder = ladder(reference.as_ref(), &work, opts);
            let tasks = work.iter().map(|(m, w)| (m.clone(), w.per_task.clone()));
            per_task.insert(key.clone(), tasks.collect());
            group.models = work.into_iter().map(|(m, w)| (m, w.summary)).collect();
            groups.insert(key, group);
        }
        let tools_add = tools_add_by_group(&groups, &per_task);
        let router_comparison = pairing.as_ref().and_then(|p| {
            let (a, b) = (self.router.get(&p.small)?, self.router.get(&p.large)?);
            let point = break_even(
                a.0.blended_tokens_per_correct,
                b.0.blended_tokens_per_correct,
            );
            let mut ci95 = message_bootstrap(&a.1, &b.1, opts.resamples, opts.seed);
            ci95.break_even = with_point(point, ci95.break_even);
            Some(RouterComparison {
                small: p.small.clone(),
                large: p.large.clone(),
                break_even: point,
                ci95,
            })
        });
        let router = self.router.into_iter().map(|(m, r)| (m, r.0)).collect();
        let placement = self
            .placement
            .map(|p| p.placement(&models))
            .filter(Placement::is_notable);
        let mut summary = Summary {
            run_id: manifest.run_id.clone(),
            suites: manifest.settings["suites"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|v| v.as_str().map(String::from))
                        .collect()
                })
                .unwrap_or_default(),
            provenance: crate::analysis::figures::provenance::provenance(manifest),
            backend: manifest.backend.clone(),
            imported_from: manifest.imported_from.clone(),
            grader_digest: manifest.grader_digest.clone(),
            settings: SummarySettings {
                output_weight: opts.output_weight,
                cache_discount: CACHE_DISCOUNT,
                resamples: opts.resamples,
                seed: opts.seed,
                example_values: opts.example_values.clone(),
                toolless_tasks: opts.toolless_tasks.clone(),
            },
            factorial: self.factorial.factorials(&models),
            models,
            pairing,
            reference_model: reference,
            groups,
            tools_add,
            router,
            router_comparison,
            placement,
            stopping: self.stopping.map(StoppingSums::stopping),
            on_cpu: manifest
                .models
                .iter()
                .filter(|m| m.on_cpu_only() && present.contains(&m.name))
                .map(|m| m.name.clone())
                .collect(),
            partly_on_cpu: self
                .partly_on_cpu
                .iter()
                .filter(|m| present.contains(*m))
                .cloned()
                .collect(),
            warnings: manifest.warnings.clone(),
            incomplete: Vec::new(),
        };
        summary.incomplete = crate::analysis::figures::shortfall::shortfalls(&summary, manifest);
        summary
    }
}

/// A conversation as the placement reads it.
fn played<'c>(manifest: &'c Manifest, c: &'c ConversationRecord) -> PlayedTrial<'c> {
    PlayedTrial {
        host: played_host(manifest, &c.host),
        parallel: c.parallel.unwrap_or(1),
        model: &c.model,
        conversation: true,
        passed: c.outcome.is_graded().then_some(c.verdict.passed),
        calls: c.orchestrator_calls().collect(),
        router_calls: c.router_calls().collect(),
    }
}

/// Computes the whole summary of a run. Records are sorted first, so their order in the files
/// does not matter; transport- and protocol-failed conversations are counted, never scored. This
/// is [`SummaryBuilder`] fed every cell of records held in memory.
pub fn summarize(
    manifest: &Manifest,
    conversations: &[ConversationRecord],
    router: &[RouterRecord],
    opts: &AnalysisOptions,
) -> Summary {
    let mut convs: Vec<&ConversationRecord> = conversations.iter().collect();
    convs.sort_by(|a, b| conversation_order(a, b));
    let mut routs: Vec<&RouterRecord> = router.iter().collect();
    routs.sort_by(|a, b| a.model.cmp(&b.model));
    let shape = Shape::of(manifest, convs.iter().copied(), routs.iter().copied());
    let mut builder = SummaryBuilder::new(manifest, shape, opts);
    for cell in convs.chunk_by(|a, b| (&a.suite, &a.model) == (&b.suite, &b.model)) {
        builder.add_conversations(cell.iter().copied());
    }
    for model in routs.chunk_by(|a, b| a.model == b.model) {
        builder.add_router(model.iter().copied());
    }
    builder.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixtures::{timed_call, varied_run};

    #[test]
    fn cells_fed_in_file_order_give_the_summary_of_the_sorted_records() {
        let (manifest, mut convs, router) = varied_run();
        convs.reverse();
        let opts = AnalysisOptions {
            resamples: 200,
            ..AnalysisOptions::default()
        };
        let whole = crate::analysis::summarize(&manifest, &convs, &router, &opts);
        assert!(
            whole.placement.is_some(),
            "two servers and concurrency: placed"
        );
        assert!(!whole.factorial.is_empty(), "docs x router crossed");
        let second: Vec<&String> = whole
            .groups
            .keys()
            .filter(|k| k.starts_with("second"))
            .collect();
        assert_eq!(
            second,
            ["second/router=off/cap=2", "second/router=off/cap=8"]
        );
        assert!(whole.router_comparison.is_some());

        let shape = Shape::of(&manifest, &convs, &router);
        let mut builder = SummaryBuilder::new(&manifest, shape, &opts);
        let mut cells: BTreeMap<(&str, &str), Vec<&ConversationRecord>> = BTreeMap::new();
        for c in &convs {
            cells.entry((&c.suite, &c.model)).or_default().push(c);
        }
        for cell in cells.values() {
            builder.add_conversations(cell.iter().copied());
        }
        let mut by_model: BTreeMap<&str, Vec<&RouterRecord>> = BTreeMap::new();
        for r in router.iter().rev() {
            by_model.entry(&r.model).or_default().push(r);
        }
        for records in by_model.values() {
            builder.add_router(records.iter().copied());
        }
        let fed = builder.finish();
        assert_eq!(
            serde_json::to_string(&fed).expect("json"),
            serde_json::to_string(&whole).expect("json")
        );
    }

    /// Every record of `convs` fed a task at a time, and `router` a message at a time.
    fn fed_in_parts(
        manifest: &Manifest,
        convs: &[ConversationRecord],
        router: &[RouterRecord],
        opts: &AnalysisOptions,
    ) -> Summary {
        let shape = Shape::of(manifest, convs, router);
        let mut builder = SummaryBuilder::new(manifest, shape, opts);
        let mut tasks: BTreeMap<(&str, &str, &str), Vec<&ConversationRecord>> = BTreeMap::new();
        for c in convs.iter().rev() {
            tasks
                .entry((&c.suite, &c.model, &c.task))
                .or_default()
                .push(c);
        }
        for part in tasks.values() {
            builder.add_conversations(part.iter().copied());
        }
        let mut messages: BTreeMap<(&str, u32), Vec<&RouterRecord>> = BTreeMap::new();
        for r in router.iter().rev() {
            messages.entry((&r.model, r.index)).or_default().push(r);
        }
        for part in messages.values() {
            builder.add_router(part.iter().copied());
        }
        builder.finish()
    }

    /// Gives `convs` what `varied_run` lacks: several calls, Ollama's durations, GPU and
    /// server-process readings (energy missing on some calls of one model), retried calls and
    /// router calls in front of the agent.
    fn with_every_reading(convs: &mut [ConversationRecord]) {
        use crate::runner::record::{GpuWindow, Node};
        use crate::wire::outcome::{Attempt, CallOutcome};
        for (i, c) in convs.iter_mut().enumerate() {
            let f = i as f64;
            let mut second = timed_call(100 + i as u64, 3 + i as u64 % 4, 0.05 + f / 100.0);
            if i % 5 == 0 {
                let attempt = |outcome, elapsed_ms| Attempt {
                    outcome,
                    status: None,
                    error: None,
                    elapsed_ms,
                };
                second.attempts = Box::new([
                    attempt(CallOutcome::Transport, 12.5 + f),
                    attempt(CallOutcome::Ok, 40.0),
                ]);
            }
            c.calls.push(second);
            if c.router_in_front {
                let mut r = timed_call(30, 2, 0.01 + f / 1000.0);
                r.node = Node::Router;
                r.predicted = (i % 3 != 0).then(|| "order_status".into());
                c.calls.insert(0, r);
            }
            let energy = c.model != "m:3b" || i % 4 != 0;
            for (j, x) in c.calls.iter_mut().enumerate() {
                x.timings.load_duration = Some(1_000_000 * (i % 3) as u64).into();
                x.timings.prompt_eval_duration = Some(20_000_000 + 1_000 * i as u64).into();
                x.timings.eval_duration = Some(30_000_000 + 7_000 * j as u64).into();
                x.timings.prompt_eval_cached_count = Some(i as u64 % 5).into();
                x.gpu = Some(Box::new(GpuWindow {
                    samples: 2,
                    util_mean: Some(f * 1.7 % 100.0),
                    util_max: Some(f * 3.1 % 100.0),
                    mem_used_mib: Some(1000.0 + f),
                    power_w: Some(80.0 + f / 3.0),
                    energy_j: energy.then_some(f / 7.0),
                    server_cpu_pct: Some(f / 9.0),
                    server_rss_mib: Some(500.0 - f),
                    ..GpuWindow::default()
                }));
            }
        }
    }

    #[test]
    fn cells_fed_a_task_at_a_time_give_the_summary_of_the_whole_cells() {
        let (manifest, mut convs, router) = varied_run();
        with_every_reading(&mut convs);
        let opts = AnalysisOptions {
            resamples: 200,
            ..AnalysisOptions::default()
        };
        let whole = crate::analysis::summarize(&manifest, &convs, &router, &opts);
        let parts = fed_in_parts(&manifest, &convs, &router, &opts);
        assert!(whole.groups.values().any(|g| g.models.len() == 3));
        let models = || whole.groups.values().flat_map(|g| g.models.values());
        assert!(models().any(|m| m.gpu.as_ref().is_some_and(|g| g.energy_j.is_some())));
        assert!(models().any(|m| m.gpu.as_ref().is_some_and(|g| g.energy_j.is_none())));
        assert!(models().any(|m| m.pipeline.is_some() && m.server_process.is_some()));
        assert!(models().any(|m| m.latency.fit.is_some() && m.calls.retries > 0));
        assert_eq!(
            serde_json::to_string(&parts).expect("json"),
            serde_json::to_string(&whole).expect("json")
        );
    }

    #[test]
    #[should_panic(expected = "parts of a cell hold whole tasks, in task order")]
    fn a_task_split_over_two_parts_is_refused() {
        let (manifest, convs, router) = varied_run();
        let opts = AnalysisOptions::default();
        let shape = Shape::of(&manifest, &convs, &router);
        let mut builder = SummaryBuilder::new(&manifest, shape, &opts);
        let first = &convs[0];
        let same_task: Vec<&ConversationRecord> = convs
            .iter()
            .filter(|c| (&c.suite, &c.model, &c.task) == (&first.suite, &first.model, &first.task))
            .collect();
        assert!(same_task.len() > 1, "a task played more than once");
        builder.add_conversations([same_task[0]]);
        builder.add_conversations([same_task[1]]);
    }

    #[test]
    fn the_placement_is_read_only_where_trials_ran_apart_or_together() {
        let (manifest, mut convs, router) = varied_run();
        assert!(Shape::of(&manifest, &convs, &router).notable_play);
        for c in &mut convs {
            c.host = None;
            c.parallel = None;
        }
        let shape = Shape::of(&manifest, &convs, &router);
        assert!(!shape.notable_play, "one server, one at a time");
        let opts = AnalysisOptions::default();
        assert!(
            SummaryBuilder::new(&manifest, shape, &opts)
                .placement
                .is_none()
        );
    }
}
