//! What the stub "model" answers: the gold trajectory of the conversation it recognises, or one of
//! the scripted misbehaviours.
//!
//! The conversation is identified by its first `user` message; the turn is the number of `user`
//! messages minus one; the position within the turn is how many of the turn's trajectory calls the
//! assistant messages since the last `user` message already made, in order (calls are read back
//! with [`passk::wire::tool_call::extract`], so text calls count too). Everything is derived from
//! the request itself: the stub keeps no conversation state.

use super::messy::{self, MessyShape};
use super::mistakes::{Mistake, MistakePlan, is_id_arg};
use passk::domain::{Task, Trajectory, TrajectoryCall};
use passk::suites::router::RouterSuite;
use passk::wire::api::{ChatMessage, ChatRequest};
use passk::wire::tool_call::{ExtractedCall, extract};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::sync::Arc;

/// What the stub answers (HTTP 409) to a conversation it does not know: a stale stub must be loud,
/// never a plausible reply the report would blame on the model.
pub const UNKNOWN_CONVERSATION: &str = "passk stub: this conversation is not in the suites the stub loaded (no known first user message); the suites changed since it started: restart `passk serve-stub`";

pub use passk::scripted::{WARM_UP_PROMPT, WARM_UP_REPLY};

/// A request the stub cannot place in any conversation it loaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Unknown;

/// How a `TextCalls` model writes its calls into the reply text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TextStyle {
    /// `{"name": .., "arguments": {..}}`.
    Bare,
    /// The same inside a ```json fence.
    Fenced,
    /// The same inside `<tool_call>` tags.
    Tagged,
    /// `parameters` instead of `arguments`.
    Parameters,
    /// The arguments as a JSON-encoded string.
    StringArguments,
    /// Every remaining call of the turn in one reply, back to back.
    Batched,
    /// One of the above per reply, chosen by a hash of the position.
    Mixed,
}

/// How the stub model behaves for one model name.
#[derive(Debug, Clone)]
pub enum Behaviour {
    /// Replays the gold trajectory: a correct harness scores 100%.
    Oracle,
    /// Follows the gold trajectory except where the plan puts a mistake.
    Flawed(Arc<MistakePlan>),
    /// The gold trajectory with every call written into the text.
    TextCalls(TextStyle),
    /// Pastes an argument's JSON schema as its value once per conversation, then recovers.
    SchemaPaste,
    /// Uses a documented example value for an `*_id` argument once per conversation, then recovers.
    ExampleValue,
    /// Calls an invented tool (in the text) once per conversation, then recovers.
    InventedTool,
    /// Never answers: calls a tool on every reply until the call cap.
    NeverAnswer,
    /// The oracle with faults injected at these rates.
    Faulty(super::faults::FaultRates),
    /// The conversation's first call written in a messy shape once, then the oracle.
    Messy(MessyShape),
    /// The oracle, but on a share of conversations that depends on the tool docs shown, its first
    /// call with an argument goes wrong until the call cap ([`super::docs_reactive`]).
    DocsReactive(super::docs_reactive::DocsRates),
}

/// One conversation the stub can play.
#[derive(Debug, Clone)]
struct Conversation {
    gold: Trajectory,
}

/// Gold trajectories and router labels, keyed the way the stub recognises requests.
#[derive(Debug, Clone, Default)]
pub struct ScriptBook {
    conversations: HashMap<String, Conversation>,
    router_prompts: Vec<String>,
    labels: HashMap<String, String>,
    example_values: HashMap<String, String>,
}

impl ScriptBook {
    /// An empty book: every conversation is unknown.
    pub fn new() -> ScriptBook {
        ScriptBook::default()
    }

    /// The book for a store-like suite's tasks and, optionally, the router suite.
    pub fn from_suites(tasks: &[Task], router: Option<&RouterSuite>) -> ScriptBook {
        let mut book = ScriptBook::new();
        for t in tasks {
            if let Some(opening) = t.customer.first() {
                book.add_conversation(opening, &t.gold, &t.customer, &t.intents);
            }
        }
        if let Some(r) = router {
            let pairs: Vec<(String, String)> = r
                .messages
                .iter()
                .map(|m| (m.text.clone(), m.label.clone()))
                .collect();
            book.add_router(&r.prompt, &pairs);
        }
        book
    }

    /// Adds a conversation: its opening customer message, gold trajectory, every customer message
    /// and the intent label of each (for router calls in front of the agent).
    pub fn add_conversation(
        &mut self,
        opening_customer_message: &str,
        gold: &Trajectory,
        customer_messages: &[String],
        intents: &[String],
    ) -> &mut ScriptBook {
        self.conversations.insert(
            opening_customer_message.trim().to_string(),
            Conversation { gold: gold.clone() },
        );
        for (m, label) in customer_messages.iter().zip(intents) {
            self.labels
                .entry(m.trim().to_string())
                .or_insert_with(|| label.clone());
        }
        self
    }

