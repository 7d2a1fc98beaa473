//! The store environment the agent acts on: a fresh [`StoreState`] per conversation, the eight
//! tools behind one dispatcher, and the [`Domain`] implementation that ties the store suite's data
//! ([`StoreSuite`]) to this environment and to the store grader. Deterministic: the same calls
//! in the same order give the same results and the same end state.

use crate::domain::presentation::Presentation;
use crate::domain::{Domain, Environment, Evidence, Task, ToolOutcome};
use crate::suites::store::data::StoreData;
use crate::suites::store::tools::{self, ToolSpec};
use crate::suites::store::{STORE_CATEGORIES, StoreState, StoreSuite};
use crate::trace::{FailureMode, Verdict};
use serde_json::Value;

/// One conversation's store: state plus the dispatch table.
#[derive(Debug, Clone)]
pub struct StoreEnv {
    state: StoreState,
    table: Vec<ToolSpec>,
}

impl StoreEnv {
    /// A store in its seed state with the real tools.
    pub fn new(data: &StoreData) -> StoreEnv {
        StoreEnv::with_tools(data, tools::TOOLS.to_vec())
    }

    /// A store in its seed state with another dispatch table (used to inject tool defects).
    pub fn with_tools(data: &StoreData, table: Vec<ToolSpec>) -> StoreEnv {
        StoreEnv {
            state: StoreState::new(data),
            table,
        }
    }

    /// The current state.
    pub fn state(&self) -> &StoreState {
        &self.state
    }
}

impl Environment for StoreEnv {
    fn execute(&mut self, tool: &str, args: &Value) -> ToolOutcome {
        tools::dispatch(&self.table, &mut self.state, tool, args)
    }

    fn snapshot(&self) -> Value {
        self.state.snapshot()
    }
}

impl Domain for StoreSuite {
    fn name(&self) -> &str {
        "store"
    }

    fn presentation(&self) -> &Presentation {
        &self.presentation
    }

    fn tasks_digest(&self) -> &str {
        &self.tasks_digest
    }

    fn tasks(&self) -> &[Task] {
        &self.tasks
    }

    fn categories(&self) -> Vec<String> {
        STORE_CATEGORIES.iter().map(|(c, _)| c.to_string()).collect()
    }

    fn new_environment(&self) -> Box<dyn Environment> {
        Box::new(StoreEnv::new(&self.data))
    }

    fn grade(&self, task: &Task, evidence: &Evidence<'_>) -> Verdict {
        match self.expectations.conversations.get(&task.id) {
            Some(exp) => crate::suites::store::grade::grade(exp, &self.baseline, task, evidence),
            None => Verdict {
                passed: false,
                reasons: vec![format!("no grader for task '{}'", task.id)],
                failure_mode: Some(FailureMode::WrongAnswer),
                ..Verdict::default()
            },
        }
    }
}

/// Test helpers shared by the store's unit tests.
#[cfg(test)]
pub(crate) mod tests_support {
    use crate::suites::store::data::StoreData;

    /// The project root.
    pub(crate) fn root() -> std::path::PathBuf {
        std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
    }

    /// The real seed data.
    pub(crate) fn data() -> StoreData {
        let path = root().join(crate::suites::store::load::paths::STORE);
        crate::domain::load::read_json(&path)
            .expect("tasks/store/store.json loads")
            .0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The grader keeps its own frozen list of the store's verbs (for unknown-verb): it must name
    /// the tools the dispatch table runs, in order.
    #[test]
    fn the_grader_knows_the_tools_the_table_runs() {
        assert_eq!(
            tools::TOOLS.map(|t| t.name),
            crate::suites::store::grade::STORE_TOOL_NAMES
        );
    }
}
