//! What an OpenAI-compatible server says about itself and its models. Which software it is
//! (`passk-stub`, `ollama`, `llama.cpp`, `vllm`, `lmstudio`, else `openai-compatible`) is read
//! from the routes each one answers; the context length from where each one tells it (llama.cpp's
//! `/props`, vLLM's `max_model_len`); whether llama.cpp's chat template shows the tools from
//! `/props` `chat_template_caps`. These APIs give no digest of the weights: what stands for it is
//! the SHA-256 of the server's own `/v1/models` entry of the model (without its `created` time),
//! which names the file's size, parameters and quantisation where the server lists them (llama.cpp
//! does); Ollama and the stub give their `/api/tags` digest.

use super::api::{ModelList, Props};
use super::client::Client;
use crate::wire::chat_api::{ModelEntry, ServedModel, ServerIdentity, StubCatalog};
use crate::wire::error::WireError;
use crate::wire::ollama::api::ShowResponse;
use crate::wire::ollama::name::same_model;
use serde_json::Value;
use sha2::{Digest, Sha256};

/// Server kinds as records name them.
pub mod kind {
    /// passk's own stub under `/v1`.
    pub const STUB: &str = "passk-stub";
    /// Ollama's OpenAI layer.
    pub const OLLAMA: &str = "ollama";
    /// llama.cpp's `llama-server`.
    pub const LLAMA_CPP: &str = "llama.cpp";
    /// vLLM.
    pub const VLLM: &str = "vllm";
    /// LM Studio.
    pub const LMSTUDIO: &str = "lmstudio";
    /// Any other server that answers `/v1/models`.
    pub const OTHER: &str = "openai-compatible";
}

#[derive(serde::Deserialize)]
struct Version {
    version: String,
}

#[derive(serde::Deserialize)]
struct Tags {
    #[serde(default)]
    models: Vec<Tag>,
}

#[derive(serde::Deserialize)]
struct Tag {
    #[serde(default)]
    name: String,
    #[serde(default)]
    model: String,
    #[serde(default)]
    digest: String,
}

impl Client {
    /// The models `/v1/models` lists (an error when the server does not answer it).
    pub async fn models(&self) -> Result<Vec<Value>, WireError> {
        Ok(self
            .get_json::<ModelList>("/v1/models")
            .await?
            .data
            .unwrap_or_default())
    }

    /// Which server this is, its version, and the suites passk's stub loaded.
    pub async fn identify(&self) -> Result<ServerIdentity, WireError> {
        self.models().await?;
        if let Some(s) = self.probe::<StubCatalog>("/api/passk/suites").await {
            let version = self.probe::<Version>("/api/version").await;
            return Ok(info(kind::STUB, version.map(|v| v.version), Some(s)));
        }
        if let Some(v) = self.probe::<Version>("/api/version").await {
            return Ok(info(kind::OLLAMA, Some(v.version), None));
        }
        if let Some(p) = self.props().await {
            return Ok(info(kind::LLAMA_CPP, p.build_info, None));
        }
        if let Some(v) = self.probe::<Version>("/version").await {
            return Ok(info(kind::VLLM, Some(v.version), None));
        }
        if self.probe::<Value>("/api/v0/models").await.is_some() {
            return Ok(info(kind::LMSTUDIO, None, None));
        }
        Ok(info(kind::OTHER, None, None))
    }

    /// llama.cpp's `/props`, when the server answers it.
    pub async fn props(&self) -> Option<Props> {
        self.probe::<Props>("/props")
            .await
            .filter(|p| p.build_info.is_some() || p.default_generation_settings.n_ctx.is_some())
    }

    /// Ollama's `/api/show` of `model` (Ollama and the stub only).
    async fn shown(&self, model: &str) -> Option<ShowResponse> {
        let body = serde_json::json!({ "model": model });
        self.probe_post::<ShowResponse>("/api/show", &body).await
    }

    /// The `/api/tags` digest of `model` (Ollama and the stub only).
    async fn tags_digest(&self, model: &str) -> Option<String> {
        let tags = self.probe::<Tags>("/api/tags").await?;
        tags.models
            .into_iter()
            .find(|t| same_model(&t.name, model) || same_model(&t.model, model))
            .map(|t| t.digest)
            .filter(|d| !d.is_empty())
    }

    /// The listed models as entries, each with what stands for its digest.
    pub async fn model_entries(&self) -> Result<Vec<ModelEntry>, WireError> {
        Ok(self.models().await?.iter().map(entry).collect())
    }

