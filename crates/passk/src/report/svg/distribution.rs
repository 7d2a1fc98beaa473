//! Box-and-whisker plots side by side: quartiles, whiskers within 1.5 interquartile ranges,
//! outliers as open circles and, optionally, every observation as a dot.

use super::axis::{Axis, Scale};
use super::canvas::{AXIS, Area, Canvas, HEIGHT, Labels, MUTED, PALETTE, TEXT, no_data};
use super::text::CHAR_W;
use super::text::n;
use crate::report::number::number;

/// The values of one distribution (e.g. latency per conversation of one model).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Distribution {
    /// Name written under its box.
    pub name: String,
    /// Observations, any order; non-finite ones are ignored.
    pub values: Vec<f64>,
}

/// Box-and-whisker plots side by side, with the observations as a strip of dots.
///
/// Box: 25th to 75th percentile with the median (linear interpolation at index (n - 1)p);
/// whiskers: the furthest observations within 1.5 interquartile ranges; beyond them, open circles.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DistributionChart {
    /// Title and axis labels.
    pub labels: Labels,
    /// One box per sample.
    pub samples: Vec<Distribution>,
    /// Fixed y range; `None`: from the data.
    pub y_range: Option<(f64, f64)>,
    /// Whether the automatic y range starts at zero (durations, counts).
    pub zero_based: bool,
    /// Whether every observation is also drawn as a dot (spread sideways, deterministically).
    pub show_points: bool,
}

impl DistributionChart {
    /// Whether some observation is finite (else the chart only says "no data").
    pub fn has_data(&self) -> bool {
        self.samples
            .iter()
            .any(|s| s.values.iter().any(|v| v.is_finite()))
    }
}

/// Renders one box-and-whisker plot per sample (see [`DistributionChart`]).
pub fn distribution(chart: &DistributionChart) -> String {
    let samples: Vec<Vec<f64>> = chart
        .samples
        .iter()
        .map(|s| {
            let mut v: Vec<f64> = s.values.iter().copied().filter(|v| v.is_finite()).collect();
            v.sort_by(f64::total_cmp);
            v
        })
        .collect();
    let all: Vec<f64> = samples.iter().flatten().copied().collect();
    if !chart.has_data() {
        return no_data(&chart.labels, HEIGHT);
    }
    let y_axis = Axis::new(&all, chart.y_range, false, chart.zero_based);
    let mut c = Canvas::new(HEIGHT, &chart.labels);
    let area = c.plot_area(&y_axis, 0.0, 16.0);
    let sy = Scale::new(y_axis.lo, y_axis.hi, area.bottom, area.top);
    c.y_grid(&area, &sy, &y_axis, &chart.labels.y);
    c.clip(&area);
    c.x_title(&area, &chart.labels.x, 52.0);
    let band = (area.right - area.left) / samples.len() as f64;
    let box_w = (band * 0.5).min(60.0);
    let max_chars = (band / CHAR_W).floor() as usize;
    c.open_clipped();
    let mut notes = Vec::new();
    for (i, (values, sample)) in samples.iter().zip(&chart.samples).enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        let cx = area.left + band * (i as f64 + 0.5);
        notes.push((cx, sample.name.as_str(), values.len()));
        if !values.is_empty() {
            let b = BoxPlot::of(values);
            b.draw(&mut c, &sy, cx, box_w, color);
            b.points(&mut c, &sy, (cx, box_w, color), values, chart.show_points);
        }
    }
    c.push("</g>".into());
    sample_names(&mut c, &area, max_chars, &notes);
    c.finish()
}

/// Each sample's name under its box, and its count (or "no data") under the name.
fn sample_names(c: &mut Canvas, area: &Area, max_chars: usize, notes: &[(f64, &str, usize)]) {
    for &(cx, name, count) in notes {
        c.text_full(
            cx,
            area.bottom + 16.0,
            "middle",
            12.0,
            TEXT,
            name,
            max_chars,
        );
        let note = if count == 0 {
            "no data".to_string()
        } else {
            format!("n = {}", number(count as f64, 0))
        };
        c.text(cx, area.bottom + 30.0, "middle", 10.0, MUTED, &note);
    }
}

/// A box and whiskers: quartiles, and whiskers at the furthest values within 1.5 IQR.
struct BoxPlot {
    q1: f64,
    q2: f64,
    q3: f64,
    low: f64,
    high: f64,
}

