//! Loading a suite whose tools are an MCP server, and its [`Domain`]. The suite folder holds
//! `mcp.json` (the server), `policy.md`, `conversations.json` (tasks in the shared shape, gold
//! and near-misses included) and optionally `tools/` and `prompts/` variants; `graders/<suite>/
//! expectations.json` holds what each conversation must achieve. Loading starts the server once
//! to list its tools and read its seed state, and checks every cross-reference.

use crate::domain::load::{invalid, read_json, sha256_hex};
use crate::domain::mcp_config::{self as config, McpConfig};
use crate::domain::presentation::Presentation;
use crate::domain::{Domain, Environment, Evidence, SuiteError, Task};
use crate::mcp::env::{McpEnv, ServerSpec};
use crate::mcp::expect::{McpExpectations, expected_state};
use crate::mcp::grade::{self, KeyArgs};
use crate::mcp::tools::{ServerTool, server_tools, variants};
use crate::trace::Verdict;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A loaded MCP suite.
pub struct McpSuite {
    name: &'static str,
    spec: Arc<ServerSpec>,
    presentation: Presentation,
    tasks: Vec<Task>,
    tasks_digest: String,
    expectations: McpExpectations,
    key: KeyArgs,
}

/// Loads the MCP suite `name` under `root`.
pub fn load_suite(root: &Path, name: &'static str) -> Result<McpSuite, SuiteError> {
    let dir = config::suite_dir(root, name);
    let config_path = dir.join(config::FILE);
    let config = config::load(root, name)?;
    if !on_this_machine(&config.command, &dir) {
        return Err(SuiteError::Unavailable {
            path: config_path,
            message: format!(
                "the {name} suite's server command `{}` is not on this machine (PATH)",
                config.command
            ),
        });
    }
    let conv_path = dir.join("conversations.json");
    let (tasks, conv_file): (Vec<Task>, _) = read_json(&conv_path)?;
    let (tools, seed) = probe(&config, &dir).map_err(|e| {
        invalid(
            &config_path,
            "command",
            format!("the server `{}`: {e}", command_line(&config)),
        )
    })?;
    let tool_names: Vec<String> = tools.iter().map(|t| t.name.clone()).collect();
    check_tasks(&conv_path, &tasks, &tool_names)?;
    let exp_path = root.join("graders").join(name).join("expectations.json");
    let (expectations, _): (McpExpectations, _) = read_json(&exp_path)?;
    check_expectations(&exp_path, &expectations, &tasks, &seed, &tool_names)?;
    let presentation = Presentation::assemble(
        &dir.join("policy.md"),
        variants(&dir.join("tools"), &tools)?,
    )?;
    let config_digest = sha256_hex(&std::fs::read(&config_path).unwrap_or_default());
    let tasks_digest = sha256_hex(format!("{}\n{config_digest}", conv_file.digest).as_bytes());
    Ok(McpSuite {
        name,
        spec: Arc::new(ServerSpec {
            command: config.command.clone(),
            args: config.args.clone(),
            cwd: dir,
            timeout: config.timeout(),
            end_state: config.end_state.clone(),
            tools: tool_names,
        }),
        presentation,
        tasks,
        tasks_digest,
        key: grade::key_args(&expectations),
        expectations,
    })
}

/// The command as a person would type it.
/// Whether `command` can be started: a path (relative to the suite folder) that exists, or a bare
/// name found in one of `PATH`'s folders.
fn on_this_machine(command: &str, dir: &Path) -> bool {
    if command.contains('/') {
        return dir.join(command).is_file();
    }
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|d| d.join(command).is_file()))
}

