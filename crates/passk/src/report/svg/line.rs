//! Line charts, which are also the time series (lines only, shaded x bands) and the scatter plots
//! (dots only, a dashed guide): series with error bars, and small point labels placed so that
//! close series never overlap.

use super::axis::{Axis, Scale};
use super::canvas::{
    Area, Canvas, HEIGHT, Labels, MUTED, PALETTE, Reference, Swatch, legend_entries, legend_width,
    no_data,
};
use super::text::{escape, n, ordered, text_width, truncate};
use crate::report::number::fixed;

/// One named series of (x, y) points, drawn in the order given.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Series {
    /// Legend name.
    pub name: String,
    /// Points; a point with a non-finite coordinate breaks the line there.
    pub points: Vec<(f64, f64)>,
    /// Confidence intervals `(x, low, high)` drawn as error bars in the series colour.
    pub intervals: Vec<(f64, f64, f64)>,
    /// Small texts written by the points, one per point in order (e.g. `n = 12`); empty: none.
    pub point_labels: Vec<String>,
}

impl Series {
    /// A series from its name and points.
    pub fn new(name: impl Into<String>, points: Vec<(f64, f64)>) -> Series {
        Series {
            name: name.into(),
            points,
            intervals: Vec::new(),
            point_labels: Vec::new(),
        }
    }

    /// The same series with error bars `(x, low, high)`.
    pub fn with_intervals(mut self, intervals: Vec<(f64, f64, f64)>) -> Series {
        self.intervals = intervals;
        self
    }

    /// The same series with a small text by each point, in point order.
    pub fn with_point_labels(mut self, labels: Vec<String>) -> Series {
        self.point_labels = labels;
        self
    }
}

/// How the points of a line chart are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Marks {
    /// Lines and a dot at each point (few points: pass^k by k, context growth).
    #[default]
    LinesAndPoints,
    /// Lines only (many points: a time series).
    Lines,
    /// Dots only (a scatter plot).
    Points,
}

/// A shaded interval of the x axis with a label (e.g. which model was loaded during a run).
#[derive(Debug, Clone, PartialEq)]
pub struct XBand {
    /// Start, in x units.
    pub from: f64,
    /// End, in x units.
    pub to: f64,
    /// Label written at the top of the band.
    pub label: String,
}

/// A line chart of several named series with numeric x and y axes; also the time-series and scatter
/// chart (see [`Marks`] and [`XBand`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LineChart {
    /// Title and axis labels.
    pub labels: Labels,
    /// The series, one colour each.
    pub series: Vec<Series>,
    /// Fixed x range; `None`: from the data.
    pub x_range: Option<(f64, f64)>,
    /// Fixed y range (e.g. `(0.0, 1.0)` for rates); `None`: from the data.
    pub y_range: Option<(f64, f64)>,
    /// Whether the automatic y range starts at zero (counts, tokens, seconds).
    pub y_from_zero: bool,
    /// Whether x ticks must be whole numbers (k, call index).
    pub integer_x: bool,
    /// How points are drawn.
    pub marks: Marks,
    /// Shaded x intervals, drawn behind the series.
    pub bands: Vec<XBand>,
    /// Horizontal reference lines.
    pub references: Vec<Reference>,
    /// A dashed grey line drawn behind the series and named last in the legend (e.g. the
    /// cheapest-per-success frontier); it takes no palette colour, so the series keep theirs. Drawn
    /// only through two or more finite points.
    pub guide: Option<Series>,
}

impl LineChart {
    /// A chart with these labels and series, lines and points, ranges from the data.
    pub fn new(labels: Labels, series: Vec<Series>) -> LineChart {
        LineChart {
            labels,
            series,
            ..LineChart::default()
        }
    }

    /// Whether some point is finite (else the chart only says "no data").
    pub fn has_data(&self) -> bool {
        !self.finite_points().is_empty()
    }

    fn finite_points(&self) -> Vec<(f64, f64)> {
        self.series
            .iter()
            .chain(self.drawn_guide())
            .flat_map(|s| s.points.iter().copied())
            .filter(|(x, y)| x.is_finite() && y.is_finite())
            .collect()
    }
}

impl LineChart {
    /// The guide, when it has a line to draw.
    fn drawn_guide(&self) -> Option<&Series> {
        self.guide.as_ref().filter(|g| {
            g.points
                .iter()
                .filter(|(x, y)| x.is_finite() && y.is_finite())
                .count()
                > 1
        })
    }
}

