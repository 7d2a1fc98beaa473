//! The XML-like invoke families, read by one table: DeepSeek V3.2's DSML
//! (`<｜DSML｜function_calls><｜DSML｜invoke name="f"><｜DSML｜parameter name="k" string="true">v
//! </｜DSML｜parameter></｜DSML｜invoke></｜DSML｜function_calls>`, SGLang's
//! `deepseekv32_detector.py`), the same tags without the `｜DSML｜` marker (`<function_calls>
//! <invoke name=..>`, that detector's plain form), and MiniMax-M2's `<minimax:tool_call><invoke
//! name="f"><parameter name="k">v</parameter></invoke></minimax:tool_call>` (Ollama
//! `minimaxm2_test.go`, vLLM `test_minimax_m2_tool_parser.py`).
//!
//! An invoke's body is a JSON object (DSML's JSON form) or parameter elements. A parameter marked
//! `string="true"` is its raw text, trimmed; one marked otherwise (`string="false"`) is JSON, or
//! its raw text when that is no JSON; one with no `string` attribute (MiniMax) is a string, or
//! the object or list its text is (Ollama reads a JSON object so, vLLM keeps strings: passk's
//! argument rules take every argument as a string). A missing `</parameter>` or `</invoke>` ends
//! at the next element, as both reference parsers recover.

use super::python::insert_once;
use super::scan::Budget;
use super::search;
use super::{Found, malformed_named, text_call};
use serde_json::{Map, Value};

/// The marker DeepSeek V3.2 puts inside each tag (`<｜DSML｜invoke`).
const DSML: &str = "｜DSML｜";

/// Openings of a block of invokes; an invoke counts only after one of them.
const BLOCKS: [&str; 4] = [
    "<｜DSML｜function_calls>",
    "<｜DSML｜tool_calls>",
    "<function_calls>",
    "<minimax:tool_call>",
];

/// Closings of a block.
const BLOCK_CLOSES: [&str; 4] = [
    "</｜DSML｜function_calls>",
    "</｜DSML｜tool_calls>",
    "</function_calls>",
    "</minimax:tool_call>",
];

/// Invoke calls in `text`.
pub(super) fn find(text: &str, budget: &mut Budget) -> Vec<Found> {
    let Some(first_block) = BLOCKS.iter().filter_map(|b| search::find(text, b)).min() else {
        return Vec::new();
    };
    let opens: Vec<usize> = search::positions(text, "invoke name=")
        .filter(|&at| at > first_block && opens_tag(text, at))
        .collect();
    let mut out = Vec::new();
    for (k, &at) in opens.iter().enumerate() {
        let limit = opens.get(k + 1).map_or(text.len(), |&n| tag_start(text, n));
        if !budget.spend(limit - at) {
            break;
        }
        out.push(invoke(
            text,
            tag_start(text, at),
            at + "invoke name=".len(),
            limit,
        ));
    }
    widen_to_blocks(text, &mut out);
    out
}

/// Whether `invoke name=` at `at` is inside an opening tag: `<invoke` or `<｜DSML｜invoke`.
fn opens_tag(text: &str, at: usize) -> bool {
    let before = &text[..at];
    before.ends_with('<') || before.ends_with(&format!("<{DSML}"))
}

/// Where the tag holding `at` starts (its `<`).
fn tag_start(text: &str, at: usize) -> usize {
    text[..at].rfind('<').unwrap_or(at)
}

