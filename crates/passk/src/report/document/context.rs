//! Context growth: the mean input tokens of the j-th call of a conversation.

use super::format::tokens;
use super::model_table::ModelTable;
use crate::analysis::{ModelSummary, Summary};
use crate::report::number::NOT_AVAILABLE;
use std::collections::BTreeSet;

pub(super) fn context_growth(out: &mut String, s: &Summary, models: &[(&str, &ModelSummary)]) {
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
