//! What every suite shares: the [`Domain`] trait, tasks and trajectories, presentation, loading.
//!
//! A suite is everything the runner needs to play and grade conversations without knowing which
//! domain it is: a system prompt, tool schemas per documentation variant, tasks with scripted
//! customer turns and gold trajectories, a fresh environment per trial and a grader. The suites
//! themselves live in [`crate::suites`], one folder each; this module is what they share. The store
//! and triage suites implement [`Domain`]; the router suite is a separate, simpler shape
//! ([`RouterSuite`](crate::suites::router::RouterSuite)).

pub mod args;
pub mod check;
pub mod date;
pub mod error;
pub mod load;
pub mod mcp_config;
pub mod money;
pub mod presentation;
pub mod repeats;
pub mod replay;
pub mod task;
pub mod tool_docs;

pub use error::SuiteError;
pub use task::{NearMiss, Task, Trajectory, TrajectoryCall, TrajectoryTurn};

use crate::trace::{ToolEvent, Verdict};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Which documentation variant of the tool schemas the model is shown: the name of a file
/// `tasks/<suite>/tools/<name>.json`. `bare` and `documented` ship with every conversation suite; a
/// researcher adds another by adding a file. Names are interned, so a variant is `Copy` and orders
/// by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ToolVariant(&'static str);

impl ToolVariant {
    /// Tool descriptions, and a description for one parameter only.
    pub const BARE: ToolVariant = ToolVariant("bare");
    /// Every parameter described, each with an example value not in the suite's data.
    pub const DOCUMENTED: ToolVariant = ToolVariant("documented");

    /// The variant named `name`: lower-case letters, digits, `-` and `_`, starting with a letter or
    /// a digit (it names a file).
    pub fn named(name: &str) -> Result<ToolVariant, String> {
        file_name(name, "tool docs").map(ToolVariant)
    }

    /// The variant's name as used in file names and records.
    pub fn as_str(self) -> &'static str {
        self.0
    }
}

/// The interned `name` if it can name a variant's file: lower-case letters, digits, `-` and `_`,
/// starting with a letter or a digit; `what` names the kind of variant in the error.
fn file_name(name: &str, what: &str) -> Result<&'static str, String> {
    let ok = name.chars().enumerate().all(|(i, c)| {
        c.is_ascii_lowercase() || c.is_ascii_digit() || (i > 0 && (c == '-' || c == '_'))
    });
    if name.is_empty() || !ok {
        return Err(format!(
            "invalid {what} variant '{name}': a file name of lower-case letters, digits, '-' and '_'"
        ));
    }
    Ok(intern(name))
}

/// Which variant of the policy (the system prompt) the model is shown: `policy` is the suite's
/// `tasks/<suite>/policy.md`; any other name is a file `tasks/<suite>/prompts/<name>.md`. Interned
/// like [`ToolVariant`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PromptVariant(&'static str);

impl PromptVariant {
    /// The suite's own policy file.
    pub const POLICY: PromptVariant = PromptVariant("policy");

    /// The variant named `name` (the same file-name rule as a tool docs variant).
    pub fn named(name: &str) -> Result<PromptVariant, String> {
        file_name(name, "prompt").map(PromptVariant)
    }

    /// The variant's name as used in file names and records.
    pub fn as_str(self) -> &'static str {
        self.0
    }

    /// Whether this is the suite's own policy (left out of records and run ids, which read as
    /// before).
    pub fn is_policy(&self) -> bool {
        *self == PromptVariant::POLICY
    }
}

impl Default for PromptVariant {
    fn default() -> Self {
        PromptVariant::POLICY
    }
}

/// What one conversation shows the model: its tool docs variant and its prompt variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shown {
    /// Tool documentation variant.
    pub tool_docs: ToolVariant,
    /// Policy (system prompt) variant.
    pub prompt: PromptVariant,
}

impl Shown {
    /// The tool docs variant `tool_docs` with the suite's own policy.
    pub fn docs(tool_docs: ToolVariant) -> Shown {
        Shown {
            tool_docs,
            prompt: PromptVariant::POLICY,
        }
    }
}

/// The one `'static` copy of `name` (variant names are few: each is leaked once).
fn intern(name: &str) -> &'static str {
    use std::collections::BTreeSet;
    use std::sync::Mutex;
    static NAMES: Mutex<BTreeSet<&'static str>> = Mutex::new(BTreeSet::new());
    let mut names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(n) = names.get(name) {
        return n;
    }
    let leaked: &'static str = Box::leak(name.to_string().into_boxed_str());
    names.insert(leaked);
    leaked
}

