//! What the model did in its conversations (metrics.md): calls per conversation, rejected and
//! malformed calls, loop caps, the identify-first rate, schema-copy and example-copy calls, how
//! tool calls were written (native, text, malformed), and the calls that were not executed.

use crate::analysis::{Rate, count_per_task};
use crate::runner::record::{ConversationRecord, Status};
use crate::trace::{CallFormat, ToolEvent};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// Tools that read or change an order: the identify-first rule applies before them.
pub const ORDER_TOOLS: [&str; 5] = [
    "list_orders",
    "get_order",
    "cancel_order",
    "update_address",
    "request_return",
];

/// The tool that identifies the customer.
pub const IDENTIFY_TOOL: &str = "find_customer";

/// Prefix of the tool name of a malformed call.
pub const MALFORMED_PREFIX: &str = "__malformed__:";

/// Calls counted by a key (argument name, or example value).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct KeyedCalls {
    /// Calls counted (a call matching on two keys counts once here).
    pub calls: usize,
    /// Calls by key: each call counts once under every distinct key it matches (a call matching
    /// on two keys counts under both), so no count exceeds `calls`.
    pub by_key: BTreeMap<String, usize>,
}

/// How the model's tool calls were written.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CallFormats {
    /// Model calls whose tool calls came as Ollama's native `tool_calls`.
    pub native_calls: usize,
    /// Model calls whose tool calls were recovered from the reply text.
    pub text_calls: usize,
    /// Model calls with text shaped like a call that did not parse.
    pub malformed_calls: usize,
    /// Model calls without a tool call.
    pub no_tool_call: usize,
}

/// Behaviour of one model over its graded conversations.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Behaviour {
    /// Graded conversations the figures are over.
    pub conversations: usize,
    /// Orchestrator model calls per conversation.
    pub model_calls_per_conversation: Option<f64>,
    /// Tool calls (tool events) per conversation.
    pub tool_calls_per_conversation: Option<f64>,
    /// Rejected tool calls (tool events with `ok = false`), in all.
    pub rejected_calls: usize,
    /// Rejected tool calls per conversation.
    pub rejected_calls_per_conversation: Option<f64>,
    /// Malformed calls (`__malformed__:` tool name, or format malformed), in all.
    pub malformed_calls: usize,
    /// Conversations that hit the call cap.
    pub loop_caps: usize,
    /// Identify-first: conversations with a successful order-tool call in which a successful
    /// `find_customer` came first, over those conversations.
    pub identify_first: Option<Rate>,
    /// Rejected calls with an argument that is a JSON-schema fragment, by argument name.
    pub schema_copy: KeyedCalls,
    /// Calls whose argument equals a documented example value, by value, in the conversations
    /// that were shown the examples.
    pub example_copy: KeyedCalls,
    /// Graded conversations whose tool docs showed the example values (not `bare`); with none,
    /// an example-copy count means nothing.
    #[serde(default)]
    pub conversations_shown_examples: usize,
    /// Native vs text vs malformed model calls.
    pub call_formats: CallFormats,
    /// Tool calls the model made that were not executed (written beside native calls, or past the
    /// per-reply cap), in all; they are not tool events.
    #[serde(default)]
    pub unexecuted_calls: usize,
}

/// JSON-schema keywords: an object argument holding one of them is a pasted schema.
pub const SCHEMA_KEYWORDS: [&str; 12] = [
    "type",
    "description",
    "properties",
    "items",
    "enum",
    "required",
    "$ref",
    "anyOf",
    "oneOf",
    "allOf",
    "format",
    "default",
];

/// Whether an argument value is a JSON-schema fragment (an object with a schema keyword). An array
/// such as `["5105"]`, or an object without a keyword, is a wrong type, not a schema copy.
pub fn is_schema_fragment(v: &Value) -> bool {
    v.as_object()
        .is_some_and(|o| SCHEMA_KEYWORDS.iter().any(|k| o.contains_key(*k)))
}

/// Whether an argument value is the documented example value `x` (as text, or as a number
/// written the same).
pub fn is_example_value(v: &Value, x: &str) -> bool {
    match v {
        Value::String(s) => s == x,
        Value::Number(num) => num.to_string() == x,
        _ => false,
    }
}

/// Whether the behaviour counts read this argument of a call: a schema fragment on a call the
/// tool rejected, or any of `example_values`. Reading a run for the statistics keeps only these.
pub fn is_counted_argument(v: &Value, ok: bool, example_values: &[String]) -> bool {
    (!ok && is_schema_fragment(v)) || example_values.iter().any(|x| is_example_value(v, x))
}

fn is_malformed(e: &ToolEvent) -> bool {
    e.tool.starts_with(MALFORMED_PREFIX) || e.format == Some(CallFormat::Malformed)
}

