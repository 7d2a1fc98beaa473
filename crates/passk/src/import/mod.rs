//! Reads the reference harness's records (`orchestrator.jsonl`, `router.jsonl`; format in
//! `docs/interop.md` of the specification) into passk's own record types, so that `passk report`
//! and `passk compare` work on them. Nothing is re-graded: each conversation keeps its recorded
//! verdict and is marked `imported`. Every field of the reference format may be absent (its first
//! run lacks Ollama's timings, `router_spans`, `run` and `env`).
//!
//! Called by `passk import`; returns records, writes nothing.

mod reference;

pub use crate::records_error::RecordsError;
pub use reference::{ORCHESTRATOR_FILE, REFERENCE_ROUTER_FILE, reference, reference_failure_mode};
