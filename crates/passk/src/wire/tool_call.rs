//! Tool-call recovery: the calls of one assistant message, native or written into the text.
//!
//! Native `message.tool_calls` are the calls to answer when present; calls written into the text
//! beside them are kept apart, recorded and never executed. Otherwise the content is scanned, after
//! setting apart what is never a call (reasoning in each family's form, `unread`: its calls are
//! recorded as considered, a whole `<tool_call>` ending an unclosed `<think>` excepted unless the
//! reply was cut; Harmony with its special tokens stripped; an echoed `<tools>` list; passk's own
//! placeholders), for: JSON objects shaped like calls (bare `{"name": .., "arguments": {..}}`,
//! several back to back, inside ```json fences or `<tool_call>` tags, with `parameters`, `params`,
//! `args` or `input` instead of `arguments`, with the arguments as a JSON-encoded string, or flat
//! beside a known tool's name as gpt-oss writes them, OpenAI's `{"function": {..}}`,
//! `{"function": "<name>", "params": {..}}`, and lists of these under a `tool_calls` key);
//! keyword-marked calls (`shapes`: Mistral, llama 3.1, ReAct; Qwen3-Coder's `<parameter=key>`
//! elements, `xml_parameters`); token-marked calls (`tokens`: Harmony, stripped or not, DeepSeek
//! V3, Kimi K2, functionary, Gemma 4, llama 3.1's python tag); the XML-like invoke families
//! (`invoke`: DeepSeek V3.2's DSML and its plain tags, MiniMax-M2); block-tagged calls (`blocks`:
//! GLM-4.7's `<arg_key>` pairs, Apertus' `<|tools_prefix|>`, Olmo 3's `<function_calls>`); and
//! Python calls (`python`: llama 3.2's bracketed list, a fenced Python call). A tool definition (an
//! object whose `parameters` is a JSON schema) is no call. Text that has the shape of a call but
//! does not parse becomes a `Malformed` call carrying the message that tells the model the expected
//! shape; so does an object giving one key twice with different values (`strict`). A call
//! embedded in prose is executed only when the reply presents it as made now (`prose`: quoted,
//! past, illustrated, refused, deferred or offered calls are withheld, with why). Plain prose gives
//! no call. The work per reply is bounded (`scan::WORK_PER_BYTE`), and so is
//! the memory: a flood's first [`finds::CALLS_KEPT`] calls are kept whole, the rest counted
//! (`finds`). Nothing here panics, whatever the input.

mod blocks;
pub mod finds;
mod invoke;
mod prose;
mod python;
pub mod scan;
mod search;
mod shapes;
mod strict;
mod tokens;
pub mod unread;
mod xml_parameters;

use super::chat::{Message, NativeCall};
use super::depth;
use crate::trace::CallFormat;
use finds::Scanned;
use scan::{Braces, Budget, object_at};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use strict::Read;

/// Prefix of the tool name given to a malformed call.
pub const MALFORMED_PREFIX: &str = "__malformed__:";

/// Keys under which a list of calls is wrapped (`{"tool_calls": [..]}`).
const WRAPPER_KEYS: [&str; 3] = ["tool_calls", "calls", "function_calls"];
/// Keys naming the tool, in order of preference.
const NAME_KEYS: [&str; 4] = ["name", "function", "tool", "tool_name"];
/// Keys holding the arguments, in order of preference.
const ARGUMENT_KEYS: [&str; 5] = ["arguments", "parameters", "params", "args", "input"];

/// Pseudo-tools that mean "no tool: I answer" (Command-R's `directly_answer`).
const ANSWERS: [&str; 1] = ["directly_answer"];

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
    /// Set when the call is rejected without running: the error text for the model (the expected
    /// shape of a malformed call, or why the arguments cannot be read).
    pub error: Option<String>,
}

/// Why a call written in a reply was read and not executed (docs/reference/metrics.md, "Text tool calls").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Withheld {
    /// Written in reasoning (a `<think>` block, the `thinking` field, Harmony's analysis channel,
    /// ...): considered, not made.
    Reasoning,
    /// Quoted in a block quote rather than made.
    Quoted,
    /// Next to words that refuse to make it.
    Refused,
    /// Proposed or put off: the prose asks leave to make it, makes it hypothetical, or puts it
    /// behind a condition the customer has to meet.
    Deferred,
    /// Attributed to the past: the prose says it was made already ("I already ran ..").
    Past,
    /// Offered to the customer: one of a choice, or followed by a question that hands the turn
    /// back, so the next message is not its answer.
    Offered,
    /// Shown as an example or illustration ("a request like ..", "for example").
    Illustrated,
}

