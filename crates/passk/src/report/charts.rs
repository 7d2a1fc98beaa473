//! The report's charts (`charts/*.svg`, listed in `docs/reference/report.md`), built from a [`Report`]: each
//! function picks its values out of the summary (or the report's [`Observations`]) into one of the
//! [`svg`] data structs and renders it. The charts describe the primary group
//! ([`primary_group`]), each with a caption line ([`caption`]); a chart with nothing to draw is left
//! out ([`charts`]).
//!
//! [`Observations`]: super::document::Observations

use super::chart_files;
use super::document::{Report, group_models, opt, primary_group, tokens};
use super::number::{NOT_AVAILABLE, ci_ratio, counted, number, percent, ratio, seconds};
use super::svg::{
    self, Bar, BarChart, BarSeries, Distribution, DistributionChart, Heatmap, HeatmapPanel, Labels,
    LineChart, Marks, Reference, Series, StackedBars, StackedRow, XBand,
};
use crate::analysis::{GroupSummary, ModelSummary};
use crate::trace::FailureMode;
use std::collections::BTreeMap;

/// One chart of the report: its file inside `charts/`, the words `report.md` links it with, and
/// its SVG.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    /// File name inside `charts/` (a [`chart_files`] constant).
    pub file: &'static str,
    /// What it shows, as `report.md` and `report.html` name it.
    pub title: &'static str,
    /// The SVG document.
    pub svg: String,
}

/// A chart's data, drawn only when it has something to show.
enum Drawing {
    Line(LineChart),
    Bars(BarChart),
    Stacked(StackedBars),
    Distribution(DistributionChart),
    Heatmap(Heatmap),
}

impl Drawing {
    fn labels(&mut self) -> &mut Labels {
        match self {
            Drawing::Line(c) => &mut c.labels,
            Drawing::Bars(c) => &mut c.labels,
            Drawing::Stacked(c) => &mut c.labels,
            Drawing::Distribution(c) => &mut c.labels,
            Drawing::Heatmap(c) => &mut c.labels,
        }
    }

    /// Whether the chart has something to show (else it would only say "no data").
    fn has_data(&self) -> bool {
        match self {
            Drawing::Line(c) => c.has_data(),
            Drawing::Bars(c) => c.has_data(),
            Drawing::Stacked(c) => c.has_data(),
            Drawing::Distribution(c) => c.has_data(),
            Drawing::Heatmap(c) => c.has_data(),
        }
    }

    fn render(&self) -> String {
        match self {
            Drawing::Line(c) => svg::line_chart(c),
            Drawing::Bars(c) => svg::bar_chart(c),
            Drawing::Stacked(c) => svg::stacked_bars(c),
            Drawing::Distribution(c) => svg::distribution(c),
            Drawing::Heatmap(c) => svg::heatmap(c),
        }
    }
}

/// The report's charts that have something to show, in `docs/reference/report.md` order: a chart without data
/// (no GPU telemetry, no failures) is neither written nor linked.
pub fn charts(r: &Report) -> Vec<Chart> {
    drawings(r)
        .into_iter()
        .map(|(file, title, d)| Chart {
            file,
            title,
            svg: d.render(),
        })
        .collect()
}

/// The (file, title) of each chart [`charts`] writes, without drawing them (for `report.md`).
pub fn linked(r: &Report) -> Vec<(&'static str, &'static str)> {
    drawings(r)
        .into_iter()
        .map(|(file, title, _)| (file, title))
        .collect()
}

