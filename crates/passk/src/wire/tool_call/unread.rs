//! Parts of a reply that are never calls: reasoning, in each family's form, and a pasted-back tool
//! list. The reply is split into what is read for calls (reasoning and tool lists blanked, replaced
//! by spaces so positions hold) and the reasoning alone (the calls there were only considered).

use super::search::{self, Needle};
use aho_corasick::AhoCorasick;
use std::borrow::Cow;
use std::sync::LazyLock;

/// Reasoning blocks as thinking models write them into the text (open tag, close tag): `<think>`
/// (Qwen 3, DeepSeek R1 and V3.1, GLM, Kimi K2 Thinking), Anthropic-style `<thinking>`,
/// `<reasoning>`, Mistral Magistral's `[THINK]`, Kimi's `◁think▷`, Seed-OSS's `<seed:think>`,
/// Command A's `<|START_THINKING|>` and Gemma 4's `<|channel>thought … <channel|>`.
pub const REASONING_TAGS: [(&str, &str); 8] = [
    ("<think>", "</think>"),
    ("<thinking>", "</thinking>"),
    ("<reasoning>", "</reasoning>"),
    ("[THINK]", "[/THINK]"),
    ("◁think▷", "◁/think▷"),
    ("<seed:think>", "</seed:think>"),
    ("<|START_THINKING|>", "<|END_THINKING|>"),
    ("<|channel>thought", "<channel|>"),
];

/// The tool list of a chat template (Qwen's, Hermes'), which small models sometimes echo.
pub const TOOLS_TAG: (&str, &str) = ("<tools>", "</tools>");

/// Harmony (gpt-oss): a message's header runs from its channel to `<|message|>`.
pub const HARMONY_CHANNEL: &str = "<|channel|>";
/// Harmony: the end of a header.
pub const HARMONY_MESSAGE: &str = "<|message|>";

/// A reply split into what is read for calls and its reasoning.
#[derive(Debug, Clone, PartialEq)]
pub struct Split<'a> {
    /// The reply with reasoning and echoed tool lists blanked (the reply itself, not a copy, when
    /// it holds neither).
    pub outside: Cow<'a, str>,
    /// The reply with everything but reasoning blanked; `None` when it holds no reasoning.
    pub reasoning: Option<String>,
}

/// The content with every reasoning block and echoed tool list replaced by spaces. An open tag that
/// never closes runs to the end (the reply was cut mid-thought); a close tag with no open tag before
/// it ends reasoning that started with the reply (templates that put the open tag in the prompt).
pub fn blank(content: &str) -> String {
    split(content).outside.into_owned()
}

/// The reply split into what is read for calls and its reasoning (see [`blank`]); Harmony's
/// `analysis` channel is reasoning unless its header names a recipient (then it is a call).
pub fn split(content: &str) -> Split<'_> {
    split_reply(content, false)
}

/// [`split`] for a reply that was `cut` at its output limit (or not). In a `<think>` block that
/// is never closed, a whole `<tool_call>…</tool_call>` ends the reasoning at its tag, as Ollama's
/// Qwen 3 and Nemotron parsers read it (ollama/ollama#14477): the model called the tool without
/// closing its thoughts. A reply cut at its limit keeps the whole block as reasoning: it stopped
/// mid-thought, not because it called.
pub fn split_reply(content: &str, cut: bool) -> Split<'_> {
    let present = Present::in_text(content);
    let mut reasoning = Vec::new();
    for (k, (open, close)) in REASONING_TAGS.into_iter().enumerate() {
        if present.pair(k) {
            pairs(content, open, close, true, &mut reasoning);
        }
    }
    if !cut && present.pair(0) {
        end_at_tool_call(content, &mut reasoning);
    }
    if present.pair(REASONING_TAGS.len() + 1) {
        harmony_analysis(content, &mut reasoning);
    }
    stripped_harmony(content, &mut reasoning);
    let mut tools = Vec::new();
    if present.pair(REASONING_TAGS.len()) {
        pairs(content, TOOLS_TAG.0, TOOLS_TAG.1, false, &mut tools);
    }
    if reasoning.is_empty() && tools.is_empty() {
        return Split {
            outside: Cow::Borrowed(content),
            reasoning: None,
        };
    }
    let mut bytes = content.as_bytes().to_vec();
    for &(s, e) in reasoning.iter().chain(&tools) {
        bytes[s..e].fill(b' ');
    }
    let reasoning_text = (!reasoning.is_empty()).then(|| {
        let mut keep = vec![b' '; content.len()];
        for &(s, e) in &reasoning {
            keep[s..e].copy_from_slice(&content.as_bytes()[s..e]);
        }
        for &(s, e) in &tools {
            keep[s..e].fill(b' ');
        }
        text(keep, content)
    });
    Split {
        outside: Cow::Owned(text(bytes, content)),
        reasoning: reasoning_text,
    }
}

