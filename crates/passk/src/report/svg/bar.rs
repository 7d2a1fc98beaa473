//! Grouped vertical bars: one group per category, one bar per series, with confidence intervals and
//! value labels that shrink to fit their bar.

use super::axis::{Axis, Scale};
use super::canvas::{
    AXIS, Area, Canvas, HEIGHT, Labels, PALETTE, Reference, Swatch, TEXT, legend_width, no_data,
};
use super::text::CHAR_W;
use super::text::{NOT_AVAILABLE, auto_value, n, ordered, text_width};

/// One bar of a grouped bar chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    /// Height; non-finite: no bar, "n/a" written instead.
    pub value: f64,
    /// Confidence interval drawn as an error bar, when known.
    pub ci: Option<(f64, f64)>,
    /// Text above the bar; `None`: the value, formatted.
    pub label: Option<String>,
}

impl Bar {
    /// A bar with no interval, labelled with its value.
    pub fn new(value: f64) -> Bar {
        Bar {
            value,
            ci: None,
            label: None,
        }
    }

    /// The same bar with a confidence interval.
    pub fn with_ci(mut self, low: f64, high: f64) -> Bar {
        self.ci = Some((low, high));
        self
    }

    /// The same bar with its own label (e.g. `"40.8%"`).
    pub fn with_label(mut self, label: impl Into<String>) -> Bar {
        self.label = Some(label.into());
        self
    }
}

/// One series of a grouped bar chart: one bar per category, in category order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BarSeries {
    /// Legend name (e.g. the model).
    pub name: String,
    /// Bars, one per category; missing trailing bars are not drawn.
    pub bars: Vec<Bar>,
}

/// Grouped vertical bars: categories along x, one bar per series in each group.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BarChart {
    /// Title and axis labels.
    pub labels: Labels,
    /// Category names along x.
    pub categories: Vec<String>,
    /// The series, one colour each.
    pub series: Vec<BarSeries>,
    /// Fixed y range; `None`: from zero to the data (intervals included).
    pub y_range: Option<(f64, f64)>,
    /// Horizontal reference lines.
    pub references: Vec<Reference>,
}

impl BarChart {
    /// Whether some bar or interval is finite (else the chart only says "no data").
    pub fn has_data(&self) -> bool {
        !(self.categories.is_empty() || self.series.is_empty() || self.finite_values().is_empty())
    }

    /// Every finite bar height and interval end, over the categories named.
    fn finite_values(&self) -> Vec<f64> {
        let mut ys: Vec<f64> = Vec::new();
        for s in &self.series {
            for b in s.bars.iter().take(self.categories.len()) {
                ys.push(b.value);
                if let Some((lo, hi)) = b.ci {
                    ys.push(lo);
                    ys.push(hi);
                }
            }
        }
        ys.retain(|v| v.is_finite());
        ys
    }
}

/// Renders grouped vertical bars with optional error bars and value labels.
pub fn bar_chart(chart: &BarChart) -> String {
    if !chart.has_data() {
        return no_data(&chart.labels, HEIGHT);
    }
    let y_axis = bar_axis(chart);
    let names: Vec<&str> = chart.series.iter().map(|s| s.name.as_str()).collect();

    let mut c = Canvas::new(HEIGHT, &chart.labels);
    let area = c.plot_area(&y_axis, legend_width(&names), 0.0);
    let sy = Scale::new(y_axis.lo, y_axis.hi, area.bottom, area.top);
    c.y_grid(&area, &sy, &y_axis, &chart.labels.y);
    c.clip(&area);
    let band = (area.right - area.left) / chart.categories.len() as f64;
    let group = band * 0.8;
    let layout = BarLayout {
        band,
        group,
        bar_w: group / chart.series.len() as f64,
        base: sy.at(0.0_f64.clamp(y_axis.lo, y_axis.hi)),
        area,
        sy,
    };
    category_names(&mut c, chart, &layout);
    c.open_clipped();
    let mut labels = Vec::new();
    for (i, s) in chart.series.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        for (j, b) in s.bars.iter().take(chart.categories.len()).enumerate() {
            labels.push(layout.bar(&mut c, (i, j), b, color));
        }
    }
    c.push("</g>".into());
    let (area, sy) = (&layout.area, &layout.sy);
    for (x, y, text) in labels {
        let size = bar_label_size(&text, layout.bar_w);
        c.text(x, y.max(area.top - 6.0), "middle", size, TEXT, &text);
    }
    c.push(format!(
        r#"<line x1="{}" y1="{b}" x2="{}" y2="{b}" stroke="{AXIS}"/>"#,
        n(area.left),
        n(area.right),
        b = n(layout.base)
    ));
    c.references(area, sy, &chart.references);
    c.legend(area, &names, Swatch::Box);
    c.finish()
}

