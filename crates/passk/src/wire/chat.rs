//! The neutral call: what the runner sends to any chat API and what it gets back. Each API folder
//! under `wire/` maps these to and from its own serde types; nothing upstream of `wire/` knows
//! which API answered. A figure an API does not give stays `None`, never 0.

use super::outcome::{Attempt, CallOutcome};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// Which server API a call went through (recorded on every conversation and in the manifest).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApiKind {
    /// Ollama's native `/api/chat` (also what passk's stub speaks).
    #[default]
    Ollama,
    /// The OpenAI-compatible `/v1/chat/completions` (llama.cpp, vLLM, LM Studio, Ollama's `/v1`).
    #[serde(rename = "openai")]
    OpenAi,
}

impl ApiKind {
    /// Every API, in the order `--api` lists them.
    pub const ALL: [ApiKind; 2] = [ApiKind::Ollama, ApiKind::OpenAi];

    /// The API of a name as records write it (`as_str`).
    pub fn named(name: &str) -> Option<ApiKind> {
        ApiKind::ALL.into_iter().find(|k| k.as_str() == name)
    }

    /// The name written in records and shown in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            ApiKind::Ollama => "ollama",
            ApiKind::OpenAi => "openai",
        }
    }
}

/// Who wrote a message.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Role {
    /// Instructions to the model.
    System,
    /// The customer.
    #[default]
    User,
    /// The model.
    Assistant,
    /// A tool's result.
    Tool,
}

impl Role {
    /// The role as chat APIs spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }

    /// Reads an API's role; anything unknown is taken as the model's.
    pub fn parse(s: &str) -> Role {
        match s {
            "system" => Role::System,
            "user" => Role::User,
            "tool" => Role::Tool,
            _ => Role::Assistant,
        }
    }
}

/// One native tool call of an assistant message.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NativeCall {
    /// Call id, when the API gives one.
    pub id: Option<String>,
    /// Position of the call within the reply, when the API gives one.
    pub index: Option<u32>,
    /// Tool name.
    pub name: String,
    /// Arguments as sent (an object, or a JSON-encoded string from some APIs and models).
    pub arguments: Value,
}

/// One message of a conversation, in either direction.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Message {
    /// Who wrote it.
    pub role: Role,
    /// Text (may be empty on a tool-call reply).
    pub content: String,
    /// Reasoning text of a thinking model.
    pub thinking: Option<String>,
    /// Native tool calls of an assistant message.
    pub tool_calls: Vec<NativeCall>,
    /// On a tool result: the tool whose result this is.
    pub tool_name: Option<String>,
    /// On a tool result: the id of the call it answers, when the call had one.
    pub tool_call_id: Option<String>,
}

impl Message {
    fn with(role: Role, content: impl Into<String>) -> Message {
        Message {
            role,
            content: content.into(),
            ..Message::default()
        }
    }

    /// A system message.
    pub fn system(content: impl Into<String>) -> Message {
        Message::with(Role::System, content)
    }

    /// A user message.
    pub fn user(content: impl Into<String>) -> Message {
        Message::with(Role::User, content)
    }

    /// An assistant message without tool calls.
    pub fn assistant(content: impl Into<String>) -> Message {
        Message::with(Role::Assistant, content)
    }

    /// A tool result: `name` is the tool called, `id` the call's id when it had one.
    pub fn tool(
        name: impl Into<String>,
        id: Option<String>,
        content: impl Into<String>,
    ) -> Message {
        Message {
            tool_name: Some(name.into()),
            tool_call_id: id,
            ..Message::with(Role::Tool, content)
        }
    }
}

