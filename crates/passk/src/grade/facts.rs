//! Answer-fact matching on reply text: phrases with word boundaries, dates in their common written
//! forms, amounts of money as numbers, and negation-aware stock claims ("not in stock" never counts
//! as "in stock"). Pure functions of strings.

use crate::domain::date::Date;
use crate::domain::money::Money;
use serde::{Deserialize, Serialize};

/// Which way a stock claim must go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StockClaim {
    /// The reply must say the product is in stock, and never that it is not.
    In,
    /// The reply must say the product is out of stock, and never that it is in stock.
    Out,
}

/// One required answer fact: a group of acceptable alternatives.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Fact {
    /// Any of these phrases, case-insensitive, not glued to other letters or digits.
    Any(Vec<String>),
    /// The date in any common written form ("2026-10-18", "October 18", "18 Oct", "18/10/2026").
    Date(Date),
    /// The amount as a number in the text ("$60.50", "60.5", "60.50 dollars").
    Money(Money),
    /// A negation-aware stock claim.
    Stock(StockClaim),
}

/// Lower case, typographic apostrophes and spaces made plain, runs of whitespace collapsed.
pub fn normalize(text: &str) -> String {
    let lowered = text
        .to_lowercase()
        .replace(['\u{2019}', '\u{2018}'], "'")
        .replace('\u{a0}', " ");
    lowered.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric()
}

/// Whether `phrase` occurs in `hay` (both normalized) without being glued to other letters or
/// digits at an alphanumeric edge ("5111" is not found in "51110", "available" not in "unavailable").
pub fn contains_phrase(hay: &str, phrase: &str) -> bool {
    phrase_positions(hay, phrase).next().is_some()
}

/// Where `phrase` occurs in `hay` by [`contains_phrase`]'s rule: byte offsets into `hay`.
fn phrase_positions<'h>(hay: &'h str, phrase: &str) -> impl Iterator<Item = usize> + 'h {
    let phrase = normalize(phrase);
    let first_word = phrase.chars().next().is_some_and(is_word);
    let last_word = phrase.chars().next_back().is_some_and(is_word);
    let found: Vec<usize> = if phrase.is_empty() {
        Vec::new()
    } else {
        hay.match_indices(phrase.as_str())
            .filter(|(i, _)| {
                let before = hay[..*i].chars().next_back();
                let rest = &hay[i + phrase.len()..];
                let after = rest.chars().next();
                // A plain plural ("tea towel" in "tea towels") still counts.
                let plural = phrase.ends_with(|c: char| c.is_alphabetic())
                    && after == Some('s')
                    && !rest[1..].chars().next().is_some_and(is_word);
                !(first_word && before.is_some_and(is_word))
                    && (!(last_word && after.is_some_and(is_word)) || plural)
            })
            .map(|(i, _)| i)
            .collect()
    };
    found.into_iter()
}

/// Words that make the rest of their clause a condition, not a statement ("if it is cancelled").
const CONDITIONALS: [&str; 5] = ["if", "unless", "whether", "in case", "once"];

/// The start of the clause holding byte `i` of `t`: after the last clause mark before it.
fn clause_start(t: &str, i: usize) -> usize {
    t[..i]
        .rfind(['.', '!', '?', ';', ',', ':', '\n'])
        .map(|k| k + 1)
        .unwrap_or(0)
}

/// The text of `t` from `start` (moved onto a character boundary) to `i`.
fn window(t: &str, mut start: usize, i: usize) -> &str {
    while !t.is_char_boundary(start) {
        start += 1;
    }
    &t[start..i]
}

/// Whether a negator comes in `window`.
fn negated(window: &str) -> bool {
    NEGATORS.iter().any(|n| {
        if *n == "n't" {
            window.contains(n)
        } else {
            contains_phrase(window, n)
        }
    })
}

/// Whether `phrase` occurs in `text` (normalized) as a statement: at least once outside a
/// conditional clause ("if order 5111 is cancelled") and not negated shortly before in its clause
/// ("was not cancelled"). A phrase that is itself a negation ("not on your account") is only held
/// to the conditional rule.
pub fn states_phrase(text: &str, phrase: &str) -> bool {
    let own_negation = negated(&normalize(phrase));
    phrase_positions(text, phrase).any(|i| {
        let start = clause_start(text, i);
        let conditional = CONDITIONALS
            .iter()
            .any(|c| contains_phrase(window(text, start, i), c));
        let near = window(text, start.max(i.saturating_sub(30)), i);
        !conditional && (own_negation || !negated(near))
    })
}

