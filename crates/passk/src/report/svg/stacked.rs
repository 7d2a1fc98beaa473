//! Horizontal stacked bars: one bar per row split into named segments, as counts or as shares of
//! the row, with each value written inside its segment where it fits.

use super::axis::{Axis, Scale};
use super::canvas::{
    AXIS, Area, Canvas, GRID, HEIGHT, Labels, MAX_NAME, PALETTE, Swatch, TEXT, ink_on,
    legend_width, no_data, top_margin,
};
use super::text::CHAR_W;
use super::text::{auto_value, n, text_width, truncate};
use crate::report::number::fixed;

/// One row of a stacked bar chart: one value per segment, in segment order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StackedRow {
    /// Row name (e.g. the model).
    pub name: String,
    /// Segment sizes; negative or non-finite sizes count as zero.
    pub values: Vec<f64>,
}

/// Horizontal stacked bars: one bar per row, split into named segments (e.g. failure buckets).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StackedBars {
    /// Title and axis labels (`y` is unused: the row names stand there).
    pub labels: Labels,
    /// Segment names, one colour each.
    pub segments: Vec<String>,
    /// The rows, drawn top to bottom.
    pub rows: Vec<StackedRow>,
    /// Whether each row is scaled to 100% (shares instead of counts).
    pub normalize: bool,
}

impl StackedBars {
    /// Whether some row has a positive, finite segment (else the chart only says "no data").
    pub fn has_data(&self) -> bool {
        self.rows.iter().any(|r| {
            r.values
                .iter()
                .take(self.segments.len())
                .any(|v| v.is_finite() && *v > 0.0)
        })
    }
}

/// Renders horizontal stacked bars, one per row, with counts (or shares) written in the segments.
pub fn stacked_bars(chart: &StackedBars) -> String {
    let rows = stacked_rows(chart);
    let max_total = rows
        .iter()
        .map(|r| r.iter().sum::<f64>())
        .fold(0.0, f64::max);
    if !chart.has_data() {
        return no_data(&chart.labels, HEIGHT);
    }
    let x_axis = stacked_axis(chart.normalize, max_total);
    let row_names: Vec<&str> = chart.rows.iter().map(|r| r.name.as_str()).collect();
    let seg_names: Vec<&str> = chart.segments.iter().map(String::as_str).collect();
    let name_w = row_names
        .iter()
        .map(|s| s.chars().count().min(MAX_NAME))
        .max()
        .unwrap_or(0) as f64
        * CHAR_W;
    let height = HEIGHT.max(top_margin(&chart.labels) + 56.0 + 32.0 * rows.len() as f64);

    let mut c = Canvas::new(height, &chart.labels);
    let mut area = c.plot_area(&x_axis, legend_width(&seg_names), 0.0);
    area.left = 16.0 + name_w + 8.0;
    let sx = Scale::new(x_axis.lo, x_axis.hi, area.left, area.right);
    vertical_grid(&mut c, &area, &x_axis, &sx);
    c.x_title(&area, &chart.labels.x, 40.0);
    let band = (area.bottom - area.top) / rows.len() as f64;
    for (i, (vals, name)) in rows.iter().zip(&row_names).enumerate() {
        let cy = area.top + band * (i as f64 + 0.5);
        let label = truncate(name, MAX_NAME);
        c.text(area.left - 8.0, cy + 4.0, "end", 12.0, TEXT, &label);
        let bar = StackedBar {
            cy,
            height: (band * 0.6).min(36.0),
            normalize: chart.normalize,
        };
        bar.draw(&mut c, &sx, vals);
    }
    c.push(format!(
        r#"<line x1="{x}" y1="{}" x2="{x}" y2="{}" stroke="{AXIS}"/>"#,
        n(area.top),
        n(area.bottom),
        x = n(area.left)
    ));
    c.legend(&area, &seg_names, Swatch::Box);
    c.finish()
}

/// The x axis: 0 to 100% for shares, else whole counts from zero to the longest row.
fn stacked_axis(normalize: bool, max_total: f64) -> Axis {
    if normalize {
        Axis::new(&[0.0, max_total], Some((0.0, 1.0)), false, true).percent()
    } else {
        Axis::new(&[0.0, max_total], None, true, true)
    }
}

