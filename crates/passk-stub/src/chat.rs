//! `/api/chat`: the request judged as Ollama judges it, the model loaded (cold on the first call
//! and after its keep_alive ran out), the scripted reply with its thinking, `format` and
//! `num_predict` applied, the counts and timings, then the answer (streamed or whole) or the fault.

use super::catalog::{load, make_room, unload, use_loaded};
use super::faults::{self, FaultKind};
use super::http::{Part, Response};
use super::judge::{self, Judged};
use super::output::{Generated, generate};
use super::prompt::prompt_count;
use super::script;
use super::slots::{MAX_QUEUE_ERROR, Slot};
use super::upstream;
use super::{INVALID_MODEL_NAME, ModelSpec, State, error, not_found};
use passk::timefmt::rfc3339;
use passk::wire::api::{
    ChatMessage, ChatRequest, ChatResponse, Timings, ToolCall, ToolCallFunction,
};
use passk::wire::duration::KeepAlive;
use passk::wire::name::ModelName;
use serde_json::Value;
use std::time::{Duration, Instant, SystemTime};

/// Ollama's refusal of a prompt too long for a runner that may not shift its context
/// (`llm/llama_server.go`, `completionPromptForRequest`).
const PROMPT_TOO_LONG: &str = "the prompt is longer than the context length currently available \
     to the model; shorten the prompt, adjust the context length in settings, or use a model \
     with a longer context length";

/// Handles one chat request.
pub(crate) async fn chat(state: &State, body: &[u8], entry: Instant) -> Response {
    let (judged, spec) = match admit(state, body) {
        Ok(a) => a,
        Err(refusal) => return refusal,
    };
    let req = &judged.req;
    let (n, fault) = pick_fault(state, &spec, &req.model);
    if let Some(early) = early_fault(fault, &req.model, state.config.hang) {
        return early;
    }
    let key = state.config.runner_key(&req.model);
    let cfg = &state.config;
    // The call's use of its model lasts until its reply ends (dropped with this function, or
    // with the stream that outlives it).
    let mut in_use = use_loaded(state, &judged);
    let load_time = if in_use.is_some() {
        // A loaded model's runner at once, whatever else is queued or loading.
        tokio::time::sleep(cfg.load).await;
        cfg.load
    } else {
        // Waiting in the one pending queue, then loading (a cold model) while the scheduler
        // waits.
        let scheduled = state
            .slots
            .schedule(
                entry,
                cfg.cold_load,
                cfg.load,
                make_room(state, &judged),
                || {
                    let (cold, used) = load(state, &judged, cfg.cold_load);
                    in_use = Some(used);
                    cold
                },
            )
            .await;
        let Ok(load_time) = scheduled else {
            return error(503, MAX_QUEUE_ERROR);
        };
        load_time
    };
    if req.messages.is_empty() {
        // Ollama's preload: no generation, done_reason "load".
        return done_without_reply(&req.model, "load");
    }
    if judged.images && !spec.has("vision") {
        // The runner (llama-server) refuses them once the model is loaded.
        return error(400, judge::NO_MULTIMODAL);
    }
    if let Some(why) = bad_format(req.format.as_ref()) {
        // Ollama finds it once the model is loaded, when the runner is asked to generate, before
        // any chunk is written: `streamResponse` then answers a stream as it answers the rest,
        // 500 with a JSON error.
        return error(500, why);
    }
    if let Some(base) = &spec.upstream {
        return upstream_reply(state, base, &judged, n, fault, load_time, entry).await;
    }
    let num_ctx = super::runner_options::effective_num_ctx(req);
    if judged.shift == Some(false) && super::prompt::needs_context_shift(req, num_ctx) {
        // `completionPromptForRequest`: a runner without context shift refuses a prompt that
        // still does not fit, before any chunk (a stream's first error is its status and body).
        return error(400, PROMPT_TOO_LONG);
    }
    let Ok(reply) = script::respond(&cfg.script, &spec.behaviour, req) else {
        return error(409, script::UNKNOWN_CONVERSATION);
    };
    let thinks = spec.has("thinking") && (judged.think != Some(false) || harmony(&req.model));
    let length = fault == Some(FaultKind::Length);
    let generated = generate(reply, thinks, req, length, spec.tool_tag);
    let (answer, prefill, decode) = answer(state, req, n, generated, load_time);
    // The model time holds one of the model's slots; waiting for it shows in total_duration only.
    let slot = state.slots.acquire(&key).await.holding(in_use);
    if req.stream {
        return stream_reply(answer, prefill, decode, fault, slot);
    }
    tokio::time::sleep(prefill + decode).await;
    drop(slot);
    whole_reply(answer, entry, fault)
}

