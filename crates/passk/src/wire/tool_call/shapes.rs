//! Call shapes marked by a keyword rather than by JSON alone: Mistral's
//! `[TOOL_CALLS]name[ARGS]{...}`, llama 3.1's `<function=name>{...}</function>` (Qwen3-Coder's
//! `<function=name><parameter=key>..` form is read by [`xml_parameters`]) and ReAct's
//! `Action: name` / `Action Input: {...}`. Each gives a call when its arguments are a JSON object
//! and a malformed call otherwise; the span it covers is skipped by the JSON scan.

use super::finds::Finds;
use super::scan::{Braces, Budget, ident, object_at};
use super::search;
use super::strict::Read;
use super::xml_parameters::{self, FUNCTION_CLOSE};
use super::{ExtractedCall, Found, malformed_named};
use crate::trace::CallFormat;
use serde_json::Value;

const MISTRAL: &str = "[TOOL_CALLS]";
const MISTRAL_ARGS: &str = "[ARGS]";
const MISTRAL_ID: &str = "[CALL_ID]";
const FUNCTION_TAG: &str = "<function=";
const ACTION: &str = "Action:";
const ACTION_INPUT: &str = "Action Input:";

/// Keyword-marked calls in `text`.
pub(super) fn find(
    text: &str,
    braces: &mut Braces<'_>,
    known: &[String],
    budget: &mut Budget,
) -> Finds {
    let mut found = Finds::default();
    for at in search::positions(text, MISTRAL) {
        let rest = &text[at + MISTRAL.len()..];
        let name = ident(rest.trim_start());
        if name.is_empty() {
            // `[TOOL_CALLS][{...}]`: the JSON scan reads the objects.
            continue;
        }
        let after = &rest[rest.len() - rest.trim_start().len() + name.len()..];
        let after = skip_call_id(after);
        let args_at = after
            .strip_prefix(MISTRAL_ARGS)
            .map(|a| text.len() - a.len() + (a.len() - a.trim_start().len()));
        found.push(call_with_args(text, braces, budget, at, name, args_at));
    }
    let tags: Vec<usize> = search::positions(text, FUNCTION_TAG).collect();
    for (k, &at) in tags.iter().enumerate() {
        let rest = &text[at + FUNCTION_TAG.len()..];
        let name = ident(rest);
        let args_at = rest[name.len()..]
            .strip_prefix('>')
            .map(|a| text.len() - a.len() + (a.len() - a.trim_start().len()));
        if let Some(body) = args_at.filter(|&b| {
            text[b..].starts_with(xml_parameters::PARAMETER_TAG)
                || text[b..].starts_with(FUNCTION_CLOSE)
        }) {
            // Qwen3-Coder: `<parameter=key>value</parameter>` elements instead of a JSON object.
            let limit = tags.get(k + 1).copied().unwrap_or(text.len());
            found.extend(xml_parameters::call(text, at, name, body, limit, budget));
            continue;
        }
        let mut f = call_with_args(text, braces, budget, at, name, args_at);
        let tail = text[f.end..].trim_start();
        if tail.starts_with(FUNCTION_CLOSE) {
            f.end = text.len() - tail.len() + FUNCTION_CLOSE.len();
        }
        found.push(f);
    }
    for at in search::positions(text, ACTION) {
        let line_end = text[at..].find('\n').map_or(text.len(), |e| at + e);
        if !budget.spend(line_end - at) {
            break;
        }
        let name = text[at + ACTION.len()..line_end].trim().trim_matches('`');
        let next = text[line_end..].trim_start();
        let Some(input) = next.strip_prefix(ACTION_INPUT) else {
            continue;
        };
        if name.is_empty() || ident(name) != name {
            continue;
        }
        let input_at = text.len() - input.len() + (input.len() - input.trim_start().len());
        if !known.iter().any(|k| k == name) && !text[input_at..].starts_with('{') {
            continue;
        }
        found.push(call_with_args(
            text,
            braces,
            budget,
            at,
            name,
            Some(input_at),
        ));
    }
    found
}

