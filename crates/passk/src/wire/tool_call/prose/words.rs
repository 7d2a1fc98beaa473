//! The word classes the prose rule reads, and the small text helpers it reads them with. Each class
//! is a short list of words (a grammatical class), never a list of whole observed sentences: a
//! new phrasing built from the same words is caught without a new entry.

/// Negations that refuse an action when an action verb follows them.
pub(super) const NEGATIONS: [&str; 20] = [
    "won't",
    "will not",
    "can't",
    "cannot",
    "can not",
    "never",
    "don't",
    "do not",
    "shouldn't",
    "should not",
    "not going to",
    "unable to",
    "not able to",
    "refuse to",
    "hold off",
    "must not",
    "mustn't",
    "rather not",
    "not without",
    "wouldn't",
];

/// Words skipped between a negation and the verb it negates.
pub(super) const NEGATED_FILLERS: [&str; 14] = [
    "be",
    "to",
    "yet",
    "just",
    "go",
    "ahead",
    "and",
    "actually",
    "really",
    "allowed",
    "permitted",
    "want",
    "try",
    "simply",
];

/// Verbs of perception or knowledge: negated, they say what the model cannot see or know, not
/// what it will not do ("I can't find", "I don't know").
pub(super) const PERCEPTION: [&str; 13] = [
    "find",
    "see",
    "locate",
    "access",
    "tell",
    "know",
    "have",
    "understand",
    "recall",
    "remember",
    "reach",
    "say",
    "help",
];

/// Verbs that name making a call, whatever the tool: a clause with one of them and a reference
/// to the call is about the call.
pub(super) const GENERIC_ACTIONS: [&str; 14] = [
    "send", "run", "execute", "call", "make", "do", "submit", "issue", "process", "use", "proceed",
    "perform", "trigger", "go",
];

/// Words opening a condition. One counts when the customer is its subject (a `YOU` word within
/// the next three words) or a past participle follows it ("once confirmed"), and not right after
/// a verb that makes it mean "whether" ("let me see if").
pub(super) const CONDITIONS: [&str; 10] = [
    "if",
    "once",
    "when",
    "whenever",
    "unless",
    "until",
    "as soon as",
    "provided",
    "after",
    "only after",
];

/// The customer, as the subject of a condition.
pub(super) const YOU: [&str; 6] = ["you", "your", "you've", "you're", "you'd", "you'll"];

/// Verbs after which `if` and `when` ask "whether" rather than set a condition.
pub(super) const EMBEDDING: [&str; 10] = [
    "check",
    "see",
    "verify",
    "know",
    "tell",
    "look",
    "ask",
    "determine",
    "sure",
    "out",
];

/// Modal verbs that make an action hypothetical or ask leave for it.
pub(super) const MODALS: [&str; 6] = ["could", "would", "might", "shall", "should", "may"];

/// Modal uses that are wishes or offers rather than hypotheses: weak cues, that hold back only a
/// write.
pub(super) const WEAK_MODALS: [&str; 6] = [
    "can",
    "would like",
    "would love",
    "would be happy",
    "would be glad",
    "'d be happy",
];

/// Verbs that propose an action to the customer.
pub(super) const PROPOSING: [&str; 5] = [
    "suggest",
    "recommend",
    "propose",
    "want me to",
    "like me to",
];

/// Words that put an action in the past.
pub(super) const PAST: [&str; 6] = [
    "already",
    "earlier",
    "previously",
    "yesterday",
    "went through",
    "last time",
];

/// Past forms that do not end in -ed.
pub(super) const IRREGULAR_PAST: [&str; 8] = [
    "ran", "sent", "made", "did", "wrote", "gave", "put", "tried",
];

/// What stands before a past verb that governs a call: the model as its subject, or an adverb.
pub(super) const PAST_SUBJECTS: [&str; 9] = [
    "i",
    "we",
    "i've",
    "we've",
    "i'd",
    "we'd",
    "just",
    "already",
    "previously",
];

/// Auxiliaries of a perfect ("I have sent"), counted when the model is their subject.
pub(super) const PERFECT: [&str; 2] = ["have", "had"];

/// Directives that hand the turn to the customer as a question does ("Let me know which you'd
/// like."), at the start of a sentence.
pub(super) const DIRECTIVES: [&str; 8] = [
    "let me know",
    "tell me",
    "confirm",
    "choose",
    "pick",
    "decide",
    "reply",
    "say",
];

