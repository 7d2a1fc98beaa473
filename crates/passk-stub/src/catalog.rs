//! The stub's model endpoints (`/api/tags`, `/api/ps`, `/api/show`, `/api/pull`) and its loaded
//! models: cold or warm loads, keep_alive expiry, unloads. Names are normalised as Ollama does
//! (`passk::wire::name`): a model asked for as `llama3.2` is listed and reported as
//! `llama3.2:latest`.

use super::http::{Part, Response};
use super::judge::Judged;
use super::messy::MessyShape;
use super::runner_options::RunnerOptions;
use super::{INVALID_MODEL_NAME, State, error, not_found, to_json};
use passk::timefmt::rfc3339;
use passk::wire::api::{
    LocalModel, ModelDetails, PsResponse, PullProgress, PullRequest, RunningModel, ShowRequest,
    ShowResponse, TagsResponse, Tensor,
};
use passk::wire::duration::KeepAlive;
use passk::wire::name::ModelName;
use serde_json::json;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime};

/// Context length the stub's models declare in `/api/show`.
pub const STUB_CONTEXT_LENGTH: u64 = 32768;

/// Bytes every stub model takes, on disk and in (simulated) VRAM.
const MODEL_SIZE: u64 = 2_000_000_000;

/// Model names served by convention (see `StubConfig::spec_for`).
const CONVENTION_NAMES: [&str; 9] = [
    "oracle",
    "text-calls",
    "schema-paste",
    "example-value",
    "invented-tool",
    "never-answer",
    "thinking",
    "no-tools",
    super::docs_reactive::NAME,
];

/// How long a model stays loaded when the request that loads it does not say (Ollama's default,
/// `OLLAMA_KEEP_ALIVE` unset).
const DEFAULT_KEEP_ALIVE: Duration = Duration::from_secs(5 * 60);

/// One loaded model.
#[derive(Debug, Clone)]
pub(crate) struct Loaded {
    /// Its name as Ollama lists it.
    pub name: String,
    /// The options it was loaded with (its context among them).
    pub runner: RunnerOptions,
    /// How long it stays loaded after a call (the runner's `sessionDuration`).
    pub keep: KeepAlive,
    /// When its load ends: until then a call for it waits in the pending queue.
    pub ready_at: Instant,
    /// When it unloads once no call uses it (`None`: never).
    pub expires: Option<Instant>,
    /// Calls using it now: while any does, it stays loaded (Ollama's `refCount`).
    pub in_flight: usize,
}

impl Loaded {
    /// Whether it is still loaded at `now`: a call uses it, or its keep_alive has not run out.
    pub(super) fn live(&self, now: Instant) -> bool {
        self.in_flight > 0 || self.expires.is_none_or(|e| e > now)
    }

    /// Whether a call at `now` asking for `asked` can use it as it is: loaded, its load over,
    /// and with options that serve the call (`needsReload` reloads for others).
    fn ready(&self, now: Instant, asked: &RunnerOptions) -> bool {
        self.live(now) && self.ready_at <= now && self.runner.serves(asked)
    }

    /// A call starts using it: the call's keep_alive, when it sends one, replaces the runner's
    /// (`useLoadedRunner` sets `sessionDuration` only then).
    fn used(&mut self, keep: Option<KeepAlive>) {
        if let Some(k) = keep {
            self.keep = k;
        }
        self.in_flight += 1;
    }

    /// When it unloads if no call uses it from `now` on.
    fn idle_until(&self, now: Instant) -> Option<Instant> {
        match self.keep {
            KeepAlive::Forever => None,
            KeepAlive::For(d) => now.checked_add(d),
        }
    }
}

/// A call's use of a loaded model, from its scheduling to the end of its reply: while any call
/// uses a model it never unloads, and its keep_alive runs from the moment the last one ends
/// (Ollama's `processCompleted` starts the expiry timer when `refCount` falls to 0).
#[derive(Debug)]
pub(crate) struct InUse {
    loaded: Arc<Mutex<BTreeMap<String, Loaded>>>,
    key: String,
}

impl InUse {
    /// A use of the model under `key`, already counted in its `in_flight`.
    fn of(state: &State, key: String) -> InUse {
        InUse {
            loaded: Arc::clone(&state.loaded),
            key,
        }
    }
}

impl Drop for InUse {
    fn drop(&mut self) {
        let mut loaded = self.loaded.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(l) = loaded.get_mut(&self.key) {
            l.in_flight = l.in_flight.saturating_sub(1);
            if l.in_flight == 0 {
                l.expires = l.idle_until(Instant::now());
            }
        }
    }
}