/// The y axis over every finite bar, interval and reference line, from zero, with headroom for the
/// value labels above (or below) the tallest bars.
fn bar_axis(chart: &BarChart) -> Axis {
    let mut ys = chart.finite_values();
    ys.extend(chart.references.iter().map(|r| r.value));
    let (lo, hi) = ys
        .iter()
        .fold((0.0_f64, 0.0_f64), |(l, h), v| (l.min(*v), h.max(*v)));
    ys.push(hi + (hi - lo) * 0.08);
    ys.push(lo - (hi - lo) * 0.08 * f64::from(u8::from(lo < 0.0)));
    Axis::new(&ys, chart.y_range, false, true)
}

/// The category names under their groups, and the x axis title.
fn category_names(c: &mut Canvas, chart: &BarChart, layout: &BarLayout) {
    let area = &layout.area;
    let max_chars = (layout.band / CHAR_W).floor() as usize;
    for (j, cat) in chart.categories.iter().enumerate() {
        let cx = area.left + layout.band * (j as f64 + 0.5);
        c.text_full(cx, area.bottom + 16.0, "middle", 12.0, TEXT, cat, max_chars);
    }
    c.x_title(area, &chart.labels.x, 40.0);
}

/// Where the groups and bars of a bar chart go.
struct BarLayout {
    area: Area,
    sy: Scale,
    /// Width of one category.
    band: f64,
    /// Width of one group of bars inside its category.
    group: f64,
    bar_w: f64,
    /// The pixel height of zero (or of the axis end nearest it).
    base: f64,
}

impl BarLayout {
    /// Draws bar `j` of series `i` with its error bar; returns its value label `(x, y, text)`,
    /// written later above the clipped plot.
    fn bar(
        &self,
        c: &mut Canvas,
        (i, j): (usize, usize),
        b: &Bar,
        color: &str,
    ) -> (f64, f64, String) {
        let (sy, bar_w) = (&self.sy, self.bar_w);
        let x0 = self.area.left
            + self.band * j as f64
            + (self.band - self.group) / 2.0
            + bar_w * i as f64;
        let cx = x0 + bar_w / 2.0;
        if !b.value.is_finite() {
            return (cx, self.base - 4.0, NOT_AVAILABLE.to_string());
        }
        let top = sy.at(b.value);
        let (y0, y1) = ordered(top, self.base);
        c.push(format!(
            r#"<rect x="{}" y="{}" width="{}" height="{}" fill="{color}"/>"#,
            n(x0 + bar_w * 0.05),
            n(y0),
            n(bar_w * 0.9),
            n(y1 - y0)
        ));
        let mut label_y = top;
        if let Some((lo, hi)) = b.ci.filter(|(lo, hi)| lo.is_finite() && hi.is_finite()) {
            let (ya, yb) = ordered(sy.at(lo), sy.at(hi));
            let cap = (bar_w * 0.2).min(6.0);
            c.push(format!(
                r#"<path d="M{a} {ya} L{a} {yb} M{l} {ya} L{r} {ya} M{l} {yb} L{r} {yb}" stroke="{AXIS}" stroke-width="1.5" fill="none"/>"#,
                a = n(cx),
                l = n(cx - cap),
                r = n(cx + cap),
                ya = n(ya),
                yb = n(yb),
            ));
            label_y = if b.value >= 0.0 {
                label_y.min(ya)
            } else {
                label_y.max(yb)
            };
        }
        let text = b.label.clone().unwrap_or_else(|| auto_value(b.value));
        let y = if b.value >= 0.0 {
            label_y - 4.0
        } else {
            label_y + 12.0
        };
        (cx, y, text)
    }
}

