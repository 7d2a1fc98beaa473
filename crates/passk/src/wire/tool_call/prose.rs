//! The rule for calls embedded in prose (docs/reference/metrics.md, "Text tool calls"): a call written into a
//! reply counts unless the reply says it is not being made now. A call is withheld when it sits in
//! a block quote (`> …`), when the prose just before it (same paragraph, or the paragraph before
//! when that one ends with a colon) refuses it, asks leave to make it or shows it as an example, or
//! when the prose around it (same paragraph) puts it off. Calls with no words between them (back to
//! back, or in one list) share the prose before the first and after the last. Only the prose
//! between the calls and their neighbours is read (at most [`WINDOW`] bytes each way), so the rule
//! costs no more than the reply's length.

use super::Withheld;
use super::finds::Span;

/// How far before and after a call its prose is read, bytes.
pub(super) const WINDOW: usize = 320;

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

/// Words before a call that ask leave to make it, suggest it or show it as an example.
const PROPOSALS: [&str; 21] = [
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
    "i can suggest",
    "i could suggest",
    "for example",
    "an example of",
    "the call would be",
    "would look like",
    "looks like",
];

/// Words before or after a call that put it off, ask leave, or say not to run it.
const DEFERRALS: [&str; 23] = [
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
    "do not execute",
    "don't execute",
    "do not run it",
    "don't run it",
];

/// Why each of `found` (sorted by start) is withheld, `None` where it counts. Linear in the number
/// of calls: a run of calls with no words between them is judged once, on the prose after every
/// earlier call's end and before the run, and the prose after the run up to the next call.
pub(super) fn judge(text: &str, found: &[Span]) -> Vec<Option<Withheld>> {
    let mut verdicts = Vec::with_capacity(found.len());
    let mut reached = 0;
    let mut first = 0;
    while first < found.len() {
        let before_from = reached.min(found[first].start);
        // The run: each next call starts with no words since the end of every call before it.
        let mut last = first;
        reached = reached.max(span_end(&found[first]));
        while let Some(n) = found.get(last + 1)
            && !has_words(slice(text, reached, n.start))
        {
            last += 1;
            reached = reached.max(span_end(n));
        }
        let next = found.partition_point(|n| n.start < reached);
        let next_start = found.get(next).map_or(text.len(), |n| n.start);
        let run = judge_run(text, before_from, found[first].start, reached, next_start);
        let mut prev_end = before_from;
        for f in &found[first..=last] {
            let quoted = quoted(text, prev_end.max(f.start.saturating_sub(WINDOW)), f.start);
            verdicts.push(if quoted { Some(Withheld::Quoted) } else { run });
            prev_end = prev_end.max(span_end(f));
        }
        first = last + 1;
    }
    verdicts
}

fn span_end(f: &Span) -> usize {
    f.end.max(f.start)
}

/// Longest markup tag skipped as no words, bytes between `<` and `>`.
const TAG_MAX: usize = 32;

/// Whether `s` holds a word of prose: a letter outside markup tags (`<tool_call>`, `</tool_call>`,
/// `<|im_end|>`), which wrap calls and say nothing about them.
fn has_words(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'<' {
            let tag = b[i + 1..]
                .iter()
                .take(TAG_MAX + 1)
                .position(|&c| !(c.is_ascii_alphanumeric() || b"/_|:=.-".contains(&c)));
            if let Some(len) = tag.filter(|&n| n > 0 && b.get(i + 1 + n) == Some(&b'>')) {
                i += len + 2;
                continue;
            }
        } else if b[i].is_ascii_alphabetic() {
            return true;
        }
        i += 1;
    }
    false
}

/// The verdict on a run of calls covering `start..end` from its prose: what lies after
/// `prev_end` before it and before `next_start` after it.
fn judge_run(
    text: &str,
    prev_end: usize,
    start: usize,
    end: usize,
    next_start: usize,
) -> Option<Withheld> {
    let before = paragraph_before(text, prev_end.max(start.saturating_sub(WINDOW)), start);
    let after = paragraph_after(text, end, next_start.min(end + WINDOW));
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

/// The prose in `from..to` after its last paragraph break; when nothing but punctuation follows
/// that break and the paragraph before it ends with a colon (it introduces the call), that
/// paragraph.
fn paragraph_before(text: &str, from: usize, to: usize) -> &str {
    let s = slice(text, from, to);
    let Some(p) = s.rfind("\n\n") else {
        return s;
    };
    let head = s[..p].trim_end();
    if has_words(&s[p..]) || !head.ends_with(':') {
        return &s[p..];
    }
    head.rfind("\n\n").map_or(head, |q| &head[q..])
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
            c if c.is_ascii() => out.push(c.to_ascii_lowercase()),
            c => out.extend(c.to_lowercase()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str, needle: &str) -> Option<Withheld> {
        calls_at(text, &[needle])[0]
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
        // A paragraph ending with a colon introduces the call after the break.
        assert_eq!(
            at("I can suggest this call:\n\n[{c}]", "{c}"),
            Some(Withheld::Deferred)
        );
        assert_eq!(at("Here is what I found.\n\n[{c}]", "{c}"), None);
    }

    fn calls_at(text: &str, needles: &[&str]) -> Vec<Option<Withheld>> {
        let found: Vec<Span> = needles
            .iter()
            .map(|n| {
                let start = text.find(n).expect("the call");
                Span {
                    start,
                    end: start + n.len(),
                    kept: None,
                    malformed: false,
                }
            })
            .collect();
        judge(text, &found)
    }

    #[test]
    fn calls_with_no_words_between_share_their_prose() {
        let refused = Some(Withheld::Refused);
        assert_eq!(
            calls_at("I won't send these: {a}, {b}; {c}", &["{a}", "{b}", "{c}"]),
            vec![refused; 3]
        );
        // Words between calls end the run: the second is judged on its own prose.
        assert_eq!(
            calls_at("{a}\nDone. I won't send {b}.", &["{a}", "{b}"]),
            vec![None, refused]
        );
        assert_eq!(calls_at("{a} {b}", &["{a}", "{b}"]), vec![None, None]);
        // Tags wrapping each call are no words: the refusal before the first covers both.
        assert_eq!(
            calls_at(
                "I won't send these: <tool_call>{a}</tool_call>\n<tool_call>{b}</tool_call>",
                &["{a}", "{b}"]
            ),
            vec![refused; 2]
        );
        assert!(!has_words("</tool_call>\n<tool_call>") && has_words("<tool_call> now"));
        assert!(has_words("a < b") && has_words("<not a tag>"));
    }
}