/// `sha256` of the normalised name of the model's weights (after the stub's `build`, when it has
/// one): the same model always has the same digest on stubs of the same build, and two names on
/// one set of weights share it.
pub(crate) fn digest(state: &State, name: &str) -> String {
    let key = state.config.runner_key(name);
    let build = &state.config.build;
    let text = if build.is_empty() {
        key
    } else {
        format!("{build}/{key}")
    };
    format!("{:x}", Sha256::digest(text.as_bytes()))
}

/// Details of a stub model; the parameter size comes from a `:7b`-like tag when there is one.
pub(crate) fn details(model: &str) -> ModelDetails {
    let tag = ModelName::parse(model).tag.to_ascii_uppercase();
    let sized = tag.ends_with('B') && tag.len() > 1 && tag[..tag.len() - 1].parse::<f64>().is_ok();
    ModelDetails {
        parent_model: String::new(),
        format: "gguf".to_string(),
        family: "stub".to_string(),
        families: Some(vec!["stub".to_string()]),
        parameter_size: if sized { tag } else { "1B".to_string() },
        quantization_level: "F16".to_string(),
        context_length: None,
    }
}

/// Every name the stub serves by convention: [`CONVENTION_NAMES`] and `messy-<shape>` for each
/// messy shape.
fn convention_names() -> impl Iterator<Item = String> {
    let messy = MessyShape::ALL.map(|s| format!("messy-{}", s.name()));
    CONVENTION_NAMES.map(String::from).into_iter().chain(messy)
}

/// Every model the stub will serve or has served, listed as Ollama lists names: the configured
/// names, the convention names, and any name served by the default once it was shown, pulled or
/// loaded (as a real Ollama lists a model once it is pulled).
pub(crate) fn tags(state: &State) -> TagsResponse {
    let now = Instant::now();
    let mut names: BTreeMap<String, String> = BTreeMap::new();
    let mut add = |n: &str| {
        let parsed = ModelName::parse(n);
        names
            .entry(parsed.key())
            .or_insert_with(|| parsed.shortest());
    };
    state.config.models.keys().for_each(|n| add(n));
    convention_names().for_each(|n| add(&n));
    let pulled = state.pulled.lock().unwrap_or_else(PoisonError::into_inner);
    pulled.iter().for_each(|n| add(n));
    let loaded = state.loaded.lock().unwrap_or_else(PoisonError::into_inner);
    loaded
        .values()
        .filter(|l| l.live(now))
        .for_each(|l| add(&l.name));
    let modified_at = rfc3339(state.started, true);
    let models = names
        .into_values()
        .map(|name| LocalModel {
            model: name.clone(),
            modified_at: modified_at.clone(),
            size: MODEL_SIZE,
            digest: digest(state, &name),
            // The list says what `/api/show` says (`modelListSummary.ListModelResponse`), with the
            // trained context among the details.
            details: ModelDetails {
                context_length: Some(STUB_CONTEXT_LENGTH),
                ..details(&name)
            },
            capabilities: state
                .config
                .spec_for(&name)
                .map(|s| s.capabilities.clone())
                .unwrap_or_default(),
            name,
        })
        .collect();
    TagsResponse { models }
}

/// Models loaded now, with their expiry and context.
pub(crate) fn ps(state: &State) -> PsResponse {
    let now = Instant::now();
    let loaded = state.loaded.lock().unwrap_or_else(PoisonError::into_inner);
    let expires = |l: &Loaded| {
        let at = match l.expires {
            Some(e) => SystemTime::now() + e.saturating_duration_since(now),
            // A negative keep_alive is `math.MaxInt64` nanoseconds (`api.Duration`), and
            // `expiresAt` is now plus that: about 292 years on.
            None => SystemTime::now() + Duration::from_nanos(i64::MAX as u64),
        };
        rfc3339(at, true)
    };
    // Sorted by expiry, soonest last as Ollama lists them (`PsHandler`: `slices.SortStableFunc`
    // on `ExpiresAt`, later first); a model kept forever expires last of all.
    let mut live: Vec<&Loaded> = loaded.values().filter(|l| l.live(now)).collect();
    live.sort_by_key(|l| std::cmp::Reverse(l.expires.map_or(Duration::MAX, |e| e - now)));
    PsResponse {
        models: live
            .into_iter()
            .map(|l| RunningModel {
                name: l.name.clone(),
                model: l.name.clone(),
                size: MODEL_SIZE,
                digest: digest(state, &l.name),
                details: details(&l.name),
                expires_at: Some(expires(l)),
                size_vram: MODEL_SIZE,
                context_length: Some(l.runner.num_ctx),
            })
            .collect(),
    }
}

