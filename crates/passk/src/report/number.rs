//! The number formats every report table and chart shares: percent with its counts, confidence
//! intervals, ratios, thousands, seconds and exclusion notes.
//!
//! Values come in already computed (from the analysis stage); these helpers only format them, always
//! with fixed digits, so that the same numbers give the same bytes. A value that is not finite formats
//! as `n/a`, never as `NaN` or `inf`; the one exception is an infinite upper bound of a ratio's
//! interval, written `∞`.

use crate::analysis::figures::taxonomy::OutcomeCounts;

/// Text written for a value that is missing or not finite.
pub const NOT_AVAILABLE: &str = "n/a";

/// A share in [0, 1] as a percent with one decimal: `0.4083` -> `40.8%`.
pub fn percent(share: f64) -> String {
    if !share.is_finite() {
        return NOT_AVAILABLE.into();
    }
    format!("{}%", fixed(share * 100.0, 1))
}

/// A count over its denominator as a percent with the counts: `(49, 120)` -> `40.8% (49/120)`.
pub fn percent_with_n(count: u64, n: u64) -> String {
    if n == 0 {
        return format!("{NOT_AVAILABLE} (0/0)");
    }
    format!(
        "{} ({}/{})",
        percent(count as f64 / n as f64),
        thousands_u(count),
        thousands_u(n)
    )
}

/// A confidence interval of a share, in whole percents: `(0.27, 0.55)` -> `27%–55%`; with a
/// decimal or more where whole percents would show two different bounds as one
/// (`(0.9985, 1.0)` -> `99.8%–100.0%`, never `100%–100%`).
pub fn ci_percent(low: f64, high: f64) -> String {
    if !low.is_finite() || !high.is_finite() {
        return NOT_AVAILABLE.into();
    }
    let (low, high) = (low.clamp(0.0, 1.0) * 100.0, high.clamp(0.0, 1.0) * 100.0);
    let d = telling_decimals(low, high, 0);
    format!("{}%–{}%", fixed(low, d), fixed(high, d))
}

/// Decimals for an interval's bounds, on the scale they are printed in: the fewest from `least`
/// (three more at most) at which two different bounds do not print alike. Whole percents would
/// print a rate's interval beside 100% on thousands of tasks as `100%–100%`, a certainty the
/// interval does not claim.
pub(crate) fn telling_decimals(low: f64, high: f64, least: usize) -> usize {
    (least..=least + 3)
        .find(|&d| (high - low).abs() < 1e-9 || fixed(low, d) != fixed(high, d))
        .unwrap_or(least + 3)
}

/// A confidence interval of a ratio: `(1.2, 1.85)` -> `1.20x–1.85x`; an infinite bound (resamples
/// in which the denominator model never passed) is `∞`: `1.20x–∞`; `∞–∞` is no interval (`n/a`).
pub fn ci_ratio(low: f64, high: f64) -> String {
    let bound = |x: f64| {
        if x == f64::INFINITY {
            "∞".to_string()
        } else {
            ratio(x)
        }
    };
    if low.is_nan() || high.is_nan() || low == f64::NEG_INFINITY || low == f64::INFINITY {
        return NOT_AVAILABLE.into();
    }
    format!("{}–{}", bound(low), bound(high))
}

/// A ratio with two decimals: `1.4712` -> `1.47x`.
pub fn ratio(value: f64) -> String {
    if !value.is_finite() {
        return NOT_AVAILABLE.into();
    }
    format!("{}x", fixed(value, 2))
}

/// `12 calls`, `1 call`: a count with its noun (plural with `s`), thousands separated.
pub fn counted(n: usize, noun: &str) -> String {
    let s = if n == 1 { "" } else { "s" };
    format!("{} {noun}{s}", thousands(n as i64))
}

