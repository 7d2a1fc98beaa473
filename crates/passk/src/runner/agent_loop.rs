//! One conversation trial (docs/architecture.md, "One conversation trial"), and one standalone
//! router call.
//!
//! Per customer message: call the model, execute the tool calls it made in order (at most
//! [`TOOL_CALLS_PER_REPLY`] per reply), send each result back as a `tool` message, and repeat until the model answers without a tool call or the turn
//! reaches the call cap. Tool calls come natively or as text (recovered by `wire::tool_call`); a
//! call-shaped text that does not parse is answered with the expected shape and counts as rejected.
//! A call that fails for good on the wire ends the conversation as a transport or protocol failure:
//! it is never graded, so it can never be blamed on the model. So does a tool server that crashes
//! or hangs (an MCP suite's), as a tool server failure.

use crate::domain::{
    Domain, Environment, Evidence, PromptVariant, Shown, Task, ToolOutcome, ToolVariant,
};
use crate::runner::context::{ContextUse, PromptCounts, history_bytes};
use crate::runner::record::{
    CallRecord, ConversationRecord, Mode, Node, NotExecuted, Outcome, RecordedJson, RouterRecord,
    SCHEMA_VERSION, Status, Timings, UNEXECUTED_KEPT, UnexecutedCall, cut_calls, transcript_entry,
};
use crate::runner::settings::RunSettings;
use crate::runner::telemetry::Telemetry;
use crate::seed::CallSeed;
use crate::suites::router::{RouterMessage, RouterSuite};
use crate::trace::{CallFormat, ToolEvent, Verdict};
use crate::wire::ChatApi;
use crate::wire::chat::{CallOptions, CallRequest, Message, Reply, Role};
use crate::wire::outcome::CallOutcome;
use crate::wire::retry::AttemptWatch;
use crate::wire::tool_call::{self, ExtractedCall, Extraction};
use serde_json::Value;
use std::time::Instant;

/// Prefix of a rejected tool result as the model sees it.
pub const ERROR_PREFIX: &str = "error: ";

/// Tool calls executed per reply. The rest are recorded as not executed (`unexecuted_calls`) and
/// the model gets one error result saying how many were not run.
pub const TOOL_CALLS_PER_REPLY: usize = 8;

/// Everything needed to play trials of one model.
pub struct Player<'a> {
    /// The server's chat API (Ollama's, the stub's, or any other behind the seam).
    pub client: &'a dyn ChatApi,
    /// Model tag.
    pub model: &'a str,
    /// Resolved settings.
    pub settings: &'a RunSettings,
    /// GPU and server telemetry.
    pub telemetry: &'a Telemetry,
    /// Digest stamped on every record.
    pub grader_digest: &'a str,
    /// The router, when it runs in front of the agent.
    pub router_in_front: Option<&'a RouterSuite>,
    /// How the server counts prompt tokens, and the conversation openings the run has seen.
    pub prompt_counts: &'a PromptCounts,
    /// Hears of each failed attempt of a model call as it fails (the progress display's retries).
    pub watch: Option<AttemptWatch<'a>>,
}

/// Outcome of one model call: its record and, when ok, the reply.
struct Called {
    record: CallRecord,
    reply: Option<Reply>,
}