/// Adverbs of manner: "this is how .." shows how a call is written, not that it is made.
pub(super) const MANNER: [&str; 1] = ["how"];

/// Words between a verb and the call it governs ("I ran the following call: ..").
pub(super) const OBJECT_FILLERS: [&str; 16] = [
    "this",
    "that",
    "it",
    "the",
    "a",
    "an",
    "following",
    "call",
    "request",
    "these",
    "with",
    "using",
    "via",
    "command",
    "function",
    "tool",
];

/// Markers of an example or illustration.
pub(super) const ILLUSTRATION: [&str; 12] = [
    "for example",
    "for instance",
    "e.g",
    "such as",
    "an example",
    "example of",
    "like this",
    "like so",
    "looks like",
    "look like",
    "something like",
    "the format",
];

/// Words before `like` that make it the verb ("I'd like to"), not an illustration.
pub(super) const LIKING: [&str; 7] = ["i'd", "would", "you'd", "i", "you", "we", "they"];

/// Conjunctions that end one clause and start another: a cue before them says nothing about a
/// call after them.
pub(super) const CUTS: [&str; 5] = ["so", "but", "however", "instead", "meanwhile"];

/// Words that refer back to a call from the sentence after it.
pub(super) const REFERENCES: [&str; 8] = [
    "it",
    "this",
    "that",
    "these",
    "those",
    "them",
    "the call",
    "the request",
];

/// Words of a question that asks leave for an action, or a choice between actions.
pub(super) const LEAVE_OR_CHOICE: [&str; 16] = [
    "me to",
    "shall i",
    "should i",
    "may i",
    "can i",
    "proceed",
    "go ahead",
    "prefer",
    "rather",
    "which one",
    "which option",
    "which would",
    "which of",
    "either",
    "sound good",
    "sounds good",
];

/// Verbs of one action, grouped: a tool's first name word stands for its group.
pub(super) const VERB_GROUPS: [&[&str]; 10] = [
    &[
        "get", "fetch", "check", "look", "lookup", "retrieve", "pull", "view", "read",
    ],
    &["find", "search", "look", "lookup", "locate", "query"],
    &["list", "show", "enumerate"],
    &["cancel", "stop", "void", "abort"],
    &["update", "change", "modify", "edit", "set", "correct"],
    &["create", "open", "file", "raise", "log"],
    &["request", "start", "initiate", "open", "file"],
    &["delete", "remove", "erase"],
    &["send", "email", "notify", "message"],
    &["refund", "reimburse"],
];

/// A tool whose name starts with one of these verbs changes something: where the cues are weak,
/// such a call is withheld and a read is made.
pub(super) const WRITES: [&str; 30] = [
    "cancel", "update", "create", "delete", "send", "request", "refund", "set", "add", "remove",
    "change", "modify", "submit", "place", "book", "issue", "transfer", "pay", "reset", "close",
    "post", "write", "edit", "apply", "approve", "reject", "assign", "escalate", "return", "open",
];

/// Whether byte `b` belongs to a word (letters, digits, the apostrophe of a contraction).
fn word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'\'' || b >= 0x80
}

/// Where `phrase` occurs in `s` as whole words, first to last, not overlapping.
pub(super) fn find_words<'a>(s: &'a str, phrase: &'a str) -> impl Iterator<Item = usize> + 'a {
    let mut from = 0;
    std::iter::from_fn(move || {
        let at = next_whole(s.as_bytes(), phrase.as_bytes(), from)?;
        from = at + phrase.len();
        Some(at)
    })
}

