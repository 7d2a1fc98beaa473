//! Ollama's OpenAI-compatible layer (`/v1`, `middleware/openai.go` over `openai/openai.go`): a
//! `/v1/chat/completions` request becomes the native chat request it stands for, goes through the
//! stub's own `/api/chat` (judge, scheduler, model, faults), and the native answer is rewritten as
//! Ollama's `ChatWriter` rewrites it: one `chat.completion`, or server-sent `chat.completion.chunk`
//! events ending in a finish chunk, an optional usage chunk and `data: [DONE]`; an error becomes
//! `{"error":{"message","type","param","code"}}`. Ollama's `/v1` gives `usage` only (prompt,
//! completion and total tokens), never durations.

use super::catalog;
use super::chat;
use super::http::{FinalLine, Part, Response};
use super::openai_request::{Translated, from_chat_request};
use super::{State, faults};
use passk::wire::api::{ChatResponse, ToolCall};
use passk::wire::name::ModelName;
use serde_json::{Value, json};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// Chat completions answered so far (the source of the `chatcmpl-N` ids).
static COMPLETIONS: AtomicU64 = AtomicU64::new(0);

/// `POST /v1/chat/completions`.
pub(crate) async fn chat_completions(state: &State, body: &[u8], entry: Instant) -> Response {
    let t = match from_chat_request(body) {
        Ok(t) => t,
        Err(message) => return error(400, &message),
    };
    let native = serde_json::to_vec(&t.native).unwrap_or_default();
    let n = COMPLETIONS.fetch_add(1, Ordering::Relaxed);
    // Ollama draws `rand.Intn(999)`; the stub's draw follows its seed.
    let id = format!("chatcmpl-{}", faults::mix(state.config.seed ^ n) % 999);
    let answer = chat::chat(state, &native, entry).await;
    rewrite(answer, &Writer::new(id, &t))
}

/// `GET /v1/models`: the native list as `ToListCompletion` lists it (`data` is `null` when empty).
pub(crate) fn models(state: &State) -> Response {
    let tags = catalog::tags(state);
    let data: Vec<Value> = tags
        .models
        .iter()
        .map(|m| model(&m.model, state.started))
        .collect();
    let data = if data.is_empty() {
        Value::Null
    } else {
        Value::Array(data)
    };
    Response::json(200, &json!({ "object": "list", "data": data }))
}

/// `GET /v1/models/{model}`: the native `/api/show` as `ToModel` gives it, the name as asked.
pub(crate) fn retrieve(state: &State, name: &str) -> Response {
    let shown = catalog::show(state, json!({ "model": name }).to_string().as_bytes());
    match shown {
        Response::Full { status: 200, .. } => Response::json(200, &model(name, state.started)),
        other => rewrite_error(other),
    }
}

/// One model entry; `created` is its `modified_at` (the stub's start).
fn model(id: &str, modified_at: SystemTime) -> Value {
    json!({
        "id": id,
        "object": "model",
        "created": unix(modified_at),
        "owned_by": ModelName::parse(id).namespace,
    })
}

fn unix(t: SystemTime) -> i64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// OpenAI's error object with Ollama's type for the status (`openai.NewError`).
pub(crate) fn error(status: u16, message: &str) -> Response {
    let kind = match status {
        400 => "invalid_request_error",
        404 => "not_found_error",
        _ => "api_error",
    };
    Response::json(
        status,
        &json!({ "error": { "message": message, "type": kind, "param": null, "code": null } }),
    )
}

/// What the rewrite needs of the request.
struct Writer {
    id: String,
    stream: bool,
    include_usage: bool,
    created: i64,
}

impl Writer {
    fn new(id: String, t: &Translated) -> Writer {
        let created = unix(SystemTime::now());
        Writer {
            id,
            stream: t.stream,
            include_usage: t.include_usage,
            created,
        }
    }

    fn envelope(&self, object: &str, model: &str) -> serde_json::Map<String, Value> {
        let v = json!({
            "id": self.id,
            "object": object,
            "created": self.created,
            "model": model,
            "system_fingerprint": "fp_ollama",
        });
        v.as_object().cloned().unwrap_or_default()
    }
}

