//! One trial as the page shows it: the record's transcript, calls, tool events and verdict as one
//! line of JSON, with long repeated texts (system prompts, end states) moved into a shared table.
//!
//! A text is keyed by a digest of its content, so the table and every line are the same whatever
//! order the records were read in.

use crate::runner::record::{CallRecord, ConversationRecord, RouterRecord};
use crate::wire::outcome::CallOutcome;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;

/// Texts at least this long are shared through the table instead of repeated in each trial.
const SHARED_MIN_CHARS: usize = 160;

/// Long texts shared by many trials, keyed by a digest of their content.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SharedTexts(BTreeMap<String, String>);

impl SharedTexts {
    /// Stores `text` and returns its key.
    pub fn share(&mut self, text: &str) -> String {
        let digest = Sha256::digest(text.as_bytes());
        let key: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
        self.0
            .entry(key.clone())
            .or_insert_with(|| text.to_string());
        key
    }

    /// The table, by key.
    pub fn table(&self) -> &BTreeMap<String, String> {
        &self.0
    }
}

/// The trial as one line of JSON, safe inside an HTML `<script>` element (no `<`).
pub fn trial_line(c: &ConversationRecord, texts: &mut SharedTexts) -> String {
    let transcript: Vec<Value> = c
        .transcript
        .iter()
        .map(|m| share_system_prompt(m, texts))
        .collect();
    let end_state = texts.share(&c.end_state.to_string());
    // The reasoning goes with the calls only when the transcript does not carry it already.
    let transcript_thinks = transcript.iter().any(|m| {
        m.get("thinking")
            .and_then(Value::as_str)
            .is_some_and(|t| !t.is_empty())
    });
    let detail = json!({
        "status": c.status,
        "outcome": c.outcome,
        "wall_s": c.wall_s,
        "call_cap": c.call_cap,
        "imported": c.imported,
        "verdict": c.verdict,
        "calls": c.calls.iter().map(|k| call_json(k, !transcript_thinks)).collect::<Vec<_>>(),
        "events": c.tool_events,
        "replies": if transcript.is_empty() { json!(c.replies) } else { Value::Null },
        "transcript": transcript,
        "end_state": end_state,
    });
    script_safe(&detail.to_string())
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
    let detail = json!({
        "router": true,
        "outcome": r.outcome,
        "imported": r.imported,
        "label": r.label,
        "predicted": r.predicted,
        "raw": r.raw,
        "verdict": {"passed": r.correct, "reasons": reasons},
        "calls": [call_json(&r.call, true)],
    });
    script_safe(&detail.to_string())
}

/// What the page shows of a call: where it sits, its outcome, Ollama's timings, wall time and
/// time to first token, GPU readings, and its attempts and flags only when there is something to
/// say (a retry, a failed attempt, a truncated reply, an overflowing context); a thinking model's
/// reasoning when `thinking` (the transcript does not hold it).
fn call_json(c: &CallRecord, thinking: bool) -> Value {
    let mut v = json!({
        "node": c.node, "turn": c.turn, "step": c.step, "outcome": c.outcome, "timings": c.timings,
    });
    let mut put = |key: &str, value: Value| {
        if let Value::Object(map) = &mut v {
            map.insert(key.to_string(), value);
        }
    };
    if let Some(w) = c.wall_s {
        put("wall_s", json!(rounded(w)));
    }
    if let Some(t) = c.ttft_s {
        put("ttft_s", json!(rounded(t)));
    }
    if let Some(g) = &c.gpu {
        put("gpu", json!(g));
    }
    if let Some(t) = c.thinking.as_ref().filter(|t| thinking && !t.is_empty()) {
        put("thinking", json!(t));
    }
    if c.attempts.len() > 1 || c.attempts.iter().any(|a| a.outcome != CallOutcome::Ok) {
        put("attempts", json!(c.attempts));
    }
    if c.truncated {
        put("truncated", json!(true));
    }
    if c.context_overflow {
        put("context_overflow", json!(true));
    }
    v
}

/// Seconds to the tenth of a millisecond, as the page shows them.
fn rounded(seconds: f64) -> f64 {
    (seconds * 1e4).round() / 1e4
}

/// A system message with a long content refers to the shared table instead of carrying it.
fn share_system_prompt(message: &Value, texts: &mut SharedTexts) -> Value {
    let content = message.get("content").and_then(Value::as_str);
    match content {
        Some(text)
            if message.get("role").and_then(Value::as_str) == Some("system")
                && text.len() >= SHARED_MIN_CHARS =>
        {
            json!({"role": "system", "shared": texts.share(text)})
        }
        _ => message.clone(),
    }
}

/// JSON text with every `<` written as `\u003c`, so that no `</script>` or `<!--` can appear in it
/// (a `<` can only occur inside a JSON string, where the escape means the same character).
pub fn script_safe(json: &str) -> String {
    json.replace('<', "\\u003c")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixtures::conversation;

    #[test]
    fn long_system_prompts_and_end_states_are_shared_once() {
        let prompt = "You are the agent. ".repeat(20);
        let mut texts = SharedTexts::default();
        let mut lines = Vec::new();
        for trial in 0..3 {
            let mut c = conversation("m", "L1", trial, false, vec![]);
            c.transcript = vec![
                json!({"role": "system", "content": prompt}),
                json!({"role": "user", "content": "where is </script> my order"}),
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
        c.transcript =
            vec![json!({"role": "assistant", "content": "", "thinking": "check the order first"})];
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
