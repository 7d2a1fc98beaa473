//! `tasks/<suite>/mcp.json`: a suite whose tools come from an MCP server over stdio declares the
//! command that starts it, the files it runs from (frozen with the graders), the resource its end
//! state is read from, and the timeout of every request.

use crate::domain::SuiteError;
use crate::domain::load::{invalid, read_json};
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The declaration's file name inside the suite folder.
pub const FILE: &str = "mcp.json";

/// The default timeout of one request, in seconds.
const DEFAULT_TIMEOUT_S: f64 = 10.0;

/// An MCP suite's server, as declared.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpConfig {
    /// Program that starts the server (looked up on `PATH`), run in the suite folder.
    pub command: String,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Every file the server runs from, relative to the suite folder: frozen in
    /// `graders/graders.lock`, so a run refuses a changed one.
    pub files: Vec<String>,
    /// URI of the resource read after the last turn: the end state the grader sees (JSON text).
    pub end_state: String,
    /// Longest wait for any one answer after the handshake, in seconds (the handshake waits at
    /// least 30 s).
    #[serde(default = "default_timeout")]
    pub timeout_s: f64,
}

fn default_timeout() -> f64 {
    DEFAULT_TIMEOUT_S
}

impl McpConfig {
    /// The request timeout.
    pub fn timeout(&self) -> Duration {
        Duration::from_secs_f64(self.timeout_s)
    }
}

/// The suite folder of suite `name` under `root`.
pub fn suite_dir(root: &Path, name: &str) -> PathBuf {
    root.join("tasks").join(name)
}

/// Reads and checks `tasks/<name>/mcp.json`: a command, a positive timeout, and files that exist
/// inside the suite folder.
pub fn load(root: &Path, name: &str) -> Result<McpConfig, SuiteError> {
    let path = suite_dir(root, name).join(FILE);
    let (config, _): (McpConfig, _) = read_json(&path)?;
    if config.command.trim().is_empty() {
        return Err(invalid(&path, "command", "must name a program"));
    }
    if !(config.timeout_s > 0.0 && config.timeout_s.is_finite()) {
        return Err(invalid(&path, "timeout_s", "must be a positive number"));
    }
    if config.files.is_empty() {
        return Err(invalid(
            &path,
            "files",
            "must list the files the server runs from",
        ));
    }
    for (i, f) in config.files.iter().enumerate() {
        let rel = Path::new(f);
        if rel.is_absolute() || rel.components().any(|c| c.as_os_str() == "..") {
            return Err(invalid(
                &path,
                format!("files[{i}]"),
                "must be inside the suite folder",
            ));
        }
        if !suite_dir(root, name).join(rel).is_file() {
            return Err(invalid(
                &path,
                format!("files[{i}]"),
                format!("no file {f}"),
            ));
        }
    }
    Ok(config)
}

/// Every file that freezing covers for suite `name` under `root`, relative to `root` with `/`:
/// `tasks/<name>/mcp.json` and the files it lists; nothing for a suite without one.
pub fn frozen_files_of(root: &Path, name: &str) -> Result<Vec<String>, SuiteError> {
    if !suite_dir(root, name).join(FILE).is_file() {
        return Ok(Vec::new());
    }
    let config = load(root, name)?;
    let mut out = vec![format!("tasks/{name}/{FILE}")];
    out.extend(config.files.iter().map(|f| format!("tasks/{name}/{f}")));
    Ok(out)
}
