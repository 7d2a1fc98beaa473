//! `report.md`: the human-readable report of one run, and the short table `passk report` prints.
//!
//! A [`Report`] bundles what the report formats: the run's manifest (the setup), its finished
//! [`Summary`] (every figure) and the records (for `conversations.csv` and the two charts that plot
//! one point per conversation or call, see [`Observations`]). [`markdown`] formats it; nothing is
//! computed here beyond picking values out of the summary. The same report gives byte-identical text:
//! no wall-clock time, no host name, maps in key order, numbers with fixed digits. Every number is
//! defined in `docs/metrics.md`; the layout is described in `docs/report.md`.

use super::CHARTS_DIR;
use super::markdown::{
    MarkdownTable, NOT_AVAILABLE, ci_percent, ci_ratio, counted, escape_cell, fixed, number,
    percent, percent_with_n, ratio, seconds,
};
use crate::analysis::bootstrap::Interval;
use crate::analysis::{GroupSummary, ModelSummary, Rate, Summary};
use crate::runner::record::{ConversationRecord, GpuInfo, Manifest, Mode, RouterRecord};
use crate::trace::FailureMode;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

/// Length of a digest as shown in tables (the full digest is in `manifest.json`).
const SHORT_DIGEST: usize = 12;

/// What the report files are made from.
#[derive(Debug, Clone)]
pub struct Report<'a> {
    /// The run's manifest (setup section).
    pub manifest: &'a Manifest,
    /// The finished analysis.
    pub summary: &'a Summary,
    /// Every conversation record (for `conversations.csv`).
    pub conversations: &'a [ConversationRecord],
    /// Per-conversation and per-call observations the charts plot.
    pub observations: Observations,
    /// Notes about reading the run (e.g. a torn last line skipped), listed under warnings.
    pub notes: Vec<String>,
}

impl<'a> Report<'a> {
    /// Bundles a run's manifest, summary and records; `notes` go to the warnings section.
    pub fn new(
        manifest: &'a Manifest,
        summary: &'a Summary,
        conversations: &'a [ConversationRecord],
        router: &[RouterRecord],
        notes: Vec<String>,
    ) -> Report<'a> {
        Report {
            manifest,
            summary,
            conversations,
            observations: Observations::of(summary, conversations, router),
            notes,
        }
    }
}

/// One point of the GPU timeline: a call's mean utilization at its midpoint.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuPoint {
    /// Seconds since the run's first recorded call start.
    pub t_s: f64,
    /// The call's mean GPU utilization, percent (`None`: no sample in its window).
    pub util_pct: Option<f64>,
    /// Model that made the call.
    pub model: String,
    /// Call start and end, seconds since the run's first call (for the loaded-model bands).
    pub span: (f64, f64),
}

/// Values read straight off the records, one per conversation or call, for the charts and checks
/// that a summary does not hold.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Observations {
    /// By group key, then model: latency of each graded conversation (sum of its orchestrator
    /// calls' latency, seconds), sorted ascending; conversations without any latency are left out.
    pub conversation_latency: BTreeMap<String, BTreeMap<String, Vec<f64>>>,
    /// Every call with a start time, in time order (then by model).
    pub gpu_timeline: Vec<GpuPoint>,
    /// Grader digests stamped on the records.
    pub record_grader_digests: BTreeSet<String>,
}

impl Observations {
    /// Reads the observations of these records; groups are matched as [`Summary::groups`] defines
    /// them (suite, mode, and call cap where the group has one).
    pub fn of(
        summary: &Summary,
        conversations: &[ConversationRecord],
        router: &[RouterRecord],
    ) -> Observations {
        let mut obs = Observations::default();
        for (key, g) in &summary.groups {
            let mut by_model: BTreeMap<String, Vec<f64>> = BTreeMap::new();
            for c in conversations.iter().filter(|c| in_group(g, c)) {
                let lats: Vec<f64> = c
                    .orchestrator_calls()
                    .filter_map(|x| x.latency_s())
                    .collect();
                if !lats.is_empty() {
                    by_model
                        .entry(c.model.clone())
                        .or_default()
                        .push(lats.iter().sum());
                }
            }
            for v in by_model.values_mut() {
                v.sort_by(f64::total_cmp);
            }
            obs.conversation_latency.insert(key.clone(), by_model);
        }
        let calls = conversations
            .iter()
            .flat_map(|c| c.calls.iter().map(move |x| (&c.model, x)))
            .chain(router.iter().map(|r| (&r.model, &r.call)));
        let mut raw: Vec<(u64, f64, Option<f64>, String)> = calls
            .filter_map(|(m, x)| {
                let start = x.started_unix_ms?;
                let util = x.gpu.as_ref().and_then(|g| g.util_mean);
                Some((start, x.wall_s.unwrap_or(0.0).max(0.0), util, m.clone()))
            })
            .collect();
        raw.sort_by(|a, b| {
            (a.0, &a.3)
                .cmp(&(b.0, &b.3))
                .then(a.1.total_cmp(&b.1))
                .then(a.2.unwrap_or(-1.0).total_cmp(&b.2.unwrap_or(-1.0)))
        });
        if let Some(first) = raw.first().map(|r| r.0) {
            obs.gpu_timeline = raw
                .into_iter()
                .map(|(start, wall, util, model)| {
                    let from = (start - first) as f64 / 1000.0;
                    GpuPoint {
                        t_s: from + wall / 2.0,
                        util_pct: util,
                        model,
                        span: (from, from + wall),
                    }
                })
                .collect();
        }
        obs.record_grader_digests = conversations
            .iter()
            .map(|c| c.grader_digest.clone())
            .chain(router.iter().map(|r| r.grader_digest.clone()))
            .collect();
        obs
    }
}

/// Whether a graded conversation belongs to a group of the summary.
fn in_group(g: &GroupSummary, c: &ConversationRecord) -> bool {
    c.outcome.is_graded() && g.holds(c)
}

/// The group the charts and the terminal table describe: the agent group with the largest call
/// cap (the full budget), else the first group.
pub fn primary_group(summary: &Summary) -> Option<(&String, &GroupSummary)> {
    summary
        .groups
        .iter()
        .filter(|(_, g)| g.mode == Mode::Agent)
        .max_by(|a, b| a.1.call_cap.cmp(&b.1.call_cap).then_with(|| b.0.cmp(a.0)))
        .or_else(|| summary.groups.iter().next())
}

/// The models of a group, in the summary's report order.
pub fn group_models<'s>(
    summary: &'s Summary,
    g: &'s GroupSummary,
) -> Vec<(&'s str, &'s ModelSummary)> {
    summary
        .models
        .iter()
        .filter_map(|m| g.models.get(m).map(|s| (m.as_str(), s)))
        .collect()
}

/// Sort key of a configuration key: its text with every run of digits compared as a number, so
/// `store/cap=4` comes before `store/cap=10`.
pub fn group_order(key: &str) -> Vec<(String, u64)> {
    let mut parts = Vec::new();
    let mut text = String::new();
    let mut digits = String::new();
    for ch in key.chars() {
        if ch.is_ascii_digit() {
            digits.push(ch);
        } else {
            if !digits.is_empty() {
                parts.push((
                    std::mem::take(&mut text),
                    digits.parse().unwrap_or(u64::MAX),
                ));
                digits.clear();
            }
            text.push(ch);
        }
    }
    parts.push((text, digits.parse().unwrap_or(0)));
    parts
}

/// The configurations in report order: by [`group_order`] of their keys.
pub fn ordered_groups(s: &Summary) -> Vec<(&String, &GroupSummary)> {
    let mut groups: Vec<(&String, &GroupSummary)> = s.groups.iter().collect();
    groups.sort_by_cached_key(|(k, _)| group_order(k));
    groups
}

// ---------------------------------------------------------------------------------------------
// Number formats shared by the report, the comparison and the terminal table

/// An optional value formatted by `f`, `n/a` when absent.
pub fn opt(value: Option<f64>, f: impl Fn(f64) -> String) -> String {
    value.map_or_else(|| NOT_AVAILABLE.to_string(), f)
}

/// A per-success (or per-correct) figure formatted by `f`: `n/a (0 correct)` when its count is
/// 0, so nothing reads as if divided by an empty count; `n/a` when otherwise absent.
pub fn per_success(value: Option<f64>, count: usize, f: impl Fn(f64) -> String) -> String {
    if count == 0 {
        return NO_CORRECT.to_string();
    }
    opt(value, f)
}

/// What a per-success figure over no success reads.
pub const NO_CORRECT: &str = "n/a (0 correct)";

/// A rate as `40.8% (49/120)`, `n/a` when undefined.
pub fn rate(r: Option<Rate>) -> String {
    r.map_or_else(
        || NOT_AVAILABLE.to_string(),
        |r| percent_with_n(r.hits as u64, r.of as u64),
    )
}

/// Percentage points with a sign and one decimal: `0.275` -> `+27.5 pp`.
pub fn points(diff: f64) -> String {
    if !diff.is_finite() {
        return NOT_AVAILABLE.into();
    }
    let v = fixed(diff * 100.0, 1);
    if v.starts_with('-') || v == "0.0" {
        format!("{v} pp")
    } else {
        format!("+{v} pp")
    }
}

/// A CI of a difference in percentage points: `+13 to +42 pp`.
pub fn ci_points(i: &Interval) -> String {
    let p = |x: f64| {
        let v = fixed(x * 100.0, 0);
        if v.starts_with('-') || v == "0" {
            v
        } else {
            format!("+{v}")
        }
    };
    if !i.low.is_finite() || !i.high.is_finite() {
        return NOT_AVAILABLE.into();
    }
    format!("{} to {} pp", p(i.low), p(i.high))
}

/// Tokens: whole numbers with thousands separators.
pub fn tokens(x: f64) -> String {
    number(x, 0)
}

/// The first characters of a digest, after its `kind:` prefix (kept unless it is `sha256:`).
pub fn short_digest(d: &str) -> String {
    let (prefix, hex) = match d.rsplit_once(':') {
        Some(("sha256", hex)) => ("", hex),
        Some((p, hex)) => (p, hex),
        None => ("", d),
    };
    let hex: String = hex.chars().take(SHORT_DIGEST).collect();
    if prefix.is_empty() {
        hex
    } else {
        format!("{prefix}:{hex}")
    }
}

/// The note beside a rate: nothing when no conversation was excluded, else `(n = 118 of 120; ...)`.
fn excluded(m: &ModelSummary) -> String {
    if m.outcomes.graded == m.outcomes.total {
        String::new()
    } else {
        format!(" ({})", m.denominator_note)
    }
}