/// Text prepared for date matching: commas, "the", "of" and ordinal suffixes removed.
fn date_text(text: &str) -> String {
    let n = normalize(text).replace(',', " ").replace(". ", " ");
    let mut out = String::with_capacity(n.len());
    let chars: Vec<char> = n.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        out.push(c);
        if c.is_ascii_digit() && i + 2 < chars.len() + 1 {
            let rest: String = chars[i + 1..chars.len().min(i + 3)].iter().collect();
            let after = chars.get(i + 3).copied();
            if ["st", "nd", "rd", "th"].contains(&rest.as_str())
                && !after.is_some_and(char::is_alphanumeric)
            {
                i += 3;
                continue;
            }
        }
        i += 1;
    }
    let words: Vec<&str> = out
        .split_whitespace()
        .filter(|w| *w != "the" && *w != "of")
        .collect();
    words.join(" ")
}

/// The written forms of a date that count as quoting it.
pub fn date_forms(d: Date) -> Vec<String> {
    let month = d.month_name();
    let mut names = vec![month.to_string(), month[..3].to_string()];
    if d.month == 9 {
        names.push("sept".into());
    }
    let (y, m, day) = (d.year, d.month, d.day);
    let mut forms = vec![
        format!("{y:04}-{m:02}-{day:02}"),
        format!("{y:04}/{m:02}/{day:02}"),
        format!("{day:02}/{m:02}/{y:04}"),
        format!("{day}/{m}/{y:04}"),
        format!("{m:02}/{day:02}/{y:04}"),
        format!("{m}/{day}/{y:04}"),
        format!("{day:02}.{m:02}.{y:04}"),
        format!("{day}.{m}.{y:04}"),
        format!("{day:02}-{m:02}-{y:04}"),
    ];
    for n in names {
        forms.push(format!("{n} {day}"));
        forms.push(format!("{day} {n}"));
    }
    forms
}

/// Whether the text quotes the date in a common written form.
pub fn mentions_date(text: &str, d: Date) -> bool {
    let t = date_text(text);
    date_forms(d).iter().any(|f| contains_phrase(&t, f))
}

/// Every amount written as a number in the text ("$1,204.50", "60.5", "72"), in cents.
pub fn amounts(text: &str) -> Vec<Money> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let starts = chars[i].is_ascii_digit()
            && !(i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '.'));
        if !starts {
            i += 1;
            continue;
        }
        let mut j = i;
        let mut token = String::new();
        while j < chars.len()
            && (chars[j].is_ascii_digit()
                || (chars[j] == ',' && chars.get(j + 1).is_some_and(char::is_ascii_digit)))
        {
            if chars[j] != ',' {
                token.push(chars[j]);
            }
            j += 1;
        }
        if j + 1 < chars.len() && chars[j] == '.' && chars[j + 1].is_ascii_digit() {
            token.push('.');
            j += 1;
            while j < chars.len() && chars[j].is_ascii_digit() {
                token.push(chars[j]);
                j += 1;
            }
        }
        if let Some(m) = Money::parse(&token) {
            out.push(m);
        }
        i = j.max(i + 1);
    }
    out
}

/// Whether the text quotes the amount.
pub fn mentions_money(text: &str, m: Money) -> bool {
    amounts(text).contains(&m)
}

/// Phrases that say a product is not in stock.
const OUT_PHRASES: [&str; 13] = [
    "out of stock",
    "out-of-stock",
    "sold out",
    "unavailable",
    "no stock",
    "none in stock",
    "none left",
    "zero in stock",
    "0 in stock",
    "none available",
    "no units",
    "backorder",
    "back-order",
];

/// Phrases that say a product is in stock, unless negated just before.
const IN_PHRASES: [&str; 4] = ["in stock", "in-stock", "available", "units left"];

/// Words that negate an "in stock" phrase when they come shortly before it in the same clause.
const NEGATORS: [&str; 6] = ["not", "n't", "no longer", "never", "no", "nor"];

/// (says in stock, says out of stock) for a normalized text.
pub fn stock_claims(text: &str) -> (bool, bool) {
    let t = normalize(text);
    let mut negative = OUT_PHRASES.iter().any(|p| contains_phrase(&t, p));
    let mut positive = false;
    for p in IN_PHRASES {
        for (i, _) in t.match_indices(p) {
            let after = t[i + p.len()..].chars().next();
            let before = t[..i].chars().next_back();
            if before.is_some_and(is_word) || after.is_some_and(is_word) {
                continue;
            }
            let start = clause_start(&t, i).max(i.saturating_sub(30));
            if negated(window(&t, start, i)) {
                negative = true;
            } else {
                positive = true;
            }
        }
    }
    (positive, negative)
}

