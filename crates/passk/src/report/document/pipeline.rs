//! The Pipeline section (router in front of the agent): the router's calls, tokens and latency,
//! and the pipeline's tokens per successful task.

use super::format::{model_per_success, opt, tokens};
use super::model_table::ModelTable;
use crate::analysis::{ModelSummary, Summary};
use crate::report::number::{NOT_AVAILABLE, number, percent, seconds};
use std::collections::BTreeSet;

pub(super) fn pipeline(out: &mut String, s: &Summary, models: &[(&str, &ModelSummary)]) {
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
            model_per_success(m, p(m).and_then(|x| x.blended_tokens_per_success), |v| {
                format!("**{}**", tokens(v))
            })
        },
    );
    t.row("**Pipeline time per successful task**", |m| {
        model_per_success(m, p(m).and_then(|x| x.time_per_success_s), |v| {
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