/// Font size of a bar's value label: 10 px, smaller (down to 6 px) where that would be wider than
/// the bar, so that the labels of neighbouring bars do not run into each other.
fn bar_label_size(text: &str, bar_w: f64) -> f64 {
    let at_10 = text_width(text, 10.0);
    if at_10 <= bar_w * 0.95 {
        10.0
    } else {
        (10.0 * bar_w * 0.95 / at_10).floor().max(6.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::svg::xml_check::{check_xml, count};

    #[test]
    fn value_labels_of_crowded_bars_shrink_to_their_bar() {
        let series = (0..4)
            .map(|i| BarSeries {
                name: format!("m{i}"),
                bars: (0..4).map(|_| Bar::new(1.0).with_label("100.0%")).collect(),
            })
            .collect();
        let chart = BarChart {
            labels: Labels::new("t", "x", "y"),
            categories: (0..4).map(|j| format!("c{j}")).collect(),
            series,
            y_range: None,
            references: Vec::new(),
        };
        let svg = bar_chart(&chart);
        let xs: Vec<f64> = svg
            .lines()
            .filter(|l| l.ends_with(">100.0%</text>"))
            .map(|l| {
                l.split(" x=\"")
                    .nth(1)
                    .and_then(|v| v.split('"').next())
                    .expect("x")
            })
            .map(|x| x.parse().expect("x"))
            .collect();
        assert_eq!(xs.len(), 16, "{svg}");
        let size: f64 = svg
            .lines()
            .find(|l| l.ends_with(">100.0%</text>"))
            .and_then(|l| {
                l.split(r#"font-size=""#)
                    .nth(1)?
                    .split('"')
                    .next()?
                    .parse()
                    .ok()
            })
            .expect("size");
        assert!(size < 10.0, "shrunk: {svg}");
        let width = text_width("100.0%", size);
        for pair in xs.windows(2).filter(|p| p[1] > p[0]) {
            assert!(
                pair[1] - pair[0] >= width,
                "labels at {pair:?} overlap: {svg}"
            );
        }
    }

    fn bars() -> BarChart {
        BarChart {
            labels: Labels::new("Success by category", "category", "success rate"),
            categories: vec!["cancel".into(), "return & refund".into()],
            series: vec![
                BarSeries {
                    name: "small".into(),
                    bars: vec![
                        Bar::new(0.4).with_ci(0.27, 0.55).with_label("40.8%"),
                        Bar::new(f64::NAN),
                    ],
                },
                BarSeries {
                    name: "large".into(),
                    bars: vec![Bar::new(0.8), Bar::new(0.5).with_ci(f64::NAN, 0.7)],
                },
            ],
            y_range: Some((0.0, 1.0)),
            references: vec![],
        }
    }

    #[test]
    fn bar_chart_draws_bars_intervals_and_labels() {
        let svg = bar_chart(&bars());
        assert_eq!(svg, bar_chart(&bars()));
        let names = check_xml(&svg);
        // background + 3 finite bars + 2 legend boxes + 1 clip rect
        assert_eq!(count(&names, "rect"), 1 + 3 + 2 + 1);
        // one error bar (the NaN interval is skipped)
        assert_eq!(count(&names, "path"), 1);
        assert!(svg.contains(">40.8%<"));
        assert!(svg.contains(">0.80<"));
        assert!(svg.contains(">n/a<"));
        assert!(svg.contains(">return &amp; refund<"));
    }

    #[test]
    fn bar_heights_follow_values() {
        let chart = BarChart {
            labels: Labels::new("t", "", ""),
            categories: vec!["a".into(), "b".into()],
            series: vec![BarSeries {
                name: String::new(),
                bars: vec![Bar::new(1.0), Bar::new(2.0)],
            }],
            y_range: Some((0.0, 2.0)),
            references: vec![],
        };
        let svg = bar_chart(&chart);
        check_xml(&svg);
        let heights: Vec<f64> = svg
            .lines()
            .filter(|l| l.starts_with("<rect") && l.contains(PALETTE[0]))
            .map(|l| {
                let h = l.split("height=\"").nth(1).expect("height");
                h[..h.find('"').expect("quote")].parse().expect("number")
            })
            .collect();
        assert_eq!(heights.len(), 2, "no legend for an unnamed series");
        assert!((heights[1] - 2.0 * heights[0]).abs() < 0.02, "{heights:?}");
    }

    #[test]
    fn negative_bars_hang_from_zero() {
        let chart = BarChart {
            labels: Labels::new("difference", "", ""),
            categories: vec!["a".into()],
            series: vec![BarSeries {
                name: "d".into(),
                bars: vec![Bar::new(-0.2).with_ci(-0.3, -0.1)],
            }],
            ..BarChart::default()
        };
        let svg = bar_chart(&chart);
        check_xml(&svg);
        assert!(svg.contains(">-0.20<"));
    }
}