/// Whether one required fact holds in the (joined) reply text.
pub fn fact_holds(fact: &Fact, text: &str) -> bool {
    match fact {
        Fact::Any(alts) => {
            let t = normalize(text);
            alts.iter().any(|a| states_phrase(&t, a))
        }
        Fact::Date(d) => mentions_date(text, *d),
        Fact::Money(m) => mentions_money(text, *m),
        Fact::Stock(claim) => {
            let (pos, neg) = stock_claims(text);
            match claim {
                StockClaim::In => pos && !neg,
                StockClaim::Out => neg && !pos,
            }
        }
    }
}

/// The fact as the reasons line words it.
pub fn describe(fact: &Fact) -> String {
    match fact {
        Fact::Any(alts) => format!("one of {alts:?}"),
        Fact::Date(d) => format!("the date {d}"),
        Fact::Money(m) => format!("the amount {m}"),
        Fact::Stock(StockClaim::In) => "that it is in stock".into(),
        Fact::Stock(StockClaim::Out) => "that it is out of stock".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn date(s: &str) -> Date {
        Date::parse(s).expect("date")
    }

    #[test]
    fn dates_in_common_forms() {
        let d = date("2026-09-20");
        for ok in [
            "on 2026-09-20",
            "September 20",
            "Sept. 20th",
            "20 Sep 2026",
            "the 20th of September",
            "20/09/2026",
            "9/20/2026",
            "sunday, september 20, 2026",
        ] {
            assert!(mentions_date(ok, d), "{ok}");
        }
        for bad in [
            "September 2",
            "September 200",
            "20 October",
            "2026-09-21",
            "120 sep",
        ] {
            assert!(!mentions_date(bad, d), "{bad}");
        }
    }

    #[test]
    fn money_as_numbers() {
        assert!(mentions_money("The total was $60.50.", Money(6050)));
        assert!(mentions_money("60.5 dollars", Money(6050)));
        assert!(mentions_money("it costs $1,204.00", Money(120_400)));
        assert!(mentions_money("It's 72 USD", Money(7200)));
        assert!(!mentions_money("order 5172", Money(7200)));
        assert!(!mentions_money("$60.55", Money(6050)));
    }

    #[test]
    fn stock_claims_are_negation_aware() {
        let out = Fact::Stock(StockClaim::Out);
        let inn = Fact::Stock(StockClaim::In);
        for t in [
            "It is not in stock right now.",
            "Sorry, it's out of stock.",
            "It isn't available at the moment",
            "currently unavailable",
        ] {
            assert!(fact_holds(&out, t), "{t}");
            assert!(!fact_holds(&inn, t), "{t}");
        }
        for t in [
            "Yes, it is in stock (7 left).",
            "Good news: it's available for $52.",
        ] {
            assert!(fact_holds(&inn, t), "{t}");
            assert!(!fact_holds(&out, t), "{t}");
        }
        assert!(!fact_holds(
            &out,
            "It was out of stock, but it's in stock again."
        ));
    }

    #[test]
    fn a_state_change_inside_a_condition_or_a_negation_is_not_stated() {
        let holds = |t: &str| fact_holds(&Fact::Any(vec!["cancelled".into()]), t);
        assert!(holds("Done: order 5111 (Walnut desk lamp) is cancelled."));
        assert!(!holds(
            "If order 5111 is cancelled, the user will receive a notification."
        ));
        assert!(!holds("Order 5111 was not cancelled."));
        assert!(!holds("Order 5111 wasn't cancelled yet."));
        assert!(!holds("Once it is cancelled you get an email."));
        // One plain statement is enough, and a later clause is its own.
        assert!(holds(
            "If you change your mind, tell me. Order 5111 is cancelled."
        ));
        assert!(holds("No problem, order 5111 is cancelled."));
        // A fact that is itself a negation is held to the conditional rule only.
        let refusal = |t: &str| fact_holds(&Fact::Any(vec!["not on your account".into()]), t);
        assert!(refusal(
            "Order 5114 is not on your account, so I can't cancel it."
        ));
        assert!(!refusal("If it is not on your account, I can't help."));
    }

    #[test]
    fn phrases_respect_word_edges() {
        let t = normalize("Order 51110 is fine");
        assert!(!contains_phrase(&t, "5111"));
        assert!(contains_phrase(&normalize("order #5111."), "5111"));
        assert!(fact_holds(
            &Fact::Any(vec!["Tea Towel".into()]),
            "two linen tea towels"
        ));
    }
}
