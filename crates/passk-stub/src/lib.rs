//! An Ollama-compatible stub server: the same endpoints and JSON shapes as Ollama's native API,
//! timing fields filled from its own clock and a simulated model speed, and scripted "models":
//! the oracle (gold trajectories), the flawed model (a seeded mistake plan), model-like
//! misbehaviours and injected faults, each chosen per model name.
//!
//! `passk serve-stub` runs it on a fixed port; tests and `passk calibrate` start it in-process on
//! an ephemeral port with [`StubServer::start`]. The HTTP layer is a small hand-written HTTP/1.1
//! server (see `http.rs`) so that faults can act on the socket itself.

mod catalog;
mod chat;
pub mod docs_reactive;
pub mod faults;
pub mod file;
mod go_base64;
mod guard;
mod http;
mod judge;
pub mod limits;
pub mod messy;
pub mod mistakes;
mod openai;
mod openai_request;
mod output;
mod prompt;
mod runner_options;
pub mod script;
mod slots;
pub mod tool_parser;
mod upstream;

pub use catalog::STUB_CONTEXT_LENGTH;
pub use faults::{FaultKind, FaultRates};
pub use file::StubFile;
pub use messy::MessyShape;
pub use mistakes::{ExpectedTrial, Mistake, MistakePlan};
pub use script::{
    Behaviour, ScriptBook, TextStyle, UNKNOWN_CONVERSATION, WARM_UP_PROMPT, WARM_UP_REPLY,
};
pub use slots::{DEFAULT_MAX_QUEUE, DEFAULT_NUM_PARALLEL, MAX_QUEUE_ERROR};
pub use tool_parser::ToolTag;

use http::{Request, Response};
use passk::wire::name::ModelName;
use serde::Deserialize;
use serde_json::json;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime};
use thiserror::Error;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// The version `/api/version` reports: the Ollama release whose behaviour the stub follows.
pub const STUB_VERSION: &str = "0.33.0-passk-stub";

/// The version reported when prompt counts follow Ollama 0.30.0 (only new tokens).
pub const STUB_VERSION_0_30_0: &str = "0.30.0-passk-stub";

/// What `prompt_eval_count` counts once a prefix of the prompt is cached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PromptCount {
    /// Every prompt token, cached or not (Ollama before 0.30.0 and since 0.30.1).
    #[default]
    All,
    /// Only the tokens processed past the cached prefix (Ollama 0.30.0).
    NewOnly,
}

/// Capabilities of a stub model unless its spec says otherwise.
pub const DEFAULT_CAPABILITIES: [&str; 2] = ["completion", "tools"];

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
    /// What `/api/show` lists and the chat endpoint enforces (`completion`, `tools`, `thinking`).
    pub capabilities: Vec<String>,
    /// An OpenAI-compatible server (`http://host:port`) whose model writes the replies instead of
    /// the behaviour (see `upstream.rs`).
    pub upstream: Option<String>,
    /// Its template's tool-call tag, which decides how Ollama's parser reads its output
    /// ([`ToolTag`]; default: [`default_tool_tag`]).
    pub tool_tag: ToolTag,
    /// Another model name whose weights (blob) this name shares, as `ollama cp` or a Modelfile
    /// `FROM` of the same GGUF make: one digest, and one runner, which Ollama keys by blob and
    /// `/api/ps` lists under the name that loaded it.
    pub weights_of: Option<String>,
}

impl ModelSpec {
    /// A model with this behaviour, its default capabilities and no faults.
    pub fn new(behaviour: Behaviour) -> ModelSpec {
        ModelSpec {
            capabilities: default_capabilities(&behaviour),
            tool_tag: default_tool_tag(&behaviour),
            behaviour,
            faults: FaultRates::default(),
            fault_script: Vec::new(),
            upstream: None,
            weights_of: None,
        }
    }

    /// A model whose replies come from the OpenAI-compatible server at `base_url`, with Ollama's
    /// validation, scheduling, shapes and timing fields, and no faults.
    pub fn upstream(base_url: &str) -> ModelSpec {
        ModelSpec {
            upstream: Some(base_url.trim_end_matches('/').to_string()),
            ..ModelSpec::new(Behaviour::Oracle)
        }
    }