/// The quoted line of an imported run's `regrade.md` note: headed "RE-GRADED" only when the source
/// changed some grades, and the note as a sentence.
fn regrade_line(note: &str) -> String {
    let heading = if note.contains(" records 0 grades changed") {
        "REGRADE NOTE AT THE SOURCE"
    } else {
        "RE-GRADED AT THE SOURCE"
    };
    let mut chars = note.chars();
    let sentence = chars.next().map_or_else(String::new, |c| {
        c.to_uppercase().chain(chars).collect::<String>()
    });
    format!("> **{heading}.** {sentence}.\n\n")
}

/// A column header for a model, flagged when it ran on the CPU, wholly or in part.
fn model_header(summary: &Summary, model: &str) -> String {
    if summary.on_cpu.iter().any(|m| m == model) {
        format!("{model} (on CPU, no VRAM)")
    } else if summary.partly_on_cpu.iter().any(|m| m == model) {
        format!("{model} (partly on CPU)")
    } else {
        model.to_string()
    }
}

/// A table with a label column and one column per model; each row formats every model.
struct ModelTable<'s> {
    table: MarkdownTable,
    models: Vec<(&'s str, &'s ModelSummary)>,
}

impl<'s> ModelTable<'s> {
    fn new(summary: &Summary, label: &str, models: &[(&'s str, &'s ModelSummary)]) -> Self {
        let mut header = vec![label.to_string()];
        header.extend(models.iter().map(|(m, _)| model_header(summary, m)));
        let mut table = MarkdownTable::new(header);
        table.numeric_after_first();
        ModelTable {
            table,
            models: models.to_vec(),
        }
    }

    fn row(&mut self, label: impl Into<String>, f: impl Fn(&ModelSummary) -> String) -> &mut Self {
        let mut cells = vec![label.into()];
        cells.extend(self.models.iter().map(|(_, s)| f(s)));
        self.table.row(cells);
        self
    }

    fn render(&self) -> String {
        self.table.render()
    }
}

// ---------------------------------------------------------------------------------------------
// report.md

/// The whole `report.md`.
pub fn markdown(r: &Report) -> String {
    let s = r.summary;
    let mut out = String::new();
    title(&mut out, r);
    out.push_str(&super::stopping::section(r));
    super::provenance::section(&mut out, s);
    setup(&mut out, r);
    if let Some((key, _)) = primary_group(s) {
        let _ = writeln!(
            out,
            "## Charts\n\nThe charts describe `{key}`{}.\n",
            if s.groups.len() > 1 {
                " (the agent at its full call budget)"
            } else {
                ""
            }
        );
        for (file, title) in super::charts::linked(r) {
            let _ = writeln!(out, "- [{title}]({CHARTS_DIR}/{file})");
        }
        out.push('\n');
    }
    for (key, g) in ordered_groups(s) {
        group(&mut out, s, key, g);
    }
    budget_sweep(&mut out, s);
    tools_add(&mut out, s);
    super::factorial::factorial_sections(&mut out, s);
    super::placement::section(&mut out, s);
    router(&mut out, s);
    warnings(&mut out, r);
    out
}

pub(super) fn title(out: &mut String, r: &Report) {
    let s = r.summary;
    let _ = writeln!(out, "# passk report: {}\n", s.run_id);
    let backend = if s.backend.is_empty() {
        "unknown"
    } else {
        s.backend.as_str()
    };
    let _ = writeln!(out, "Backend: `{backend}`.\n");
    if s.backend == crate::runner::experiment::STUB_BACKEND {
        let _ = writeln!(
            out,
            "> **STUB RUN.** The server was passk's own Ollama-compatible stub: its models replay \
             scripted answers and its timings are simulated, so these figures test the harness, \
             not a model.\n"
        );
    }
    if s.backend == "imported" || s.imported_from.is_some() {
        let _ = writeln!(
            out,
            "> **IMPORTED RUN.** These records were imported from `{}`, not produced by passk; \
             their verdicts are kept as recorded and were not re-graded.\n",
            s.imported_from.as_deref().unwrap_or("another harness")
        );
        if let Some(note) = &r.manifest.source_regrade {
            out.push_str(&regrade_line(note));
        }
    }
    let others: Vec<&String> = r
        .observations
        .record_grader_digests
        .iter()
        .filter(|d| **d != s.grader_digest)
        .collect();
    if !others.is_empty() {
        let list: Vec<String> = others.iter().map(|d| format!("`{d}`")).collect();
        let _ = writeln!(
            out,
            "> **GRADERS DIFFER.** The manifest's grader digest is `{}`, but records carry {}: \
             verdicts in this run were not all produced by the same graders.\n",
            s.grader_digest,
            list.join(", ")
        );
    }
}

fn setting<'v>(settings: &'v Value, key: &str) -> Option<&'v Value> {
    settings.get(key).filter(|v| !v.is_null())
}

fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(a) => a.iter().map(value_text).collect::<Vec<_>>().join(", "),
        other => other.to_string(),
    }
}

fn setup(out: &mut String, r: &Report) {
    let (m, s) = (r.manifest, r.summary);
    out.push_str("## Setup\n\n");
    let models = models_table(m);
    if !models.is_empty() {
        out.push_str(&models.render());
        out.push('\n');
    }
    let mut t = MarkdownTable::new(["setting", "value"]);
    t.row([
        "Ollama version",
        m.server_version.as_deref().unwrap_or(NOT_AVAILABLE),
    ]);
    t.row(["GPU".to_string(), gpu_text(&m.gpu)]);
    settings_rows(&mut t, &m.settings);
    analysis_rows(&mut t, s);
    out.push_str(&t.render());
    out.push('\n');
}

/// One row per model: size, quantization, digest and where it ran.
fn models_table(m: &Manifest) -> MarkdownTable {
    let mut t = MarkdownTable::new(["model", "parameters", "quantization", "digest", "placement"]);
    for info in &m.models {
        t.row([
            info.name.clone(),
            info.parameter_size
                .clone()
                .unwrap_or_else(|| NOT_AVAILABLE.into()),
            info.quantization
                .clone()
                .unwrap_or_else(|| NOT_AVAILABLE.into()),
            info.digest
                .as_deref()
                .map_or_else(|| NOT_AVAILABLE.into(), short_digest),
            if info.on_cpu_only() {
                "On CPU (no VRAM)".into()
            } else if info.partly_on_cpu {
                "partly on CPU".into()
            } else if info.size_vram.is_some() {
                "GPU".into()
            } else {
                NOT_AVAILABLE.into()
            },
        ]);
    }
    t
}

/// The GPU's name, memory and driver, or why there is no telemetry.
fn gpu_text(gpu: &GpuInfo) -> String {
    match (&gpu.name, &gpu.unavailable) {
        (Some(name), _) => {
            let mut g = name.clone();
            if let Some(mib) = gpu.memory_mib {
                g.push_str(&format!(", {} MiB", number(mib as f64, 0)));
            }
            if let Some(d) = &gpu.driver {
                g.push_str(&format!(", driver {d}"));
            }
            if let Some(source) = &gpu.source {
                g.push_str(&format!("; read through {source}"));
            }
            g
        }
        (None, Some(why)) => format!("no GPU telemetry ({why})"),
        (None, None) => "no GPU telemetry".into(),
    }
}

/// The run's settings: the known ones under their names first, then every other scalar.
fn settings_rows(t: &mut MarkdownTable, st: &Value) {
    let known: [(&str, &str); 10] = [
        ("trials", "trials per task"),
        ("tool_docs", "tool docs variant"),
        ("prompt", "prompt variant"),
        ("temperature", "temperature"),
        ("router_temperature", "router temperature"),
        ("num_ctx", "num_ctx"),
        ("num_predict", "num_predict"),
        ("call_caps", "call cap(s), model calls per turn"),
        ("router_in_front", "router in front"),
        ("toolless", "baseline"),
    ];
    for (key, label) in known {
        if let Some(v) = setting(st, key) {
            let text = if key == "toolless" {
                if v.as_bool() == Some(true) {
                    "toolless".into()
                } else {
                    "none".into()
                }
            } else if key == "router_in_front" {
                on_off(v)
            } else {
                value_text(v)
            };
            t.row([label.to_string(), text]);
        }
    }
    if let Value::Object(map) = st {
        for (k, v) in map {
            let empty = v.as_array().is_some_and(Vec::is_empty) || v.as_str() == Some("");
            if known.iter().any(|(key, _)| key == k) || v.is_null() || empty {
                continue;
            }
            if matches!(v, Value::Object(_)) {
                continue;
            }
            t.row([k.replace('_', " "), value_text(v)]);
        }
    }
}

/// A switch as the CLI writes it: `off`, `on` (`off, on` for a factorial level list).
fn on_off(v: &Value) -> String {
    match v {
        Value::Bool(b) => if *b { "on" } else { "off" }.into(),
        Value::Array(a) => a.iter().map(on_off).collect::<Vec<_>>().join(", "),
        other => value_text(other),
    }
}

/// How the figures were computed: grader digest, bootstrap, token blend, model pair.
fn analysis_rows(t: &mut MarkdownTable, s: &Summary) {
    t.row([
        "grader digest".to_string(),
        format!("`{}`", s.grader_digest),
    ]);
    t.row([
        "bootstrap".to_string(),
        format!(
            "{} over tasks, seed {}",
            counted(s.settings.resamples, "resample"),
            s.settings.seed
        ),
    ]);
    t.row([
        "blended tokens".to_string(),
        format!(
            "input + {} x output; cached: re-sent prefix at {}",
            fixed(s.settings.output_weight, 0),
            percent(s.settings.cache_discount)
        ),
    ]);
    if let Some(p) = &s.pairing {
        t.row([
            "model pair".to_string(),
            format!("small `{}`, large `{}` ({})", p.small, p.large, p.rule),
        ]);
    }
}

fn group(out: &mut String, s: &Summary, key: &str, g: &GroupSummary) {
    let models = group_models(s, g);
    group_heading(out, key, g);
    if models.is_empty() {
        out.push_str("No conversations.\n\n");
        return;
    }
    out.push_str(&super::stopping::mark_note(s));
    headline(out, s, &models);
    by_category(out, s, &models);
    pass_hat_k_tables(out, s, &models);
    if let Some(c) = &g.comparison {
        break_even(out, s, g, c);
    }
    model_ladder(out, s, g);
    latency(out, s, &models);
    context_growth(out, s, &models);
    taxonomy(out, s, &models);
    behaviour(out, s, &models);
    quality(out, s, &models);
    gpu(out, s, &models);
    server_process(out, s, &models);
    pipeline(out, s, &models);
}

/// The configuration's title, and what is special about it (toolless, call cap).
fn group_heading(out: &mut String, key: &str, g: &GroupSummary) {
    let _ = writeln!(out, "## `{key}`\n");
    group_notes(out, g);
}