/// Every call of one assistant message.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Extraction {
    /// The calls to answer, in order: the native ones when there are any, else those in the text.
    pub calls: Vec<ExtractedCall>,
    /// Calls written into the text next to native calls: recorded, never executed.
    pub beside_native: Vec<ExtractedCall>,
    /// Calls read in the text or the reasoning that the model did not make: recorded, never
    /// executed.
    pub withheld: Vec<(ExtractedCall, Withheld)>,
    /// Calls of a flood past the first [`finds::CALLS_KEPT`] of the text, counted only.
    pub past_kept: PastKept,
}

/// The calls of a reply past the first [`finds::CALLS_KEPT`] of its text: found, judged and
/// counted, not kept (so never run, and never recorded in detail).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PastKept {
    /// Calls the text makes, to answer (there are no native calls).
    pub calls: usize,
    /// Calls the text makes beside native calls.
    pub beside_native: usize,
    /// Calls it writes without making them.
    pub withheld: usize,
}

/// The calls written in one reply's text.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TextCalls {
    /// The calls the text makes, in order.
    pub calls: Vec<ExtractedCall>,
    /// The calls it writes without making them, with why.
    pub withheld: Vec<(ExtractedCall, Withheld)>,
    /// The calls past the first [`finds::CALLS_KEPT`], counted.
    pub past_kept: PastKept,
}

/// A call found in the text, with the span of text it covers.
struct Found {
    start: usize,
    end: usize,
    call: ExtractedCall,
}

/// The calls to answer of one assistant message, in order.
pub fn extract(message: &Message, known_tools: &[String]) -> Vec<ExtractedCall> {
    extract_all(message, known_tools).calls
}

/// Every call of one assistant message: those to answer, those written beside native calls, and
/// those read but not made (in the text or in the `thinking` field).
pub fn extract_all(message: &Message, known_tools: &[String]) -> Extraction {
    extract_reply(message, known_tools, false)
}

/// [`extract_all`] for a reply that was `cut` at its output limit (`done_reason` `length`): a
/// call after an unclosed `<think>` then stays reasoning (`unread::split_reply`).
pub fn extract_reply(message: &Message, known_tools: &[String], cut: bool) -> Extraction {
    let text = read_reply(&message.content, known_tools, cut);
    let mut withheld = text.withheld;
    let mut past_kept = text.past_kept;
    if let Some(thinking) = message.thinking.as_deref().filter(|t| !t.is_empty()) {
        let (considered, past) = considered(thinking, known_tools);
        withheld.extend(considered);
        past_kept.withheld += past;
    }
    if message.tool_calls.is_empty() {
        return Extraction {
            calls: text.calls,
            beside_native: Vec::new(),
            withheld,
            past_kept,
        };
    }
    Extraction {
        calls: message.tool_calls.iter().map(native).collect(),
        beside_native: text.calls,
        withheld,
        past_kept: PastKept {
            calls: 0,
            beside_native: past_kept.calls,
            ..past_kept
        },
    }
}

/// A native call; arguments nested past [`depth::MAX_JSON_DEPTH`] reject it.
fn native(c: &NativeCall) -> ExtractedCall {
    let arguments = decode_string_arguments(c.arguments.clone()).unwrap_or_else(|v| v);
    let error = depth::holds_too_deep(&arguments).then(|| {
        format!(
            "the arguments are nested too deeply (a reply may nest JSON {} levels); \
             pass each parameter as a plain value",
            depth::MAX_JSON_DEPTH
        )
    });
    ExtractedCall {
        name: c.name.clone(),
        arguments,
        format: CallFormat::Native,
        id: c.id.clone(),
        error,
    }
}

/// The calls a reply's text makes (no native calls considered).
pub fn extract_text(content: &str, known_tools: &[String]) -> Vec<ExtractedCall> {
    read_text(content, known_tools).calls
}

/// The calls a reply's text makes, and those it writes without making: inside reasoning, or
/// embedded in prose that says they are not made now (`prose`).
pub fn read_text(content: &str, known_tools: &[String]) -> TextCalls {
    read_reply(content, known_tools, false)
}

/// [`read_text`] for a reply that was `cut` at its output limit, or not.
fn read_reply(content: &str, known_tools: &[String], cut: bool) -> TextCalls {
    let split = unread::split_reply(content, cut);
    let scanned = scan_text(&split.outside, known_tools);
    let names: Vec<Option<&str>> = scanned
        .spans
        .iter()
        .map(|s| {
            let kept = s.kept.and_then(|k| scanned.kept.get(k)?.as_ref());
            kept.map(|c| c.name.as_str())
        })
        .collect();
    let verdicts = prose::judge(&split.outside, &scanned.spans, &names, known_tools);
    drop(names);
    let mut out = TextCalls::default();
    for ((_, mut call), verdict) in scanned.into_calls().zip(verdicts) {
        if let Some(call) = &mut call {
            hide_unknown_name(call, known_tools);
        }
        match (call, verdict) {
            (Some(call), Some(why)) => out.withheld.push((call, why)),
            (Some(call), None) => out.calls.push(call),
            (None, Some(_)) => out.past_kept.withheld += 1,
            (None, None) => out.past_kept.calls += 1,
        }
    }
    if let Some(reasoning) = &split.reasoning {
        let (considered, past) = considered(reasoning, known_tools);
        out.withheld.extend(considered);
        out.past_kept.withheld += past;
    }
    out
}