impl BoxPlot {
    /// Of sorted finite values (at least one).
    fn of(values: &[f64]) -> BoxPlot {
        let q1 = quantile(values, 0.25);
        let q3 = quantile(values, 0.75);
        let fence = 1.5 * (q3 - q1);
        let low = values
            .iter()
            .copied()
            .find(|v| *v >= q1 - fence)
            .unwrap_or(q1);
        let high = values
            .iter()
            .rev()
            .copied()
            .find(|v| *v <= q3 + fence)
            .unwrap_or(q3);
        BoxPlot {
            q1,
            q2: quantile(values, 0.5),
            q3,
            low,
            high,
        }
    }

    /// The whiskers, the box and the median line, centred at `cx`.
    fn draw(&self, c: &mut Canvas, sy: &Scale, cx: f64, box_w: f64, color: &str) {
        let (l, r) = (n(cx - box_w / 2.0), n(cx + box_w / 2.0));
        let (wl, wr) = (n(cx - box_w / 4.0), n(cx + box_w / 4.0));
        c.push(format!(
            r#"<path d="M{x} {a} L{x} {b} M{x} {d} L{x} {e} M{wl} {a} L{wr} {a} M{wl} {e} L{wr} {e}" stroke="{AXIS}" fill="none"/>"#,
            x = n(cx),
            a = n(sy.at(self.low)),
            b = n(sy.at(self.q1)),
            d = n(sy.at(self.q3)),
            e = n(sy.at(self.high)),
        ));
        c.push(format!(
            r#"<rect x="{l}" y="{}" width="{}" height="{}" fill="{color}" fill-opacity="0.25" stroke="{color}" stroke-width="1.5"/>"#,
            n(sy.at(self.q3)),
            n(box_w),
            n(sy.at(self.q1) - sy.at(self.q3)),
        ));
        c.push(format!(
            r#"<line x1="{l}" y1="{m}" x2="{r}" y2="{m}" stroke="{color}" stroke-width="2.5"/>"#,
            m = n(sy.at(self.q2))
        ));
    }

    /// Outliers as open circles; with `all`, every other value as a jittered dot.
    fn points(
        &self,
        c: &mut Canvas,
        sy: &Scale,
        (cx, box_w, color): (f64, f64, &str),
        values: &[f64],
        all: bool,
    ) {
        for (k, v) in values.iter().enumerate() {
            let outlier = *v < self.low || *v > self.high;
            if outlier {
                c.push(format!(
                    r#"<circle cx="{}" cy="{}" r="3" fill="none" stroke="{color}"/>"#,
                    n(cx),
                    n(sy.at(*v))
                ));
            } else if all {
                let jitter = ((k as f64 * 0.618_033_988_749_895).fract() - 0.5) * box_w * 0.8;
                c.push(format!(
                    r#"<circle cx="{}" cy="{}" r="2" fill="{color}" fill-opacity="0.6"/>"#,
                    n(cx + jitter),
                    n(sy.at(*v))
                ));
            }
        }
    }
}

/// Linear interpolation at index (n - 1)p of sorted, non-empty `values` (metrics.md percentiles).
fn quantile(values: &[f64], p: f64) -> f64 {
    let pos = (values.len() - 1) as f64 * p;
    let i = pos.floor() as usize;
    let frac = pos - i as f64;
    match values.get(i + 1) {
        Some(next) => values[i] + (next - values[i]) * frac,
        None => values[i],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::svg::xml_check::{check_xml, count};

    #[test]
    fn quantiles_interpolate_linearly() {
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(quantile(&v, 0.5), 2.5);
        assert_eq!(quantile(&v, 0.25), 1.75);
        assert_eq!(quantile(&v, 1.0), 4.0);
        assert_eq!(quantile(&[7.0], 0.95), 7.0);
    }

    #[test]
    fn distribution_draws_boxes_outliers_and_counts() {
        let chart = DistributionChart {
            labels: Labels::new("Latency per conversation", "model", "seconds"),
            samples: vec![
                Distribution {
                    name: "small".into(),
                    values: vec![1.0, 2.0, 2.0, 3.0, 3.0, 4.0, 40.0, f64::NAN],
                },
                Distribution {
                    name: "empty".into(),
                    values: vec![],
                },
            ],
            y_range: None,
            zero_based: true,
            show_points: true,
        };
        let svg = distribution(&chart);
        assert_eq!(svg, distribution(&chart));
        let names = check_xml(&svg);
        assert!(svg.contains(">n = 7<"));
        assert!(svg.contains(">no data<"), "the empty sample says so");
        // one outlier (40) as an open circle, six in-range dots
        assert_eq!(svg.matches(r##"fill="none" stroke="#0072B2""##).count(), 1);
        assert_eq!(count(&names, "circle"), 7);
    }
}
