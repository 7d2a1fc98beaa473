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
pub mod plan;
pub mod pool;
pub mod preflight;
pub mod progress;
pub mod record;
pub mod record_file;
pub mod repair;
pub mod rounds;
mod servers;
pub mod settings;
mod stopping;
mod suite_set;
pub mod telemetry;
