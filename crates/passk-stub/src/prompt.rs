//! The prompt as the stub "tokenises" it (one token per four bytes), fitted to `num_ctx` as Ollama
//! v0.33 fits it, and its `prompt_eval_count` under either prompt-count behaviour.
//!
//! Fitting: `chatPrompt` (`server/prompt.go`) drops the oldest messages, keeping every system
//! message and at least the last message, until the prompt fits `num_ctx`; a prompt that still
//! does not fit is cut by the runner's context shift (`llm/llama_server.go`), which keeps the first
//! `num_keep` tokens and drops about half of the rest.

use super::chat::tokens;
use super::output::Generated;
use super::{PromptCount, State};
use passk::wire::api::{ChatMessage, ChatRequest};
use passk::wire::name::ModelName;
use serde_json::Value;
use std::sync::PoisonError;

/// Ollama's default `num_keep`: the prompt tokens a context shift keeps at the front.
const NUM_KEEP: u64 = 4;

/// Bytes per stub token (see [`tokens`]).
const TOKEN_BYTES: usize = 4;

/// `prompt_eval_count`: the prompt fitted to `num_ctx`, whole (current Ollama) or only past the
/// prefix cached from this model's previous request and its output (Ollama 0.30.0).
pub(crate) fn prompt_count(state: &State, req: &ChatRequest, out: &Generated) -> u64 {
    let num_ctx = super::runner_options::effective_num_ctx(req);
    let prompt = fitted(req, num_ctx);
    // The cache holds the prompt and the output, as the next request's history renders it.
    let mut cached = prompt.clone();
    cached.extend_from_slice(b"assistant");
    cached.extend_from_slice(out.content.as_bytes());
    cached.extend_from_slice(out.thinking.as_bytes());
    for (name, args) in &out.calls {
        cached.extend_from_slice(name.as_bytes());
        cached.extend_from_slice(args.to_string().as_bytes());
    }
    let previous = state
        .prompts
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(ModelName::parse(&req.model).key(), cached);
    match state.config.prompt_count {
        PromptCount::All => tokens(prompt.len()),
        PromptCount::NewOnly => {
            let shared = previous.map_or(0, |p| common_prefix(&p, &prompt));
            tokens(prompt.len() - shared)
        }
    }
}

/// The prompt of `req` once fitted to `num_ctx`: `chatPrompt`'s dropped messages, then the
/// runner's context shift when even the last message does not fit.
pub(crate) fn fitted(req: &ChatRequest, num_ctx: u64) -> Vec<u8> {
    let prompt = dropped(req, num_ctx);
    if tokens(prompt.len()) >= num_ctx {
        shift(&prompt, num_ctx)
    } else {
        prompt
    }
}

/// Whether the prompt still does not fit in `num_ctx` once `chatPrompt` has dropped what it may
/// (`completionPromptForRequest`: more than `num_ctx - 1` tokens): the runner then shifts its
/// context, or, with context shift off, refuses the request.
pub(crate) fn needs_context_shift(req: &ChatRequest, num_ctx: u64) -> bool {
    tokens(dropped(req, num_ctx).len()) >= num_ctx
}

/// The prompt as `chatPrompt` (`server/prompt.go`) fits it: the oldest messages dropped, every
/// system message and the last message kept, until it is at most `num_ctx` tokens or nothing more
/// can go.
fn dropped(req: &ChatRequest, num_ctx: u64) -> Vec<u8> {
    let tools = req
        .tools
        .as_ref()
        .map_or(String::new(), |t| Value::Array(t.clone()).to_string());
    let msgs = &req.messages;
    let mut prompt = render(&tools, msgs);
    for start in 1..msgs.len() {
        if tokens(prompt.len()) <= num_ctx {
            break;
        }
        let system = msgs[..start].iter().filter(|m| m.role == "system");
        prompt = render(&tools, system.chain(&msgs[start..]));
    }
    prompt
}

/// The prompt the stub "tokenises": the tools first (as a template puts them in the system
/// prompt), then each message's role and text.
fn render<'m>(tools: &str, messages: impl IntoIterator<Item = &'m ChatMessage>) -> Vec<u8> {
    let mut p = tools.as_bytes().to_vec();
    for m in messages {
        p.extend_from_slice(m.role.as_bytes());
        p.extend_from_slice(m.content.as_bytes());
        if let Some(t) = &m.thinking {
            p.extend_from_slice(t.as_bytes());
        }
        for c in &m.tool_calls {
            p.extend_from_slice(c.function.name.as_bytes());
            p.extend_from_slice(c.function.arguments.to_string().as_bytes());
        }
    }
    p
}

/// The runner's context shift (`contextShiftPromptLimit`): the first `num_keep` tokens, then the
/// last tokens up to `num_ctx - max((num_ctx - num_keep) / 2, 1)` in all.
fn shift(prompt: &[u8], num_ctx: u64) -> Vec<u8> {
    let keep = NUM_KEEP.min(num_ctx.saturating_sub(1));
    let limit = num_ctx.saturating_sub(((num_ctx - keep) / 2).max(1));
    let bytes = |t: u64| usize::try_from(t).unwrap_or(usize::MAX) * TOKEN_BYTES;
    let (head, tail) = (bytes(keep), bytes(limit - keep.min(limit)));
    let mut out = prompt[..head.min(prompt.len())].to_vec();
    out.extend_from_slice(&prompt[prompt.len().saturating_sub(tail).max(out.len())..]);
    out
}

fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(messages: Vec<ChatMessage>, num_ctx: u64) -> ChatRequest {
        let mut req = ChatRequest {
            messages,
            ..ChatRequest::default()
        };
        req.options.num_ctx = Some(num_ctx);
        req
    }

    fn text(tokens: usize) -> String {
        "x".repeat(tokens * TOKEN_BYTES)
    }

    #[test]
    fn the_oldest_messages_go_first_and_system_messages_stay() {
        // system 10 + user 20 + assistant 20 + user 20 tokens, roles included.
        let msgs = vec![
            ChatMessage::system(text(10)),
            ChatMessage::user(text(20)),
            ChatMessage::assistant(text(20)),
            ChatMessage::user(text(20)),
        ];
        let whole = tokens(fitted(&request(msgs.clone(), 1000), 1000).len());
        assert_eq!(whole, 75, "70 tokens of text, 23 bytes of roles");
        // 60 tokens: the first user message goes, the system message stays.
        let fit = fitted(&request(msgs.clone(), 60), 60);
        assert!(tokens(fit.len()) <= 60 && tokens(fit.len()) > 45);
        assert!(fit.starts_with(b"system"));
        // 40 tokens: the assistant message goes too.
        let fit = fitted(&request(msgs.clone(), 40), 40);
        assert!(tokens(fit.len()) <= 40 && tokens(fit.len()) > 25);
        // 20 tokens: system and last message do not fit; the context shift cuts them.
        let fit = fitted(&request(msgs, 20), 20);
        assert_eq!(tokens(fit.len()), 20 - (20 - NUM_KEEP) / 2);
        assert!(fit.starts_with(b"syst"));
    }

    #[test]
    fn a_prompt_that_fits_is_whole() {
        let msgs = vec![ChatMessage::user(text(10))];
        let req = request(msgs, 12);
        assert_eq!(fitted(&req, 12), render("", &req.messages));
    }
}
