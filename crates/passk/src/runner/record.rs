//! The JSONL record types: the owner of the format described in `docs/reference/records.md`.
//!
//! A run directory holds `manifest.json`, `conversations.jsonl` (one [`ConversationRecord`] per
//! finished conversation) and `router.jsonl` (one [`RouterRecord`] per standalone router call). Each
//! line is one JSON object tagged by `type` and stamped with [`SCHEMA_VERSION`] and the grader digest.
//! Analysis reads these types back; nothing downstream needs anything else.

use crate::domain::{PromptVariant, ToolVariant};
use crate::runner::optional::Opt;
use crate::trace::{CallFormat, ToolEvent, Verdict};
use crate::wire::chat::{ApiKind, Message, Usage};
use crate::wire::outcome::{Attempt, CallOutcome};
use crate::wire::tool_call::Withheld;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// Version of the record format; bumped on any incompatible change.
pub const SCHEMA_VERSION: u32 = 1;

/// File name of the conversation records inside a run directory.
pub const CONVERSATIONS_FILE: &str = "conversations.jsonl";
/// File name of the standalone router records inside a run directory.
pub const ROUTER_FILE: &str = "router.jsonl";
/// File name of the manifest inside a run directory.
pub const MANIFEST_FILE: &str = "manifest.json";

/// One line of `conversations.jsonl` or `router.jsonl`.
///
/// Read only from JSON text (`serde_json::from_str` and the like, not from a `Value`): its
/// transcript messages are kept as the text they were written as ([`RecordedJson`]), which
/// serde's tagged form, buffering the line first, cannot hand over.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Record {
    /// A finished conversation trial.
    Conversation(Box<ConversationRecord>),
    /// A standalone router call.
    Router(Box<RouterRecord>),
}

impl<'de> Deserialize<'de> for Record {
    /// The line's `type`, then the whole line again as that record: the tagged form's buffer
    /// would refuse a raw transcript message.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        #[derive(Deserialize)]
        struct Tag<'a> {
            #[serde(rename = "type", borrow)]
            kind: std::borrow::Cow<'a, str>,
        }
        let raw = Box::<serde_json::value::RawValue>::deserialize(d)?;
        let text = raw.get();
        // The inner error says where in the line it is.
        let plain = D::Error::custom;
        let tag: Tag = serde_json::from_str(text).map_err(plain)?;
        match &*tag.kind {
            "conversation" => serde_json::from_str(text)
                .map(|c| Record::Conversation(Box::new(c)))
                .map_err(plain),
            "router" => serde_json::from_str(text)
                .map(|r| Record::Router(Box::new(r)))
                .map_err(plain),
            other => Err(D::Error::unknown_variant(
                other,
                &["conversation", "router"],
            )),
        }
    }
}

impl Record {
    /// Stamps the server the trial was played on and the concurrency in force there.
    pub fn set_played_on(&mut self, host: &str, parallel: u32) {
        let (h, p) = match self {
            Record::Conversation(c) => (&mut c.host, &mut c.parallel),
            Record::Router(r) => (&mut r.host, &mut r.parallel),
        };
        *h = Some(host.to_string());
        *p = Some(parallel);
    }

    /// See [`ConversationRecord::server_unreachable`].
    pub fn server_unreachable(&self) -> bool {
        match self {
            Record::Conversation(c) => c.server_unreachable,
            Record::Router(r) => r.server_unreachable,
        }
    }

    /// Adds `why` to the error of the last failed attempt of the record's last call: what the
    /// server said about the failure afterwards.
    pub fn explain_last_failure(&mut self, why: &str) {
        let call = match self {
            Record::Conversation(c) => c.calls.last_mut(),
            Record::Router(r) => Some(&mut r.call),
        };
        if let Some(attempt) = call.and_then(|c| c.attempts.last_mut()) {
            attempt.error = Some(match attempt.error.take() {
                Some(e) => format!("{e}; {why}"),
                None => why.to_string(),
            });
        }
    }

    /// Marks a record as ended while the server could not be reached.
    pub fn mark_server_unreachable(&mut self) {
        match self {
            Record::Conversation(c) => c.server_unreachable = true,
            Record::Router(r) => r.server_unreachable = true,
        }
    }
}

/// Which node of the pipeline made a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Node {
    /// The agent (decision node).
    Orchestrator,
    /// The intent router (leaf node).
    Router,
}

/// How the conversation was played.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, Default,
)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// The agent with tools.
    #[default]
    Agent,
    /// One call per customer message, no tools (seed 003's baseline).
    Toolless,
}

/// How a conversation ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Graded and passed.
    Pass,
    /// Graded and failed (call cap included).
    ModelFail,
    /// Retries exhausted on transport failures: excluded from quality denominators.
    TransportFail,
    /// A protocol error mid-run: excluded from quality denominators.
    ProtocolFail,
    /// The tools' server (an MCP suite's) crashed, hung or broke its protocol: excluded from
    /// quality denominators, never the model's fault.
    ToolServerFail,
}

