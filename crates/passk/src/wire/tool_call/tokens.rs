//! Calls marked by a model family's special tokens, as they reach the text when a server does not
//! parse them: gpt-oss Harmony (`<|channel|>commentary to=functions.name <|constrain|>json
//! <|message|>{..}<|call|>`, the recipient also in the role part or on the analysis channel; with
//! the tokens stripped, `assistantcommentary to=functions.name json{..}`),
//! DeepSeek V3 / R1 (`<｜tool▁call▁begin｜>function<｜tool▁sep｜>name` and a ```json body) and V3.1
//! (`<｜tool▁call▁begin｜>name<｜tool▁sep｜>{..}`), in either spelling of the tokens (`｜▁` or ASCII
//! `|_`), Kimi K2 (`<|tool_call_begin|>functions.name:0<|tool_call_argument_begin|>{..}`),
//! functionary v2 (`<|recipient|>name` … `<|content|>{..}`) and v3 (`>>>name` then `{..}`),
//! Gemma 4 (`call:name{key: ..}` and `call:name(key: ..)`, strings in `<|"|>`; FunctionGemma's
//! `<escape>`), and llama 3.1's `<|python_tag|>name(key=..)`. Each call is read with its arguments,
//! or is one malformed call naming the tool; its span is skipped by the JSON scan.

use super::finds::Finds;
use super::python;
use super::scan::{Braces, Budget, ident};
use super::search::{self, Needle};
use super::shapes::call_with_args;
use super::unread::harmony_body_end;
use super::{Found, malformed_named};

/// Longest token name read, bytes.
const TOKEN_NAME_MAX: usize = 48;
/// How far back from `<|message|>` a Harmony header is looked for, bytes.
const HEADER_MAX: usize = 256;
/// How far past `call:` a Gemma call is read when it has no closing tag, bytes.
const GEMMA_WINDOW: usize = 4096;

/// A special token `<|name|>` or `<｜name｜>`; the words of its name joined by `_` whether they
/// were written with `_`, `▁` or a space.
#[derive(Debug)]
struct Token {
    start: usize,
    end: usize,
    name: String,
}

/// Token-marked calls in `text`.
pub(super) fn find(
    text: &str,
    braces: &mut Braces<'_>,
    known: &[String],
    budget: &mut Budget,
) -> Finds {
    let toks = tokens(text, budget);
    let mut found = Finds::default();
    harmony(text, &toks, braces, budget, &mut found);
    stripped_harmony(text, braces, known, budget, &mut found);
    call_blocks(text, &toks, braces, budget, &mut found);
    functionary(text, &toks, braces, known, budget, &mut found);
    gemma(text, known, budget, &mut found);
    python_tag(text, &toks, &mut found);
    found
}

/// Every special token of `text`, in order.
fn tokens(text: &str, budget: &mut Budget) -> Vec<Token> {
    let mut out = Vec::new();
    for at in search::byte_positions(text, b'<') {
        let rest = &text[at + 1..];
        let Some(inner) = rest.strip_prefix('|').or_else(|| rest.strip_prefix('｜')) else {
            continue;
        };
        let mut name = String::new();
        let mut closed = None;
        let mut read = 0;
        for (i, c) in inner.char_indices() {
            read = i;
            if i > TOKEN_NAME_MAX {
                break;
            }
            match c {
                'a'..='z' | 'A'..='Z' | '0'..='9' => name.push(c.to_ascii_lowercase()),
                '_' | '▁' | ' ' => name.push('_'),
                '|' | '｜' => {
                    closed = Some(i + c.len_utf8());
                    break;
                }
                _ => break,
            }
        }
        if !budget.spend(read + 1) {
            break;
        }
        let Some(after) = closed.filter(|&a| inner[a..].starts_with('>')) else {
            continue;
        };
        let end = text.len() - inner.len() + after + 1;
        out.push(Token {
            start: at,
            end,
            name,
        });
    }
    out
}

fn named<'t>(toks: &'t [Token], names: &[&str]) -> impl Iterator<Item = (usize, &'t Token)> {
    let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    toks.iter()
        .enumerate()
        .filter(move |(_, t)| names.contains(&t.name))
}

/// The position of the first non-space byte at or after `at`.
fn skip_space(text: &str, at: usize) -> usize {
    at + (text[at..].len() - text[at..].trim_start().len())
}

