//! Ollama's tool parser (`tools/tools.go` and `tools/template.go`, v0.33) applied to a stub model's
//! whole output, so that a run against the stub records what a run against Ollama records.
//!
//! Ollama finds a tag in the model's template: the text before the first `{` of the
//! `{{ if .ToolCalls }}` block (`<tool_call>` for Qwen 2.5 and qwen2.5-coder, the default models),
//! else `{`. With a tag such as `<tool_call>`, the text before the tag is the reply's content and
//! everything after it belongs to the parser: each call it can read (a tool's name, then a JSON
//! object with its `arguments` or `parameters`) is a tool call, and the rest is dropped, a call cut
//! by `num_predict` included; `eval_count` still counts every token. With `{`, output that does
//! not start with `{` is passed through, and JSON that holds no call comes back as text.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

/// The tool-call tag of a stub model's template.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolTag {
    /// `<tool_call>`, as Qwen 2.5's template (the default models').
    #[default]
    ToolCall,
    /// `{`: a template whose call block starts with the JSON (Ollama's fallback).
    Brace,
    /// No parser: the text is passed through as written, as a server does that reads no calls from
    /// text (llama-server without `--jinja`, or any server for a format it cannot parse). The
    /// messy and text-call models use it, since their text is what passk's own reading is for.
    Text,
}

impl ToolTag {
    /// The tag Ollama looks for, if any.
    fn tag(self) -> Option<&'static str> {
        match self {
            ToolTag::ToolCall => Some("<tool_call>"),
            ToolTag::Brace => Some("{"),
            ToolTag::Text => None,
        }
    }

    /// The model's raw output: its text, then each call as its template writes it.
    pub(crate) fn render(self, content: &str, calls: &[(String, Value)]) -> String {
        let mut out = content.to_string();
        for (name, args) in calls {
            let call = json!({"name": name, "arguments": args}).to_string();
            match self {
                ToolTag::ToolCall => {
                    out.push_str(&format!("<tool_call>\n{call}\n</tool_call>\n"));
                }
                ToolTag::Brace | ToolTag::Text => {
                    out.push_str(&call);
                    out.push('\n');
                }
            }
        }
        out
    }

    /// What Ollama sends for the model output `raw` when the request offered `tools` (names):
    /// the content and the calls read from it.
    pub(crate) fn parse(self, raw: &str, tools: &[&str]) -> (String, Vec<(String, Value)>) {
        let Some(tag) = self.tag() else {
            return (raw.to_string(), Vec::new());
        };
        let Some((content, at)) = before_tag(raw, tag) else {
            return (raw.to_string(), Vec::new());
        };
        if tag == "{" && !content.trim().is_empty() {
            // `Add`: with a `{` tag, output that does not open with JSON is no call.
            return (raw.to_string(), Vec::new());
        }
        let mut buffer = &raw[at..];
        let mut calls = Vec::new();
        while let Some((call, end)) = next_call(buffer, tools) {
            calls.push(call);
            buffer = &buffer[end..];
        }
        let rest = if tag == "{" && calls.is_empty() {
            // `done` (balanced braces) or `Content` (at the end): JSON that held no call is text.
            buffer
        } else {
            ""
        };
        (format!("{content}{rest}"), calls)
    }
}

/// The text before the tag and where the parser's buffer starts; `None` when no part of the tag
/// is there. A reply that ends in the tag's first characters is held back, then dropped at the
/// end, as `findTag` and `Content` do.
fn before_tag<'a>(raw: &'a str, tag: &str) -> Option<(&'a str, usize)> {
    if let Some(i) = raw.find(tag) {
        return Some((&raw[..i], i));
    }
    (1..tag.len().min(raw.len() + 1))
        .rev()
        .find(|&n| raw.ends_with(&tag[..n]))
        .map(|n| (&raw[..raw.len() - n], raw.len()))
}