/// Every chart with data, as (file, title, data), each captioned and with ids of its own.
fn drawings(r: &Report) -> Vec<(&'static str, &'static str, Drawing)> {
    let drawings = [
        (chart_files::PASS_K, "pass^k by k", Drawing::Line(pass_k(r))),
        (
            chart_files::SUCCESS_BY_CATEGORY,
            "success by category",
            Drawing::Bars(success_by_category(r)),
        ),
        (
            chart_files::TOKENS_PER_SUCCESS,
            "tokens per successful task",
            Drawing::Bars(tokens_per_success(r)),
        ),
        (
            chart_files::LATENCY,
            "latency per conversation",
            Drawing::Distribution(latency(r)),
        ),
        (
            chart_files::CONTEXT_GROWTH,
            "context growth",
            Drawing::Line(context_growth(r)),
        ),
        (
            chart_files::FOUR_STATE,
            "trajectory and answer",
            Drawing::Heatmap(four_state(r)),
        ),
        (
            chart_files::FAILURE_BUCKETS,
            "failure modes",
            Drawing::Stacked(failure_buckets(r)),
        ),
        (
            chart_files::GPU_UTILIZATION,
            "GPU utilization over the run",
            Drawing::Line(gpu_utilization(r)),
        ),
        (
            chart_files::FRONTIER_TOKENS,
            "tokens per successful task against success, with the cheapest-per-success frontier",
            Drawing::Line(frontier_chart(
                r,
                "Tokens per successful task against success",
                "blended tokens per successful task",
                |m| m.tokens.blended_per_success,
            )),
        ),
        (
            chart_files::FRONTIER_TIME,
            "time per successful task against success, with the cheapest-per-success frontier",
            Drawing::Line(frontier_chart(
                r,
                "Time per successful task against success",
                "seconds per successful task (final attempts)",
                |m| m.latency.time_per_success_s,
            )),
        ),
    ];
    let sequence = crate::report::stopping::chart(r).map(|c| {
        let title = "the confidence sequence round by round";
        (crate::report::stopping::CHART, title, Drawing::Line(c))
    });
    let caption = caption(r);
    drawings
        .into_iter()
        .chain(sequence)
        .filter(|(_, _, d)| d.has_data())
        .map(|(file, title, mut d)| {
            let labels = d.labels();
            labels.caption.get_or_insert_with(|| caption.clone());
            // report.html inlines every chart into one document, where ids must be unique.
            labels.id = Some(file.trim_end_matches(".svg").to_string());
            (file, title, d)
        })
        .collect()
}

/// The one line under every chart: run id, suite, trials per task, tool docs (`tool_docs`) and
/// the conversations graded in the charted configuration (all models), as the manifest and summary
/// record them.
pub fn caption(r: &Report) -> String {
    let (_, g, models) = primary(r);
    let mut parts = vec![format!("run {}", r.manifest.run_id)];
    if let Some(g) = g {
        parts.push(format!("suite {}", g.suite));
    }
    let mut ks: Vec<usize> = models.iter().map(|(_, s)| s.trials_per_task).collect();
    ks.sort_unstable();
    ks.dedup();
    if !ks.is_empty() {
        let asked = r.manifest.settings.get("trials").and_then(|v| v.as_u64());
        let short = asked.filter(|&t| ks.iter().any(|&k| (k as u64) < t));
        let ks: Vec<String> = ks.iter().map(usize::to_string).collect();
        match short {
            Some(t) => parts.push(format!("k = {} graded of {t}", ks.join("/"))),
            None => parts.push(format!("k = {}", ks.join("/"))),
        }
    }
    parts.push(format!("tool docs {}", tool_docs(r, g)));
    let graded: usize = models.iter().map(|(_, s)| s.outcomes.graded).sum();
    parts.push(format!("n = {}", counted(graded, "conversation")));
    parts.join(" · ")
}

/// The tool docs of the charted configuration: the group's own variant where the run varied it (a
/// factorial), else the manifest's one level, else `not recorded` (an imported run).
fn tool_docs(r: &Report, g: Option<&GroupSummary>) -> String {
    if let Some(v) = g.and_then(|g| g.tool_docs) {
        return v.as_str().to_string();
    }
    match crate::runner::levels::declared::<crate::domain::ToolVariant>(
        &r.manifest.settings,
        "tool_docs",
    ) {
        Some(levels) => {
            let names: Vec<&str> = levels.0.iter().map(|v| v.as_str()).collect();
            names.join(" × ")
        }
        None => "not recorded".to_string(),
    }
}