/// `/api/show`: capabilities from the model's spec.
pub(crate) fn show(state: &State, body: &[u8]) -> Response {
    let req: ShowRequest = match super::judge::request_body(body) {
        Ok(r) => r,
        Err(r) => return error(r.status, r.message),
    };
    // `ShowHandler`: no name, or a blank one, is `model is required`; one `ParseName` cannot read
    // is refused before any lookup.
    let model = req.model_name();
    if model.trim().is_empty() {
        return error(400, "model is required");
    }
    if !passk::wire::name::is_valid(model) {
        return error(400, INVALID_MODEL_NAME);
    }
    let Some(spec) = state.config.spec_for(model) else {
        // `ShowHandler` names the model as `DisplayShortest` reads it (`qwen9` is `qwen9:latest`).
        return not_found(&ModelName::parse(model).shortest());
    };
    // A model Ollama shows is a model it lists: a name served by the default joins /api/tags.
    state
        .pulled
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(ModelName::parse(model).shortest());
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
    // `getModelData`: an array of more than five values is shown as null unless `verbose`
    // (measured on Ollama 0.33).
    let tokens = if req.verbose {
        json!(STUB_VOCABULARY)
    } else {
        serde_json::Value::Null
    };
    model_info.insert("tokenizer.ggml.tokens".to_string(), tokens);
    // `GetModelInfo`: every parameter as `%-*s %#v` with a 30-wide key, and the Modelfile behind
    // its header.
    let parameters = format!("{:<30} {}", "temperature", 0);
    let template = "{{ .Prompt }}";
    let shortest = ModelName::parse(model).shortest();
    let modelfile = format!(
        "# Modelfile generated by \"ollama show\"\n\
         # To build a new Modelfile based on this, replace FROM with:\n\
         # FROM {shortest}\n\n\
         FROM /root/.ollama/models/blobs/sha256-{}\n\
         TEMPLATE \"\"\"{template}\"\"\"\n\
         PARAMETER temperature 0\n",
        digest(state, model)
    );
    to_json(&ShowResponse {
        modelfile: Some(modelfile),
        parameters: Some(parameters),
        template: Some(template.to_string()),
        details: details(model),
        model_info,
        capabilities: spec.capabilities.clone(),
        modified_at: Some(rfc3339(state.started, true)),
        tensors: stub_tensors(),
    })
}

/// The stub's vocabulary as `model_info["tokenizer.ggml.tokens"]` shows it (the stub counts a
/// token as four bytes of text, so these are names only).
const STUB_VOCABULARY: [&str; 8] = [
    "<unk>",
    "<s>",
    "</s>",
    "<tool_call>",
    "</tool_call>",
    " a",
    " the",
    ".",
];

/// The tensors `/api/show` lists for a stub model, as `GetModelInfo` lists a GGUF model's
/// (`verbose` or not): the embedding, one block's attention and the output norm, in F16.
fn stub_tensors() -> Vec<Tensor> {
    let tensor = |name: &str, shape: &[u64]| Tensor {
        name: name.to_string(),
        kind: if shape.len() == 1 { "F32" } else { "F16" }.to_string(),
        shape: shape.to_vec(),
    };
    vec![
        tensor("token_embd.weight", &[2048, STUB_VOCABULARY.len() as u64]),
        tensor("blk.0.attn_q.weight", &[2048, 2048]),
        tensor("output_norm.weight", &[2048]),
    ]
}