impl Outcome {
    /// Whether the conversation counts in quality denominators.
    pub fn is_graded(self) -> bool {
        matches!(self, Outcome::Pass | Outcome::ModelFail)
    }
}

/// Where the conversation stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Every scripted turn was played.
    Ok,
    /// A turn reached the call cap; remaining turns were not played.
    LoopCap,
    /// A call failed for good (transport or protocol).
    Aborted,
}

/// GPU and model-server readings over one call's wall interval; a field is absent (never 0) when it
/// could not be read.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GpuWindow {
    /// Samples that fell inside the interval.
    pub samples: u32,
    /// Mean GPU utilization, percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub util_mean: Option<f64>,
    /// Max GPU utilization, percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub util_max: Option<f64>,
    /// Max memory in use, MiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mem_used_mib: Option<f64>,
    /// Mean power draw, watts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power_w: Option<f64>,
    /// The call's energy, joules: the energy counter's gain over the call, shared evenly with the
    /// calls in flight on the same GPU at the same time (see docs/reference/metrics.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy_j: Option<f64>,
    /// Most calls in flight on the GPU at once during this call, itself included, when more than
    /// one (its `energy_j` is then a share).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calls_in_flight: Option<u32>,
    /// CPU of the `ollama` and `llama-server` processes, percent of one core (mean).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_cpu_pct: Option<f64>,
    /// Resident memory of those processes, MiB (max).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_rss_mib: Option<f64>,
}

/// Token counts, server durations (nanoseconds) and `done_reason` of one call, under Ollama's
/// field names so records of every API, and every record written before there were others, read
/// alike. A figure the API did not give is absent, never 0.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Timings {
    /// Handler entry to final chunk.
    #[serde(default, skip_serializing_if = "Opt::is_none")]
    pub total_duration: Opt<u64>,
    /// Scheduling and model load.
    #[serde(default, skip_serializing_if = "Opt::is_none")]
    pub load_duration: Opt<u64>,
    /// Prompt tokens (the full prompt, cached tokens included).
    #[serde(default, skip_serializing_if = "Opt::is_none")]
    pub prompt_eval_count: Opt<u64>,
    /// Time spent on prompt tokens actually processed.
    #[serde(default, skip_serializing_if = "Opt::is_none")]
    pub prompt_eval_duration: Opt<u64>,
    /// Prompt tokens the server served from its cache, where it says.
    #[serde(default, skip_serializing_if = "Opt::is_none")]
    pub prompt_eval_cached_count: Opt<u64>,
    /// Output tokens.
    #[serde(default, skip_serializing_if = "Opt::is_none")]
    pub eval_count: Opt<u64>,
    /// Decode time.
    #[serde(default, skip_serializing_if = "Opt::is_none")]
    pub eval_duration: Opt<u64>,
    /// `stop`, `length`, `load`, `unload`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub done_reason: Option<Box<str>>,
}

impl Timings {
    /// The record of a reply's usage and `done_reason`.
    pub fn of(usage: &Usage, done_reason: Option<String>) -> Timings {
        Timings {
            total_duration: usage.total_ns.into(),
            load_duration: usage.load_ns.into(),
            prompt_eval_count: usage.prompt_tokens.into(),
            prompt_eval_duration: usage.prefill_ns.into(),
            prompt_eval_cached_count: usage.cached_prompt_tokens.into(),
            eval_count: usage.output_tokens.into(),
            eval_duration: usage.decode_ns.into(),
            done_reason: done_reason.map(Into::into),
        }
    }
}

/// A transcript message or an end state as recorded: its JSON text, kept as written. The report
/// page writes the text on as it stands and re-grading reads it as a tree, so reading a record
/// builds no JSON tree for its transcript and end state (half of a record's bytes).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RecordedJson(Box<serde_json::value::RawValue>);

impl RecordedJson {
    /// JSON `null`, the end state of a conversation that recorded none.
    pub fn null() -> RecordedJson {
        RecordedJson::from(&Value::Null)
    }

    /// The JSON text.
    pub fn json(&self) -> &str {
        self.0.get()
    }

    /// The JSON tree.
    pub fn to_value(&self) -> Value {
        serde_json::from_str(self.json()).expect("a recorded message is JSON")
    }
}

impl From<&Value> for RecordedJson {
    fn from(v: &Value) -> Self {
        RecordedJson(serde_json::value::to_raw_value(v).expect("a JSON value serializes"))
    }
}

impl From<Value> for RecordedJson {
    fn from(v: Value) -> Self {
        RecordedJson::from(&v)
    }
}

