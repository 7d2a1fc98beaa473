//! A minimal MCP client over stdio: JSON-RPC 2.0, one message per line, to a server process passk
//! starts in a group of its own and stops with it ([`OwnedChild`]). It speaks the four requests a
//! suite needs (`initialize`, `tools/list`, `tools/call`, `resources/read`) and waits for each
//! answer at most the suite's timeout. A server that exits, hangs, answers something that is not
//! JSON-RPC, or answers with a JSON-RPC error object is a [`ServerError`]. A tool's own error (a
//! result with `isError: true`) is an answer, for the model to read.
//!
//! Why a JSON-RPC error is the server's failure: passk asks only for tools the server listed,
//! with arguments that are a JSON object, so an error object (method not found, invalid params,
//! internal error) says the server is broken or half-started. MCP (2025-06-18, "Error Handling"
//! under Tools) keeps errors "in tool results" (`isError`) for what the model should see and
//! correct, and protocol errors for the rest.

use crate::mcp::process::OwnedChild;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The MCP protocol version passk asks for.
pub const PROTOCOL_VERSION: &str = "2025-06-18";

/// The shortest wait for the handshake: a server's start (an interpreter loading on a busy
/// machine) may take longer than any one call should.
const STARTUP_FLOOR: Duration = Duration::from_secs(30);

/// How much of the server's standard error is kept for messages.
const STDERR_KEPT: usize = 2000;

/// What went wrong with one request: the server crashed, hung, broke the protocol or answered
/// with a JSON-RPC error object. Nothing the model did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerError(pub String);

/// How to start a server: the program, its arguments and the folder it runs in.
#[derive(Debug, Clone)]
pub struct Launch<'a> {
    /// Program (looked up on `PATH`).
    pub command: &'a str,
    /// Its arguments.
    pub args: &'a [String],
    /// Working directory.
    pub cwd: &'a Path,
    /// The longest wait for any one answer.
    pub timeout: Duration,
}

/// One running server process.
pub struct Server {
    child: OwnedChild,
    stdin: ChildStdin,
    lines: Receiver<String>,
    stderr: Arc<Mutex<String>>,
    next_id: u64,
    timeout: Duration,
}

impl Server {
    /// Starts the server and completes the MCP handshake (`initialize`, then the `initialized`
    /// notification).
    pub fn start(launch: &Launch<'_>) -> Result<Server, String> {
        let mut command = Command::new(launch.command);
        command
            .args(launch.args)
            .current_dir(launch.cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = OwnedChild::spawn(command)
            .map_err(|e| format!("could not start `{}`: {e}", launch.command))?;
        let c = child.child();
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (c.stdin.take(), c.stdout.take(), c.stderr.take())
        else {
            return Err("the server's standard streams could not be opened".into());
        };
        let mut server = Server {
            child,
            stdin,
            lines: read_lines(stdout),
            stderr: keep_tail(stderr),
            next_id: 0,
            timeout: launch.timeout.max(STARTUP_FLOOR),
        };
        let params = json!({
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "passk", "version": env!("CARGO_PKG_VERSION")},
        });
        server.request("initialize", params).map_err(|e| e.0)?;
        server
            .send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .map_err(|e| e.0)?;
        server.timeout = launch.timeout;
        Ok(server)
    }