    /// Adds a router prompt and its labelled messages (text, label).
    pub fn add_router(
        &mut self,
        router_prompt: &str,
        messages: &[(String, String)],
    ) -> &mut ScriptBook {
        let prompt = router_prompt.trim().to_string();
        if !self.router_prompts.contains(&prompt) {
            self.router_prompts.push(prompt);
        }
        for (text, label) in messages {
            self.labels.insert(text.trim().to_string(), label.clone());
        }
        self
    }

    /// Sets the documented example values (parameter name, value) used by `ExampleValue`.
    pub fn set_example_values(&mut self, values: &[(String, String)]) -> &mut ScriptBook {
        self.example_values = values.iter().cloned().collect();
        self
    }

    /// Number of conversations known.
    pub fn len(&self) -> usize {
        self.conversations.len()
    }

    /// Whether no conversation is known.
    pub fn is_empty(&self) -> bool {
        self.conversations.is_empty()
    }

    /// The example value the stub uses for a parameter.
    pub(crate) fn example_value(&self, param: &str) -> String {
        self.example_values
            .get(param)
            .cloned()
            .unwrap_or_else(|| format!("EXAMPLE-{}", param.to_uppercase()))
    }
}

/// The stub model's reply before timings and faults.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Reply {
    /// Reply text.
    pub content: String,
    /// Native tool calls (name, arguments).
    pub calls: Vec<(String, Value)>,
    /// The `thinking` field, when the reply has one.
    pub thinking: Option<String>,
}

impl Reply {
    fn text(s: impl Into<String>) -> Reply {
        Reply {
            content: s.into(),
            calls: Vec::new(),
            thinking: None,
        }
    }

    fn native(call: &TrajectoryCall) -> Reply {
        Reply {
            content: String::new(),
            calls: vec![(call.tool.clone(), Value::Object(call.args.clone()))],
            thinking: None,
        }
    }
}

/// Where a request stands in its conversation.
struct Position<'a> {
    turn: usize,
    calls: &'a [TrajectoryCall],
    reply: &'a str,
    /// Trajectory calls of this turn already made.
    done: usize,
    /// Every call the assistant made in the conversation so far.
    history: Vec<ExtractedCall>,
    known: Vec<String>,
    toolless: bool,
}

/// The reply of `behaviour` to `req`, or `Unknown` for a conversation the book does not hold.
pub(crate) fn respond(
    book: &ScriptBook,
    behaviour: &Behaviour,
    req: &ChatRequest,
) -> Result<Reply, Unknown> {
    let messages = &req.messages;
    if let Some(label) = router_label(book, messages) {
        return label.map(Reply::text).ok_or(Unknown);
    }
    let Some(opening) = messages.iter().find(|m| m.role == "user") else {
        return Err(Unknown);
    };
    if opening.content.trim() == WARM_UP_PROMPT {
        return Ok(Reply::text(WARM_UP_REPLY));
    }
    let Some(conv) = book.conversations.get(opening.content.trim()) else {
        // A model that never answers loops on any conversation that offers tools.
        let first_tool = req
            .tools
            .iter()
            .flatten()
            .find_map(|t| t.pointer("/function/name").and_then(Value::as_str));
        return match (behaviour, first_tool) {
            (Behaviour::NeverAnswer, Some(tool)) => Ok(Reply {
                content: String::new(),
                calls: vec![(tool.to_string(), json!({}))],
                thinking: None,
            }),
            _ => Err(Unknown),
        };
    };
    let mut trajectory = &conv.gold;
    let mut mistake = None;
    if let Behaviour::Flawed(plan) = behaviour {
        let trial = trial_of(req);
        if let Some(task) = plan.task_of(&opening.content) {
            mistake = plan.mistake(task, trial);
            if let Some(Mistake::NearMiss { index, .. }) = mistake
                && let Some(t) = plan.near_miss(task, *index)
            {
                trajectory = t;
            }
        }
    }
    let Some(pos) = position(trajectory, req) else {
        return Err(Unknown);
    };
    if pos.toolless {
        return Ok(Reply::text(pos.reply));
    }
    Ok(match behaviour {
        Behaviour::Oracle | Behaviour::Faulty(_) => oracle(&pos),
        Behaviour::TextCalls(style) => text_calls(&pos, *style, opening.content.len()),
        Behaviour::SchemaPaste => schema_paste(&pos, req).unwrap_or_else(|| oracle(&pos)),
        Behaviour::ExampleValue => example_value(&pos, book).unwrap_or_else(|| oracle(&pos)),
        Behaviour::InventedTool => invented_tool(&pos).unwrap_or_else(|| oracle(&pos)),
        Behaviour::NeverAnswer => never_answer(&pos),
        Behaviour::Messy(shape) => messy_once(&pos, *shape, req),
        Behaviour::DocsReactive(rates) => {
            docs_reactive(&pos, trajectory, rates, req, &opening.content)
        }
        Behaviour::Flawed(_) => match mistake {
            Some(Mistake::LoopCap) => never_answer(&pos),
            Some(Mistake::SchemaPaste { .. }) => {
                schema_paste(&pos, req).unwrap_or_else(|| oracle(&pos))
            }
            Some(Mistake::ExampleValue { .. }) => {
                example_value(&pos, book).unwrap_or_else(|| oracle(&pos))
            }
            Some(Mistake::NearMiss { .. }) | None => oracle(&pos),
        },
    })
}

