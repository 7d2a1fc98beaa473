//! One configuration's part of `report.md`, its sections in order, and which configurations and
//! models the report and its charts show, in which order.

use super::behaviour::behaviour;
use super::break_even::break_even;
use super::category::by_category;
use super::context::context_growth;
use super::gpu::gpu;
use super::headline::headline;
use super::ladder::model_ladder;
use super::latency::latency;
use super::pass_k::pass_hat_k_tables;
use super::pipeline::pipeline;
use super::quality::quality;
use super::server::server_process;
use super::taxonomy::taxonomy;
use crate::analysis::{GroupSummary, ModelSummary, Summary};
use crate::runner::record::Mode;
use std::fmt::Write as _;

pub(super) fn group(out: &mut String, s: &Summary, key: &str, g: &GroupSummary) {
    let models = group_models(s, g);
    group_heading(out, key, g);
    if models.is_empty() {
        out.push_str("No conversations.\n\n");
        return;
    }
    out.push_str(&crate::report::stopping::mark_note(s));
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
pub(super) fn group_heading(out: &mut String, key: &str, g: &GroupSummary) {
    let _ = writeln!(out, "## `{key}`\n");
    group_notes(out, g);
}

/// What is special about a configuration (toolless, call cap), under its title.
pub(crate) fn group_notes(out: &mut String, g: &GroupSummary) {
    if g.mode == Mode::Toolless {
        out.push_str("Toolless baseline: one call per customer message, no tools.\n\n");
    }
    if let Some(cap) = g.call_cap {
        let _ = writeln!(out, "Call cap: {cap} model calls per turn.\n");
    }
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