/// Reasoning read for the calls it considers, bytes: the calls past it are not recorded, so the
/// scan of a long reasoning costs no more than this.
pub const REASONING_READ: usize = 64 * 1024;

/// The calls written in the first [`REASONING_READ`] bytes of reasoning, each withheld as
/// considered (malformed ones dropped: there is nothing to tell the model about its thoughts),
/// and the count of those past the first [`finds::CALLS_KEPT`].
fn considered(reasoning: &str, known_tools: &[String]) -> (Vec<(ExtractedCall, Withheld)>, usize) {
    let start = reasoning.len() - reasoning.trim_start().len();
    let read = &reasoning[..reasoning.floor_char_boundary(start.saturating_add(REASONING_READ))];
    let mut kept = Vec::new();
    let mut past = 0;
    for (_, call) in scan_text(read, known_tools)
        .into_calls()
        .filter(|(span, _)| !span.malformed)
    {
        match call {
            Some(call) => kept.push((call, Withheld::Reasoning)),
            None => past += 1,
        }
    }
    (kept, past)
}

/// Every call-shaped span of `text` (already blanked of what is never a call), sorted by start.
fn scan_text(text: &str, known_tools: &[String]) -> Scanned {
    let mut budget = Budget::for_len(text.len());
    let mut braces = Braces::new(text);
    let mut found = shapes::find(text, &mut braces, known_tools, &mut budget);
    found.append(tokens::find(text, &mut braces, known_tools, &mut budget));
    found.append(python::find(text, known_tools, &mut budget));
    found.extend(invoke::find(text, &mut budget));
    found.extend(blocks::find(text, known_tools, &mut budget));
    let claimed = merge(found.span_bounds().collect());
    let mut covered = claimed.clone();
    let mut i = 0;
    while let Some(at) = memchr::memchr(b'{', &text.as_bytes()[i..]).map(|o| i + o) {
        if budget.is_spent() || braces.dead_at(at) {
            break;
        }
        if inside(&claimed, at) {
            i = at + 1;
            continue;
        }
        match object_at(text, &mut braces, at, &mut budget) {
            Some((end, read)) => {
                covered.push((at, end));
                found.extend(
                    read_object(read, known_tools)
                        .into_iter()
                        .map(|call| Found {
                            start: at,
                            end,
                            call,
                        }),
                );
                i = end;
            }
            None => i = at + 1,
        }
    }
    let mut found = found.into_scanned();
    // Call-shaped text that did not parse: a `{"name"` outside every parsed object, or a
    // `<tool_call>` tag holding no call. One malformed call per reply is enough to tell the model.
    let covered = merge(covered);
    let malformed = name_key_positions(text, known_tools)
        .find(|&p| !inside(&covered, p) && !cut_definition(text, p))
        .or_else(|| empty_tag_position(text, &found.spans));
    if let Some(pos) = malformed {
        let fragment = &text[pos..];
        let name = guess_name(fragment);
        let call = malformed_named(
            name.as_deref().unwrap_or(""),
            fragment,
            "the call is not valid JSON",
        );
        found.insert(Found {
            start: pos,
            end: pos,
            call,
        });
    }
    found
}

/// A well-formed text call covering `start..end`.
fn text_call(start: usize, end: usize, name: String, arguments: Value) -> Found {
    Found {
        start,
        end,
        call: ExtractedCall {
            name,
            arguments,
            format: CallFormat::Text,
            id: None,
            error: None,
        },
    }
}

/// The calls a parsed object holds; an ambiguous object holding a call is one malformed call
/// naming its tool and saying which key is ambiguous.
fn read_object(read: Read, known_tools: &[String]) -> Vec<ExtractedCall> {
    match read {
        Read::Clear(value) => interpret(value, known_tools),
        Read::Ambiguous(value, why) => interpret(value.clone(), known_tools)
            .first()
            .map(|c| {
                let mut call = malformed_named(&c.name, "", &why);
                call.arguments = value;
                call
            })
            .into_iter()
            .collect(),
    }
}