/// The trial a request belongs to (from `options.seed`; 0 when absent).
fn trial_of(req: &ChatRequest) -> u32 {
    req.options
        .seed
        .and_then(passk::seed::CallSeed::decode)
        .map_or(0, |s| s.trial)
}

/// When the request is a router call: the label of its last user message (`None` inside when the
/// message is not one the book knows).
fn router_label(book: &ScriptBook, messages: &[ChatMessage]) -> Option<Option<String>> {
    let is_router = messages
        .iter()
        .any(|m| m.role == "system" && book.router_prompts.iter().any(|p| p == m.content.trim()));
    if !is_router {
        return None;
    }
    let last = messages.iter().rev().find(|m| m.role == "user")?;
    Some(book.labels.get(last.content.trim()).cloned())
}

fn position<'a>(trajectory: &'a Trajectory, req: &ChatRequest) -> Option<Position<'a>> {
    let messages = &req.messages;
    let users = messages.iter().filter(|m| m.role == "user").count();
    let turn = users.checked_sub(1)?;
    let t = trajectory.turns.get(turn)?;
    let known: Vec<String> = req
        .tools
        .iter()
        .flatten()
        .filter_map(|t| {
            t.pointer("/function/name")
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .collect();
    let last_user = messages.iter().rposition(|m| m.role == "user").unwrap_or(0);
    let mut done = 0;
    let mut history = Vec::new();
    for (i, m) in messages
        .iter()
        .enumerate()
        .filter(|(_, m)| m.role == "assistant")
    {
        for call in extract(&passk::wire::ollama::convert::neutral_message(m), &known) {
            if i > last_user && t.calls.get(done).is_some_and(|g| same_call(g, &call)) {
                done += 1;
            }
            history.push(call);
        }
    }
    Some(Position {
        turn,
        calls: &t.calls,
        reply: &t.reply,
        done,
        history,
        known,
        toolless: req.tools.as_ref().is_none_or(Vec::is_empty),
    })
}

fn same_call(gold: &TrajectoryCall, call: &ExtractedCall) -> bool {
    call.name == gold.tool && call.arguments.as_object() == Some(&gold.args)
}

fn next_call<'a>(pos: &Position<'a>) -> Option<&'a TrajectoryCall> {
    pos.calls.get(pos.done)
}

fn oracle(pos: &Position<'_>) -> Reply {
    match next_call(pos) {
        Some(call) => Reply::native(call),
        None => Reply::text(pos.reply),
    }
}

fn text_calls(pos: &Position<'_>, style: TextStyle, salt: usize) -> Reply {
    let Some(call) = next_call(pos) else {
        return Reply::text(pos.reply);
    };
    let style = match style {
        TextStyle::Mixed => {
            const STYLES: [TextStyle; 6] = [
                TextStyle::Bare,
                TextStyle::Fenced,
                TextStyle::Tagged,
                TextStyle::Parameters,
                TextStyle::StringArguments,
                TextStyle::Batched,
            ];
            let h =
                super::faults::mix((salt as u64) << 16 | (pos.turn as u64) << 8 | pos.done as u64);
            STYLES[(h % STYLES.len() as u64) as usize]
        }
        s => s,
    };
    let args = Value::Object(call.args.clone());
    let content = match style {
        TextStyle::Fenced => format!(
            "```json\n{}\n```",
            json!({"name": call.tool, "arguments": args})
        ),
        TextStyle::Tagged => format!(
            "<tool_call>\n{}\n</tool_call>",
            json!({"name": call.tool, "arguments": args})
        ),
        TextStyle::Parameters => json!({"name": call.tool, "parameters": args}).to_string(),
        TextStyle::StringArguments => {
            json!({"name": call.tool, "arguments": args.to_string()}).to_string()
        }
        TextStyle::Batched => pos.calls[pos.done..]
            .iter()
            .map(|c| {
                json!({"name": c.tool, "arguments": Value::Object(c.args.clone())}).to_string()
            })
            .collect::<Vec<_>>()
            .join("\n"),
        TextStyle::Bare | TextStyle::Mixed => {
            json!({"name": call.tool, "arguments": args}).to_string()
        }
    };
    Reply::text(content)
}

