//! Tool-call recovery: the calls of one assistant message, native or written into the text.
//!
//! Native `message.tool_calls` win when present. Otherwise the content is scanned for JSON objects
//! shaped like calls: bare `{"name": .., "arguments": {..}}` objects (several back to back),
//! inside ```json fences or `<tool_call>` tags, with `parameters` instead of `arguments`, with the
//! arguments as a JSON-encoded string, or OpenAI's `{"function": {..}}` shape. Text that has the
//! shape of a call but does not parse becomes one `Malformed` call carrying the message that tells
//! the model the expected shape. Plain prose gives no call. Nothing here panics, whatever the input.

use super::api::ChatMessage;
use crate::trace::CallFormat;
use serde_json::{Map, Value};

/// Prefix of the tool name given to a malformed call.
pub const MALFORMED_PREFIX: &str = "__malformed__:";

/// One call found in a message.
#[derive(Debug, Clone, PartialEq)]
pub struct ExtractedCall {
    /// Tool name as written (`__malformed__:<name or ?>` for a malformed call).
    pub name: String,
    /// Arguments as written (an object when well formed; any JSON value otherwise).
    pub arguments: Value,
    /// How the call was written.
    pub format: CallFormat,
    /// The native call's id, when it had one.
    pub id: Option<String>,
    /// For a malformed call: the error text telling the model the expected shape.
    pub error: Option<String>,
}

/// The calls of one assistant message, in order.
pub fn extract(message: &ChatMessage, known_tools: &[String]) -> Vec<ExtractedCall> {
    if !message.tool_calls.is_empty() {
        return message
            .tool_calls
            .iter()
            .map(|c| ExtractedCall {
                name: c.function.name.clone(),
                arguments: decode_string_arguments(c.function.arguments.clone())
                    .unwrap_or_else(|v| v),
                format: CallFormat::Native,
                id: c.id.clone(),
                error: None,
            })
            .collect();
    }
    extract_text(&message.content, known_tools)
}

/// The calls written into a reply's text (no native calls considered).
pub fn extract_text(content: &str, known_tools: &[String]) -> Vec<ExtractedCall> {
    let mut found: Vec<(usize, ExtractedCall)> = Vec::new();
    let mut covered: Vec<(usize, usize)> = Vec::new();
    let bytes = content.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'{' {
            i += 1;
            continue;
        }
        let Some(end) = balanced_end(bytes, i) else {
            i += 1;
            continue;
        };
        let Ok(value) = serde_json::from_str::<Value>(&content[i..end]) else {
            i += 1;
            continue;
        };
        covered.push((i, end));
        if let Some(call) = interpret(&value, known_tools) {
            found.push((i, call));
        }
        i = end;
    }
    // Call-shaped text that did not parse: a `{"name"` outside every parsed object, or a
    // `<tool_call>` tag holding no call. One malformed call per reply is enough to tell the model.
    let inside = |pos: usize| covered.iter().any(|&(s, e)| pos >= s && pos < e);
    let mut malformed: Option<usize> = name_key_positions(content, known_tools)
        .into_iter()
        .find(|&p| !inside(p));
    if malformed.is_none() {
        malformed = empty_tag_position(content, &found);
    }
    if let Some(pos) = malformed {
        found.push((pos, malformed_call(&content[pos..])));
    }
    found.sort_by_key(|(p, _)| *p);
    found.into_iter().map(|(_, c)| c).collect()
}

/// Turns a parsed object into a call, if it is shaped like one.
fn interpret(value: &Value, known_tools: &[String]) -> Option<ExtractedCall> {
    let obj = value.as_object()?;
    // A call wrapped in one key: OpenAI's {"type": "function", "function": {"name": .., ..}}, or
    // {"tool_call": {..}} as small models write it.
    let wrapped = ["function", "tool_call", "call"].iter().find_map(|k| {
        obj.get(*k)
            .and_then(Value::as_object)
            .filter(|inner| inner.get("name").is_some_and(Value::is_string))
    });
    let obj = wrapped.unwrap_or(obj);
    let name = obj.get("name").and_then(Value::as_str)?;
    let args = obj.get("arguments").or_else(|| obj.get("parameters"));
    let known = known_tools.iter().any(|t| t == name);
    if !known && args.is_none() {
        return None;
    }
    let arguments = args.cloned().unwrap_or_else(|| Value::Object(Map::new()));
    match decode_string_arguments(arguments) {
        Ok(arguments) => Some(ExtractedCall {
            name: name.to_string(),
            arguments,
            format: CallFormat::Text,
            id: None,
            error: None,
        }),
        Err(raw) => Some(ExtractedCall {
            name: format!("{MALFORMED_PREFIX}{name}"),
            arguments: raw,
            format: CallFormat::Malformed,
            id: None,
            error: Some(shape_message(
                name,
                "the arguments string is not a JSON object",
            )),
        }),
    }
}

