//! The suites a run plays, loaded once: the graders verified against their lock, every chosen
//! suite loaded, the task filter and the presentation variants checked against them, and a warning
//! for a suite whose fixed prompt alone overflows the context.

use crate::domain::{Domain, ToolVariant};
use crate::grade::freeze::SuiteLock;
use crate::runner::run_error::RunError;
use crate::runner::settings::{RunSettings, SettingsError, SuiteChoice};
use crate::suites::router::RouterSuite;
use std::collections::BTreeMap;
use std::path::Path;

/// The suites an experiment plays, loaded once.
pub struct Suites {
    /// Conversation suites.
    pub domains: Vec<Box<dyn Domain>>,
    /// The router suite (standalone and/or in front).
    pub router: Option<RouterSuite>,
    /// The lock's part of each suite played (the router's too when it is in front), verified.
    pub graders: BTreeMap<String, SuiteLock>,
}

impl Suites {
    /// The grader digest of suite `name`, stamped on its records.
    pub fn grader_digest(&self, name: &str) -> &str {
        self.graders.get(name).map_or("", |p| p.digest.as_str())
    }

    /// Suite name to the digest of its tasks, as passk's stub publishes them.
    pub fn task_digests(&self) -> BTreeMap<String, String> {
        let domains: Vec<&dyn Domain> = self.domains.iter().map(|d| d.as_ref()).collect();
        task_digests(&domains, self.router.as_ref())
    }
}

/// Suite name to the digest of its tasks (the router's messages for `router`).
pub fn task_digests(
    domains: &[&dyn Domain],
    router: Option<&RouterSuite>,
) -> BTreeMap<String, String> {
    let mut out: BTreeMap<String, String> = domains
        .iter()
        .map(|d| (d.name().to_string(), d.digests(ToolVariant::BARE).tasks))
        .collect();
    if let Some(r) = router {
        out.insert("router".to_string(), r.digest.clone());
    }
    out
}

/// Verifies the lock of the suites `settings` plays and loads them.
pub fn load_suites(root: &Path, settings: &RunSettings) -> Result<Suites, RunError> {
    let mut played: Vec<&str> = settings.suites.iter().map(|s| s.name()).collect();
    if settings.any_router_in_front() && !played.contains(&SuiteChoice::Router.name()) {
        played.push(SuiteChoice::Router.name());
    }
    let graders =
        crate::grade::freeze::verify_suites(root, &played).map_err(RunError::GraderLock)?;
    let mut domains: Vec<Box<dyn Domain>> = Vec::new();
    for loaded in settings.suites.iter().filter_map(|s| s.load(root)) {
        domains.push(loaded?);
    }
    let router = if settings.suites.contains(&SuiteChoice::Router) || settings.any_router_in_front()
    {
        Some(crate::suites::router::load_router(root)?)
    } else {
        None
    };
    let unknown: Vec<&str> = settings
        .tasks
        .iter()
        .filter(|id| {
            !domains
                .iter()
                .any(|d| d.tasks().iter().any(|t| &t.id == *id))
        })
        .map(String::as_str)
        .collect();
    if !unknown.is_empty() {
        return Err(RunError::Settings(SettingsError::Key {
            key: "tasks",
            message: format!(
                "names tasks that none of the chosen suites has: {}",
                unknown.join(", ")
            ),
        }));
    }
    check_variants(&domains, settings)?;
    Ok(Suites {
        domains,
        router,
        graders,
    })
}

/// Every `--tool-docs` and `--prompt` variant must be a file of every conversation suite played.
fn check_variants(domains: &[Box<dyn Domain>], settings: &RunSettings) -> Result<(), RunError> {
    for d in domains {
        let has = d.presentation().prompts();
        if let Some(v) = settings.prompt.0.iter().find(|v| !has.contains(v)) {
            let files: Vec<String> = has
                .iter()
                .map(|p| {
                    if p.is_policy() {
                        format!("tasks/{}/policy.md (policy)", d.name())
                    } else {
                        format!("tasks/{}/prompts/{p}.md", d.name())
                    }
                })
                .collect();
            return Err(RunError::Settings(SettingsError::Key {
                key: "prompt",
                message: format!(
                    "{v}: the {} suite has no tasks/{}/prompts/{v}.md (its prompt files: {})",
                    d.name(),
                    d.name(),
                    files.join(", ")
                ),
            }));
        }
        let has = d.presentation().variants();
        if let Some(v) = settings.tool_docs.0.iter().find(|v| !has.contains(v)) {
            let names: Vec<&str> = has.iter().map(|v| v.as_str()).collect();
            return Err(RunError::Settings(SettingsError::Key {
                key: "tool-docs",
                message: format!(
                    "{v}: the {} suite has no tasks/{}/tools/{v}.json (its variants: {})",
                    d.name(),
                    d.name(),
                    names.join(", ")
                ),
            }));
        }
    }
    Ok(())
}

/// Characters per token assumed when sizing a prompt before any call (English text and JSON with
/// the usual tokenizers run 3.5 to 4.5).
const CHARS_PER_TOKEN: usize = 4;

/// A warning for each suite whose fixed prompt (system prompt and tool documentation) alone is
/// about as large as `num_ctx`: every call of it would overflow the context.
pub fn prompt_size_warnings(suites: &Suites, s: &RunSettings) -> Vec<String> {
    suites
        .domains
        .iter()
        .filter_map(|d| {
            let largest = s.tool_docs.0.iter().map(|&v| d.tools(v)).max_by_key(|t| {
                serde_json::to_string(t)
                    .map(|j| j.len())
                    .unwrap_or_default()
            });
            let tools = serde_json::to_string(&largest).unwrap_or_default();
            let prompt = s.prompt.0.iter().map(|&p| d.system_prompt(p).len()).max();
            let tokens = (prompt.unwrap_or_default() + tools.len()) / CHARS_PER_TOKEN;
            (s.num_ctx < tokens as u64).then(|| {
                format!(
                    "--num-ctx {} is below the {} suite's prompt alone (about {tokens} tokens of \
                     system prompt and tool documentation, at {CHARS_PER_TOKEN} characters a \
                     token): every call will overflow the context",
                    s.num_ctx,
                    d.name()
                )
            })
        })
        .collect()
}
