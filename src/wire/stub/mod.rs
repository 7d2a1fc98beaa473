//! An Ollama-compatible stub server: the same endpoints and JSON shapes as Ollama's native API,
//! timing fields filled from its own clock and a simulated model speed, and scripted "models":
//! the oracle (gold trajectories), the flawed model (a seeded mistake plan), model-like
//! misbehaviours and injected faults, each chosen per model name.
//!
//! `passk serve-stub` runs it on a fixed port; tests and `passk calibrate` start it in-process on
//! an ephemeral port with [`StubServer::start`]. The HTTP layer is a small hand-written HTTP/1.1
//! server (see `http.rs`) so that faults can act on the socket itself.

pub mod faults;
pub mod file;
mod http;
pub mod messy;
pub mod mistakes;
pub mod script;

pub use faults::{FaultKind, FaultRates};
pub use file::StubFile;
pub use messy::MessyShape;
pub use mistakes::{ExpectedTrial, Mistake, MistakePlan};
pub use script::{Behaviour, ScriptBook, TextStyle, UNKNOWN_REPLY};

use crate::timefmt::rfc3339;
use crate::wire::api::{
    ChatMessage, ChatRequest, ChatResponse, LocalModel, ModelDetails, PsResponse, PullProgress,
    PullRequest, RunningModel, ShowRequest, ShowResponse, TagsResponse, Timings, ToolCall,
    ToolCallFunction,
};
use http::{Part, Request, Response};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime};
use thiserror::Error;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// The version `/api/version` reports.
pub const STUB_VERSION: &str = "0.0.0-passk-stub";

/// Context length the stub's models declare in `/api/show`.
pub const STUB_CONTEXT_LENGTH: u64 = 32768;

/// Errors starting or configuring the stub.
#[derive(Debug, Error)]
pub enum StubError {
    /// The address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// Address asked for.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// The configuration is not usable.
    #[error("stub configuration: {0}")]
    Config(String),
}

/// How one model name behaves: what it answers and which faults hit it.
#[derive(Debug, Clone)]
pub struct ModelSpec {
    /// What the model answers.
    pub behaviour: Behaviour,
    /// Random faults per chat request (`Behaviour::Faulty` brings its own).
    pub faults: FaultRates,
    /// Faults for the first requests, in order (`fault_script[n]` hits request `n`), before the rates apply.
    pub fault_script: Vec<FaultKind>,
}

impl ModelSpec {
    /// A model with this behaviour and no faults.
    pub fn new(behaviour: Behaviour) -> ModelSpec {
        ModelSpec {
            behaviour,
            faults: FaultRates::default(),
            fault_script: Vec::new(),
        }
    }

    /// The same model with random faults at these rates.
    pub fn with_faults(mut self, faults: FaultRates) -> ModelSpec {
        self.faults = faults;
        self
    }

    /// The same model with these faults on its first requests.
    pub fn with_fault_script(mut self, script: Vec<FaultKind>) -> ModelSpec {
        self.fault_script = script;
        self
    }

    fn rates(&self) -> FaultRates {
        match &self.behaviour {
            Behaviour::Faulty(r) => *r,
            _ => self.faults,
        }
    }
}

impl From<Behaviour> for ModelSpec {
    fn from(b: Behaviour) -> ModelSpec {
        ModelSpec::new(b)
    }
}

/// Settings of one stub server.
#[derive(Debug, Clone)]
pub struct StubConfig {
    /// Address to bind (`127.0.0.1:0` picks a free port).
    pub addr: SocketAddr,
    /// Seed of every random choice (faults, call ids).
    pub seed: u64,
    /// Behaviour per model name.
    pub models: BTreeMap<String, ModelSpec>,
    /// Behaviour of any other model name; `None`: other names get 404 (after the name conventions:
    /// `oracle`, `text-calls`, `schema-paste`, `example-value`, `invented-tool`, `never-answer`).
    pub default: Option<ModelSpec>,
    /// Gold trajectories and router labels.
    pub script: Arc<ScriptBook>,
    /// Simulated prefill speed, tokens per second.
    pub prefill_tok_per_s: f64,
    /// Simulated decode speed, tokens per second.
    pub decode_tok_per_s: f64,
    /// Simulated load time per call.
    pub load: Duration,
    /// How long a `Hang` fault holds the request.
    pub hang: Duration,
}

