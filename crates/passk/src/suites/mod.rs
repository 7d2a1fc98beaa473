//! The suites, one folder each: `store` (the customer-support store agent), `triage` (seed 000's
//! ticket triage) and `router` (the intent-router leaf node). Each folder holds the suite's data
//! types and loading, its environment and tools, its gold policy and its grader; the machinery they
//! share lives in [`crate::suite`] (the [`Domain`] trait, presentation, tool docs, argument rules,
//! loading helpers) and [`crate::grade`] (findings, answer facts, freezing).
//!
//! Adding a conversation suite is one new folder plus one line in the `register!` list below: that
//! line declares the folder's module and enters it in [`SUITES`]. A suite whose tools are an MCP
//! server needs no folder: one line in the list's `mcp` block. From [`SUITES`] `--suite`
//! ([`SuiteChoice`]), the default run id, `suite check`, `calibrate`, `freeze`, `serve-stub` and
//! `regrade` all read. `build.rs` finds the suite's grading source in its folder by file name.

pub mod choice;

pub use choice::SuiteChoice;

use crate::suite::{Domain, SuiteError, Task};
use router::RouterSuite;
use std::path::Path;

/// Reads one conversation suite from the project root.
pub type Loader = fn(&Path) -> Result<Box<dyn Domain>, SuiteError>;

/// How a registered suite is played.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    /// Conversations the agent loop plays, read by this loader.
    Conversation(Loader),
    /// Standalone router messages, one model call each ([`RouterSuite`]).
    Router,
}

/// One registered suite.
#[derive(Debug, Clone, Copy)]
pub struct Registered {
    /// Its name: the `--suite` value, the folder, and the suite's name in records.
    pub name: &'static str,
    /// What `--help` says it is.
    pub about: &'static str,
    /// How it is played.
    pub kind: Kind,
}

/// Declares each suite's folder as a module and lists it in [`SUITES`], one line per suite; an
/// MCP suite (tools from a server, [`crate::mcp`]) has no folder here, only its line, whose
/// loader reads `tasks/<name>/mcp.json`.
macro_rules! register {
    (
        folders { $($name:ident: $kind:expr, $about:literal;)* }
        mcp { $($mcp:ident: $mabout:literal;)* }
    ) => {
        $(pub mod $name;)*

        /// The loader of each MCP suite, by its name.
        mod mcp_loaders {
            $(
                /// Loads this MCP suite.
                pub(super) fn $mcp(
                    root: &std::path::Path,
                ) -> Result<Box<dyn crate::suite::Domain>, crate::suite::SuiteError> {
                    crate::mcp::load(root, stringify!($mcp))
                }
            )*
        }

        /// Every suite, in registration order (the order of `--help`, of `suite check`'s lines and
        /// of a run's conversation tasks): the one place a suite is registered.
        pub const SUITES: &[Registered] = &[$(Registered {
            name: stringify!($name),
            about: $about,
            kind: $kind,
        },)* $(Registered {
            name: stringify!($mcp),
            about: $mabout,
            kind: Kind::Conversation(mcp_loaders::$mcp),
        },)*];
    };
}

register! {
    folders {
        store: Kind::Conversation(store::load), "The store agent's conversations";
        router: Kind::Router, "Standalone router messages";
        triage: Kind::Conversation(triage::load), "The ticket-triage agent's tickets (seed 000)";
    }
    mcp {
        library: "The library desk: tools from an MCP server in Python (tasks/library/)";
    }
}

/// Every suite under a project root, loaded once: the conversation suites and the router.
pub struct AllSuites {
    /// The conversation suites, in registration order.
    pub domains: Vec<Box<dyn Domain>>,
    /// The router suite.
    pub router: RouterSuite,
    /// Why each registered suite that could not be loaded here was left out (a server command
    /// this machine lacks); empty when every suite loaded.
    pub skipped: Vec<String>,
}

impl AllSuites {
    /// Loads every registered suite under `root`; a task id two suites share is refused (records,
    /// plans and the stub's book tell conversations apart by it).
    pub fn load(root: &Path) -> Result<AllSuites, SuiteError> {
        let mut domains: Vec<Box<dyn Domain>> = Vec::new();
        let mut skipped = Vec::new();
        for load in SuiteChoice::conversations()
            .iter()
            .filter_map(|s| s.loader())
        {
            match load(root) {
                Ok(d) => domains.push(d),
                Err(e @ SuiteError::Unavailable { .. }) => skipped.push(e.to_string()),
                Err(e) => return Err(e),
            }
        }
        for (i, d) in domains.iter().enumerate() {
            for earlier in &domains[..i] {
                if let Some(t) = d
                    .tasks()
                    .iter()
                    .find(|t| earlier.tasks().iter().any(|e| e.id == t.id))
                {
                    return Err(crate::suite::load::invalid(
                        &root.join("tasks").join(d.name()),
                        t.id.clone(),
                        format!("the {} suite has a task of this id too", earlier.name()),
                    ));
                }
            }
        }
        Ok(AllSuites {
            domains,
            router: router::load_router(root)?,
            skipped,
        })
    }

    /// The suites loaded here, router included, in registration order: every registered suite
    /// but the skipped ones.
    pub fn loaded(&self) -> Vec<SuiteChoice> {
        SuiteChoice::all()
            .iter()
            .copied()
            .filter(|s| s.loader().is_none() || self.domains.iter().any(|d| d.name() == s.name()))
            .collect()
    }

    /// The conversation suites loaded here, in registration order.
    pub fn loaded_conversations(&self) -> Vec<SuiteChoice> {
        let mut loaded = self.loaded();
        loaded.retain(|s| s.loader().is_some());
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

    /// `suite check`'s counts line of every suite, in registration order.
    pub fn counts_lines(&self) -> Vec<String> {
        SUITES
            .iter()
            .filter_map(|s| match s.kind {
                Kind::Router => Some(self.router.counts_line()),
                Kind::Conversation(_) => self
                    .domains
                    .iter()
                    .find(|d| d.name() == s.name)
                    .map(|d| crate::suite::check::counts_line(d.as_ref())),
            })
            .collect()
    }
}
