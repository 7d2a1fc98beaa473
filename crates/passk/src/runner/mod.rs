//! Executes models x conversations x k trials and writes the records.

pub mod agent_loop;
pub mod checkout;
pub mod context;
pub mod event;
pub mod experiment;
pub mod forced_call;
pub mod hosts;
pub mod journal;
pub mod judge;
pub mod levels;
pub mod lock;
mod manifest;
pub mod optional;
mod play;
pub mod pool;
pub mod preflight;
pub mod progress;
pub mod record;
pub mod record_file;
pub mod repair;
pub mod rounds;
mod run_error;
pub mod schedule;
#[cfg(test)]
pub(crate) mod scripted_api;
mod servers;
mod session;
pub mod settings;
mod spec;
mod stopping;
mod suite_set;
pub mod telemetry;