/// Harmony messages whose header names a recipient (`to=functions.name`).
fn harmony(
    text: &str,
    toks: &[Token],
    braces: &mut Braces<'_>,
    budget: &mut Budget,
    found: &mut Finds,
) {
    const ENDS_MESSAGE: [&str; 4] = ["end", "call", "return", "message"];
    for (k, t) in named(toks, &["message"]) {
        let boundary = toks[..k]
            .iter()
            .rev()
            .find(|p| ENDS_MESSAGE.contains(&p.name.as_str()))
            .map_or(0, |p| p.end);
        let from = text.ceil_char_boundary(boundary.max(t.start.saturating_sub(HEADER_MAX)));
        let header = &text[from..t.start];
        let Some(to) = header.find("to=") else {
            continue;
        };
        let recipient = ident(&header[to + 3..]);
        let name = recipient.strip_prefix("functions.").unwrap_or(recipient);
        let body_end = harmony_body_end(text, t.end);
        let args_at = skip_space(text, t.end).min(body_end);
        let mut f = call_with_args(
            text,
            braces,
            budget,
            skip_space(text, from),
            name,
            Some(args_at),
        );
        f.end = f.end.max(body_end);
        found.push(f);
    }
}

/// Harmony calls with the special tokens stripped: `assistantcommentary to=functions.name json{..}`
/// (the `<|constrain|>` token gone, its `json` kept, sometimes glued to the name: then the name is
/// the known tool it ends with `json` after).
fn stripped_harmony(
    text: &str,
    braces: &mut Braces<'_>,
    known: &[String],
    budget: &mut Budget,
    found: &mut Finds,
) {
    const HEAD: &str = "commentary to=functions.";
    for at in search::positions(text, HEAD) {
        let start = if text[..at].ends_with("assistant") {
            at - "assistant".len()
        } else if text[..at].trim().is_empty() {
            at
        } else {
            continue;
        };
        let name_at = at + HEAD.len();
        let mut name = ident(&text[name_at..]);
        if let Some(glued) = name.strip_suffix("json")
            && !known.iter().any(|k| k == name)
            && known.iter().any(|k| k == glued)
        {
            name = glued;
        }
        let mut args_at = skip_space(text, name_at + name.len());
        for word in ["<|constrain|>", "json"] {
            if text[args_at..].starts_with(word) {
                args_at = skip_space(text, args_at + word.len());
            }
        }
        found.push(call_with_args(
            text,
            braces,
            budget,
            start,
            name,
            Some(args_at),
        ));
    }
}

/// DeepSeek's and Kimi K2's `tool_call_begin` … `tool_call_end` blocks.
fn call_blocks(
    text: &str,
    toks: &[Token],
    braces: &mut Braces<'_>,
    budget: &mut Budget,
    found: &mut Finds,
) {
    const STOPS: [&str; 5] = [
        "tool_call_end",
        "tool_call_begin",
        "tool_calls_end",
        "tool_calls_section_end",
        "end_of_sentence",
    ];
    for (k, t) in named(toks, &["tool_call_begin"]) {
        let rest = &toks[k + 1..];
        let stop = rest.iter().position(|n| STOPS.contains(&n.name.as_str()));
        let inner = &rest[..stop.unwrap_or(rest.len())];
        let body_end = stop.map_or(text.len(), |s| rest[s].start);
        let span_end = stop
            .map(|s| &rest[s])
            .filter(|n| n.name == "tool_call_end")
            .map_or(body_end, |n| n.end);
        let (name, args_at) = block_name_and_args(text, t.end, inner);
        let mut f = call_with_args(text, braces, budget, t.start, name, args_at);
        f.end = f.end.max(span_end);
        found.push(f);
    }
}

/// The tool name and where the arguments start in one call block whose head starts at `head`.
fn block_name_and_args<'a>(
    text: &'a str,
    head: usize,
    inner: &[Token],
) -> (&'a str, Option<usize>) {
    if let Some(arg) = inner.iter().find(|n| n.name == "tool_call_argument_begin") {
        // Kimi K2: `functions.name:0`.
        let id = text[head..arg.start].trim();
        let id = id.strip_prefix("functions.").unwrap_or(id);
        let name = id
            .rsplit_once(':')
            .filter(|(_, n)| n.bytes().all(|b| b.is_ascii_digit()))
            .map_or(id, |(name, _)| name);
        let name = if ident(name) == name { name } else { "" };
        return (name, Some(skip_space(text, arg.end)));
    }
    let Some(sep) = inner.iter().find(|n| n.name == "tool_sep") else {
        return ("", None);
    };
    let first = text[head..sep.start].trim();
    let (name, rest) = if first == "function" {
        // V3 / R1: `function<sep>name` then the arguments, often in a ```json fence.
        let at = skip_space(text, sep.end);
        let name = ident(&text[at..]);
        (name, at + name.len())
    } else {
        // V3.1: `name<sep>{..}`.
        (if ident(first) == first { first } else { "" }, sep.end)
    };
    let mut at = skip_space(text, rest);
    for fence in ["```json", "```"] {
        if text[at..].starts_with(fence) {
            at = skip_space(text, at + fence.len());
            break;
        }
    }
    (name, Some(at))
}