impl Player<'_> {
    async fn call(&self, request: &CallRequest, node: Node, turn: u32, step: u32) -> Called {
        let mark = self.telemetry.begin();
        let result = self.client.chat_watched(request, self.watch).await;
        let mut record = CallRecord::new(node, turn, step);
        record.seed = request.options.seed.into();
        record.started_unix_ms = Some(result.started_unix_ms).into();
        record.wall_s = Some(result.wall_s).into();
        record.outcome = result.outcome;
        record.attempts = result.attempts.into();
        record.timeout_s = Some(self.settings.timeout_s).into();
        record.ttfb_s = result.ttfb_s.into();
        record.ttft_s = result.first_token_s.into();
        record.gpu = self.telemetry.finish(mark).map(Box::new);
        let reply = result.reply.filter(|_| result.outcome == CallOutcome::Ok);
        if let Some(r) = &reply {
            record.timings = Timings::of(&r.usage, r.done_reason.clone());
            record.truncated = r.truncated();
            record.set_thinking(&r.message);
        }
        Called { record, reply }
    }

    fn options(&self, temperature: f64, num_predict: i64, seed: i64) -> CallOptions {
        CallOptions {
            temperature: Some(temperature),
            seed: Some(seed),
            context_window: Some(self.settings.num_ctx),
            max_output_tokens: Some(num_predict),
            ..CallOptions::default()
        }
    }

    fn request(
        &self,
        messages: Vec<Message>,
        tools: Option<Vec<Value>>,
        options: CallOptions,
    ) -> CallRequest {
        CallRequest {
            model: self.model.to_string(),
            messages,
            tools,
            stream: self.settings.stream,
            options,
            keep_loaded_for: Some(self.settings.keep_alive.clone()),
            think: self.settings.think,
            format: None,
        }
    }

    /// Classifies one customer message with the router; returns the call and the label.
    async fn route(
        &self,
        router: &RouterSuite,
        text: &str,
        seed: CallSeed,
        turn: u32,
    ) -> (CallRecord, Option<String>, String) {
        let messages = vec![Message::system(&router.prompt), Message::user(text)];
        let options = self.options(
            self.settings.router_temperature,
            self.settings.router_num_predict,
            seed.encode(),
        );
        let request = self.request(messages, None, options);
        let mut called = self.call(&request, Node::Router, turn, 0).await;
        let reply = called
            .reply
            .as_ref()
            .map(|r| r.message.content.clone())
            .unwrap_or_default();
        let predicted = router.parse_label(&reply);
        called.record.predicted = predicted.clone().map(Into::into);
        (called.record, predicted, reply)
    }

    /// Plays one standalone router call.
    pub async fn play_router(
        &self,
        router: &RouterSuite,
        message: &RouterMessage,
        trial: u32,
    ) -> RouterRecord {
        let seed = CallSeed {
            base: self.settings.base_seed,
            trial,
            turn: 0,
            step: 0,
        };
        let (call, predicted, reply) = self.route(router, &message.text, seed, 0).await;
        let outcome =
            wire_outcome(call.outcome).unwrap_or(if predicted.as_deref() == Some(&message.label) {
                Outcome::Pass
            } else {
                Outcome::ModelFail
            });
        RouterRecord {
            schema_version: SCHEMA_VERSION,
            grader_digest: self.grader_digest.to_string(),
            model: self.model.to_string(),
            api: self.client.kind(),
            index: message.index,
            trial,
            label: message.label.clone(),
            correct: outcome == Outcome::Pass,
            predicted,
            raw: reply.chars().take(200).collect(),
            temperature: Some(self.settings.router_temperature),
            outcome,
            call,
            imported: false,
            server_unreachable: false,
            host: None,
            parallel: None,
        }
    }

    /// Plays one conversation trial of `task` in `mode` and grades it.
    pub async fn play(
        &self,
        domain: &dyn Domain,
        task: &Task,
        trial: u32,
        call_cap: u32,
        mode: Mode,
        shown: Shown,
    ) -> ConversationRecord {
        let started = Instant::now();
        let tool_docs = shown.tool_docs;
        let opening = format!("{}\n{}\n{tool_docs:?}\n{mode:?}", self.model, domain.name());
        let mut t = Trial::new(domain, shown, trial, call_cap, mode, opening);
        for (turn, text) in task.customer.iter().enumerate() {
            if !self.play_turn(&mut t, turn as u32, text).await {
                break;
            }
        }
        self.finish(t, task, mode, started)
    }

    /// Plays one customer message to the model's answer; false when the conversation stops here.
    async fn play_turn(&self, t: &mut Trial<'_>, turn: u32, text: &str) -> bool {
        if let Some(router) = self.router_in_front {
            let seed = t.seed(self.settings, turn, 0);
            let (call, predicted, _) = self.route(router, text, seed, turn).await;
            let failed = wire_outcome(call.outcome);
            t.calls.push(call);
            if let Some(o) = failed {
                t.aborted = Some(o);
                return false;
            }
            let label = predicted.unwrap_or_else(|| "unknown".into());
            t.messages
                .push(Message::system(format!("intent router: {label}")));
        }
        t.messages.push(Message::user(text));
        for step in 0.. {
            if step >= t.call_cap {
                t.status = Status::LoopCap;
                t.replies.push(None);
                return false;
            }
            match self.model_step(t, turn, step).await {
                Step::Answered => return true,
                Step::CallsMade => {}
                Step::Stopped => return false,
            }
        }
        false
    }

    /// One model call within a turn: the call, its record, and the answers to its tool calls.
    async fn model_step(&self, t: &mut Trial<'_>, turn: u32, step: u32) -> Step {
        let options = self.options(
            self.settings.temperature,
            self.settings.num_predict,
            t.seed(self.settings, turn, step).encode(),
        );
        let tools = (!t.toolless).then(|| t.tools.clone());
        let mut request = self.request(t.messages.clone(), tools, options);
        if self.settings.force_first_tool_call && step == 0 {
            request.format = request
                .tools
                .as_deref()
                .and_then(crate::runner::forced_call::one_tool_call);
        }
        let mut called = self.call(&request, Node::Orchestrator, turn, step).await;
        if let Some(o) = wire_outcome(called.record.outcome) {
            t.calls.push(called.record);
            t.aborted = Some(o);
            return Step::Stopped;
        }
        let cut = called.reply.as_ref().is_some_and(|r| r.truncated());
        let message = called.reply.map(|r| r.message).unwrap_or_default();
        let record = &mut called.record;
        let sent = history_bytes(&request.messages, request.tools.as_deref());
        t.context
            .observe(record, self.settings.num_ctx, self.prompt_counts, sent);
        let mut extraction = if t.toolless {
            Extraction::default()
        } else {
            tool_call::extract_reply(&message, &t.tool_names, cut)
        };
        let (run, over) = split_at_cap(std::mem::take(&mut extraction.calls));
        // Text calls past the ones kept whole are past the cap too: counted, not held.
        let over_count = over.len() + extraction.past_kept.calls;
        record.tool_calls = run.len() as u32;
        record.call_format = summarise_format(run.iter().chain(&over).map(|c| c.format));
        note_unexecuted(record, &extraction, &over, over_count);
        t.calls.push(called.record);
        t.messages.push(assistant_echo(&message));
        if run.is_empty() {
            t.replies.push(Some(message.content));
            return Step::Answered;
        }
        for call in &run {
            t.answer(call, turn, step);
            if t.aborted.is_some() {
                return Step::Stopped;
            }
        }
        t.messages.extend(over_cap_notice(&over, over_count));
        Step::CallsMade
    }

    /// Grades the played trial (unless a call failed for good) and builds its record.
    fn finish(
        &self,
        t: Trial<'_>,
        task: &Task,
        mode: Mode,
        started: Instant,
    ) -> ConversationRecord {
        let end_state = t.env.snapshot();
        let mut status = t.status;
        let aborted = t
            .aborted
            .or_else(|| t.env.server_failure().map(|_| Outcome::ToolServerFail));
        let (outcome, verdict) = match aborted {
            Some(o) => {
                status = Status::Aborted;
                let mut verdict = not_graded(o);
                verdict.reasons.extend(t.env.server_failure());
                (o, verdict)
            }
            None => {
                let model_calls = t
                    .calls
                    .iter()
                    .filter(|c| c.node == Node::Orchestrator)
                    .count() as u32;
                let cut = cut_calls(&t.calls);
                let evidence = Evidence {
                    end_state: &end_state,
                    replies: &t.replies,
                    tool_events: &t.events,
                    hit_call_cap: status == Status::LoopCap,
                    model_calls,
                    toolless: t.toolless,
                    cut: &cut,
                };
                let verdict = t.domain.grade(task, &evidence);
                let outcome = if verdict.passed {
                    Outcome::Pass
                } else {
                    Outcome::ModelFail
                };
                (outcome, verdict)
            }
        };
        let transcript = t
            .messages
            .iter()
            .map(|m| transcript_entry(m).into())
            .collect();
        ConversationRecord {
            schema_version: SCHEMA_VERSION,
            grader_digest: self.grader_digest.to_string(),
            suite: t.domain.name().to_string(),
            task: task.id.clone(),
            category: task.category.clone(),
            model: self.model.to_string(),
            api: self.client.kind(),
            trial: t.trial,
            call_cap: t.call_cap,
            mode,
            router_in_front: self.router_in_front.is_some(),
            tool_docs: Some(t.tool_docs),
            tool_docs_sha256: Some(t.domain.digests(t.tool_docs).tools),
            prompt: (!t.prompt.is_policy()).then_some(t.prompt),
            prompt_sha256: (!t.prompt.is_policy())
                .then(|| t.domain.presentation().prompt_digest(t.prompt).to_string()),
            status,
            outcome,
            calls: t.calls,
            tool_events: t.events,
            replies: t.replies,
            transcript,
            end_state: RecordedJson::from(&end_state),
            verdict,
            wall_s: started.elapsed().as_secs_f64(),
            imported: false,
            server_unreachable: false,
            host: None,
            parallel: None,
        }
    }
}

