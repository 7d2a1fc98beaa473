//! One trial as the page shows it: the record's transcript, calls, tool events and verdict as one
//! line of JSON, with long repeated texts (system prompts, end states) moved into a shared table.
//!
//! A text is keyed by a digest of its content, so the table and every line are the same whatever
//! order the records were read in.

use crate::runner::record::{
    CallRecord, ConversationRecord, GpuWindow, Node, Outcome, RecordedJson, RouterRecord, Status,
    Timings,
};
use crate::trace::{ToolEvent, Verdict};
use crate::wire::outcome::{Attempt, CallOutcome};
use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::hash::{Hash, Hasher};

/// Texts at least this long are shared through the table instead of repeated in each trial.
const SHARED_MIN_CHARS: usize = 160;

/// Long texts shared by many trials, keyed by a digest of their content.
///
/// Most shared texts repeat (one system prompt for every trial of a suite): a text seen before is
/// found by a cheap hash of its content and compared byte for byte with the stored one, so its
/// SHA-256 is computed once per distinct text, not once per trial.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SharedTexts {
    table: BTreeMap<String, String>,
    seen: HashMap<u64, String>,
    /// What [`SharedTexts::share_literal`] answered for a literal, by a hash of it (with the
    /// literal, to compare).
    literals: HashMap<u64, (String, Option<String>)>,
}

impl SharedTexts {
    /// Stores `text` and returns its key.
    pub fn share(&mut self, text: &str) -> String {
        let quick = quick_hash(text);
        if let Some(key) = self.seen.get(&quick)
            && self.table.get(key).is_some_and(|t| t == text)
        {
            return key.clone();
        }
        let digest = Sha256::digest(text.as_bytes());
        let key: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
        self.table
            .entry(key.clone())
            .or_insert_with(|| text.to_string());
        self.seen.entry(quick).or_insert_with(|| key.clone());
        key
    }

    /// The key of the text of `literal`, a JSON string literal (quotes included), stored as
    /// [`SharedTexts::share`] stores it, when the text is long enough to share
    /// (`SHARED_MIN_CHARS`, 160 bytes); a literal seen before is not decoded again.
    pub fn share_literal(&mut self, literal: &str) -> Option<String> {
        let quick = quick_hash(literal);
        if let Some((seen, key)) = self.literals.get(&quick)
            && seen == literal
        {
            return key.clone();
        }
        let key = serde_json::from_str::<Cow<'_, str>>(literal)
            .ok()
            .filter(|t| t.len() >= SHARED_MIN_CHARS)
            .map(|t| self.share(&t));
        self.literals
            .entry(quick)
            .or_insert_with(|| (literal.to_string(), key.clone()));
        key
    }

    /// The table, by key.
    pub fn table(&self) -> &BTreeMap<String, String> {
        &self.table
    }
}

/// A hash of `text` to find it again among the texts already shared (not a key: two texts may
/// share it, and the stored text is compared before its key is reused).
fn quick_hash(text: &str) -> u64 {
    let mut h = std::hash::DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}

/// A trial as the page reads it, serialized in this field order (the line's key order).
#[derive(Serialize)]
struct TrialDetail<'a> {
    status: &'a Status,
    outcome: &'a Outcome,
    wall_s: f64,
    call_cap: u32,
    imported: bool,
    verdict: &'a Verdict,
    calls: Vec<CallDetail<'a>>,
    events: &'a [ToolEvent],
    /// The replies only when there is no transcript (`null` otherwise).
    replies: Option<&'a [Option<String>]>,
    transcript: Vec<Message<'a>>,
    end_state: String,
}

/// A transcript message: as recorded, or a long system prompt replaced by its shared key.
enum Message<'a> {
    Recorded(&'a RecordedJson),
    SharedSystem(String),
}

/// What the page reads of a recorded message. A message it cannot read so (a field of another
/// type, a key written twice) is read as having none of them, and is shown as recorded.
#[derive(Default, Deserialize)]
struct Peek<'a> {
    #[serde(borrow, default)]
    role: Option<Cow<'a, str>>,
    /// Read as text only for a system message (most messages are not shared).
    #[serde(borrow, default)]
    content: Option<&'a serde_json::value::RawValue>,
    #[serde(borrow, default)]
    thinking: Option<Cow<'a, str>>,
}

fn peek(m: &RecordedJson) -> Peek<'_> {
    serde_json::from_str(m.json()).unwrap_or_default()
}

impl Serialize for Message<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Message::Recorded(v) => v.serialize(s),
            Message::SharedSystem(key) => {
                let mut m = s.serialize_map(Some(2))?;
                m.serialize_entry("role", "system")?;
                m.serialize_entry("shared", key)?;
                m.end()
            }
        }
    }
}