/// What is special about a configuration (toolless, call cap), under its title.
pub(super) fn group_notes(out: &mut String, g: &GroupSummary) {
    if g.mode == Mode::Toolless {
        out.push_str("Toolless baseline: one call per customer message, no tools.\n\n");
    }
    if let Some(cap) = g.call_cap {
        let _ = writeln!(out, "Call cap: {cap} model calls per turn.\n");
    }
}

/// Some model ran its tasks a different number of times: the pooled success rate then weighs
/// tasks by their trials and is no longer pass^1 (the mean over tasks).
fn trials_differ(models: &[(&str, &ModelSummary)]) -> bool {
    models
        .iter()
        .any(|(_, m)| m.most_trials_per_task != m.trials_per_task)
}

/// pass^k at the model's own k (its fewest trials of a task): `pass^3: 40.0%`.
fn own_pass_hat_k(m: &ModelSummary) -> String {
    let k = m.trials_per_task;
    format!("pass^{k}: {}", opt(m.pass_hat_k.get(&k).copied(), percent))
}

/// The headline table: success (pooled, and pass^1 where they differ), pass^k at each model's k,
/// tasks passing every trial, tokens and time per successful task.
pub(super) fn headline(out: &mut String, s: &Summary, models: &[(&str, &ModelSummary)]) {
    let differ = trials_differ(models);
    let mut t = ModelTable::new(s, "", models);
    t.row("Conversations graded", |m| m.denominator_note.clone());
    let success = if differ {
        "Success rate, pooled over conversations"
    } else {
        "Success rate (pass^1)"
    };
    t.row(success, |m| {
        format!(
            "{}{}",
            percent_with_n(m.passes as u64, m.outcomes.graded as u64),
            excluded(m)
        )
    });
    let mark = super::stopping::mark(s);
    t.row(format!("  95% CI{mark}, tasks as clusters"), |m| {
        m.success_ci95
            .map_or(NOT_AVAILABLE.into(), |i| ci_percent(i.low, i.high))
    });
    if differ {
        t.row("pass^1, mean over tasks of each task's success", |m| {
            format!(
                "{}{}",
                opt(m.pass_hat_k.get(&1).copied(), percent),
                excluded(m)
            )
        });
    }
    t.row(
        "All k trials of a task succeed (pass^k, k = the model's fewest trials)",
        |m| format!("{}{}", own_pass_hat_k(m), excluded(m)),
    );
    t.row("Tasks passing every trial", |m| {
        format!(
            "{} of {}",
            m.tasks_passing_every_trial,
            counted(m.tasks, "task")
        )
    });
    headline_costs(&mut t, s, models);
    out.push_str(&t.render());
    out.push('\n');
}

/// The headline's behaviour, token and time rows.
fn headline_costs(t: &mut ModelTable, s: &Summary, models: &[(&str, &ModelSummary)]) {
    t.row("Model calls per conversation", |m| {
        opt(m.behaviour.model_calls_per_conversation, |x| number(x, 2))
    });
    t.row("Tool errors (rejected calls) per conversation", |m| {
        opt(m.behaviour.rejected_calls_per_conversation, |x| {
            number(x, 2)
        })
    });
    t.row("Identified customer first", |m| {
        format!("{}{}", rate(m.behaviour.identify_first), excluded(m))
    });
    t.row("Tokens per conversation (agent calls; router apart)", |m| {
        opt(m.tokens.blended_per_conversation, tokens)
    });
    if models
        .iter()
        .any(|(_, m)| m.tokens.thinking_per_conversation.is_some())
    {
        t.row(
            "Thinking tokens per conversation (counted as output)",
            |m| opt(m.tokens.thinking_per_conversation, tokens),
        );
    }
    t.row(
        "**Tokens per successful task** (agent calls; router apart)",
        |m| {
            per_success(m.tokens.blended_per_success, m.passes, |x| {
                format!("**{}**", tokens(x))
            })
        },
    );
    t.row(
        format!(
            "Tokens per successful task, re-sent prefix at {}",
            percent(s.settings.cache_discount)
        ),
        |m| per_success(m.tokens.cached_blended_per_success, m.passes, tokens),
    );
    t.row("Latency per call", |m| {
        opt(m.latency.per_call_mean_s, seconds)
    });
    t.row("Latency per conversation, p50 / p95", |m| {
        match (m.latency.conversation_p50_s, m.latency.conversation_p95_s) {
            (Some(a), Some(b)) => format!("{} / {} s", number(a, 2), number(b, 2)),
            _ => NOT_AVAILABLE.into(),
        }
    });
    t.row(
        "**Time per successful task** (graded conversations, final attempts)",
        |m| {
            per_success(m.latency.time_per_success_s, m.passes, |x| {
                format!("**{}**", seconds(x))
            })
        },
    );
    t.row(
        "Time per successful task, every attempt (retries and fault-ended conversations included)",
        |m| per_success(m.latency.time_per_success_all_attempts_s, m.passes, seconds),
    );
}

/// Success by task category, each rate with its own denominator note when something was excluded.
fn by_category(out: &mut String, s: &Summary, models: &[(&str, &ModelSummary)]) {
    let cats: BTreeSet<&String> = models
        .iter()
        .flat_map(|(_, m)| m.by_category.keys())
        .collect();
    if cats.is_empty() {
        return;
    }
    out.push_str("### By category\n\n");
    let _ = writeln!(
        out,
        "Success rate (passes / graded conversations), with its 95% interval{} in brackets: \
         bootstrap over the category's tasks.\n",
        super::stopping::mark(s)
    );
    let mut t = ModelTable::new(s, "category", models);
    for c in cats {
        t.row(c.clone(), |m| {
            m.by_category.get(c).map_or_else(
                || NOT_AVAILABLE.into(),
                |x| {
                    let note = if x.outcomes.graded == x.outcomes.total {
                        String::new()
                    } else {
                        format!(" ({})", x.denominator_note)
                    };
                    format!(
                        "{} {}{note}",
                        percent_with_n(x.passes as u64, x.conversations as u64),
                        bracketed_ci(x.ci95)
                    )
                },
            )
        });
    }
    out.push_str(&t.render());
    out.push('\n');
}

/// A share's interval in brackets, `[27%–55%]`; empty when there is none.
fn bracketed_ci(ci: Option<Interval>) -> String {
    ci.map_or(String::new(), |i| {
        format!("[{}]", ci_percent(i.low, i.high))
    })
}

/// pass^k for every k, with and without text-call recovery.
fn pass_hat_k_tables(out: &mut String, s: &Summary, models: &[(&str, &ModelSummary)]) {
    let kmax = models
        .iter()
        .map(|(_, m)| m.trials_per_task)
        .max()
        .unwrap_or(0);
    if kmax == 0 {
        return;
    }
    out.push_str("### pass^k\n\n");
    let _ = writeln!(
        out,
        "Chance that k trials of a task all succeed (unbiased estimator, averaged over tasks), with \
         its 95% interval{} in brackets: bootstrap over the model's tasks.\n",
        super::stopping::mark(s)
    );
    let mut t = ModelTable::new(s, "k", models);
    for k in 1..=kmax {
        t.row(k.to_string(), |m| {
            let ci = bracketed_ci(m.pass_hat_k_ci95.get(&k).copied());
            let value = opt(m.pass_hat_k.get(&k).copied(), percent);
            // An n/a row has no interval: no gap where it would stand.
            let value = if ci.is_empty() {
                value
            } else {
                format!("{value} {ci}")
            };
            format!("{value}{}", excluded(m))
        });
    }
    out.push_str(&t.render());
    out.push('\n');
    if models
        .iter()
        .any(|(_, m)| m.pass_hat_k_native_only != m.pass_hat_k)
    {
        out.push_str(
            "Without text-call recovery (a pass counts only if none of its accepted tool calls \
             was recovered from the reply text):\n\n",
        );
        let mut t = ModelTable::new(s, "k", models);
        for k in 1..=kmax {
            t.row(k.to_string(), |m| {
                opt(m.pass_hat_k_native_only.get(&k).copied(), percent)
            });
        }
        out.push_str(&t.render());
        out.push('\n');
    }
}

/// The denominators of a small-vs-large figure: `` `a`: n = 118 of 120; 2 transport; `b`: n = 120 ``.
fn pair_note(g: &GroupSummary, c: &crate::analysis::Comparison) -> String {
    let note = |m: &str| {
        g.models
            .get(m)
            .map_or(NOT_AVAILABLE.to_string(), |x| x.denominator_note.clone())
    };
    format!(
        "`{}`: {}; `{}`: {}",
        c.small,
        note(&c.small),
        c.large,
        note(&c.large)
    )
}

/// A break-even point: the ratio; `∞` when the small model never passed and the large one did
/// (no finite ratio, as in the resamples counted infinite); `n/a` naming the model with 0 correct
/// when the large one never passed. Without a finite point the summary holds no interval.
fn break_even_point(
    g: &GroupSummary,
    c: &crate::analysis::Comparison,
    value: Option<f64>,
) -> String {
    let passes = |m: &str| g.models.get(m).map_or(0, |x| x.passes);
    match (value, passes(&c.small), passes(&c.large)) {
        (Some(v), _, _) => ratio(v),
        (None, 0, 0) => NO_CORRECT.into(),
        (None, 0, _) => format!("∞ (`{}`: 0 correct)", c.small),
        (None, _, 0) => format!("{NOT_AVAILABLE} (`{}`: 0 correct)", c.large),
        (None, _, _) => NOT_AVAILABLE.into(),
    }
}

/// How a paired bootstrap's resamples split, every one of them accounted for: `both models passed
/// in 9,000; `a` never passed in 700 (an infinite ratio, kept in the interval); ...`.
/// `verbs` says what a success is (both models, one never, neither), e.g. ("passed", "never
/// passed", "passed") or ("were right", "was never right", "was right").
pub fn resample_split(
    (small, large): (&str, &str),
    [defined, infinite, zero, undefined]: [usize; 4],
    (both, never, neither): (&str, &str, &str),
) -> String {
    let n = |x: usize| number(x as f64, 0);
    format!(
        "both models {both} in {}; `{small}` {never} in {} (an infinite ratio, kept in the \
         interval); `{large}` {never} in {} (a ratio of 0, kept in the interval); neither {neither} \
         in {} (no ratio, left out)",
        n(defined),
        n(infinite),
        n(zero),
        n(undefined)
    )
}

/// The four resample counts of a bootstrap, in [`resample_split`]'s order.
macro_rules! split_counts {
    ($ci:expr) => {
        [
            $ci.resamples_with_defined_break_even,
            $ci.resamples_with_infinite_break_even,
            $ci.resamples_with_zero_break_even,
            $ci.resamples_without_break_even,
        ]
    };
}