/// The reply of a model served by an OpenAI-compatible server, its counts and durations the
/// server's own, sent once the server has answered (the slot held meanwhile).
async fn upstream_reply(
    state: &State,
    base: &str,
    judged: &Judged,
    n: u64,
    fault: Option<FaultKind>,
    load_time: Duration,
    entry: Instant,
) -> Response {
    let req = &judged.req;
    let slot = state
        .slots
        .acquire(&state.config.runner_key(&req.model))
        .await;
    let got = match upstream::complete(base, req, state.config.prompt_count).await {
        Ok(got) => got,
        Err(f) => return error(f.status, f.message),
    };
    let answer = Answer {
        model: req.model.clone(),
        tool_calls: tool_calls(state.config.seed, &req.model, n, &got.calls),
        timings: Timings {
            load_duration: Some(nanos(load_time).max(1)),
            ..got.timings
        },
        content: got.content,
        thinking: String::new(),
    };
    if req.stream {
        return stream_reply(answer, Duration::ZERO, Duration::ZERO, fault, slot);
    }
    drop(slot);
    whole_reply(answer, entry, fault)
}

/// The judged request and its model's spec, or what Ollama answers instead: a refusal, a 404, or
/// the unload of `keep_alive: 0` without messages.
fn admit(state: &State, body: &[u8]) -> Result<(Judged, ModelSpec), Response> {
    let judged = judge::chat_request(body).map_err(|r| error(r.status, r.message))?;
    let req = &judged.req;
    // `ChatHandler` (`parseAndValidateModelRef`): a blank name is no model, and one `ParseName`
    // cannot read is refused before any lookup.
    if req.model.trim().is_empty() {
        return Err(error(400, "model is required"));
    }
    if !passk::wire::name::is_valid(&req.model) {
        return Err(error(400, INVALID_MODEL_NAME));
    }
    let spec = state
        .config
        .spec_for(&req.model)
        .ok_or_else(|| not_found(&req.model))?;
    if req.messages.is_empty() && judged.keep_alive == Some(KeepAlive::For(Duration::ZERO)) {
        unload(state, &req.model);
        return Err(done_without_reply(&req.model, "unload"));
    }
    if let Some(refusal) = capability_refusal(&spec, req, judged.think) {
        return Err(refusal);
    }
    if let Some(r) = &judged.options_refusal {
        return Err(error(r.status, r.message.clone()));
    }
    Ok((judged, spec))
}

/// Whether the model speaks OpenAI's harmony format (gpt-oss), whose thinking cannot be turned
/// off: Ollama's harmony parser (`harmony/harmonyparser.go`) always reads its analysis channel, and
/// `think: false` is ignored (Ollama's thinking docs).
fn harmony(model: &str) -> bool {
    let name = ModelName::parse(model);
    name.model.to_ascii_lowercase().starts_with("gpt-oss")
}

/// Ollama's error for a `format` that is neither `"json"` nor a schema object (`""` and `null`
/// mean no format).
fn bad_format(format: Option<&Value>) -> Option<String> {
    match format? {
        Value::String(s) if s.is_empty() || s == "json" => None,
        Value::Object(_) => None,
        other => Some(format!(
            "invalid format: {:?}; expected \"json\" or a valid JSON Schema object",
            other.to_string()
        )),
    }
}

/// This model's request number and its fault: the script's for the first requests, then a draw
/// against the rates (counted when injected).
fn pick_fault(state: &State, spec: &ModelSpec, model: &str) -> (u64, Option<FaultKind>) {
    let n = state.next_request(model);
    let scripted = usize::try_from(n)
        .ok()
        .and_then(|i| spec.fault_script.get(i));
    let fault = match scripted {
        Some(f) => Some(*f),
        None => spec.rates().pick(faults::draw(state.config.seed, model, n)),
    };
    if let Some(f) = fault {
        state.count(f);
    }
    (n, fault)
}