/// Functionary v2's `<|recipient|>name` … `<|content|>{..}` and v3's `>>>name` then `{..}` at the
/// start of a line; the recipient `all` is the user, not a tool.
fn functionary(
    text: &str,
    toks: &[Token],
    braces: &mut Braces<'_>,
    known: &[String],
    budget: &mut Budget,
    found: &mut Finds,
) {
    for (k, t) in named(toks, &["recipient"]) {
        let name = ident(text[t.end..].trim_start());
        if name.is_empty() || name == "all" {
            continue;
        }
        let content = toks[k + 1..]
            .iter()
            .take_while(|n| n.name != "recipient")
            .find(|n| n.name == "content");
        let args_at = content.map(|c| skip_space(text, c.end));
        found.push(call_with_args(text, braces, budget, t.start, name, args_at));
    }
    for at in search::positions(text, ">>>") {
        if at > 0 && !text[..at].ends_with('\n') {
            continue;
        }
        let name = ident(&text[at + 3..]);
        let args_at = skip_space(text, at + 3 + name.len());
        let is_object = text[args_at..].starts_with('{');
        if name.is_empty() || name == "all" || !(is_object || known.iter().any(|k| k == name)) {
            continue;
        }
        found.push(call_with_args(
            text,
            braces,
            budget,
            at,
            name,
            Some(args_at),
        ));
    }
}

/// Gemma 4's `call:name{..}` and `call:name(..)` (in `<|tool_call>` … `<tool_call|>`, or naming a
/// known tool), FunctionGemma's in `<start_function_call>` … `<end_function_call>`.
fn gemma(text: &str, known: &[String], budget: &mut Budget, found: &mut Finds) {
    const OPENS: [&str; 2] = ["<|tool_call>", "<start_function_call>"];
    const CLOSES: [&str; 2] = ["<tool_call|>", "<end_function_call>"];
    static CLOSE: [Needle; 2] = [Needle::new(CLOSES[0]), Needle::new(CLOSES[1])];
    for at in search::positions(text, "call:") {
        let name_at = at + "call:".len();
        let name_len = text[name_at..]
            .bytes()
            .take(64)
            .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
            .count();
        let name = &text[name_at..name_at + name_len];
        let tagged = OPENS.iter().any(|o| text[..at].ends_with(o));
        if name.is_empty()
            || !text[name_at + name_len..].starts_with(['{', '('])
            || !(tagged || known.iter().any(|k| k == name))
        {
            continue;
        }
        let window = &text[name_at..text.floor_char_boundary(name_at + GEMMA_WINDOW)];
        // The nearest closing tag; the second is looked for only before the first.
        let first = CLOSE[0].find(window);
        let close = CLOSE[1]
            .find(&window[..first.unwrap_or(window.len())])
            .or(first);
        let source = &window[..close.unwrap_or(window.len())];
        if !budget.spend(source.len()) {
            break;
        }
        let start = OPENS
            .iter()
            .find(|o| text[..at].ends_with(*o))
            .map_or(at, |o| at - o.len());
        let quoted = unquote_gemma(source);
        let (call, used) = python::call_at(&quoted, true);
        let end = match close {
            Some(c) => {
                let tail = &window[c..];
                let close_len = CLOSES
                    .iter()
                    .find(|t| tail.starts_with(*t))
                    .map_or(0, |t| t.len());
                name_at + c + close_len
            }
            None if quoted.len() == source.len() => name_at + used,
            None => name_at + source.len(),
        };
        found.push(match call {
            Ok((name, arguments)) => super::text_call(start, end, name, arguments),
            Err(why) => Found {
                start,
                end,
                call: malformed_named(name, &text[at..], &why),
            },
        });
    }
}

/// Gemma's string delimiters (`<|"|>…<|"|>`, FunctionGemma's `<escape>…<escape>`) as JSON strings.
fn unquote_gemma(source: &str) -> String {
    const MARKS: [&str; 2] = ["<|\"|>", "<escape>"];
    static MARK: [Needle; 2] = [Needle::new(MARKS[0]), Needle::new(MARKS[1])];
    let mut out = source.to_string();
    for (mark, needle) in MARKS.iter().zip(&MARK) {
        let cuts: Vec<usize> = needle.positions(&out).collect();
        if cuts.is_empty() {
            continue;
        }
        // The pieces between marks: every second one that is closed is a string.
        let mut joined = String::with_capacity(out.len() + 2 * cuts.len());
        let mut from = 0;
        for (i, &cut) in cuts.iter().chain([&out.len()]).enumerate() {
            let piece = &out[from..cut];
            if i % 2 == 1 && i < cuts.len() {
                joined.push_str(&serde_json::to_string(piece).unwrap_or_default());
            } else {
                joined.push_str(piece);
            }
            from = (cut + mark.len()).min(out.len());
        }
        out = joined;
    }
    out
}