impl PartialEq for RecordedJson {
    fn eq(&self, other: &Self) -> bool {
        self.json() == other.json()
    }
}

/// One message of a transcript as recorded: Ollama's message shape (`role`, `content`, then
/// `tool_calls` as `{id, function: {index, name, arguments}}`, `tool_name`, `tool_call_id`,
/// `thinking`, each left out when absent), whatever API carried it.
pub fn transcript_entry(m: &Message) -> Value {
    let mut o = serde_json::Map::new();
    o.insert("role".into(), m.role.as_str().into());
    o.insert("content".into(), m.content.clone().into());
    if !m.tool_calls.is_empty() {
        let calls = m.tool_calls.iter().map(|c| {
            let mut f = serde_json::Map::new();
            if let Some(i) = c.index {
                f.insert("index".into(), i.into());
            }
            f.insert("name".into(), c.name.clone().into());
            f.insert("arguments".into(), c.arguments.clone());
            let mut call = serde_json::Map::new();
            if let Some(id) = &c.id {
                call.insert("id".into(), id.clone().into());
            }
            call.insert("function".into(), f.into());
            Value::Object(call)
        });
        o.insert("tool_calls".into(), calls.collect());
    }
    let optional = [
        ("tool_name", &m.tool_name),
        ("tool_call_id", &m.tool_call_id),
        ("thinking", &m.thinking),
    ];
    for (key, value) in optional {
        if let Some(v) = value {
            o.insert(key.into(), v.clone().into());
        }
    }
    Value::Object(o)
}

/// (turn, step) of the agent calls the server cut at the output limit (done_reason `length`),
/// as the graders' `Evidence::cut` takes them.
pub fn cut_calls(calls: &[CallRecord]) -> Vec<(u32, u32)> {
    calls
        .iter()
        .filter(|c| c.node == Node::Orchestrator && c.truncated)
        .map(|c| (c.turn, c.step))
        .collect()
}

/// One model call as recorded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallRecord {
    /// Which node made it.
    pub node: Node,
    /// Customer turn (0-based).
    pub turn: u32,
    /// Model call within the turn (0-based).
    pub step: u32,
    /// Seed sent in `options.seed`.
    #[serde(default, skip_serializing_if = "Opt::is_none")]
    pub seed: Opt<i64>,
    /// Request start, milliseconds since the Unix epoch.
    #[serde(default, skip_serializing_if = "Opt::is_none")]
    pub started_unix_ms: Opt<u64>,
    /// Client wall time of the successful (or last) attempt, seconds.
    #[serde(default, skip_serializing_if = "Opt::is_none")]
    pub wall_s: Opt<f64>,
    /// The server's token counts and durations (Ollama's field names, whatever the API).
    #[serde(default)]
    pub timings: Timings,
    /// Bucket of the call (the last attempt's).
    pub outcome: CallOutcome,
    /// Every attempt, failed ones first.
    #[serde(default, skip_serializing_if = "<[_]>::is_empty")]
    pub attempts: Box<[Attempt]>,
    /// Request timeout in force, seconds.
    #[serde(default, skip_serializing_if = "Opt::is_none")]
    pub timeout_s: Opt<f64>,
    /// How the reply's tool calls were written (`None`: no tool call).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_format: Option<CallFormat>,
    /// Tool calls in the reply.
    #[serde(default)]
    pub tool_calls: u32,
    /// `done_reason` was `length`: the reply hit num_predict.
    #[serde(default)]
    pub truncated: bool,
    /// prompt_eval_count reached num_ctx or fell below the previous call's.
    #[serde(default)]
    pub context_overflow: bool,
    /// GPU readings over the call (boxed: absent without telemetry, and a record holds one per
    /// call, so an absent window costs a pointer rather than its 120 bytes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu: Option<Box<GpuWindow>>,
    /// Router only: the predicted label (`None`: unparseable).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predicted: Option<Box<str>>,
    /// Time to first byte, seconds (streaming only).
    #[serde(default, skip_serializing_if = "Opt::is_none")]
    pub ttfb_s: Opt<f64>,
    /// Time to the first chunk carrying content or a tool call, seconds (streaming only).
    #[serde(default, skip_serializing_if = "Opt::is_none")]
    pub ttft_s: Opt<f64>,
    /// The reply's `thinking` field, as the model sent it (never read for calls).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<Box<str>>,
    /// The reasoning's share of `eval_count` (Ollama does not split it: estimated by the
    /// reasoning's share of the reply's characters); thinking tokens are output tokens.
    #[serde(default, skip_serializing_if = "Opt::is_none")]
    pub thinking_tokens: Opt<u64>,
    /// Tool calls of the reply that were not executed (see [`UnexecutedCall`]).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unexecuted_calls: u32,
    /// The first [`UNEXECUTED_KEPT`] of those calls, as written.
    #[serde(default, skip_serializing_if = "<[_]>::is_empty")]
    pub unexecuted: Box<[UnexecutedCall]>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// Unexecuted calls kept in detail per model call; the count covers them all.