/// One invoke whose tag starts at `start` and whose name attribute's value starts at `attr`; it
/// ends at its close tag, or at `limit` (the next invoke).
fn invoke(text: &str, start: usize, attr: usize, limit: usize) -> Found {
    let window = &text[attr..limit];
    let Some((name, head_len)) = quoted_value(window).and_then(|(name, rest)| {
        let gt = rest.find('>')?;
        Some((name, window.len() - rest.len() + gt + 1))
    }) else {
        return Found {
            start,
            end: limit,
            call: malformed_named("", &text[start..], "the invoke names no tool"),
        };
    };
    let body_at = attr + head_len;
    let (body_end, end) = match close_at(&text[body_at..limit], "invoke>") {
        Some((b, e)) => (body_at + b, body_at + e),
        None => {
            let stop = BLOCK_CLOSES
                .iter()
                .filter_map(|c| search::find(&text[body_at..limit], c))
                .min()
                .map_or(limit, |c| body_at + c);
            (stop, stop)
        }
    };
    match arguments(&text[body_at..body_end]) {
        Ok(args) => text_call(start, end, name.to_string(), Value::Object(args)),
        Err(why) => Found {
            start,
            end,
            call: malformed_named(name, &text[start..], &why),
        },
    }
}

/// The value of a quoted attribute at the start of `s` (`"x"` or `'x'`), and what follows it.
fn quoted_value(s: &str) -> Option<(&str, &str)> {
    let quote = s.chars().next().filter(|c| *c == '"' || *c == '\'')?;
    let rest = &s[1..];
    let end = rest.find(quote)?;
    Some((&rest[..end], &rest[end + 1..]))
}

/// The first closing tag `</tag>` or `</｜DSML｜tag>` in `s`: where it starts and ends.
fn close_at(s: &str, tag: &str) -> Option<(usize, usize)> {
    for at in search::positions(s, tag) {
        let before = &s[..at];
        for lead in ["</".to_string(), format!("</{DSML}")] {
            if before.ends_with(&lead) {
                return Some((at - lead.len(), at + tag.len()));
            }
        }
    }
    None
}

/// An invoke's arguments: its body as a JSON object, or its parameter elements.
fn arguments(body: &str) -> Result<Map<String, Value>, String> {
    let trimmed = body.trim();
    if trimmed.starts_with('{') && trimmed.ends_with('}') {
        match serde_json::from_str::<Value>(trimmed) {
            Ok(Value::Object(args)) => return Ok(args),
            _ => return Err("the arguments are not a JSON object".to_string()),
        }
    }
    let mut args = Map::new();
    let mut rest = body;
    while let Some(at) = search::find(rest, "parameter name=") {
        let (key, after) = quoted_value(&rest[at + "parameter name=".len()..])
            .ok_or("a parameter names no argument")?;
        let gt = after.find('>').ok_or("a parameter tag is not closed")?;
        let attrs = &after[..gt];
        let value_from = &after[gt + 1..];
        let next = search::find(value_from, "parameter name=")
            .map_or(value_from.len(), |n| tag_start(value_from, n));
        let (value, tail) = match close_at(&value_from[..next], "parameter>") {
            Some((b, e)) => (&value_from[..b], &value_from[e..]),
            None => (&value_from[..next], &value_from[next..]),
        };
        insert_once(&mut args, key.to_string(), typed(value, attrs))
            .map_err(|why| why.into_owned())?;
        rest = tail;
    }
    Ok(args)
}

/// A parameter's value by its `string` attribute (see the module docs).
fn typed(raw: &str, attrs: &str) -> Value {
    let raw = raw.trim();
    let compact: String = attrs.chars().filter(|c| !c.is_whitespace()).collect();
    let string = if compact.contains("string=\"true\"") || compact.contains("string='true'") {
        Some(true)
    } else if compact.contains("string=") {
        Some(false)
    } else {
        None
    };
    let json = || serde_json::from_str::<Value>(raw).ok();
    match string {
        Some(true) => Value::String(raw.to_string()),
        Some(false) => json().unwrap_or_else(|| Value::String(raw.to_string())),
        None => json()
            .filter(|v| v.is_object() || v.is_array())
            .unwrap_or_else(|| Value::String(raw.to_string())),
    }
}

