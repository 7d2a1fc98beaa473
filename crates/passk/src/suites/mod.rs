//! The suites: three compiled in, one folder each — `store` (the customer-support store agent),
//! `triage` (seed 000's ticket triage) and `router` (the intent-router leaf node) — and every MCP
//! suite found at run time: a folder `tasks/<name>/` holding an `mcp.json` ([`discover`]), with
//! no Rust and no rebuild. Each compiled-in folder holds the suite's data types and loading, its
//! environment and tools, its gold policy and its grader; the machinery they share lives in
//! [`crate::domain`] (the [`Domain`] trait, presentation, tool docs, argument rules, loading
//! helpers) and [`crate::grade`] (findings, answer facts, freezing).
//!
//! A suite whose tools are Rust code is one new folder plus one line in the `register!` list
//! below. From [`BUILT_IN`] and what [`discover`] found, [`SuiteChoice`] draws `--suite`, the
//! default run id, `suite check`, `calibrate`, `freeze`, `serve-stub` and `regrade`. `build.rs`
//! finds each compiled-in suite's grading source in its folder by file name.

pub mod choice;
pub mod found;

pub use choice::SuiteChoice;
pub use found::{Found, NotSuite, discover};

use crate::domain::{Domain, SuiteError, Task};
use router::RouterSuite;
use std::path::Path;

/// Reads one compiled-in conversation suite from the experiment directory.
pub type Loader = fn(&Path) -> Result<Box<dyn Domain>, SuiteError>;

/// How a compiled-in suite is played.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    /// Conversations the agent loop plays, read by this loader.
    Conversation(Loader),
    /// Standalone router messages, one model call each ([`RouterSuite`]).
    Router,
}

/// One compiled-in suite.
#[derive(Debug, Clone, Copy)]
pub struct Registered {
    /// Its name: the `--suite` value, the folder, and the suite's name in records.
    pub name: &'static str,
    /// What `--help` says it is.
    pub about: &'static str,
    /// How it is played.
    pub kind: Kind,
}

/// Declares each compiled-in suite's folder as a module and lists it in [`BUILT_IN`], one line
/// per suite.
macro_rules! register {
    ($($name:ident: $kind:expr, $about:literal;)*) => {
        $(pub mod $name;)*

        /// Every compiled-in suite, in registration order (the order of `--help`, of `suite
        /// check`'s lines and of a run's conversation tasks, before the MCP suites found): the
        /// one place such a suite is registered.
        pub const BUILT_IN: &[Registered] = &[$(Registered {
            name: stringify!($name),
            about: $about,
            kind: $kind,
        },)*];
    };
}

register! {
    store: Kind::Conversation(store::load), "The store agent's conversations";
    router: Kind::Router, "Standalone router messages";
    triage: Kind::Conversation(triage::load), "The ticket-triage agent's tickets (seed 000)";
}

/// Every suite under an experiment directory, loaded once: the conversation suites and the router.
pub struct AllSuites {
    /// The conversation suites, in registration order.
    pub domains: Vec<Box<dyn Domain>>,
    /// The router suite.
    pub router: RouterSuite,
    /// Why each suite that could not be loaded here was left out (a server command this machine
    /// lacks); empty when every suite loaded.
    pub skipped: Vec<String>,
    /// Every folder under `tasks/` that is not a suite, with why.
    pub not_suites: Vec<NotSuite>,
}

impl AllSuites {
    /// Loads every compiled-in suite and every MCP suite found under `root`; a task id two suites
    /// share is refused (records, plans and the stub's book tell conversations apart by it).
    pub fn load(root: &Path) -> Result<AllSuites, SuiteError> {
        let found = discover(root);
        let mut domains: Vec<Box<dyn Domain>> = Vec::new();
        let mut skipped = Vec::new();
        let conversations = SuiteChoice::conversations()
            .into_iter()
            .filter(|s| s.is_built_in() || found.mcp.contains(s));
        for suite in conversations {
            match suite.load(root) {
                Some(Ok(d)) => domains.push(d),
                Some(Err(e @ SuiteError::Unavailable { .. })) => skipped.push(e.to_string()),
                Some(Err(e)) => return Err(e),
                None => {}
            }
        }
        refuse_shared_task_ids(root, &domains)?;
        Ok(AllSuites {
            domains,
            router: router::load_router(root)?,
            skipped,
            not_suites: found.not_suites,
        })
    }

    /// The suites loaded here, router included, in registration order.
    pub fn loaded(&self) -> Vec<SuiteChoice> {
        SuiteChoice::all()
            .into_iter()
            .filter(|s| !s.is_conversation() || self.domains.iter().any(|d| d.name() == s.name()))
            .collect()
    }

    /// The conversation suites loaded here, in registration order.
    pub fn loaded_conversations(&self) -> Vec<SuiteChoice> {
        let mut loaded = self.loaded();
        loaded.retain(|s| s.is_conversation());
        loaded
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

    /// `suite check`'s counts line of every suite loaded, in registration order.
    pub fn counts_lines(&self) -> Vec<String> {
        self.loaded()
            .into_iter()
            .filter_map(|s| {
                if !s.is_conversation() {
                    return Some(self.router.counts_line());
                }
                self.domains
                    .iter()
                    .find(|d| d.name() == s.name())
                    .map(|d| crate::domain::check::counts_line(d.as_ref()))
            })
            .collect()
    }
}

/// Refuses a task id two suites share.
fn refuse_shared_task_ids(root: &Path, domains: &[Box<dyn Domain>]) -> Result<(), SuiteError> {
    for (i, d) in domains.iter().enumerate() {
        for earlier in &domains[..i] {
            if let Some(t) = d
                .tasks()
                .iter()
                .find(|t| earlier.tasks().iter().any(|e| e.id == t.id))
            {
                return Err(crate::domain::load::invalid(
                    &root.join("tasks").join(d.name()),
                    t.id.clone(),
                    format!("the {} suite has a task of this id too", earlier.name()),
                ));
            }
        }
    }
    Ok(())
}