/// Skips Mistral's optional `[CALL_ID]<id>` between the name and `[ARGS]`.
fn skip_call_id(s: &str) -> &str {
    match s.strip_prefix(MISTRAL_ID) {
        Some(id) => {
            let len = id
                .bytes()
                .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'-')
                .count();
            &id[len..]
        }
        None => s,
    }
}

/// The call named `name` whose arguments object starts at `args_at`; malformed when there is no
/// object there or it does not parse.
pub(super) fn call_with_args(
    text: &str,
    braces: &mut Braces<'_>,
    budget: &mut Budget,
    at: usize,
    name: &str,
    args_at: Option<usize>,
) -> Found {
    let parsed = args_at
        .filter(|&a| text[a..].starts_with('{'))
        .and_then(|a| object_at(text, braces, a, budget));
    match parsed {
        Some((end, Read::Clear(arguments @ Value::Object(_)))) if !name.is_empty() => Found {
            start: at,
            end,
            call: ExtractedCall {
                name: name.to_string(),
                arguments,
                format: CallFormat::Text,
                id: None,
                error: None,
            },
        },
        Some((end, Read::Ambiguous(_, why))) if !name.is_empty() => Found {
            start: at,
            end,
            call: malformed_named(name, &text[at..], &why),
        },
        _ => {
            let why = if name.is_empty() {
                "the call names no tool"
            } else {
                "the arguments are not a JSON object"
            };
            Found {
                start: at,
                end: args_at.unwrap_or(at + 1),
                call: malformed_named(name, &text[at..], why),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn calls(text: &str) -> Vec<(String, Value, CallFormat)> {
        let known = vec!["get_order".to_string()];
        let mut braces = Braces::new(text);
        find(text, &mut braces, &known, &mut Budget::for_len(text.len()))
            .into_kept_calls()
            .into_iter()
            .map(|c| (c.name, c.arguments, c.format))
            .collect()
    }

    #[test]
    fn mistral_function_tag_and_react() {
        let want = vec![(
            "get_order".to_string(),
            json!({"order_id": "5105"}),
            CallFormat::Text,
        )];
        assert_eq!(
            calls(r#"[TOOL_CALLS]get_order[ARGS]{"order_id": "5105"}"#),
            want
        );
        assert_eq!(
            calls(r#"[TOOL_CALLS]get_order[CALL_ID]a1B2c3D4e[ARGS]{"order_id": "5105"}"#),
            want
        );
        assert_eq!(
            calls(r#"<function=get_order>{"order_id": "5105"}</function>"#),
            want
        );
        assert_eq!(
            calls("Thought: look it up\nAction: get_order\nAction Input: {\"order_id\": \"5105\"}"),
            want
        );
        assert_eq!(
            calls(
                "<tool_call>\n<function=get_order>\n<parameter=order_id>\n5105\n</parameter>\n</function>\n</tool_call>"
            ),
            want
        );
        // [TOOL_CALLS] followed by a JSON list is left to the JSON scan.
        assert!(calls(r#"[TOOL_CALLS][{"name": "get_order", "arguments": {}}]"#).is_empty());
    }

    #[test]
    fn broken_marked_calls_are_malformed() {
        for text in [
            r#"[TOOL_CALLS]get_order[ARGS]{"order_id": "5105""#,
            "<function=get_order>order 5105</function>",
            "Action: get_order\nAction Input: 5105",
        ] {
            let got = calls(text);
            assert_eq!(got.len(), 1, "{text}");
            assert_eq!(got[0].0, "__malformed__:get_order", "{text}");
            assert_eq!(got[0].2, CallFormat::Malformed, "{text}");
        }
        assert!(calls("Action: reply to the customer\nAction Input: none").is_empty());
    }
}