pub const UNEXECUTED_KEPT: usize = 64;

/// Why a call written in a reply was not executed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NotExecuted {
    /// Written into the text of a reply that also made native calls: the native ones are answered.
    BesideNative,
    /// Past the per-reply cap on tool calls executed.
    OverCap,
    /// Written in reasoning: considered, not made.
    Reasoning,
    /// Quoted in a block quote rather than made.
    Quoted,
    /// Next to words that refuse to make it.
    Refused,
    /// Proposed or put off by the prose around it.
    Deferred,
    /// Said by the prose to have been made already.
    Past,
    /// Offered to the customer as a choice, or followed by a question to them.
    Offered,
    /// Shown as an example or illustration.
    Illustrated,
}

impl From<Withheld> for NotExecuted {
    fn from(w: Withheld) -> NotExecuted {
        match w {
            Withheld::Reasoning => NotExecuted::Reasoning,
            Withheld::Quoted => NotExecuted::Quoted,
            Withheld::Refused => NotExecuted::Refused,
            Withheld::Deferred => NotExecuted::Deferred,
            Withheld::Past => NotExecuted::Past,
            Withheld::Offered => NotExecuted::Offered,
            Withheld::Illustrated => NotExecuted::Illustrated,
        }
    }
}

/// A call the model made that was recorded but not executed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UnexecutedCall {
    /// Tool name as written (`__malformed__:<name>` for a malformed call).
    pub tool: String,
    /// Arguments as written.
    pub args: Value,
    /// How the call was written.
    pub format: CallFormat,
    /// Why it was not executed.
    pub reason: NotExecuted,
}

impl CallRecord {
    /// Whether the call has a GPU utilization reading (a run without GPU telemetry has none).
    pub fn has_gpu_utilization(&self) -> bool {
        self.gpu.as_ref().is_some_and(|g| g.util_mean.is_some())
    }

    /// An `ok` call with no timings or readings yet, to be filled in by the caller.
    pub fn new(node: Node, turn: u32, step: u32) -> CallRecord {
        CallRecord {
            node,
            turn,
            step,
            seed: Opt::NONE,
            started_unix_ms: Opt::NONE,
            wall_s: Opt::NONE,
            timings: Timings::default(),
            outcome: CallOutcome::Ok,
            attempts: Box::default(),
            timeout_s: Opt::NONE,
            call_format: None,
            tool_calls: 0,
            truncated: false,
            context_overflow: false,
            gpu: None,
            predicted: None,
            ttfb_s: Opt::NONE,
            ttft_s: Opt::NONE,
            thinking: None,
            thinking_tokens: Opt::NONE,
            unexecuted_calls: 0,
            unexecuted: Box::default(),
        }
    }

    /// Records a thinking model's reasoning and its estimated share of `eval_count`: the
    /// reasoning's share of the characters of reasoning, text and tool calls.
    pub fn set_thinking(&mut self, message: &Message) {
        let Some(thinking) = message.thinking.as_ref().filter(|t| !t.is_empty()) else {
            return;
        };
        let calls: usize = message
            .tool_calls
            .iter()
            .map(|c| c.name.len() + c.arguments.to_string().len())
            .sum();
        let all = (thinking.len() + message.content.len() + calls) as f64;
        let share = |n: u64| (n as f64 * thinking.len() as f64 / all).round() as u64;
        self.thinking_tokens = self.timings.eval_count.get().map(share).into();
        self.thinking = Some(thinking.clone().into());
    }

    /// Input tokens (`prompt_eval_count`), 0 when absent.
    pub fn input_tokens(&self) -> u64 {
        self.timings.prompt_eval_count.get().unwrap_or(0)
    }

    /// Output tokens (`eval_count`), 0 when absent.
    pub fn output_tokens(&self) -> u64 {
        self.timings.eval_count.get().unwrap_or(0)
    }

    /// Latency as metrics.md defines it: client wall time minus `load_duration`, seconds.
    pub fn latency_s(&self) -> Option<f64> {
        let load = self.timings.load_duration.get().unwrap_or(0) as f64 / 1e9;
        self.wall_s.get().map(|w| (w - load).max(0.0))
    }

    /// Retries made (attempts beyond the first).
    pub fn retries(&self) -> u32 {
        self.attempts.len().saturating_sub(1) as u32
    }
}