/// An integer with thousands separators: `13185` -> `13,185`.
pub fn thousands(value: i64) -> String {
    let digits = value.unsigned_abs().to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3 + 1);
    if value < 0 {
        out.push('-');
    }
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// A number with `decimals` fixed decimals and thousands separators: `(13185.44, 1)` -> `13,185.4`.
pub fn number(value: f64, decimals: usize) -> String {
    if !value.is_finite() {
        return NOT_AVAILABLE.into();
    }
    let text = fixed(value, decimals);
    let (sign, unsigned) = match text.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", text.as_str()),
    };
    let (int, frac) = match unsigned.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (unsigned, None),
    };
    let mut out = String::from(sign);
    let len = int.len();
    for (i, ch) in int.chars().enumerate() {
        if i > 0 && (len - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    if let Some(frac) = frac {
        out.push('.');
        out.push_str(frac);
    }
    out
}

/// Seconds with two decimals and the unit: `0.4` -> `0.40 s`.
pub fn seconds(value: f64) -> String {
    if !value.is_finite() {
        return NOT_AVAILABLE.into();
    }
    format!("{} s", number(value, 2))
}

/// The denominator note set next to every rate, counts thousands-separated:
/// `n = 11,800 of 12,000; 200 transport` ([`OutcomeCounts::denominator_note`]).
pub fn denominator(o: &OutcomeCounts) -> String {
    o.denominator_note()
}

fn thousands_u(value: u64) -> String {
    number(value as f64, 0)
}

/// `value` with exactly `decimals` decimals; a negative zero loses its sign.
pub(crate) fn fixed(value: f64, decimals: usize) -> String {
    let text = format!("{value:.decimals$}");
    match text.strip_prefix('-') {
        Some(rest) if rest.chars().all(|c| c == '0' || c == '.') => rest.to_string(),
        _ => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_with_counts() {
        assert_eq!(percent_with_n(49, 120), "40.8% (49/120)");
        assert_eq!(percent_with_n(0, 0), "n/a (0/0)");
        assert_eq!(percent_with_n(3, 3), "100.0% (3/3)");
        assert_eq!(percent_with_n(12000, 12000), "100.0% (12,000/12,000)");
        assert_eq!(percent(f64::NAN), "n/a");
    }

    #[test]
    fn confidence_intervals() {
        assert_eq!(ci_percent(0.2712, 0.5489), "27%–55%");
        assert_eq!(ci_percent(-0.0001, 0.1), "0%–10%");
        assert_eq!(ci_percent(0.86, 1.0), "86%–100%");
        assert_eq!(ci_percent(0.749, 0.9999), "75%–100%");
        // Beside the boundary on many tasks: a decimal, not a point at 100% or 0%.
        assert_eq!(ci_percent(0.99846, 1.0), "99.8%–100.0%");
        assert_eq!(ci_percent(0.0, 0.0012), "0.0%–0.1%");
        assert_eq!(ci_percent(0.99999, 1.0), "99.999%–100.000%");
        assert_eq!(ci_percent(0.4, 0.404), "40.0%–40.4%");
        assert_eq!(ci_percent(1.0, 1.0), "100%–100%");
        assert_eq!(ci_ratio(1.2, 1.854), "1.20x–1.85x");
        assert_eq!(ci_ratio(f64::NAN, 1.0), "n/a");
        assert_eq!(ci_ratio(1.2, f64::INFINITY), "1.20x–∞");
        assert_eq!(ci_ratio(f64::INFINITY, f64::INFINITY), "n/a");
    }

    #[test]
    fn ratios() {
        assert_eq!(ratio(1.4712), "1.47x");
        assert_eq!(ratio(f64::INFINITY), "n/a");
    }

    #[test]
    fn thousands_separators() {
        assert_eq!(thousands(13185), "13,185");
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(-1234567), "-1,234,567");
        assert_eq!(thousands(i64::MIN), "-9,223,372,036,854,775,808");
        assert_eq!(number(13185.44, 1), "13,185.4");
        assert_eq!(number(-1234.4, 0), "-1,234");
        assert_eq!(number(-0.001, 2), "0.00");
        assert_eq!(number(f64::NAN, 2), "n/a");
    }

    #[test]
    fn seconds_have_two_decimals() {
        assert_eq!(seconds(0.4), "0.40 s");
        assert_eq!(seconds(1234.567), "1,234.57 s");
        assert_eq!(seconds(f64::NAN), "n/a");
    }

    #[test]
    fn denominator_notes_separate_thousands() {
        let mut o = OutcomeCounts::default();
        for _ in 0..1200 {
            o.add(crate::runner::record::Outcome::Pass);
        }
        assert_eq!(denominator(&o), "n = 1,200");
        o.add(crate::runner::record::Outcome::TransportFail);
        o.add(crate::runner::record::Outcome::ToolServerFail);
        assert_eq!(
            denominator(&o),
            "n = 1,200 of 1,202; 1 transport; 1 tool server"
        );
        // summary.json carries the same text as report.md.
        assert_eq!(o.denominator_note(), denominator(&o));
    }
}
