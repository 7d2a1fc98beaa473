//! The rule for calls embedded in prose (docs/reference/metrics.md, "Calls embedded in prose"): a
//! call written into a reply is executed only when the reply presents it as made now. The reply
//! is only the call, or the prose leading into it announces it in the present, and nothing after
//! it hands the turn back to the customer (the next message after a call made now is the tool's
//! answer, not the customer's). Otherwise it is withheld, with why: quoted (a block quote), past
//! ("I already ran .."), illustrated ("a request like .."), refused ("I won't send .."), deferred
//! (hypothetical, asking leave, or behind a condition the customer has to meet) or offered (a
//! question to the customer after it, or a choice between calls).
//!
//! Cues are read by grammatical class ([`words`]: negations, conditions, modals, past markers,
//! illustration markers, questions), each applied to the clause that governs the call: the last
//! sentence before it (after its last `so`/`but`), the rest of its own sentence, and the sentences
//! after it in its paragraph that refer to it ("this", "that call") or name its action. A cue
//! applies to the action it names: a refusal to cancel does not withhold a lookup. Weak cues (`can`,
//! a question in a later paragraph, a refusal of an unnamed action) withhold a write only (a tool
//! named by a verb that changes something, [`words::WRITES`]), so where the reading is unsure a
//! write is withheld and a read is made. Calls with no words between them are one run and share
//! their prose. Only [`WINDOW`] bytes each way of a run are read, and the questions of a reply are
//! found in one pass, so the rule costs no more than the reply's length.

mod words;

use super::Withheld;
use super::finds::Span;
use std::collections::HashMap;
use words::{Clause, find_words};

/// How far before and after a call its prose is read, bytes.
pub(super) const WINDOW: usize = 320;

/// Questions after a run that are read for it.
const QUESTIONS_READ: usize = 4;

/// One reason to withhold a call; a weak one withholds a write only.
#[derive(Debug, Clone, Copy)]
struct Cue {
    why: Withheld,
    strong: bool,
}

/// Order of precedence when several cues apply: the first listed wins.
const PRECEDENCE: [Withheld; 5] = [
    Withheld::Past,
    Withheld::Illustrated,
    Withheld::Refused,
    Withheld::Deferred,
    Withheld::Offered,
];

/// Why each of `found` (sorted by start) is withheld, `None` where it is made now. `names` are the
/// calls' tool names (`None` past the calls kept whole), `known` the tools offered.
pub(super) fn judge(
    text: &str,
    found: &[Span],
    names: &[Option<&str>],
    known: &[String],
) -> Vec<Option<Withheld>> {
    let tools: Vec<Vec<&'static str>> = known.iter().map(|k| words::verbs_of(k)).collect();
    let questions = Questions::of(text, found);
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
        let lead_from = before_from.max(found[first].start.saturating_sub(WINDOW));
        let prose = Prose {
            lead: Clause::new(governing(slice(text, lead_from, found[first].start))),
            after: After::read(slice(text, reached, next_start.min(reached + WINDOW))),
            questions: questions.after(reached),
        };
        let mut cache: HashMap<Option<&str>, Option<Withheld>> = HashMap::new();
        let mut prev_end = before_from;
        for (k, f) in found.iter().enumerate().take(last + 1).skip(first) {
            let name = names.get(k).copied().flatten();
            let quoted = quoted(text, prev_end.max(f.start.saturating_sub(WINDOW)), f.start);
            verdicts.push(if quoted {
                Some(Withheld::Quoted)
            } else {
                *cache
                    .entry(name)
                    .or_insert_with(|| prose.verdict(&Call::new(name, known, &tools)))
            });
            prev_end = prev_end.max(span_end(f));
        }
        first = last + 1;
    }
    verdicts
}

fn span_end(f: &Span) -> usize {
    f.end.max(f.start)
}

/// What the rule knows of one call: the verbs naming its action, the other tools' verbs, and
/// whether it changes something.
struct Call<'a> {
    verbs: Vec<&'static str>,
    others: Vec<&'a str>,
    write: bool,
}