/// One finished conversation trial.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConversationRecord {
    /// Record format version.
    pub schema_version: u32,
    /// Digest of the graders that produced the verdict.
    pub grader_digest: String,
    /// Suite name.
    pub suite: String,
    /// Task id.
    pub task: String,
    /// Task category.
    pub category: String,
    /// Model tag.
    pub model: String,
    /// The server API the calls went through (absent in records written before there were
    /// several: Ollama's).
    #[serde(default)]
    pub api: ApiKind,
    /// Trial index (0-based), paired across models.
    pub trial: u32,
    /// Call cap in force (model calls per turn).
    pub call_cap: u32,
    /// Agent or toolless baseline.
    #[serde(default)]
    pub mode: Mode,
    /// Whether the router ran in front of the agent.
    #[serde(default)]
    pub router_in_front: bool,
    /// Tool documentation variant shown (absent in records written before factorial runs: the
    /// reader fills in the run's single variant from the manifest).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_docs: Option<ToolVariant>,
    /// SHA-256 of that variant's file (absent in older and imported records).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_docs_sha256: Option<String>,
    /// Prompt variant shown, when not the suite's own policy (absent: `policy`, as in every record
    /// written before prompt variants).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<PromptVariant>,
    /// SHA-256 of that prompt variant's file (absent with the suite's own policy).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_sha256: Option<String>,
    /// Where the conversation stopped.
    pub status: Status,
    /// How it ended, for the denominators.
    pub outcome: Outcome,
    /// Every model call (router calls in front included, with `node: router`).
    pub calls: Vec<CallRecord>,
    /// Every tool call and its result.
    pub tool_events: Vec<ToolEvent>,
    /// Final reply of each played turn (`None` for a turn cut by the call cap).
    pub replies: Vec<Option<String>>,
    /// The messages exactly as last sent to `/api/chat`, plus the final reply.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub transcript: Vec<RecordedJson>,
    /// End state of the environment (kept as its JSON text, as the transcript is).
    pub end_state: RecordedJson,
    /// The grader's verdict (for transport/protocol failures, a non-passing placeholder).
    pub verdict: Verdict,
    /// Wall time of the conversation, seconds.
    pub wall_s: f64,
    /// Whether the record came from `passk import` (verdict kept as recorded, never re-graded).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub imported: bool,
    /// Whether the trial ended on a transport failure while the server could not be reached at
    /// all (a crashed or restarting server): such a record does not use up one of the trial's
    /// wire tries on resume.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub server_unreachable: bool,
    /// Base URL of the server that played the trial (absent in records written before several
    /// servers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// Conversations that server was asked to play at once (`--parallel`; absent: before it, 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallel: Option<u32>,
}

impl ConversationRecord {
    /// Orchestrator calls only.
    pub fn orchestrator_calls(&self) -> impl Iterator<Item = &CallRecord> {
        self.calls.iter().filter(|c| c.node == Node::Orchestrator)
    }

    /// The prompt variant the conversation was shown (`policy` where the record names none).
    pub fn prompt_variant(&self) -> PromptVariant {
        self.prompt.unwrap_or(PromptVariant::POLICY)
    }

    /// Router calls made in front of the agent.
    pub fn router_calls(&self) -> impl Iterator<Item = &CallRecord> {
        self.calls.iter().filter(|c| c.node == Node::Router)
    }

    /// The key that identifies the trial within a run.
    pub fn key(&self) -> TrialKey {
        TrialKey {
            suite: self.suite.clone(),
            model: self.model.clone(),
            task: self.task.clone(),
            trial: self.trial,
            call_cap: self.call_cap,
            mode: self.mode,
            tool_docs: self.tool_docs,
            router_in_front: self.router_in_front,
            prompt: self.prompt,
        }
    }
}

/// One standalone router call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RouterRecord {
    /// Record format version.
    pub schema_version: u32,
    /// Digest of the graders (router gold labels included).
    pub grader_digest: String,
    /// Model tag.
    pub model: String,
    /// The server API the calls went through (absent in records written before there were
    /// several: Ollama's).
    #[serde(default)]
    pub api: ApiKind,
    /// Message index in the router suite.
    pub index: u32,
    /// Trial index (0-based).
    pub trial: u32,
    /// Gold label.
    pub label: String,
    /// Predicted label (`None`: unparseable).
    #[serde(default)]
    pub predicted: Option<String>,
    /// Whether the prediction equals the label.
    pub correct: bool,
    /// First 200 characters of the reply.
    #[serde(default)]
    pub raw: String,
    /// Sampling temperature used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// How it ended.
    pub outcome: Outcome,
    /// The call.
    pub call: CallRecord,
    /// Whether the record came from `passk import`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub imported: bool,
    /// Whether the trial ended on a transport failure while the server could not be reached at
    /// all (a crashed or restarting server): such a record does not use up one of the trial's
    /// wire tries on resume.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub server_unreachable: bool,
    /// Base URL of the server that played the trial (absent in records written before several
    /// servers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// Conversations that server was asked to play at once (`--parallel`; absent: before it, 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallel: Option<u32>,
}

