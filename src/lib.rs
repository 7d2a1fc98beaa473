//! passk: an offline experiment runner for tool-calling LLM agents served by a local Ollama.
//!
//! The crate is organised as stages in the order the data flows:
//! `suite` (tasks and graders as data) -> `store` and `triage` (the environments the agent acts on)
//! and `grade` (pure graders) -> `wire` (HTTP to Ollama, and the stub server) -> `runner` (agent
//! loop, records) -> `analysis` (records in, typed tables out) -> `report` (tables in, files out).
//! `import` turns the reference experiment's records into passk records. Imports point upstream
//! only.

pub mod analysis;
pub mod grade;
pub mod import;
pub mod records_error;
pub mod report;
pub mod runner;
pub mod seed;
pub mod store;
pub mod suite;
pub mod timefmt;
pub mod trace;
pub mod triage;
pub mod wire;