/// Widens each call to the block tags around it when only spaces lie between, so the tags are
/// read as part of the call rather than as prose.
fn widen_to_blocks(text: &str, calls: &mut [Found]) {
    for f in calls.iter_mut() {
        let before = text[..f.start].trim_end();
        if let Some(b) = BLOCKS.iter().find(|b| before.ends_with(*b)) {
            f.start = before.len() - b.len();
        }
        let after = &text[f.end..];
        let rest = after.trim_start();
        if let Some(c) = BLOCK_CLOSES.iter().find(|c| rest.starts_with(*c)) {
            f.end += after.len() - rest.len() + c.len();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(text: &str) -> Vec<(String, Value)> {
        find(text, &mut Budget::for_len(text.len()))
            .into_iter()
            .map(|f| (f.call.name, f.call.arguments))
            .collect()
    }

    /// vLLM `tests/tool_parsers/test_deepseekv32_tool_parser.py::test_multiple_tools` and SGLang
    /// `test_function_call_parser.py::TestDeepSeekV32Detector::test_detect_and_parse_xml_format`,
    /// with the store's tools.
    #[test]
    fn dsml_parameters_are_raw_strings_or_json() {
        let text = "Sure, let me check! <｜DSML｜function_calls>\n<｜DSML｜invoke name=\"get_order\">\n<｜DSML｜parameter name=\"order_id\" string=\"true\">5105</｜DSML｜parameter>\n</｜DSML｜invoke>\n<｜DSML｜invoke name=\"search_products\">\n<｜DSML｜parameter name=\"query\" string=\"true\">copper kettle</｜DSML｜parameter><｜DSML｜parameter name=\"topn\" string=\"false\">10</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>";
        assert_eq!(
            read(text),
            vec![
                ("get_order".into(), json!({"order_id": "5105"})),
                (
                    "search_products".into(),
                    json!({"query": "copper kettle", "topn": 10})
                ),
            ]
        );
    }

    /// SGLang `test_detect_and_parse_json_format` and `test_detect_and_parse_no_parameters`; the
    /// plain form of the detector's docstring (`<function_calls><invoke name=..>`).
    #[test]
    fn dsml_json_bodies_empty_bodies_and_the_plain_form() {
        let json_body = "<｜DSML｜function_calls>\n    <｜DSML｜invoke name=\"get_order\">\n    {\n        \"order_id\": \"5105\"\n    }\n</｜DSML｜invoke>\n</｜DSML｜function_calls>";
        assert_eq!(
            read(json_body),
            vec![("get_order".into(), json!({"order_id": "5105"}))]
        );
        let empty = "Let me get it.\n\n<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"list_orders\">\n</｜DSML｜invoke>\n</｜DSML｜function_calls>";
        assert_eq!(read(empty), vec![("list_orders".into(), json!({}))]);
        let plain = "<function_calls>\n<invoke name=\"get_order\">\n<parameter name=\"order_id\" string=\"true\">5105</parameter>\n</invoke>\n</function_calls>";
        assert_eq!(
            read(plain),
            vec![("get_order".into(), json!({"order_id": "5105"}))]
        );
    }

    /// Ollama `minimaxm2_test.go::TestMiniMaxM2Parser`, cases "multiple invokes in one tool_call
    /// block" and "parameter with JSON object value" (PR ollama/ollama#13582), with the store's
    /// tools; a missing `</invoke>` still reads, as there.
    #[test]
    fn minimax_invokes_read_as_strings_or_objects() {
        let text = "<minimax:tool_call>\n<invoke name=\"get_order\">\n<parameter name=\"order_id\">5105</parameter>\n</invoke>\n<invoke name=\"search_products\">\n<parameter name=\"query\">{\"keywords\": [\"kettle\"]}</parameter>\n</minimax:tool_call>";
        assert_eq!(
            read(text),
            vec![
                ("get_order".into(), json!({"order_id": "5105"})),
                (
                    "search_products".into(),
                    json!({"query": {"keywords": ["kettle"]}})
                ),
            ]
        );
        // No block: prose naming an invoke is no call.
        assert!(read("I would write <invoke name=\"get_order\"> for that.").is_empty());
        let twice = "<minimax:tool_call><invoke name=\"cancel_order\"><parameter name=\"order_id\">5111</parameter><parameter name=\"order_id\">5114</parameter></invoke></minimax:tool_call>";
        assert_eq!(read(twice)[0].0, "__malformed__:cancel_order");
    }
}