/// `parseToolCall`: the first tool named in `buffer` and the arguments that follow; the call and
/// where the buffer goes on.
fn next_call(buffer: &str, tools: &[&str]) -> Option<((String, Value), usize)> {
    let (tool, name_end) = find_tool(buffer, tools)?;
    let (args, args_end) = find_arguments(tool, buffer)?;
    Some((
        (tool.to_string(), Value::Object(args)),
        name_end.max(args_end),
    ))
}

/// `findTool`: the tool whose name occurs first in `buffer` (the longest on a tie); none while
/// the buffer ends in the start of a longer name.
fn find_tool<'t>(buffer: &str, tools: &[&'t str]) -> Option<(&'t str, usize)> {
    let longest = tools.iter().map(|t| t.len()).max().unwrap_or(0);
    for i in 1..=buffer.len().min(longest) {
        let Some(tail) = buffer.get(buffer.len() - i..) else {
            continue;
        };
        if tools
            .iter()
            .any(|t| tail.len() < t.len() && t.starts_with(tail))
        {
            return None;
        }
    }
    let mut found: Option<(&str, usize)> = None;
    for t in tools {
        let Some(pos) = buffer.find(t) else { continue };
        let better = match found {
            None => true,
            Some((f, start)) => pos < start || (pos == start && t.len() > f.len()),
        };
        if better {
            found = Some((t, pos));
        }
    }
    found.map(|(t, pos)| (t, pos + t.len()))
}

/// `findArguments`: the first JSON object in `buffer` that reads as the tool's arguments, and the
/// end of that object. An object with a `name` but neither `arguments` nor `parameters` stops the
/// search with no call, as Ollama's does.
fn find_arguments(tool: &str, buffer: &str) -> Option<(Map<String, Value>, usize)> {
    let bytes = buffer.as_bytes();
    let (mut start, mut braces) = (None, 0i64);
    let (mut in_string, mut escaped) = (false, false);
    for (i, &c) in bytes.iter().enumerate() {
        if escaped {
            escaped = false;
            continue;
        }
        match c {
            b'\\' => escaped = true,
            b'"' => in_string = !in_string,
            _ if in_string => {}
            b'{' => {
                if braces == 0 {
                    start = Some(i);
                }
                braces += 1;
            }
            b'}' => {
                braces -= 1;
                if braces == 0
                    && let Some(s) = start
                {
                    match serde_json::from_slice::<Map<String, Value>>(&bytes[s..=i]) {
                        Ok(data) => {
                            return match arguments_in(tool, &data) {
                                Some(args) => args.map(|a| (a, i)),
                                None => Some((data, i)),
                            };
                        }
                        Err(_) => start = None,
                    }
                }
                braces = braces.max(0);
            }
            _ => {}
        }
    }
    None
}