impl<'a> Call<'a> {
    fn new(name: Option<&str>, known: &'a [String], tools: &'a [Vec<&'static str>]) -> Call<'a> {
        let verbs = name.map(words::verbs_of).unwrap_or_default();
        let others = known
            .iter()
            .zip(tools)
            .filter(|(k, _)| Some(k.as_str()) != name)
            .flat_map(|(_, v)| v.iter().copied())
            .filter(|v| !verbs.contains(v))
            .collect();
        Call {
            verbs,
            others,
            write: words::is_write(name),
        }
    }

    /// Whether `s` names this call's action.
    fn named_in(&self, s: &Clause) -> bool {
        s.has_any(&self.verbs)
    }

    /// Whether `s` names another tool's action and not this one's: it is about that action.
    fn elsewhere(&self, s: &Clause) -> bool {
        !self.named_in(s) && s.has_any(&self.others)
    }
}

/// The prose around one run of calls, normalised.
struct Prose<'q> {
    /// The clause that leads into the run.
    lead: Clause,
    after: After,
    /// The questions after the run, each with whether it is in the run's paragraph.
    questions: Vec<(&'q Question, bool)>,
}

impl Prose<'_> {
    /// The reason to withhold a call of the run, if any.
    fn verdict(&self, call: &Call<'_>) -> Option<Withheld> {
        let mut cues = Vec::new();
        lead_cues(&self.lead, call, &mut cues);
        clause_cues(&self.after.rest_of_sentence, call, false, &mut cues);
        if self.after.own_question {
            cues.push(Cue {
                why: Withheld::Offered,
                strong: true,
            });
        }
        for s in &self.after.sentences {
            if !call.elsewhere(s) && (s.has_any(&words::REFERENCES) || call.named_in(s)) {
                clause_cues(s, call, true, &mut cues);
            }
        }
        question_cues(&self.questions, call, &mut cues);
        PRECEDENCE.into_iter().find(|why| {
            cues.iter()
                .any(|c| c.why == *why && (c.strong || call.write))
        })
    }
}

/// The cues of the clause leading into a call.
fn lead_cues(lead: &Clause, call: &Call<'_>, out: &mut Vec<Cue>) {
    let strong = |why| Cue { why, strong: true };
    if past_verb_before_call(lead.as_str()) {
        out.push(strong(Withheld::Past));
    }
    if illustration_ends(lead.as_str()) || unembedded(lead, &words::MANNER) {
        out.push(strong(Withheld::Illustrated));
    }
    clause_cues(lead, call, true, out);
    if lead.has_any(&words::WEAK_MODALS) {
        out.push(Cue {
            why: Withheld::Deferred,
            strong: false,
        });
    }
}

/// The cues of one clause about a call: past and illustration markers, a refusal of its action,
/// a condition, and (where `modals`) a hypothesis or a proposal.
fn clause_cues(s: &Clause, call: &Call<'_>, modals: bool, out: &mut Vec<Cue>) {
    let strong = |why| Cue { why, strong: true };
    if s.has_any(&words::PAST) {
        out.push(strong(Withheld::Past));
    }
    if s.has_any(&words::ILLUSTRATION) {
        out.push(strong(Withheld::Illustrated));
    }
    if let Some(strong) = refusal(s, call) {
        out.push(Cue {
            why: Withheld::Refused,
            strong,
        });
    }
    let hypothetical = modals && (modal(s) || s.has_any(&words::PROPOSING));
    if hypothetical || conditional(s) {
        out.push(strong(Withheld::Deferred));
    }
}

/// The cues of the questions after a run: one in the run's paragraph, or one asking leave or a
/// choice, hands the turn back; any other (a question in a later paragraph) holds back a write.
fn question_cues(questions: &[(&Question, bool)], call: &Call<'_>, out: &mut Vec<Cue>) {
    for (k, (q, same_paragraph)) in questions.iter().enumerate() {
        let about_call = !call.elsewhere(&q.text);
        let strong =
            about_call && ((k == 0 && *same_paragraph) || q.text.has_any(&words::LEAVE_OR_CHOICE));
        out.push(Cue {
            why: Withheld::Offered,
            strong,
        });
    }
}

/// Whether a negation in `s` refuses the call's action: `Some(true)` when it negates a verb naming
/// the call's action, a generic one ("send", "run") or nothing (the call follows), `Some(false)`
/// when it negates some other verb (a weak cue), `None` when it negates only a verb of perception
/// ("I can't find") or another tool's action.
fn refusal(clause: &Clause, call: &Call<'_>) -> Option<bool> {
    let s = clause.as_str();
    let mut found = None;
    for neg in words::NEGATIONS {
        for at in clause.find(neg) {
            let verb =
                words::words(&s[at + neg.len()..]).find(|w| !words::NEGATED_FILLERS.contains(w));
            let strong = match verb {
                None => true,
                Some(v) if words::PERCEPTION.contains(&v) || call.others.contains(&v) => continue,
                Some(v) => call.verbs.contains(&v) || words::GENERIC_ACTIONS.contains(&v),
            };
            found = Some(found.unwrap_or(false) || strong);
        }
    }
    found
}

/// Whether the clause holds a modal that makes its action hypothetical or asks leave for it: one
/// outside every weak use ("would like" is a wish, a weak cue).
fn modal(clause: &Clause) -> bool {
    let weak: Vec<(usize, usize)> = words::WEAK_MODALS
        .iter()
        .flat_map(|w| clause.find(w).map(move |at| (at, at + w.len())))
        .collect();
    words::MODALS.iter().any(|m| {
        clause
            .find(m)
            .any(|at| !weak.iter().any(|&(a, b)| at < b && a < at + m.len()))
    })
}

/// Whether one of `marks` occurs in `s` other than right after a verb that embeds a question
/// ("let me see how", "check if").
fn unembedded(clause: &Clause, marks: &[&str]) -> bool {
    let s = clause.as_str();
    marks
        .iter()
        .any(|m| clause.find(m).any(|at| !embedded(s, at)))
}

fn embedded(s: &str, at: usize) -> bool {
    words::words(&s[..at])
        .next_back()
        .is_some_and(|w| words::EMBEDDING.contains(&w))
}

/// Whether `s` sets a condition the customer has to meet: a condition word (not meaning
/// "whether") with the customer as subject within three words, or a past participle after it.
fn conditional(clause: &Clause) -> bool {
    let s = clause.as_str();
    words::CONDITIONS.iter().any(|c| {
        clause.find(c).any(|at| {
            if embedded(s, at) {
                return false;
            }
            let mut next = words::words(&s[at + c.len()..]).take(3).peekable();
            let participle = next.peek().is_some_and(|w| words::is_past_form(w));
            participle || next.any(|w| words::YOU.contains(&w))
        })
    })
}

/// Whether the verb right before the call is a past form after its subject ("I ran ..", "we
/// submitted the following request: ..").
fn past_verb_before_call(lead: &str) -> bool {
    let mut back = words::words(lead)
        .rev()
        .skip_while(|w| words::OBJECT_FILLERS.contains(w));
    let (Some(verb), Some(before)) = (back.next(), back.next()) else {
        return false;
    };
    let subject = if words::PERFECT.contains(&before) {
        back.next().unwrap_or_default()
    } else {
        before
    };
    words::is_past_form(verb) && words::PAST_SUBJECTS.contains(&subject)
}

/// Whether the clause ends with "like" as a preposition ("a request like .."), not the verb
/// ("what I'd like").
fn illustration_ends(lead: &str) -> bool {
    let mut back = words::words(lead).rev();
    back.next() == Some("like") && back.next().is_none_or(|w| !words::LIKING.contains(&w))
}

/// The clause governing a call from the prose before it: the paragraph before the call (or, when
/// that holds no words and the paragraph before it ends with a colon, that one), its last
/// sentence, and of that the part after its last clause-ending conjunction.
fn governing(raw: &str) -> String {
    let text = normalise(raw);
    let mut paragraphs = text.rsplit("\n\n");
    let mut para = paragraphs.next().unwrap_or_default();
    if !has_letters(para)
        && let Some(prev) = paragraphs.next()
        && prev.trim_end().ends_with(':')
    {
        para = prev;
    }
    let sentence = sentences(para)
        .into_iter()
        .rfind(|s| has_letters(s.0))
        .map_or("", |s| s.0);
    let cut = words::CUTS
        .iter()
        .filter_map(|c| find_words(sentence, c).last().map(|at| at + c.len()))
        .max()
        .unwrap_or(0);
    sentence[cut..].to_string()
}

/// The prose after a run, up to the next call: its first paragraph, read as the rest of the
/// call's own sentence and the whole sentences after it (the unfinished one that leads into the
/// next call belongs to that call).
#[derive(Default)]
struct After {
    rest_of_sentence: Clause,
    /// The call's own sentence ends with a question mark.
    own_question: bool,
    sentences: Vec<Clause>,
}

impl After {
    fn read(raw: &str) -> After {
        let text = normalise(raw);
        let para = text.split("\n\n").next().unwrap_or_default();
        let mut out = After::default();
        let mut parts = sentences(para).into_iter();
        if continues_sentence(raw)
            && let Some((first, end)) = parts.next()
        {
            out.own_question = end == Some('?');
            out.rest_of_sentence = Clause::new(first.to_string());
        }
        for (s, end) in parts {
            if end.is_some() && has_letters(s) {
                out.sentences.push(Clause::new(s.to_string()));
            }
        }
        out
    }
}

/// Whether the prose right after a call goes on with the call's sentence: it starts on the same
/// line, with neither a capital letter nor a full stop.
fn continues_sentence(raw: &str) -> bool {
    let b = raw.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if let Some(len) = markup_len(&b[i..]) {
            i += len;
        } else if b[i] == b' ' || b[i] == b'\t' {
            i += 1;
        } else {
            break;
        }
    }
    raw[raw.floor_char_boundary(i)..]
        .chars()
        .next()
        .is_some_and(|c| !(c.is_uppercase() || "\r\n.!".contains(c)))
}