    /// The process id, which leads the group that dropping the server kills.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Every tool the server lists, following `nextCursor` pages.
    pub fn list_tools(&mut self) -> Result<Vec<Value>, ServerError> {
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let params = match &cursor {
                Some(c) => json!({"cursor": c}),
                None => json!({}),
            };
            let result = self.request("tools/list", params)?;
            let page = result
                .get("tools")
                .and_then(Value::as_array)
                .ok_or_else(|| {
                    ServerError("the server answered tools/list without a `tools` array".into())
                })?;
            tools.extend(page.iter().cloned());
            cursor = result
                .get("nextCursor")
                .and_then(Value::as_str)
                .map(String::from);
            if cursor.is_none() {
                return Ok(tools);
            }
        }
    }

    /// Calls a tool: `Ok((is_error, text))` with the text of its content blocks joined.
    pub fn call_tool(&mut self, name: &str, args: &Value) -> Result<(bool, String), ServerError> {
        let result = self.request("tools/call", json!({"name": name, "arguments": args}))?;
        let is_error = result.get("isError").and_then(Value::as_bool) == Some(true);
        Ok((is_error, content_text(&result, "content")))
    }

    /// Reads a resource: the text of its contents joined.
    pub fn read_resource(&mut self, uri: &str) -> Result<String, ServerError> {
        let result = self.request("resources/read", json!({"uri": uri}))?;
        if result.get("contents").and_then(Value::as_array).is_none() {
            return Err(ServerError(format!(
                "the server answered resources/read {uri} without `contents`"
            )));
        }
        Ok(content_text(&result, "contents"))
    }

    /// Sends a request and waits for its answer, at most the timeout.
    fn request(&mut self, method: &str, params: Value) -> Result<Value, ServerError> {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?;
        let deadline = Instant::now() + self.timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = match self.lines.recv_timeout(left) {
                Ok(line) => line,
                Err(RecvTimeoutError::Timeout) => {
                    return Err(ServerError(format!(
                        "the server gave no answer to {method} within {} s",
                        self.timeout.as_secs_f64()
                    )));
                }
                Err(RecvTimeoutError::Disconnected) => return Err(self.exited(method)),
            };
            if let Some(answer) = self.answer_to(id, method, &line)? {
                return answer;
            }
        }
    }

    /// What one line from the server means for request `id`: its answer, or `None` for a line
    /// about something else (a notification, or a request of the server's, which is declined).
    #[allow(clippy::type_complexity)]
    fn answer_to(
        &mut self,
        id: u64,
        method: &str,
        line: &str,
    ) -> Result<Option<Result<Value, ServerError>>, ServerError> {
        let msg: Value = serde_json::from_str(line).map_err(|e| {
            ServerError(format!(
                "the server answered {method} with a line that is not JSON: {e}"
            ))
        })?;
        let Some(msg_id) = msg.get("id").filter(|v| !v.is_null()) else {
            return Ok(None);
        };
        if msg.get("method").is_some() {
            let decline = json!({"jsonrpc": "2.0", "id": msg_id,
                "error": {"code": -32601, "message": "passk serves no requests"}});
            self.send(&decline)?;
            return Ok(None);
        }
        if msg_id.as_u64() != Some(id) {
            return Ok(None);
        }
        if let Some(err) = msg.get("error") {
            let code = err.get("code").and_then(Value::as_i64).unwrap_or(0);
            let text = err
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("(no message)");
            return Ok(Some(Err(ServerError(format!(
                "the server answered {method} with a JSON-RPC error: {text} (code {code})"
            )))));
        }
        match msg.get("result") {
            Some(r) if r.is_object() => Ok(Some(Ok(r.clone()))),
            _ => Err(ServerError(format!(
                "the server answered {method} without a result object"
            ))),
        }
    }

    fn send(&mut self, msg: &Value) -> Result<(), ServerError> {
        let mut line = msg.to_string();
        line.push('\n');
        self.stdin
            .write_all(line.as_bytes())
            .and_then(|()| self.stdin.flush())
            .map_err(|_| self.exited("a request"))
    }

    /// The failure of a server whose output ended: its exit status and the tail of its stderr.
    fn exited(&mut self, during: &str) -> ServerError {
        let status = match self.child.child().wait_timeout_ms(200) {
            Some(s) => format!("exited ({s})"),
            None => "closed its output".to_string(),
        };
        let tail = self.stderr.lock().map(|s| s.clone()).unwrap_or_default();
        let tail = tail.trim();
        let mut text = format!("the server {status} during {during}");
        if !tail.is_empty() {
            text.push_str(&format!("; its stderr ends: {tail}"));
        }
        ServerError(text)
    }
}

/// Waiting a little for a child to exit.
trait WaitTimeout {
    fn wait_timeout_ms(&mut self, ms: u64) -> Option<std::process::ExitStatus>;
}

impl WaitTimeout for std::process::Child {
    fn wait_timeout_ms(&mut self, ms: u64) -> Option<std::process::ExitStatus> {
        let deadline = Instant::now() + Duration::from_millis(ms);
        loop {
            if let Ok(Some(s)) = self.try_wait() {
                return Some(s);
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// The text of the content blocks under `key` joined by newlines (`text` blocks, and the `text`
/// of embedded resources).
fn content_text(result: &Value, key: &str) -> String {
    result
        .get(key)
        .and_then(Value::as_array)
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|b| {
                    b.get("text")
                        .or_else(|| b.pointer("/resource/text"))
                        .and_then(Value::as_str)
                })
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

/// Lines of the server's output as they come, on a thread of their own.
fn read_lines(stdout: impl Read + Send + 'static) -> Receiver<String> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if !line.trim().is_empty() && tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// The last [`STDERR_KEPT`] bytes of the server's standard error, kept on a thread of their own.
fn keep_tail(stderr: impl Read + Send + 'static) -> Arc<Mutex<String>> {
    let tail = Arc::new(Mutex::new(String::new()));
    let keep = Arc::clone(&tail);
    std::thread::spawn(move || {
        let mut buf = [0u8; 1024];
        let mut stderr = stderr;
        while let Ok(n) = stderr.read(&mut buf) {
            if n == 0 {
                break;
            }
            let Ok(mut t) = keep.lock() else { break };
            t.push_str(&String::from_utf8_lossy(&buf[..n]));
            if t.len() > STDERR_KEPT {
                let mut cut = t.len() - STDERR_KEPT;
                while !t.is_char_boundary(cut) {
                    cut += 1;
                }
                t.drain(..cut);
            }
        }
    });
    tail
}
