//! What a conversation's calls have filled of the model's context, to flag `context_overflow`
//! (docs/reference/metrics.md), under either way Ollama counts `prompt_eval_count`: every prompt token
//! (current Ollama) or only the tokens past its prefix cache (Ollama 0.30.0).

use crate::runner::record::CallRecord;
use crate::wire::chat::Message;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

/// How a run's servers count prompts, and what the run has seen of its conversations' openings.
#[derive(Debug, Default)]
pub struct PromptCounts {
    /// The servers count only the prompt tokens past their cache (Ollama 0.30.0; see
    /// [`crate::runner::preflight::prompt_counts_only_new`]).
    pub only_new: bool,
    /// Per opening key (model, suite, tools, mode): the largest first-call count seen.
    openings: Mutex<HashMap<String, u64>>,
}

impl PromptCounts {
    /// No opening seen yet.
    pub fn new(only_new: bool) -> PromptCounts {
        PromptCounts {
            only_new,
            openings: Mutex::new(HashMap::new()),
        }
    }

    /// Notes a conversation's first-call count under `key`; returns the largest seen under it.
    fn opening(&self, key: &str, count: u64) -> u64 {
        let mut seen = self.openings.lock().unwrap_or_else(PoisonError::into_inner);
        let largest = seen.entry(key.to_string()).or_insert(0);
        *largest = (*largest).max(count);
        *largest
    }
}

/// Bytes of the text a template renders from a request: the tools, then each message's role,
/// text and tool calls (thinking left out, as some templates leave it out of the history).
pub fn history_bytes(messages: &[Message], tools: Option<&[Value]>) -> u64 {
    let tools = tools.map_or(0, |t| Value::Array(t.to_vec()).to_string().len());
    let message = |m: &Message| {
        let calls: usize = m
            .tool_calls
            .iter()
            .map(|c| c.name.len() + c.arguments.to_string().len())
            .sum();
        m.role.as_str().len() + m.content.len() + calls
    };
    (tools + messages.iter().map(message).sum::<usize>()) as u64
}

/// One conversation's use of the context.
#[derive(Debug)]
pub struct ContextUse {
    /// Conversations with the same key open with the same system prompt and tools.
    key: String,
    /// Full counts: tokens per history byte, from the conversation's first call.
    per_byte: Option<f64>,
    /// Full counts: the previous call's prompt count and history bytes.
    last: Option<(u64, u64)>,
    /// Only-new counts: tokens in the context after the previous call (prompt and output).
    used: Option<u64>,
    /// An earlier call overflowed: the history only grows, so every later one does too.
    overflowed: bool,
}

impl ContextUse {
    /// A conversation whose opening prompt is shared by every conversation under `key`.
    pub fn new(key: String) -> ContextUse {
        ContextUse {
            key,
            per_byte: None,
            last: None,
            used: None,
            overflowed: false,
        }
    }

