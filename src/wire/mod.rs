//! Everything that speaks HTTP: Ollama's API types, the client with its outcome classification,
//! tool-call recovery from text, and the Ollama-compatible stub server.

pub mod api;
pub mod outcome;
