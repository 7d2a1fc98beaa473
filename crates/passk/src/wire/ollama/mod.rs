//! Ollama's native API: its serde types, its client, and how it reads model names and
//! `keep_alive`. [`client::Client`] implements [`crate::wire::ChatApi`] in [`chat_api`], mapping
//! the neutral call to `/api/chat` and back in [`convert`].

pub mod api;
pub mod chat_api;
pub mod client;
pub mod convert;
pub mod duration;
pub mod name;

use crate::wire::Provider;

/// What passk tells a person about Ollama.
pub static PROVIDER: Provider = Provider {
    name: "Ollama",
    start: "Start it with `ollama serve`, or set --host / OLLAMA_HOST",
    model_route: "/api/show",
    tools: "Choose a model whose template supports tools (e.g. qwen2.5-coder); `ollama show <model>` lists its capabilities",
    fetch: |model| format!("Pull it with `passk pull {model}`"),
    unsent: &[],
};