/// Renders a line, time-series or scatter chart.
pub fn line_chart(chart: &LineChart) -> String {
    let finite = chart.finite_points();
    if finite.is_empty() {
        return no_data(&chart.labels, HEIGHT);
    }
    let (x_axis, y_axis) = line_axes(chart, &finite);
    let entries = line_legend(chart);
    let names: Vec<&str> = entries.iter().map(|e| e.0).collect();

    let mut c = Canvas::new(HEIGHT, &chart.labels);
    let area = c.plot_area(&y_axis, legend_width(&names), 0.0);
    let sx = Scale::new(x_axis.lo, x_axis.hi, area.left, area.right);
    let sy = Scale::new(y_axis.lo, y_axis.hi, area.bottom, area.top);
    c.y_grid(&area, &sy, &y_axis, &chart.labels.y);
    c.clip(&area);
    shaded_bands(&mut c, &chart.bands, &area, &sx);
    c.x_axis_numeric(&area, &sx, &x_axis, &chart.labels.x);
    c.open_clipped();
    if let Some(g) = chart.drawn_guide() {
        let d = path_data(&g.points, &sx, &sy);
        c.push(format!(
            r#"<path d="{d}" fill="none" stroke="{MUTED}" stroke-width="1.5" stroke-dasharray="6 4"/>"#
        ));
    }
    let point_labels = draw_series(&mut c, chart, &sx, &sy);
    c.push("</g>".into());
    write_point_labels(&mut c, &point_labels);
    c.references(&area, &sy, &chart.references);
    c.legend_of(&area, &entries);
    c.finish()
}

/// The legend: one entry per series in palette order, then the guide, when it is drawn.
fn line_legend(chart: &LineChart) -> Vec<(&str, &'static str, Swatch)> {
    let kind = match chart.marks {
        Marks::Points => Swatch::Dot,
        _ => Swatch::Line,
    };
    let mut entries = legend_entries(chart.series.iter().map(|s| s.name.as_str()), kind);
    let guide = chart.drawn_guide();
    entries.extend(guide.map(|g| (g.name.as_str(), MUTED, Swatch::Dashed)));
    entries
}

/// Every series' line, error bars and dots, in palette order; returns the point labels to write
/// once the clipped group is closed.
fn draw_series<'c>(
    c: &mut Canvas,
    chart: &'c LineChart,
    sx: &Scale,
    sy: &Scale,
) -> Vec<PointLabel<'c>> {
    let mut point_labels = Vec::new();
    for (i, s) in chart.series.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        let painter = SeriesPainter {
            sx,
            sy,
            color,
            marks: chart.marks,
        };
        painter.lines(c, &s.points);
        // Error bars, nudged apart so that series at the same x do not hide each other.
        let nudge = (i as f64 - (chart.series.len() as f64 - 1.0) / 2.0) * 5.0;
        painter.error_bars(c, &s.intervals, nudge);
        painter.points(c, &s.points);
        for (&(x, y), label) in s.points.iter().zip(&s.point_labels) {
            if x.is_finite() && y.is_finite() && !label.is_empty() {
                point_labels.push(PointLabel {
                    x: sx.at(x),
                    y: sy.at(y),
                    color,
                    text: label.as_str(),
                    below: i % 2 == 1,
                });
            }
        }
    }
    point_labels
}

/// The point labels, placed apart. Drawn after the clipped group, so that a label at the edge
/// stays whole; a white halo keeps a label readable where it crosses another series' line.
fn write_point_labels(c: &mut Canvas, point_labels: &[PointLabel]) {
    for (x, y, color, label) in place_point_labels(point_labels) {
        c.push(format!(
            r##"<text x="{}" y="{}" text-anchor="middle" font-size="{}" fill="{color}" stroke="#FFFFFF" stroke-width="3" paint-order="stroke">{}</text>"##,
            n(x),
            n(y),
            fixed(POINT_LABEL_SIZE, 0),
            escape(label)
        ));
    }
}

/// Font size of the small texts by a line chart's points.
const POINT_LABEL_SIZE: f64 = 9.0;

/// A small text by a point of a line chart, before it is placed.
struct PointLabel<'a> {
    /// The point, in pixels.
    x: f64,
    y: f64,
    color: &'a str,
    text: &'a str,
    /// Whether it goes below its point first (odd series), else above, so two series keep apart.
    below: bool,
}