/// Parsing, display and serde of an interned variant name.
macro_rules! variant_name_traits {
    ($t:ident) => {
        impl std::str::FromStr for $t {
            type Err = String;
            fn from_str(s: &str) -> Result<$t, String> {
                $t::named(s)
            }
        }

        impl std::fmt::Display for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.0)
            }
        }

        impl Serialize for $t {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.0)
            }
        }

        impl<'de> Deserialize<'de> for $t {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<$t, D::Error> {
                let name = String::deserialize(d)?;
                $t::named(&name).map_err(serde::de::Error::custom)
            }
        }
    };
}

variant_name_traits!(ToolVariant);
variant_name_traits!(PromptVariant);

/// What one tool call did to the environment.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolOutcome {
    /// Accepted: the text sent back to the model.
    Ok(String),
    /// Rejected: the error text sent back to the model (a *rejected tool call*).
    Rejected(String),
    /// The tool's server crashed, hung or broke its protocol: nothing the model did. The
    /// conversation ends as a tool server failure and is not graded.
    ServerFailed(String),
}

/// A fresh, mutable world for one conversation trial.
pub trait Environment: Send {
    /// Executes one tool call. Never panics, whatever `args` holds.
    fn execute(&mut self, tool: &str, args: &Value) -> ToolOutcome;
    /// The end state the graders see, as canonical JSON.
    fn snapshot(&self) -> Value;
    /// The failure of the server behind the tools, if one failed (a call or the end-state read):
    /// the conversation is then not graded. In-process environments never fail.
    fn server_failure(&self) -> Option<String> {
        None
    }
}

/// Everything a grader may look at for one conversation.
#[derive(Debug, Clone, Copy)]
pub struct Evidence<'a> {
    /// End state of the environment.
    pub end_state: &'a Value,
    /// The final reply of each played turn (`None` for a turn cut by the call cap).
    pub replies: &'a [Option<String>],
    /// Every tool call, accepted or not, in order.
    pub tool_events: &'a [ToolEvent],
    /// Whether the conversation stopped at the call cap.
    pub hit_call_cap: bool,
    /// Model calls made, per played turn.
    pub model_calls: u32,
    /// The conversation was the toolless baseline (no tools offered): graded on its answers, and
    /// an action the task requires fails as `action_required`.
    pub toolless: bool,
    /// (turn, step) of the model calls the server cut at the output limit (`num_predict`): a
    /// malformed call there is a cut reply, not a made-up name.
    pub cut: &'a [(u32, u32)],
}

/// SHA-256 digests (hex) of a suite's parts that may change without touching the graders.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SuiteDigests {
    /// The task files (customer messages, gold trajectories).
    pub tasks: String,
    /// The tool schema file of the chosen variant.
    pub tools: String,
    /// The policy / system prompt.
    pub policy: String,
}

/// A suite the agent loop can play: the store, or any domain built the same way.
pub trait Domain: Send + Sync {
    /// Suite name (`store`, `triage`).
    fn name(&self) -> &str;
    /// What the suite shows the model: policy and tool docs in both variants, with digests.
    fn presentation(&self) -> &presentation::Presentation;
    /// SHA-256 of the suite's task files.
    fn tasks_digest(&self) -> &str;
    /// System prompt of a prompt variant (empty for a variant the suite lacks, which a run
    /// refuses before it starts).
    fn system_prompt(&self, prompt: PromptVariant) -> &str {
        self.presentation().system_prompt(prompt)
    }
    /// Tool schemas in Ollama's `tools` shape for the variant.
    fn tools(&self, variant: ToolVariant) -> &[Value] {
        self.presentation().tools(variant)
    }
    /// Documented example values (to count example-copy calls), by parameter name.
    fn example_values(&self) -> Vec<(String, String)> {
        self.presentation().example_values()
    }
    /// The tasks in suite order.
    fn tasks(&self) -> &[Task];
    /// The task categories in the order `suite check` counts them (default: as the tasks first
    /// name them).
    fn categories(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for t in self.tasks() {
            if !out.contains(&t.category) {
                out.push(t.category.clone());
            }
        }
        out
    }
    /// What the suite's tasks are called in `suite check` (`conversations`, `tickets`).
    fn task_noun(&self) -> &str {
        "conversations"
    }
    /// A fresh environment in its seed state.
    fn new_environment(&self) -> Box<dyn Environment>;
    /// Grades one conversation. Pure: same evidence, same verdict.
    fn grade(&self, task: &Task, evidence: &Evidence<'_>) -> Verdict;
    /// Digests of the suite's non-grader parts for the manifest.
    fn digests(&self, variant: ToolVariant) -> SuiteDigests {
        self.presentation().digests(variant, self.tasks_digest())
    }
}