impl RouterRecord {
    /// The key that identifies the call within a run.
    pub fn key(&self) -> TrialKey {
        TrialKey {
            suite: "router".into(),
            model: self.model.clone(),
            task: self.index.to_string(),
            trial: self.trial,
            call_cap: 1,
            mode: Mode::Agent,
            tool_docs: None,
            router_in_front: false,
            prompt: None,
        }
    }
}

/// Identity of one trial in a run; resume skips keys already on disk.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct TrialKey {
    /// Suite name (`router` for standalone router calls).
    pub suite: String,
    /// Model tag.
    pub model: String,
    /// Task id (router: message index).
    pub task: String,
    /// Trial index.
    pub trial: u32,
    /// Call cap (distinguishes the runs of a budget sweep).
    pub call_cap: u32,
    /// Agent or toolless baseline (both may run in one run).
    #[serde(default)]
    pub mode: Mode,
    /// Tool documentation variant (a factor of a factorial run; `None` for router calls and
    /// imported records that do not say).
    #[serde(default)]
    pub tool_docs: Option<ToolVariant>,
    /// Router in front of the agent (a factor of a factorial run).
    #[serde(default)]
    pub router_in_front: bool,
    /// Prompt variant (a factor of a factorial run; `None`: the suite's own policy).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<PromptVariant>,
}

/// What the run knows about one model (from `/api/show`, `/api/tags` and `/api/ps`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelInfo {
    /// Model tag.
    pub name: String,
    /// Model digest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// Quantization level.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quantization: Option<String>,
    /// Parameter size ("3.1B").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameter_size: Option<String>,
    /// Model family.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub family: Option<String>,
    /// Trained context length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_length: Option<u64>,
    /// Effective context length from `/api/ps`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loaded_context_length: Option<u64>,
    /// Size in memory, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Size in VRAM, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_vram: Option<u64>,
    /// `size_vram < size`: part of the model runs on the CPU (all of it when `size_vram` is 0).
    /// Absent when the server's list of loaded models did not show the model: unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partly_on_cpu: Option<bool>,
    /// Capabilities reported by `/api/show`.
    #[serde(default)]
    pub capabilities: Vec<String>,
    /// The warm-up call (recorded, excluded from metrics).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup: Option<CallRecord>,
}

impl ModelInfo {
    /// `/api/ps` said none of the model is in VRAM (`size_vram` 0): it runs wholly on the CPU.
    pub fn on_cpu_only(&self) -> bool {
        self.is_partly_on_cpu() && self.size_vram == Some(0)
    }

    /// `/api/ps` said part of the model is outside VRAM.
    pub fn is_partly_on_cpu(&self) -> bool {
        self.partly_on_cpu == Some(true)
    }
}

/// GPU identity at run start (absent fields: no NVML).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GpuInfo {
    /// Why there is no GPU telemetry, when there is none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<String>,
    /// Device name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Driver version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver: Option<String>,
    /// Total memory, MiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_mib: Option<u64>,
    /// Where the readings come from: NVML on this machine, or a server's dcgm-exporter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

/// How a report labels the server version of a run whose first server is of `kind` (a
/// [`ServerInfo::kind`]): Ollama's for Ollama, the stub and manifests written before the kind was
/// recorded, the software's own name for the others.
pub fn server_version_label(kind: Option<&str>) -> &'static str {
    match kind {
        None | Some("ollama") | Some("passk-stub") => "Ollama version",
        Some("llama.cpp") => "llama.cpp version",
        Some("vllm") => "vLLM version",
        Some("lmstudio") => "LM Studio version",
        Some(_) => "server version",
    }
}

/// One server of a run, as its preflight found it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerInfo {
    /// Base URL.
    pub url: String,
    /// `/api/version`.
    #[serde(default)]
    pub version: String,
    /// The server software as passk detected it: `ollama`, `passk-stub`, `llama.cpp`, `vllm`,
    /// `lmstudio`, `openai-compatible` (absent in manifests written before it was recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Its GPU, or why passk reads none (a server on another machine).
    #[serde(default)]
    pub gpu: GpuInfo,
    /// What the warm-up and `/api/ps` found of each model on this server.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub models: Vec<ModelInfo>,
    /// When a session last preflighted it, RFC 3339 (UTC).
    #[serde(default)]
    pub checked: String,
}

/// The host that ran passk.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HostInfo {
    /// OS name and version.
    #[serde(default)]
    pub os: String,
    /// CPU brand.
    #[serde(default)]
    pub cpu: String,
    /// Logical cores.
    #[serde(default)]
    pub cores: usize,
    /// Total memory, MiB.
    #[serde(default)]
    pub memory_mib: u64,
}