/// Where each point label is written: on its preferred side of the point, else the nearest free
/// place on either side (in steps of one text line), so that labels of series whose points lie
/// close never overlap. Returns `(x, baseline y, colour, text)`.
fn place_point_labels<'a>(labels: &[PointLabel<'a>]) -> Vec<(f64, f64, &'a str, &'a str)> {
    const LINE: f64 = POINT_LABEL_SIZE + 2.0;
    let above = |step: usize| -8.0 - step as f64 * LINE;
    let below = |step: usize| 7.0 + POINT_LABEL_SIZE + step as f64 * LINE;
    let overlaps = |x: f64, y: f64, text: &str, others: &[(f64, f64, &str, &str)]| {
        let w = text_width(text, POINT_LABEL_SIZE) / 2.0 + 1.0;
        others.iter().any(|&(ox, oy, _, o)| {
            let ow = text_width(o, POINT_LABEL_SIZE) / 2.0 + 1.0;
            (x - ox).abs() < w + ow && (y - oy).abs() < LINE
        })
    };
    let mut placed: Vec<(f64, f64, &str, &str)> = Vec::new();
    for l in labels {
        let mut offsets = (0..20).flat_map(|step| {
            if l.below {
                [below(step), above(step)]
            } else {
                [above(step), below(step)]
            }
        });
        let first = if l.below { below(0) } else { above(0) };
        let dy = offsets
            .find(|dy| !overlaps(l.x, l.y + dy, l.text, &placed))
            .unwrap_or(first);
        placed.push((l.x, l.y + dy, l.color, l.text));
    }
    placed
}

/// A line chart's axes: x over the finite points, y over them, the reference lines and the ends
/// of every error bar.
fn line_axes(chart: &LineChart, finite: &[(f64, f64)]) -> (Axis, Axis) {
    let xs: Vec<f64> = finite.iter().map(|p| p.0).collect();
    let mut ys: Vec<f64> = finite.iter().map(|p| p.1).collect();
    ys.extend(chart.references.iter().map(|r| r.value));
    ys.extend(
        chart
            .series
            .iter()
            .flat_map(|s| s.intervals.iter().flat_map(|i| [i.1, i.2]))
            .filter(|v| v.is_finite()),
    );
    let x_axis = Axis::new(&xs, chart.x_range, chart.integer_x, false);
    let y_axis = Axis::new(&ys, chart.y_range, false, chart.y_from_zero);
    (x_axis, y_axis)
}

/// Shaded x ranges behind the plot, each named at its top left.
fn shaded_bands(c: &mut Canvas, bands: &[XBand], area: &Area, sx: &Scale) {
    for band in bands {
        if !(band.from.is_finite() && band.to.is_finite()) {
            continue;
        }
        let (a, b) = ordered(sx.at(band.from), sx.at(band.to));
        let (a, b) = (a.max(area.left), b.min(area.right));
        if b <= a {
            continue;
        }
        c.push(format!(
            r##"<rect x="{}" y="{}" width="{}" height="{}" fill="#F2F2F2" stroke="#D9D9D9"/>"##,
            n(a),
            n(area.top),
            n(b - a),
            n(area.bottom - area.top)
        ));
        let label = truncate(&band.label, ((b - a) / 6.0).floor() as usize);
        c.text(a + 3.0, area.top + 11.0, "start", 10.0, MUTED, &label);
    }
}

/// Draws one series of a line chart in its colour.
struct SeriesPainter<'a> {
    sx: &'a Scale,
    sy: &'a Scale,
    color: &'a str,
    marks: Marks,
}