/// Identify-first of one conversation: `None` when it made no successful order-tool call.
pub fn identified_first(events: &[ToolEvent]) -> Option<bool> {
    let ok: Vec<&str> = events
        .iter()
        .filter(|e| e.ok)
        .map(|e| e.tool.as_str())
        .collect();
    let first = ok.iter().position(|t| ORDER_TOOLS.contains(t))?;
    Some(ok[..first].contains(&IDENTIFY_TOOL))
}

fn args_of(e: &ToolEvent) -> impl Iterator<Item = (&String, &Value)> {
    e.args.as_object().into_iter().flat_map(|m| m.iter())
}

/// Whether the conversation's tool docs showed example values: its suite's variant shows some
/// (`examples_shown`), or, where the manifest does not say, its variant is known and not `bare`.
fn shown_examples(
    c: &ConversationRecord,
    examples_shown: Option<&BTreeMap<String, Vec<String>>>,
) -> bool {
    let Some(variant) = c.tool_docs else {
        return false;
    };
    match examples_shown {
        Some(by_suite) => by_suite
            .get(&c.suite)
            .is_some_and(|v| v.iter().any(|x| x == variant.as_str())),
        None => variant != crate::domain::ToolVariant::BARE,
    }
}

/// Behaviour as running totals over graded conversations.
#[derive(Debug, Default)]
pub struct BehaviourSums {
    b: Behaviour,
    model_calls: usize,
    tool_calls: usize,
    /// Per task: (conversations the identify-first rule applies to, those identifying first).
    identify_first: BTreeMap<String, (usize, usize)>,
}

impl BehaviourSums {
    /// Adds one graded conversation; `example_values` are the documented example values,
    /// `examples_shown` the variants that show them per suite (`None`: all but `bare`).
    pub fn add(
        &mut self,
        c: &ConversationRecord,
        example_values: &[String],
        examples_shown: Option<&BTreeMap<String, Vec<String>>>,
    ) {
        let b = &mut self.b;
        b.conversations += 1;
        self.model_calls += c.orchestrator_calls().count();
        self.tool_calls += c.tool_events.len();
        b.loop_caps += usize::from(c.status == Status::LoopCap);
        if let Some(hit) = identified_first(&c.tool_events) {
            count_per_task(&mut self.identify_first, &c.task, hit);
        }
        let shown_examples = shown_examples(c, examples_shown);
        b.conversations_shown_examples += usize::from(shown_examples);
        for call in c.orchestrator_calls() {
            b.unexecuted_calls += call.unexecuted_calls as usize;
            match call.call_format {
                Some(CallFormat::Native) => b.call_formats.native_calls += 1,
                Some(CallFormat::Text) => b.call_formats.text_calls += 1,
                Some(CallFormat::Malformed) => b.call_formats.malformed_calls += 1,
                None => b.call_formats.no_tool_call += 1,
            }
        }
        let shown: &[String] = if shown_examples { example_values } else { &[] };
        for e in &c.tool_events {
            add_event(b, e, shown);
        }
    }

    /// The figures.
    pub fn finish(self) -> Behaviour {
        let mut b = self.b;
        let n = b.conversations;
        let per = |total: usize| (n > 0).then(|| total as f64 / n as f64);
        b.model_calls_per_conversation = per(self.model_calls);
        b.tool_calls_per_conversation = per(self.tool_calls);
        b.rejected_calls_per_conversation = per(b.rejected_calls);
        b.identify_first = Rate::over_tasks(&self.identify_first);
        b
    }
}

/// Counts one tool event: malformed, rejected (and whether it copied the schema), and the
/// example values `shown` that it copied.
fn add_event(b: &mut Behaviour, e: &ToolEvent, shown: &[String]) {
    b.malformed_calls += usize::from(is_malformed(e));
    if !e.ok {
        b.rejected_calls += 1;
        let names: Vec<&String> = args_of(e)
            .filter(|(_, v)| is_schema_fragment(v))
            .map(|(k, _)| k)
            .collect();
        if !names.is_empty() {
            b.schema_copy.calls += 1;
            for k in names {
                *b.schema_copy.by_key.entry(k.clone()).or_default() += 1;
            }
        }
    }
    // A set: several parameters may document the same example value, and a call counts once
    // under each value it copies, however many parameters list it.
    let copied: BTreeSet<&String> = shown
        .iter()
        .filter(|x| args_of(e).any(|(_, v)| is_example_value(v, x)))
        .collect();
    if !copied.is_empty() {
        b.example_copy.calls += 1;
        for x in copied {
            *b.example_copy.by_key.entry(x.clone()).or_default() += 1;
        }
    }
}

