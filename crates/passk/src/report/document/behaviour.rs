//! The Behaviour section: tool calls per conversation, rejected, malformed and unexecuted calls,
//! call-cap stops and schema copies.

use super::format::opt;
use super::model_table::ModelTable;
use super::taxonomy::keyed;
use crate::analysis::{ModelSummary, Summary};
use crate::report::number::{NOT_AVAILABLE, number};

pub(super) fn behaviour(out: &mut String, s: &Summary, models: &[(&str, &ModelSummary)]) {
    out.push_str("### Behaviour\n\n");
    let examples_unknown = s.settings.example_values.is_empty();
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
                number(m.behaviour.schema_copy.calls as f64, 0),
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
            if examples_unknown {
                // An imported run: its tool docs are the reference's, whose example values passk
                // was not given, so nothing can be counted against them (0 would read as none
                // copied).
                return format!("{NOT_AVAILABLE} (the run recorded no example values)");
            }
            format!(
                "{}{}",
                number(m.behaviour.example_copy.calls as f64, 0),
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