/// llama 3.1's `<|python_tag|>` followed by Python calls (a JSON body is left to the JSON scan).
fn python_tag(text: &str, toks: &[Token], found: &mut Finds) {
    for (k, t) in named(toks, &["python_tag"]) {
        let end = toks[k + 1..]
            .iter()
            .find(|n| n.name == "eom_id" || n.name == "eot_id" || n.name == "python_tag")
            .map_or(text.len(), |n| n.start);
        let body = text[t.end..end].trim();
        if body.is_empty() || body.starts_with('{') || body.starts_with('[') {
            continue;
        }
        let first = ident(body);
        match python::statements_in(body) {
            Ok(calls) if !calls.is_empty() => found.extend(
                calls
                    .into_iter()
                    .map(|(name, args)| super::text_call(t.start, end, name, args)),
            ),
            Err(why) if !first.is_empty() => found.push(Found {
                start: t.start,
                end,
                call: malformed_named(first, &text[t.start..], &why),
            }),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::CallFormat;
    use serde_json::{Value, json};

    fn calls(text: &str) -> Vec<(String, Value, CallFormat)> {
        let known = vec!["get_order".to_string()];
        let mut braces = Braces::new(text);
        find(text, &mut braces, &known, &mut Budget::for_len(text.len()))
            .into_kept_calls()
            .into_iter()
            .map(|c| (c.name, c.arguments, c.format))
            .collect()
    }

    fn get_order() -> Vec<(String, Value, CallFormat)> {
        vec![(
            "get_order".into(),
            json!({"order_id": "5105"}),
            CallFormat::Text,
        )]
    }

    #[test]
    fn every_token_format_reads_the_call() {
        for text in [
            r#"<|channel|>commentary to=functions.get_order <|constrain|>json<|message|>{"order_id": "5105"}<|call|>"#,
            r#"<|start|>assistant to=functions.get_order<|channel|>commentary json<|message|>{"order_id": "5105"}<|call|>"#,
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_order\n```json\n{\"order_id\": \"5105\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
            r#"<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_order<｜tool▁sep｜>{"order_id": "5105"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>"#,
            r#"<|tool_calls_begin|><|tool_call_begin|>get_order<|tool_sep|>{"order_id": "5105"}<|tool_call_end|><|tool_calls_end|>"#,
            r#"<|tool_calls_section_begin|><|tool_call_begin|>functions.get_order:0<|tool_call_argument_begin|>{"order_id": "5105"}<|tool_call_end|><|tool_calls_section_end|>"#,
            "<|from|>assistant\n<|recipient|>get_order\n<|content|>{\"order_id\": \"5105\"}",
            ">>>get_order\n{\"order_id\": \"5105\"}",
            r#"<|tool_call>call:get_order{order_id:<|"|>5105<|"|>}<tool_call|>"#,
            r#"<|tool_call>call:get_order(order_id: "5105")<tool_call|>"#,
            "<start_function_call>call:get_order{order_id:<escape>5105<escape>}<end_function_call>",
            r#"<|python_tag|>get_order(order_id="5105")<|eom_id|>"#,
        ] {
            assert_eq!(calls(text), get_order(), "{text}");
        }
        let two = r#"<|channel|>commentary to=functions.get_order <|constrain|>json<|message|>{"order_id": "5105"}<|call|><|start|>assistant<|channel|>commentary to=functions.get_order <|constrain|>json<|message|>{"order_id": "5105"}<|call|>"#;
        assert_eq!(calls(two).len(), 2);
    }

    #[test]
    fn unreadable_token_calls_are_malformed_and_naming_the_user_is_no_call() {
        for (text, name) in [
            (
                "<|channel|>commentary to=functions.get_order<|message|>order 5105<|call|>",
                "__malformed__:get_order",
            ),
            (
                "<|tool_call_begin|>functions.get_order:0<|tool_call_argument_begin|>{\"order_id\": <|tool_call_end|>",
                "__malformed__:get_order",
            ),
            ("<|tool_call_begin|>???<|tool_call_end|>", "__malformed__:?"),
            (
                "<|tool_call>call:get_order(5105)<tool_call|>",
                "__malformed__:get_order",
            ),
        ] {
            let got = calls(text);
            assert_eq!(got.len(), 1, "{text}: {got:?}");
            assert_eq!(
                (got[0].0.as_str(), got[0].2),
                (name, CallFormat::Malformed),
                "{text}"
            );
        }
        assert!(calls("<|recipient|>all\n<|content|>Your order shipped.").is_empty());
        assert!(calls(">>>all\nYour order shipped.").is_empty());
        assert!(calls("Please call: get_order when ready").is_empty());
        assert!(calls(">>> print(1)").is_empty());
    }
}