/// `/api/pull`: progress lines ending in `success` for a model the stub serves.
pub(crate) fn pull(state: &State, body: &[u8]) -> Response {
    let req: PullRequest = match super::judge::request_body(body) {
        Ok(r) => r,
        Err(r) => return error(r.status, r.message),
    };
    let model = req.model_name();
    // `PullHandler` answers every name it cannot read, a missing one included, alike.
    if !passk::wire::name::is_valid(model) {
        return error(400, INVALID_MODEL_NAME);
    }
    let line = |p: &PullProgress| serde_json::to_vec(p).unwrap_or_default();
    let status = |s: &str| PullProgress {
        status: s.to_string(),
        ..PullProgress::default()
    };
    if state.config.spec_for(model).is_none() {
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
        .insert(ModelName::parse(model).shortest());
    if !req.stream {
        return to_json(&status("success"));
    }
    let d = format!("sha256:{}", digest(state, model));
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

/// Uses the model of `req` if it is loaded now, its load over, with the request's context:
/// Ollama's `getRunner` hands such a runner over at once (`s.loaded` holds it and `needsReload`
/// says no), never through the pending queue.
pub(crate) fn use_loaded(state: &State, judged: &Judged) -> Option<InUse> {
    let (req, keep) = (&judged.req, judged.keep_alive);
    let now = Instant::now();
    let asked = RunnerOptions::of(req, judged.shift);
    let key = state.config.runner_key(&req.model);
    let mut loaded = state.loaded.lock().unwrap_or_else(PoisonError::into_inner);
    let l = loaded.get_mut(&key).filter(|l| l.ready(now, &asked))?;
    l.used(keep);
    Some(InUse::of(state, key))
}

/// Uses the model of `req`, loading it for `cold_load` if it is not loaded (first call,
/// keep_alive expired, or another num_ctx); returns whether it loads cold, and the use. A new load
/// keeps the request's keep_alive, or Ollama's default without one.
pub(crate) fn load(state: &State, judged: &Judged, cold_load: Duration) -> (bool, InUse) {
    if let Some(used) = use_loaded(state, judged) {
        return (false, used);
    }
    let (req, keep) = (&judged.req, judged.keep_alive);
    let name = ModelName::parse(&req.model);
    let now = Instant::now();
    let mut model = Loaded {
        name: name.shortest(),
        runner: RunnerOptions::of(req, judged.shift),
        keep: KeepAlive::For(DEFAULT_KEEP_ALIVE),
        ready_at: now + cold_load,
        expires: None,
        in_flight: 0,
    };
    model.used(keep);
    // What `/api/ps` shows before the first call ends (Ollama: now plus the keep_alive).
    model.expires = model.idle_until(now);
    // Keyed by the weights: a second name on them finds this runner, listed under this name.
    let key = state.config.runner_key(&req.model);
    state
        .loaded
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(key.clone(), model);
    (true, InUse::of(state, key))
}

/// Makes room for the model of `judged` when `max_loaded_models` other models are loaded, as
/// Ollama's `processPending` does: an idle runner is unloaded at once, else the one with the
/// shortest keep_alive is told to expire (`sessionDuration = 0`) and the request waits until it
/// has unloaded. A request for that runner meanwhile uses it and, with a keep_alive of its own,
/// sets its keep_alive again, so the wait can last that long (measured on Ollama 0.33: a whole
/// 15 minutes behind a model that kept getting requests).
/// Returns how long the request waited for the room (zero when it did not wait).
pub(crate) async fn make_room(state: &State, judged: &Judged) -> Duration {
    let limit = state.config.max_loaded_models;
    if limit == 0 {
        return Duration::ZERO;
    }
    let key = state.config.runner_key(&judged.req.model);
    let mut waited_since = None;
    loop {
        {
            let mut loaded = state.loaded.lock().unwrap_or_else(PoisonError::into_inner);
            let now = Instant::now();
            loaded.retain(|_, l| l.live(now));
            let others = loaded.keys().filter(|k| **k != key).count();
            if others < limit {
                return waited_since.map_or(Duration::ZERO, |t: Instant| t.elapsed());
            }
            // `findRunnerToUnload`: by keep_alive then name, an idle one first.
            let mut order: Vec<(&String, &Loaded)> =
                loaded.iter().filter(|(k, _)| **k != key).collect();
            let duration = |k: KeepAlive| match k {
                KeepAlive::For(d) => d,
                KeepAlive::Forever => Duration::MAX,
            };
            order.sort_by_key(|(k, l)| (duration(l.keep), (*k).clone()));
            let victim = order
                .iter()
                .find(|(_, l)| l.in_flight == 0)
                .or(order.first())
                .map(|(k, _)| (*k).clone());
            if let Some(victim) = victim
                && let Some(l) = loaded.get_mut(&victim)
            {
                l.keep = KeepAlive::For(Duration::ZERO);
                if l.in_flight == 0 {
                    loaded.remove(&victim);
                    continue;
                }
            }
        }
        waited_since.get_or_insert_with(Instant::now);
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Unloads the model now (`keep_alive: 0` without messages).
pub(crate) fn unload(state: &State, model: &str) {
    state
        .loaded
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .remove(&state.config.runner_key(model));
}