impl SeriesPainter<'_> {
    /// The line through the points (breaking at non-finite ones), unless only points are drawn; a
    /// point with no finite neighbour draws no line, so a small dot keeps it visible.
    fn lines(&self, c: &mut Canvas, points: &[(f64, f64)]) {
        let color = self.color;
        if self.marks != Marks::Points {
            let d = path_data(points, self.sx, self.sy);
            if !d.is_empty() {
                c.push(format!(
                    r#"<path d="{d}" fill="none" stroke="{color}" stroke-width="2" stroke-linejoin="round"/>"#
                ));
            }
        }
        if self.marks == Marks::Lines {
            for (x, y) in isolated(points) {
                c.push(format!(
                    r#"<circle cx="{}" cy="{}" r="2" fill="{color}"/>"#,
                    n(self.sx.at(x)),
                    n(self.sy.at(y))
                ));
            }
        }
    }

    /// An error bar with caps at each finite (x, low, high), shifted `nudge` pixels along x.
    fn error_bars(&self, c: &mut Canvas, intervals: &[(f64, f64, f64)], nudge: f64) {
        for &(x, lo, hi) in intervals
            .iter()
            .filter(|(x, lo, hi)| x.is_finite() && lo.is_finite() && hi.is_finite())
        {
            let (ya, yb) = ordered(self.sy.at(lo), self.sy.at(hi));
            let cx = self.sx.at(x) + nudge;
            c.push(format!(
                r#"<path d="M{a} {ya} L{a} {yb} M{l} {ya} L{r} {ya} M{l} {yb} L{r} {yb}" stroke="{color}" stroke-width="1.2" fill="none" opacity="0.8"/>"#,
                a = n(cx),
                l = n(cx - 3.0),
                r = n(cx + 3.0),
                ya = n(ya),
                yb = n(yb),
                color = self.color,
            ));
        }
    }

    /// A dot at every finite point, unless only lines are drawn.
    fn points(&self, c: &mut Canvas, points: &[(f64, f64)]) {
        if self.marks == Marks::Lines {
            return;
        }
        for &(x, y) in points
            .iter()
            .filter(|(x, y)| x.is_finite() && y.is_finite())
        {
            c.push(format!(
                r#"<circle cx="{}" cy="{}" r="3" fill="{}"/>"#,
                n(self.sx.at(x)),
                n(self.sy.at(y)),
                self.color
            ));
        }
    }
}

/// The finite points whose neighbours (before and after) are missing or not finite.
fn isolated(points: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let finite = |i: Option<usize>| {
        i.and_then(|i| points.get(i))
            .is_some_and(|(x, y)| x.is_finite() && y.is_finite())
    };
    (0..points.len())
        .filter(|&i| finite(Some(i)) && !finite(i.checked_sub(1)) && !finite(Some(i + 1)))
        .map(|i| points[i])
        .collect()
}