/// The trial as one line of JSON, safe inside an HTML `<script>` element (no `<`). Serialized
/// straight from the record (no intermediate JSON tree is built).
pub fn trial_line(c: &ConversationRecord, texts: &mut SharedTexts) -> String {
    let peeks: Vec<Peek<'_>> = c.transcript.iter().map(peek).collect();
    let transcript: Vec<Message<'_>> = c
        .transcript
        .iter()
        .zip(&peeks)
        .map(|(m, p)| share_system_prompt(m, p, texts))
        .collect();
    let end_state = texts.share(c.end_state.json());
    // The reasoning goes with the calls only when the transcript does not carry it already.
    let transcript_thinks = peeks
        .iter()
        .any(|p| p.thinking.as_ref().is_some_and(|t| !t.is_empty()));
    let detail = TrialDetail {
        status: &c.status,
        outcome: &c.outcome,
        wall_s: c.wall_s,
        call_cap: c.call_cap,
        imported: c.imported,
        verdict: &c.verdict,
        calls: c
            .calls
            .iter()
            .map(|k| call_detail(k, !transcript_thinks))
            .collect(),
        events: &c.tool_events,
        replies: transcript.is_empty().then_some(c.replies.as_slice()),
        transcript,
        end_state,
    };
    line_of(&detail)
}

/// A standalone router call as one line of JSON: the gold label, the label found in the reply, the
/// start of the reply and the call.
pub fn router_line(r: &RouterRecord) -> String {
    let predicted = r
        .predicted
        .as_deref()
        .unwrap_or("none (no single label in the reply)");
    let reasons: Vec<String> = if r.correct || !r.outcome.is_graded() {
        Vec::new()
    } else {
        vec![format!("predicted {predicted}, gold label {}", r.label)]
    };
    let detail = RouterDetail {
        router: true,
        outcome: &r.outcome,
        imported: r.imported,
        label: &r.label,
        predicted: r.predicted.as_deref(),
        raw: &r.raw,
        verdict: RouterVerdict {
            passed: r.correct,
            reasons,
        },
        calls: [call_detail(&r.call, true)],
    };
    line_of(&detail)
}

/// A router call as the page reads it, serialized in this field order.
#[derive(Serialize)]
struct RouterDetail<'a> {
    router: bool,
    outcome: &'a Outcome,
    imported: bool,
    label: &'a str,
    predicted: Option<&'a str>,
    raw: &'a str,
    verdict: RouterVerdict,
    calls: [CallDetail<'a>; 1],
}

/// A router call's verdict: right or not, and what was predicted when not.
#[derive(Serialize)]
struct RouterVerdict {
    passed: bool,
    reasons: Vec<String>,
}

/// What the page shows of a call: where it sits, its outcome, Ollama's timings, wall time and
/// time to first token, GPU readings, and its attempts and flags only when there is something to
/// say (a retry, a failed attempt, a truncated reply, an overflowing context); a thinking model's
/// reasoning when `thinking` (the transcript does not hold it). Fields serialize in this order.
#[derive(Serialize)]
struct CallDetail<'a> {
    node: &'a Node,
    turn: u32,
    step: u32,
    outcome: &'a CallOutcome,
    timings: &'a Timings,
    #[serde(skip_serializing_if = "Option::is_none")]
    wall_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ttft_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    gpu: Option<&'a GpuWindow>,
    #[serde(skip_serializing_if = "Option::is_none")]
    thinking: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    attempts: Option<&'a [Attempt]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    truncated: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    context_overflow: Option<bool>,
}

fn call_detail(c: &CallRecord, thinking: bool) -> CallDetail<'_> {
    let retried = c.attempts.len() > 1 || c.attempts.iter().any(|a| a.outcome != CallOutcome::Ok);
    CallDetail {
        node: &c.node,
        turn: c.turn,
        step: c.step,
        outcome: &c.outcome,
        timings: &c.timings,
        wall_s: c.wall_s.get().map(rounded),
        ttft_s: c.ttft_s.get().map(rounded),
        gpu: c.gpu.as_deref(),
        thinking: c.thinking.as_deref().filter(|t| thinking && !t.is_empty()),
        attempts: retried.then_some(&c.attempts),
        truncated: c.truncated.then_some(true),
        context_overflow: c.context_overflow.then_some(true),
    }
}

/// Seconds to the tenth of a millisecond, as the page shows them.
fn rounded(seconds: f64) -> f64 {
    (seconds * 1e4).round() / 1e4
}

/// A system message with a long content refers to the shared table instead of carrying it.
fn share_system_prompt<'a>(
    message: &'a RecordedJson,
    peek: &Peek<'_>,
    texts: &mut SharedTexts,
) -> Message<'a> {
    // A literal is at least as long as its text, so a shorter one is never shared.
    let shared = peek
        .content
        .map(|c| c.get())
        .filter(|c| peek.role.as_deref() == Some("system") && c.len() >= SHARED_MIN_CHARS)
        .and_then(|literal| texts.share_literal(literal));
    match shared {
        Some(key) => Message::SharedSystem(key),
        None => Message::Recorded(message),
    }
}

