//! The suites, one folder each: `store` (the customer-support store agent), `triage` (seed 000's
//! ticket triage) and `router` (the intent-router leaf node). Each folder holds the suite's data
//! types and loading, its environment and tools, its gold policy and its grader; the machinery they
//! share lives in [`crate::suite`] (the [`Domain`] trait, presentation, loading helpers) and
//! [`crate::grade`] (findings, answer facts, freezing).
//!
//! Adding a conversation suite is one new folder plus one line in [`CONVERSATION_SUITES`].

pub mod router;
pub mod store;
pub mod triage;

use crate::suite::{Domain, SuiteError, Task};
use router::RouterSuite;
use std::path::Path;

/// Reads one conversation suite from the project root.
pub type Loader = fn(&Path) -> Result<Box<dyn Domain>, SuiteError>;

/// Every conversation suite, by name, in registration order: the one place a suite is registered.
pub const CONVERSATION_SUITES: [(&str, Loader); 2] = [
    ("store", |root| Ok(Box::new(store::load_store(root)?))),
    ("triage", |root| Ok(Box::new(triage::load_triage(root)?))),
];

/// Loads the conversation suite called `name`; `None` when no suite has that name.
pub fn load_domain(name: &str, root: &Path) -> Option<Result<Box<dyn Domain>, SuiteError>> {
    CONVERSATION_SUITES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, load)| load(root))
}

/// Every suite under a project root, loaded once: the conversation suites and the router.
pub struct AllSuites {
    /// The conversation suites, in registration order.
    pub domains: Vec<Box<dyn Domain>>,
    /// The router suite.
    pub router: RouterSuite,
}

impl AllSuites {
    /// Loads every registered suite under `root`.
    pub fn load(root: &Path) -> Result<AllSuites, SuiteError> {
        let domains = CONVERSATION_SUITES
            .iter()
            .map(|(_, load)| load(root))
            .collect::<Result<_, _>>()?;
        Ok(AllSuites {
            domains,
            router: router::load_router(root)?,
        })
    }

    /// The conversation suites as trait objects.
    pub fn domain_refs(&self) -> Vec<&dyn Domain> {
        self.domains.iter().map(|d| d.as_ref()).collect()
    }

    /// Every conversation task of every suite, in registration order.
    pub fn tasks(&self) -> Vec<Task> {
        self.domains
            .iter()
            .flat_map(|d| d.tasks().iter().cloned())
            .collect()
    }

    /// Documented example values of every suite; where two suites document the same parameter
    /// name, the one registered first wins.
    pub fn example_values(&self) -> Vec<(String, String)> {
        self.domains
            .iter()
            .rev()
            .flat_map(|d| d.example_values())
            .collect()
    }
}
