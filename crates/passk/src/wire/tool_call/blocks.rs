//! Calls in a family's own block tags, read whole: GLM-4.7's compact
//! `<tool_call>name<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>` (and GLM-4.5/4.6's
//! layout with line breaks; Ollama `glm47_test.go`, `glm46_test.go`), Apertus'
//! `<|tools_prefix|>[{"name": {args}}]<|tools_suffix|>` (the tool name is the key; Ollama
//! `apertus15_test.go`, PR ollama/ollama#17555) and Olmo 3's `<function_calls>name(k="v")
//! </function_calls>`, one Python call a line (Ollama `olmo3_test.go`). GLM's values are strings
//! (Ollama types them by the tool's schema, which the wire layer does not see; passk's argument
//! rules take every argument as a string); Apertus' are JSON; Olmo's Python literals.

use super::python;
use super::scan::Budget;
use super::scan::ident;
use super::search;
use super::{Found, malformed_named, text_call};
use serde_json::{Map, Value};

const TOOL_CALL: (&str, &str) = ("<tool_call>", "</tool_call>");
const ARG_KEY: (&str, &str) = ("<arg_key>", "</arg_key>");
const ARG_VALUE: (&str, &str) = ("<arg_value>", "</arg_value>");
const APERTUS: (&str, &str) = ("<|tools_prefix|>", "<|tools_suffix|>");
const OLMO: (&str, &str) = ("<function_calls>", "</function_calls>");

/// Block-tagged calls in `text`.
pub(super) fn find(text: &str, known: &[String], budget: &mut Budget) -> Vec<Found> {
    let mut out = Vec::new();
    for (body, end) in bodies(text, TOOL_CALL) {
        if budget.spend(end - body) {
            out.extend(glm(text, body, end, known));
        }
    }
    for (body, end) in bodies(text, APERTUS) {
        if budget.spend(end - body) {
            out.extend(apertus(text, body, end));
        }
    }
    for (body, end) in bodies(text, OLMO) {
        if budget.spend(end - body) {
            out.extend(olmo(text, body, end));
        }
    }
    out
}

/// The body of each `open … close` block (where it starts, and where its close tag ends; a block
/// never closed runs to the next open tag or the end).
fn bodies(text: &str, (open, close): (&str, &str)) -> Vec<(usize, usize)> {
    let opens: Vec<usize> = search::positions(text, open).collect();
    opens
        .iter()
        .enumerate()
        .map(|(k, &at)| {
            let body = at + open.len();
            let limit = opens.get(k + 1).copied().unwrap_or(text.len());
            let end =
                search::find(&text[body..limit], close).map_or(limit, |c| body + c + close.len());
            (body, end)
        })
        .collect()
}

/// The part of a block between its body's start and its close tag.
fn inner<'a>(text: &'a str, body: usize, end: usize, close: &str) -> &'a str {
    let s = &text[body..end];
    s.strip_suffix(close).unwrap_or(s)
}

/// A GLM call: a name, then `<arg_key>`/`<arg_value>` pairs (a known tool with none is a call
/// with no arguments). Starts at the name, so the `<tool_call>` tag around it holds a call.
fn glm(text: &str, body: usize, end: usize, known: &[String]) -> Option<Found> {
    let inner = inner(text, body, end, TOOL_CALL.1);
    let lead = inner.len() - inner.trim_start().len();
    let name = ident(&inner[lead..]);
    let rest = inner[lead + name.len()..].trim();
    let pairs = rest.starts_with(ARG_KEY.0);
    if name.is_empty() || !(pairs || (rest.is_empty() && known.iter().any(|k| k == name))) {
        return None;
    }
    let start = body + lead;
    Some(match arg_pairs(rest) {
        Ok(args) => text_call(start, end, name.to_string(), Value::Object(args)),
        Err(why) => Found {
            start,
            end,
            call: malformed_named(name, &text[start..], &why),
        },
    })
}

/// `<arg_key>k</arg_key><arg_value>v</arg_value>` pairs, spaces between them allowed.
fn arg_pairs(mut rest: &str) -> Result<Map<String, Value>, String> {
    let mut args = Map::new();
    let shape =
        || "the arguments are not <arg_key>k</arg_key><arg_value>v</arg_value> pairs".to_string();
    while !rest.is_empty() {
        let (key, after) = element(rest, ARG_KEY).ok_or_else(shape)?;
        let (value, after) = element(after.trim_start(), ARG_VALUE).ok_or_else(shape)?;
        python::insert_once(
            &mut args,
            key.trim().to_string(),
            Value::String(value.trim().to_string()),
        )
        .map_err(|why| why.into_owned())?;
        rest = after.trim_start();
    }
    Ok(args)
}

/// The text of the element `open … close` at the start of `s`, and what follows it.
fn element<'a>(s: &'a str, (open, close): (&str, &str)) -> Option<(&'a str, &'a str)> {
    let inside = s.strip_prefix(open)?;
    let c = search::find(inside, close)?;
    Some((&inside[..c], &inside[c + close.len()..]))
}