impl Default for StubConfig {
    /// Oracle for any model, an empty script book, about 1 ms of simulated time per call.
    fn default() -> StubConfig {
        StubConfig {
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            seed: 0,
            models: BTreeMap::new(),
            default: Some(ModelSpec::new(Behaviour::Oracle)),
            script: Arc::new(ScriptBook::new()),
            prefill_tok_per_s: 5_000_000.0,
            decode_tok_per_s: 100_000.0,
            load: Duration::from_micros(50),
            hang: Duration::from_secs(600),
        }
    }
}

impl StubConfig {
    /// The default configuration with this script book.
    pub fn with_script(script: ScriptBook) -> StubConfig {
        StubConfig {
            script: Arc::new(script),
            ..StubConfig::default()
        }
    }

    /// Adds (or replaces) one model's behaviour.
    pub fn model(mut self, name: &str, spec: impl Into<ModelSpec>) -> StubConfig {
        self.models.insert(name.to_string(), spec.into());
        self
    }

    /// The behaviour serving `model`, if the stub serves it.
    pub fn spec_for(&self, model: &str) -> Option<ModelSpec> {
        if let Some(s) = self.models.get(model) {
            return Some(s.clone());
        }
        let base = model.split(':').next().unwrap_or(model);
        let by_name = match base {
            "oracle" => Some(Behaviour::Oracle),
            "text-calls" => Some(Behaviour::TextCalls(TextStyle::Mixed)),
            "schema-paste" => Some(Behaviour::SchemaPaste),
            "example-value" => Some(Behaviour::ExampleValue),
            "invented-tool" => Some(Behaviour::InventedTool),
            "never-answer" => Some(Behaviour::NeverAnswer),
            _ => base
                .strip_prefix("messy-")
                .and_then(MessyShape::from_name)
                .map(Behaviour::Messy),
        };
        by_name.map(ModelSpec::new).or_else(|| self.default.clone())
    }
}

/// Starts stub servers.
pub struct StubServer;

impl StubServer {
    /// Binds `config.addr` and serves on the current tokio runtime until the handle shuts it down
    /// (or is dropped).
    pub async fn start(config: StubConfig) -> Result<StubHandle, StubError> {
        let addr = config.addr;
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|source| StubError::Bind { addr, source })?;
        let local = listener
            .local_addr()
            .map_err(|source| StubError::Bind { addr, source })?;
        let state = Arc::new(State::new(config));
        let (tx, rx) = watch::channel(false);
        let handler_state = Arc::clone(&state);
        let handler: http::Handler = Arc::new(move |req, entry| {
            let st = Arc::clone(&handler_state);
            Box::pin(async move { handle(&st, req, entry).await })
        });
        let mut stop = rx.clone();
        let task = tokio::spawn(async move {
            loop {
                tokio::select! {
                    r = listener.accept() => {
                        if let Ok((stream, _)) = r {
                            tokio::spawn(http::serve_connection(stream, Arc::clone(&handler), rx.clone()));
                        }
                    }
                    _ = stop.changed() => break,
                }
            }
        });
        Ok(StubHandle {
            addr: local,
            state,
            shutdown: tx,
            task: Some(task),
        })
    }
}

/// A running stub server; dropping it stops it.
pub struct StubHandle {
    addr: SocketAddr,
    state: Arc<State>,
    shutdown: watch::Sender<bool>,
    task: Option<JoinHandle<()>>,
}

