//! The stub model's output: its thinking, `format` applied, the cut at `num_predict` (or at an
//! injected length stop) with the output tokens counted as the stub counts them, and the calls read
//! from it as Ollama's parser reads them for the model's template tag ([`ToolTag`]).

use super::chat::tokens;
use super::script::Reply;
use super::tool_parser::ToolTag;
use passk::wire::api::ChatRequest;
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
    tag: ToolTag,
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
    // Ollama reads calls from the output only when the request offers tools.
    let tools: Vec<&str> = req
        .tools
        .iter()
        .flatten()
        .filter_map(|t| t.pointer("/function/name").and_then(Value::as_str))
        .collect();
    let tag = if tools.is_empty() { ToolTag::Text } else { tag };
    match limit {
        // An injected length stop always stops, even a one-token reply.
        Some(limit) if limit < full || length_fault => {
            let raw = match tag {
                // Calls as text, since a call cut short is no call.
                ToolTag::Text => {
                    let mut text = content;
                    for (name, args) in &reply.calls {
                        text.push_str(&json!({ "name": name, "arguments": args }).to_string());
                    }
                    text
                }
                _ => tag.render(&content, &reply.calls),
            };
            let (thinking, text) = cut(&thinking, &raw, limit);
            let (content, calls) = tag.parse(&text, &tools);
            Generated {
                content,
                thinking,
                calls,
                eval_count: limit,
                done_reason: "length",
            }
        }
        _ => {
            let (content, calls) = match tag {
                ToolTag::Text => (content, reply.calls),
                _ => tag.parse(&tag.render(&content, &reply.calls), &tools),
            };
            Generated {
                content,
                thinking,
                calls,
                eval_count: full,
                done_reason: "stop",
            }
        }
    }
}

/// What a thinking stub model reasons before its reply.
fn thinking_for(reply: &Reply) -> String {
    match reply.calls.first() {
        Some((name, args)) => format!("The customer needs {name}; I will call it with {args}."),
        None => "I have what I need, so I will answer the customer now.".to_string(),
    }
}

/// The reply text as `format` asks: `"json"` wraps it in an object; a JSON schema gets a value
/// that conforms to it, as Ollama's grammar from the schema constrains output
/// (`llama/sampling_ext.cpp` `schema_to_grammar`): an `enum` or `const` gives its first value,
/// an object holds every property and every `required` key (nested objects likewise), an array
/// holds `minItems` items, strings carry the text.
fn formatted(content: &str, format: &Value) -> String {
    let is_schema = format.get("properties").is_some() || format.get("type").is_some();
    if !is_schema {
        return json!({ "reply": content }).to_string();
    }
    conforming(format, content).to_string()
}

/// A value `schema` accepts, with `text` in its strings.
fn conforming(schema: &Value, text: &str) -> Value {
    if let Some(first) = schema
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return first.clone();
    }
    if let Some(c) = schema.get("const") {
        return c.clone();
    }
    let alternatives = ["anyOf", "oneOf", "allOf"].iter().find_map(|k| {
        schema
            .get(*k)
            .and_then(Value::as_array)
            .and_then(|a| a.first())
    });
    if let Some(first) = alternatives {
        return conforming(first, text);
    }
    let kind = match schema.get("type") {
        Some(Value::String(t)) => Some(t.as_str()),
        Some(Value::Array(types)) => types
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null"),
        _ => None,
    };
    let kind = kind.or(schema.get("properties").map(|_| "object"));
    match kind {
        Some("object") => {
            let mut obj = serde_json::Map::new();
            let props = schema.get("properties").and_then(Value::as_object);
            for (k, p) in props.into_iter().flatten() {
                obj.insert(k.clone(), conforming(p, text));
            }
            let required = schema.get("required").and_then(Value::as_array);
            for k in required.into_iter().flatten().filter_map(Value::as_str) {
                obj.entry(k.to_string()).or_insert_with(|| json!(text));
            }
            Value::Object(obj)
        }
        Some("array") => {
            let n = schema.get("minItems").and_then(Value::as_u64).unwrap_or(0);
            let item = schema.get("items").cloned().unwrap_or(json!({}));
            Value::Array((0..n.min(16)).map(|_| conforming(&item, text)).collect())
        }
        Some("integer" | "number") => schema.get("minimum").cloned().unwrap_or(json!(0)),
        Some("boolean") => json!(false),
        Some("null") => Value::Null,
        _ => json!(text),
    }
}

/// The thinking and the raw output `text` kept within `limit` tokens, thinking first.
fn cut(thinking: &str, text: &str, limit: u64) -> (String, String) {
    let budget = usize::try_from(limit.saturating_mul(4)).unwrap_or(usize::MAX);
    let thinking_kept: String = truncate_chars(thinking, budget);
    let left = budget.saturating_sub(thinking_kept.len());
    (thinking_kept, truncate_chars(text, left))
}

/// The longest prefix of `s` of at most `bytes` bytes that ends on a character boundary.
fn truncate_chars(s: &str, bytes: usize) -> String {
    let mut end = bytes.min(s.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ollama constrains output to the schema (`server/routes.go` hands `format` to the runner,
    /// which builds a grammar from it): enums, required keys and nesting hold.
    #[test]
    fn a_schema_format_gets_a_reply_that_conforms_to_it() {
        let schema = json!({
            "type": "object",
            "properties": {
                "intent": {"type": "string", "enum": ["order_status", "refund"]},
                "order": {
                    "type": "object",
                    "properties": {"id": {"type": "string"}, "count": {"type": "integer", "minimum": 1}},
                    "required": ["id", "count", "note"]
                },
                "tags": {"type": "array", "items": {"enum": ["a"]}, "minItems": 1},
                "maybe": {"type": ["null", "boolean"]}
            },
            "required": ["intent", "order"]
        });
        let out: Value = serde_json::from_str(&formatted("hi", &schema)).expect("json");
        assert_eq!(
            out,
            json!({
                "intent": "order_status",
                "order": {"id": "hi", "count": 1, "note": "hi"},
                "tags": ["a"],
                "maybe": false
            })
        );
        assert_eq!(
            formatted("hi", &json!("json")),
            json!({"reply": "hi"}).to_string()
        );
    }
}
