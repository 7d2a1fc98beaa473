//! The serde types of the OpenAI chat-completions API as passk uses it, with the fields llama.cpp
//! adds (`timings`) and the ones reasoning servers add (`reasoning_content`). Every field a server
//! may leave out is optional, so that a figure it does not give stays absent.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// `POST /v1/chat/completions` body.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ChatRequest {
    /// Model id as `/v1/models` lists it.
    pub model: String,
    /// The conversation so far.
    pub messages: Vec<ChatMessage>,
    /// Tool schemas.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<Value>>,
    /// Server-sent events instead of one body.
    pub stream: bool,
    /// Streamed only: ask for `usage` in the last chunk.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream_options: Option<StreamOptions>,
    /// Sampling temperature.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Sampling seed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<i64>,
    /// Output cap (absent: the server's own).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u64>,
    /// Nucleus sampling.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
    /// Top-k sampling (llama.cpp, vLLM and Ollama read it; OpenAI itself does not).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_k: Option<i64>,
    /// Variables for the chat template (`enable_thinking` for `--think`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chat_template_kwargs: Option<Value>,
    /// Structured output: `{"type": "json_schema", "json_schema": {"name", "schema"}}`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_format: Option<Value>,
    /// Any other option, at the top level as these servers read them.
    #[serde(flatten)]
    pub extra: BTreeMap<String, Value>,
}

/// `stream_options`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct StreamOptions {
    /// Send `usage` in a last chunk with no choices.
    pub include_usage: bool,
}

/// One message, in either direction.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ChatMessage {
    /// `system`, `user`, `assistant` or `tool`.
    #[serde(default)]
    pub role: String,
    /// Text (`null` on some tool-call replies).
    #[serde(default)]
    pub content: Option<String>,
    /// Reasoning text (`reasoning_content` for llama.cpp and vLLM, `reasoning` for Ollama).
    #[serde(default, alias = "reasoning", skip_serializing_if = "Option::is_none")]
    pub reasoning_content: Option<String>,
    /// Native tool calls of an assistant message.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// On a tool result: the id of the call it answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// On a tool result: the tool's name (read by servers whose templates name the tool).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// One native tool call (whole in a message, a piece of one in a stream delta).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// Position in the reply (stream deltas carry it to say which call a piece belongs to).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<u32>,
    /// Call id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Always `function`.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// What is called.
    #[serde(default)]
    pub function: FunctionCall,
}

/// The function of a tool call.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FunctionCall {
    /// Tool name (absent on the later pieces of a streamed call).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Arguments: a JSON-encoded string by the API; some servers send an object.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub arguments: Value,
}

/// A non-streamed answer, or one chunk of a streamed one.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct ChatCompletion {
    /// Model that answered.
    #[serde(default)]
    pub model: String,
    /// The choices (passk asks for one; the usage chunk of a stream has none).
    #[serde(default)]
    pub choices: Vec<Choice>,
    /// Token counts.
    #[serde(default)]
    pub usage: Option<ApiUsage>,
    /// llama.cpp's own timings of the request.
    #[serde(default)]
    pub timings: Option<LlamaTimings>,
}

/// One choice.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct Choice {
    /// The message (non-streamed).
    #[serde(default)]
    pub message: Option<ChatMessage>,
    /// The piece of the message (streamed).
    #[serde(default)]
    pub delta: Option<ChatMessage>,
    /// `stop`, `length`, `tool_calls`, ... (`null` until the last piece of a stream).
    #[serde(default)]
    pub finish_reason: Option<String>,
}

/// `usage`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct ApiUsage {
    /// Prompt tokens, cached ones included.
    #[serde(default)]
    pub prompt_tokens: Option<u64>,
    /// Output tokens.
    #[serde(default)]
    pub completion_tokens: Option<u64>,
    /// Details of the prompt tokens.
    #[serde(default)]
    pub prompt_tokens_details: Option<PromptTokensDetails>,
}

/// `usage.prompt_tokens_details`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct PromptTokensDetails {
    /// Prompt tokens served from the server's cache.
    #[serde(default)]
    pub cached_tokens: Option<u64>,
}

/// llama.cpp's `timings`: prompt tokens evaluated now (`prompt_n`) and taken from the cache
/// (`cache_n`), output tokens (`predicted_n`), and the milliseconds of each phase.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct LlamaTimings {
    /// Prompt tokens served from the prompt cache.
    #[serde(default)]
    pub cache_n: Option<u64>,
    /// Prompt tokens evaluated by this request.
    #[serde(default)]
    pub prompt_n: Option<u64>,
    /// Milliseconds of prompt evaluation.
    #[serde(default)]
    pub prompt_ms: Option<f64>,
    /// Output tokens.
    #[serde(default)]
    pub predicted_n: Option<u64>,
    /// Milliseconds of decoding.
    #[serde(default)]
    pub predicted_ms: Option<f64>,
}

/// `GET /v1/models`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct ModelList {
    /// The models (`null` from Ollama when it has none).
    #[serde(default)]
    pub data: Option<Vec<Value>>,
}

/// What llama.cpp's `GET /props` says that passk reads.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct Props {
    /// The slot settings, with the context length fixed at the server's start.
    #[serde(default)]
    pub default_generation_settings: GenerationSettings,
    /// What the chat template can do (`supports_tools`, `supports_tool_calls`, ...).
    #[serde(default)]
    pub chat_template_caps: Option<BTreeMap<String, bool>>,
    /// The build (`b1234-abcdef`).
    #[serde(default)]
    pub build_info: Option<String>,
}

/// `default_generation_settings` of `/props`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct GenerationSettings {
    /// Context length of a slot.
    #[serde(default)]
    pub n_ctx: Option<u64>,
}
