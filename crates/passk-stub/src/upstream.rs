//! A stub model whose tokens come from a real OpenAI-compatible server (llama.cpp's
//! `llama-server`, vLLM, LM Studio): the judged native chat is forwarded, not streamed, to the
//! server's `/v1/chat/completions` (tools and tool results included), and its answer is read back
//! into what the native endpoint sends. llama.cpp's `timings` give the Ollama timing fields:
//! `prompt_n` + `cache_n` is `prompt_eval_count` (every prompt token, as Ollama counts since
//! 0.30.1; `prompt_n` alone under the 0.30.0 count), `cache_n` is `prompt_eval_cached_count`,
//! `prompt_ms` is `prompt_eval_duration`, `predicted_n` / `predicted_ms` are `eval_count` /
//! `eval_duration`. A server that gives `usage` only gives counts and no durations.

use super::PromptCount;
use passk::wire::api::{ChatMessage, ChatRequest, Timings};
use serde_json::{Map, Value, json};
use std::sync::OnceLock;
use std::time::Duration;

/// How long one forwarded call may take (a small CPU model writing 2,000 tokens takes minutes).
const CALL_TIMEOUT: Duration = Duration::from_secs(900);

/// The server's answer, read back into the native shape.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Upstreamed {
    /// The reply text, with any call whose arguments are no JSON object written back as the
    /// model's text (as Ollama leaves a call it cannot parse in the content).
    pub content: String,
    /// Native calls: name and argument object.
    pub calls: Vec<(String, Value)>,
    /// Counts and durations (no `total_duration`, no `load_duration`).
    pub timings: Timings,
}

/// Why the server gave no answer: the status and text the native endpoint answers with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Failed {
    /// The server's status, or 500 when it could not be reached or its answer did not read.
    pub status: u16,
    /// What went wrong, naming the server.
    pub message: String,
}

fn client() -> &'static reqwest::Client {
    static CLIENT: OnceLock<reqwest::Client> = OnceLock::new();
    CLIENT.get_or_init(|| {
        reqwest::Client::builder()
            .no_proxy()
            .timeout(CALL_TIMEOUT)
            .build()
            .unwrap_or_default()
    })
}

/// Forwards `req` to the server at `base` (`http://host:port`) and reads its answer.
pub(crate) async fn complete(
    base: &str,
    req: &ChatRequest,
    count: PromptCount,
) -> Result<Upstreamed, Failed> {
    let url = format!("{}/v1/chat/completions", base.trim_end_matches('/'));
    let failed = |status: u16, why: String| Failed {
        status,
        message: format!("upstream {url}: {why}"),
    };
    let resp = client()
        .post(&url)
        .json(&request_body(req))
        .send()
        .await
        .map_err(|e| failed(500, e.to_string()))?;
    let status = resp.status().as_u16();
    let body: Value = resp
        .json()
        .await
        .map_err(|e| failed(500, format!("answer is not JSON: {e}")))?;
    if status != 200 {
        let why = body
            .pointer("/error/message")
            .and_then(Value::as_str)
            .map_or_else(|| body.to_string(), String::from);
        return Err(failed(status, why));
    }
    read_answer(&body, count).ok_or_else(|| failed(500, format!("no choice in {body}")))
}