fn break_even(out: &mut String, s: &Summary, g: &GroupSummary, c: &crate::analysis::Comparison) {
    let ci = &c.ci95;
    let notes = pair_note(g, c);
    out.push_str("### Break-even\n\n");
    let _ = writeln!(
        out,
        "How many times cheaper per token `{}` must be than `{}` to cost the same per successful \
         task (tokens per successful task, small / large; {notes}). Paired bootstrap over {}, \
         {} (seed {}): {}.\n",
        c.small,
        c.large,
        counted(ci.tasks, "task"),
        counted(ci.resamples, "resample"),
        ci.seed,
        resample_split(
            (&c.small, &c.large),
            split_counts!(ci),
            ("passed", "never passed", "passed")
        )
    );
    let mark = super::stopping::mark(s);
    let mut t = MarkdownTable::new(["break-even".into(), "ratio".into(), format!("95% CI{mark}")]);
    t.numeric_after_first();
    let ci_text = |i: Option<Interval>| i.map_or(NOT_AVAILABLE.into(), |i| ci_ratio(i.low, i.high));
    t.row([
        "Plain".to_string(),
        break_even_point(g, c, c.break_even),
        ci_text(ci.break_even),
    ]);
    t.row([
        format!("Re-sent prefix at {}", percent(s.settings.cache_discount)),
        break_even_point(g, c, c.break_even_cached),
        ci_text(ci.break_even_cached),
    ]);
    if c.break_even_pipeline.is_some() || ci.break_even_pipeline.is_some() {
        t.row([
            "Pipeline (router + orchestrator)".to_string(),
            break_even_point(g, c, c.break_even_pipeline),
            ci_text(ci.break_even_pipeline),
        ]);
    }
    for (w, v) in &c.break_even_by_output_weight {
        t.row([
            format!("Output tokens weighted {w}x"),
            break_even_point(g, c, *v),
            String::new(),
        ]);
    }
    if let Some(e) = c.break_even_energy {
        t.row([
            "Energy per successful task".to_string(),
            ratio(e),
            String::new(),
        ]);
    }
    out.push_str(&t.render());
    out.push('\n');
    let sequence = super::stopping::sequence_for(s, g).map_or(String::new(), |i| {
        format!("; confidence sequence {i}, valid after optional stopping")
    });
    let _ = writeln!(
        out,
        "Success-rate gap (large minus small): {}{sequence}, 95% CI{mark} {} ({notes}).\n",
        opt(c.success_rate_difference, points),
        ci.success_rate_difference
            .as_ref()
            .map_or(NOT_AVAILABLE.into(), ci_points)
    );
}

/// How many of a paired bootstrap's resamples gave an infinite break-even: `12 of 10,000`.
pub fn infinite_resamples(ci: &crate::analysis::bootstrap::TaskBootstrap) -> String {
    format!(
        "{} of {}",
        number(ci.resamples_with_infinite_break_even as f64, 0),
        number(ci.resamples as f64, 0)
    )
}

/// Every model against the reference model: success gap and break-even, each with its paired
/// bootstrap interval, and whether the model is on the cheapest-per-success frontier.
fn model_ladder(out: &mut String, s: &Summary, g: &GroupSummary) {
    let Some(reference) = s.reference_model.as_ref().filter(|_| !g.ladder.is_empty()) else {
        return;
    };
    let costs: Vec<(&str, f64, f64)> = g
        .models
        .iter()
        .filter_map(|(m, x)| Some((m.as_str(), x.success_rate?, x.tokens.blended_per_success?)))
        .collect();
    let front = crate::analysis::cost::frontier(&costs);
    let mark = super::stopping::mark(s);
    let _ = writeln!(
        out,
        "### Model ladder: every model against `{reference}`\n\n\
         Success gap = `{reference}` minus the model; break-even = the model's tokens per \
         successful task / `{reference}`'s (how many times cheaper per token it must be); each with \
         its paired bootstrap 95% interval{mark} over the tasks both ran; resamples in which the model \
         never passed and `{reference}` did give an infinite break-even, kept in the interval and \
         counted (\"∞ resamples\"). Frontier: no other model has at least the same success for \
         fewer tokens per success.\n"
    );
    let mut t = MarkdownTable::new([
        "model".to_string(),
        "success (n)".to_string(),
        format!("success gap [95% CI{mark}]"),
        format!("break-even [95% CI{mark}]"),
        "∞ resamples".to_string(),
        "tokens per success".to_string(),
        "frontier".to_string(),
    ]);
    t.numeric_after_first();
    for (name, m) in group_models(s, g) {
        let on = if front.contains(&name) { "yes" } else { "" };
        let base = [percent_with_n(m.passes as u64, m.outcomes.graded as u64) + &excluded(m)];
        let pair = g.ladder.get(name).map_or_else(
            || ["(reference)".to_string(), String::new(), String::new()],
            |c| {
                [
                    format!(
                        "{} [{}]",
                        opt(c.success_rate_difference, points),
                        c.ci95
                            .success_rate_difference
                            .as_ref()
                            .map_or(NOT_AVAILABLE.into(), ci_points)
                    ),
                    format!(
                        "{} [{}]",
                        break_even_point(g, c, c.break_even),
                        c.ci95
                            .break_even
                            .map_or(NOT_AVAILABLE.into(), |i| ci_ratio(i.low, i.high))
                    ),
                    infinite_resamples(&c.ci95),
                ]
            },
        );
        let mut row = vec![format!("`{name}`")];
        row.extend(base);
        row.extend(pair);
        row.push(per_success(m.tokens.blended_per_success, m.passes, tokens));
        row.push(on.to_string());
        t.row(row);
    }
    out.push_str(&t.render());
    out.push('\n');
}

fn latency(out: &mut String, s: &Summary, models: &[(&str, &ModelSummary)]) {
    if models.iter().any(|(_, m)| m.latency.fit.is_some()) {
        out.push_str("### Latency fit\n\n");
        out.push_str(
            "Per model call: latency = fixed + output tokens / decode speed + input term.\n\n",
        );
        let mut t = ModelTable::new(s, "", models);
        // A fit that means nothing on these calls prints no coefficient, only why.
        let fit = |m: &ModelSummary| {
            m.latency
                .fit
                .clone()
                .filter(|f| f.not_identifiable.is_none())
        };
        let flagged = |m: &ModelSummary| m.latency.fit.as_ref()?.not_identifiable.clone();
        if models.iter().any(|(_, m)| flagged(m).is_some()) {
            t.row("Fit", |m| {
                flagged(m).map_or_else(
                    || "identified".into(),
                    |why| format!("not identifiable on these calls ({why})"),
                )
            });
        }
        t.row("Fixed time per call", |m| {
            opt(fit(m).map(|f| f.fixed_s_per_call), seconds)
        });
        t.row("Decode speed", |m| {
            opt(fit(m).map(|f| f.decode_tokens_per_s), |x| {
                format!("{} tokens/s", number(x, 0))
            })
        });
        t.row("Input term per 1,000 input tokens", |m| {
            opt(fit(m).map(|f| f.s_per_1k_input_tokens), |x| {
                format!("{} s", fixed(x, 3))
            })
        });
        t.row("Calls in the fit", |m| {
            m.latency
                .fit
                .as_ref()
                .map_or(NOT_AVAILABLE.into(), |f| number(f.calls as f64, 0))
        });
        out.push_str(&t.render());
        out.push('\n');
    }
    if models
        .iter()
        .any(|(_, m)| m.latency.ollama_timing.is_some())
    {
        out.push_str("### Time per call, from Ollama's own durations\n\n");
        let mut t = ModelTable::new(s, "", models);
        let split = |m: &ModelSummary| m.latency.ollama_timing.clone();
        t.row("Model time (prompt eval + eval)", |m| {
            opt(split(m).map(|x| x.model_s_per_call), seconds)
        });
        t.row(
            "Request overhead (latency minus model time), mean / p50",
            |m| {
                split(m).map_or(NOT_AVAILABLE.into(), |x| {
                    format!(
                        "{} / {} s",
                        fixed(x.overhead_s_per_call, 3),
                        fixed(x.overhead_s_p50, 3)
                    )
                })
            },
        );
        t.row("Decode speed (output tokens / eval time)", |m| {
            opt(split(m).and_then(|x| x.decode_tokens_per_s), |x| {
                format!("{} tokens/s", number(x, 0))
            })
        });
        t.row("Prefill speed (prompt tokens / prompt eval time)", |m| {
            split(m).map_or(NOT_AVAILABLE.into(), |x| {
                opt(x.prefill_tokens_per_s, |v| {
                    let over = if x.prefill_over_uncached {
                        "uncached prompt tokens"
                    } else {
                        "all prompt tokens"
                    };
                    format!("{} tokens/s (over {over})", number(v, 0))
                })
            })
        });
        t.row("Calls", |m| {
            split(m).map_or(NOT_AVAILABLE.into(), |x| number(x.calls as f64, 0))
        });
        out.push_str(&t.render());
        out.push('\n');
        if models
            .iter()
            .any(|(_, m)| split(m).is_some_and(|x| !x.prefill_over_uncached))
        {
            out.push_str(
                "Prefill speed over all prompt tokens counts those Ollama served from its prompt \
                 cache, whose time is not in the prompt eval time: it overstates the speed \
                 wherever the cache served some (the server gave no cached count to subtract).\n\n",
            );
        }
    }
}

fn context_growth(out: &mut String, s: &Summary, models: &[(&str, &ModelSummary)]) {
    let calls: BTreeSet<usize> = models
        .iter()
        .flat_map(|(_, m)| m.context_growth.keys().copied())
        .collect();
    if calls.is_empty() {
        return;
    }
    out.push_str("### Context growth\n\n");
    out.push_str(
        "Mean input tokens of the j-th model call, over the conversations that reached it (shown \
         where at least 5 did).\n\n",
    );
    let mut t = ModelTable::new(s, "call", models);
    for j in calls {
        t.row(format!("Call {}", j + 1), |m| {
            m.context_growth.get(&j).map_or(NOT_AVAILABLE.into(), |p| {
                format!("{} (n={})", tokens(p.mean_input_tokens), p.conversations)
            })
        });
    }
    out.push_str(&t.render());
    out.push('\n');
}