/// The answer with its counts and durations, and the prefill and decode times to wait.
fn answer(
    state: &State,
    req: &ChatRequest,
    n: u64,
    generated: Generated,
    load_time: Duration,
) -> (Answer, Duration, Duration) {
    let cfg = &state.config;
    let prompt_eval_count = prompt_count(state, req, &generated);
    let prefill = secs(prompt_eval_count, cfg.prefill_tok_per_s);
    let decode = secs(generated.eval_count, cfg.decode_tok_per_s);
    let answer = Answer {
        model: req.model.clone(),
        tool_calls: tool_calls(cfg.seed, &req.model, n, &generated.calls),
        timings: Timings {
            total_duration: None,
            load_duration: Some(nanos(load_time).max(1)),
            prompt_eval_count: Some(prompt_eval_count),
            prompt_eval_duration: Some(nanos(prefill).max(1)),
            prompt_eval_cached_count: None,
            eval_count: Some(generated.eval_count),
            eval_duration: Some(nanos(decode).max(1)),
            done_reason: Some(generated.done_reason.to_string()),
        },
        content: generated.content,
        thinking: generated.thinking,
    };
    (answer, prefill, decode)
}

/// Ollama's refusals for what the model cannot do: thinking asked of a model without it, tools
/// offered to a model without them (texts of `ChatHandler` and `CheckCapabilities`).
fn capability_refusal(
    spec: &ModelSpec,
    req: &ChatRequest,
    think: Option<bool>,
) -> Option<Response> {
    if think == Some(true) && !spec.has("thinking") {
        return Some(error(
            400,
            format!("{:?} does not support thinking", req.model),
        ));
    }
    let offers_tools = req.tools.as_ref().is_some_and(|t| !t.is_empty());
    if offers_tools && !spec.has("tools") {
        return Some(no_tools(&req.model));
    }
    None
}

/// Ollama's 400 for tools offered to a model without the capability.
pub(crate) fn no_tools(model: &str) -> Response {
    error(
        400,
        format!("{} does not support tools", ModelName::parse(model).full()),
    )
}

/// The faults answered before any generation.
fn early_fault(fault: Option<FaultKind>, model: &str, hang: Duration) -> Option<Response> {
    Some(match fault? {
        FaultKind::Reset => Response::Reset,
        FaultKind::Hang => Response::Hang(hang),
        FaultKind::Http500 => error(500, "llama runner process has terminated: exit status 2"),
        FaultKind::Http503 => error(503, MAX_QUEUE_ERROR),
        FaultKind::NotFound => not_found(model),
        FaultKind::NoTools => no_tools(model),
        _ => return None,
    })
}

/// A done chunk without a message body of its own (`load`, `unload`).
fn done_without_reply(model: &str, reason: &str) -> Response {
    super::to_json(&ChatResponse {
        model: model.to_string(),
        created_at: rfc3339(SystemTime::now(), true),
        message: Some(ChatMessage::assistant("")),
        done: true,
        timings: Timings {
            done_reason: Some(reason.to_string()),
            ..Timings::default()
        },
    })
}

fn tool_calls(seed: u64, model: &str, n: u64, calls: &[(String, Value)]) -> Vec<ToolCall> {
    calls
        .iter()
        .enumerate()
        .map(|(i, (name, arguments))| ToolCall {
            id: Some(call_id(seed, model, n, i)),
            function: ToolCallFunction {
                index: Some(i as u32),
                name: name.clone(),
                arguments: arguments.clone(),
            },
        })
        .collect()
}

/// A `call_` + 8 lowercase alphanumerics id, deterministic under the stub seed.
pub(crate) fn call_id(seed: u64, model: &str, n: u64, i: usize) -> String {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let mut h = faults::mix(seed ^ faults::hash_str(model) ^ n.wrapping_mul(1 << 20) ^ i as u64);
    let mut s = String::from("call_");
    for _ in 0..8 {
        s.push(ALPHABET[(h % 36) as usize] as char);
        h /= 36;
    }
    s
}

/// Rough token count of a text: one token per four bytes, at least one.
pub(crate) fn tokens(bytes: usize) -> u64 {
    (bytes as u64 / 4).max(1)
}

