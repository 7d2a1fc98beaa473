//! The Failure taxonomy section: how conversations ended, and every model call by bucket.

use super::model_table::ModelTable;
use crate::analysis::{ModelSummary, Summary};
use crate::report::number::{NOT_AVAILABLE, number};
use crate::trace::FailureMode;
use std::collections::BTreeMap;
use std::fmt::Write as _;

pub(super) fn taxonomy(out: &mut String, s: &Summary, models: &[(&str, &ModelSummary)]) {
    out.push_str("### Failure taxonomy\n\n");
    // An MCP suite's tools run in a server of their own, which can fail too: its row appears
    // where it ended a conversation, so that the rows add up to the conversations.
    let tool_server = models.iter().any(|(_, m)| m.outcomes.tool_server_fail > 0);
    let excluded = if tool_server {
        "transport, protocol and tool-server failures"
    } else {
        "transport and protocol failures"
    };
    let _ = writeln!(
        out,
        "How conversations ended ({excluded} are excluded from every rate), and every model call \
         by bucket.\n"
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
    if tool_server {
        t.row("Tool-server failure (excluded)", |m| {
            number(m.outcomes.tool_server_fail as f64, 0)
        });
    }
    call_bucket_rows(&mut t, "Agent model calls", |m| Some(&m.calls));
    if models.iter().any(|(_, m)| m.router_calls.is_some()) {
        call_bucket_rows(&mut t, "Router calls in front (apart)", |m| {
            m.router_calls.as_ref()
        });
    }
    out.push_str(&t.render());
    out.push('\n');
    ungraded_note(out, s, models);
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

/// How many conversations ended outside the model, and how to play them again.
fn ungraded_note(out: &mut String, s: &Summary, models: &[(&str, &ModelSummary)]) {
    let left: usize = models
        .iter()
        .map(|(_, m)| m.outcomes.total - m.outcomes.graded)
        .sum();
    if left == 0 {
        return;
    }
    let _ = write!(
        out,
        "{} ended on a failure outside the model and {} not graded.",
        if left == 1 {
            "1 conversation".to_string()
        } else {
            format!("{} conversations", number(left as f64, 0))
        },
        if left == 1 { "is" } else { "are" },
    );
    if s.backend != "imported" && s.imported_from.is_none() {
        let _ = write!(
            out,
            " Once the server works, the same `passk run` command plays such conversations \
             again; `--retry-failed` also plays those already tried {} times.",
            crate::runner::journal::MAX_WIRE_TRIES,
        );
    }
    out.push_str("\n\n");
}

/// The rows of one set of call buckets, each label prefixed by `what`.
pub(super) fn call_bucket_rows(
    t: &mut ModelTable,
    what: &str,
    of: impl Fn(&ModelSummary) -> Option<&crate::analysis::figures::taxonomy::CallBuckets>,
) {
    type Field = fn(&crate::analysis::figures::taxonomy::CallBuckets) -> usize;
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

pub(super) fn keyed(by_key: &BTreeMap<String, usize>) -> String {
    if by_key.is_empty() {
        return String::new();
    }
    let parts: Vec<String> = by_key.iter().map(|(k, n)| format!("{k}: {n}")).collect();
    format!(" ({})", parts.join(", "))
}
