//! OpenAI-compatible chat-completions servers (llama.cpp's `llama-server`, vLLM, LM Studio,
//! Ollama's own `/v1`, passk's stub under `/v1`): their serde types ([`api`]), the client
//! ([`client::Client`], which implements [`crate::wire::ChatApi`] in [`chat_api`]), the mapping of
//! the neutral call to `/v1/chat/completions` and back ([`convert`]), the SSE stream ([`sse`]),
//! and what the server says about itself and its model ([`server`]).

pub mod api;
pub mod chat_api;
pub mod client;
pub mod convert;
pub mod server;
pub mod sse;

use crate::wire::Provider;

/// The settings the chat completions request has no field for (`convert`).
const UNSENT: &[&str] = &["num_ctx", "keep_alive"];

/// What passk tells a person about an OpenAI-compatible server whose kind is not known yet.
pub static PROVIDER: Provider = Provider {
    name: "the OpenAI-compatible server",
    start: "Start it (for llama.cpp, `llama-server --jinja`), or set --host to its base URL, without /v1",
    model_route: "/v1/models",
    tools: "Start llama-server with --jinja and a template that takes tools (--chat-template-file models/templates/Qwen-Qwen2.5-7B-Instruct.jinja)",
    fetch: |model| {
        format!(
            "The server's /v1/models does not list it: start the server with that model \
             (llama-server --alias {model}), or name one it lists"
        )
    },
    unsent: UNSENT,
};

/// What passk tells a person about Ollama served over its `/v1`.
pub static OLLAMA_V1: Provider = Provider {
    name: "Ollama (over /v1)",
    start: "Start it with `ollama serve`, or set --host to its root, without /v1",
    model_route: "/api/show",
    tools: "Choose a model whose template supports tools (e.g. qwen2.5-coder); `ollama show <model>` lists its capabilities",
    fetch: |model| format!("Pull it with `passk pull {model}`"),
    unsent: UNSENT,
};
