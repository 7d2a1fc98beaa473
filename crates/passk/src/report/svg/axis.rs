//! Numeric axes: a linear scale from data units to pixels, and a domain widened to round tick
//! steps (1, 2 or 5 times a power of ten), with the ticks written as numbers or percents.

use super::text::text_width;
use crate::report::number::number;

/// A linear map from data units to pixels.
pub(super) struct Scale {
    pub(super) d0: f64,
    pub(super) d1: f64,
    pub(super) r0: f64,
    pub(super) r1: f64,
}

impl Scale {
    pub(super) fn new(d0: f64, d1: f64, r0: f64, r1: f64) -> Scale {
        Scale { d0, d1, r0, r1 }
    }

    pub(super) fn at(&self, v: f64) -> f64 {
        let span = self.d1 - self.d0;
        if span == 0.0 || !span.is_finite() {
            return (self.r0 + self.r1) / 2.0;
        }
        self.r0 + (v - self.d0) / span * (self.r1 - self.r0)
    }
}

/// A numeric axis: its domain, tick values and how to write them.
pub(super) struct Axis {
    pub(super) lo: f64,
    pub(super) hi: f64,
    pub(super) ticks: Vec<f64>,
    pub(super) decimals: usize,
    pub(super) percent: bool,
}

impl Axis {
    /// Domain from `values` (or `fixed`, when it is a valid range), widened to round ticks.
    pub(super) fn new(
        values: &[f64],
        fixed: Option<(f64, f64)>,
        integer: bool,
        include_zero: bool,
    ) -> Axis {
        let fixed = fixed.filter(|(a, b)| a.is_finite() && b.is_finite() && a < b);
        let (lo, hi) = fixed.unwrap_or_else(|| data_domain(values, include_zero));
        let step = nice_step((hi - lo) / 5.0, integer);
        let (lo, hi) = if fixed.is_some() || !step.is_finite() {
            (lo, hi)
        } else {
            ((lo / step).floor() * step, (hi / step).ceil() * step)
        };
        let ticks = ticks_of(lo, hi, step);
        let decimals = if step.is_finite() && step > 0.0 {
            (-step.log10().floor()).clamp(0.0, 6.0) as usize
        } else {
            2
        };
        Axis {
            lo,
            hi,
            ticks,
            decimals,
            percent: false,
        }
    }

    /// The same axis with ticks written as percents of 1.
    pub(super) fn percent(mut self) -> Axis {
        self.percent = true;
        self.decimals = self.decimals.saturating_sub(2);
        self
    }

    pub(super) fn label(&self, v: f64) -> String {
        if self.percent {
            format!("{}%", number(v * 100.0, self.decimals))
        } else {
            number(v, self.decimals)
        }
    }

    pub(super) fn widest_label(&self) -> f64 {
        self.ticks
            .iter()
            .map(|t| text_width(&self.label(*t), 11.0))
            .fold(0.0, f64::max)
    }
}

/// The range of the finite `values` (0 to 1 when there is none), stretched to zero when
/// `include_zero`, and padded when it is a single value.
fn data_domain(values: &[f64], include_zero: bool) -> (f64, f64) {
    let mut lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let mut hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if !(lo.is_finite() && hi.is_finite()) {
        lo = 0.0;
        hi = 1.0;
    }
    if include_zero {
        lo = lo.min(0.0);
        hi = hi.max(0.0);
    }
    if lo == hi {
        let pad = if lo == 0.0 { 1.0 } else { lo.abs() * 0.1 };
        lo -= pad;
        hi += pad;
    }
    (lo, hi)
}

/// The multiples of `step` from `lo` to `hi` (at most 51); the two ends when there is none.
fn ticks_of(lo: f64, hi: f64, step: f64) -> Vec<f64> {
    let mut ticks = Vec::new();
    if step.is_finite() && step > 0.0 {
        let first = (lo / step).ceil() as i64;
        let last = (hi / step + 1e-9).floor() as i64;
        for i in first..=last.min(first + 50) {
            ticks.push(i as f64 * step);
        }
    }
    if ticks.is_empty() {
        ticks = vec![lo, hi];
    }
    ticks
}

/// A round tick step (1, 2 or 5 times a power of ten) near `raw`; at least 1 when `integer`.
pub(super) fn nice_step(raw: f64, integer: bool) -> f64 {
    if !(raw.is_finite() && raw > 0.0) {
        return if integer { 1.0 } else { f64::NAN };
    }
    let mag = 10f64.powf(raw.log10().floor());
    let norm = raw / mag;
    let nice = if norm < 1.5 {
        1.0
    } else if norm < 3.0 {
        2.0
    } else if norm < 7.0 {
        5.0
    } else {
        10.0
    };
    let step = nice * mag;
    if integer { step.max(1.0).round() } else { step }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_ticks() {
        let a = Axis::new(&[0.0, 13185.0], None, false, true);
        assert_eq!(a.lo, 0.0);
        assert_eq!(a.hi, 14000.0);
        assert_eq!(a.label(a.ticks[1]), "2,000");
        let b = Axis::new(&[1.0, 3.0], None, true, false);
        assert!(b.ticks.iter().all(|t| t.fract() == 0.0), "{:?}", b.ticks);
        let c = Axis::new(&[0.123, 0.123], None, false, false);
        assert!(c.lo < 0.123 && c.hi > 0.123);
        assert!(c.ticks.len() >= 2);
        let d = Axis::new(&[0.0, 0.3], None, false, false);
        assert_eq!(d.label(d.ticks[3]), "0.15");
        let huge = Axis::new(&[-f64::MAX, f64::MAX], None, false, false);
        assert!(!huge.ticks.is_empty());
    }
}