/// Which of the tags `split` looks for occur in a text, found in one pass over it: each tag
/// searched for alone read the whole reply some twenty times, and most replies hold none.
struct Present(Vec<bool>);

/// Every tag `split` looks for, two per pair (open, close): the reasoning pairs, the tool list,
/// then Harmony's channel (twice, as it stands alone).
static TAGS: LazyLock<AhoCorasick> = LazyLock::new(|| {
    let tags = REASONING_TAGS
        .iter()
        .chain([&TOOLS_TAG, &(HARMONY_CHANNEL, HARMONY_CHANNEL)])
        .flat_map(|&(open, close)| [open, close]);
    AhoCorasick::new(tags).expect("fixed tags build an automaton")
});

impl Present {
    fn in_text(content: &str) -> Present {
        let mut seen = vec![false; TAGS.patterns_len()];
        // Overlapping, so that a tag inside another's match is seen too.
        for m in TAGS.find_overlapping_iter(content) {
            seen[m.pattern().as_usize()] = true;
        }
        Present(seen)
    }

    /// Whether pair `k`'s open or close tag occurs (a block needs one of them).
    fn pair(&self, k: usize) -> bool {
        self.0[2 * k] || self.0[2 * k + 1]
    }
}

/// Spans only ever start and end at whole tags, so the bytes stay UTF-8; never fails.
fn text(bytes: Vec<u8>, fallback: &str) -> String {
    String::from_utf8(bytes).unwrap_or_else(|_| " ".repeat(fallback.len()))
}

/// The spans of `open … close` blocks.
fn pairs(
    content: &str,
    open: &str,
    close: &str,
    leading_close: bool,
    out: &mut Vec<(usize, usize)>,
) {
    let mut from = 0;
    if leading_close
        && let Some(c) = search::find(content, close)
        && search::find(&content[..c], open).is_none()
    {
        from = c + close.len();
        out.push((0, from));
    }
    while let Some(o) = search::find(&content[from..], open).map(|o| from + o) {
        let end = search::find(&content[o + open.len()..], close)
            .map_or(content.len(), |c| o + open.len() + c + close.len());
        out.push((o, end));
        from = end;
    }
}

/// Tags of a Qwen 3 call, which end a `<think>` block that is never closed.
const TOOL_CALL_TAGS: (&str, &str) = ("<tool_call>", "</tool_call>");

/// Ends an unclosed `<think>` block (the last span, running to the reply's end, when it opens with
/// `<think>` and holds no `</think>`) at its first `<tool_call>` that is closed.
fn end_at_tool_call(content: &str, reasoning: &mut [(usize, usize)]) {
    let (open, close) = REASONING_TAGS[0];
    let Some(span) = reasoning
        .iter_mut()
        .find(|(s, e)| *e == content.len() && content[*s..].starts_with(open))
    else {
        return;
    };
    let block = &content[span.0..];
    if search::find(block, close).is_some() {
        return;
    }
    let Some(tag) = search::find(block, TOOL_CALL_TAGS.0) else {
        return;
    };
    if search::find(&block[tag..], TOOL_CALL_TAGS.1).is_some() {
        span.1 = span.0 + tag;
    }
}

/// The spans of Harmony `analysis` messages that have no recipient: header and body.
fn harmony_analysis(content: &str, out: &mut Vec<(usize, usize)>) {
    for at in search::positions(content, HARMONY_CHANNEL) {
        let header_at = at + HARMONY_CHANNEL.len();
        let Some(rest) = content[header_at..].strip_prefix("analysis") else {
            continue;
        };
        let Some(h) = rest[..rest.floor_char_boundary(HEADER_MAX)].find(HARMONY_MESSAGE) else {
            continue;
        };
        if rest[..h].contains("to=") {
            continue;
        }
        let body = content.len() - rest.len() + h + HARMONY_MESSAGE.len();
        let end = harmony_body_end(content, body);
        out.push((at, end));
    }
}

/// Harmony with its special tokens stripped (llama-server can drop them; oobabooga/textgen#7374:
/// `analysisUser says .. Should respond politely.assistantfinalHello!`): `<|channel|>analysis
/// <|message|>` at the start reads `analysis`, each later header `assistant` and its channel run
/// together (`assistantfinal`, `assistantanalysis`, `assistantcommentary to=functions.name json{..}`).
pub const STRIPPED_HEADERS: [&str; 3] =
    ["assistantfinal", "assistantanalysis", "assistantcommentary"];

