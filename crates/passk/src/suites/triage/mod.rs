//! The triage suite (docs/reference/suites.md, "Triage"): support tickets as JSON, the orders the
//! agent may look up, a closed action set offered as six tools, a policy prompt, and per-ticket
//! expectations under `graders/triage/`. The gold trajectories, categories and near-misses are
//! derived from the gold policy in code ([`policy`]), and the loader refuses expectations that
//! disagree with it.
//!
//! `data` and `load` read the files, `policy` and `gold` hold the gold policy and the trajectories
//! derived from it, `env` is the desk the agent acts on, and `grade` is the pure grader.

pub mod data;
pub mod env;
pub mod gold;
pub mod grade;
pub mod load;
pub mod policy;

pub use env::TriageEnv;
pub use load::{
    PRIORITIES, TRIAGE_CATEGORIES, TRIAGE_TOOLS, TriageSuite, category, find_order, load_triage,
    paths,
};

/// Loads the triage suite as a [`Domain`](crate::domain::Domain): its entry in
/// [`BUILT_IN`](crate::suites::BUILT_IN).
pub fn load(
    root: &std::path::Path,
) -> Result<Box<dyn crate::domain::Domain>, crate::domain::SuiteError> {
    Ok(Box::new(load_triage(root)?))
}