/// JSON text with every `<` written as `\u003c`, so that no `</script>` or `<!--` can appear in it
/// (a `<` can only occur inside a JSON string, where the escape means the same character).
pub fn script_safe(json: &str) -> String {
    json.replace('<', "\\u003c")
}

/// A trial's detail as its page line: serialized into a buffer sized for a typical trial at
/// once (rather than grown from 128 bytes by doubling), then made [`script_safe`].
fn line_of(detail: &impl Serialize) -> String {
    let mut out = Vec::with_capacity(16 << 10);
    serde_json::to_writer(&mut out, detail).expect("a record serializes");
    let text = String::from_utf8(out).expect("serde_json writes UTF-8");
    script_safe_owned(text)
}

/// [`script_safe`] of a string already owned, given back as it is when it holds no `<`.
fn script_safe_owned(json: String) -> String {
    if memchr::memchr(b'<', json.as_bytes()).is_some() {
        script_safe(&json)
    } else {
        json
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixtures::conversation;
    use serde_json::{Value, json};

    #[test]
    fn long_system_prompts_and_end_states_are_shared_once() {
        let prompt = "You are the agent. ".repeat(20);
        let mut texts = SharedTexts::default();
        let mut lines = Vec::new();
        for trial in 0..3 {
            let mut c = conversation("m", "L1", trial, false, vec![]);
            c.transcript = vec![
                json!({"role": "system", "content": prompt}).into(),
                json!({"role": "user", "content": "where is </script> my order"}).into(),
            ];
            lines.push(trial_line(&c, &mut texts));
        }
        assert_eq!(texts.table().len(), 2, "one prompt, one end state");
        assert!(lines.iter().all(|l| !l.contains(&prompt)));
        assert!(lines.iter().all(|l| !l.contains('<')), "{}", lines[0]);
        let back: Value = serde_json::from_str(&lines[0]).expect("valid JSON");
        assert_eq!(
            back["transcript"][1]["content"],
            "where is </script> my order"
        );
    }

    #[test]
    fn a_literal_shares_its_text_under_the_texts_own_key() {
        let text = "Policy: look the customer up first.\n".repeat(8);
        let mut texts = SharedTexts::default();
        let by_text = texts.share(&text);
        let literal = serde_json::to_string(&text).expect("json");
        let escaped = literal.replacen('P', "\\u0050", 1);
        for _ in 0..2 {
            assert_eq!(texts.share_literal(&literal), Some(by_text.clone()));
            assert_eq!(texts.share_literal(&escaped), Some(by_text.clone()));
        }
        assert_eq!(texts.table().len(), 1);
        let short = format!("\"{}\"", "\\n".repeat(SHARED_MIN_CHARS / 2));
        assert!(short.len() >= SHARED_MIN_CHARS, "long as a literal");
        assert_eq!(texts.share_literal(&short), None, "short as a text");
        assert_eq!(texts.share_literal("[1, 2]"), None, "not a string");
    }

    #[test]
    fn a_calls_reasoning_is_kept_once_when_the_transcript_lacks_it() {
        use crate::runner::record::Node;
        let mut call = CallRecord::new(Node::Orchestrator, 0, 0);
        call.thinking = Some("check the order first".into());
        let mut c = conversation("m", "L1", 0, true, vec![call]);
        let mut texts = SharedTexts::default();
        // No transcript (an imported run): the call carries the reasoning.
        let v: Value = serde_json::from_str(&trial_line(&c, &mut texts)).expect("json");
        assert_eq!(v["calls"][0]["thinking"], "check the order first");
        // The transcript holds it: not repeated on the call.
        c.transcript = vec![
            json!({"role": "assistant", "content": "", "thinking": "check the order first"}).into(),
        ];
        let line = trial_line(&c, &mut texts);
        assert_eq!(line.matches("check the order first").count(), 1, "{line}");
    }

    #[test]
    fn a_misread_router_message_says_what_was_predicted() {
        use crate::runner::record::{Node, Outcome};
        let call = CallRecord::new(Node::Router, 0, 0);
        let r = RouterRecord {
            schema_version: 1,
            grader_digest: "g".into(),
            model: "m".into(),
            api: crate::wire::chat::ApiKind::Ollama,
            index: 3,
            trial: 0,
            label: "order_status".into(),
            predicted: None,
            correct: false,
            raw: "<b>not sure</b>".into(),
            temperature: None,
            outcome: Outcome::ModelFail,
            call,
            imported: false,
            server_unreachable: false,
            host: None,
            parallel: None,
        };
        let line = router_line(&r);
        assert!(!line.contains('<'));
        let v: Value = serde_json::from_str(&line).expect("valid JSON");
        assert_eq!(
            v["verdict"]["reasons"][0],
            "predicted none (no single label in the reply), gold label order_status"
        );
        assert_eq!(v["raw"], "<b>not sure</b>");
        assert!(v["calls"][0].get("attempts").is_none(), "nothing to say");
    }
}