fn taxonomy(out: &mut String, s: &Summary, models: &[(&str, &ModelSummary)]) {
    out.push_str("### Failure taxonomy\n\n");
    out.push_str(
        "How conversations ended (transport and protocol failures are excluded from every rate), \
         and every model call by bucket.\n\n",
    );
    let mut t = ModelTable::new(s, "", models);
    t.row("Conversations", |m| number(m.outcomes.total as f64, 0));
    t.row("Passed", |m| number(m.outcomes.pass as f64, 0));
    t.row("Failed (model)", |m| {
        number(m.outcomes.model_fail as f64, 0)
    });
    t.row("Transport failure (excluded)", |m| {
        number(m.outcomes.transport_fail as f64, 0)
    });
    t.row("Protocol failure (excluded)", |m| {
        number(m.outcomes.protocol_fail as f64, 0)
    });
    call_bucket_rows(&mut t, "Agent model calls", |m| Some(&m.calls));
    if models.iter().any(|(_, m)| m.router_calls.is_some()) {
        call_bucket_rows(&mut t, "Router calls in front (apart)", |m| {
            m.router_calls.as_ref()
        });
    }
    out.push_str(&t.render());
    out.push('\n');
    out.push_str("Failure modes of failed conversations:\n\n");
    let mut t = ModelTable::new(s, "failure mode", models);
    for f in FailureMode::ALL {
        t.row(f.describe(), |m| {
            number(
                m.failure_modes.by_mode.get(&f).copied().unwrap_or(0) as f64,
                0,
            )
        });
    }
    t.row("unlabelled", |m| {
        number(m.failure_modes.unlabelled as f64, 0)
    });
    out.push_str(&t.render());
    out.push('\n');
}

/// The rows of one set of call buckets, each label prefixed by `what`.
fn call_bucket_rows(
    t: &mut ModelTable,
    what: &str,
    of: impl Fn(&ModelSummary) -> Option<&crate::analysis::taxonomy::CallBuckets>,
) {
    type Field = fn(&crate::analysis::taxonomy::CallBuckets) -> usize;
    let rows: [(&str, Field); 7] = [
        ("", |b| b.calls),
        (": ok", |b| b.ok),
        (": failed, transport", |b| b.transport),
        (": failed, protocol", |b| b.protocol),
        (": retries (attempts beyond the first)", |b| b.retries),
        (": truncated replies (hit num_predict)", |b| b.truncated),
        (": context overflow", |b| b.context_overflow),
    ];
    for (label, field) in rows {
        t.row(format!("{what}{label}"), |m| {
            of(m).map_or(NOT_AVAILABLE.into(), |b| number(field(b) as f64, 0))
        });
    }
}

fn keyed(by_key: &BTreeMap<String, usize>) -> String {
    if by_key.is_empty() {
        return String::new();
    }
    let parts: Vec<String> = by_key.iter().map(|(k, n)| format!("{k}: {n}")).collect();
    format!(" ({})", parts.join(", "))
}

fn behaviour(out: &mut String, s: &Summary, models: &[(&str, &ModelSummary)]) {
    out.push_str("### Behaviour\n\n");
    let mut t = ModelTable::new(s, "", models);
    t.row("Tool calls per conversation", |m| {
        opt(m.behaviour.tool_calls_per_conversation, |x| number(x, 2))
    });
    t.row("Rejected tool calls", |m| {
        number(m.behaviour.rejected_calls as f64, 0)
    });
    t.row("Malformed calls", |m| {
        number(m.behaviour.malformed_calls as f64, 0)
    });
    t.row(
        "Tool calls not executed (beside native calls, or past 8 per reply)",
        |m| number(m.behaviour.unexecuted_calls as f64, 0),
    );
    t.row("Conversations stopped by the call cap", |m| {
        number(m.behaviour.loop_caps as f64, 0)
    });
    t.row(
        "Schema-copy calls (JSON-schema argument), by argument",
        |m| {
            format!(
                "{}{}",
                m.behaviour.schema_copy.calls,
                keyed(&m.behaviour.schema_copy.by_key)
            )
        },
    );
    t.row(
        "Example-copy calls (documented example value), by value",
        |m| {
            if m.behaviour.conversations_shown_examples == 0 {
                return format!("{NOT_AVAILABLE} (no examples shown: bare tool docs)");
            }
            format!(
                "{}{}",
                m.behaviour.example_copy.calls,
                keyed(&m.behaviour.example_copy.by_key)
            )
        },
    );
    t.row("Model calls with native tool calls", |m| {
        number(m.behaviour.call_formats.native_calls as f64, 0)
    });
    t.row("Model calls with tool calls in the text", |m| {
        number(m.behaviour.call_formats.text_calls as f64, 0)
    });
    t.row("Model calls with a malformed tool call", |m| {
        number(m.behaviour.call_formats.malformed_calls as f64, 0)
    });
    t.row("Model calls without a tool call", |m| {
        number(m.behaviour.call_formats.no_tool_call as f64, 0)
    });
    out.push_str(&t.render());
    out.push('\n');
}

fn quality(out: &mut String, s: &Summary, models: &[(&str, &ModelSummary)]) {
    out.push_str("### Trajectory and answer\n\n");
    out.push_str(
        "Graded conversations by whether the gold tool sequence was followed (trajectory) and \
         whether the end state and replies were right (answer).\n\n",
    );
    let mut t = ModelTable::new(s, "", models);
    let n = |x: usize| number(x as f64, 0);
    t.row("Right trajectory, right answer", |m| {
        n(m.four_state.right_path_right_answer)
    });
    t.row("Right trajectory, wrong answer", |m| {
        n(m.four_state.right_path_wrong_answer)
    });
    t.row("Wrong trajectory, right answer", |m| {
        n(m.four_state.wrong_path_right_answer)
    });
    t.row("Wrong trajectory, wrong answer", |m| {
        n(m.four_state.wrong_path_wrong_answer)
    });
    t.row("Trajectory unknown", |m| n(m.four_state.trajectory_unknown));
    t.row("Steps per correct answer (tasks that need tools)", |m| {
        per_success(
            m.four_state.steps_per_correct_answer,
            m.four_state.tool_task_passes,
            |x| number(x, 2),
        )
    });
    out.push_str(&t.render());
    out.push('\n');

    out.push_str(
        "Control flow (share of conversations flagged, among those the suite can judge):\n\n",
    );
    let mut t = ModelTable::new(s, "", models);
    t.row("Unknown tool name called", |m| {
        format!("{}{}", rate(m.control_flow.unknown_verb), excluded(m))
    });
    t.row("Stated a fact without the lookup (under-tooled)", |m| {
        format!("{}{}", rate(m.control_flow.under_tool), excluded(m))
    });
    t.row("More calls than the gold trajectory (overrun)", |m| {
        format!("{}{}", rate(m.control_flow.loop_overrun), excluded(m))
    });
    t.row("Model turns on a rule-resolved task (over-modelled)", |m| {
        format!("{}{}", rate(m.control_flow.over_model), excluded(m))
    });
    out.push_str(&t.render());
    out.push('\n');

    out.push_str("Noise (disagreement among the trials of a task):\n\n");
    let mut t = ModelTable::new(s, "", models);
    t.row("Mean share of trials disagreeing with the majority", |m| {
        opt(m.noise.mean, percent)
    });
    t.row("Tasks with any disagreement", |m| {
        format!("{} of {}", m.noise.tasks_with_disagreement, m.tasks)
    });
    out.push_str(&t.render());
    out.push('\n');
}

fn gpu(out: &mut String, s: &Summary, models: &[(&str, &ModelSummary)]) {
    out.push_str("### GPU\n\n");
    if models.iter().all(|(_, m)| m.gpu.is_none()) {
        out.push_str("No GPU telemetry recorded.\n\n");
        return;
    }
    let mut t = ModelTable::new(s, "", models);
    let g = |m: &ModelSummary| m.gpu.clone();
    let of_calls = |n: usize, x: &crate::analysis::gpu::GpuSummary| {
        format!("{} of {}", number(n as f64, 0), counted(x.calls, "call"))
    };
    t.row("Calls with GPU samples", |m| {
        g(m).map_or("no GPU telemetry".into(), |x| {
            of_calls(x.calls_with_samples, &x)
        })
    });
    t.row("Calls with an energy reading", |m| {
        g(m).map_or(NOT_AVAILABLE.into(), |x| of_calls(x.calls_with_energy, &x))
    });
    t.row("Utilization, mean / max", |m| {
        g(m).map_or(NOT_AVAILABLE.into(), |x| {
            format!(
                "{} / {}",
                opt(x.util_mean_pct, |v| format!("{}%", fixed(v, 0))),
                opt(x.util_max_pct, |v| format!("{}%", fixed(v, 0)))
            )
        })
    });
    t.row("Memory in use, max", |m| {
        opt(g(m).and_then(|x| x.mem_used_max_mib), |v| {
            format!("{} MiB", number(v, 0))
        })
    });
    t.row("Power, mean", |m| {
        opt(g(m).and_then(|x| x.power_mean_w), |v| {
            format!("{} W", number(v, 0))
        })
    });
    t.row("Energy", |m| {
        opt(g(m).and_then(|x| x.energy_j), |v| {
            format!("{} J", number(v, 0))
        })
    });
    t.row("**Energy per successful task**", |m| {
        per_success(g(m).and_then(|x| x.energy_per_success_j), m.passes, |v| {
            format!("**{} J**", number(v, 1))
        })
    });
    out.push_str(&t.render());
    out.push('\n');
}

/// CPU and memory of the model server's process on this machine (never GPU figures).
fn server_process(out: &mut String, s: &Summary, models: &[(&str, &ModelSummary)]) {
    if models.iter().all(|(_, m)| m.server_process.is_none()) {
        return;
    }
    out.push_str("### Server process (CPU and memory)\n\n");
    out.push_str(
        "The process listening on the server's port on this machine, with its children \
         (Ollama's model runners); not the GPU.\n\n",
    );
    let mut t = ModelTable::new(s, "", models);
    let p = |m: &ModelSummary| m.server_process.clone();
    t.row("Calls with server-process samples", |m| {
        p(m).map_or(NOT_AVAILABLE.into(), |x| {
            format!(
                "{} of {}",
                number(x.calls_with_samples as f64, 0),
                counted(x.calls, "call")
            )
        })
    });
    t.row("Server CPU, mean (% of one core)", |m| {
        opt(p(m).and_then(|x| x.cpu_mean_pct), |v| {
            format!("{}%", fixed(v, 0))
        })
    });
    t.row("Server resident memory, max", |m| {
        opt(p(m).and_then(|x| x.rss_max_mib), |v| {
            format!("{} MiB", number(v, 0))
        })
    });
    out.push_str(&t.render());
    out.push('\n');
}

