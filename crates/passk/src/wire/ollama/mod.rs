//! Ollama's native API: its serde types, its client, and how it reads model names and
//! `keep_alive`. [`client::Client`] implements [`crate::wire::ChatApi`] in [`chat_api`], mapping
//! the neutral call to `/api/chat` and back in [`convert`].

pub mod api;
pub mod chat_api;
pub mod client;
pub mod convert;
pub mod duration;
pub mod name;
