//! The report's charts (`charts/*.svg`, listed in `docs/report.md`), built from a [`Report`]: each
//! function picks its values out of the summary (or the report's [`Observations`]) into one of the
//! [`svg`](super::svg) data structs and renders it. The charts describe the primary group
//! ([`primary_group`]); a chart with nothing to draw says "no data".
//!
//! [`Observations`]: super::document::Observations

use super::chart_files;
use super::document::{Report, group_models, opt, primary_group, tokens};
use super::markdown::{NOT_AVAILABLE, ci_ratio, percent, ratio};
use super::svg::{
    self, Bar, BarChart, BarSeries, DistributionChart, Heatmap, HeatmapPanel, Labels, LineChart,
    Marks, Reference, Sample, Series, StackedBars, StackedRow, XBand,
};
use crate::analysis::{GroupSummary, ModelSummary};
use crate::trace::FailureMode;
use std::collections::BTreeMap;

/// Every chart of the report as (file name inside `charts/`, SVG text), in `docs/report.md` order.
pub fn charts(r: &Report) -> Vec<(&'static str, String)> {
    let mut all = vec![
        (chart_files::PASS_K, svg::line_chart(&pass_k(r))),
        (
            chart_files::SUCCESS_BY_CATEGORY,
            svg::bar_chart(&success_by_category(r)),
        ),
        (
            chart_files::TOKENS_PER_SUCCESS,
            svg::bar_chart(&tokens_per_success(r)),
        ),
        (chart_files::LATENCY, svg::distribution(&latency(r))),
        (
            chart_files::CONTEXT_GROWTH,
            svg::line_chart(&context_growth(r)),
        ),
        (chart_files::FOUR_STATE, svg::heatmap(&four_state(r))),
        (
            chart_files::FAILURE_BUCKETS,
            svg::stacked_bars(&failure_buckets(r)),
        ),
        (
            chart_files::GPU_UTILIZATION,
            svg::line_chart(&gpu_utilization(r)),
        ),
        (
            chart_files::FRONTIER_TOKENS,
            svg::line_chart(&frontier_chart(
                r,
                "Tokens per successful task against success",
                "blended tokens per successful task",
                |m| m.tokens.blended_per_success,
            )),
        ),
        (
            chart_files::FRONTIER_TIME,
            svg::line_chart(&frontier_chart(
                r,
                "Time per successful task against success",
                "seconds per successful task (final attempts)",
                |m| m.latency.time_per_success_s,
            )),
        ),
    ];
    all.extend(crate::report::stopping::charts(r));
    all
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
    LineChart {
        y_range: Some((0.0, 1.0)),
        integer_x: true,
        ..LineChart::new(
            Labels::new(
                titled("pass^k", &key),
                "k (trials that must all succeed)",
                "pass^k",
            ),
            series,
        )
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
    let front = crate::analysis::cost::frontier(&points);
    let line = front
        .iter()
        .filter_map(|m| points.iter().find(|p| p.0 == *m).map(|p| (p.1, p.2)))
        .collect();
    // The frontier first, so that each model's own dot is drawn over it.
    let mut series = vec![Series::new("frontier", line)];
    series.extend(
        points
            .iter()
            .map(|(m, x, y)| Series::new(*m, vec![(*x, *y)])),
    );
    let labels = Labels::new(titled(title, &key), "success rate", y).with_subtitle(format!(
        "cheapest-per-success frontier: {}",
        front.join(", ")
    ));
    LineChart {
        x_range: Some((0.0, 1.0)),
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
    BarChart {
        labels: Labels::new(
            titled("Success rate by category", &key),
            "category",
            "success rate",
        ),
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
            "break-even small / large {} (95% CI {}); cached {} ({})",
            opt(c.break_even, ratio),
            c.ci95
                .break_even
                .map_or(NOT_AVAILABLE.into(), |i| ci_ratio(i.low, i.high)),
            opt(c.break_even_cached, ratio),
            c.ci95
                .break_even_cached
                .map_or(NOT_AVAILABLE.into(), |i| ci_ratio(i.low, i.high)),
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
        .map(|(m, _)| Sample {
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

/// Mean input tokens of the j-th call (1-based on the axis), one line per model.
pub fn context_growth(r: &Report) -> LineChart {
    let (key, _, models) = primary(r);
    let series = models
        .iter()
        .map(|(m, s)| {
            let pts = s
                .context_growth
                .iter()
                .map(|(j, p)| ((*j + 1) as f64, p.mean_input_tokens))
                .collect();
            Series::new(*m, pts)
        })
        .collect();
    LineChart {
        integer_x: true,
        ..LineChart::new(
            Labels::new(
                titled("Context growth", &key),
                "model call",
                "mean input tokens",
            ),
            series,
        )
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
        .filter(|row| row.values.iter().any(|v| *v > 0.0))
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
            let e = spans.entry(p.model.as_str()).or_insert(p.span);
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
            ),
            vec![Series::new("mean utilization per call", points)],
        )
    }
}