/// How a model step left its turn.
enum Step {
    /// The model answered the customer.
    Answered,
    /// The model made tool calls; they were answered and the turn goes on.
    CallsMade,
    /// A call failed for good: the conversation stops.
    Stopped,
}

/// One conversation trial while it is played.
struct Trial<'d> {
    domain: &'d dyn Domain,
    tool_docs: ToolVariant,
    prompt: PromptVariant,
    trial: u32,
    call_cap: u32,
    toolless: bool,
    tools: Vec<Value>,
    tool_names: Vec<String>,
    env: Box<dyn Environment>,
    messages: Vec<Message>,
    calls: Vec<CallRecord>,
    events: Vec<ToolEvent>,
    replies: Vec<Option<String>>,
    status: Status,
    aborted: Option<Outcome>,
    context: ContextUse,
}

impl<'d> Trial<'d> {
    fn new(
        domain: &'d dyn Domain,
        shown: Shown,
        trial: u32,
        call_cap: u32,
        mode: Mode,
        opening: String,
    ) -> Trial<'d> {
        let tools = domain.tools(shown.tool_docs).to_vec();
        let tool_names = tools
            .iter()
            .filter_map(|t| {
                t.pointer("/function/name")
                    .and_then(Value::as_str)
                    .map(String::from)
            })
            .collect();
        Trial {
            domain,
            tool_docs: shown.tool_docs,
            prompt: shown.prompt,
            trial,
            call_cap,
            toolless: mode == Mode::Toolless,
            tools,
            tool_names,
            env: domain.new_environment(),
            messages: vec![Message::system(domain.system_prompt(shown.prompt))],
            calls: Vec::new(),
            events: Vec::new(),
            replies: Vec::new(),
            status: Status::Ok,
            aborted: None,
            context: ContextUse::new(opening),
        }
    }

    fn seed(&self, settings: &RunSettings, turn: u32, step: u32) -> CallSeed {
        CallSeed {
            base: settings.base_seed,
            trial: self.trial,
            turn,
            step,
        }
    }

    /// Runs one call (or rejects it unrun when it carries an error) and sends back the result.
    fn answer(&mut self, call: &ExtractedCall, turn: u32, step: u32) {
        let (ok, content, error) = match &call.error {
            Some(hint) => (false, format!("{ERROR_PREFIX}{hint}"), Some(hint.clone())),
            None if call.format == CallFormat::Malformed => {
                let hint = "malformed tool call".to_string();
                (false, format!("{ERROR_PREFIX}{hint}"), Some(hint))
            }
            None => match self.env.execute(&call.name, &call.arguments) {
                ToolOutcome::Ok(text) => (true, text, None),
                ToolOutcome::Rejected(e) => (false, format!("{ERROR_PREFIX}{e}"), Some(e)),
                ToolOutcome::ServerFailed(e) => {
                    self.aborted = Some(Outcome::ToolServerFail);
                    (false, format!("{ERROR_PREFIX}{e}"), Some(e))
                }
            },
        };
        self.events.push(ToolEvent {
            turn,
            step,
            tool: call.name.clone(),
            args: call.arguments.clone(),
            ok,
            error,
            format: Some(call.format),
        });
        self.messages
            .push(Message::tool(call.name.clone(), call.id.clone(), content));
    }
}