fn secs(tokens: u64, per_s: f64) -> Duration {
    if per_s > 0.0 && per_s.is_finite() {
        Duration::from_secs_f64(tokens as f64 / per_s)
    } else {
        Duration::ZERO
    }
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// Everything of the answer but the total duration, known only when it is sent.
struct Answer {
    model: String,
    content: String,
    thinking: String,
    tool_calls: Vec<ToolCall>,
    timings: Timings,
}

impl Answer {
    fn chunk(&self, message: ChatMessage, done: bool, timings: Timings) -> Vec<u8> {
        serde_json::to_vec(&ChatResponse {
            model: self.model.clone(),
            created_at: rfc3339(SystemTime::now(), true),
            message: Some(message),
            done,
            timings,
        })
        .unwrap_or_default()
    }

    fn final_timings(&self, total: Duration) -> Timings {
        Timings {
            total_duration: Some(nanos(total).max(1)),
            ..self.timings.clone()
        }
    }
}

fn assistant(content: String, thinking: String, tool_calls: Vec<ToolCall>) -> ChatMessage {
    ChatMessage {
        role: "assistant".to_string(),
        content,
        tool_calls,
        thinking: (!thinking.is_empty()).then_some(thinking),
        ..ChatMessage::default()
    }
}

/// The non-streamed answer, or its fault: a body cut mid-JSON on a connection then closed (the
/// client sees fewer bytes than `Content-Length`), an HTML page, or Ollama's 500.
fn whole_reply(a: Answer, entry: Instant, fault: Option<FaultKind>) -> Response {
    let timings = a.final_timings(entry.elapsed());
    let message = assistant(a.content.clone(), a.thinking.clone(), a.tool_calls.clone());
    let body = a.chunk(message, true, timings);
    match fault {
        Some(FaultKind::TruncatedBody) => Response::Cut {
            content_type: "application/json; charset=utf-8",
            sent: body.len() / 2,
            body,
        },
        Some(FaultKind::NonJsonBody) => Response::Full {
            status: 200,
            content_type: "text/html",
            body: b"<html><body><h1>502 Bad Gateway</h1></body></html>".to_vec(),
        },
        Some(FaultKind::StreamError) => error(
            500,
            "an error was encountered while running the model: unexpected EOF",
        ),
        _ => Response::Full {
            status: 200,
            content_type: "application/json; charset=utf-8",
            body,
        },
    }
}

/// The streamed answer: thinking, then the first half of the content with the tool calls after
/// prefill, the rest after decode, then the final chunk with the metrics, or the fault (the
/// connection closed after the first chunks, an HTML line, an `{"error"}` line); the model's slot
/// is released once the stream has ended.
fn stream_reply(
    a: Answer,
    first_after: Duration,
    decode: Duration,
    fault: Option<FaultKind>,
    slot: Slot,
) -> Response {
    let split = a
        .content
        .char_indices()
        .nth(a.content.chars().count().div_ceil(2))
        .map_or(a.content.len(), |(i, _)| i);
    let (head, tail) = a.content.split_at(split);
    let mut parts = vec![Part::Delay(first_after)];
    if !a.thinking.is_empty() {
        let m = assistant(String::new(), a.thinking.clone(), Vec::new());
        parts.push(Part::Line(a.chunk(m, false, Timings::default())));
    }
    // A chunk carries content or tool calls, never both (`ChatHandler`: the tool parser hands back
    // text or the calls it has read), and the calls come once their text is decoded.
    let text = |t: &str| {
        a.chunk(
            assistant(t.to_string(), String::new(), Vec::new()),
            false,
            Timings::default(),
        )
    };
    if !head.is_empty() || a.tool_calls.is_empty() {
        parts.push(Part::Line(text(head)));
    }
    parts.push(Part::Delay(decode));
    if !tail.is_empty() {
        parts.push(Part::Line(text(tail)));
    }
    if !a.tool_calls.is_empty() {
        let m = assistant(String::new(), String::new(), a.tool_calls.clone());
        parts.push(Part::Line(a.chunk(m, false, Timings::default())));
    }
    match fault {
        Some(FaultKind::StreamError) => parts.push(Part::Line(
            br#"{"error":"an error was encountered while running the model: unexpected EOF"}"#
                .to_vec(),
        )),
        Some(FaultKind::NonJsonBody) => parts.push(Part::Line(
            b"<html><body>502 Bad Gateway</body></html>".to_vec(),
        )),
        Some(FaultKind::TruncatedBody) => parts.push(Part::Close),
        _ => parts.push(Part::Final(Box::new(move |total| {
            let timings = a.final_timings(total);
            a.chunk(ChatMessage::assistant(""), true, timings)
        }))),
    }
    parts.push(Part::Release(slot));
    Response::Stream { parts }
}
