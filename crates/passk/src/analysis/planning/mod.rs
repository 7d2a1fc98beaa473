//! Planning and stopping: power and assurance of a design (`passk plan`), simulated replicates,
//! and the stopping rule read from a run's records.

pub mod assurance;
pub mod pilot;
pub mod power;
#[doc(hidden)]
pub mod replicates;
pub mod stopping;