/// The calls of a reply split at [`TOOL_CALLS_PER_REPLY`]: those to run, those past the cap.
fn split_at_cap(mut calls: Vec<ExtractedCall>) -> (Vec<ExtractedCall>, Vec<ExtractedCall>) {
    let over = calls.split_off(calls.len().min(TOOL_CALLS_PER_REPLY));
    (calls, over)
}

/// The one error result telling the model that the `count` calls past the cap were not run.
fn over_cap_notice(over: &[ExtractedCall], count: usize) -> Option<Message> {
    let first = over.first()?;
    Some(Message::tool(
        first.name.clone(),
        first.id.clone(),
        format!(
            "{ERROR_PREFIX}{} more tool calls in this reply were not run: at most \
             {TOOL_CALLS_PER_REPLY} run per reply. Call the rest in your next reply.",
            count
        ),
    ))
}

/// Records the calls of a reply that were not executed: the count (`over_count` past the cap,
/// of which `over` are held), and the first ones in detail.
fn note_unexecuted(
    record: &mut CallRecord,
    extraction: &Extraction,
    over: &[ExtractedCall],
    over_count: usize,
) {
    let beside = &extraction.beside_native;
    let withheld = &extraction.withheld;
    let past = extraction.past_kept;
    let count = beside.len() + past.beside_native + withheld.len() + past.withheld + over_count;
    record.unexecuted_calls = u32::try_from(count).unwrap_or(u32::MAX);
    let tagged = beside
        .iter()
        .map(|c| (c, NotExecuted::BesideNative))
        .chain(withheld.iter().map(|(c, why)| (c, NotExecuted::from(*why))))
        .chain(over.iter().map(|c| (c, NotExecuted::OverCap)));
    record.unexecuted = tagged
        .take(UNEXECUTED_KEPT)
        .map(|(c, reason)| UnexecutedCall {
            tool: c.name.clone(),
            args: c.arguments.clone(),
            format: c.format,
            reason,
        })
        .collect();
}