impl StubHandle {
    /// `http://127.0.0.1:<port>`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Faults actually injected so far, by kind.
    pub fn injected(&self) -> BTreeMap<FaultKind, u64> {
        self.state
            .injected
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Chat requests received so far for `model`.
    pub fn requests(&self, model: &str) -> u64 {
        self.state
            .counters
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(model)
            .copied()
            .unwrap_or(0)
    }

    /// Stops accepting and closes every connection.
    pub async fn shutdown(mut self) {
        let _ = self.shutdown.send(true);
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for StubHandle {
    fn drop(&mut self) {
        let _ = self.shutdown.send(true);
    }
}

/// Shared server state.
struct State {
    config: StubConfig,
    counters: Mutex<HashMap<String, u64>>,
    injected: Mutex<BTreeMap<FaultKind, u64>>,
    loaded: Mutex<BTreeMap<String, u64>>,
    pulled: Mutex<BTreeSet<String>>,
    started: SystemTime,
}

impl State {
    fn new(config: StubConfig) -> State {
        State {
            config,
            counters: Mutex::new(HashMap::new()),
            injected: Mutex::new(BTreeMap::new()),
            loaded: Mutex::new(BTreeMap::new()),
            pulled: Mutex::new(BTreeSet::new()),
            started: SystemTime::now(),
        }
    }

    /// This model's request number (0-based) and the counter moved on.
    fn next_request(&self, model: &str) -> u64 {
        let mut c = self.counters.lock().unwrap_or_else(PoisonError::into_inner);
        let n = c.entry(model.to_string()).or_insert(0);
        let out = *n;
        *n += 1;
        out
    }

    fn count(&self, kind: FaultKind) {
        *self
            .injected
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(kind)
            .or_insert(0) += 1;
    }
}

async fn handle(state: &State, req: Request, entry: Instant) -> Response {
    match (req.method.as_str(), req.path.as_str()) {
        ("GET" | "HEAD", "/") => Response::Full {
            status: 200,
            content_type: "text/plain; charset=utf-8",
            body: b"Ollama is running".to_vec(),
        },
        ("GET" | "HEAD", "/api/version") => {
            Response::json(200, &json!({ "version": STUB_VERSION }))
        }
        ("GET", "/api/tags") => to_json(&tags(state)),
        ("GET", "/api/ps") => to_json(&ps(state)),
        ("POST", "/api/show") => show(state, &req.body),
        ("POST", "/api/chat") => chat(state, &req.body, entry).await,
        ("POST", "/api/pull") => pull(state, &req.body),
        (_, "/api/version" | "/api/tags" | "/api/ps" | "/api/show" | "/api/chat" | "/api/pull") => {
            Response::json(405, &json!({ "error": "method not allowed" }))
        }
        _ => Response::Full {
            status: 404,
            content_type: "text/plain",
            body: b"404 page not found".to_vec(),
        },
    }
}

fn to_json<T: serde::Serialize>(v: &T) -> Response {
    match serde_json::to_value(v) {
        Ok(v) => Response::json(200, &v),
        Err(e) => Response::json(500, &json!({ "error": e.to_string() })),
    }
}

fn error(status: u16, message: impl Into<String>) -> Response {
    Response::json(status, &json!({ "error": message.into() }))
}

fn not_found(model: &str) -> Response {
    error(404, format!("model '{model}' not found"))
}

fn digest(name: &str) -> String {
    format!("{:x}", Sha256::digest(name.as_bytes()))
}

/// Details of a stub model; the parameter size comes from a `:7b`-like tag when there is one.
fn details(model: &str) -> ModelDetails {
    let tag = model.rsplit_once(':').map(|(_, t)| t.to_ascii_uppercase());
    let parameter_size = tag
        .filter(|t| t.ends_with('B') && t.len() > 1 && t[..t.len() - 1].parse::<f64>().is_ok())
        .unwrap_or_else(|| "1B".to_string());
    ModelDetails {
        parent_model: String::new(),
        format: "gguf".to_string(),
        family: "stub".to_string(),
        families: Some(vec!["stub".to_string()]),
        parameter_size,
        quantization_level: "F16".to_string(),
    }
}

const MODEL_SIZE: u64 = 2_000_000_000;

fn tags(state: &State) -> TagsResponse {
    let mut names: BTreeSet<String> = state.config.models.keys().cloned().collect();
    names.extend(
        state
            .pulled
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .cloned(),
    );
    names.extend(
        state
            .loaded
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .keys()
            .cloned(),
    );
    let modified_at = rfc3339(state.started, true);
    TagsResponse {
        models: names
            .into_iter()
            .map(|name| LocalModel {
                model: name.clone(),
                modified_at: modified_at.clone(),
                size: MODEL_SIZE,
                digest: digest(&name),
                details: details(&name),
                name,
            })
            .collect(),
    }
}

fn ps(state: &State) -> PsResponse {
    let expires_at = rfc3339(SystemTime::now() + Duration::from_secs(15 * 60), true);
    let loaded = state.loaded.lock().unwrap_or_else(PoisonError::into_inner);
    PsResponse {
        models: loaded
            .iter()
            .map(|(name, ctx)| RunningModel {
                name: name.clone(),
                model: name.clone(),
                size: MODEL_SIZE,
                digest: digest(name),
                details: details(name),
                expires_at: Some(expires_at.clone()),
                size_vram: MODEL_SIZE,
                context_length: Some(*ctx),
            })
            .collect(),
    }
}

fn show(state: &State, body: &[u8]) -> Response {
    let req: ShowRequest = match serde_json::from_slice(body) {
        Ok(r) => r,
        Err(e) => return error(400, format!("invalid request body: {e}")),
    };
    if req.model.is_empty() {
        return error(400, "model is required");
    }
    if state.config.spec_for(&req.model).is_none() {
        return not_found(&req.model);
    }
    let mut model_info = BTreeMap::new();
    model_info.insert("general.architecture".to_string(), json!("stub"));
    model_info.insert(
        "general.parameter_count".to_string(),
        json!(1_000_000_000u64),
    );
    model_info.insert(
        "stub.context_length".to_string(),
        json!(STUB_CONTEXT_LENGTH),
    );
    to_json(&ShowResponse {
        parameters: Some("temperature 0".to_string()),
        template: Some("{{ .Prompt }}".to_string()),
        details: details(&req.model),
        model_info,
        capabilities: vec!["completion".to_string(), "tools".to_string()],
        modified_at: Some(rfc3339(state.started, true)),
    })
}

fn pull(state: &State, body: &[u8]) -> Response {
    let req: PullRequest = match serde_json::from_slice(body) {
        Ok(r) => r,
        Err(e) => return error(400, format!("invalid request body: {e}")),
    };
    if req.model.is_empty() {
        return error(400, "model is required");
    }
    let line = |p: &PullProgress| serde_json::to_vec(p).unwrap_or_default();
    let status = |s: &str| PullProgress {
        status: s.to_string(),
        ..PullProgress::default()
    };
    if state.config.spec_for(&req.model).is_none() {
        let parts = vec![
            Part::Line(line(&status("pulling manifest"))),
            Part::Line(br#"{"error":"pull model manifest: file does not exist"}"#.to_vec()),
        ];
        return if req.stream {
            Response::Stream { parts }
        } else {
            error(500, "pull model manifest: file does not exist")
        };
    }
    state
        .pulled
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(req.model.clone());
    if !req.stream {
        return to_json(&status("success"));
    }
    let d = format!("sha256:{}", digest(&req.model));
    let total = 1_000_000u64;
    let mut parts = vec![Part::Line(line(&status("pulling manifest")))];
    for completed in [None, Some(0), Some(total / 2), Some(total)] {
        parts.push(Part::Line(line(&PullProgress {
            status: format!("pulling {}", &d[7..19]),
            digest: Some(d.clone()),
            total: Some(total),
            completed,
        })));
    }
    for s in ["verifying sha256 digest", "writing manifest", "success"] {
        parts.push(Part::Line(line(&status(s))));
    }
    Response::Stream { parts }
}

/// A `call_` + 8 lowercase alphanumerics id, deterministic under the stub seed.
fn call_id(seed: u64, model: &str, n: u64, i: usize) -> String {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let mut h = faults::mix(seed ^ faults::hash_str(model) ^ n.wrapping_mul(1 << 20) ^ i as u64);
    let mut s = String::from("call_");
    for _ in 0..8 {
        s.push(ALPHABET[(h % 36) as usize] as char);
        h /= 36;
    }
    s
}

/// Rough token count of a text: one token per four characters, at least one.
fn tokens(chars: usize) -> u64 {
    (chars as u64 / 4).max(1)
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

async fn chat(state: &State, body: &[u8], entry: Instant) -> Response {
    let req: ChatRequest = match serde_json::from_slice(body) {
        Ok(r) => r,
        Err(e) => return error(400, format!("invalid request body: {e}")),
    };
    if req.model.is_empty() {
        return error(400, "model is required");
    }
    let Some(spec) = state.config.spec_for(&req.model) else {
        return not_found(&req.model);
    };
    let cfg = &state.config;
    let n = state.next_request(&req.model);
    let fault = match usize::try_from(n)
        .ok()
        .and_then(|i| spec.fault_script.get(i))
    {
        Some(f) => Some(*f),
        None => spec.rates().pick(faults::draw(cfg.seed, &req.model, n)),
    };
    if let Some(f) = fault {
        state.count(f);
    }
    match fault {
        Some(FaultKind::Reset) => return Response::Reset,
        Some(FaultKind::Hang) => return Response::Hang(cfg.hang),
        Some(FaultKind::Http500) => {
            return error(500, "llama runner process has terminated: exit status 2");
        }
        Some(FaultKind::Http503) => {
            return error(
                503,
                "server busy, please try again.  maximum pending requests exceeded",
            );
        }
        Some(FaultKind::NotFound) => return not_found(&req.model),
        Some(FaultKind::NoTools) => {
            return error(
                400,
                format!(
                    "registry.ollama.ai/library/{} does not support tools",
                    req.model
                ),
            );
        }
        _ => {}
    }
    state
        .loaded
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(
            req.model.clone(),
            req.options.num_ctx.unwrap_or(STUB_CONTEXT_LENGTH),
        );
    if req.messages.is_empty() {
        // Ollama's preload: no generation, done_reason "load".
        let resp = ChatResponse {
            model: req.model.clone(),
            created_at: rfc3339(SystemTime::now(), true),
            message: Some(ChatMessage::assistant("")),
            done: true,
            timings: Timings {
                done_reason: Some("load".to_string()),
                ..Timings::default()
            },
        };
        return to_json(&resp);
    }

    let mut reply = script::respond(&cfg.script, &spec.behaviour, &req);
    let mut done_reason = "stop";
    if fault == Some(FaultKind::Length) {
        let mut text = reply.content.clone();
        for (name, args) in &reply.calls {
            text.push_str(&json!({ "name": name, "arguments": args }).to_string());
        }
        let half = text.chars().count() / 2;
        reply.content = text.chars().take(half).collect();
        reply.calls.clear();
        done_reason = "length";
    }
    let prompt_chars: usize = req
        .messages
        .iter()
        .map(|m| m.content.len() + m.role.len())
        .sum::<usize>()
        + req
            .tools
            .as_ref()
            .map_or(0, |t| Value::Array(t.clone()).to_string().len());
    let calls_chars: usize = reply
        .calls
        .iter()
        .map(|(n, a)| n.len() + a.to_string().len())
        .sum();
    let prompt_eval_count = tokens(prompt_chars);
    let mut eval_count = tokens(reply.content.len() + calls_chars);
    if done_reason == "length" {
        eval_count = req
            .options
            .num_predict
            .and_then(|p| u64::try_from(p).ok())
            .unwrap_or(eval_count);
    }
    let load = cfg.load;
    let prefill = secs(prompt_eval_count, cfg.prefill_tok_per_s);
    let decode = secs(eval_count, cfg.decode_tok_per_s);
    let tool_calls: Vec<ToolCall> = reply
        .calls
        .into_iter()
        .enumerate()
        .map(|(i, (name, arguments))| ToolCall {
            id: Some(call_id(cfg.seed, &req.model, n, i)),
            function: ToolCallFunction {
                index: Some(i as u32),
                name,
                arguments,
            },
        })
        .collect();
    let model = req.model.clone();
    let final_chunk = move |total: Duration, message: Option<ChatMessage>| ChatResponse {
        model: model.clone(),
        created_at: rfc3339(SystemTime::now(), true),
        message,
        done: true,
        timings: Timings {
            total_duration: Some(nanos(total).max(1)),
            load_duration: Some(nanos(load).max(1)),
            prompt_eval_count: Some(prompt_eval_count),
            prompt_eval_duration: Some(nanos(prefill).max(1)),
            eval_count: Some(eval_count),
            eval_duration: Some(nanos(decode).max(1)),
            done_reason: Some(done_reason.to_string()),
        },
    };

    if req.stream {
        let message = ChatMessage {
            content: reply.content,
            thinking: reply.thinking,
            tool_calls,
            ..ChatMessage::default()
        };
        return stream_reply(
            req.model.clone(),
            message,
            load + prefill,
            decode,
            fault,
            final_chunk,
        );
    }
    tokio::time::sleep_until((entry + load + prefill + decode).into()).await;
    let message = ChatMessage {
        role: "assistant".to_string(),
        content: reply.content,
        tool_calls,
        thinking: reply.thinking,
        ..ChatMessage::default()
    };
    let body = serde_json::to_vec(&final_chunk(entry.elapsed(), Some(message))).unwrap_or_default();
    match fault {
        Some(FaultKind::TruncatedBody) => Response::Full {
            status: 200,
            content_type: "application/json; charset=utf-8",
            body: body[..body.len() / 2].to_vec(),
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

/// The streamed form of a reply: the first content (with the thinking and tool calls) after
/// prefill, the rest after decode, then the final chunk with the metrics (or the injected fault).
fn stream_reply(
    model: String,
    reply: ChatMessage,
    first_after: Duration,
    decode: Duration,
    fault: Option<FaultKind>,
    final_chunk: impl FnOnce(Duration, Option<ChatMessage>) -> ChatResponse + Send + 'static,
) -> Response {
    let chunk = |content: String, thinking: Option<String>, tool_calls: Vec<ToolCall>| {
        serde_json::to_vec(&ChatResponse {
            model: model.clone(),
            created_at: rfc3339(SystemTime::now(), true),
            message: Some(ChatMessage {
                role: "assistant".to_string(),
                content,
                tool_calls,
                thinking,
                ..ChatMessage::default()
            }),
            done: false,
            timings: Timings::default(),
        })
        .unwrap_or_default()
    };
    let content = reply.content;
    let split = content
        .char_indices()
        .nth(content.chars().count().div_ceil(2))
        .map_or(content.len(), |(i, _)| i);
    let (head, tail) = content.split_at(split);
    let mut parts = vec![
        Part::Delay(first_after),
        Part::Line(chunk(head.to_string(), reply.thinking, reply.tool_calls)),
    ];
    parts.push(Part::Delay(decode));
    if !tail.is_empty() {
        parts.push(Part::Line(chunk(tail.to_string(), None, Vec::new())));
    }
    match fault {
        Some(FaultKind::StreamError) => {
            parts.push(Part::Line(
                br#"{"error":"an error was encountered while running the model: unexpected EOF"}"#
                    .to_vec(),
            ));
        }
        Some(FaultKind::NonJsonBody) => parts.push(Part::Line(
            b"<html><body>502 Bad Gateway</body></html>".to_vec(),
        )),
        Some(FaultKind::TruncatedBody) => parts.push(Part::Final(Box::new(move |total| {
            let full = serde_json::to_vec(&final_chunk(total, Some(ChatMessage::assistant(""))))
                .unwrap_or_default();
            full[..full.len() / 2].to_vec()
        }))),
        _ => parts.push(Part::Final(Box::new(move |total| {
            serde_json::to_vec(&final_chunk(total, Some(ChatMessage::assistant(""))))
                .unwrap_or_default()
        }))),
    }
    Response::Stream { parts }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn call_ids_look_like_ollamas() {
        let id = call_id(1, "m", 2, 0);
        assert_eq!(id.len(), 13);
        assert!(id.starts_with("call_"));
        assert_ne!(id, call_id(1, "m", 2, 1));
    }

    #[test]
    fn names_pick_behaviours() {
        let cfg = StubConfig {
            default: None,
            ..StubConfig::default()
        };
        assert!(matches!(
            cfg.spec_for("never-answer:1b").map(|s| s.behaviour),
            Some(Behaviour::NeverAnswer)
        ));
        assert!(cfg.spec_for("qwen2.5:3b").is_none());
        assert_eq!(details("qwen2.5-coder:7b").parameter_size, "7B");
        assert_eq!(details("oracle").parameter_size, "1B");
    }
}
