//! Executes models x conversations x k trials and writes the records.

pub mod record;