/// `manifest.json`: what a run was, so that its records can be read without the command line.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// Record format version.
    pub schema_version: u32,
    /// Run id (the directory name).
    pub run_id: String,
    /// passk version.
    pub passk_version: String,
    /// git commit passk was built from, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_commit: Option<String>,
    /// Creation time, RFC 3339 (UTC).
    #[serde(default)]
    pub created: String,
    /// One digest over the graders of every suite played ([`combined_digest`] of `graders`); in
    /// runs written before per-suite graders, the digest every record is stamped with.
    ///
    /// [`combined_digest`]: crate::grade::freeze::combined_digest
    pub grader_digest: String,
    /// The lock's part of each suite played: its digest (stamped on the suite's records), its
    /// grading source and each frozen file (absent in runs written before per-suite graders).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub graders: BTreeMap<String, crate::grade::freeze::SuiteLock>,
    /// Resolved settings (flags merged over the experiment file).
    #[serde(default)]
    pub settings: Value,
    /// The experiment file as given, when one was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experiment_file: Option<String>,
    /// Digests of suite parts that are not graders, by suite.
    #[serde(default)]
    pub suite_digests: BTreeMap<String, crate::domain::SuiteDigests>,
    /// The server's version (`ollama_version` in manifests written before other servers).
    #[serde(
        default,
        alias = "ollama_version",
        skip_serializing_if = "Option::is_none"
    )]
    pub server_version: Option<String>,
    /// Server base URL, the first server of the first session (`ollama_host` in older manifests).
    #[serde(
        default,
        alias = "ollama_host",
        skip_serializing_if = "Option::is_none"
    )]
    pub server_host: Option<String>,
    /// Every server any session of the run played on, in the order first used (absent in
    /// manifests written before several servers: `server_host` alone).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub servers: Vec<ServerInfo>,
    /// Backend: `ollama`, `stub` or `imported`.
    #[serde(default)]
    pub backend: String,
    /// Per model.
    #[serde(default)]
    pub models: Vec<ModelInfo>,
    /// GPU.
    #[serde(default)]
    pub gpu: GpuInfo,
    /// Host.
    #[serde(default)]
    pub host: HostInfo,
    /// For imported runs: where the records came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub imported_from: Option<String>,
    /// For imported runs whose source folder has a `regrade.md`: what it says about the
    /// published figures' verdicts (the import keeps the verdicts as recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_regrade: Option<String>,
    /// SHA-256 of each tool documentation variant played, per suite, by variant name (absent in
    /// older manifests).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tool_docs_digests: BTreeMap<String, BTreeMap<String, String>>,
    /// SHA-256 of each prompt variant played, per suite, by variant name (absent where the run
    /// played the suite's own policy alone, whose digest is `suite_digests.<suite>.policy`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub prompt_digests: BTreeMap<String, BTreeMap<String, String>>,
    /// Documented example values of the tool schemas shown (for counting example-copy calls).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub example_values: Vec<String>,
    /// Per suite, the tool-docs variants that show example values (absent in older manifests:
    /// every variant but `bare` is then taken to show them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub examples_shown: Option<BTreeMap<String, Vec<String>>>,
    /// Every task id of each suite the run plays (the router's: message indices), whatever the
    /// task filter; a record of another task is refused (absent in older manifests: not checked).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub suite_tasks: BTreeMap<String, Vec<String>>,
    /// Tasks that need no tools (left out of steps per correct answer).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tasks_without_tools: Vec<String>,
    /// Free-form notes (warnings raised during the run: partial offload, context overflow).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// The git checkout the suites were read from when the run began (absent outside one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkout: Option<Checkout>,
}