/// The reasoning of a reply in stripped Harmony: only a reply that starts with `analysis` and
/// holds a stripped header is read so, so prose that merely says "analysis" is untouched. Each
/// analysis message (the first, and each after `assistantanalysis`) runs to the next header; the
/// `assistantfinal` header itself is blanked, the answer after it kept.
fn stripped_harmony(content: &str, out: &mut Vec<(usize, usize)>) {
    let lead = content.len() - content.trim_start().len();
    if !content[lead..].starts_with("analysis") {
        return;
    }
    let mut headers: Vec<(usize, &str)> = STRIPPED_HEADERS
        .iter()
        .flat_map(|h| search::positions(content, h).map(move |at| (at, *h)))
        .collect();
    if headers.is_empty() {
        return;
    }
    headers.sort_unstable();
    out.push((lead, headers[0].0));
    for (k, &(at, header)) in headers.iter().enumerate() {
        let next = headers.get(k + 1).map_or(content.len(), |h| h.0);
        match header {
            "assistantanalysis" => out.push((at, next)),
            "assistantfinal" => out.push((at, at + header.len())),
            _ => {}
        }
    }
}

/// How far past `<|channel|>` a Harmony header's `<|message|>` is looked for, bytes.
const HEADER_MAX: usize = 256;

/// Where the Harmony body starting at `body` ends: at the next special token (`<|end|>`,
/// `<|call|>`, `<|return|>`, `<|start|>`, `<|channel|>` or any other `<|…|>`: a body holds none),
/// or at the reply's end. Looks no further than that token, so consecutive bodies cost their
/// length once.
pub fn harmony_body_end(content: &str, body: usize) -> usize {
    static TOKEN: Needle = Needle::new("<|");
    TOKEN
        .find(&content[body..])
        .map_or(content.len(), |e| body + e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The one-pass search sees a pair exactly when searching for its tags one by one would.
        #[test]
        fn the_one_pass_search_sees_what_each_search_would(parts in proptest::collection::vec(
            prop_oneof![
                proptest::sample::select(
                    REASONING_TAGS
                        .iter()
                        .chain([&TOOLS_TAG])
                        .flat_map(|&(o, c)| [o, c])
                        .chain([HARMONY_CHANNEL, "<|", "think>", "<", "é", " x "])
                        .collect::<Vec<_>>()
                ),
            ],
            0..8,
        )) {
            let text = parts.concat();
            let present = Present::in_text(&text);
            let pairs = REASONING_TAGS
                .iter()
                .chain([&TOOLS_TAG, &(HARMONY_CHANNEL, HARMONY_CHANNEL)]);
            for (k, (open, close)) in pairs.enumerate() {
                prop_assert_eq!(
                    present.pair(k),
                    text.contains(open) || text.contains(close),
                    "pair {} in {:?}", k, text
                );
            }
        }
    }

    #[test]
    fn reasoning_and_tool_lists_are_blanked_in_place() {
        let s = "<think>call cancel_order {}</think>ok <tools>[{}]</tools> é";
        let b = blank(s);
        assert_eq!(b.len(), s.len());
        assert!(b.contains("ok") && b.ends_with(" é") && !b.contains("cancel"));
        assert!(!b.contains('{'));
        assert_eq!(blank("a</think>b").trim(), "b");
        assert_eq!(blank("a<think>b {").trim(), "a");
        assert_eq!(blank("[THINK]x[/THINK]y").trim(), "y");
        assert_eq!(blank("◁think▷x◁/think▷y").trim(), "y");
    }

    #[test]
    fn the_reasoning_is_kept_apart_and_harmony_analysis_is_reasoning() {
        let s = "<|channel|>analysis<|message|>We could cancel {\"x\":1}<|end|><|start|>assistant<|channel|>final<|message|>Your email?<|return|>";
        let split = split(s);
        assert!(!split.outside.contains("cancel") && split.outside.contains("Your email?"));
        let r = split.reasoning.expect("reasoning");
        assert!(r.contains("cancel") && !r.contains("email"));
        // A recipient makes the analysis message a call, not reasoning.
        let call = "<|channel|>analysis to=functions.get_order<|message|>{}<|call|>";
        assert_eq!(split_none(call), call);
        assert_eq!(super::split("plain").reasoning, None);
    }

    fn split_none(s: &str) -> String {
        super::split(s).outside.into_owned()
    }
}