fn command_line(config: &McpConfig) -> String {
    std::iter::once(config.command.as_str())
        .chain(config.args.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Starts the server once: its tools and its seed state.
fn probe(config: &McpConfig, dir: &Path) -> Result<(Vec<ServerTool>, Value), String> {
    let spec = ServerSpec {
        command: config.command.clone(),
        args: config.args.clone(),
        cwd: PathBuf::from(dir),
        timeout: config.timeout(),
        end_state: config.end_state.clone(),
        tools: Vec::new(),
    };
    let mut server = spec.start()?;
    let describe = |e: crate::mcp::client::ServerError| e.0;
    let listed = server.list_tools().map_err(describe)?;
    let tools = server_tools(&listed)?;
    if tools.is_empty() {
        return Err("it lists no tools".into());
    }
    let text = server.read_resource(&config.end_state).map_err(describe)?;
    let seed = serde_json::from_str(&text)
        .map_err(|e| format!("its end state ({}) is not JSON: {e}", config.end_state))?;
    Ok((tools, seed))
}

/// Checks the tasks: unique ids, one gold turn per customer message, gold calls to listed tools,
/// at least one near-miss each.
fn check_tasks(path: &Path, tasks: &[Task], tools: &[String]) -> Result<(), SuiteError> {
    if tasks.is_empty() {
        return Err(invalid(path, "(file)", "no conversations"));
    }
    for (i, t) in tasks.iter().enumerate() {
        let key = |k: &str| format!("[{i}] ({}).{k}", t.id);
        if tasks[..i].iter().any(|o| o.id == t.id) {
            return Err(invalid(path, key("id"), "repeats an earlier id"));
        }
        if t.customer.is_empty() || t.gold.turns.len() != t.customer.len() {
            return Err(invalid(
                path,
                key("gold.turns"),
                format!(
                    "{} gold turns for {} customer messages (one each, at least one)",
                    t.gold.turns.len(),
                    t.customer.len()
                ),
            ));
        }
        if let Some(c) = t
            .gold
            .turns
            .iter()
            .flat_map(|t| &t.calls)
            .find(|c| !tools.contains(&c.tool))
        {
            return Err(invalid(
                path,
                key("gold"),
                format!("calls '{}', which the server does not list", c.tool),
            ));
        }
        if t.near_misses.is_empty() {
            return Err(invalid(path, key("near_misses"), "needs at least one"));
        }
    }
    Ok(())
}

/// Checks the expectations: one per task and no other, the seed state the server reports, changes
/// that apply to it, and key arguments of listed tools.
fn check_expectations(
    path: &Path,
    exp: &McpExpectations,
    tasks: &[Task],
    seed: &Value,
    tools: &[String],
) -> Result<(), SuiteError> {
    if &exp.seed_state != seed {
        return Err(invalid(
            path,
            "seed_state",
            format!("differs from the end state a fresh server reports: {seed}"),
        ));
    }
    for t in tasks {
        let Some(e) = exp.conversations.get(&t.id) else {
            return Err(invalid(
                path,
                "conversations",
                format!("no expectation for {}", t.id),
            ));
        };
        expected_state(seed, &e.changes)
            .map_err(|m| invalid(path, format!("conversations.{}.changes", t.id), m))?;
    }
    if let Some(id) = exp
        .conversations
        .keys()
        .find(|id| !tasks.iter().any(|t| &t.id == *id))
    {
        return Err(invalid(
            path,
            format!("conversations.{id}"),
            "no such conversation",
        ));
    }
    if let Some(tool) = exp.key_args.keys().find(|k| !tools.contains(k)) {
        return Err(invalid(
            path,
            format!("key_args.{tool}"),
            "the server lists no such tool",
        ));
    }
    Ok(())
}

impl Domain for McpSuite {
    fn name(&self) -> &str {
        self.name
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

    fn new_environment(&self) -> Box<dyn Environment> {
        Box::new(McpEnv::start(Arc::clone(&self.spec)))
    }

    fn grade(&self, task: &Task, evidence: &Evidence<'_>) -> Verdict {
        let Some(exp) = self.expectations.conversations.get(&task.id) else {
            return Verdict {
                reasons: vec![format!("no expectation for {}", task.id)],
                ..Verdict::default()
            };
        };
        let tools: Vec<&str> = self.spec.tools.iter().map(String::as_str).collect();
        grade::grade(exp, &self.expectations, &self.key, &tools, task, evidence)
    }
}