    /// The same model with these capabilities.
    pub fn with_capabilities(mut self, capabilities: &[&str]) -> ModelSpec {
        self.capabilities = capabilities.iter().map(|c| c.to_string()).collect();
        self
    }

    /// The same model as another name on the weights of `model`.
    pub fn with_weights_of(mut self, model: &str) -> ModelSpec {
        self.weights_of = Some(model.to_string());
        self
    }

    /// The same model with this template tag.
    pub fn with_tool_tag(mut self, tag: ToolTag) -> ModelSpec {
        self.tool_tag = tag;
        self
    }

    /// Whether the model has this capability.
    pub fn has(&self, capability: &str) -> bool {
        self.capabilities.iter().any(|c| c == capability)
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

/// [`DEFAULT_CAPABILITIES`], and `thinking` for a behaviour that sends a `thinking` field (a real
/// Ollama sends one only for a model with that capability).
pub fn default_capabilities(behaviour: &Behaviour) -> Vec<String> {
    let mut caps = DEFAULT_CAPABILITIES.map(String::from).to_vec();
    if matches!(behaviour, Behaviour::Messy(MessyShape::ThinkMention)) {
        caps.push("thinking".to_string());
    }
    caps
}

/// The tool-call tag a behaviour's model gets: Qwen 2.5's `<tool_call>`, the default models', except
/// for the models whose text is what passk's reading of calls in text is tested on (text calls and
/// messy shapes), which are served as a server that reads no calls from text serves them.
pub fn default_tool_tag(behaviour: &Behaviour) -> ToolTag {
    match behaviour {
        Behaviour::TextCalls(_) | Behaviour::Messy(_) => ToolTag::Text,
        _ => ToolTag::ToolCall,
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
    /// Simulated load time of a call to a loaded model.
    pub load: Duration,
    /// Simulated load time of a call to a model not loaded (first call, keep_alive expired).
    pub cold_load: Duration,
    /// How long a `Hang` fault holds the request.
    pub hang: Duration,
    /// What `prompt_eval_count` counts (and the version `/api/version` reports).
    pub prompt_count: PromptCount,
    /// Digest of each suite's tasks the script book was built from (published on `/api/version`;
    /// empty: not published).
    pub suites: BTreeMap<String, String>,
    /// Another build of the same model names (empty: the usual one): every model digest differs,
    /// as after a tag was pushed again and pulled on one server only.
    pub build: String,
    /// Requests each model serves at once (`OLLAMA_NUM_PARALLEL`); more wait for a slot.
    pub num_parallel: usize,
    /// Requests that may wait for a model still loading (`OLLAMA_MAX_QUEUE`); more get a 503.
    pub max_queue: usize,
    /// Models loaded at once (`OLLAMA_MAX_LOADED_MODELS`); loading one more evicts one. 0: no
    /// limit (Ollama's 0 means 3 per GPU, within VRAM; the stub's models fit any number).
    pub max_loaded_models: usize,
}

impl Default for StubConfig {
    /// The convention names only (any other name gets Ollama's 404 `model '<name>' not found`),
    /// an empty script book, about 1 ms of simulated time per call.
    fn default() -> StubConfig {
        StubConfig {
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            seed: 0,
            models: BTreeMap::new(),
            default: None,
            script: Arc::new(ScriptBook::new()),
            prefill_tok_per_s: 5_000_000.0,
            decode_tok_per_s: 100_000.0,
            load: Duration::from_micros(50),
            cold_load: Duration::from_millis(2),
            hang: Duration::from_secs(600),
            prompt_count: PromptCount::All,
            suites: BTreeMap::new(),
            build: String::new(),
            num_parallel: DEFAULT_NUM_PARALLEL,
            max_queue: DEFAULT_MAX_QUEUE,
            max_loaded_models: 0,
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

    /// The key of the runner (and the weights) that serves `model`: its own name's, or that of the
    /// name whose weights it shares.
    pub(crate) fn runner_key(&self, model: &str) -> String {
        let weights = self.spec_for(model).and_then(|s| s.weights_of);
        ModelName::parse(weights.as_deref().unwrap_or(model)).key()
    }

    /// The behaviour serving `model`, if the stub serves it: a listed name (compared as Ollama
    /// compares names, so `m` is `m:latest`), else a convention name, else the default.
    pub fn spec_for(&self, model: &str) -> Option<ModelSpec> {
        let wanted = ModelName::parse(model);
        let listed = self
            .models
            .iter()
            .find(|(name, _)| ModelName::parse(name).key() == wanted.key());
        if let Some((_, s)) = listed {
            return Some(s.clone());
        }
        let by_name = match wanted.model.to_ascii_lowercase().as_str() {
            "oracle" => ModelSpec::new(Behaviour::Oracle),
            "text-calls" => ModelSpec::new(Behaviour::TextCalls(TextStyle::Mixed)),
            "schema-paste" => ModelSpec::new(Behaviour::SchemaPaste),
            "example-value" => ModelSpec::new(Behaviour::ExampleValue),
            "invented-tool" => ModelSpec::new(Behaviour::InventedTool),
            "never-answer" => ModelSpec::new(Behaviour::NeverAnswer),
            "thinking" => ModelSpec::new(Behaviour::Oracle).with_capabilities(&[
                "completion",
                "tools",
                "thinking",
            ]),
            "no-tools" => ModelSpec::new(Behaviour::Oracle).with_capabilities(&["completion"]),
            docs_reactive::NAME => {
                ModelSpec::new(Behaviour::DocsReactive(docs_reactive::DocsRates::DEFAULT))
            }
            name => match name.strip_prefix("messy-").and_then(MessyShape::from_name) {
                Some(shape) => ModelSpec::new(Behaviour::Messy(shape)),
                None => return self.default.clone(),
            },
        };
        Some(by_name)
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

    /// The most chat requests for `model` that held one of its slots at once.
    pub fn peak_slots(&self, model: &str) -> usize {
        self.state.slots.peak(&self.state.config.runner_key(model))
    }

    /// Chat requests waiting in the scheduler's pending queue (one queue for every model).
    pub fn pending(&self) -> usize {
        self.state.slots.pending()
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
    loaded: Arc<Mutex<BTreeMap<String, catalog::Loaded>>>,
    pulled: Mutex<BTreeSet<String>>,
    prompts: Mutex<HashMap<String, Vec<u8>>>,
    slots: slots::Slots,
    started: SystemTime,
}

impl State {
    fn new(config: StubConfig) -> State {
        State {
            slots: slots::Slots::new(config.num_parallel, config.max_queue),
            config,
            counters: Mutex::new(HashMap::new()),
            injected: Mutex::new(BTreeMap::new()),
            loaded: Arc::new(Mutex::new(BTreeMap::new())),
            pulled: Mutex::new(BTreeSet::new()),
            prompts: Mutex::new(HashMap::new()),
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
    if let Some(early) = guard::before_routes(&req, state.config.addr.ip().is_loopback()) {
        return early;
    }
    match (req.method.as_str(), req.path.as_str()) {
        ("GET" | "HEAD", "/") => Response::Full {
            status: 200,
            content_type: "text/plain; charset=utf-8",
            body: b"Ollama is running".to_vec(),
        },
        ("GET" | "HEAD", "/api/version") => to_json(&json!({ "version": version(&state.config) })),
        ("GET", "/api/passk/suites") if !state.config.suites.is_empty() => {
            let upstream: Vec<&String> = (state.config.models.iter())
                .filter_map(|(name, spec)| spec.upstream.as_ref().map(|_| name))
                .collect();
            to_json(&json!({ "passk_suites": state.config.suites, "passk_upstream": upstream }))
        }
        ("GET" | "HEAD", "/api/tags") => to_json(&catalog::tags(state)),
        ("GET", "/api/ps") => to_json(&catalog::ps(state)),
        ("POST", "/api/show") => catalog::show(state, &req.body),
        ("POST", "/api/chat") => chat::chat(state, &req.body, entry).await,
        ("POST", "/api/pull") => catalog::pull(state, &req.body),
        ("GET", "/v1/models") => openai::models(state),
        // gin's `/v1/models/:model`: one path segment (a namespaced name is no route).
        ("GET", path) if path.starts_with("/v1/models/") && !path[11..].contains('/') => {
            openai::retrieve(state, &path["/v1/models/".len()..])
        }
        ("POST", "/v1/chat/completions") => openai::chat_completions(state, &req.body, entry).await,
        (method, path) => unrouted(method, path),
    }
}

/// The methods Ollama's router serves `path` with (`GenerateRoutes`, `server/routes.go`; a `:name`
/// parameter is one path segment), the endpoints the stub does not serve included; none for a
/// path it has no route for.
fn ollama_routes(path: &str) -> &'static [&'static str] {
    let one_segment = |prefix: &str| {
        path.strip_prefix(prefix)
            .is_some_and(|rest| !rest.is_empty() && !rest.contains('/'))
    };
    match path {
        "/" | "/api/version" | "/api/tags" => &["GET", "HEAD"],
        "/api/ps" | "/api/status" | "/api/experimental/model-recommendations" | "/v1/models" => {
            &["GET"]
        }
        "/api/delete" => &["DELETE"],
        "/api/chat"
        | "/api/generate"
        | "/api/show"
        | "/api/pull"
        | "/api/push"
        | "/api/create"
        | "/api/copy"
        | "/api/embed"
        | "/api/embeddings"
        | "/api/me"
        | "/api/signout"
        | "/api/experimental/web_search"
        | "/api/experimental/web_fetch"
        | "/v1/chat/completions"
        | "/v1/completions"
        | "/v1/embeddings"
        | "/v1/responses"
        | "/v1/audio/transcriptions"
        | "/v1/messages" => &["POST"],
        _ if one_segment("/v1/models/") => &["GET"],
        _ if one_segment("/api/blobs/") => &["POST", "HEAD"],
        _ if one_segment("/api/user/keys/") => &["DELETE"],
        _ => &[],
    }
}

/// What gin answers a request the stub does not serve: a path the same method serves with or
/// without a trailing slash is redirected there (`RedirectTrailingSlash`: 301 for GET, 307 for any
/// other method, whose client sends the body again); a path another method serves is 405
/// (`HandleMethodNotAllowed`, which Ollama sets); anything else, an endpoint the stub does not
/// serve included, is 404. Both texts are gin's defaults.
fn unrouted(method: &str, path: &str) -> Response {
    let other = match path.strip_suffix('/') {
        Some(trimmed) if !trimmed.is_empty() => trimmed.to_string(),
        _ => format!("{path}/"),
    };
    if path != "/" && ollama_routes(&other).contains(&method) {
        let status = if method == "GET" { 301 } else { 307 };
        return Response::Empty {
            status,
            headers: vec![("Location", other)],
        };
    }
    match ollama_routes(path) {
        served if !served.is_empty() && !served.contains(&method) => Response::NotAllowed {
            allow: served.join(", "),
        },
        _ => Response::Full {
            status: 404,
            content_type: "text/plain",
            body: b"404 page not found".to_vec(),
        },
    }
}

/// The version the stub follows (`/api/version` holds only Ollama's `version`).
fn version(config: &StubConfig) -> &'static str {
    match config.prompt_count {
        PromptCount::All => STUB_VERSION,
        PromptCount::NewOnly => STUB_VERSION_0_30_0,
    }
}

fn to_json<T: serde::Serialize>(v: &T) -> Response {
    match serde_json::to_value(v) {
        Ok(v) => Response::json(200, &v),
        Err(e) => Response::json(500, &json!({ "error": e.to_string() })),
    }
}

/// Ollama's answer (400) to a model name `ParseName` cannot read (`errtypes.InvalidModelNameErrMsg`).
const INVALID_MODEL_NAME: &str = "invalid model name";

fn error(status: u16, message: impl Into<String>) -> Response {
    Response::json(status, &json!({ "error": message.into() }))
}

fn not_found(model: &str) -> Response {
    error(404, format!("model '{model}' not found"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn call_ids_look_like_ollamas() {
        let id = chat::call_id(1, "m", 2, 0);
        assert_eq!(id.len(), 13);
        assert!(id.starts_with("call_"));
        assert_ne!(id, chat::call_id(1, "m", 2, 1));
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
        assert!(cfg.spec_for("library/oracle:latest").is_some());
        let named = cfg.model("qwen2.5", ModelSpec::new(Behaviour::NeverAnswer));
        assert!(named.spec_for("QWEN2.5:latest").is_some());
        assert_eq!(catalog::details("qwen2.5-coder:7b").parameter_size, "7B");
        assert_eq!(catalog::details("oracle").parameter_size, "1B");
    }
}
