//! Text inside a chart: XML escaping, coordinates and value labels written with fixed digits, and
//! names shortened or wrapped to the room they have. Widths are estimated from a fixed character
//! width, so layout never depends on the fonts of the host.

use crate::report::number::{fixed, number};

/// Approximate width of one character at the 12 px body size, used for layout only.
pub(super) const CHAR_W: f64 = 7.0;

/// `id` with every character but ASCII letters, digits, `-` and `_` replaced by `-`, so it is a valid
/// XML id fragment and needs no escaping in `url(#…)`.
pub(super) fn id_safe(id: &str) -> String {
    id.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect()
}

/// Makes text safe for SVG/XML: escapes markup characters and drops control characters XML forbids.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(' '),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => {}
            c => out.push(c),
        }
    }
    out
}

pub(super) const NOT_AVAILABLE: &str = crate::report::number::NOT_AVAILABLE;

/// A coordinate with two fixed decimals (a non-finite one, which layout never produces, as 0).
pub(super) fn n(v: f64) -> String {
    if v.is_finite() {
        fixed(v, 2)
    } else {
        "0.00".into()
    }
}

pub(super) fn ordered(a: f64, b: f64) -> (f64, f64) {
    if a <= b { (a, b) } else { (b, a) }
}

/// A value label: fewer decimals as the value grows; whole numbers without decimals.
pub(super) fn auto_value(v: f64) -> String {
    if !v.is_finite() {
        return NOT_AVAILABLE.into();
    }
    let a = v.abs();
    if v.fract() == 0.0 || a >= 100.0 {
        number(v, 0)
    } else if a >= 10.0 {
        number(v, 1)
    } else {
        number(v, 2)
    }
}

/// Shortens `text` to `max` characters, ending in an ellipsis when cut.
pub(super) fn truncate(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    if max == 0 {
        return String::new();
    }
    let mut out: String = text.chars().take(max - 1).collect();
    out.push('…');
    out
}

/// Splits `text` into lines of at most `max` characters, at spaces where it can (a longer word is
/// cut); never drops a character but the spaces it breaks at.
pub(super) fn wrap(text: &str, max: usize) -> Vec<String> {
    let max = max.max(1);
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        let mut word: Vec<char> = word.chars().collect();
        let used = line.chars().count();
        if used > 0 && used + 1 + word.len() <= max {
            line.push(' ');
            line.extend(word);
            continue;
        }
        if used > 0 {
            lines.push(std::mem::take(&mut line));
        }
        while word.len() > max {
            lines.push(word.drain(..max).collect());
        }
        line = word.into_iter().collect();
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

pub(super) fn text_width(text: &str, size: f64) -> f64 {
    text.chars().count() as f64 * CHAR_W * size / 12.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::svg::canvas::MAX_NAME;

    #[test]
    fn wrap_breaks_at_spaces_and_loses_nothing() {
        assert_eq!(
            wrap("looped without answering (call cap)", MAX_NAME),
            ["looped without answering", "(call cap)"]
        );
        assert_eq!(wrap("short", MAX_NAME), ["short"]);
        assert_eq!(wrap("abcdefgh ij", 3), ["abc", "def", "gh", "ij"]);
        assert_eq!(wrap("", 5), [""]);
    }

    #[test]
    fn escaping_and_truncation() {
        assert_eq!(escape("<&>\"'\u{7}\n"), "&lt;&amp;&gt;&quot;&apos; ");
        assert_eq!(truncate("abcdef", 4), "abc…");
        assert_eq!(truncate("abc", 4), "abc");
        assert_eq!(truncate("abc", 0), "");
        assert_eq!(n(-0.001), "0.00");
        assert_eq!(n(f64::NAN), "0.00");
    }
}
