//! The one seam between the runner and a server API: [`ChatApi`]. Each API is a folder under
//! `wire/` (Ollama's is [`super::ollama`]) whose client implements it; the runner holds a
//! `&dyn ChatApi` and never learns which one it talks to.

use super::chat::{ApiKind, CallRequest, CallResult};
use super::error::WireError;
use super::retry::AttemptWatch;
use futures_util::future::BoxFuture;
use std::collections::{BTreeMap, BTreeSet};

/// What a server says about itself.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServerIdentity {
    /// The server's version as it reports it (`0.12.10`).
    pub version: String,
    /// The server software, where the API says (`ollama`, `passk-stub`, `vllm`, ...).
    pub kind: Option<String>,
    /// passk's stub only: what it scripts and what it forwards (its `/api/passk/suites`).
    pub stub: Option<StubCatalog>,
}

/// What passk's stub publishes on `GET /api/passk/suites`: the suites its scripted models answer
/// from, and the models whose replies come from a real engine instead (`serve-stub --upstream`).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Deserialize)]
pub struct StubCatalog {
    /// Digest of each suite's tasks it loaded (suite name to digest).
    pub passk_suites: BTreeMap<String, String>,
    /// Models whose replies, token counts and prompt and decode durations are an OpenAI-compatible
    /// engine's, not a script's (absent from stubs that could not forward).
    #[serde(default)]
    pub passk_upstream: BTreeSet<String>,
}

impl StubCatalog {
    /// Whether any of `models` is scripted here, so that a run playing them is a stub run.
    pub fn scripts_any<'a>(&self, models: impl IntoIterator<Item = &'a String>) -> bool {
        models.into_iter().any(|m| !self.passk_upstream.contains(m))
    }
}

/// What a server says about one model.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServedModel {
    /// The model declares tool calling (`None`: the API does not say).
    pub tools: Option<bool>,
    /// What the model declares it can do (`completion`, `tools`, `thinking`, ...), where the API
    /// lists it.
    pub capabilities: Vec<String>,
    /// The trained context length, where the API gives it.
    pub context_length: Option<u64>,
    /// Digest of the model's weights, where the API gives it.
    pub digest: Option<String>,
    /// Model family (`qwen2`), where the API gives it.
    pub family: Option<String>,
    /// Parameter count as text (`3.1B`), where the API gives it.
    pub parameter_size: Option<String>,
    /// Quantisation (`Q4_K_M`), where the API gives it.
    pub quantization: Option<String>,
}

/// One model a server offers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModelEntry {
    /// Name as the server lists it.
    pub name: String,
    /// Another name the server gives it in the same entry, if any.
    pub alias: Option<String>,
    /// Digest, where the API gives it.
    pub digest: Option<String>,
    /// Size on disk in bytes, where the API gives it.
    pub size: Option<u64>,
}

/// One model a server holds in memory.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoadedModel {
    /// Name as the server lists it.
    pub name: String,
    /// Another name the server gives it in the same entry, if any.
    pub alias: Option<String>,
    /// The digest of its weights, where the server says (Ollama keys runners by it: two names on
    /// one blob share one runner, listed under the first name only).
    pub digest: Option<String>,
    /// Memory in use, bytes.
    pub size: u64,
    /// Part of `size` in GPU memory (less than `size`: partly on CPU).
    pub size_vram: u64,
    /// The context length it was loaded with, where the server says.
    pub context_length: Option<u64>,
}

impl ModelEntry {
    /// Whether this entry is `model`, as `api` reads names.
    pub fn is(&self, api: &dyn ChatApi, model: &str) -> bool {
        names_match(api, &self.name, self.alias.as_deref(), model)
    }
}

impl LoadedModel {
    /// Whether this entry is `model`, as `api` reads names, or holds the same weights
    /// (`digest`, where both are known).
    pub fn is(&self, api: &dyn ChatApi, model: &str, digest: Option<&str>) -> bool {
        names_match(api, &self.name, self.alias.as_deref(), model)
            || digest.is_some_and(|d| {
                self.digest
                    .as_deref()
                    .is_some_and(|own| same_digest(own, d))
            })
    }
}

/// Digests compared without their `sha256:` prefix (`/api/ps` gives the bare hex, `/api/tags`
/// too, records may keep the prefix).
fn same_digest(a: &str, b: &str) -> bool {
    let bare = |d: &str| d.strip_prefix("sha256:").unwrap_or(d).to_ascii_lowercase();
    !a.is_empty() && bare(a) == bare(b)
}

fn names_match(api: &dyn ChatApi, name: &str, alias: Option<&str>, model: &str) -> bool {
    api.same_model(name, model) || alias.is_some_and(|a| api.same_model(a, model))
}

/// A chat server API. A new API implements this in its own folder under `wire/`: it maps
/// [`CallRequest`] to its request, sends each attempt through [`super::retry::with_retries`]
/// with the shared [`super::outcome`] classification, and maps its answer to a [`CallResult`].
pub trait ChatApi: Send + Sync {
    /// Which API this is (recorded on every conversation).
    fn kind(&self) -> ApiKind;

    /// One chat call, streamed when `req.stream`, with retries; `watch` hears of each failed
    /// attempt as it fails, with whether another follows. Never an `Err`: the outcome says.
    fn chat_watched<'a>(
        &'a self,
        req: &'a CallRequest,
        watch: Option<AttemptWatch<'a>>,
    ) -> BoxFuture<'a, CallResult>;

    /// The server's version and kind.
    fn server_info(&self) -> BoxFuture<'_, Result<ServerIdentity, WireError>>;

    /// The models the server offers.
    fn list_models(&self) -> BoxFuture<'_, Result<Vec<ModelEntry>, WireError>>;

    /// What the server says about `model` (an error naming 404 when it has no such model).
    fn model_info<'a>(&'a self, model: &'a str) -> BoxFuture<'a, Result<ServedModel, WireError>>;

    /// The models loaded in memory; `None` when the API has no such list.
    fn loaded_models(&self) -> BoxFuture<'_, Result<Option<Vec<LoadedModel>>, WireError>>;

    /// Whether two model names name the same model, the way this server reads names.
    fn same_model(&self, a: &str, b: &str) -> bool {
        a == b
    }

    /// One chat call without a watcher (streamed when `req.stream`).
    fn chat<'a>(&'a self, req: &'a CallRequest) -> BoxFuture<'a, CallResult> {
        self.chat_watched(req, None)
    }
}

#[cfg(test)]
mod tests {
    use super::StubCatalog;

    #[test]
    fn a_stub_scripts_every_model_it_does_not_forward() {
        let catalog: StubCatalog =
            serde_json::from_str(r#"{"passk_suites": {"store": "d"}, "passk_upstream": ["real"]}"#)
                .unwrap();
        let names = |n: &[&str]| n.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(!catalog.scripts_any(&names(&["real"])));
        assert!(catalog.scripts_any(&names(&["real", "oracle"])));
        let older: StubCatalog = serde_json::from_str(r#"{"passk_suites": {}}"#).unwrap();
        assert!(
            older.scripts_any(&names(&["real"])),
            "a stub that could not forward scripts"
        );
    }
}