/// The OpenAI request for a native chat: messages (tool calls with their arguments as JSON text,
/// tool results with the id of the call they answer), tools, and the options a server reads.
pub(crate) fn request_body(req: &ChatRequest) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(req.model));
    body.insert("messages".into(), Value::Array(messages(&req.messages)));
    body.insert("stream".into(), json!(false));
    if let Some(tools) = req.tools.as_ref().filter(|t| !t.is_empty()) {
        body.insert("tools".into(), json!(tools));
    }
    let o = &req.options;
    if let Some(n) = o.num_predict.filter(|&n| n > 0) {
        body.insert("max_tokens".into(), json!(n));
    }
    let numbers = [
        ("temperature", o.temperature.map(Value::from)),
        ("top_p", o.top_p.map(Value::from)),
        ("top_k", o.top_k.map(Value::from)),
        ("seed", o.seed.map(Value::from)),
    ];
    for (key, v) in numbers {
        if let Some(v) = v {
            body.insert(key.into(), v);
        }
    }
    if let Some(stop) = o.extra.get("stop") {
        body.insert("stop".into(), stop.clone());
    }
    match req.format.as_ref() {
        Some(Value::String(s)) if s == "json" => {
            body.insert("response_format".into(), json!({ "type": "json_object" }));
        }
        Some(schema @ Value::Object(_)) => {
            body.insert(
                "response_format".into(),
                json!({ "type": "json_schema", "json_schema": { "name": "format", "schema": schema } }),
            );
        }
        _ => {}
    }
    Value::Object(body)
}

/// Native messages as OpenAI messages. A call without an id gets `call_<turn>_<index>`, and a tool
/// result without one answers the latest call of its tool.
fn messages(history: &[ChatMessage]) -> Vec<Value> {
    let mut calls_seen: Vec<(String, String)> = Vec::new();
    history
        .iter()
        .enumerate()
        .map(|(turn, m)| {
            let mut out = json!({ "role": m.role, "content": m.content });
            if !m.tool_calls.is_empty() {
                let calls: Vec<Value> = m
                    .tool_calls
                    .iter()
                    .enumerate()
                    .map(|(i, c)| {
                        let id = c.id.clone().unwrap_or_else(|| format!("call_{turn}_{i}"));
                        calls_seen.push((c.function.name.clone(), id.clone()));
                        let arguments = match &c.function.arguments {
                            Value::Null => "{}".to_string(),
                            a => a.to_string(),
                        };
                        json!({ "id": id, "type": "function",
                                "function": { "name": c.function.name, "arguments": arguments } })
                    })
                    .collect();
                out["tool_calls"] = Value::Array(calls);
            }
            if m.role == "tool" {
                let answered = m.tool_call_id.clone().or_else(|| {
                    let name = m.tool_name.as_deref()?;
                    let (_, id) = calls_seen.iter().rev().find(|(n, _)| n == name)?;
                    Some(id.clone())
                });
                if let Some(id) = answered {
                    out["tool_call_id"] = json!(id);
                }
            }
            out
        })
        .collect()
}

/// The first choice and the server's counts; `None` when there is no choice.
pub(crate) fn read_answer(body: &Value, count: PromptCount) -> Option<Upstreamed> {
    let choice = body.pointer("/choices/0")?;
    let message = choice.get("message")?;
    let mut content = message
        .get("content")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let mut calls = Vec::new();
    for call in message
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let name = call
            .pointer("/function/name")
            .and_then(Value::as_str)
            .unwrap_or("");
        let raw = match call.pointer("/function/arguments") {
            Some(Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
            None => String::new(),
        };
        match serde_json::from_str::<Value>(&raw) {
            Ok(args @ Value::Object(_)) => calls.push((name.to_string(), args)),
            _ => content.push_str(&format!(
                "<tool_call>\n{{\"name\": {}, \"arguments\": {raw}}}\n</tool_call>",
                json!(name)
            )),
        }
    }
    let stopped_at_length = choice.get("finish_reason").and_then(Value::as_str) == Some("length");
    let mut timings = timings(body, count);
    timings.done_reason = Some(if stopped_at_length { "length" } else { "stop" }.to_string());
    Some(Upstreamed {
        content,
        calls,
        timings,
    })
}