/// The `d` attribute of a polyline that breaks at non-finite points.
fn path_data(points: &[(f64, f64)], sx: &Scale, sy: &Scale) -> String {
    let mut d = String::new();
    let mut pen_down = false;
    for &(x, y) in points {
        if !(x.is_finite() && y.is_finite()) {
            pen_down = false;
            continue;
        }
        if !d.is_empty() {
            d.push(' ');
        }
        d.push(if pen_down { 'L' } else { 'M' });
        d.push_str(&format!("{} {}", n(sx.at(x)), n(sy.at(y))));
        pen_down = true;
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::svg::canvas::WIDTH;
    use crate::report::svg::xml_check::{check_xml, count, nasty};

    #[test]
    fn point_labels_of_close_series_never_overlap() {
        // Three series with almost the same means: their labels compete for the same places.
        let series = (0..3)
            .map(|i| {
                let points = (1..=5)
                    .map(|x| (x as f64, 100.0 * x as f64 + i as f64))
                    .collect();
                let labels = (1..=5).map(|x| format!("n={}", 20 - x - i)).collect();
                Series::new(format!("m{i}"), points).with_point_labels(labels)
            })
            .collect();
        let svg = line_chart(&LineChart::new(Labels::new("t", "x", "y"), series));
        let boxes: Vec<(f64, f64, f64)> = svg
            .lines()
            .filter(|l| l.starts_with("<text") && l.contains(r#"font-size="9""#))
            .map(|l| {
                let attr = |name: &str| -> f64 {
                    let v = l.split(&format!(" {name}=\"")).nth(1).expect(name);
                    v.split('"').next().expect(name).parse().expect(name)
                };
                let text = l
                    .split('>')
                    .nth(1)
                    .and_then(|t| t.split('<').next())
                    .expect("text");
                (attr("x"), attr("y"), text_width(text, 9.0))
            })
            .collect();
        assert_eq!(boxes.len(), 15, "{svg}");
        for (i, a) in boxes.iter().enumerate() {
            for b in &boxes[i + 1..] {
                let apart = (a.0 - b.0).abs() >= (a.2 + b.2) / 2.0 || (a.1 - b.1).abs() >= 9.0;
                assert!(apart, "labels at {a:?} and {b:?} overlap: {svg}");
            }
        }
    }

    #[test]
    fn a_lone_point_of_a_lines_only_chart_gets_a_dot() {
        let points = vec![(0.0, 1.0), (1.0, f64::NAN), (2.0, 3.0), (3.0, 4.0)];
        assert_eq!(isolated(&points), [(0.0, 1.0)]);
        let chart = LineChart {
            marks: Marks::Lines,
            ..LineChart::new(Labels::new("t", "", ""), vec![Series::new("", points)])
        };
        assert_eq!(line_chart(&chart).matches("<circle").count(), 1);
    }

    fn line() -> LineChart {
        let mut c = LineChart::new(
            Labels::new("pass^k by k", "k", "pass^k").with_subtitle("n = 118 of 120; 2 transport"),
            vec![
                Series::new(
                    "qwen2.5-coder:3b",
                    vec![(1.0, 0.41), (2.0, 0.3), (3.0, 0.25)],
                ),
                Series::new(nasty(), vec![(1.0, 0.6), (2.0, f64::NAN), (3.0, 0.5)]),
            ],
        );
        c.y_range = Some((0.0, 1.0));
        c.integer_x = true;
        c.references.push(Reference {
            value: 0.5,
            label: "half".into(),
        });
        c
    }

    #[test]
    fn line_chart_is_well_formed_and_deterministic() {
        let svg = line_chart(&line());
        assert_eq!(svg, line_chart(&line()));
        let names = check_xml(&svg);
        // one path per series; the NaN splits the second series into two sub-paths
        assert_eq!(count(&names, "path"), 2);
        assert!(svg.contains(r#"<path d="M"#));
        let second = svg
            .lines()
            .filter(|l| l.starts_with("<path"))
            .nth(1)
            .expect("second path");
        assert_eq!(second.matches('M').count(), 2, "{second}");
        // five finite points, two legend lines, ticks 1..3 on x (whole numbers only)
        assert_eq!(count(&names, "circle"), 5);
        assert!(svg.contains(">qwen2.5-coder:3b<"));
        assert!(svg.contains("a&lt;b &amp; &quot;c&quot; &apos;d&apos; &gt; e<"));
        assert!(!svg.contains("1.5<"), "no half ticks on an integer axis");
        assert!(svg.contains(">half<"));
        assert!(svg.contains(">n = 118 of 120; 2 transport<"));
    }

    #[test]
    fn line_chart_maps_points_to_the_plot_area() {
        let mut c = LineChart::new(
            Labels::new("t", "", ""),
            vec![Series::new("s", vec![(0.0, 0.0), (10.0, 1.0)])],
        );
        c.x_range = Some((0.0, 10.0));
        c.y_range = Some((0.0, 1.0));
        let svg = line_chart(&c);
        check_xml(&svg);
        // The first point sits on the bottom-left corner of the plot area, the last on the top-right.
        let path = svg.lines().find(|l| l.starts_with("<path")).expect("path");
        let d = path.split('"').nth(1).expect("d attribute");
        let nums: Vec<f64> = d
            .split(['M', 'L', ' '])
            .filter(|s| !s.is_empty())
            .map(|s| s.parse().expect("number"))
            .collect();
        let (x0, y0, x1, y1) = (nums[0], nums[1], nums[2], nums[3]);
        assert!(x0 < x1 && y0 > y1, "{d}");
        assert_eq!(y0, HEIGHT - 56.0);
        assert_eq!(x1, WIDTH - 16.0 - legend_width(&["s"]));
        assert_eq!(y1, 48.0 + 8.0);
    }

    #[test]
    fn time_series_with_bands_and_scatter() {
        let points: Vec<(f64, f64)> = (0..50).map(|i| (i as f64, (i * 7 % 100) as f64)).collect();
        let mut c = LineChart::new(
            Labels::new("GPU utilization", "seconds since start", "%"),
            vec![Series::new("util", points)],
        );
        c.marks = Marks::Lines;
        c.y_range = Some((0.0, 100.0));
        c.bands = vec![
            XBand {
                from: 0.0,
                to: 20.0,
                label: "qwen2.5-coder:3b".into(),
            },
            XBand {
                from: 20.0,
                to: f64::NAN,
                label: "skipped".into(),
            },
        ];
        let svg = line_chart(&c);
        let names = check_xml(&svg);
        assert_eq!(count(&names, "circle"), 0);
        assert!(svg.contains("qwen2.5-coder:3b"));
        assert!(!svg.contains("skipped"));
        c.marks = Marks::Points;
        let names = check_xml(&line_chart(&c));
        assert_eq!(count(&names, "circle"), 51, "50 dots and one legend dot");
        assert_eq!(count(&names, "path"), 0);
    }

    #[test]
    fn huge_values_do_not_panic() {
        let c = LineChart::new(
            Labels::new("huge", "", ""),
            vec![Series::new(
                "s",
                vec![(0.0, f64::MAX), (1.0, -f64::MAX), (2.0, 1e-300)],
            )],
        );
        check_xml(&line_chart(&c));
    }
}