/// The primary group's key and its models in report order (empty when the run has no group).
fn primary<'s>(
    r: &'s Report,
) -> (
    String,
    Option<&'s GroupSummary>,
    Vec<(&'s str, &'s ModelSummary)>,
) {
    match primary_group(r.summary) {
        Some((key, g)) => (key.clone(), Some(g), group_models(r.summary, g)),
        None => (String::new(), None, Vec::new()),
    }
}

/// An x range for whole numbers 1..=`last` with half a step of room either side, so that error bars
/// and point labels at the ends are whole.
fn whole_range(last: usize) -> (f64, f64) {
    (0.5, last.max(1) as f64 + 0.5)
}

fn titled(what: &str, key: &str) -> String {
    if key.is_empty() {
        what.to_string()
    } else {
        format!("{what} ({key})")
    }
}

/// pass^k for k = 1..n, one line per model, with its 95% bootstrap interval at each k.
pub fn pass_k(r: &Report) -> LineChart {
    let (key, _, models) = primary(r);
    let series = models
        .iter()
        .map(|(m, s)| {
            let pts = s.pass_hat_k.iter().map(|(k, v)| (*k as f64, *v)).collect();
            let cis = s
                .pass_hat_k_ci95
                .iter()
                .map(|(k, i)| (*k as f64, i.low, i.high))
                .collect();
            Series::new(*m, pts).with_intervals(cis)
        })
        .collect();
    let max_k = models
        .iter()
        .flat_map(|(_, s)| s.pass_hat_k.keys())
        .max()
        .map_or(1, |k| *k);
    let mut labels = Labels::new(
        titled("pass^k", &key),
        "k (trials that must all succeed)",
        "pass^k",
    );
    if let Some(note) = super::stopping::chart_note(r.summary) {
        labels = labels.with_subtitle(note);
    }
    LineChart {
        x_range: Some(whole_range(max_k)),
        y_range: Some((0.0, 1.0)),
        integer_x: true,
        ..LineChart::new(labels, series)
    }
}

/// A cost per success against the success rate, one point per model, and the cheapest-per-success
/// frontier (models no other beats on both) as a line through its models.
pub fn frontier_chart(
    r: &Report,
    title: &str,
    y: &str,
    cost: fn(&ModelSummary) -> Option<f64>,
) -> LineChart {
    let (key, _, models) = primary(r);
    let points: Vec<(&str, f64, f64)> = models
        .iter()
        .filter_map(|(m, s)| Some((*m, s.success_rate?, cost(s)?)))
        .collect();
    let front = crate::analysis::figures::cost::frontier(&points);
    let line = front
        .iter()
        .filter_map(|m| points.iter().find(|p| p.0 == *m).map(|p| (p.1, p.2)))
        .collect();
    // The models in report order keep their palette colours; the frontier is a grey guide under them.
    let series = points
        .iter()
        .map(|(m, x, y)| Series::new(*m, vec![(*x, *y)]))
        .collect();
    let labels = Labels::new(titled(title, &key), "success rate", y).with_subtitle(format!(
        "cheapest-per-success frontier: {}",
        front.join(", ")
    ));
    LineChart {
        x_range: Some((0.0, 1.0)),
        y_from_zero: true,
        marks: Marks::Points,
        guide: Some(Series::new("frontier", line)),
        ..LineChart::new(labels, series)
    }
}

