//! The value formats the report, the comparison and the terminal table share: optional and
//! per-success values, rates, percentage points, tokens and short digests.

use crate::analysis::intervals::bootstrap::Interval;
use crate::analysis::{ModelSummary, Rate};
use crate::report::number::{
    NOT_AVAILABLE, ci_percent, denominator, fixed, number, percent_with_n, telling_decimals,
};

/// Length of a digest as shown in tables (the full digest is in `manifest.json`).
pub(super) const SHORT_DIGEST: usize = 12;

/// An optional value formatted by `f`, `n/a` when absent.
pub fn opt(value: Option<f64>, f: impl Fn(f64) -> String) -> String {
    value.map_or_else(|| NOT_AVAILABLE.to_string(), f)
}

/// A per-success (or per-correct) figure formatted by `f`: `n/a (0 correct)` when its count is
/// 0, so nothing reads as if divided by an empty count; `n/a` when otherwise absent.
pub fn per_success(value: Option<f64>, count: usize, f: impl Fn(f64) -> String) -> String {
    if count == 0 {
        return NO_CORRECT.to_string();
    }
    opt(value, f)
}

/// A model's per-success figure: as [`per_success`], but `n/a (nothing graded)` when every
/// conversation ended on a failure outside the model, which left no pass to count.
pub(crate) fn model_per_success(
    m: &ModelSummary,
    value: Option<f64>,
    f: impl Fn(f64) -> String,
) -> String {
    if m.outcomes.graded == 0 {
        return format!("{NOT_AVAILABLE} ({NOTHING_GRADED})");
    }
    per_success(value, m.passes, f)
}

/// What a per-success figure over no success reads.
pub const NO_CORRECT: &str = "n/a (0 correct)";

/// Whether the run's server was Ollama: its timings and processes are then named Ollama's, and
/// on any other (an OpenAI-compatible engine, the stub, an import) the server's.
pub(super) fn on_ollama(s: &crate::analysis::Summary) -> bool {
    s.backend == crate::wire::chat::ApiKind::Ollama.as_str()
}

/// Why a model's figure is `n/a` when every one of its conversations or calls ended on the wire.
pub(super) const NOTHING_GRADED: &str = "nothing graded";

/// A pair's figure when one of the two has nothing graded: `` n/a (`m`: nothing graded) ``
/// naming the first such model, which the wire, not the model, left without a figure.
pub(super) fn nothing_graded(pair: [&str; 2], graded: impl Fn(&str) -> usize) -> Option<String> {
    pair.into_iter()
        .find(|m| graded(m) == 0)
        .map(|m| format!("{NOT_AVAILABLE} (`{m}`: {NOTHING_GRADED})"))
}

/// A rate as `40.8% (49/120)`, with its interval where it has one (`40.8% (49/120)
/// [25%–58%]`); `n/a` when undefined.
pub fn rate(r: Option<Rate>) -> String {
    r.map_or_else(
        || NOT_AVAILABLE.to_string(),
        |r| {
            let ci = r
                .ci95
                .map(|i| format!(" [{}]", ci_percent(i.low, i.high)))
                .unwrap_or_default();
            format!("{}{ci}", percent_with_n(r.hits as u64, r.of as u64))
        },
    )
}

/// A model's rate with its denominator note; an absent rate gets none (`n/a` has no
/// denominator to qualify).
pub(super) fn model_rate(r: Option<Rate>, m: &ModelSummary) -> String {
    match r {
        Some(_) => format!("{}{}", rate(r), excluded(m)),
        None => rate(r),
    }
}

/// Percentage points with a sign and one decimal: `0.275` -> `+27.5 pp`.
pub fn points(diff: f64) -> String {
    if !diff.is_finite() {
        return NOT_AVAILABLE.into();
    }
    let v = fixed(diff * 100.0, 1);
    if v.starts_with('-') || v == "0.0" {
        format!("{v} pp")
    } else {
        format!("+{v} pp")
    }
}

/// A CI of a difference in percentage points: `+13 to +42 pp`; with a decimal or more where
/// whole points would show two different bounds as one (`-0.2 to +0.2 pp`, never `0 to 0 pp`).
pub fn ci_points(i: &Interval) -> String {
    if !i.low.is_finite() || !i.high.is_finite() {
        return NOT_AVAILABLE.into();
    }
    let (low, high) = (i.low * 100.0, i.high * 100.0);
    let d = telling_decimals(low, high, 0);
    let p = |x: f64| {
        let v = fixed(x, d);
        if v.starts_with('-') || v.chars().all(|c| c == '0' || c == '.') {
            v
        } else {
            format!("+{v}")
        }
    };
    format!("{} to {} pp", p(low), p(high))
}

/// A per-success figure's interval with `decimals` decimals and its unit: `11,200–15,900`,
/// `2.91–4.10 s`; `∞` where it has no upper end; `n/a` where absent.
pub(crate) fn ci_amount(i: Option<&Interval>, decimals: usize, unit: &str) -> String {
    let Some(i) = i.filter(|i| i.low.is_finite()) else {
        return NOT_AVAILABLE.into();
    };
    let high = if i.high.is_finite() {
        number(i.high, decimals)
    } else {
        "∞".into()
    };
    format!("{}–{high}{unit}", number(i.low, decimals))
}

/// Tokens: whole numbers with thousands separators.
pub fn tokens(x: f64) -> String {
    number(x, 0)
}

/// The first characters of a digest, after its `kind:` prefix (kept unless it is `sha256:`).
pub fn short_digest(d: &str) -> String {
    let (prefix, hex) = match d.rsplit_once(':') {
        Some(("sha256", hex)) => ("", hex),
        Some((p, hex)) => (p, hex),
        None => ("", d),
    };
    let hex: String = hex.chars().take(SHORT_DIGEST).collect();
    if prefix.is_empty() {
        hex
    } else {
        format!("{prefix}:{hex}")
    }
}

/// The note beside a rate: nothing when no conversation was excluded, else `(n = 118 of 120; ...)`.
/// An n/a figure of a model with nothing graded carries none: the figure says so itself
/// ([`success_cell`], [`NOTHING_GRADED`]).
pub(super) fn excluded(m: &ModelSummary) -> String {
    if m.outcomes.graded == m.outcomes.total || m.outcomes.graded == 0 {
        String::new()
    } else {
        format!(" ({})", denominator(&m.outcomes))
    }
}

/// A model's success as `40.8% (49/120)` with its denominator note; `n/a (nothing graded)` where
/// every conversation ended on a failure outside the model.
pub(super) fn success_cell(m: &ModelSummary) -> String {
    if m.outcomes.graded == 0 {
        return format!("{NOT_AVAILABLE} ({NOTHING_GRADED})");
    }
    format!(
        "{}{}",
        percent_with_n(m.passes as u64, m.outcomes.graded as u64),
        excluded(m)
    )
}

/// A model's share, `n/a (nothing graded)` where nothing was graded.
pub(super) fn model_share(m: &ModelSummary, value: Option<f64>) -> String {
    if m.outcomes.graded == 0 {
        return format!("{NOT_AVAILABLE} ({NOTHING_GRADED})");
    }
    opt(value, crate::report::number::percent)
}