/// The git checkout of a run's data root (see `runner::checkout`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Checkout {
    /// `HEAD`'s commit.
    pub commit: String,
    /// Files under `tasks/` and `graders/` that differ from it (untracked ones included).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub uncommitted: Vec<String>,
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_server_version_is_labelled_with_the_software_the_manifest_names() {
        assert_eq!(super::server_version_label(None), "Ollama version");
        assert_eq!(
            super::server_version_label(Some("passk-stub")),
            "Ollama version"
        );
        assert_eq!(
            super::server_version_label(Some("llama.cpp")),
            "llama.cpp version"
        );
        assert_eq!(super::server_version_label(Some("vllm")), "vLLM version");
        assert_eq!(
            super::server_version_label(Some("openai-compatible")),
            "server version"
        );
    }

    use super::*;
    use crate::analysis::fixtures;
    use crate::wire::chat::NativeCall;
    use crate::wire::ollama::convert;
    use serde_json::json;

    #[test]
    fn a_transcript_entry_is_the_message_as_ollama_serialises_it() {
        let call = NativeCall {
            id: Some("call_1".into()),
            index: Some(0),
            name: "get_order".into(),
            arguments: json!("{\"order_id\": \"A1\"}"),
        };
        let messages = [
            Message::system("policy"),
            Message::user("hi"),
            Message {
                tool_calls: vec![
                    call.clone(),
                    NativeCall {
                        id: None,
                        index: None,
                        ..call
                    },
                ],
                thinking: Some("look it up".into()),
                ..Message::assistant("")
            },
            Message::tool("get_order", Some("call_1".into()), "{}"),
            Message::tool("get_order", None, "{}"),
        ];
        for m in &messages {
            let ollama = serde_json::to_value(convert::message(m)).expect("serialises");
            assert_eq!(transcript_entry(m).to_string(), ollama.to_string(), "{m:?}");
        }
    }

    #[test]
    fn timings_keep_their_field_names_and_absent_figures_stay_absent() {
        let usage = Usage {
            prompt_tokens: Some(100),
            cached_prompt_tokens: Some(60),
            output_tokens: Some(7),
            total_ns: Some(9),
            load_ns: None,
            prefill_ns: Some(3),
            decode_ns: Some(4),
        };
        let t = Timings::of(&usage, Some("stop".into()));
        assert_eq!(
            serde_json::to_value(&t).expect("serialises"),
            json!({"total_duration": 9, "prompt_eval_count": 100, "prompt_eval_duration": 3,
                   "prompt_eval_cached_count": 60, "eval_count": 7, "eval_duration": 4,
                   "done_reason": "stop"})
        );
    }

    #[test]
    fn transcript_messages_are_kept_as_written_and_records_read_whatever_their_key_order() {
        let mut c = fixtures::conversation("m", "t1", 0, true, vec![fixtures::call(10, 2)]);
        c.transcript = vec![json!({"role": "user", "content": "hi"}).into()];
        let line = serde_json::to_string(&Record::Conversation(Box::new(c))).expect("json");
        // As another writer might put it: spaces, an escaped letter, the tag last.
        let message = r#"{"role": "user", "content": "caf\u00e9 </script>"}"#;
        let foreign = line
            .replacen(r#""type":"conversation","#, "", 1)
            .replace(r#"{"role":"user","content":"hi"}"#, message)
            .replacen('}', r#"},"type":"conversation""#, 0)
            .trim_end_matches('}')
            .to_string()
            + r#","type":"conversation"}"#;
        let back: Record = serde_json::from_str(&foreign).expect("reads");
        let Record::Conversation(back) = &back else {
            panic!("a conversation")
        };
        assert_eq!(back.transcript[0].json(), message);
        assert_eq!(back.transcript[0].to_value()["content"], "café </script>");
        let again = serde_json::to_string(&Record::Conversation(back.clone())).expect("json");
        assert!(again.contains(message), "{again}");
        let err = serde_json::from_str::<Record>(r#"{"type":"tally"}"#).expect_err("no such type");
        assert!(
            err.to_string().starts_with("unknown variant `tally`"),
            "{err}"
        );
        let err = serde_json::from_str::<Record>(r#"{"type":"router"}"#).expect_err("incomplete");
        assert!(
            err.to_string()
                .starts_with("missing field `schema_version` at line 1 column"),
            "{err}"
        );
    }

    #[test]
    fn a_record_written_before_the_api_field_reads_as_ollama() {
        let mut c = fixtures::conversation("m", "t1", 0, true, vec![fixtures::call(10, 2)]);
        c.api = ApiKind::Ollama;
        let line = Record::Conversation(Box::new(c.clone()));
        let mut old = serde_json::to_value(&line).expect("serialises");
        assert_eq!(old["api"], "ollama");
        old.as_object_mut().expect("object").remove("api");
        let back: Record = serde_json::from_str(&old.to_string()).expect("an old line reads");
        assert_eq!(back, line);
        assert_eq!(c.calls[0].timings.prompt_eval_count, Some(10).into());
    }

    #[test]
    fn a_manifest_with_the_old_ollama_names_reads_and_writes_the_neutral_ones() {
        let mut old = serde_json::to_value(Manifest::default()).expect("serialises");
        let fields = old.as_object_mut().expect("object");
        fields.insert("ollama_version".into(), json!("0.12.6"));
        fields.insert("ollama_host".into(), json!("http://127.0.0.1:11434"));
        let m: Manifest = serde_json::from_value(old).expect("an old manifest reads");
        assert_eq!(m.server_version.as_deref(), Some("0.12.6"));
        assert_eq!(m.server_host.as_deref(), Some("http://127.0.0.1:11434"));
        let written = serde_json::to_value(&m).expect("serialises");
        assert_eq!(written["server_version"], "0.12.6");
        assert!(written.get("ollama_version").is_none());
    }
}