/// Success rate by task category, one bar per model, with its 95% bootstrap interval.
pub fn success_by_category(r: &Report) -> BarChart {
    let (key, _, models) = primary(r);
    let mut categories: Vec<String> = models
        .iter()
        .flat_map(|(_, s)| s.by_category.keys().cloned())
        .collect();
    categories.sort();
    categories.dedup();
    let series = models
        .iter()
        .map(|(m, s)| BarSeries {
            name: m.to_string(),
            bars: categories
                .iter()
                .map(|c| {
                    let cat = s.by_category.get(c);
                    match cat.and_then(|x| x.success_rate) {
                        Some(v) => {
                            let bar = Bar::new(v).with_label(percent(v));
                            match cat.and_then(|x| x.ci95) {
                                Some(i) => bar.with_ci(i.low, i.high),
                                None => bar,
                            }
                        }
                        None => Bar::new(f64::NAN),
                    }
                })
                .collect(),
        })
        .collect();
    let mut labels = Labels::new(
        titled("Success rate by category", &key),
        "category",
        "success rate",
    );
    if let Some(note) = super::stopping::chart_note(r.summary) {
        labels = labels.with_subtitle(note);
    }
    BarChart {
        labels,
        categories,
        series,
        y_range: Some((0.0, 1.0)),
        references: Vec::new(),
    }
}

/// Blended tokens per successful task (plain and cached), one bar per model; the break-even ratio
/// and its CI in the subtitle.
pub fn tokens_per_success(r: &Report) -> BarChart {
    let (key, g, models) = primary(r);
    let cached = format!(
        "re-sent prefix at {}",
        percent(r.summary.settings.cache_discount)
    );
    let categories = vec!["tokens per successful task".to_string(), cached];
    let bar = |v: Option<f64>| match v {
        Some(v) => Bar::new(v).with_label(tokens(v)),
        None => Bar::new(f64::NAN),
    };
    let series = models
        .iter()
        .map(|(m, s)| BarSeries {
            name: m.to_string(),
            bars: vec![
                bar(s.tokens.blended_per_success),
                bar(s.tokens.cached_blended_per_success),
            ],
        })
        .collect();
    let mut labels = Labels::new(
        titled("Tokens per successful task", &key),
        "",
        "blended tokens per successful task",
    );
    if let Some(c) = g.and_then(|g| g.comparison.as_ref()) {
        labels = labels.with_subtitle(format!(
            "break-even small / large {} (95% CI {}); cached {} ({}){}",
            opt(c.break_even, ratio),
            c.ci95
                .break_even
                .map_or(NOT_AVAILABLE.into(), |i| ci_ratio(i.low, i.high)),
            opt(c.break_even_cached, ratio),
            c.ci95
                .break_even_cached
                .map_or(NOT_AVAILABLE.into(), |i| ci_ratio(i.low, i.high)),
            if r.summary.stopping.is_some() {
                "; intervals fixed-k, not valid after optional stopping"
            } else {
                ""
            },
        ));
    }
    BarChart {
        labels,
        categories,
        series,
        y_range: None,
        references: Vec::new(),
    }
}

/// Latency per conversation, one box per model.
pub fn latency(r: &Report) -> DistributionChart {
    let (key, _, models) = primary(r);
    let empty = BTreeMap::new();
    let by_model = r
        .observations
        .conversation_latency
        .get(&key)
        .unwrap_or(&empty);
    let samples = models
        .iter()
        .map(|(m, _)| Distribution {
            name: m.to_string(),
            values: by_model.get(*m).cloned().unwrap_or_default(),
        })
        .filter(|s| !s.values.is_empty())
        .collect();
    DistributionChart {
        labels: Labels::new(
            titled("Latency per conversation", &key),
            "",
            "seconds (sum of the conversation's model calls)",
        ),
        samples,
        y_range: None,
        zero_based: true,
        show_points: true,
    }
}

/// Fewest conversations behind a point of the context-growth chart: a mean over fewer is noise.
pub const MIN_CONTEXT_N: usize = 5;