/// The native answer as the OpenAI layer sends it; what is no Ollama answer (a reset, a hang, an
/// HTML page from a proxy) goes out as it is.
fn rewrite(answer: Response, w: &Writer) -> Response {
    match answer {
        Response::Full {
            status: 200,
            content_type,
            body,
        } => match serde_json::from_slice::<ChatResponse>(&body) {
            // A whole native answer (a preload's `done_reason: "load"`, which `ChatHandler`
            // answers in one piece whatever was asked) goes out as `ChatWriter` writes it: as
            // events when the request streamed.
            Ok(_) if w.stream => events(vec![Part::Line(body)], w),
            Ok(r) => Response::json(200, &completion(w, &r)),
            Err(_) => Response::Full {
                status: 200,
                content_type,
                body,
            },
        },
        Response::Cut {
            content_type,
            body,
            sent,
        } => {
            let whole = serde_json::from_slice::<ChatResponse>(&body)
                .map(|r| completion(w, &r).to_string().into_bytes())
                .unwrap_or(body);
            Response::Cut {
                content_type,
                sent: sent.min(whole.len() / 2),
                body: whole,
            }
        }
        Response::Stream { parts } if w.stream => events(parts, w),
        Response::Stream { parts } => first_error(&parts).unwrap_or_else(|| error(500, "")),
        other => rewrite_error(other),
    }
}

/// A native error answer (`{"error": "..."}`) as OpenAI's error object.
fn rewrite_error(answer: Response) -> Response {
    match answer {
        Response::Full { status, body, .. } if status != 200 => {
            let v: Value = serde_json::from_slice(&body).unwrap_or_default();
            let message = match v.get("error").and_then(Value::as_str) {
                Some(m) => m.to_string(),
                None => String::from_utf8_lossy(&body).into_owned(),
            };
            error(status, &message)
        }
        other => other,
    }
}

/// The error of a stream whose first line is one: Ollama answers it as a 500 before any chunk.
fn first_error(parts: &[Part]) -> Option<Response> {
    let first = parts.iter().find_map(|p| match p {
        Part::Line(l) => Some(l),
        _ => None,
    })?;
    let v: Value = serde_json::from_slice(first).ok()?;
    let message = v.get("error")?.as_str()?;
    Some(error(500, message))
}

/// The non-streamed `chat.completion` (`ToChatCompletion`).
fn completion(w: &Writer, r: &ChatResponse) -> Value {
    let message = r.message.clone().unwrap_or_default();
    let calls = tool_calls(&message.tool_calls);
    let mut m = json!({ "role": message.role, "content": message.content });
    if !calls.is_empty() {
        m["tool_calls"] = Value::Array(calls.clone());
    }
    if let Some(t) = message.thinking.filter(|t| !t.is_empty()) {
        m["reasoning"] = json!(t);
    }
    let reason = match r.timings.done_reason.as_deref() {
        Some("stop") if !calls.is_empty() => Some("tool_calls".to_string()),
        Some("") | None => None,
        Some(other) => Some(other.to_string()),
    };
    let mut out = w.envelope("chat.completion", &r.model);
    out.insert(
        "choices".into(),
        json!([{ "index": 0, "message": m, "finish_reason": reason }]),
    );
    out.insert("usage".into(), usage(r));
    Value::Object(out)
}

/// `usage` from the native counts (`ToUsage`).
fn usage(r: &ChatResponse) -> Value {
    let prompt = r.timings.prompt_eval_count.unwrap_or(0);
    let completion = r.timings.eval_count.unwrap_or(0);
    json!({
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    })
}

/// Native calls with their arguments as a JSON text (`ToToolCalls`).
fn tool_calls(calls: &[ToolCall]) -> Vec<Value> {
    calls
        .iter()
        .enumerate()
        .map(|(i, c)| {
            json!({
                "id": c.id.clone().unwrap_or_default(),
                "index": c.function.index.unwrap_or(i as u32),
                "type": "function",
                "function": { "name": c.function.name, "arguments": c.function.arguments.to_string() },
            })
        })
        .collect()
}

/// What the stream rewrite has sent so far.
#[derive(Default, Clone, Copy)]
struct Sent {
    first_chunk: bool,
    tool_call: bool,
}

/// The native stream as server-sent events (`ChatWriter` with `stream: true`).
fn events(parts: Vec<Part>, w: &Writer) -> Response {
    if let Some(refusal) = first_error(&parts) {
        return refusal;
    }
    let mut sent = Sent::default();
    let mut out = Vec::with_capacity(parts.len() + 2);
    for part in parts {
        out.push(match part {
            Part::Line(line) => Part::Line(event_line(&line, w, &mut sent)),
            Part::Final(f) => Part::Final(final_events(f, w, sent)),
            other => other,
        });
    }
    Response::Events { parts: out }
}