fn pipeline(out: &mut String, s: &Summary, models: &[(&str, &ModelSummary)]) {
    if models.iter().all(|(_, m)| m.pipeline.is_none()) {
        return;
    }
    out.push_str("### Pipeline (router in front of the agent)\n\n");
    let mut t = ModelTable::new(s, "", models);
    let p = |m: &ModelSummary| m.pipeline.clone();
    t.row("Router calls per conversation", |m| {
        opt(p(m).map(|x| x.router_calls_per_conversation), |v| {
            number(v, 2)
        })
    });
    t.row("Router tokens per conversation", |m| {
        opt(
            p(m).map(|x| x.router_blended_tokens_per_conversation),
            tokens,
        )
    });
    t.row("Router share of pipeline tokens", |m| {
        opt(p(m).and_then(|x| x.router_share_of_tokens), percent)
    });
    t.row("Router latency per call", |m| {
        opt(p(m).and_then(|x| x.router_latency_per_call_s), seconds)
    });
    t.row(
        "**Pipeline tokens per successful task** (router included)",
        |m| {
            per_success(
                p(m).and_then(|x| x.blended_tokens_per_success),
                m.passes,
                |v| format!("**{}**", tokens(v)),
            )
        },
    );
    t.row("**Pipeline time per successful task**", |m| {
        per_success(p(m).and_then(|x| x.time_per_success_s), m.passes, |v| {
            format!("**{}**", seconds(v))
        })
    });
    let labels: BTreeSet<&String> = models
        .iter()
        .filter_map(|(_, m)| m.pipeline.as_ref())
        .flat_map(|p| p.router_label_counts.keys())
        .collect();
    for label in labels {
        t.row(format!("Router predicted `{label}`"), |m| {
            p(m).map_or(NOT_AVAILABLE.into(), |x| {
                number(
                    x.router_label_counts.get(label).copied().unwrap_or(0) as f64,
                    0,
                )
            })
        });
    }
    out.push_str(&t.render());
    out.push('\n');
}

/// The configurations of each budget sweep, keyed by what they share: everything in the group
/// key but the cap (`store`, `store/toolless`, `store/docs=bare/router=on`).
fn sweeps(s: &Summary) -> BTreeMap<String, Vec<(u32, &GroupSummary)>> {
    let mut out: BTreeMap<String, Vec<(u32, &GroupSummary)>> = BTreeMap::new();
    for (key, g) in &s.groups {
        if let Some(cap) = g.call_cap {
            let shared = key.strip_suffix(&format!("/cap={cap}")).unwrap_or(key);
            out.entry(shared.to_string()).or_default().push((cap, g));
        }
    }
    for v in out.values_mut() {
        v.sort_by_key(|(cap, _)| *cap);
    }
    out.retain(|_, v| v.len() > 1);
    out
}

/// What tools add: the agent beside its toolless baseline, per model, paired on shared tasks.
fn tools_add(out: &mut String, s: &Summary) {
    if s.tools_add.is_empty() {
        return;
    }
    out.push_str("## What tools add\n\n");
    out.push_str(
        "The agent beside the toolless baseline of the same run (one call per customer message, no \
         tools), over the tasks both graded. The baseline is graded on what a model without tools can \
         achieve: the answer checks; a task that requires an action fails as `action_required`. The \
         interval is the paired task bootstrap of the difference.\n\n",
    );
    let mut keys: Vec<&String> = s.tools_add.keys().collect();
    keys.sort_by_cached_key(|k| group_order(k));
    for key in keys {
        let models = &s.tools_add[key];
        let _ = writeln!(out, "`{key}`\n");
        let mut t = MarkdownTable::new([
            "model".to_string(),
            "tasks".to_string(),
            "agent success (passes/graded)".to_string(),
            "toolless success (passes/graded)".to_string(),
            "tools add".to_string(),
            format!("95% CI{}", super::stopping::mark(s)),
        ]);
        t.numeric_after_first();
        let note = |group: &str, model: &str| {
            s.groups
                .get(group)
                .and_then(|g| g.models.get(model))
                .map_or_else(String::new, excluded)
        };
        let toolless_group = crate::analysis::tools_add::toolless_key(key);
        for model in s.models.iter().filter(|m| models.contains_key(*m)) {
            let a = &models[model];
            t.row([
                model.clone(),
                a.tasks.to_string(),
                percent_with_n(a.agent_passes as u64, a.agent_graded as u64) + &note(key, model),
                percent_with_n(a.toolless_passes as u64, a.toolless_graded as u64)
                    + &note(&toolless_group, model),
                opt(a.difference, points),
                a.ci95.as_ref().map_or(NOT_AVAILABLE.into(), ci_points),
            ]);
        }
        out.push_str(&t.render());
        out.push('\n');
    }
}

fn budget_sweep(out: &mut String, s: &Summary) {
    for (shared, caps) in sweeps(s) {
        let _ = writeln!(out, "## Budget sweep: `{shared}`\n");
        out.push_str(
            "Success rate and steps per correct answer by call cap (model calls per turn).\n\n",
        );
        let models: Vec<&String> = s
            .models
            .iter()
            .filter(|m| caps.iter().any(|(_, g)| g.models.contains_key(*m)))
            .collect();
        let mut header = vec!["call cap".to_string()];
        for m in &models {
            let h = model_header(s, m);
            header.push(format!("{h}: success"));
            header.push(format!("{h}: steps per correct answer"));
        }
        let mut t = MarkdownTable::new(header);
        t.numeric_after_first();
        for (cap, g) in &caps {
            let mut row = vec![cap.to_string()];
            for m in &models {
                match g.models.get(*m) {
                    Some(ms) => {
                        row.push(format!(
                            "{}{}",
                            percent_with_n(ms.passes as u64, ms.outcomes.graded as u64),
                            excluded(ms)
                        ));
                        row.push(per_success(
                            ms.four_state.steps_per_correct_answer,
                            ms.four_state.tool_task_passes,
                            |x| number(x, 2),
                        ));
                    }
                    None => {
                        row.push(NOT_AVAILABLE.into());
                        row.push(NOT_AVAILABLE.into());
                    }
                }
            }
            t.row(row);
        }
        out.push_str(&t.render());
        out.push('\n');
    }
}

/// How many router calls a model made: `messages x runs = calls` when every message ran equally
/// often (the product is computed, never assumed), else the messages and calls apart.
fn router_count_text(model: &str, r: &crate::analysis::router::RouterSummary) -> String {
    let recorded = r.outcomes.total;
    let note = r.outcomes.denominator_note();
    if r.messages > 0 && recorded.is_multiple_of(r.messages) {
        let runs = recorded / r.messages;
        format!(
            "`{model}`: {} x {} = {} ({note})",
            counted(r.messages, "message"),
            counted(runs, "run"),
            counted(r.messages * runs, "call")
        )
    } else {
        format!(
            "`{model}`: {} over {} ({note})",
            counted(recorded, "call"),
            counted(r.messages, "message")
        )
    }
}

fn router(out: &mut String, s: &Summary) {
    if s.router.is_empty() {
        return;
    }
    out.push_str("## Router (leaf node)\n\n");
    let models: Vec<(&str, &crate::analysis::router::RouterSummary)> = s
        .models
        .iter()
        .filter_map(|m| s.router.get(m).map(|r| (m.as_str(), r)))
        .collect();
    let counts: Vec<String> = models
        .iter()
        .map(|(m, r)| router_count_text(m, r))
        .collect();
    let _ = writeln!(out, "{}.\n", counts.join("; "));
    let ci_of = |model: &str| s.router.get(model).and_then(|r| r.accuracy_ci95);
    let mut header = vec![String::new()];
    header.extend(models.iter().map(|(m, _)| model_header(s, m)));
    let mut t = MarkdownTable::new(header);
    t.numeric_after_first();
    let rows = router_rows(&ci_of, super::stopping::mark(s));
    for (label, f) in &rows {
        let mut cells = vec![label.clone()];
        cells.extend(models.iter().map(|(m, r)| f(m, r)));
        t.row(cells);
    }
    out.push_str(&t.render());
    out.push('\n');
    if let Some(c) = s.router_comparison.as_ref() {
        router_break_even(out, s, c, super::stopping::mark(s));
    }
}

/// One row of the router table: its label and how a model's cell is written.
type RouterRow<'r> = (
    String,
    Box<dyn Fn(&str, &crate::analysis::router::RouterSummary) -> String + 'r>,
);

/// The router table's rows; `ci_of` gives a model's accuracy interval where one was computed.
fn router_rows<'r>(ci_of: &'r dyn Fn(&str) -> Option<Interval>, mark: &str) -> Vec<RouterRow<'r>> {
    vec![
        (
            "Accuracy".into(),
            Box::new(|_, r| {
                let ex = if r.outcomes.graded == r.outcomes.total {
                    String::new()
                } else {
                    format!(" ({})", r.outcomes.denominator_note())
                };
                format!("{}{ex}", percent_with_n(r.correct as u64, r.calls as u64))
            }),
        ),
        (
            format!("  95% CI{mark}, messages as clusters"),
            Box::new(|m, _| ci_of(m).map_or(NOT_AVAILABLE.into(), |i| ci_percent(i.low, i.high))),
        ),
        (
            "Unparseable replies".into(),
            Box::new(|_, r| opt(r.unparseable, percent)),
        ),
        (
            "Tokens per call (input / output)".into(),
            Box::new(
                |_, r| match (r.input_tokens_per_call, r.output_tokens_per_call) {
                    (Some(a), Some(b)) => format!("{} / {}", tokens(a), number(b, 1)),
                    _ => NOT_AVAILABLE.into(),
                },
            ),
        ),
        (
            "Blended tokens per call".into(),
            Box::new(|_, r| opt(r.blended_tokens_per_call, tokens)),
        ),
        (
            "**Tokens per correct call**".into(),
            Box::new(|_, r| {
                per_success(r.blended_tokens_per_correct, r.correct, |v| {
                    format!("**{}**", tokens(v))
                })
            }),
        ),
        (
            "Latency per call, mean / p95".into(),
            Box::new(|_, r| match (r.latency_per_call_s, r.latency_p95_s) {
                (Some(a), Some(b)) => format!("{} / {} s", number(a, 2), number(b, 2)),
                _ => NOT_AVAILABLE.into(),
            }),
        ),
        (
            "Fastest call".into(),
            Box::new(|_, r| {
                r.fastest_call.as_ref().map_or(NOT_AVAILABLE.into(), |f| {
                    format!(
                        "{} for {} output tokens",
                        seconds(f.latency_s),
                        f.output_tokens
                    )
                })
            }),
        ),
        (
            "Model time (Ollama)".into(),
            Box::new(|_, r| {
                opt(r.ollama_timing.as_ref().map(|x| x.model_s_per_call), |v| {
                    format!("{} s", fixed(v, 3))
                })
            }),
        ),
        (
            "Request overhead, mean / p50".into(),
            Box::new(|_, r| {
                r.ollama_timing.as_ref().map_or(NOT_AVAILABLE.into(), |x| {
                    format!(
                        "{} / {} s",
                        fixed(x.overhead_s_per_call, 3),
                        fixed(x.overhead_s_p50, 3)
                    )
                })
            }),
        ),
        (
            "Temperature".into(),
            Box::new(|_, r| opt(r.temperature, |v| fixed(v, 2))),
        ),
    ]
}