/// The conversation's first call in a messy shape; the oracle once the model has made any call.
fn messy_once(pos: &Position<'_>, shape: MessyShape, req: &ChatRequest) -> Reply {
    match next_call(pos) {
        Some(call) if pos.history.is_empty() && pos.turn == 0 => {
            messy::reply(shape, call, req.tools.as_deref().unwrap_or_default())
        }
        _ => oracle(pos),
    }
}

/// The next gold call with its first argument replaced by that argument's schema, once.
fn schema_paste(pos: &Position<'_>, req: &ChatRequest) -> Option<Reply> {
    let pasted_before = pos.history.iter().any(|c| {
        c.arguments
            .as_object()
            .is_some_and(|a| a.values().any(|v| v.is_object() || v.is_array()))
    });
    if pasted_before {
        return None;
    }
    let call = next_call(pos)?;
    let arg = call.args.keys().next()?;
    let schema = req
        .tools
        .iter()
        .flatten()
        .find(|t| t.pointer("/function/name").and_then(Value::as_str) == Some(call.tool.as_str()))
        .and_then(|t| {
            t.pointer(&format!("/function/parameters/properties/{arg}"))
                .cloned()
        })
        .unwrap_or_else(|| json!({"type": "string"}));
    let mut args = call.args.clone();
    args.insert(arg.clone(), schema);
    Some(Reply {
        content: String::new(),
        calls: vec![(call.tool.clone(), Value::Object(args))],
        thinking: None,
    })
}

/// The next gold call with an `*_id` argument set to its documented example value, once.
fn example_value(pos: &Position<'_>, book: &ScriptBook) -> Option<Reply> {
    let used_before = pos.history.iter().any(|c| {
        c.arguments.as_object().is_some_and(|a| {
            a.iter()
                .any(|(k, v)| is_id_arg(k) && v.as_str() == Some(book.example_value(k).as_str()))
        })
    });
    if used_before {
        return None;
    }
    let call = next_call(pos)?;
    let arg = call.args.keys().find(|a| is_id_arg(a))?;
    let value = book.example_value(arg);
    let mut args: Map<String, Value> = call.args.clone();
    args.insert(arg.clone(), Value::String(value));
    Some(Reply {
        content: String::new(),
        calls: vec![(call.tool.clone(), Value::Object(args))],
        thinking: None,
    })
}

/// A text call to a tool that does not exist, once per conversation.
fn invented_tool(pos: &Position<'_>) -> Option<Reply> {
    if pos.history.iter().any(|c| !pos.known.contains(&c.name)) {
        return None;
    }
    let call = next_call(pos)?;
    let mut name = format!("{}_details", call.tool);
    while pos.known.contains(&name) {
        name.push('x');
    }
    Some(Reply::text(
        json!({"name": name, "arguments": Value::Object(call.args.clone())}).to_string(),
    ))
}

/// A tool call on every reply: the next gold call, or the turn's first, or the first tool offered.
/// The oracle, except at the conversation's mistaken position when the docs shown give it a
/// mistake: there the mistaken call, again on every reply (it never matches the gold call, so the
/// position does not move on).
fn docs_reactive(
    pos: &Position<'_>,
    gold: &Trajectory,
    rates: &super::docs_reactive::DocsRates,
    req: &ChatRequest,
    opening: &str,
) -> Reply {
    use super::docs_reactive::{mistaken_call, mistaken_position, variant_of};
    let mistake = rates.mistake(opening, trial_of(req), variant_of(req));
    match (mistake, next_call(pos)) {
        (Some(m), Some(call)) if mistaken_position(gold) == Some((pos.turn, pos.done)) => Reply {
            content: String::new(),
            calls: vec![mistaken_call(m, &call.tool, &call.args, req)],
            thinking: None,
        },
        _ => oracle(pos),
    }
}

fn never_answer(pos: &Position<'_>) -> Reply {
    if let Some(call) = next_call(pos).or_else(|| pos.calls.first()) {
        return Reply::native(call);
    }
    let tool = pos
        .known
        .first()
        .cloned()
        .unwrap_or_else(|| "find_customer".to_string());
    Reply {
        content: String::new(),
        calls: vec![(tool, json!({}))],
        thinking: None,
    }
}