/// Mean input tokens of the j-th call (1-based on the axis), one line per model, from zero; each
/// point names the conversations that reached that call, and a line stops where fewer than
/// [`MIN_CONTEXT_N`] did.
pub fn context_growth(r: &Report) -> LineChart {
    let (key, _, models) = primary(r);
    let mut last = 0;
    let series = models
        .iter()
        .map(|(m, s)| {
            let kept: Vec<_> = s
                .context_growth
                .iter()
                .filter(|(_, p)| p.conversations >= MIN_CONTEXT_N)
                .collect();
            last = last.max(kept.last().map_or(0, |(j, _)| **j + 1));
            let pts = kept
                .iter()
                .map(|(j, p)| ((**j + 1) as f64, p.mean_input_tokens))
                .collect();
            let ns = kept
                .iter()
                .map(|(_, p)| format!("n={}", p.conversations))
                .collect();
            Series::new(*m, pts).with_point_labels(ns)
        })
        .collect::<Vec<_>>();
    let labels = Labels::new(
        titled("Context growth", &key),
        "model call",
        "mean input tokens",
    )
    .with_subtitle(format!(
        "n = conversations that reached the call; calls fewer than {MIN_CONTEXT_N} reached are left out"
    ));
    LineChart {
        x_range: Some(whole_range(last)),
        integer_x: true,
        y_from_zero: true,
        ..LineChart::new(labels, series)
    }
}

/// The four-state table, one panel per model.
pub fn four_state(r: &Report) -> Heatmap {
    let (key, _, models) = primary(r);
    let panels = models
        .iter()
        .map(|(m, s)| {
            let f = &s.four_state;
            let cells = vec![
                vec![
                    f.right_path_right_answer as f64,
                    f.right_path_wrong_answer as f64,
                ],
                vec![
                    f.wrong_path_right_answer as f64,
                    f.wrong_path_wrong_answer as f64,
                ],
            ];
            let name = if f.trajectory_unknown > 0 {
                format!("{m} ({} unknown)", f.trajectory_unknown)
            } else {
                m.to_string()
            };
            HeatmapPanel {
                name,
                cells,
                text: None,
            }
        })
        .collect();
    Heatmap {
        labels: Labels::new(
            titled("Trajectory and answer", &key),
            "end state and replies",
            "trajectory",
        ),
        rows: vec!["right".into(), "wrong".into()],
        columns: vec!["right".into(), "wrong".into()],
        panels,
    }
}

/// Failure modes of failed conversations, one stacked bar per model.
pub fn failure_buckets(r: &Report) -> StackedBars {
    let (key, _, models) = primary(r);
    let mut segments: Vec<String> = FailureMode::ALL
        .iter()
        .map(|f| f.describe().to_string())
        .collect();
    segments.push("unlabelled".into());
    let rows = models
        .iter()
        .map(|(m, s)| {
            let mut values: Vec<f64> = FailureMode::ALL
                .iter()
                .map(|f| s.failure_modes.by_mode.get(f).copied().unwrap_or(0) as f64)
                .collect();
            values.push(s.failure_modes.unlabelled as f64);
            StackedRow {
                name: m.to_string(),
                values,
            }
        })
        .collect();
    StackedBars {
        labels: Labels::new(titled("Failure modes", &key), "failed conversations", ""),
        segments,
        rows,
        normalize: false,
    }
}