/// The sentences of `s` with the mark that ends each (`None`: a line break, or the end of `s`).
fn sentences(s: &str) -> Vec<(&str, Option<char>)> {
    let mut out = Vec::new();
    let mut from = 0;
    let b = s.as_bytes();
    for (i, c) in s.char_indices() {
        let ends = match c {
            '\n' => Some(None),
            '.' | '!' | '?' | ';' if b.get(i + 1).is_none_or(|n| n.is_ascii_whitespace()) => {
                Some(Some(c))
            }
            _ => None,
        };
        if let Some(mark) = ends {
            out.push((s[from..i].trim(), mark));
            from = i + c.len_utf8();
        }
    }
    out.push((s[from..].trim(), None));
    out
}

/// A question to the customer outside every call: its sentence, normalised.
#[derive(Debug)]
struct Question {
    /// Where its sentence starts.
    at: usize,
    text: Clause,
}

/// The questions of a reply, in order, and its paragraph breaks.
struct Questions {
    all: Vec<Question>,
    breaks: Vec<usize>,
}

impl Questions {
    /// Every whole question between the calls of `text` (a question whose sentence holds a call
    /// is that call's own, read with it), found in one pass.
    fn of(text: &str, found: &[Span]) -> Questions {
        let b = text.as_bytes();
        let mut all = Vec::new();
        let mut sentence: Option<usize> = Some(0);
        let (mut i, mut k) = (0, 0);
        while i < b.len() {
            if let Some(f) = found.get(k).filter(|f| f.start <= i) {
                // A call: the sentence it stands in is no whole question.
                i = i.max(span_end(f));
                k += 1;
                sentence = None;
                continue;
            }
            let c = b[i];
            let ends = c == b'\n'
                || (b".!?;".contains(&c) && b.get(i + 1).is_none_or(u8::is_ascii_whitespace));
            if ends
                && let Some(from) = sentence
                && (c == b'?' || directive(&text[from..i]))
            {
                let from = text.ceil_char_boundary(from.max(i.saturating_sub(WINDOW)));
                all.push(Question {
                    at: from,
                    text: Clause::new(normalise(&text[from..i])),
                });
            }
            if ends {
                sentence = Some(i + 1);
            }
            i += 1;
        }
        Questions {
            all,
            breaks: paragraph_breaks(text),
        }
    }

