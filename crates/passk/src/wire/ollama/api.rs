//! Serde types for Ollama's native API. Every metric field is optional: Ollama omits zero values.

use serde::de::Deserializer;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// Ollama's six timing fields of one chat response plus `done_reason` (durations in nanoseconds).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Timings {
    /// Handler entry to final chunk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_duration: Option<u64>,
    /// Scheduling and model load.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_duration: Option<u64>,
    /// Prompt tokens (the full prompt, cached tokens included, since Ollama 0.2.x).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_eval_count: Option<u64>,
    /// Time spent on prompt tokens actually processed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_eval_duration: Option<u64>,
    /// Prompt tokens the server served from its cache, where it says (newer Ollama's
    /// `prompt_eval_cached_count`); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_eval_cached_count: Option<u64>,
    /// Output tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eval_count: Option<u64>,
    /// Decode time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eval_duration: Option<u64>,
    /// `stop`, `length`, `load`, `unload`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub done_reason: Option<String>,
}

/// `null` or absent both read as the type's default (Ollama omits empty fields; others send `null`).
fn null_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// One message of a chat, in either direction.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ChatMessage {
    /// `system`, `user`, `assistant` or `tool`.
    #[serde(default, deserialize_with = "null_default")]
    pub role: String,
    /// Text of the message (may be empty on a tool-call reply).
    #[serde(default, deserialize_with = "null_default")]
    pub content: String,
    /// Native tool calls of an assistant message.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub tool_calls: Vec<ToolCall>,
    /// On a `tool` message: the tool whose result this is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    /// On a `tool` message: the id of the call it answers, when the call had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// Reasoning text of a thinking model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<String>,
}

impl ChatMessage {
    fn with(role: &str, content: impl Into<String>) -> ChatMessage {
        ChatMessage {
            role: role.to_string(),
            content: content.into(),
            ..ChatMessage::default()
        }
    }

    /// A `system` message.
    pub fn system(content: impl Into<String>) -> ChatMessage {
        ChatMessage::with("system", content)
    }

    /// A `user` message.
    pub fn user(content: impl Into<String>) -> ChatMessage {
        ChatMessage::with("user", content)
    }

    /// An `assistant` message without tool calls.
    pub fn assistant(content: impl Into<String>) -> ChatMessage {
        ChatMessage::with("assistant", content)
    }

    /// A `tool` result: `name` is the tool called, `id` the call's id when it had one.
    pub fn tool(
        name: impl Into<String>,
        id: Option<String>,
        content: impl Into<String>,
    ) -> ChatMessage {
        ChatMessage {
            tool_name: Some(name.into()),
            tool_call_id: id,
            ..ChatMessage::with("tool", content)
        }
    }
}

/// One native tool call (`message.tool_calls[i]`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// Call id (`call_` + 8 characters since Ollama 0.12.10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The function called.
    #[serde(default)]
    pub function: ToolCallFunction,
}

/// Name, arguments and position of one native tool call.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolCallFunction {
    /// Position of the call within the reply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<u32>,
    /// Tool name.
    #[serde(default, deserialize_with = "null_default")]
    pub name: String,
    /// Arguments (an object from Ollama; kept as any JSON value).
    #[serde(default)]
    pub arguments: Value,
}

/// Sampling and runner options, always sent inside `options` (top-level keys are ignored by Ollama).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ChatOptions {
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Sampling seed (see [`crate::seed::CallSeed`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<i64>,
    /// Context window; a change between requests reloads the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub num_ctx: Option<u64>,
    /// Maximum output tokens (-1: unbounded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub num_predict: Option<i64>,
    /// Top-k sampling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_k: Option<i64>,
    /// Nucleus sampling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
    /// Any other option, passed through as is.
    #[serde(flatten)]
    pub extra: BTreeMap<String, Value>,
}

/// Body of `POST /api/chat`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ChatRequest {
    /// Model name.
    #[serde(default)]
    pub model: String,
    /// The conversation so far.
    #[serde(default, deserialize_with = "null_default")]
    pub messages: Vec<ChatMessage>,
    /// Tool schemas in Ollama's `tools` shape.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<Value>>,
    /// Stream NDJSON chunks (Ollama's default is true; passk sends it explicitly).
    #[serde(default = "default_stream")]
    pub stream: bool,
    /// Options (always serialised, possibly empty).
    #[serde(default)]
    pub options: ChatOptions,
    /// How long the model stays loaded ("15m").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keep_alive: Option<String>,
    /// Thinking on or off (absent: the model's default, which is on for a thinking model).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub think: Option<bool>,
    /// Structured output: `"json"` or a JSON schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<Value>,
}