/// Each row's segment values (missing, negative or non-finite: 0), as shares of the row's total
/// when the chart is normalised.
fn stacked_rows(chart: &StackedBars) -> Vec<Vec<f64>> {
    chart
        .rows
        .iter()
        .map(|r| {
            let vals: Vec<f64> = (0..chart.segments.len())
                .map(|k| {
                    r.values
                        .get(k)
                        .copied()
                        .filter(|v| v.is_finite() && *v > 0.0)
                        .unwrap_or(0.0)
                })
                .collect();
            let total: f64 = vals.iter().sum();
            if chart.normalize && total > 0.0 {
                vals.iter().map(|v| v / total).collect()
            } else {
                vals
            }
        })
        .collect()
}

/// Vertical grid lines at the x axis' ticks, each labelled under the plot.
fn vertical_grid(c: &mut Canvas, area: &Area, x_axis: &Axis, sx: &Scale) {
    for t in &x_axis.ticks {
        let x = n(sx.at(*t));
        c.push(format!(
            r#"<line x1="{x}" y1="{}" x2="{x}" y2="{}" stroke="{GRID}"/>"#,
            n(area.top),
            n(area.bottom)
        ));
        let label = x_axis.label(*t);
        c.text(sx.at(*t), area.bottom + 16.0, "middle", 11.0, TEXT, &label);
    }
}

/// One horizontal bar of a stacked chart, centred at `cy`.
struct StackedBar {
    cy: f64,
    height: f64,
    normalize: bool,
}

impl StackedBar {
    /// Its segments left to right, each with its value inside where it fits, then the total.
    fn draw(&self, c: &mut Canvas, sx: &Scale, vals: &[f64]) {
        let y0 = self.cy - self.height / 2.0;
        let mut acc = 0.0;
        for (k, v) in vals.iter().enumerate() {
            if *v <= 0.0 {
                continue;
            }
            let (x0, x1) = (sx.at(acc), sx.at(acc + v));
            acc += v;
            let fill = PALETTE[k % PALETTE.len()];
            c.push(format!(
                r##"<rect x="{}" y="{}" width="{}" height="{}" fill="{fill}" stroke="#FFFFFF"/>"##,
                n(x0),
                n(y0),
                n(x1 - x0),
                n(self.height),
            ));
            let text = if self.normalize {
                format!("{}%", fixed(v * 100.0, 0))
            } else {
                auto_value(*v)
            };
            if text_width(&text, 11.0) + 4.0 <= x1 - x0 {
                let cx = (x0 + x1) / 2.0;
                c.text(cx, self.cy + 4.0, "middle", 11.0, ink_on(fill), &text);
            }
        }
        // The total at the end; a row with nothing in it says 0 rather than looking missing.
        if !self.normalize || acc == 0.0 {
            let x = sx.at(acc) + 4.0;
            c.text(x, self.cy + 4.0, "start", 11.0, TEXT, &auto_value(acc));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::svg::xml_check::{check_xml, count};

    #[test]
    fn stacked_bars_counts_and_shares() {
        let mut chart = StackedBars {
            labels: Labels::new("Failure buckets", "conversations", ""),
            segments: vec![
                "loop cap".into(),
                "wrong action".into(),
                "wrong answer".into(),
            ],
            rows: vec![
                StackedRow {
                    name: "qwen2.5-coder:3b".into(),
                    values: vec![10.0, 30.0, f64::NAN],
                },
                StackedRow {
                    name: "qwen2.5-coder:7b".into(),
                    values: vec![2.0, 8.0, 10.0, 99.0],
                },
            ],
            normalize: false,
        };
        let svg = stacked_bars(&chart);
        let names = check_xml(&svg);
        // background + 5 non-empty segments (2 + 3) + 3 legend boxes
        assert_eq!(count(&names, "rect"), 1 + 5 + 3);
        assert!(svg.contains(">30<"));
        assert!(svg.contains(">40<"), "row total");
        assert!(
            !svg.contains("99"),
            "values beyond the segments are ignored"
        );
        chart.normalize = true;
        let svg = stacked_bars(&chart);
        check_xml(&svg);
        assert!(svg.contains(">75%<"));
        assert!(svg.contains(">100%<"), "axis ends at 100%");
    }

    #[test]
    fn many_stacked_rows_grow_the_chart() {
        let rows = (0..30)
            .map(|i| StackedRow {
                name: format!("model-{i}"),
                values: vec![1.0],
            })
            .collect();
        let svg = stacked_bars(&StackedBars {
            labels: Labels::new("t", "", ""),
            segments: vec!["s".into()],
            rows,
            normalize: false,
        });
        check_xml(&svg);
        assert!(!svg.contains(r#"height="420""#));
    }
}
