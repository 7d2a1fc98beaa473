//! Everything that speaks HTTP: Ollama's API types, the client with its outcome classification,
//! tool-call recovery from text, and the Ollama-compatible stub server.

pub mod api;
pub mod client;
pub mod depth;
pub mod duration;
pub mod error;
pub mod host;
pub mod name;
pub mod outcome;
pub mod stub;
pub mod tool_call;

pub use error::WireError;