/// Arguments given as a JSON-encoded string become the object they encode; a string that is not
/// an encoded object is returned as `Err` (unchanged). Anything else passes through.
fn decode_string_arguments(arguments: Value) -> Result<Value, Value> {
    match &arguments {
        Value::String(s) => match serde_json::from_str::<Value>(s) {
            Ok(v @ Value::Object(_)) => Ok(v),
            _ => Err(arguments),
        },
        _ => Ok(arguments),
    }
}

/// End (exclusive) of the balanced `{...}` starting at `start`, strings and escapes respected.
fn balanced_end(bytes: &[u8], start: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (k, &b) in bytes.iter().enumerate().skip(start) {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' => depth += 1,
            b'}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(k + 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// Positions of `{` directly followed (after whitespace) by the key `"name"`, or of a Python-dict
/// call (`{'name': '<known tool>', ...}` or one with an `'arguments'`/`'parameters'` key), which is
/// call-shaped but not JSON. A dict that merely has a `'name'` key is prose, not a call.
fn name_key_positions(content: &str, known_tools: &[String]) -> Vec<usize> {
    content
        .match_indices('{')
        .filter(|(i, _)| {
            let rest = content[i + 1..].trim_start();
            if rest.starts_with("\"name\"") {
                return true;
            }
            let Some(value) = rest
                .strip_prefix("'name'")
                .map(str::trim_start)
                .and_then(|r| r.strip_prefix(':'))
                .map(str::trim_start)
                .and_then(|r| r.strip_prefix('\''))
            else {
                return false;
            };
            let name: String = value.chars().take_while(|&c| c != '\'').collect();
            let body = &rest[..rest.find('}').unwrap_or(rest.len())];
            known_tools.contains(&name)
                || body.contains("'arguments'")
                || body.contains("'parameters'")
        })
        .map(|(i, _)| i)
        .collect()
}

/// Position of a `<tool_call>` tag that holds no parsed call.
fn empty_tag_position(content: &str, found: &[(usize, ExtractedCall)]) -> Option<usize> {
    let tags: Vec<usize> = content
        .match_indices("<tool_call>")
        .map(|(i, _)| i)
        .collect();
    tags.iter().enumerate().find_map(|(k, &start)| {
        let end = tags.get(k + 1).copied().unwrap_or(content.len());
        let close = content[start..end]
            .find("</tool_call>")
            .map_or(end, |c| start + c);
        let holds_call = found.iter().any(|(p, _)| *p > start && *p < close);
        (!holds_call).then_some(start)
    })
}

/// The malformed call for call-shaped text starting at the beginning of `fragment`.
fn malformed_call(fragment: &str) -> ExtractedCall {
    let name = guess_name(fragment);
    ExtractedCall {
        name: format!("{MALFORMED_PREFIX}{}", name.as_deref().unwrap_or("?")),
        arguments: Value::String(fragment.chars().take(200).collect()),
        format: CallFormat::Malformed,
        id: None,
        error: Some(shape_message(
            name.as_deref().unwrap_or("<tool>"),
            "the call is not valid JSON",
        )),
    }
}

/// The value of the first `"name": "..."` in a fragment.
fn guess_name(fragment: &str) -> Option<String> {
    let (at, quote) = match (fragment.find("\"name\""), fragment.find("'name'")) {
        (Some(d), Some(s)) if s < d => (s, '\''),
        (Some(d), _) => (d, '"'),
        (None, Some(s)) => (s, '\''),
        (None, None) => return None,
    };
    let rest = fragment[at + 6..]
        .trim_start()
        .strip_prefix(':')?
        .trim_start()
        .strip_prefix(quote)?;
    let name: String = rest.chars().take_while(|&c| c != quote).take(64).collect();
    (!name.is_empty()).then_some(name)
}

/// The error text sent back to the model for a malformed call.
fn shape_message(name: &str, why: &str) -> String {
    format!(
        "malformed tool call ({why}). Write one JSON object per call: \
         {{\"name\": \"{name}\", \"arguments\": {{\"<parameter>\": \"<value>\"}}}}"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::api::{ToolCall, ToolCallFunction};
    use proptest::prelude::*;
    use serde_json::json;

    fn known() -> Vec<String> {
        ["find_customer", "get_order", "list_orders"]
            .map(String::from)
            .to_vec()
    }

    fn text(s: &str) -> Vec<ExtractedCall> {
        extract(&ChatMessage::assistant(s), &known())
    }

    fn names(calls: &[ExtractedCall]) -> Vec<(&str, CallFormat)> {
        calls.iter().map(|c| (c.name.as_str(), c.format)).collect()
    }

    #[test]
    fn a_wrapped_call_is_a_call_and_a_python_dict_is_malformed() {
        let known = vec!["get_order".to_string()];
        let wrapped = extract_text(
            r#"{"tool_call": {"name": "get_order", "arguments": {"order_id": "5101"}}}"#,
            &known,
        );
        assert_eq!(wrapped.len(), 1);
        assert_eq!(
            (wrapped[0].name.as_str(), wrapped[0].format),
            ("get_order", CallFormat::Text)
        );
        let python = extract_text(
            "{'name': 'get_order', 'arguments': {'order_id': '5101'}}",
            &known,
        );
        assert_eq!(python.len(), 1);
        assert_eq!(python[0].format, CallFormat::Malformed);
        assert!(
            python[0]
                .error
                .as_deref()
                .is_some_and(|e| e.contains("arguments")),
            "{:?}",
            python[0].error
        );
        assert_eq!(python[0].name, "__malformed__:get_order");
        // A dict with a 'name' key in prose, or a Python set, is not a call.
        let prose = "The record looks like {'name': 'Alice', 'status': 'shipped'}; a set is {'name', 'email'}.";
        assert!(extract_text(prose, &known).is_empty());
    }

    #[test]
    fn native_calls_win_over_text() {
        let mut m =
            ChatMessage::assistant(r#"{"name": "get_order", "arguments": {"order_id": "X"}}"#);
        m.tool_calls = vec![ToolCall {
            id: Some("call_1".into()),
            function: ToolCallFunction {
                index: Some(0),
                name: "find_customer".into(),
                arguments: json!({"query": "Ann"}),
            },
        }];
        let calls = extract(&m, &known());
        assert_eq!(names(&calls), vec![("find_customer", CallFormat::Native)]);
        assert_eq!(calls[0].id.as_deref(), Some("call_1"));
    }

    #[test]
    fn bare_fenced_tagged_and_parameters_forms_parse() {
        let bare = text(r#"{"name": "get_order", "arguments": {"order_id": "A1"}}"#);
        assert_eq!(names(&bare), vec![("get_order", CallFormat::Text)]);
        assert_eq!(bare[0].arguments, json!({"order_id": "A1"}));
        let fenced = text(
            "Sure.\n```json\n{\"name\": \"get_order\", \"arguments\": {\"order_id\": \"A1\"}}\n```",
        );
        assert_eq!(fenced[0].arguments, json!({"order_id": "A1"}));
        let tagged = text(
            "<tool_call>\n{\"name\": \"list_orders\", \"parameters\": {\"customer_id\": \"C1\"}}\n</tool_call>",
        );
        assert_eq!(names(&tagged), vec![("list_orders", CallFormat::Text)]);
        assert_eq!(tagged[0].arguments, json!({"customer_id": "C1"}));
    }

    #[test]
    fn several_calls_and_string_arguments() {
        let calls = text(
            "{\"name\": \"find_customer\", \"arguments\": {\"query\": \"Ann\"}}\n{\"name\": \"get_order\", \"arguments\": \"{\\\"order_id\\\": \\\"A1\\\"}\"}",
        );
        assert_eq!(
            names(&calls),
            vec![
                ("find_customer", CallFormat::Text),
                ("get_order", CallFormat::Text)
            ]
        );
        assert_eq!(calls[1].arguments, json!({"order_id": "A1"}));
        let openai = text(
            r#"{"type":"function","function":{"name":"get_order","arguments":"{\"order_id\":\"B\"}"}}"#,
        );
        assert_eq!(openai[0].arguments, json!({"order_id": "B"}));
    }

    #[test]
    fn unknown_names_count_only_with_arguments() {
        let invented = text(r#"{"name": "lookup_everything", "arguments": {"q": 1}}"#);
        assert_eq!(
            names(&invented),
            vec![("lookup_everything", CallFormat::Text)]
        );
        assert!(text(r#"Customer: {"name": "Ann Lee", "email": "ann@example.com"}"#).is_empty());
    }

    #[test]
    fn broken_call_shapes_are_malformed() {
        let cut = text(r#"{"name": "get_order", "arguments": {"order_id": "A1""#);
        assert_eq!(
            names(&cut),
            vec![("__malformed__:get_order", CallFormat::Malformed)]
        );
        assert!(
            cut[0]
                .error
                .as_deref()
                .is_some_and(|e| e.contains("\"arguments\""))
        );
        let tag = text("<tool_call>get_order(A1)</tool_call>");
        assert_eq!(
            names(&tag),
            vec![("__malformed__:?", CallFormat::Malformed)]
        );
        let bad_args = text(r#"{"name": "get_order", "arguments": "order A1"}"#);
        assert_eq!(bad_args[0].format, CallFormat::Malformed);
    }

    #[test]
    fn prose_gives_nothing() {
        assert!(text("Your order A1 shipped on 2 May {as promised}.").is_empty());
        assert!(text("").is_empty());
    }

    proptest! {
        #[test]
        fn never_panics(s in "\\PC{0,300}") {
            let _ = text(&s);
        }

        #[test]
        fn never_panics_on_call_like_noise(parts in proptest::collection::vec(
            prop_oneof![
                Just("{".to_string()), Just("}".to_string()), Just("\"name\"".to_string()),
                Just(":".to_string()), Just("\"get_order\"".to_string()), Just("\"arguments\"".to_string()),
                Just("<tool_call>".to_string()), Just("</tool_call>".to_string()), Just("```json".to_string()),
                Just("\\".to_string()), Just("\"".to_string()), Just(",".to_string()), "\\PC{0,5}",
            ], 0..40)) {
            let s: String = parts.concat();
            let calls = text(&s);
            for c in calls {
                prop_assert!(!c.name.is_empty());
            }
        }
    }
}