/// One native line as its chunk events. A mid-stream `{"error"}` line decodes, as in Ollama, to
/// an empty chunk and the stream then ends without `[DONE]`; a line that is no JSON at all (a
/// proxy's page) is passed on as it is.
fn event_line(line: &[u8], w: &Writer, sent: &mut Sent) -> Vec<u8> {
    match serde_json::from_slice::<ChatResponse>(line) {
        Ok(r) => {
            let mut out = chunks(&r, w, sent);
            if r.done {
                out.extend(finish(&r, w, *sent));
            }
            sse(&out)
        }
        Err(_) => line.to_vec(),
    }
}

/// The final native line, built when due, as its events: the content chunk when it carries any
/// (or opens the stream), the finish chunk, the usage chunk when asked for, `[DONE]`.
fn final_events(f: FinalLine, w: &Writer, sent: Sent) -> FinalLine {
    let (id, include_usage, created) = (w.id.clone(), w.include_usage, w.created);
    Box::new(move |total| {
        let line = f(total);
        let w = Writer {
            id,
            stream: true,
            include_usage,
            created,
        };
        let mut sent = sent;
        event_line(&line, &w, &mut sent)
    })
}

/// The content chunks of one native line (`ToStreamChunks`): thinking and content split in two
/// when both are there; none for the empty metrics trailer once the stream has opened.
fn chunks(r: &ChatResponse, w: &Writer, sent: &mut Sent) -> Vec<Value> {
    let m = r.message.clone().unwrap_or_default();
    let thinking = m.thinking.clone().unwrap_or_default();
    let calls = tool_calls(&m.tool_calls);
    let empty = m.content.is_empty() && thinking.is_empty() && calls.is_empty();
    if r.done && sent.first_chunk && empty {
        return Vec::new();
    }
    let role = (!sent.first_chunk).then_some("assistant");
    let delta = |content: Option<&str>, reasoning: &str, calls: &[Value], role: Option<&str>| {
        let mut d = serde_json::Map::new();
        if let Some(r) = role {
            d.insert("role".into(), json!(r));
        }
        if let Some(c) = content {
            d.insert("content".into(), json!(c));
        }
        if !reasoning.is_empty() {
            d.insert("reasoning".into(), json!(reasoning));
        }
        if !calls.is_empty() {
            d.insert("tool_calls".into(), Value::Array(calls.to_vec()));
        }
        Value::Object(d)
    };
    let deltas = if !thinking.is_empty() && (!m.content.is_empty() || !calls.is_empty()) {
        vec![
            delta(None, &thinking, &[], role),
            delta(Some(&m.content), "", &calls, None),
        ]
    } else {
        vec![delta(Some(&m.content), &thinking, &calls, role)]
    };
    sent.first_chunk = true;
    sent.tool_call |= !calls.is_empty();
    deltas
        .into_iter()
        .map(|d| {
            chunk(
                w,
                &r.model,
                json!([{ "index": 0, "delta": d, "finish_reason": null }]),
            )
        })
        .collect()
}

/// The finish chunk, the usage chunk when asked for (`FinishChunk`, `ToUsage`).
fn finish(r: &ChatResponse, w: &Writer, sent: Sent) -> Vec<Value> {
    let reason = match r.timings.done_reason.as_deref() {
        None | Some("") | Some("stop") if sent.tool_call => "tool_calls",
        None | Some("") => "stop",
        Some(other) => other,
    };
    let mut out = vec![chunk(
        w,
        &r.model,
        json!([{ "index": 0, "delta": {}, "finish_reason": reason }]),
    )];
    if w.include_usage {
        let mut last = chunk(w, &r.model, json!([]));
        last["usage"] = usage(r);
        out.push(last);
    }
    out.push(Value::Null);
    out
}

fn chunk(w: &Writer, model: &str, choices: Value) -> Value {
    let mut c = w.envelope("chat.completion.chunk", model);
    c.insert("choices".into(), choices);
    Value::Object(c)
}

/// Events as `data: ...` lines, a blank line after each (the HTTP layer adds the last newline);
/// `null` stands for `data: [DONE]`.
fn sse(events: &[Value]) -> Vec<u8> {
    let texts: Vec<String> = events
        .iter()
        .map(|e| match e {
            Value::Null => "data: [DONE]\n".to_string(),
            e => format!("data: {e}\n"),
        })
        .collect();
    texts.join("\n").into_bytes()
}