/// The sentence under the router table: the break-even price ratio of the pair and its interval,
/// `n/a` naming the model never right when one was not (the agent's rule).
fn router_break_even(
    out: &mut String,
    s: &Summary,
    c: &crate::analysis::RouterComparison,
    mark: &str,
) {
    let correct = |m: &str| s.router.get(m).map_or(0, |r| r.correct);
    let point = match (c.break_even, correct(&c.small), correct(&c.large)) {
        (Some(v), _, _) => format!("**{}**", ratio(v)),
        (None, 0, 0) => NO_CORRECT.into(),
        (None, 0, _) => format!("∞ (`{}`: 0 correct)", c.small),
        (None, _, 0) => format!("{NOT_AVAILABLE} (`{}`: 0 correct)", c.large),
        (None, _, _) => NOT_AVAILABLE.into(),
    };
    let ci = &c.ci95;
    let _ = writeln!(
        out,
        "Router break-even: how many times cheaper per token `{}` must be than `{}` to cost the \
         same per correct call: {point} (95% CI{mark} {}, paired bootstrap over {}, {}: {}).\n",
        c.small,
        c.large,
        ci.break_even
            .map_or(NOT_AVAILABLE.into(), |i| ci_ratio(i.low, i.high)),
        counted(ci.messages, "message"),
        counted(ci.resamples, "resample"),
        resample_split(
            (&c.small, &c.large),
            split_counts!(ci),
            ("were right", "was never right", "was right")
        )
    );
}

pub(super) fn warnings(out: &mut String, r: &Report) {
    let s = r.summary;
    let mut items: Vec<String> = Vec::new();
    for m in &s.partly_on_cpu {
        items.push(if s.on_cpu.contains(m) {
            format!(
                "`{m}` ran on the CPU (no VRAM: `/api/ps` size_vram 0): its latency and energy \
                 are a CPU's, not those of a GPU-resident model."
            )
        } else {
            format!(
                "`{m}` ran partly on the CPU (`/api/ps` size_vram < size): its latency and energy \
                 are not those of a GPU-resident model."
            )
        });
    }
    // The preflight's own placement lines say what the sentences above say; each warning once.
    let placement = |w: &str| {
        w.contains(crate::runner::preflight::ON_CPU_WARNING)
            || w.contains(crate::runner::preflight::PARTLY_ON_CPU_WARNING)
    };
    let mut seen = BTreeSet::new();
    let rest = s.warnings.iter().chain(&r.notes);
    items.extend(
        rest.filter(|w| !placement(w) && seen.insert(w.as_str()))
            .cloned(),
    );
    if items.is_empty() {
        return;
    }
    out.push_str("## Warnings\n\n");
    for w in items {
        let _ = writeln!(out, "- {}", escape_cell(&w));
    }
    out.push('\n');
}

// ---------------------------------------------------------------------------------------------
// Terminal table