/// The placeholder verdict of a conversation a wire failure ended.
fn not_graded(o: Outcome) -> Verdict {
    Verdict {
        passed: false,
        reasons: vec![format!(
            "not graded: the conversation ended on a {} failure",
            describe(o)
        )],
        ..Verdict::default()
    }
}

/// The conversation outcome a failed call forces, `None` for an ok call.
fn wire_outcome(outcome: CallOutcome) -> Option<Outcome> {
    match outcome {
        CallOutcome::Ok => None,
        CallOutcome::Transport => Some(Outcome::TransportFail),
        CallOutcome::Protocol => Some(Outcome::ProtocolFail),
    }
}

fn describe(o: Outcome) -> &'static str {
    match o {
        Outcome::TransportFail => "transport",
        Outcome::ProtocolFail => "protocol",
        Outcome::ToolServerFail => "tool server",
        Outcome::Pass | Outcome::ModelFail => "model",
    }
}

/// The format of a reply's calls: native if any was native, else text, else malformed.
fn summarise_format(formats: impl Iterator<Item = CallFormat>) -> Option<CallFormat> {
    formats.min()
}

/// The assistant message as it goes back into the history: what the model said, with its native
/// tool calls kept (ids and indexes included) so the next request matches what the server sent.
fn assistant_echo(message: &Message) -> Message {
    Message {
        role: Role::Assistant,
        content: message.content.clone(),
        tool_calls: message.tool_calls.clone(),
        // Ollama's docs send a thinking model's reasoning back with its message.
        thinking: message.thinking.clone(),
        ..Message::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::scripted_api::Scripted;
    use crate::suites::store::{StoreSuite, load_store};
    use crate::wire::chat::NativeCall;
    use crate::wire::tool_call::finds::CALLS_KEPT;
    use serde_json::json;

    fn store() -> StoreSuite {
        load_store(std::path::Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../.."
        )))
        .expect("store suite")
    }

    fn native(name: &str, arguments: Value) -> NativeCall {
        NativeCall {
            id: Some(format!("call_{name}")),
            name: name.into(),
            arguments,
            ..NativeCall::default()
        }
    }

    fn calling(calls: Vec<NativeCall>, text: &str) -> Result<Message, CallOutcome> {
        Ok(Message {
            tool_calls: calls,
            ..Message::assistant(text)
        })
    }

    /// Plays the store's first task against `api` and returns the record.
    async fn play(
        api: &Scripted,
        call_cap: u32,
        router: Option<&RouterSuite>,
    ) -> ConversationRecord {
        let suite = store();
        let task = suite.tasks.first().expect("a task").clone();
        let settings = RunSettings::default();
        let telemetry = Telemetry::disabled("test");
        let counts = PromptCounts::new(false);
        let player = Player {
            client: api,
            model: "m",
            settings: &settings,
            telemetry: &telemetry,
            grader_digest: "d",
            router_in_front: router,
            prompt_counts: &counts,
            watch: None,
        };
        let shown = Shown::docs(ToolVariant::DOCUMENTED);
        player
            .play(&suite, &task, 0, call_cap, Mode::Agent, shown)
            .await
    }

    fn orders(n: usize) -> Vec<NativeCall> {
        (0..n)
            .map(|i| native("get_order", json!({"order_id": format!("A{i}")})))
            .collect()
    }

    #[tokio::test]
    async fn a_model_that_never_stops_calling_is_cut_at_the_call_cap() {
        let api = Scripted::new((0..10).map(|_| calling(orders(1), "")).collect());
        let r = play(&api, 3, None).await;
        assert_eq!(r.status, Status::LoopCap);
        assert_eq!(r.calls.len(), 3);
        assert_eq!(api.sent().len(), 3);
        assert_eq!(r.replies.last(), Some(&None));
    }

    #[tokio::test]
    async fn calls_past_the_per_reply_cap_are_recorded_and_the_model_is_told() {
        let over = 3;
        let api = Scripted::new(vec![calling(orders(TOOL_CALLS_PER_REPLY + over), "")]);
        let r = play(&api, 10, None).await;
        let first = &r.calls[0];
        assert_eq!(first.tool_calls as usize, TOOL_CALLS_PER_REPLY);
        assert_eq!(first.unexecuted_calls as usize, over);
        assert!(
            first
                .unexecuted
                .iter()
                .all(|u| u.reason == NotExecuted::OverCap)
        );
        assert_eq!(r.tool_events.len(), TOOL_CALLS_PER_REPLY);
        let next = &api.sent()[1].messages;
        let notice = next.last().expect("notice");
        assert_eq!(notice.role, Role::Tool);
        assert!(
            notice.content.contains(&format!("{over} more tool calls")),
            "{}",
            notice.content
        );
    }

    #[tokio::test]
    async fn a_flood_of_text_calls_is_counted_whole_and_run_at_the_cap() {
        let one = r#"{"name": "get_order", "arguments": {"order_id": "A1"}}"#;
        let n = 3 * CALLS_KEPT;
        let api = Scripted::new(vec![calling(Vec::new(), &one.repeat(n))]);
        let r = play(&api, 10, None).await;
        let first = &r.calls[0];
        assert_eq!(first.tool_calls as usize, TOOL_CALLS_PER_REPLY);
        assert_eq!(first.unexecuted_calls as usize, n - TOOL_CALLS_PER_REPLY);
        assert_eq!(r.tool_events.len(), TOOL_CALLS_PER_REPLY);
        let sent = api.sent();
        let notice = &sent[1].messages.last().expect("notice").content;
        let over = n - TOOL_CALLS_PER_REPLY;
        assert!(
            notice.contains(&format!("{over} more tool calls")),
            "{notice}"
        );
        // Beside a native call, the flood is counted as written beside it.
        let api = Scripted::new(vec![calling(orders(1), &one.repeat(n))]);
        let r = play(&api, 10, None).await;
        assert_eq!(r.calls[0].unexecuted_calls as usize, n);
    }

    #[tokio::test]
    async fn a_call_written_beside_native_calls_is_recorded_not_run() {
        let text = r#"{"name": "find_customer", "arguments": {"query": "Ann"}}"#;
        let api = Scripted::new(vec![calling(orders(1), text)]);
        let r = play(&api, 10, None).await;
        let tools: Vec<&str> = r.tool_events.iter().map(|e| e.tool.as_str()).collect();
        assert_eq!(tools, vec!["get_order"]);
        let beside = &r.calls[0].unexecuted;
        assert_eq!(beside.len(), 1);
        assert_eq!(
            (beside[0].tool.as_str(), beside[0].reason),
            ("find_customer", NotExecuted::BesideNative)
        );
    }

    #[tokio::test]
    async fn a_router_that_fails_on_the_wire_ends_the_conversation_before_the_agent() {
        let router = crate::suites::router::load::load_router(std::path::Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../.."
        )))
        .expect("router suite");
        let api = Scripted::new(vec![Err(CallOutcome::Transport)]);
        let r = play(&api, 10, Some(&router)).await;
        assert_eq!(r.outcome, Outcome::TransportFail);
        assert_eq!(r.calls.len(), 1);
        assert_eq!(r.calls[0].node, Node::Router);
        assert_eq!(api.sent().len(), 1);
    }

    #[tokio::test]
    async fn string_arguments_run_decoded_and_go_back_as_the_model_wrote_them() {
        let written = Value::String(r#"{"order_id": "A1"}"#.into());
        let api = Scripted::new(vec![calling(
            vec![native("get_order", written.clone())],
            "",
        )]);
        let r = play(&api, 10, None).await;
        assert_eq!(r.tool_events[0].args, json!({"order_id": "A1"}));
        let history = &api.sent()[1].messages;
        let echo = history
            .iter()
            .rfind(|m| m.role == Role::Assistant)
            .expect("the reply goes back");
        assert_eq!(echo.tool_calls[0].arguments, written);
        assert_eq!(echo.tool_calls[0].id.as_deref(), Some("call_get_order"));
        let answer = history.last().expect("tool result");
        assert_eq!(answer.tool_call_id.as_deref(), Some("call_get_order"));
    }
}