/// The first place at or after `from` where `phrase` occurs in `s` as whole words.
///
/// The text read is a clause of a few hundred bytes at most and the phrases are short, so each is
/// found from its first byte (`memchr`) and compared in place: a substring searcher built per
/// phrase and clause cost more than the search.
fn next_whole(s: &[u8], phrase: &[u8], mut from: usize) -> Option<usize> {
    let first = *phrase.first()?;
    while let Some(k) = memchr::memchr(first, s.get(from..)?) {
        let at = from + k;
        let end = at + phrase.len();
        // A phrase that starts with an apostrophe is the end of a contraction ("'d be happy"):
        // it follows a word.
        if s[at..].starts_with(phrase)
            && (at == 0 || first == b'\'' || !word_byte(s[at - 1]))
            && (end >= s.len() || !word_byte(s[end]))
        {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

/// A normalised clause and the first bytes of its words. A phrase whose first byte starts no
/// word of the clause is passed over without a search: most of the word classes, for a clause of
/// a few words.
#[derive(Debug, Default)]
pub(super) struct Clause {
    text: String,
    /// Bit `b % 64` for the first byte `b` of each word.
    initials: u64,
}

impl Clause {
    pub(super) fn new(text: String) -> Clause {
        let b = text.as_bytes();
        let initials = (0..b.len())
            .filter(|&i| word_byte(b[i]) && (i == 0 || !word_byte(b[i - 1])))
            .fold(0, |m, i| m | initial(b[i]));
        Clause { text, initials }
    }

    pub(super) fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether a word of the clause may start `phrase`.
    fn may_hold(&self, phrase: &str) -> bool {
        phrase
            .bytes()
            .next()
            .is_some_and(|b| !word_byte(b) || b == b'\'' || self.initials & initial(b) != 0)
    }

    /// Where `phrase` occurs in the clause as whole words ([`find_words`]).
    pub(super) fn find<'a>(&'a self, phrase: &'a str) -> impl Iterator<Item = usize> + 'a {
        let text = if self.may_hold(phrase) {
            &self.text[..]
        } else {
            ""
        };
        find_words(text, phrase)
    }

    /// Whether any of `phrases` occurs in the clause as whole words.
    pub(super) fn has_any(&self, phrases: &[&str]) -> bool {
        phrases.iter().any(|p| {
            self.may_hold(p) && next_whole(self.text.as_bytes(), p.as_bytes(), 0).is_some()
        })
    }
}

fn initial(b: u8) -> u64 {
    1 << (b % 64)
}

/// The words of `s`, in order.
pub(super) fn words(s: &str) -> impl DoubleEndedIterator<Item = &str> {
    s.split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|w| !w.is_empty())
}

/// Whether `w` is a past form: a regular -ed (not -eed, as "need") or an irregular one.
pub(super) fn is_past_form(w: &str) -> bool {
    (w.len() > 3 && w.ends_with("ed") && !w.ends_with("eed")) || IRREGULAR_PAST.contains(&w)
}

/// The verbs that name the action of a tool called `name`: its first name word and that word's
/// group.
pub(super) fn verbs_of(name: &str) -> Vec<&'static str> {
    let first = first_word(name);
    let mut out: Vec<&'static str> = VERB_GROUPS
        .iter()
        .filter(|g| g.contains(&first.as_str()))
        .flat_map(|g| g.iter().copied())
        .collect();
    if out.is_empty()
        && let Some(w) = WRITES.iter().chain(&GENERIC_ACTIONS).find(|w| **w == first)
    {
        out.push(w);
    }
    out
}

/// The first word of a tool name (`cancel_order` → `cancel`), lower case.
pub(super) fn first_word(name: &str) -> String {
    name.split(['_', '-', '.', ' '])
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase()
}

/// Whether a tool called `name` changes something (its first name word is one of [`WRITES`]); a
/// call whose name is not known is taken as one.
pub(super) fn is_write(name: Option<&str>) -> bool {
    name.is_none_or(|n| WRITES.contains(&first_word(n).as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_found_whole() {
        let has_any = |s: &str, phrases: &[&str]| Clause::new(s.to_string()).has_any(phrases);
        assert!(has_any("i can't find it", &["can't"]));
        assert!(!has_any("i can't find it", &["can"]));
        assert!(has_any("e.g. this", &["e.g"]));
        assert!(!has_any("ann@example.com", &["an example"]));
        assert!(has_any("so i'd be happy to", &["'d be happy"]));
        assert!(!has_any("i would like", &["like it"]));
        assert_eq!(
            find_words("as soon as soon as", "as soon as").collect::<Vec<_>>(),
            [0]
        );
        assert!(is_past_form("submitted") && !is_past_form("need") && is_past_form("ran"));
        assert_eq!(
            verbs_of("cancel_order"),
            vec!["cancel", "stop", "void", "abort"]
        );
        assert!(is_write(Some("request_return")) && !is_write(Some("get_order")));
        assert!(is_write(None));
    }
}
