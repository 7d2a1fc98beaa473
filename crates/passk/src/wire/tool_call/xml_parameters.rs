//! Qwen3-Coder's XML call form: `<function=name>` then one `<parameter=key>value</parameter>`
//! element per argument, then `</function>` (usually inside `<tool_call>` tags), as the llama.cpp
//! and vLLM qwen3coder parsers read it. Each value is a string, trimmed of the spaces and line
//! breaks around it: the argument rules take every argument as a string (docs/reference/suites.md). A
//! missing `</parameter>` ends at the next `<parameter=` or at `</function>`; anything else between
//! the elements, a key that is no name, or one key given twice with different values makes the
//! call malformed.

use super::python::insert_once;
use super::scan::Budget;
use super::search::Needle;
use super::{Found, malformed_named, text_call};
use serde_json::{Map, Value};

/// Opens one argument: `<parameter=key>`.
pub(super) const PARAMETER_TAG: &str = "<parameter=";
const PARAMETER_CLOSE: &str = "</parameter>";
/// Closes the call.
pub(super) const FUNCTION_CLOSE: &str = "</function>";

/// The call named `name` starting at `at` whose parameter elements start at `body`; the call ends
/// at its `</function>`, looked for before `limit` (the next `<function=`), so consecutive calls
/// cost their length once. `None` when the budget is spent.
pub(super) fn call(
    text: &str,
    at: usize,
    name: &str,
    body: usize,
    limit: usize,
    budget: &mut Budget,
) -> Option<Found> {
    let window = &text[body..limit.max(body)];
    static CLOSE: Needle = Needle::new(FUNCTION_CLOSE);
    let close = CLOSE.find(window);
    let inner = &window[..close.unwrap_or(window.len())];
    if !budget.spend(inner.len()) {
        return None;
    }
    let end = close.map_or(body + window.len(), |c| body + c + FUNCTION_CLOSE.len());
    let read = if name.is_empty() {
        Err("the call names no tool".to_string())
    } else {
        parameters(inner)
    };
    Some(match read {
        Ok(arguments) => text_call(at, end, name.to_string(), Value::Object(arguments)),
        Err(why) => Found {
            start: at,
            end,
            call: malformed_named(name, &text[at..], &why),
        },
    })
}

/// The arguments written as parameter elements in `inner` (what lies between `<function=name>`
/// and `</function>`).
fn parameters(inner: &str) -> Result<Map<String, Value>, String> {
    let mut args = Map::new();
    let mut rest = inner.trim_start();
    while !rest.is_empty() {
        let Some((key, after)) = rest
            .strip_prefix(PARAMETER_TAG)
            .and_then(|r| r.split_once('>'))
        else {
            return Err(
                "the arguments are not <parameter=name>value</parameter> elements".to_string(),
            );
        };
        let key = key.trim();
        if key.is_empty() || super::scan::ident(key) != key {
            return Err(format!("`{key}` is not a parameter name"));
        }
        static NEXT: Needle = Needle::new(PARAMETER_TAG);
        static CLOSE: Needle = Needle::new(PARAMETER_CLOSE);
        let next = NEXT.find(after).unwrap_or(after.len());
        let (value, tail) = match CLOSE.find(&after[..next]) {
            Some(c) => (&after[..c], &after[c + PARAMETER_CLOSE.len()..]),
            None => (&after[..next], &after[next..]),
        };
        insert_once(
            &mut args,
            key.to_string(),
            Value::String(value.trim().to_string()),
        )?;
        rest = tail.trim_start();
    }
    Ok(args)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::CallFormat;
    use crate::wire::tool_call::ExtractedCall;
    use serde_json::json;

    /// The call read from `text`, which starts with its `<function=get_order>` tag, and its end.
    fn read(text: &str) -> (ExtractedCall, usize) {
        let body = text.find('>').expect("the open tag") + 1;
        let mut budget = Budget::for_len(text.len());
        let f = call(text, 0, "get_order", body, text.len(), &mut budget).expect("within budget");
        (f.call, f.end)
    }

    #[test]
    fn parameters_read_as_trimmed_strings() {
        let text = "<function=get_order>\n<parameter=order_id>\n5105\n</parameter>\n<parameter=note>  two words </parameter>\n</function> after";
        let (call, end) = read(text);
        assert_eq!(
            (call.name.as_str(), call.format),
            ("get_order", CallFormat::Text)
        );
        assert_eq!(
            call.arguments,
            json!({"order_id": "5105", "note": "two words"})
        );
        assert_eq!(&text[end..], " after");
        // No parameters: a call with no arguments; a missing </parameter> ends at the next element.
        assert_eq!(
            read("<function=get_order>\n</function>").0.arguments,
            json!({})
        );
        assert_eq!(
            read("<function=get_order><parameter=a>1<parameter=b>2</function>")
                .0
                .arguments,
            json!({"a": "1", "b": "2"})
        );
        // The same key twice with the same value is harmless.
        let twice =
            "<function=get_order><parameter=a>1</parameter><parameter=a> 1 </parameter></function>";
        assert_eq!(read(twice).0.arguments, json!({"a": "1"}));
    }

    #[test]
    fn unreadable_parameters_are_malformed() {
        for (text, says) in [
            (
                "<function=get_order>order 5105</function>",
                "not <parameter=name>",
            ),
            (
                "<function=get_order><parameter=a b>1</parameter></function>",
                "not a parameter name",
            ),
            (
                "<function=get_order><parameter=order_id>5111</parameter><parameter=order_id>5114</parameter></function>",
                "given twice with different values",
            ),
        ] {
            let (call, _) = read(text);
            assert_eq!(
                (call.name.as_str(), call.format),
                ("__malformed__:get_order", CallFormat::Malformed),
                "{text}"
            );
            let error = call.error.unwrap_or_default();
            assert!(error.contains(says), "{text}: {error}");
        }
    }
}
