//! Everything that speaks HTTP. The runner sees only the neutral call ([`chat`]) and the
//! [`ChatApi`] seam; each server API lives in its own folder ([`ollama`]) and shares the retry
//! loop ([`retry`]), the outcome buckets ([`outcome`]) and tool-call recovery from text
//! ([`tool_call`]).
//! The Ollama-compatible stub server is a crate of its own, `passk-stub`, which this library
//! cannot depend on.

pub mod apis;
pub mod chat;
pub mod chat_api;
pub mod config;
pub mod depth;
pub mod error;
pub mod host;
pub mod http;
pub mod ollama;
pub mod openai;
pub mod outcome;
pub mod provider;
pub mod retry;
pub mod tool_call;

pub use chat_api::ChatApi;
pub use error::WireError;
/// Ollama's serde types, client and name and duration parsing, under their former paths (the
/// stub speaks Ollama's API).
pub use ollama::{api, client, duration, name};
pub use provider::Provider;