/// Apertus' calls: a JSON list of one-key objects, the key the tool and its value the arguments.
/// The close tag may be missing (Ollama accepts a consumed suffix). Anything else is one
/// malformed call.
fn apertus(text: &str, body: usize, end: usize) -> Vec<Found> {
    let list = inner(text, body, end, APERTUS.1).trim();
    let start = body - APERTUS.0.len();
    let calls: Option<Vec<(String, Value)>> = match serde_json::from_str::<Value>(list) {
        Ok(Value::Array(items)) => items.into_iter().map(one_key_call).collect(),
        _ => None,
    };
    match calls {
        Some(calls) => calls
            .into_iter()
            .map(|(name, args)| text_call(start, end, name, args))
            .collect(),
        None => vec![Found {
            start,
            end,
            call: malformed_named(
                "",
                &text[start..],
                "write a JSON list of {\"<tool>\": {arguments}} objects",
            ),
        }],
    }
}

/// `{"name": {args}}` as a call.
fn one_key_call(item: Value) -> Option<(String, Value)> {
    let Value::Object(obj) = item else {
        return None;
    };
    if obj.len() != 1 {
        return None;
    }
    let (name, args) = obj.into_iter().next()?;
    args.is_object().then_some((name, args))
}

/// Olmo 3's calls: Python calls one a line (a block of DeepSeek's plain `<invoke>` form is left
/// to `invoke`).
fn olmo(text: &str, body: usize, end: usize) -> Vec<Found> {
    let inner = inner(text, body, end, OLMO.1);
    let calls = inner.trim();
    if calls.starts_with('<') || calls.is_empty() {
        return Vec::new();
    }
    let start = body - OLMO.0.len();
    match python::statements_in(calls) {
        Ok(calls) => calls
            .into_iter()
            .map(|(name, args)| text_call(start, end, name, args))
            .collect(),
        Err(why) => vec![Found {
            start,
            end,
            call: malformed_named(ident(calls), &text[start..], &why),
        }],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(text: &str) -> Vec<(String, Value)> {
        let known = vec!["get_order".to_string(), "list_orders".to_string()];
        find(text, &known, &mut Budget::for_len(text.len()))
            .into_iter()
            .map(|f| (f.call.name, f.call.arguments))
            .collect()
    }

    /// Ollama `glm47_test.go::TestGLM47ParserToolCallIndexing` (compact, three calls) and
    /// `glm46_test.go::TestGLM46ToolCallParsing` "simple tool call" (line breaks), with the
    /// store's tools; vLLM `test_glm47_moe_tool_parser.py::test_zero_arg_inline`.
    #[test]
    fn glm_pairs_read_as_strings() {
        let compact = "<tool_call>get_order<arg_key>order_id</arg_key><arg_value>5105</arg_value></tool_call>\n<tool_call>list_orders<arg_key>customer_id</arg_key><arg_value>C1</arg_value></tool_call>";
        assert_eq!(
            read(compact),
            vec![
                ("get_order".into(), json!({"order_id": "5105"})),
                ("list_orders".into(), json!({"customer_id": "C1"})),
            ]
        );
        let lines = "<tool_call>get_order\n<arg_key>order_id</arg_key>\n<arg_value>5105</arg_value>\n</tool_call>";
        assert_eq!(
            read(lines),
            vec![("get_order".into(), json!({"order_id": "5105"}))]
        );
        assert_eq!(
            read("<tool_call>list_orders</tool_call>"),
            vec![("list_orders".into(), json!({}))]
        );
        // A JSON body is left to the JSON scan.
        assert!(read("<tool_call>{\"name\": \"get_order\"}</tool_call>").is_empty());
    }

    /// Ollama `apertus15_test.go::TestApertus15ParserToolCalls` and
    /// `TestApertus15ParserAcceptsConsumedToolSuffix` (PR ollama/ollama#17555).
    #[test]
    fn apertus_names_are_keys() {
        let text = "I will check.<|tools_prefix|>[{\"get_order\":{\"order_id\":\"5105\"}},{\"list_orders\":{\"customer_id\":\"C1\",\"open\":true}}]<|tools_suffix|>";
        assert_eq!(
            read(text),
            vec![
                ("get_order".into(), json!({"order_id": "5105"})),
                (
                    "list_orders".into(),
                    json!({"customer_id": "C1", "open": true})
                ),
            ]
        );
        assert_eq!(
            read("<|tools_prefix|>[{\"get_order\":{\"order_id\":\"5105\"}}]").len(),
            1
        );
        let bad = read("<|tools_prefix|>[{\"get_order\":\"5105\"}]<|tools_suffix|>");
        assert_eq!(bad[0].0, "__malformed__:?");
    }

    /// Ollama `olmo3_test.go::TestOlmo3Parser`, cases "multiple tool calls" and "content then
    /// tool call", with the store's tools.
    #[test]
    fn olmo_lines_are_python_calls() {
        let text = "Let me check.<function_calls>get_order(order_id=\"5105\")\nlist_orders(customer_id='C1', open=true)</function_calls>";
        assert_eq!(
            read(text),
            vec![
                ("get_order".into(), json!({"order_id": "5105"})),
                (
                    "list_orders".into(),
                    json!({"customer_id": "C1", "open": true})
                ),
            ]
        );
        assert!(
            read("<function_calls>\n<invoke name=\"get_order\"></invoke></function_calls>")
                .is_empty()
        );
    }
}
