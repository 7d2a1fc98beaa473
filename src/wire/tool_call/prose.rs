//! The rule for calls embedded in prose (docs/metrics.md, "Text tool calls"): a call written into a
//! reply counts unless the reply says it is not being made now. A call is withheld when it sits in
//! a block quote (`> …`), when the prose just before it (same paragraph) refuses it, asks leave to
//! make it or shows it as an example, or when the prose around it (same paragraph) puts it off. Only the
//! prose between the call and its neighbours is read (at most [`WINDOW`] bytes each way), so the
//! rule costs no more than the reply's length.

use super::{Found, Withheld};

/// How far before and after a call its prose is read, bytes.
pub const WINDOW: usize = 320;

/// Words before a call that refuse it.
const REFUSALS: [&str; 20] = [
    "i won't",
    "i will not",
    "i can't",
    "i cannot",
    "i can not",
    "i'm not going to",
    "i am not going to",
    "i shouldn't",
    "i should not",
    "i'm unable to",
    "i am unable to",
    "i'd rather not",
    "i must not",
    "i refuse",
    "i'm not able to",
    "i am not able to",
    "i won’t",
    "i can’t",
    "not without your",
    "i will hold off",
];

/// Refusal words that say what the model cannot see rather than what it will not do.
const NOT_REFUSALS: [&str; 6] = [
    "i can't find",
    "i cannot find",
    "i can't locate",
    "i cannot locate",
    "i can't see",
    "i cannot see",
];

/// Words before a call that ask leave to make it or show it as an example.
const PROPOSALS: [&str; 18] = [
    "shall i",
    "should i",
    "would you like me to",
    "do you want me to",
    "want me to",
    "may i",
    "if you'd like, i can",
    "if you want, i can",
    "i would call",
    "i could call",
    "i would run",
    "i could run",
    "i would use",
    "i could use",
    "for example",
    "the call would be",
    "would look like",
    "looks like",
];

/// Words before or after a call that put it off or ask leave.
const DEFERRALS: [&str; 19] = [
    "once you confirm",
    "after you confirm",
    "when you confirm",
    "if you confirm",
    "until you confirm",
    "once you've confirmed",
    "once you have confirmed",
    "once confirmed",
    "after confirmation",
    "upon confirmation",
    "once you verify",
    "the call i will make",
    "the call i'll make",
    "i will make once",
    "i'll make once",
    "shall i",
    "should i proceed",
    "do you want me to",
    "tell me if you want",
];

/// Why each of `found` (sorted by start) is withheld, `None` where it counts. Linear in the number
/// of calls: the prose before a call starts after every earlier call's end, the prose after it ends
/// at the next call that starts past its end.
pub(super) fn judge(text: &str, found: &[Found]) -> Vec<Option<Withheld>> {
    let mut reached = 0;
    found
        .iter()
        .map(|f| {
            let end = f.end.max(f.start);
            let prev_end = reached.min(f.start);
            reached = reached.max(end);
            let next = found.partition_point(|n| n.start < end);
            let next_start = found.get(next).map_or(text.len(), |n| n.start);
            judge_one(text, f.start, end, prev_end, next_start)
        })
        .collect()
}

fn judge_one(
    text: &str,
    start: usize,
    end: usize,
    prev_end: usize,
    next_start: usize,
) -> Option<Withheld> {
    if quoted(text, prev_end.max(start.saturating_sub(WINDOW)), start) {
        return Some(Withheld::Quoted);
    }
    let before = paragraph_before(text, prev_end.max(start.saturating_sub(WINDOW)), start);
    let after = paragraph_after(text, end, next_start.min(end + WINDOW));
    let has_words = |s: &str| s.bytes().any(|b| b.is_ascii_alphabetic());
    if !has_words(before) && !has_words(after) {
        // Calls back to back, or a call alone: no prose to read.
        return None;
    }
    let mut before = normalise(before);
    if before.contains("i can") {
        for w in NOT_REFUSALS {
            before = before.replace(w, "");
        }
    }
    if REFUSALS.iter().any(|w| before.contains(w)) {
        return Some(Withheld::Refused);
    }
    let after = normalise(after);
    let deferred = PROPOSALS.iter().any(|w| before.contains(w))
        || DEFERRALS
            .iter()
            .any(|w| before.contains(w) || after.contains(w));
    deferred.then_some(Withheld::Deferred)
}

/// Whether the line holding `at` is a Markdown block quote: looked for from `from` on only, so a
/// line that starts before `from` (past the window, or before the previous call) is no quote.
fn quoted(text: &str, from: usize, at: usize) -> bool {
    let from = text.ceil_char_boundary(from.min(at));
    let line_start = match text[from..at].rfind('\n') {
        Some(n) => from + n + 1,
        None if from == 0 => 0,
        None => return false,
    };
    text[line_start..at].trim_start().starts_with('>')
}

/// The prose in `from..to` after its last paragraph break.
fn paragraph_before(text: &str, from: usize, to: usize) -> &str {
    let s = slice(text, from, to);
    s.rfind("\n\n").map_or(s, |p| &s[p..])
}

/// The prose in `from..to` before its first paragraph break.
fn paragraph_after(text: &str, from: usize, to: usize) -> &str {
    let s = slice(text, from, to);
    s.find("\n\n").map_or(s, |p| &s[..p])
}

/// `text[from..to]`, both ends moved onto character boundaries.
fn slice(text: &str, from: usize, to: usize) -> &str {
    let to = text.floor_char_boundary(to.min(text.len()));
    let from = text.ceil_char_boundary(from.min(to));
    &text[from..to]
}

/// Lower case, curly apostrophes made straight, runs of whitespace made one space.
fn normalise(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut space = false;
    for c in s.chars() {
        if c.is_whitespace() {
            space = true;
            continue;
        }
        if space && !out.is_empty() {
            out.push(' ');
        }
        space = false;
        match c {
            '’' | '‘' => out.push('\''),
            c => out.extend(c.to_lowercase()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::CallFormat;
    use crate::wire::tool_call::ExtractedCall;

    fn at(text: &str, needle: &str) -> Option<Withheld> {
        let start = text.find(needle).expect("the call");
        let found = vec![Found {
            start,
            end: start + needle.len(),
            call: ExtractedCall {
                name: "x".into(),
                arguments: serde_json::Value::Null,
                format: CallFormat::Text,
                id: None,
                error: None,
            },
        }];
        judge(text, &found)[0]
    }

    #[test]
    fn refused_quoted_and_deferred_calls_are_withheld() {
        assert_eq!(
            at("I won’t send {c} until you confirm.", "{c}"),
            Some(Withheld::Refused)
        );
        assert_eq!(
            at(
                "Here:\n> {c}\nthat is the call I will make once you confirm",
                "{c}"
            ),
            Some(Withheld::Quoted)
        );
        assert_eq!(
            at("{c}\nThat is the call I will make once you confirm.", "{c}"),
            Some(Withheld::Deferred)
        );
        assert_eq!(at("Shall I run {c}?", "{c}"), Some(Withheld::Deferred));
        assert_eq!(at("Let me look that up.\n{c}", "{c}"), None);
        // Words in another paragraph say nothing about the call.
        assert_eq!(at("I can't find it.\n\n{c}", "{c}"), None);
        assert_eq!(at("{c}", "{c}"), None);
    }
}