fn default_stream() -> bool {
    true
}

/// One `/api/chat` response (or one streamed chunk).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ChatResponse {
    /// Model that answered.
    #[serde(default, deserialize_with = "null_default")]
    pub model: String,
    /// Server timestamp (RFC 3339).
    #[serde(default, deserialize_with = "null_default")]
    pub created_at: String,
    /// The reply (absent in a malformed response).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<ChatMessage>,
    /// Last chunk (always true when not streaming).
    #[serde(default)]
    pub done: bool,
    /// Timing fields and `done_reason` (present on the final chunk only).
    #[serde(flatten)]
    pub timings: Timings,
}

/// An error body: `{"error": "..."}`, as a response or as a line of a stream.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorBody {
    /// The server's message.
    pub error: String,
}

/// Model details shared by `/api/tags`, `/api/ps` and `/api/show`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelDetails {
    /// Base model, when derived.
    #[serde(default, deserialize_with = "null_default")]
    pub parent_model: String,
    /// File format (`gguf`).
    #[serde(default, deserialize_with = "null_default")]
    pub format: String,
    /// Model family (`qwen2`).
    #[serde(default, deserialize_with = "null_default")]
    pub family: String,
    /// All families.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub families: Option<Vec<String>>,
    /// Parameter count as text (`3.1B`).
    #[serde(default, deserialize_with = "null_default")]
    pub parameter_size: String,
    /// Quantisation (`Q4_K_M`).
    #[serde(default, deserialize_with = "null_default")]
    pub quantization_level: String,
    /// Trained context length, tokens (`/api/tags` only; absent where unknown, as Ollama omits 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_length: Option<u64>,
}

/// Body of `POST /api/show`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ShowRequest {
    /// Model name.
    #[serde(default, deserialize_with = "null_default")]
    pub model: String,
    /// The legacy key for the name, read where `model` is empty (`ShowHandler`). Go's client
    /// sends both keys, `name` empty.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub name: String,
    /// Include large tensors metadata.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub verbose: bool,
}

/// A request's model: `model`, else the legacy `name` (`ShowHandler`; `cmp.Or(req.Model,
/// req.Name)` in `PullHandler`).
fn model_or_name<'a>(model: &'a str, name: &'a str) -> &'a str {
    if model.is_empty() { name } else { model }
}

impl ShowRequest {
    /// The model asked for: `model`, else the legacy `name`.
    pub fn model_name(&self) -> &str {
        model_or_name(&self.model, &self.name)
    }
}

/// Response of `POST /api/show`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ShowResponse {
    /// The model's Modelfile, as `ollama show --modelfile` prints it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modelfile: Option<String>,
    /// Modelfile `PARAMETER` lines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameters: Option<String>,
    /// Prompt template.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<String>,
    /// Family, size, quantisation.
    #[serde(default)]
    pub details: ModelDetails,
    /// GGUF metadata (`<arch>.context_length` holds the trained context).
    #[serde(default, deserialize_with = "null_default")]
    pub model_info: BTreeMap<String, Value>,
    /// `completion`, `tools`, `thinking`, ...
    #[serde(default, deserialize_with = "null_default")]
    pub capabilities: Vec<String>,
    /// Last modification time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modified_at: Option<String>,
    /// The weights' tensors (a GGUF model lists them whether or not `verbose` was asked).
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub tensors: Vec<Tensor>,
}

