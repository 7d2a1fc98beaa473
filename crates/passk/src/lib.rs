//! passk: an offline experiment runner for tool-calling LLM agents served by a local Ollama.
//!
//! The crate is organised as stages in the order the data flows:
//! `suites` (one folder per suite: its data, environment, gold policy and grader, on the shared
//! machinery of `domain` and `grade`) -> `wire` (HTTP to Ollama and OpenAI-compatible servers)
//! -> `runner` (agent loop, records) -> `analysis` (records in, typed tables out) -> `report` (tables in, files out).
//! `import` turns the reference experiment's records into passk records. Imports point upstream
//! only.

pub mod analysis;
pub mod domain;
pub mod grade;
pub mod import;
pub mod mcp;
pub mod numbered;
pub mod records_error;
pub mod report;
pub mod runner;
pub mod scripted;
pub mod seed;
pub mod sequence;
pub mod spill;
pub mod suites;
pub mod term;
pub mod timefmt;
pub mod trace;
pub mod wire;

/// Cases per property test: `PASSK_FUZZ_CASES` when set (the long fuzz run in `scripts/fuzz.sh`),
/// else `default` (the short run inside `cargo test`).
#[doc(hidden)]
pub fn fuzz_cases(default: u32) -> u32 {
    std::env::var("PASSK_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}