    /// The first [`QUESTIONS_READ`] questions after `end`, each with whether it lies in `end`'s
    /// paragraph.
    fn after(&self, end: usize) -> Vec<(&Question, bool)> {
        let k = self.all.partition_point(|q| q.at < end);
        self.all[k..]
            .iter()
            .take(QUESTIONS_READ)
            .map(|q| {
                let b = self.breaks.partition_point(|&p| p < end);
                (q, self.breaks.get(b).is_none_or(|&p| p >= q.at))
            })
            .collect()
    }
}

/// Whether a sentence opens with a directive to the customer ("Let me know which", "Just tell
/// me"): it hands the turn back as a question does.
fn directive(sentence: &str) -> bool {
    let s = normalise(&sentence[..sentence.floor_char_boundary(WINDOW)]);
    let s = s.trim_start_matches(|c: char| !c.is_alphanumeric());
    let s = ["please ", "just ", "so "]
        .iter()
        .fold(s, |s, p| s.strip_prefix(p).unwrap_or(s));
    words::DIRECTIVES
        .iter()
        .any(|d| find_words(s, d).next() == Some(0))
}

/// Positions of blank lines (two line breaks with only spaces between), in order.
fn paragraph_breaks(text: &str) -> Vec<usize> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut last_newline: Option<usize> = None;
    for (i, &c) in b.iter().enumerate() {
        match c {
            b'\n' => {
                if let Some(n) = last_newline {
                    out.push(n);
                }
                last_newline = Some(i);
            }
            b' ' | b'\t' | b'\r' => {}
            _ => last_newline = None,
        }
    }
    out
}