/// The short table `passk report` prints on stdout: the headline figures of every configuration.
pub fn terminal_table(s: &Summary) -> String {
    let mut out = String::new();
    for (key, g) in ordered_groups(s) {
        let models = group_models(s, g);
        if models.is_empty() {
            continue;
        }
        let _ = writeln!(out, "{key}");
        let mut t = ModelTable::new(s, "", &models);
        t.row("Success", |m| {
            format!(
                "{}{}",
                percent_with_n(m.passes as u64, m.outcomes.graded as u64),
                excluded(m)
            )
        });
        t.row("pass^k at the model's k", own_pass_hat_k);
        t.row("Tasks passing every trial", |m| {
            format!("{} of {}", m.tasks_passing_every_trial, m.tasks)
        });
        t.row("Tokens per successful task (agent calls)", |m| {
            per_success(m.tokens.blended_per_success, m.passes, tokens)
        });
        t.row("Time per successful task (final attempts)", |m| {
            per_success(m.latency.time_per_success_s, m.passes, seconds)
        });
        out.push_str(&t.render());
        if let Some(c) = &g.comparison {
            let _ = writeln!(
                out,
                "Break-even {} (95% CI{} {}); success gap {}",
                break_even_point(g, c, c.break_even),
                super::stopping::mark(s),
                c.ci95
                    .break_even
                    .map_or(NOT_AVAILABLE.into(), |i| ci_ratio(i.low, i.high)),
                opt(c.success_rate_difference, points)
            );
        }
        out.push('\n');
    }
    if let Some(c) = &s.router_comparison {
        let acc = |m: &str| opt(s.router.get(m).and_then(|r| r.accuracy), percent);
        let _ = writeln!(
            out,
            "router: accuracy {} {} vs {} {}; break-even {}",
            c.small,
            acc(&c.small),
            c.large,
            acc(&c.large),
            opt(c.break_even, ratio)
        );
    }
    if let Some(p) = s.placement.as_ref().filter(|p| p.max_parallel > 1) {
        let _ = writeln!(
            out,
            "times above are at up to {} conversations at once per server: compare them only with \
             runs at that concurrency (report.md, \"Servers and concurrency\")",
            p.max_parallel
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::{AnalysisOptions, summarize};
    use crate::runner::record::{CallRecord, Node};

    fn conv(model: &str, task: &str, cap: u32, passed: bool) -> ConversationRecord {
        let mut call = CallRecord::new(Node::Orchestrator, 0, 0);
        call.wall_s = Some(1.0);
        let mut c = crate::analysis::fixtures::conversation(model, task, 0, passed, vec![call]);
        c.call_cap = cap;
        c
    }

    #[test]
    fn settings_say_off_and_on_and_leave_out_empty_lists() {
        let mut t = MarkdownTable::new(["setting", "value"]);
        settings_rows(
            &mut t,
            &serde_json::json!({"router_in_front": [false, true], "tasks": [], "stream": false}),
        );
        let md = t.render();
        assert!(md.contains("| router in front | off, on"), "{md}");
        assert!(!md.contains("| tasks"), "{md}");
        assert!(md.contains("| stream"), "{md}");
    }

    #[test]
    fn an_n_a_pass_k_row_has_no_double_space() {
        let manifest = Manifest {
            run_id: "r".into(),
            ..Manifest::default()
        };
        let mut recs = Vec::new();
        for task in ["T1", "T2"] {
            for trial in 0..2 {
                let mut c = conv("a", task, 8, true);
                c.trial = trial;
                recs.push(c);
            }
            recs.push(conv("b", task, 8, true));
        }
        let mut lost = conv("b", "T1", 8, false);
        lost.trial = 1;
        lost.outcome = crate::runner::record::Outcome::TransportFail;
        recs.push(lost);
        let s = summarize(&manifest, &recs, &[], &AnalysisOptions::default());
        let md = markdown(&Report::new(&manifest, &s, &recs, &[], vec![]));
        let row = line(&md, "2 ");
        assert!(row.contains("n/a (n = "), "{row}");
        assert!(!row.contains("  ("), "{row}");
    }

    #[test]
    fn number_formats() {
        assert_eq!(points(0.275), "+27.5 pp");
        assert_eq!(points(-0.05), "-5.0 pp");
        assert_eq!(points(0.0), "0.0 pp");
        let i = Interval {
            low: -0.031,
            high: 0.42,
        };
        assert_eq!(ci_points(&i), "-3 to +42 pp");
        assert_eq!(
            short_digest(&format!("sha256:{}", "a".repeat(64))),
            "a".repeat(12)
        );
        assert_eq!(
            short_digest("imported:0123456789abcdef"),
            "imported:0123456789ab"
        );
        assert_eq!(opt(None, percent), "n/a");
    }

    /// The line of `md` that starts with `| label`.
    fn line<'m>(md: &'m str, label: &str) -> &'m str {
        md.lines()
            .find(|l| l.starts_with(&format!("| {label}")))
            .unwrap_or_else(|| panic!("no row {label}: {md}"))
    }

    #[test]
    fn server_process_samples_without_nvml_are_never_called_gpu() {
        let manifest = Manifest {
            run_id: "r".into(),
            ..Manifest::default()
        };
        let mut recs = vec![conv("a", "T1", 8, true), conv("a", "T2", 8, true)];
        recs[0].calls[0].gpu = Some(crate::runner::record::GpuWindow {
            samples: 3,
            server_cpu_pct: Some(140.0),
            server_rss_mib: Some(812.0),
            ..Default::default()
        });
        let s = summarize(&manifest, &recs, &[], &AnalysisOptions::default());
        let md = markdown(&Report::new(&manifest, &s, &recs, &[], vec![]));
        assert!(md.contains("No GPU telemetry recorded."), "{md}");
        assert!(!md.contains("Calls with GPU samples"), "{md}");
        assert!(line(&md, "Calls with server-process samples").contains("1 of "));
        assert!(line(&md, "Server CPU, mean").contains("140%"), "{md}");
        assert!(line(&md, "Server resident memory").contains("812 MiB"));
    }

    #[test]
    fn headline_gives_each_model_its_own_k_and_every_rate_its_denominator() {
        let manifest = Manifest {
            run_id: "r".into(),
            ..Manifest::default()
        };
        let mut recs = Vec::new();
        // a: T1 three trials (2 pass), T2 one trial: k = 1 for a alone.
        for passed in [true, true, false] {
            recs.push(conv("a", "T1", 8, passed));
        }
        recs.push(conv("a", "T2", 8, true));
        recs[0].calls[0].gpu = Some(crate::runner::record::GpuWindow {
            samples: 2,
            util_mean: Some(50.0),
            ..Default::default()
        });
        // b: three trials of each, one ended by the transport.
        for task in ["T1", "T2"] {
            for _ in 0..3 {
                recs.push(conv("b", task, 8, true));
            }
        }
        recs.last_mut().unwrap().outcome = crate::runner::record::Outcome::TransportFail;
        let s = summarize(&manifest, &recs, &[], &AnalysisOptions::default());
        let r = Report::new(&manifest, &s, &recs, &[], vec![]);
        let md = markdown(&r);
        let all_k = line(&md, "All k trials");
        assert!(
            all_k.contains("pass^1: 83.3%") && all_k.contains("pass^2: 100.0%"),
            "{all_k}"
        );
        let every = line(&md, "Tasks passing every trial");
        assert!(every.contains("1 of 2 tasks") && every.contains("2 of 2 tasks"));
        // Pooled success (3/4) and pass^1 (mean of 2/3 and 1) differ for a: labelled apart.
        assert!(line(&md, "Success rate, pooled").contains("75.0% (3/4)"));
        assert!(line(&md, "pass^1, mean over tasks").contains("83.3%"));
        let note = "n = 5 of 6; 1 transport";
        assert!(line(&md, "lookup").contains(note), "{md}");
        let gap = md
            .lines()
            .find(|l| l.starts_with("Success-rate gap"))
            .unwrap();
        assert!(gap.contains(&format!("`b`: {note}")), "{gap}");
        let be = md
            .lines()
            .find(|l| l.starts_with("How many times"))
            .unwrap();
        assert!(be.contains(&format!("`b`: {note}")), "{be}");
        assert!(line(&md, "Calls with GPU samples").contains("1 of 4 calls"));
        // pass^k and category rates carry their bootstrap intervals.
        assert!(line(&md, "lookup").contains("75.0% (3/4) ["), "{md}");
        assert!(line(&md, "1 ").contains("83.3% ["), "{md}");
        let chart = crate::report::svg::line_chart(&crate::report::charts::pass_k(&r));
        assert!(
            chart.matches("opacity=\"0.8\"").count() >= 2,
            "error bars: {chart}"
        );
    }

    #[test]
    fn the_ladder_and_the_frontier_are_reported() {
        let (manifest, recs) = crate::analysis::fixtures::ladder_run();
        let opts = AnalysisOptions {
            resamples: 50,
            ..AnalysisOptions::default()
        };
        let s = summarize(&manifest, &recs, &[], &opts);
        let r = Report::new(&manifest, &s, &recs, &[], vec![]);
        let md = markdown(&r);
        assert!(
            md.contains("### Model ladder: every model against `m:14b`"),
            "{md}"
        );
        assert!(line(&md, "`m:1b`").contains("+33.3 pp ["), "{md}");
        assert!(line(&md, "`m:14b`").contains("(reference)"), "{md}");
        let chart = crate::report::svg::line_chart(&crate::report::charts::frontier_chart(
            &r,
            "t",
            "y",
            |m| m.tokens.blended_per_success,
        ));
        assert!(
            chart.contains("cheapest-per-success frontier: m:3b"),
            "{chart}"
        );
    }

    /// The ladder run's `m:1b` (passing T0 of T0..T2) and `m:14b`, which passes every task or none.
    fn pair_run(large_passes: bool) -> (Manifest, Vec<ConversationRecord>) {
        let (mut manifest, mut recs) = crate::analysis::fixtures::ladder_run();
        manifest.models.retain(|m| m.name != "m:3b");
        recs.retain(|c| c.model != "m:3b");
        for c in recs.iter_mut().filter(|c| c.model == "m:14b") {
            c.verdict.passed = large_passes;
            c.outcome = if large_passes {
                crate::runner::record::Outcome::Pass
            } else {
                crate::runner::record::Outcome::ModelFail
            };
        }
        (manifest, recs)
    }

    #[test]
    fn nothing_is_divided_by_an_empty_count() {
        // `m:1b` passes T0 only; `m:14b` never passes. On the router `m:1b` is never right.
        let (manifest, recs) = pair_run(false);
        let router: Vec<_> = (0..4)
            .flat_map(|i| {
                [
                    crate::analysis::fixtures::router_record("m:1b", i, false, None),
                    crate::analysis::fixtures::router_record("m:14b", i, i < 3, Some("a")),
                ]
            })
            .collect();
        let opts = AnalysisOptions {
            resamples: 200,
            ..AnalysisOptions::default()
        };
        let s = summarize(&manifest, &recs, &router, &opts);
        let c = s.groups["store"].comparison.as_ref().unwrap();
        // Point n/a: no interval, not `0.00x–0.00x`; every resample accounted for.
        assert_eq!((c.break_even, c.ci95.break_even), (None, None));
        let ci = &c.ci95;
        assert!(ci.resamples_with_zero_break_even > 0);
        assert_eq!(
            ci.resamples_with_zero_break_even + ci.resamples_without_break_even,
            200
        );
        assert_eq!(s.router["m:1b"].blended_tokens_per_correct, None);
        let rc = s.router_comparison.as_ref().unwrap();
        assert_eq!((rc.break_even, rc.ci95.break_even), (None, None));
        let md = markdown(&Report::new(&manifest, &s, &recs, &router, vec![]));
        assert!(
            line(&md, "**Tokens per successful task**").contains("n/a (0 correct)"),
            "{md}"
        );
        let plain: Vec<&str> = line(&md, "Plain").split('|').map(str::trim).collect();
        assert_eq!(plain[2..4], ["n/a (`m:14b`: 0 correct)", "n/a"], "{md}");
        assert!(
            md.contains(&format!(
                "`m:14b` never passed in {} (a ratio of 0, kept in the interval); neither passed in {}",
                ci.resamples_with_zero_break_even, ci.resamples_without_break_even
            )),
            "{md}"
        );
        assert!(
            line(&md, "**Tokens per correct call**").contains("n/a (0 correct)"),
            "{md}"
        );
        assert!(
            md.contains("per correct call: ∞ (`m:1b`: 0 correct) (95% CI n/a"),
            "{md}"
        );
    }

    #[test]
    fn intervals_leave_0_and_100_percent() {
        // `m:14b` passes all three tasks, every resample 100%; `m:1b` passes one.
        let (manifest, recs) = pair_run(true);
        let s = summarize(&manifest, &recs, &[], &AnalysisOptions::default());
        let md = markdown(&Report::new(&manifest, &s, &recs, &[], vec![]));
        let ci = line(&md, "  95% CI, tasks as clusters");
        assert!(!ci.contains("100%–100%"), "{ci}");
        assert!(ci.contains("29%–100%"), "{ci}");
        let all = &s.groups["store"].models["m:14b"];
        assert!(all.pass_hat_k_ci95[&1].low < 1.0);
        assert!(all.by_category.values().all(|c| c.ci95.unwrap().low < 1.0));
    }

    #[test]
    fn a_model_with_nothing_in_vram_reads_on_cpu_and_each_warning_once() {
        let (mut manifest, recs) = crate::analysis::fixtures::ladder_run();
        let gib = 1_073_741_824;
        let w = crate::runner::preflight::placement_warning("m:1b", 2 * gib, 0).unwrap();
        for m in manifest.models.iter_mut().filter(|m| m.name == "m:1b") {
            (m.size, m.size_vram, m.partly_on_cpu) = (Some(2 * gib), Some(0), true);
        }
        // A resumed run of old code stored the warm-up's warnings again.
        manifest.warnings = vec![
            w.clone(),
            w,
            "context shrank".into(),
            "context shrank".into(),
        ];
        let s = summarize(&manifest, &recs, &[], &AnalysisOptions::default());
        assert_eq!(s.on_cpu, ["m:1b"]);
        let md = markdown(&Report::new(&manifest, &s, &recs, &[], vec![]));
        assert!(md.contains("On CPU (no VRAM)"), "{md}");
        assert!(md.contains("`m:1b` ran on the CPU (no VRAM"), "{md}");
        assert!(!md.contains("partly on"), "{md}");
        assert!(!md.contains("Free VRAM"), "{md}");
        assert_eq!(md.matches("context shrank").count(), 1, "{md}");
    }

    #[test]
    fn a_regrade_note_reads_as_a_sentence_and_is_headed_by_what_it_says() {
        assert_eq!(
            regrade_line("the source folder's regrade.md records 9 grades changed: 6 pass"),
            "> **RE-GRADED AT THE SOURCE.** The source folder's regrade.md records 9 grades \
             changed: 6 pass.\n\n"
        );
        assert!(
            regrade_line("the source folder's regrade.md records 0 grades changed: the published")
                .starts_with("> **REGRADE NOTE AT THE SOURCE.** The source folder's")
        );
    }

    #[test]
    fn router_counts_multiply_out() {
        let mut r = crate::analysis::router::RouterSummary {
            messages: 100,
            ..Default::default()
        };
        r.outcomes.total = 300;
        r.outcomes.graded = 298;
        r.outcomes.transport_fail = 2;
        let text = router_count_text("m", &r);
        assert!(text.contains("100 messages x 3 runs = 300 calls"), "{text}");
        r.outcomes.total = 299;
        assert!(router_count_text("m", &r).contains("299 calls over 100 messages"));
        // One of each is said in the singular.
        r.messages = 1;
        r.outcomes.total = 1;
        let one = router_count_text("m", &r);
        assert!(one.contains("1 message x 1 run = 1 call ("), "{one}");
        r.messages = 2;
        let one = router_count_text("m", &r);
        assert!(one.contains("1 call over 2 messages"), "{one}");
    }

    #[test]
    fn budget_sweep_and_primary_group() {
        let manifest = Manifest {
            run_id: "r".into(),
            grader_digest: "g".into(),
            ..Manifest::default()
        };
        let recs = vec![
            conv("a", "T1", 4, false),
            conv("a", "T1", 10, true),
            conv("a", "T2", 4, true),
            conv("a", "T2", 10, true),
        ];
        let s = summarize(&manifest, &recs, &[], &AnalysisOptions::default());
        assert_eq!(
            primary_group(&s).map(|(k, _)| k.as_str()),
            Some("store/cap=10")
        );
        let r = Report::new(&manifest, &s, &recs, &[], vec!["a note".into()]);
        assert_eq!(
            r.observations.conversation_latency["store/cap=4"]["a"],
            [1.0, 1.0]
        );
        let md = markdown(&r);
        assert!(md.contains("## `store/cap=10`"), "{md}");
        assert!(md.contains("## `store/cap=4`"), "{md}");
        assert!(
            md.find("## `store/cap=4`") < md.find("## `store/cap=10`"),
            "groups in numeric order"
        );
        let table = terminal_table(&s);
        assert!(
            table.find("store/cap=4") < table.find("store/cap=10"),
            "{table}"
        );
        assert!(md.contains("## Budget sweep: `store`"), "{md}");
        let sweep = &md[md.find("## Budget sweep").expect("sweep")..];
        assert!(
            sweep.find("| 4 ") < sweep.find("| 10 "),
            "caps in numeric order: {sweep}"
        );
        assert!(
            sweep.contains("50.0% (1/2)") && sweep.contains("100.0% (2/2)"),
            "{sweep}"
        );
        assert!(md.contains("No GPU telemetry recorded."), "{md}");
        assert!(md.contains("- a note"), "{md}");
        assert_eq!(md, markdown(&r), "deterministic");
        let table = terminal_table(&s);
        assert!(
            table.contains("store/cap=4") && table.contains("100.0% (2/2)"),
            "{table}"
        );
    }
}
