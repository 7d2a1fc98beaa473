//! The store suite (docs/reference/suites.md, "The store" to "Expectations"): an in-memory homeware store
//! reset to its seed state for every conversation, eight tools behind one dispatcher, a four-rule
//! policy, 24 scripted conversations and their frozen expectations.
//!
//! `data` and `load` read `tasks/store/` and `graders/store/`, `expect` types the expectations,
//! `state` and `tools` are the environment the agent acts on, `env` ties them to the [`Domain`]
//! trait, and `grade` is the pure grader.
//!
//! [`Domain`]: crate::domain::Domain

pub mod data;
pub mod env;
pub mod expect;
pub mod grade;
pub mod load;
pub mod policy;
pub mod state;
pub mod tools;

pub use env::StoreEnv;
pub use load::{STORE_CATEGORIES, STORE_TOOLS, StoreSuite, counts_by_category, load_store, paths};
pub use state::StoreState;

/// Loads the store suite as a [`Domain`](crate::domain::Domain): its entry in
/// [`BUILT_IN`](crate::suites::BUILT_IN).
pub fn load(
    root: &std::path::Path,
) -> Result<Box<dyn crate::domain::Domain>, crate::domain::SuiteError> {
    Ok(Box::new(load_store(root)?))
}
