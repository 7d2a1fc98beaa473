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
