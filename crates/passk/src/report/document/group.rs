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
use super::order::group_models;
use super::pass_k::pass_hat_k_tables;
use super::pipeline::pipeline;
use super::quality::quality;
use super::server::server_process;
use super::taxonomy::taxonomy;
use crate::analysis::{GroupSummary, Summary};
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
