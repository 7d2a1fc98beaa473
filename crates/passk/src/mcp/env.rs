//! One conversation's environment: a server process of its own, started fresh so every trial
//! begins from the same state, and stopped with its process group when the conversation is done. Calls go
//! through `tools/call`; the end state is the suite's resource read after the last turn. A server
//! that fails is remembered: every later call and the end state report the same failure, and the
//! conversation ends as a tool server failure.

use crate::domain::{Environment, ToolOutcome};
use crate::mcp::client::{Launch, Server, ServerError};
use serde_json::Value;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How to start one suite's server and read its end state.
#[derive(Debug, Clone)]
pub struct ServerSpec {
    /// Program.
    pub command: String,
    /// Arguments.
    pub args: Vec<String>,
    /// The suite folder, where it runs.
    pub cwd: PathBuf,
    /// Longest wait for one answer.
    pub timeout: Duration,
    /// URI of the end-state resource.
    pub end_state: String,
    /// The tools the server listed at load (a call to another is rejected without asking it).
    pub tools: Vec<String>,
}

impl ServerSpec {
    /// Starts a server and completes the handshake.
    pub fn start(&self) -> Result<Server, String> {
        blocking(|| {
            Server::start(&Launch {
                command: &self.command,
                args: &self.args,
                cwd: &self.cwd,
                timeout: self.timeout,
            })
        })
    }
}

/// The server of one conversation, and its failure once it failed.
pub struct McpEnv {
    spec: Arc<ServerSpec>,
    state: Mutex<Running>,
}

/// A server that runs, or the failure that stopped it (the process is then gone).
enum Running {
    Up(Server),
    Failed(String),
}

impl McpEnv {
    /// Starts this conversation's server; a server that does not start fails every call.
    pub fn start(spec: Arc<ServerSpec>) -> McpEnv {
        let running = match spec.start() {
            Ok(s) => Running::Up(s),
            Err(e) => Running::Failed(format!("the tool server did not start: {e}")),
        };
        McpEnv {
            spec,
            state: Mutex::new(running),
        }
    }

    /// Runs `f` against the server; a failure stops the server and is kept.
    fn with_server<T>(
        &self,
        f: impl FnOnce(&mut Server) -> Result<T, ServerError>,
    ) -> Result<T, ServerError> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let result = match &mut *state {
            Running::Failed(why) => return Err(ServerError(why.clone())),
            Running::Up(server) => blocking(|| f(server)),
        };
        if let Err(ServerError(why)) = &result {
            *state = Running::Failed(why.clone());
        }
        result
    }
}

impl Environment for McpEnv {
    fn execute(&mut self, tool: &str, args: &Value) -> ToolOutcome {
        if !self.spec.tools.iter().any(|t| t == tool) {
            return ToolOutcome::Rejected(format!("unknown tool '{tool}'"));
        }
        if !args.is_object() {
            return ToolOutcome::Rejected("arguments must be an object".into());
        }
        match self.with_server(|s| s.call_tool(tool, args)) {
            Ok((false, text)) => ToolOutcome::Ok(text),
            Ok((true, text)) => ToolOutcome::Rejected(text),
            Err(ServerError(why)) => ToolOutcome::ServerFailed(why),
        }
    }

    fn snapshot(&self) -> Value {
        let uri = self.spec.end_state.clone();
        let read = self.with_server(|s| {
            let text = s.read_resource(&uri)?;
            serde_json::from_str(&text)
                .map_err(|e| ServerError(format!("the end state ({uri}) is not JSON: {e}")))
        });
        read.unwrap_or(Value::Null)
    }

    fn server_failure(&self) -> Option<String> {
        match &*self.state.lock().unwrap_or_else(|e| e.into_inner()) {
            Running::Up(_) => None,
            Running::Failed(why) => Some(why.clone()),
        }
    }
}

/// Runs blocking work off the async runtime's reactor where it can (a multi-threaded runtime);
/// elsewhere it runs as is.
fn blocking<T>(f: impl FnOnce() -> T) -> T {
    use tokio::runtime::{Handle, RuntimeFlavor};
    match Handle::try_current() {
        Ok(h) if h.runtime_flavor() == RuntimeFlavor::MultiThread => tokio::task::block_in_place(f),
        _ => f(),
    }
}