/// The calls' mean GPU utilization over the run, each model's loaded interval shaded.
pub fn gpu_utilization(r: &Report) -> LineChart {
    let timeline = &r.observations.gpu_timeline;
    // A point is a stretch of the run rather than a call: its length, in ms below a second.
    let stretch = r.observations.gpu_stretch_s.map(|w| {
        if w < 1.0 {
            format!("{} ms", number(w * 1000.0, 2))
        } else {
            seconds(w)
        }
    });
    let has_util = timeline.iter().any(|p| p.util_pct.is_some());
    let points: Vec<(f64, f64)> = if has_util {
        timeline
            .iter()
            .map(|p| (p.t_s, p.util_pct.unwrap_or(f64::NAN)))
            .collect()
    } else {
        Vec::new()
    };
    let mut spans: BTreeMap<&str, (f64, f64)> = BTreeMap::new();
    if has_util {
        for p in timeline {
            let e = spans.entry(&*p.model).or_insert(p.span);
            e.0 = e.0.min(p.span.0);
            e.1 = e.1.max(p.span.1);
        }
    }
    let mut bands: Vec<XBand> = spans
        .into_iter()
        .map(|(m, (from, to))| XBand {
            from,
            to,
            label: m.to_string(),
        })
        .collect();
    bands.sort_by(|a, b| a.from.total_cmp(&b.from).then(a.label.cmp(&b.label)));
    LineChart {
        y_range: Some((0.0, 100.0)),
        marks: Marks::Lines,
        bands,
        references: Vec::<Reference>::new(),
        ..LineChart::new(
            Labels::new(
                "GPU utilization over the run",
                "seconds since the first call",
                "GPU utilization, %",
            )
            .with_caption(format!(
                "run {} · every configuration · n = {} with a GPU sample{}",
                r.manifest.run_id,
                counted(timeline.iter().map(|p| p.calls_with_sample).sum(), "call"),
                stretch
                    .as_ref()
                    .map_or(String::new(), |w| format!(" · a point per model per {w}")),
            )),
            vec![Series::new(
                if stretch.is_some() {
                    "mean utilization per stretch"
                } else {
                    "mean utilization per call"
                },
                points,
            )],
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixtures::{conversation, timed_call};
    use crate::analysis::{AnalysisOptions, Summary, summarize};
    use crate::runner::record::{ConversationRecord, GpuWindow, Manifest};
    use serde_json::json;

    /// Models `a` (never fails) and `b` (fails trial 0 of every task) on tasks T0..T5, three trials
    /// each, categories `lookup` and `write`; a conversation of task Ti makes i + 1 calls, the j-th
    /// with 100 (j + 1) input tokens, so that call 6 is reached by only 3 conversations per model.
    fn run() -> (Manifest, Vec<ConversationRecord>) {
        let manifest = Manifest {
            run_id: "r1".into(),
            settings: json!({"trials": 3, "tool_docs": "bare"}),
            ..Manifest::default()
        };
        let mut recs = Vec::new();
        for model in ["a", "b"] {
            for task in 0..6u64 {
                for trial in 0..3 {
                    let calls = (0..=task)
                        .map(|j| timed_call(100 * (j + 1), 10, 0.1))
                        .collect();
                    let passed = model == "a" || trial != 0;
                    let mut c = conversation(model, &format!("T{task}"), trial, passed, calls);
                    c.category = if task % 2 == 0 { "lookup" } else { "write" }.into();
                    recs.push(c);
                }
            }
        }
        (manifest, recs)
    }

    fn summary(manifest: &Manifest, recs: &[ConversationRecord]) -> Summary {
        let opts = AnalysisOptions {
            resamples: 50,
            ..AnalysisOptions::default()
        };
        summarize(manifest, recs, &[], &opts)
    }

    /// The texts of the `<text>` elements of `svg` with this attribute fragment.
    fn texts<'s>(svg: &'s str, attrs: &str) -> Vec<&'s str> {
        svg.lines()
            .filter(|l| l.starts_with("<text") && l.contains(attrs))
            .filter_map(|l| l.split('>').nth(1)?.split('<').next())
            .collect()
    }

    /// The y axis's tick labels (right-aligned, 11 px), bottom to top as drawn.
    fn y_ticks(svg: &str) -> Vec<&str> {
        texts(svg, r#"text-anchor="end" font-size="11""#)
    }

    #[test]
    fn every_category_bar_has_an_error_bar() {
        let (m, recs) = run();
        let s = summary(&m, &recs);
        let r = Report::new(&m, &s, &recs, &[], vec![]);
        let chart = success_by_category(&r);
        assert_eq!(chart.categories, ["lookup", "write"]);
        assert!(
            chart
                .series
                .iter()
                .flat_map(|s| &s.bars)
                .all(|b| b.ci.is_some())
        );
        let svg = svg::bar_chart(&chart);
        let bars = svg.matches(r#"stroke-width="1.5" fill="none""#).count();
        assert_eq!(bars, 2 * 2, "one error bar per category and model: {svg}");
    }

    #[test]
    fn legends_wrap_instead_of_cutting() {
        let (m, recs) = run();
        let s = summary(&m, &recs);
        let r = Report::new(&m, &s, &recs, &[], vec![]);
        let svg = svg::stacked_bars(&failure_buckets(&r));
        assert!(!svg.contains('…'), "nothing shortened: {svg}");
        let legend = texts(&svg, r#"text-anchor="start" font-size="12""#).join(" ");
        for mode in FailureMode::ALL {
            let full = svg::escape(mode.describe());
            assert!(legend.contains(&full), "{full} whole in {legend}");
        }
    }

    #[test]
    fn a_model_without_failures_keeps_its_row() {
        let (m, recs) = run();
        let s = summary(&m, &recs);
        let r = Report::new(&m, &s, &recs, &[], vec![]);
        let chart = failure_buckets(&r);
        let names: Vec<&str> = chart.rows.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        assert!(chart.rows[0].values.iter().all(|v| *v == 0.0));
        let svg = svg::stacked_bars(&chart);
        assert!(
            svg.contains(r##"font-size="12" fill="#222222">a</text>"##),
            "{svg}"
        );
        assert!(
            svg.contains(r##"text-anchor="start" font-size="11" fill="#222222">0</text>"##),
            "the empty row's total reads 0: {svg}"
        );
    }

    #[test]
    fn counts_and_rates_start_at_zero() {
        let (m, recs) = run();
        let s = summary(&m, &recs);
        let r = Report::new(&m, &s, &recs, &[], vec![]);
        let frontier = frontier_chart(&r, "t", "y", |m| m.tokens.blended_per_success);
        for svg in [
            svg::line_chart(&context_growth(&r)),
            svg::line_chart(&frontier),
            svg::line_chart(&pass_k(&r)),
            svg::bar_chart(&success_by_category(&r)),
            svg::bar_chart(&tokens_per_success(&r)),
        ] {
            let ticks = y_ticks(&svg);
            assert!(
                matches!(ticks.first(), Some(&"0") | Some(&"0.0")),
                "{ticks:?}: {svg}"
            );
        }
    }

    #[test]
    fn the_frontier_takes_no_model_colour() {
        let (m, mut recs) = run();
        // `b` passes less often but spends a tenth of `a`'s tokens: both lie on the frontier.
        for c in recs.iter_mut().filter(|c| c.model == "b") {
            for call in &mut c.calls {
                call.timings.prompt_eval_count =
                    call.timings.prompt_eval_count.get().map(|t| t / 10).into();
            }
        }
        let s = summary(&m, &recs);
        let r = Report::new(&m, &s, &recs, &[], vec![]);
        let chart = frontier_chart(&r, "t", "y", |m| m.tokens.blended_per_success);
        let names =
            |c: &LineChart| -> Vec<String> { c.series.iter().map(|s| s.name.clone()).collect() };
        assert_eq!(
            names(&chart),
            names(&pass_k(&r)),
            "same models, same order, same colours"
        );
        let svg = svg::line_chart(&chart);
        for (i, model) in ["a", "b"].iter().enumerate() {
            let dot = format!(r#"r="3" fill="{}"/>"#, svg::PALETTE[i]);
            assert_eq!(svg.matches(&dot).count(), 1, "{model}'s point: {svg}");
        }
        let dashed = svg
            .lines()
            .filter(|l| l.contains(r#"stroke-dasharray="6 4""#))
            .collect::<Vec<_>>();
        assert_eq!(
            dashed.len(),
            2,
            "the frontier's line and its legend swatch: {svg}"
        );
        assert!(
            dashed
                .iter()
                .all(|l| !svg::PALETTE.iter().any(|p| l.contains(p))),
            "{svg}"
        );
        assert!(svg.contains(">frontier</text>"), "{svg}");
    }

    #[test]
    fn context_growth_names_n_and_stops_below_five() {
        let (m, recs) = run();
        let s = summary(&m, &recs);
        let r = Report::new(&m, &s, &recs, &[], vec![]);
        let chart = context_growth(&r);
        let a = &chart.series[0];
        // Call j + 1 is reached by (6 - j) tasks x 3 trials: 18, 15, 12, 9, 6, then 3 (left out).
        let xs: Vec<f64> = a.points.iter().map(|p| p.0).collect();
        assert_eq!(xs, [1.0, 2.0, 3.0, 4.0, 5.0]);
        assert_eq!(a.point_labels, ["n=18", "n=15", "n=12", "n=9", "n=6"]);
        let svg = svg::line_chart(&chart);
        assert!(
            svg.contains(">n=6</text>") && !svg.contains(">n=3</text>"),
            "{svg}"
        );
    }

    #[test]
    fn empty_charts_are_neither_written_nor_linked() {
        let (m, mut recs) = run();
        let s = summary(&m, &recs);
        let r = Report::new(&m, &s, &recs, &[], vec![]);
        let files: Vec<&str> = charts(&r).iter().map(|c| c.file).collect();
        assert!(!files.contains(&chart_files::GPU_UTILIZATION), "{files:?}");
        assert!(files.contains(&chart_files::FAILURE_BUCKETS), "{files:?}");
        let md = super::super::document::markdown(&r);
        assert!(!md.contains(chart_files::GPU_UTILIZATION), "{md}");
        for c in charts(&r) {
            assert!(!c.svg.contains(">no data<"), "{}", c.file);
            assert!(
                md.contains(&format!("](charts/{})", c.file)),
                "{} linked",
                c.file
            );
        }
        // One GPU sample is enough for the GPU chart; no failure, no failure chart.
        recs[0].calls[0].started_unix_ms = Some(1_000).into();
        recs[0].calls[0].wall_s = Some(0.5).into();
        recs[0].calls[0].gpu = Some(Box::new(GpuWindow {
            samples: 1,
            util_mean: Some(40.0),
            ..GpuWindow::default()
        }));
        for c in &mut recs {
            c.outcome = crate::runner::record::Outcome::Pass;
            c.verdict.passed = true;
        }
        let s = summary(&m, &recs);
        let r = Report::new(&m, &s, &recs, &[], vec![]);
        let files: Vec<&str> = charts(&r).iter().map(|c| c.file).collect();
        assert!(files.contains(&chart_files::GPU_UTILIZATION), "{files:?}");
        assert!(!files.contains(&chart_files::FAILURE_BUCKETS), "{files:?}");
    }

    #[test]
    fn every_chart_carries_its_caption() {
        let (m, recs) = run();
        let s = summary(&m, &recs);
        let r = Report::new(&m, &s, &recs, &[], vec![]);
        let line = "run r1 · suite store · k = 3 · tool docs bare · n = 36 conversations";
        assert_eq!(caption(&r), line);
        let all = charts(&r);
        let files: Vec<&str> = all.iter().map(|c| c.file).collect();
        let mut expected = chart_files::ALL.to_vec();
        // No GPU telemetry, and no trajectory known: a four-state table of zeros.
        expected.retain(|f| ![chart_files::GPU_UTILIZATION, chart_files::FOUR_STATE].contains(f));
        assert_eq!(files, expected);
        for c in all {
            assert_eq!(texts(&c.svg, r#"class="caption""#), [line], "{}", c.file);
        }
    }
}