/// Spans sorted by start with overlapping ones joined.
fn merge(mut spans: Vec<(usize, usize)>) -> Vec<(usize, usize)> {
    spans.sort_unstable();
    let mut out: Vec<(usize, usize)> = Vec::with_capacity(spans.len());
    for (s, e) in spans {
        match out.last_mut() {
            Some(last) if s < last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

/// Whether `pos` lies in one of the merged `spans`.
fn inside(spans: &[(usize, usize)], pos: usize) -> bool {
    let k = spans.partition_point(|&(s, _)| s <= pos);
    k > 0 && pos < spans[k - 1].1
}

/// Turns a parsed object into the calls it holds: one call, a wrapped list of calls, or none. The
/// object is taken apart, so a call's arguments are moved out of it, never copied.
fn interpret(value: Value, known_tools: &[String]) -> Vec<ExtractedCall> {
    let Value::Object(mut obj) = value else {
        return Vec::new();
    };
    let wrapper = WRAPPER_KEYS
        .iter()
        .find(|k| field(&obj, k).is_some_and(Value::is_array));
    if let Some(Value::Array(items)) = wrapper.and_then(|k| obj.swap_remove(*k)) {
        return items
            .into_iter()
            .filter_map(|item| match item {
                Value::Object(o) => interpret_one(o, known_tools),
                _ => None,
            })
            .collect();
    }
    interpret_one(obj, known_tools).into_iter().collect()
}

/// One call-shaped object as a call, if it is one.
fn interpret_one(mut obj: Map<String, Value>, known_tools: &[String]) -> Option<ExtractedCall> {
    // A call wrapped in one key: OpenAI's {"type": "function", "function": {"name": .., ..}}, or
    // {"tool_call": {..}} as small models write it.
    let wrapped = ["function", "tool_call", "call"].iter().find(|k| {
        field(&obj, k)
            .and_then(Value::as_object)
            .is_some_and(|inner| inner.get("name").is_some_and(Value::is_string))
    });
    let mut obj = match wrapped {
        Some(k) => match obj.swap_remove(*k) {
            Some(Value::Object(inner)) => inner,
            _ => return None,
        },
        None => obj,
    };
    if is_tool_definition(&obj) {
        return None;
    }
    let name = NAME_KEYS
        .iter()
        .find_map(|k| field(&obj, k).and_then(Value::as_str))?;
    let args_key = ARGUMENT_KEYS.iter().find(|k| field(&obj, k).is_some());
    let args = args_key.and_then(|k| field(&obj, k));
    if is_placeholder(name) || args.is_some_and(holds_placeholder) || ANSWERS.contains(&name) {
        // The shape passk's own hint shows, echoed back: not a call.
        return None;
    }
    let known = known_tools.iter().any(|t| t == name);
    if !known && args.is_none() {
        return None;
    }
    let name = name.to_string();
    let arguments = match args_key {
        Some(k) => obj.swap_remove(*k).unwrap_or_default(),
        None => flattened(obj),
    };
    match decode_string_arguments(arguments) {
        Ok(arguments) => Some(ExtractedCall {
            name,
            arguments,
            format: CallFormat::Text,
            id: None,
            error: None,
        }),
        Err(raw) => {
            let mut call = malformed_named(&name, "", "the arguments string is not a JSON object");
            call.arguments = raw;
            Some(call)
        }
    }
}

/// Keys beside a call's name that are never its arguments.
const NOT_ARGUMENTS: [&str; 7] = [
    "id",
    "type",
    "index",
    "call_id",
    "description",
    "strict",
    "role",
];

/// The arguments of a known tool's call written flat beside its name, as gpt-oss writes them
/// (`{"name": "get_order", "order_id": "5105"}`): every key but the name, unless one of them is
/// never an argument (then none is taken: the object is no flat call).
fn flattened(mut obj: Map<String, Value>) -> Value {
    if obj.keys().any(|k| NOT_ARGUMENTS.contains(&k.as_str())) {
        return Value::Object(Map::new());
    }
    for key in NAME_KEYS {
        obj.swap_remove(key);
    }
    Value::Object(obj)
}

/// Objects up to this many keys are searched key by key rather than hashed.
const FEW_KEYS: usize = 8;

/// The value of `key` in `obj`: a call's objects hold a few keys, which are compared faster than
/// a key is hashed (each call is looked up under a dozen keys).
fn field<'a>(obj: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    if obj.len() > FEW_KEYS {
        return obj.get(key);
    }
    obj.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
}

/// A placeholder as templates and passk's own hints write them (`<tool>`, `<parameter>`,
/// `<function-name>`): never a real name or value.
fn is_placeholder(s: &str) -> bool {
    let s = s.trim();
    s.len() > 2
        && s.len() <= 64
        && s.starts_with('<')
        && s.ends_with('>')
        && s[1..s.len() - 1]
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_- ".contains(&b))
}

/// Whether arguments are a template: a placeholder for a key or a value.
fn holds_placeholder(args: &Value) -> bool {
    match args {
        Value::String(s) => is_placeholder(s),
        Value::Object(m) => m
            .iter()
            .any(|(k, v)| is_placeholder(k) || v.as_str().is_some_and(is_placeholder)),
        _ => false,
    }
}

/// A tool's definition rather than a call to it: its `parameters` is a JSON schema of an object.
fn is_tool_definition(obj: &Map<String, Value>) -> bool {
    field(obj, "input_schema").is_some()
        || field(obj, "parameters")
            .and_then(Value::as_object)
            .is_some_and(|p| {
                field(p, "properties").is_some_and(Value::is_object)
                    || field(p, "type").and_then(Value::as_str) == Some("object")
            })
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

/// How far past a Python-dict call's `{` its closing brace is looked for.
const DICT_WINDOW: usize = 4096;

/// Positions of `{` directly followed (after whitespace) by the key `"name"`, or of a Python-dict
/// call (`{'name': '<known tool>', ...}` or one with an `'arguments'`/`'parameters'` key), which is
/// call-shaped but not JSON. A dict that merely has a `'name'` key is prose, not a call.
/// Candidates are found from the keys (`"name"`, `'name'`) back to their `{`, so a reply dense in
/// braces costs no more than one dense in keys.
fn name_key_positions<'a>(
    content: &'a str,
    known_tools: &'a [String],
) -> impl Iterator<Item = usize> + 'a {
    let mut braces: Vec<usize> = ["\"name\"", "'name'"]
        .iter()
        .flat_map(|key| search::positions(content, key))
        .filter_map(|k| {
            let before = content[..k].trim_end();
            before.ends_with('{').then(|| before.len() - 1)
        })
        .collect();
    braces.sort_unstable();
    braces.into_iter().filter(move |i| {
        let rest = content[i + 1..].trim_start();
        if let Some(templated) = names_placeholder(rest) {
            return !templated;
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
        let name: String = value.chars().take(64).take_while(|&c| c != '\'').collect();
        let window = &rest[..rest.floor_char_boundary(DICT_WINDOW)];
        let body = &window[..window.find('}').unwrap_or(window.len())];
        known_tools.contains(&name) || body.contains("'arguments'") || body.contains("'parameters'")
    })
}

/// Position of a `<tool_call>` tag that opens a call attempt holding no parsed call (`found` sorted
/// by position). A tag merely named in prose (`<tool_call></tool_call>`, "wrap it in <tool_call>
/// tags") opens no attempt.
fn empty_tag_position(content: &str, found: &[finds::Span]) -> Option<usize> {
    let tags: Vec<usize> = search::positions(content, "<tool_call>").collect();
    tags.iter().enumerate().find_map(|(k, &start)| {
        let end = tags.get(k + 1).copied().unwrap_or(content.len());
        static CLOSE: search::Needle = search::Needle::new("</tool_call>");
        let close = CLOSE.find(&content[start..end]).map_or(end, |c| start + c);
        let first_after = found.partition_point(|f| f.start <= start);
        let holds_call = found.get(first_after).is_some_and(|f| f.start < close);
        let body = &content[start + "<tool_call>".len()..close];
        (!holds_call && attempts_call(body)).then_some(start)
    })
}

/// For text just inside a `{`: `None` when it does not start with the key `"name"`, else whether
/// the name is a placeholder (`{"name": "<tool>"`, `{"name": <function-name>`: a template).
fn names_placeholder(after_brace: &str) -> Option<bool> {
    let value = after_brace.strip_prefix("\"name\"")?;
    let value = value.trim_start().trim_start_matches(':').trim_start();
    Some(value.trim_start_matches('"').starts_with('<'))
}

/// Whether the body of a `<tool_call>` tag attempts a call: it starts (after spaces) with a JSON
/// or Python opening, or with a name followed by `(`, `{` or a newline. A template's placeholder
/// (`{"name": <function-name>, ..}`) attempts none.
fn attempts_call(body: &str) -> bool {
    let b = body.trim_start();
    if let Some(inner) = b.strip_prefix('{') {
        return names_placeholder(inner.trim_start()) != Some(true);
    }
    if b.starts_with('[') {
        return true;
    }
    let name_len = b
        .bytes()
        .take_while(|c| c.is_ascii_alphanumeric() || b"_-.".contains(c))
        .count();
    name_len > 0 && b[name_len..].starts_with(['(', '{', '\n', ':'])
}

/// The malformed call for call-shaped text naming `name` (empty: unknown) at the start of
/// `fragment`, with `why` it did not parse.
fn malformed_named(name: &str, fragment: &str, why: &str) -> ExtractedCall {
    let shown = if name.is_empty() { "?" } else { name };
    ExtractedCall {
        name: format!("{MALFORMED_PREFIX}{shown}"),
        arguments: Value::String(fragment.chars().take(200).collect()),
        format: CallFormat::Malformed,
        id: None,
        error: Some(shape_message(
            if name.is_empty() { "<tool>" } else { name },
            why,
        )),
    }
}

/// The hint of a malformed call never writes a name that is no tool back in a call's shape: the
/// model would call it (measured on a real Ollama: a cut call to an invented tool, hinted with its
/// name, was called twice more). It says the name is not a tool instead.
fn hide_unknown_name(call: &mut ExtractedCall, known_tools: &[String]) {
    let Some(name) = call.name.strip_prefix(MALFORMED_PREFIX) else {
        return;
    };
    if name == "?" || known_tools.iter().any(|t| t == name) {
        return;
    }
    let shown = format!("{{\"name\": \"{name}\"");
    if let Some(error) = &mut call.error
        && error.contains(&shown)
    {
        *error = error.replacen(&shown, "{\"name\": \"<tool>\"", 1).replacen(
            "). Write one",
            &format!("; {name:?} is not one of the tools). Write one"),
            1,
        );
    }
}

/// Whether the `"name"` key at `pos`, in text that did not parse, starts a tool's *definition*
/// (a model pasting the tool list, cut short): the object says `"type": "function"` just before,
/// or the key after the name describes the tool instead of giving its arguments.
fn cut_definition(text: &str, pos: usize) -> bool {
    let squeeze = |s: &str| -> String { s.chars().filter(|c| !c.is_whitespace()).collect() };
    let start = text.floor_char_boundary(pos.saturating_sub(120));
    let end = text.floor_char_boundary((pos + 400).min(text.len()));
    let (before, after) = (squeeze(&text[start..pos]), squeeze(&text[pos..end]));
    if before.contains("\"type\":\"function\"") {
        return true;
    }
    let next_key = after
        .find("\"name\":\"")
        .filter(|&at| at <= 1)
        .and_then(|at| after[at + 8..].split_once('"'))
        .map(|(_, r)| r);
    next_key.is_some_and(|r| {
        r.starts_with(",\"description\"")
            || r.starts_with(",\"parameters\":{\"type\"")
            || r.starts_with(",\"parameters\":{\"properties\"")
    })
}

/// The value of the first `"name": "..."` in a fragment (looked for near its start).
fn guess_name(fragment: &str) -> Option<String> {
    let fragment = &fragment[..fragment.floor_char_boundary(DICT_WINDOW)];
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
    use crate::wire::chat::NativeCall;
    use proptest::prelude::*;
    use serde_json::json;

    fn known() -> Vec<String> {
        ["find_customer", "get_order", "list_orders"]
            .map(String::from)
            .to_vec()
    }

    fn text(s: &str) -> Vec<ExtractedCall> {
        extract(&Message::assistant(s), &known())
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
        let mut m = Message::assistant(r#"{"name": "get_order", "arguments": {"order_id": "X"}}"#);
        m.tool_calls = vec![NativeCall {
            id: Some("call_1".into()),
            index: Some(0),
            name: "find_customer".into(),
            arguments: json!({"query": "Ann"}),
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
    fn reasoning_is_never_a_call() {
        let calls = text(
            "<think>I could call {\"name\": \"cancel_order\", \"arguments\": {\"order_id\": \"5111\"}} but not yet</think>\n{\"name\": \"get_order\", \"arguments\": {\"order_id\": \"5111\"}}",
        );
        assert_eq!(names(&calls), vec![("get_order", CallFormat::Text)]);
        // A reply cut mid-thought, and reasoning whose open tag was in the prompt.
        assert!(text("<think>{\"name\": \"get_order\", \"arguments\": {}}").is_empty());
        assert!(text("{\"name\": \"get_order\", \"arguments\": {}}</think>Done.").is_empty());
    }

    /// Ollama `model/parsers/qwen3_test.go::TestQwen3ParserThinkingWithToolCallBeforeThinkingClose`
    /// (PR ollama/ollama#14477): a whole `<tool_call>` in a `<think>` never closed is a call; a
    /// reply cut at num_predict keeps it as reasoning.
    #[test]
    fn a_tool_call_ends_an_unclosed_think_unless_the_reply_was_cut() {
        let reply = Message::assistant(
            "<think>Let me think<tool_call>{\"name\":\"get_order\",\"arguments\":{\"order_id\":\"5105\"}}</tool_call>",
        );
        let made = extract_reply(&reply, &known(), false);
        assert_eq!(names(&made.calls), vec![("get_order", CallFormat::Text)]);
        let cut = extract_reply(&reply, &known(), true);
        assert!(cut.calls.is_empty());
        assert_eq!(cut.withheld.len(), 1);
        assert_eq!(cut.withheld[0].1, Withheld::Reasoning);
    }

    #[test]
    fn wrapped_lists_other_keys_and_echoed_tools() {
        let wrapper = text(
            r#"{"tool_calls": [{"name": "find_customer", "arguments": {"query": "Ann"}}, {"type": "function", "function": {"name": "get_order", "arguments": {"order_id": "A1"}}}]}"#,
        );
        assert_eq!(
            names(&wrapper),
            vec![
                ("find_customer", CallFormat::Text),
                ("get_order", CallFormat::Text)
            ]
        );
        let params = text(r#"{"function": "get_order", "params": {"order_id": "A1"}}"#);
        assert_eq!(params[0].arguments, json!({"order_id": "A1"}));
        let input = text(r#"{"name": "get_order", "input": {"order_id": "A1"}}"#);
        assert_eq!(input[0].arguments, json!({"order_id": "A1"}));
        let schema = r#"{"type": "function", "function": {"name": "get_order", "description": "Get an order", "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}}}"#;
        assert!(text(&format!("<tools>\n{schema}\n</tools>")).is_empty());
        assert!(text(&format!("[{schema}, {schema}]")).is_empty());
        // A schema pasted as an argument's value is still a call.
        let pasted =
            text(r#"{"name": "get_order", "parameters": {"order_id": {"type": "string"}}}"#);
        assert_eq!(names(&pasted), vec![("get_order", CallFormat::Text)]);
    }

    #[test]
    fn text_beside_native_calls_is_kept_apart_and_deep_arguments_are_rejected() {
        let mut m = Message::assistant(r#"{"name": "get_order", "arguments": {"order_id": "X"}}"#);
        let deep = format!(
            r#"{{"message": {{"role": "assistant", "content": "", "tool_calls": [{{"function": {{"name": "get_order", "arguments": {{"order_id": {}"5105"{}}}}}}}]}}}}"#,
            "[".repeat(130),
            "]".repeat(130)
        );
        let bounded = crate::wire::depth::bound(deep.as_bytes());
        let parsed: crate::wire::api::ChatResponse =
            serde_json::from_slice(&bounded).expect("a deep body decodes once bounded");
        m.tool_calls =
            crate::wire::ollama::convert::neutral_message(&parsed.message.expect("message"))
                .tool_calls;
        let all = extract_all(&m, &known());
        assert_eq!(names(&all.calls), vec![("get_order", CallFormat::Native)]);
        assert!(
            all.calls[0]
                .error
                .as_deref()
                .is_some_and(|e| e.contains("nested"))
        );
        assert_eq!(
            names(&all.beside_native),
            vec![("get_order", CallFormat::Text)]
        );
    }

    #[test]
    fn a_contracted_wish_holds_back_a_write_only() {
        let known: Vec<String> = ["get_order", "cancel_order"].map(String::from).to_vec();
        for wish in [
            "I would be happy to",
            "I'd be happy to",
            "I\u{2019}d be happy to",
        ] {
            let write = format!(
                r#"{wish} cancel it: {{"name": "cancel_order", "arguments": {{"order_id": "A1"}}}}"#
            );
            let read = read_text(&write, &known);
            assert!(read.calls.is_empty(), "{wish}");
            assert_eq!(read.withheld[0].1, Withheld::Deferred, "{wish}");
            let lookup = format!(
                r#"{wish} look it up: {{"name": "get_order", "arguments": {{"order_id": "A1"}}}}"#
            );
            assert_eq!(read_text(&lookup, &known).calls.len(), 1, "{wish}");
        }
    }

    #[test]
    fn big_replies_are_read_whole_or_stopped_cleanly() {
        // A megabyte of open braces: no call, and (see benches/scan.rs) linear time.
        assert!(text(&"{".repeat(1 << 20)).is_empty());
        // A megabyte of calls: every one of them found, the first ones kept whole.
        let one = r#"{"name": "get_order", "arguments": {"order_id": "A1"}}"#;
        let n = (1 << 20) / one.len();
        let read = read_text(&one.repeat(n), &known());
        assert_eq!(read.calls.len(), finds::CALLS_KEPT);
        assert_eq!(read.past_kept.calls, n - finds::CALLS_KEPT);
        assert!(read.calls.iter().all(|c| c.arguments["order_id"] == "A1"));
        // Put off as a whole: the prose after the last call is read, however many come before.
        let refused = read_text(
            &format!("{} These wait until you confirm.", one.repeat(n)),
            &known(),
        );
        assert!(refused.calls.is_empty());
        assert_eq!(refused.withheld.len(), finds::CALLS_KEPT);
        assert_eq!(refused.past_kept.withheld, n - finds::CALLS_KEPT);
    }

    #[test]
    fn the_hints_passk_sends_are_never_read_back_as_calls() {
        for name in ["", "get_order"] {
            let hint = malformed_named(name, "", "the call is not valid JSON")
                .error
                .expect("a hint");
            assert!(text(&hint).is_empty(), "{hint}");
            assert!(text(&format!("error: {hint}\n{hint}")).is_empty(), "{hint}");
        }
    }

    /// Replies measured on a real Ollama: SmolLM2 writing the start of a tool definition, cut at
    /// its output limit, and a cut call to a tool that does not exist.
    #[test]
    fn a_cut_definition_is_no_call_and_an_unknown_name_is_never_suggested() {
        let cut_definition = "{\"type\": \"function\", \"function\": {\"name\": \"search_customers_by_id\", \"description\": \"Look up a customer\", \"parameters\": {\"type\": \"object\", \"prop";
        assert!(
            text(cut_definition).is_empty(),
            "{:?}",
            text(cut_definition)
        );
        let listed = "{\"name\": \"get_order\", \"description\": \"Look up an order\", \"parameters\": {\"type\": \"obj";
        assert!(text(listed).is_empty(), "{:?}", text(listed));
        let calls = text("<tool_user-call>{\"name\": \"email\", \"arguments\": {\"to\": ");
        assert_eq!(calls.len(), 1, "a cut call is still a malformed call");
        let hint = calls[0].error.clone().expect("hint");
        assert!(
            !hint.contains("\"name\": \"email\"")
                && hint.contains("\"email\" is not one of the tools"),
            "{hint}"
        );
        let calls = text("{\"name\": \"get_order\", \"arguments\": {\"order_id\": ");
        let hint = calls[0].error.clone().expect("hint");
        assert!(
            hint.contains("\"name\": \"get_order\""),
            "a tool's own name is shown: {hint}"
        );
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
                Just("[TOOL_CALLS]".to_string()), Just("[ARGS]".to_string()), Just("<function=".to_string()),
                Just("</function>".to_string()), Just("Action: ".to_string()), Just("\nAction Input: ".to_string()),
                Just("[get_order(".to_string()), Just("order_id=".to_string()), Just(")]".to_string()),
                Just("```python\n".to_string()), Just("<think>".to_string()), Just("</think>".to_string()),
                Just("<tools>".to_string()), Just("'".to_string()), Just("é".to_string()),
                Just("<|channel|>analysis".to_string()), Just("<|channel|>commentary to=functions.get_order".to_string()),
                Just("<|message|>".to_string()), Just("<|call|>".to_string()), Just("<|end|>".to_string()),
                Just("<｜tool▁call▁begin｜>".to_string()), Just("<|tool_call_begin|>".to_string()),
                Just("<｜tool▁sep｜>".to_string()), Just("<|tool_call_argument_begin|>".to_string()),
                Just("<|tool_call_end|>".to_string()), Just("functions.get_order:0".to_string()),
                Just("<|recipient|>".to_string()), Just("<|content|>".to_string()), Just("\n>>>".to_string()),
                Just("<|tool_call>call:get_order".to_string()), Just("<|\"|>".to_string()), Just("<tool_call|>".to_string()),
                Just("<escape>".to_string()), Just("<|python_tag|>".to_string()), Just("◁think▷".to_string()),
                Just("\n> ".to_string()), Just("I won't send ".to_string()), Just(" once you confirm".to_string()),
                Just("\"<tool>\"".to_string()), Just("\"tool_name\"".to_string()), Just("(".to_string()),
                Just("<parameter=order_id>".to_string()), Just("</parameter>".to_string()), Just("<parameter=".to_string()),
                Just("<｜DSML｜function_calls>".to_string()), Just("<｜DSML｜invoke name=\"get_order\">".to_string()),
                Just("<｜DSML｜parameter name=\"order_id\" string=\"true\">".to_string()), Just("</｜DSML｜parameter>".to_string()),
                Just("</｜DSML｜invoke>".to_string()), Just("<minimax:tool_call>".to_string()), Just("<invoke name=".to_string()),
                Just("<function_calls>".to_string()), Just("</function_calls>".to_string()), Just("<arg_key>".to_string()),
                Just("</arg_key><arg_value>".to_string()), Just("</arg_value>".to_string()), Just("<|tools_prefix|>[".to_string()),
                Just("analysis".to_string()), Just("assistantfinal".to_string()), Just("assistantcommentary to=functions.get_order json".to_string()),
                Just("Which would you prefer?".to_string()), Just(" once you confirm, ".to_string()), Just("I already ran ".to_string()),
                Just("e.g. ".to_string()), Just(", so ".to_string()), Just("\n\n".to_string()), Just("Let me know which.".to_string()),
            ], 0..40)) {
            let s: String = parts.concat();
            let calls = text(&s);
            for c in calls {
                prop_assert!(!c.name.is_empty());
            }
        }
    }
}