    /// Sets the call's `context_overflow` from its counts; `sent` is the request's
    /// [`history_bytes`].
    ///
    /// Full counts: the prompt reached `num_ctx`; or it is smaller than the previous prompt, or
    /// no larger though the request added to the history (Ollama dropped messages, or shifted
    /// the context to about half of `num_ctx`); or the previous prompt plus the bytes added
    /// since, at the conversation's own tokens per byte, reaches `num_ctx` (Ollama dropped fewer
    /// tokens than were added, which the count alone cannot show). A prompt that grew by less
    /// than the previous reply's `eval_count` is no overflow: Ollama counts tokens it does not
    /// return (a cut `<tool_call>` is dropped from the reply). Only-new counts:
    /// the running total of prompt and output tokens reached `num_ctx`; a conversation's first
    /// count is raised to the largest first count seen under its key, since the server had cached
    /// the opening it shares with an earlier conversation. Once a call overflowed, every later
    /// call does.
    pub fn observe(
        &mut self,
        record: &mut CallRecord,
        num_ctx: u64,
        counts: &PromptCounts,
        sent: u64,
    ) {
        let Some(prompt) = record.timings.prompt_eval_count.get() else {
            record.context_overflow = self.overflowed;
            return;
        };
        let output = record.timings.eval_count.get().unwrap_or(0);
        let over = if counts.only_new {
            let used = match self.used {
                Some(before) => before + prompt,
                None => counts.opening(&self.key, prompt),
            };
            self.used = Some(used + output);
            used >= num_ctx
        } else {
            let dropped = self.last.is_some_and(|(before, before_sent)| {
                prompt < before || (prompt == before && sent > before_sent)
            });
            let per_byte = *self
                .per_byte
                .get_or_insert(prompt as f64 / sent.max(1) as f64);
            let grown = self.last.is_some_and(|(before, before_sent)| {
                let added = sent.saturating_sub(before_sent) as f64 * per_byte;
                before as f64 + added >= num_ctx as f64
            });
            self.last = Some((prompt, sent));
            prompt >= num_ctx || dropped || grown
        };
        self.overflowed |= over;
        record.context_overflow = self.overflowed;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::record::Node;

    /// Prompts near 1,100 tokens with `num_ctx` 8,192, each reply cut at 96 tokens whose text
    /// Ollama dropped (a cut `<tool_call>`): the history grows by a few tokens a call. A real
    /// Ollama run read this way flagged 5 calls; none overflowed.
    #[test]
    fn replies_shorter_than_their_eval_count_are_no_overflow() {
        let counts = PromptCounts::new(false);
        let mut c = ContextUse::new("m".into());
        let calls = [(1090, 96, 0), (1102, 96, 0), (1115, 96, 0), (1127, 96, 0)];
        assert_eq!(flags(&mut c, &counts, 8192, &calls), [false; 4]);
    }

    /// Observes calls of (prompt, eval, thinking) counts, each sent with 4 bytes per prompt token;
    /// the flags.
    fn flags(
        use_: &mut ContextUse,
        counts: &PromptCounts,
        num_ctx: u64,
        calls: &[(u64, u64, u64)],
    ) -> Vec<bool> {
        let sent = calls.iter().map(|&(prompt, ..)| prompt * 4).collect();
        sent_flags(use_, counts, num_ctx, calls, sent)
    }

    /// The same with the history bytes of each request.
    fn sent_flags(
        use_: &mut ContextUse,
        counts: &PromptCounts,
        num_ctx: u64,
        calls: &[(u64, u64, u64)],
        sent: Vec<u64>,
    ) -> Vec<bool> {
        calls
            .iter()
            .zip(sent)
            .map(|(&(prompt, eval, thinking), sent)| {
                let mut r = CallRecord::new(Node::Orchestrator, 0, 0);
                r.timings.prompt_eval_count = Some(prompt).into();
                r.timings.eval_count = Some(eval).into();
                r.thinking_tokens = (thinking > 0).then_some(thinking).into();
                use_.observe(&mut r, num_ctx, counts, sent);
                r.context_overflow
            })
            .collect()
    }

    #[test]
    fn full_counts_flag_a_full_prompt_and_dropped_messages() {
        let counts = PromptCounts::new(false);
        let mut c = ContextUse::new("m".into());
        // Grows by at least each reply: no overflow.
        assert_eq!(
            flags(&mut c, &counts, 1000, &[(500, 20, 0), (560, 30, 0)]),
            [false, false]
        );
        // 565 < 560 + 30, as on a real Ollama whose reply lost a cut tool call (it counts every
        // token it drops): the history grew by less than `eval_count`, and nothing was dropped.
        assert_eq!(flags(&mut c, &counts, 1000, &[(565, 96, 0)]), [false]);
        // 550 < 565: the prompt shrank, so messages were dropped; every later call overflows too,
        // even one that grew.
        assert_eq!(
            flags(&mut c, &counts, 1000, &[(550, 10, 0), (700, 10, 0)]),
            [true, true]
        );
        let mut c = ContextUse::new("m".into());
        assert_eq!(flags(&mut c, &counts, 500, &[(500, 1, 0)]), [true]);
        // 600 grew to 615 but 1,000 bytes were added (250 tokens at the opening's 4 bytes a
        // token): 850 is past 800, so Ollama dropped messages to fit.
        let mut c = ContextUse::new("m".into());
        let sent = vec![2000, 2400, 3400];
        assert_eq!(
            sent_flags(
                &mut c,
                &counts,
                800,
                &[(500, 10, 0), (600, 10, 0), (615, 10, 0)],
                sent
            ),
            [false, false, true]
        );
        // Thinking may be left out of the history by the template: it does not raise the floor.
        let mut c = ContextUse::new("m".into());
        assert_eq!(
            flags(&mut c, &counts, 1000, &[(500, 100, 90), (515, 10, 0)]),
            [false, false]
        );
    }

    #[test]
    fn only_new_counts_add_up_and_later_openings_count_what_the_cache_hid() {
        let counts = PromptCounts::new(true);
        let mut first = ContextUse::new("m/store".into());
        assert_eq!(
            flags(&mut first, &counts, 1000, &[(800, 20, 0), (50, 20, 0)]),
            [false, false]
        );
        // 800 + 20 + 50 + 20 + 120 = 1010: over.
        assert_eq!(flags(&mut first, &counts, 1000, &[(120, 5, 0)]), [true]);
        // The next conversation opens on the cached prefix (count 3): it holds the 800 as well.
        let mut second = ContextUse::new("m/store".into());
        assert_eq!(
            flags(&mut second, &counts, 900, &[(3, 20, 0), (90, 20, 0)]),
            [false, true]
        );
        // Another suite's opening is its own.
        let mut other = ContextUse::new("m/triage".into());
        assert_eq!(flags(&mut other, &counts, 100, &[(3, 20, 0)]), [false]);
    }
}