/// Longest markup tag skipped as no words, bytes between `<` and `>`.
const TAG_MAX: usize = 32;

/// The length of the markup at the start of `b` that says nothing about a call: a tag
/// (`<tool_call>`, `</tool_call>`, `<|im_end|>`) or a code fence with its language (```` ```json ````).
fn markup_len(b: &[u8]) -> Option<usize> {
    if b.starts_with(b"```") {
        let lang = b[3..]
            .iter()
            .take_while(|c| c.is_ascii_alphanumeric() || b"_-".contains(c))
            .count();
        return Some(3 + lang);
    }
    if b.first() != Some(&b'<') {
        return None;
    }
    let len = b[1..]
        .iter()
        .take(TAG_MAX + 1)
        .position(|&c| !(c.is_ascii_alphanumeric() || b"/_|:=.-".contains(&c)))?;
    (len > 0 && b.get(1 + len) == Some(&b'>')).then_some(len + 2)
}

/// Whether `s` holds a word of prose: a letter outside markup.
fn has_words(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if let Some(len) = markup_len(&b[i..]) {
            i += len;
            continue;
        }
        if b[i].is_ascii_alphabetic() {
            return true;
        }
        i += 1;
    }
    false
}

fn has_letters(s: &str) -> bool {
    s.chars().any(char::is_alphabetic)
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

/// `text[from..to]`, both ends moved onto character boundaries.
fn slice(text: &str, from: usize, to: usize) -> &str {
    let to = text.floor_char_boundary(to.min(text.len()));
    let from = text.ceil_char_boundary(from.min(to));
    &text[from..to]
}

/// Lower case, curly apostrophes made straight, markup dropped, and each run of whitespace one
/// separator: `\n\n` where it holds a blank line, `\n` where it holds a line break (or markup),
/// a space otherwise.
fn normalise(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    // The separator owed before the next character: 0 none, 1 space, 2 line break, 3 blank line.
    let mut owed = 0u8;
    let mut newlines = 0;
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if let Some(len) = markup_len(&b[i..]) {
            owed = owed.max(2);
            newlines = 0;
            i += len;
            continue;
        }
        let Some(c) = s[i..].chars().next() else {
            break;
        };
        i += c.len_utf8();
        if c.is_whitespace() {
            if c == '\n' {
                newlines += 1;
            }
            owed = owed.max(match newlines {
                0 => 1,
                1 => 2,
                _ => 3,
            });
            continue;
        }
        newlines = 0;
        if !out.is_empty() || owed >= 2 {
            out.push_str(["", " ", "\n", "\n\n"][usize::from(owed)]);
        }
        owed = 0;
        match c {
            '’' | '‘' => out.push('\''),
            '—' | '–' => out.push(','),
            c if c.is_ascii() => out.push(c.to_ascii_lowercase()),
            c => out.extend(c.to_lowercase()),
        }
    }
    if owed >= 2 {
        out.push_str(["", " ", "\n", "\n\n"][usize::from(owed)]);
    }
    out
}
