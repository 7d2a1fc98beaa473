//! The single integration-test binary; each module tests one part through the real binary or the
//! library's public API, over loopback only.

#![allow(clippy::unwrap_used)] // tests may unwrap: a panic is the failure they report

mod browser;
mod calibrate;
mod docs;
mod experiment;
mod fidelity;
mod fuzz;
mod golden;
mod gpu_metrics;
mod hosts;
mod imports;
mod mcp;
mod messy;
mod openai_stub;
mod openai_wire;
mod plan;
mod real_models;
mod reference;
mod registry;
mod regrade;
mod replies;
mod report;
mod run;
mod slots;
mod stop;
mod suite;
mod torture;
mod triage;
mod util;
mod variants;
mod wire;