/// Sampling and runner options as passk sets them; each API sends those it knows.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CallOptions {
    /// Sampling temperature.
    pub temperature: Option<f64>,
    /// Sampling seed (see [`crate::seed::CallSeed`]).
    pub seed: Option<i64>,
    /// Context window in tokens (Ollama's `num_ctx`; an API without one ignores it).
    pub context_window: Option<u64>,
    /// Maximum output tokens (-1: unbounded; Ollama's `num_predict`, the OpenAI-compatible
    /// `max_tokens`).
    pub max_output_tokens: Option<i64>,
    /// Top-k sampling.
    pub top_k: Option<i64>,
    /// Nucleus sampling.
    pub top_p: Option<f64>,
    /// Any other option, passed through as is.
    pub extra: BTreeMap<String, Value>,
}

/// One chat request.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CallRequest {
    /// Model name.
    pub model: String,
    /// The conversation so far.
    pub messages: Vec<Message>,
    /// Tool schemas (`{"type": "function", "function": {..}}`).
    pub tools: Option<Vec<Value>>,
    /// Sampling and runner options.
    pub options: CallOptions,
    /// Stream the reply (also gives the time to the first token).
    pub stream: bool,
    /// Thinking on or off (`None`: the model's default).
    pub think: Option<bool>,
    /// How long the model stays loaded after the call ("15m", Ollama's `keep_alive`), where
    /// the API has such a setting.
    pub keep_loaded_for: Option<String>,
    /// A JSON schema the reply must follow (structured output): Ollama's `format`, the
    /// OpenAI-compatible `response_format` of type `json_schema`.
    pub format: Option<Value>,
}

/// Token counts and server-side durations of one reply (durations in nanoseconds).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Usage {
    /// Prompt tokens, cached ones included.
    pub prompt_tokens: Option<u64>,
    /// Prompt tokens the server served from its cache, where it says.
    pub cached_prompt_tokens: Option<u64>,
    /// Output tokens (reasoning included).
    pub output_tokens: Option<u64>,
    /// Whole request on the server.
    pub total_ns: Option<u64>,
    /// Scheduling and model load.
    pub load_ns: Option<u64>,
    /// Prompt processing.
    pub prefill_ns: Option<u64>,
    /// Decoding.
    pub decode_ns: Option<u64>,
}

/// The answer of one successful call.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reply {
    /// Model that answered, as the server names it.
    pub model: String,
    /// The assistant message.
    pub message: Message,
    /// Token counts and durations.
    pub usage: Usage,
    /// Why generation stopped (`stop`, `length`, ...), as the server says.
    pub done_reason: Option<String>,
}

impl Reply {
    /// Generation stopped at the output-token limit.
    pub fn truncated(&self) -> bool {
        self.done_reason.as_deref() == Some("length")
    }
}

/// Everything known about one chat call, successful or not. A call never fails with an `Err`.
#[derive(Debug, Clone, PartialEq)]
pub struct CallResult {
    /// Which API it went through.
    pub api: ApiKind,
    /// The reply of the successful attempt.
    pub reply: Option<Reply>,
    /// Bucket of the call: the last attempt's.
    pub outcome: CallOutcome,
    /// Every attempt, in order, failed ones included.
    pub attempts: Vec<Attempt>,
    /// Client wall time of the final attempt, seconds.
    pub wall_s: f64,
    /// Time from sending to the response headers of the final attempt, seconds.
    pub ttfb_s: Option<f64>,
    /// Streamed only: seconds to the first chunk carrying content, thinking or a tool call.
    pub first_token_s: Option<f64>,
    /// Start of the final attempt, milliseconds since the Unix epoch.
    pub started_unix_ms: u64,
}

impl CallResult {
    /// The reply, only when the call's outcome is `ok`.
    pub fn ok_reply(&self) -> Option<&Reply> {
        self.reply
            .as_ref()
            .filter(|_| self.outcome == CallOutcome::Ok)
    }

    /// The last attempt's HTTP status, when a response arrived.
    pub fn status(&self) -> Option<u16> {
        self.attempts.last().and_then(|a| a.status)
    }

    /// The last attempt's error text, when it failed.
    pub fn error(&self) -> Option<&str> {
        self.attempts.last().and_then(|a| a.error.as_deref())
    }
}
