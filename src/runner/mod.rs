//! Executes models x conversations x k trials and writes the records.

pub mod journal;
pub mod record;
pub mod settings;
pub mod telemetry;
