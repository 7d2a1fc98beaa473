//! Suites whose tools are an MCP server over stdio, with no Rust of their own: the suite folder
//! declares the server (`mcp.json`), and passk starts one server process per conversation, shows
//! the model the tools it lists, runs each call through `tools/call`, reads the end state from a
//! resource after the last turn, and grades it with the store's declarative checks.
//!
//! `client` is the JSON-RPC stdio client, `process` the server processes that die with passk, `crate::domain::mcp_config` the declaration (upstream, since freezing reads it), `tools` what the model is
//! shown, `env` one conversation's server, `suite` loading and the [`Domain`], and `expect` with
//! `grade` the grader (grading source).
//!
//! [`Domain`]: crate::domain::Domain

pub mod client;
pub mod env;
pub mod expect;
pub mod grade;
pub mod process;
pub mod suite;
pub mod tools;

pub use suite::{McpSuite, load_suite};

/// Loads the MCP suite `name` as a [`Domain`](crate::domain::Domain).
pub fn load(
    root: &std::path::Path,
    name: &'static str,
) -> Result<Box<dyn crate::domain::Domain>, crate::domain::SuiteError> {
    Ok(Box::new(load_suite(root, name)?))
}