    /// What the server says about `model`: a 404 error when `/v1/models` does not list it.
    pub async fn model_details(&self, model: &str) -> Result<ServedModel, WireError> {
        let models = self.models().await?;
        let Some(found) = models
            .iter()
            .find(|m| names(m).iter().any(|n| same_model(n, model)))
        else {
            let listed: Vec<String> = models
                .iter()
                .filter_map(|m| names(m).first().cloned())
                .collect();
            return Err(WireError::Protocol {
                url: self.url("/v1/models"),
                status: Some(404),
                message: format!(
                    "the server lists no model '{model}' (it lists: {})",
                    if listed.is_empty() {
                        "none".to_string()
                    } else {
                        listed.join(", ")
                    }
                ),
            });
        };
        let server = self.identify().await?;
        let mut info = ServedModel {
            digest: Some(identity(found)),
            context_length: found.get("max_model_len").and_then(Value::as_u64),
            parameter_size: meta(found, "n_params")
                .and_then(Value::as_u64)
                .map(parameter_size),
            quantization: meta(found, "ftype")
                .and_then(Value::as_str)
                .map(str::to_string),
            ..ServedModel::default()
        };
        match server.kind.as_deref() {
            Some(kind::LLAMA_CPP) => {
                if let Some(p) = self.props().await {
                    let tools = p
                        .chat_template_caps
                        .as_ref()
                        .map(|c| c.get("supports_tools").copied().unwrap_or(false));
                    info.tools = tools;
                    info.capabilities = capabilities(tools);
                    info.context_length = p
                        .default_generation_settings
                        .n_ctx
                        .or(meta(found, "n_ctx").and_then(Value::as_u64));
                }
            }
            Some(kind::OLLAMA | kind::STUB) => {
                if let Some(d) = self.tags_digest(model).await {
                    info.digest = Some(d);
                }
                // Behind its `/v1` it is Ollama: `/api/show` says whether the model takes tools.
                if let Some(show) = self.shown(model).await {
                    info.tools = Some(show.supports_tools());
                    info.capabilities = show.capabilities;
                }
            }
            _ => {}
        }
        Ok(info)
    }
}

/// The texts for a server of this kind (as [`ServerIdentity::kind`] names it): Ollama and passk's stub
/// behind `/v1` are told as Ollama is, any other as an OpenAI-compatible server.
pub fn provider(server_kind: Option<&str>) -> &'static super::Provider {
    match server_kind {
        Some(kind::OLLAMA | kind::STUB) => &super::OLLAMA_V1,
        _ => &super::PROVIDER,
    }
}

fn info(kind: &str, version: Option<String>, stub: Option<StubCatalog>) -> ServerIdentity {
    ServerIdentity {
        version: version.unwrap_or_default(),
        kind: Some(kind.to_string()),
        stub,
    }
}

/// Capabilities in Ollama's words, from whether the template shows the tools.
fn capabilities(tools: Option<bool>) -> Vec<String> {
    let mut c = vec!["completion".to_string()];
    if tools == Some(true) {
        c.push("tools".into());
    }
    c
}

/// The id of a `/v1/models` entry, then its aliases (llama.cpp's `aliases`).
fn names(m: &Value) -> Vec<String> {
    let mut out: Vec<String> = m
        .get("id")
        .and_then(Value::as_str)
        .map(str::to_string)
        .into_iter()
        .collect();
    if let Some(a) = m.get("aliases").and_then(Value::as_array) {
        out.extend(a.iter().filter_map(Value::as_str).map(str::to_string));
    }
    out
}

fn meta<'a>(m: &'a Value, key: &str) -> Option<&'a Value> {
    m.get("meta").and_then(|meta| meta.get(key))
}

/// What stands for the digest: `sha256:` of the entry's JSON without `created` (keys sorted).
pub fn identity(m: &Value) -> String {
    let mut m = m.clone();
    if let Some(o) = m.as_object_mut() {
        o.remove("created");
    }
    // serde_json's map keeps keys sorted, so equal entries give equal text.
    format!("sha256:{:x}", Sha256::digest(m.to_string().as_bytes()))
}

/// A parameter count as Ollama writes it (`135M`, `3.1B`).
pub fn parameter_size(n: u64) -> String {
    if n >= 1_000_000_000 {
        format!("{:.1}B", n as f64 / 1e9)
    } else {
        format!("{}M", (n as f64 / 1e6).round())
    }
}

/// One `/v1/models` entry as a model entry.
fn entry(m: &Value) -> ModelEntry {
    let names = names(m);
    let name = names.first().cloned().unwrap_or_default();
    ModelEntry {
        alias: names.iter().find(|a| **a != name).cloned(),
        name,
        digest: Some(identity(m)),
        size: meta(m, "size").and_then(Value::as_u64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_identity_ignores_the_listing_time_and_sees_the_weights() {
        let a = json!({"id": "m", "created": 1, "meta": {"size": 96, "n_params": 134515008, "ftype": "Q4_1"}});
        let b = json!({"id": "m", "created": 2, "meta": {"size": 96, "n_params": 134515008, "ftype": "Q4_1"}});
        let c = json!({"id": "m", "created": 2, "meta": {"size": 97, "n_params": 134515008, "ftype": "Q4_1"}});
        assert_eq!(identity(&a), identity(&b));
        assert_ne!(identity(&a), identity(&c));
        assert!(identity(&a).starts_with("sha256:"));
        let e = entry(&json!({"id": "m", "aliases": ["m", "alias"], "meta": {"size": 96}}));
        assert_eq!((e.alias.as_deref(), e.size), (Some("alias"), Some(96)));
    }

    #[test]
    fn parameter_counts_read_as_ollama_writes_them() {
        assert_eq!(parameter_size(134_515_008), "135M");
        assert_eq!(parameter_size(3_090_000_000), "3.1B");
        assert_eq!(capabilities(Some(false)), vec!["completion"]);
        assert_eq!(capabilities(Some(true)), vec!["completion", "tools"]);
    }
}