/// `findObject`: `Some(Some(args))` for arguments found, `Some(None)` for an object with a name
/// and no arguments (no call), `None` for an object that says nothing of the tool.
#[allow(clippy::option_option)]
fn arguments_in(tool: &str, obj: &Map<String, Value>) -> Option<Option<Map<String, Value>>> {
    let map = |key: &str| match obj.get(key) {
        Some(Value::Object(m)) => Some(m.clone()),
        Some(Value::String(s)) => serde_json::from_str::<Map<String, Value>>(s).ok(),
        _ => None,
    };
    if obj.contains_key("name") {
        return Some(map("arguments").or_else(|| map("parameters")));
    }
    if let Some(args) = map(tool) {
        return Some(Some(args));
    }
    obj.values().find_map(|v| match v {
        Value::Object(child) => arguments_in(tool, child),
        Value::Array(items) => items.iter().find_map(|item| match item {
            Value::Object(child) => arguments_in(tool, child),
            _ => None,
        }),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOOLS: [&str; 3] = ["get_order", "get_order_history", "cancel_order"];

    fn qwen(raw: &str) -> (String, Vec<(String, Value)>) {
        ToolTag::ToolCall.parse(raw, &TOOLS)
    }

    /// Cases from `tools/tools_test.go` (qwen) and the behaviour measured on Ollama 0.33.
    #[test]
    fn the_tool_call_tag_reads_calls_and_drops_the_rest_as_ollama_does() {
        let call = |n: &str, a: Value| (n.to_string(), a);
        let (content, calls) = qwen(
            "Let me look.<tool_call>\n{\"name\": \"get_order\", \"arguments\": {\"order_id\": \"5105\"}}\n</tool_call> and more",
        );
        assert_eq!(content, "Let me look.");
        assert_eq!(calls, [call("get_order", json!({"order_id": "5105"}))]);
        // Two calls, the second without its closing tag.
        let (_, calls) = qwen(
            "<tool_call>{\"name\":\"get_order\",\"arguments\":{\"order_id\":\"1\"}}</tool_call>\n<tool_call>{\"name\":\"cancel_order\",\"arguments\":{\"order_id\":\"2\"}}",
        );
        assert_eq!(calls.len(), 2);
        // A call cut by num_predict: dropped with everything after the tag.
        assert_eq!(
            qwen("Sure.<tool_call>\n{\"name\": \"get_order\", \"argum"),
            ("Sure.".to_string(), vec![])
        );
        // Prose that names the tag loses the rest of the reply.
        assert_eq!(
            qwen("I will use <tool_call> to look it up. Done."),
            ("I will use ".to_string(), vec![])
        );
        // A name without arguments is no call, and stops the reading.
        assert_eq!(
            qwen("<tool_call>{\"name\": \"get_order\"}</tool_call>"),
            (String::new(), vec![])
        );
        // A tool name that is not offered: no call.
        assert_eq!(
            qwen("<tool_call>{\"name\": \"refund\", \"arguments\": {}}"),
            (String::new(), vec![])
        );
        // The longest name at the first position wins; string arguments are read.
        let (_, calls) = qwen(
            "<tool_call>{\"name\": \"get_order_history\", \"arguments\": \"{\\\"customer_id\\\": \\\"c1\\\"}\"}",
        );
        assert_eq!(
            calls,
            [call("get_order_history", json!({"customer_id": "c1"}))]
        );
        // A reply ending in the tag's first characters: held back, then dropped.
        assert_eq!(qwen("Checking <tool"), ("Checking ".to_string(), vec![]));
        // No tag at all: the text as written.
        let text = "{\"name\": \"get_order\", \"arguments\": {}}";
        assert_eq!(qwen(text), (text.to_string(), vec![]));
    }

    #[test]
    fn the_brace_tag_reads_json_that_opens_the_reply_and_passes_the_rest() {
        let brace = |raw: &str| ToolTag::Brace.parse(raw, &TOOLS);
        let (content, calls) =
            brace(" {\"name\": \"get_order\", \"arguments\": {\"order_id\": \"1\"}}");
        assert_eq!((content.as_str(), calls.len()), (" ", 1));
        let prose = "Here: {\"name\": \"get_order\", \"arguments\": {}}";
        assert_eq!(brace(prose), (prose.to_string(), vec![]));
        let not_a_call = "{\"answer\": 42}";
        assert_eq!(brace(not_a_call), (not_a_call.to_string(), vec![]));
        let cut = "{\"name\": \"get_order\", \"argu";
        assert_eq!(brace(cut), (cut.to_string(), vec![]));
    }

    #[test]
    fn a_rendered_call_reads_back_as_itself() {
        let calls = vec![
            ("get_order".to_string(), json!({"order_id": "5105"})),
            (
                "cancel_order".to_string(),
                json!({"order_id": "5105", "n": 1.5}),
            ),
        ];
        for tag in [ToolTag::ToolCall, ToolTag::Brace] {
            let raw = tag.render("", &calls);
            assert_eq!(tag.parse(&raw, &TOOLS).1, calls, "{tag:?}");
        }
        let raw = ToolTag::ToolCall.render("Looking it up.", &calls);
        assert_eq!(
            ToolTag::ToolCall.parse(&raw, &TOOLS),
            ("Looking it up.".to_string(), calls)
        );
    }
}
