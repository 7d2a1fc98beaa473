//! The stub model's output: its thinking, `format` applied, and the cut at `num_predict` (or at an
//! injected length stop) with the output tokens counted as the stub counts them.

use super::chat::tokens;
use super::script::Reply;
use crate::wire::api::ChatRequest;
use serde_json::{Value, json};

/// The reply as generated: text, thinking, calls and why it stopped.
pub(crate) struct Generated {
    pub content: String,
    pub thinking: String,
    pub calls: Vec<(String, Value)>,
    pub eval_count: u64,
    pub done_reason: &'static str,
}

/// The reply with its thinking, `format` applied and cut at `num_predict` (or at half its length
/// under a `Length` fault), with the output tokens counted as the stub counts them.
pub(crate) fn generate(
    reply: Reply,
    thinks: bool,
    req: &ChatRequest,
    length_fault: bool,
) -> Generated {
    // A scripted reply that carries its own reasoning (a messy shape) sends it as it is, when the
    // model thinks at all: Ollama sends `thinking` only then.
    let thinking = match &reply.thinking {
        _ if !thinks => String::new(),
        Some(own) => own.clone(),
        None => thinking_for(&reply),
    };
    let mut content = reply.content;
    if reply.calls.is_empty()
        && let Some(format) = req.format.as_ref().filter(|f| f.as_str() != Some(""))
    {
        content = formatted(&content, format);
    }
    let calls_chars: usize = reply
        .calls
        .iter()
        .map(|(n, a)| n.len() + a.to_string().len())
        .sum();
    let full = tokens(thinking.len() + content.len() + calls_chars);
    let limit = req
        .options
        .num_predict
        .and_then(|p| u64::try_from(p).ok())
        .filter(|&p| p > 0);
    let limit = if length_fault {
        Some(limit.map_or(full / 2, |l| l.min(full / 2)).max(1))
    } else {
        limit
    };
    match limit {
        // An injected length stop always stops, even a one-token reply.
        Some(limit) if limit < full || length_fault => cut(thinking, content, &reply.calls, limit),
        _ => Generated {
            content,
            thinking,
            calls: reply.calls,
            eval_count: full,
            done_reason: "stop",
        },
    }
}

/// What a thinking stub model reasons before its reply.
fn thinking_for(reply: &Reply) -> String {
    match reply.calls.first() {
        Some((name, args)) => format!("The customer needs {name}; I will call it with {args}."),
        None => "I have what I need, so I will answer the customer now.".to_string(),
    }
}

/// The reply text as `format` asks: `"json"` wraps it in an object, a schema gets an object with
/// each of its properties (strings carry the text).
fn formatted(content: &str, format: &Value) -> String {
    let Some(props) = format.get("properties").and_then(Value::as_object) else {
        return json!({ "reply": content }).to_string();
    };
    let obj: serde_json::Map<String, Value> = props
        .iter()
        .map(|(k, p)| {
            let v = match p.get("type").and_then(Value::as_str) {
                Some("integer" | "number") => json!(0),
                Some("boolean") => json!(false),
                Some("array") => json!([]),
                Some("object") => json!({}),
                _ => json!(content),
            };
            (k.clone(), v)
        })
        .collect();
    Value::Object(obj).to_string()
}

/// The output cut after `limit` tokens: thinking first, then the text and calls (as text, since a
/// call cut short is no call), with `done_reason: "length"`.
fn cut(thinking: String, content: String, calls: &[(String, Value)], limit: u64) -> Generated {
    let budget = usize::try_from(limit.saturating_mul(4)).unwrap_or(usize::MAX);
    let mut text = content;
    for (name, args) in calls {
        text.push_str(&json!({ "name": name, "arguments": args }).to_string());
    }
    let thinking_kept: String = truncate_chars(&thinking, budget);
    let left = budget.saturating_sub(thinking_kept.len());
    Generated {
        content: truncate_chars(&text, left),
        thinking: thinking_kept,
        calls: Vec::new(),
        eval_count: limit,
        done_reason: "length",
    }
}

/// The longest prefix of `s` of at most `bytes` bytes that ends on a character boundary.
fn truncate_chars(s: &str, bytes: usize) -> String {
    let mut end = bytes.min(s.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_string()
}