/// Counts and durations from llama.cpp's `timings`, else counts from `usage`.
fn timings(body: &Value, count: PromptCount) -> Timings {
    let n = |v: &Value, key: &str| v.get(key).and_then(Value::as_u64);
    let ns = |v: &Value, key: &str| {
        v.get(key)
            .and_then(Value::as_f64)
            .filter(|ms| ms.is_finite() && *ms >= 0.0)
            .map(|ms| (ms * 1e6).round() as u64)
    };
    if let Some(t) = body.get("timings").filter(|t| t.is_object()) {
        let cached = n(t, "cache_n").unwrap_or(0);
        let evaluated = n(t, "prompt_n");
        return Timings {
            prompt_eval_count: evaluated.map(|p| match count {
                PromptCount::All => p + cached,
                PromptCount::NewOnly => p,
            }),
            prompt_eval_duration: ns(t, "prompt_ms"),
            prompt_eval_cached_count: Some(cached),
            eval_count: n(t, "predicted_n"),
            eval_duration: ns(t, "predicted_ms"),
            ..Timings::default()
        };
    }
    let usage = body.get("usage").cloned().unwrap_or_default();
    let cached = usage
        .pointer("/prompt_tokens_details/cached_tokens")
        .and_then(Value::as_u64);
    Timings {
        prompt_eval_count: n(&usage, "prompt_tokens").map(|p| match count {
            PromptCount::All => p,
            PromptCount::NewOnly => p.saturating_sub(cached.unwrap_or(0)),
        }),
        prompt_eval_cached_count: cached,
        eval_count: n(&usage, "completion_tokens"),
        ..Timings::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use passk::wire::api::{ToolCall, ToolCallFunction};

    #[test]
    fn llama_cpp_timings_become_ollamas_fields_with_the_cache_kept_apart() {
        let body = json!({
            "choices": [{"finish_reason": "tool_calls", "message": {"role": "assistant", "content": null,
                "tool_calls": [
                    {"id": "x", "type": "function", "function": {"name": "order_status", "arguments": "{\"id\":7}"}},
                    {"id": "y", "type": "function", "function": {"name": "refund", "arguments": "{\"id\":"}}
                ]}}],
            "timings": {"cache_n": 280, "prompt_n": 21, "prompt_ms": 203.75, "predicted_n": 30, "predicted_ms": 512.125}
        });
        let a = read_answer(&body, PromptCount::All).expect("a choice");
        assert_eq!(
            a.calls,
            vec![("order_status".to_string(), json!({"id": 7}))]
        );
        assert!(
            a.content
                .contains(r#""name": "refund", "arguments": {"id":"#)
        );
        let t = &a.timings;
        assert_eq!(
            (
                t.prompt_eval_count,
                t.prompt_eval_cached_count,
                t.eval_count
            ),
            (Some(301), Some(280), Some(30))
        );
        assert_eq!(
            (t.prompt_eval_duration, t.eval_duration),
            (Some(203_750_000), Some(512_125_000))
        );
        let new_only = read_answer(&body, PromptCount::NewOnly).expect("a choice");
        assert_eq!(new_only.timings.prompt_eval_count, Some(21));
        let usage_only = json!({"choices": [{"finish_reason": "length", "message": {"content": "hi"}}],
            "usage": {"prompt_tokens": 9, "completion_tokens": 4}});
        let u = read_answer(&usage_only, PromptCount::All).expect("a choice");
        assert_eq!(
            (u.timings.eval_count, u.timings.eval_duration),
            (Some(4), None)
        );
        assert_eq!(u.timings.done_reason.as_deref(), Some("length"));
    }

    #[test]
    fn tool_results_answer_their_calls_by_id() {
        let call = ToolCall {
            id: None,
            function: ToolCallFunction {
                index: Some(0),
                name: "order_status".to_string(),
                arguments: json!({"id": 7}),
            },
        };
        let history = vec![
            ChatMessage::user("where is 7?"),
            ChatMessage {
                role: "assistant".to_string(),
                tool_calls: vec![call],
                ..ChatMessage::default()
            },
            ChatMessage {
                role: "tool".to_string(),
                content: "shipped".to_string(),
                tool_name: Some("order_status".to_string()),
                ..ChatMessage::default()
            },
        ];
        let m = messages(&history);
        assert_eq!(
            m[1]["tool_calls"][0]["function"]["arguments"],
            json!("{\"id\":7}")
        );
        assert_eq!(m[2]["tool_call_id"], m[1]["tool_calls"][0]["id"]);
    }
}