/// One tensor of a model's weights, as `/api/show` lists it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Tensor {
    /// GGUF name (`token_embd.weight`).
    #[serde(default)]
    pub name: String,
    /// GGML type (`F16`, `Q4_K`).
    #[serde(default, rename = "type")]
    pub kind: String,
    /// Dimensions.
    #[serde(default)]
    pub shape: Vec<u64>,
}

impl ShowResponse {
    /// Whether the model declares the `tools` capability.
    pub fn supports_tools(&self) -> bool {
        self.capabilities.iter().any(|c| c == "tools")
    }

    /// The trained context length (`model_info["<arch>.context_length"]`).
    pub fn context_length(&self) -> Option<u64> {
        let arch = self
            .model_info
            .get("general.architecture")
            .and_then(Value::as_str);
        if let Some(v) = arch.and_then(|a| self.model_info.get(&format!("{a}.context_length"))) {
            return v.as_u64();
        }
        self.model_info
            .iter()
            .find(|(k, _)| k.ends_with(".context_length"))
            .and_then(|(_, v)| v.as_u64())
    }
}

/// One model of `/api/tags`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LocalModel {
    /// Name with tag.
    #[serde(default, deserialize_with = "null_default")]
    pub name: String,
    /// Same as name on current servers.
    #[serde(default, deserialize_with = "null_default")]
    pub model: String,
    /// Last modification time.
    #[serde(default, deserialize_with = "null_default")]
    pub modified_at: String,
    /// Size on disk, bytes.
    #[serde(default)]
    pub size: u64,
    /// Manifest digest.
    #[serde(default, deserialize_with = "null_default")]
    pub digest: String,
    /// Family, size, quantisation.
    #[serde(default)]
    pub details: ModelDetails,
    /// What the model can do (`completion`, `tools`, `thinking`, ...), as `/api/show` says;
    /// absent on servers older than the field.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub capabilities: Vec<String>,
}

/// Response of `GET /api/tags`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TagsResponse {
    /// Locally available models.
    #[serde(default, deserialize_with = "null_default")]
    pub models: Vec<LocalModel>,
}

/// One loaded model of `/api/ps`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunningModel {
    /// Name with tag.
    #[serde(default, deserialize_with = "null_default")]
    pub name: String,
    /// Same as name on current servers.
    #[serde(default, deserialize_with = "null_default")]
    pub model: String,
    /// Memory in use, bytes.
    #[serde(default)]
    pub size: u64,
    /// Manifest digest.
    #[serde(default, deserialize_with = "null_default")]
    pub digest: String,
    /// Family, size, quantisation.
    #[serde(default)]
    pub details: ModelDetails,
    /// When the model unloads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    /// Part of `size` in GPU memory (less than `size`: partly on CPU).
    #[serde(default)]
    pub size_vram: u64,
    /// Effective num_ctx (Ollama 0.10+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_length: Option<u64>,
}

/// Response of `GET /api/ps`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PsResponse {
    /// Loaded models.
    #[serde(default, deserialize_with = "null_default")]
    pub models: Vec<RunningModel>,
}

/// Response of `GET /api/version`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct VersionResponse {
    /// Server version (`0.12.10`).
    #[serde(default, deserialize_with = "null_default")]
    pub version: String,
}

/// Body of `POST /api/pull`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PullRequest {
    /// Model to pull.
    #[serde(default, deserialize_with = "null_default")]
    pub model: String,
    /// The legacy key for the name, read where `model` is empty (`cmp.Or(req.Model, req.Name)`
    /// in `PullHandler`). Go's client sends both keys, `name` empty.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub name: String,
    /// Stream progress lines.
    #[serde(default = "default_stream")]
    pub stream: bool,
}

impl PullRequest {
    /// The model asked for: `model`, else the legacy `name`.
    pub fn model_name(&self) -> &str {
        model_or_name(&self.model, &self.name)
    }
}

/// One progress line of `/api/pull`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PullProgress {
    /// `pulling manifest`, `pulling <digest>`, `verifying sha256 digest`, `success`, ...
    #[serde(default, deserialize_with = "null_default")]
    pub status: String,
    /// Layer being downloaded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// Layer size, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// Bytes downloaded so far (missing early on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed: Option<u64>,
}