/// Behaviour over graded conversations; `example_values` are the documented example values.
pub fn behaviour(convs: &[&ConversationRecord], example_values: &[String]) -> Behaviour {
    let mut b = BehaviourSums::default();
    convs.iter().for_each(|c| b.add(c, example_values, None));
    b.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixtures::{call, conversation, event};
    use serde_json::json;

    #[test]
    fn identify_first_ignores_failed_calls() {
        let yes = [
            event("find_customer", json!({"query": "a"}), true),
            event("get_order", json!({"order_id": "1"}), true),
        ];
        let failed_find = [
            event("find_customer", json!({"query": {}}), false),
            event("get_order", json!({"order_id": "1"}), true),
        ];
        let failed_order = [event("get_order", json!({}), false)];
        assert_eq!(identified_first(&yes), Some(true));
        assert_eq!(identified_first(&failed_find), Some(false));
        assert_eq!(identified_first(&failed_order), None);
    }

    #[test]
    fn counts_rejected_schema_copy_example_copy_and_formats() {
        let mut a = conversation("m", "L1", 0, false, vec![call(1, 1), call(2, 1)]);
        a.calls[0].call_format = Some(CallFormat::Text);
        a.status = Status::LoopCap;
        a.tool_events = vec![
            event("find_customer", json!({"query": {"type": "string"}}), false),
            event(
                "request_return",
                json!({"order_id": ["x"], "sku": {"type": "string"}, "reason": {"a": 1}}),
                false,
            ),
            event("__malformed__:get_order", json!({}), false),
            event("get_order", json!({"order_id": "9999"}), true),
        ];
        let mut b = conversation("m", "L2", 0, true, vec![call(1, 1)]);
        let examples = vec!["9999".to_string(), "jane@example.org".to_string()];
        a.tool_docs = Some(crate::domain::ToolVariant::DOCUMENTED);
        b.tool_docs = a.tool_docs;
        let got = behaviour(&[&a, &b], &examples);
        assert_eq!(got.conversations, 2);
        assert_eq!(got.model_calls_per_conversation, Some(1.5));
        assert_eq!(got.tool_calls_per_conversation, Some(2.0));
        assert_eq!(got.rejected_calls, 3);
        assert_eq!(got.rejected_calls_per_conversation, Some(1.5));
        assert_eq!(got.malformed_calls, 1);
        assert_eq!(got.loop_caps, 1);
        assert_eq!(got.schema_copy.calls, 2);
        assert_eq!(got.schema_copy.by_key["query"], 1);
        // An array, or an object without a schema keyword, is a wrong type, not a schema copy.
        assert!(!got.schema_copy.by_key.contains_key("order_id"));
        assert!(!got.schema_copy.by_key.contains_key("reason"));
        assert_eq!(got.schema_copy.by_key["sku"], 1);
        assert_eq!(got.example_copy.calls, 1);
        assert_eq!(got.example_copy.by_key["9999"], 1);
        assert_eq!(got.call_formats.text_calls, 1);
        assert_eq!(got.call_formats.no_tool_call, 2);
        // a: the only successful order call has no successful find_customer before it.
        assert_eq!(got.identify_first.map(|r| (r.hits, r.of)), Some((0, 1)));
    }

    #[test]
    fn an_example_value_documented_twice_counts_each_call_once() {
        // Two parameters document TK-900: the value appears twice in the list.
        let mut a = conversation("m", "L1", 0, true, vec![call(1, 1)]);
        a.tool_events = vec![
            event("get_order", json!({"order_id": "TK-900"}), true),
            event("cancel_order", json!({"order_id": "TK-900"}), false),
        ];
        let examples = vec!["TK-900".to_string(), "TK-900".to_string()];
        a.tool_docs = Some(crate::domain::ToolVariant::DOCUMENTED);
        let got = behaviour(&[&a], &examples);
        assert_eq!(got.example_copy.calls, 2);
        assert_eq!(got.example_copy.by_key["TK-900"], 2);
    }

    #[test]
    fn no_example_copy_is_counted_where_no_examples_were_shown() {
        use crate::domain::ToolVariant;
        let mut a = conversation("m", "L1", 0, true, vec![call(1, 1)]);
        a.tool_events = vec![event("get_order", json!({"order_id": "9999"}), true)];
        let examples = vec!["9999".to_string()];
        a.tool_docs = Some(ToolVariant::BARE);
        let got = behaviour(&[&a], &examples);
        assert_eq!(
            (got.example_copy.calls, got.conversations_shown_examples),
            (0, 0)
        );
        a.tool_docs = Some(ToolVariant::DOCUMENTED);
        let got = behaviour(&[&a], &examples);
        assert_eq!(
            (got.example_copy.calls, got.conversations_shown_examples),
            (1, 1)
        );
        // Records that do not say their variant (imports) were shown nothing known.
        a.tool_docs = None;
        assert_eq!(behaviour(&[&a], &examples).conversations_shown_examples, 0);
        // Where the manifest says which variants show examples, a documented variant of a suite
        // without any shows none.
        a.tool_docs = Some(ToolVariant::DOCUMENTED);
        let shown = BTreeMap::from([
            ("store".to_string(), vec!["documented".to_string()]),
            ("library".to_string(), vec![]),
        ]);
        let count = |c: &ConversationRecord| {
            let mut b = BehaviourSums::default();
            b.add(c, &examples, Some(&shown));
            b.finish().conversations_shown_examples
        };
        assert_eq!(count(&a), 1);
        a.suite = "library".into();
        assert_eq!(count(&a), 0);
    }
}
