//! Hand-written SVG charts for `passk report`: line and scatter charts (pass^k by k, context growth, GPU
//! utilization over a run), grouped bars with confidence intervals (success by category, tokens per
//! successful task), horizontal stacked bars (failure buckets per model), box-and-whisker
//! distributions (latency per conversation) and small-multiple heatmaps (the four-state table).
//!
//! Each chart function takes a plain data struct and returns the SVG document as a `String`. Output is
//! deterministic: coordinates are written with two fixed decimals, colours come from a fixed palette,
//! nothing depends on the clock or the host, so the same input gives the same bytes. All text is
//! XML-escaped. Values that are not finite (NaN, infinities) are skipped (a line breaks at them); a
//! chart with nothing finite to draw shows its title and "no data" instead of panicking.

use super::markdown::{fixed, number};

/// Width of every chart, in pixels.
pub const WIDTH: f64 = 720.0;
/// Default height of a chart, in pixels (stacked bars grow with their rows).
pub const HEIGHT: f64 = 420.0;
/// Series colours, in order (Okabe–Ito, readable by colour-blind readers); they repeat after eight.
pub const PALETTE: [&str; 8] = [
    "#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000",
];

const TEXT: &str = "#222222";
const MUTED: &str = "#666666";
const AXIS: &str = "#444444";
const GRID: &str = "#E5E5E5";
/// Approximate width of one character at the 12 px body size, used for layout only.
const CHAR_W: f64 = 7.0;
/// Longest row name before it is shortened with an ellipsis; longest line of a legend entry before
/// it wraps.
const MAX_NAME: usize = 28;
/// Height added under a chart for its caption line.
const CAPTION_H: f64 = 22.0;
/// Longest caption, in characters, before it is shortened (it fits the chart's width at 10 px).
const MAX_CAPTION: usize = 118;

/// The texts around a chart.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Labels {
    /// Title, at the top.
    pub title: String,
    /// Optional second line under the title (e.g. the break-even ratio and its CI).
    pub subtitle: Option<String>,
    /// Horizontal axis label (empty: none).
    pub x: String,
    /// Vertical axis label (empty: none).
    pub y: String,
    /// Optional one-line caption under the chart (run id, suite, k, tool docs, n).
    pub caption: Option<String>,
    /// A name for the chart's internal ids (its clip path is `plot-area-<id>`), unique among the
    /// charts one page inlines; `None`: plain `plot-area`, enough for a standalone file.
    pub id: Option<String>,
}

impl Labels {
    /// Title and axis labels, no subtitle.
    pub fn new(title: impl Into<String>, x: impl Into<String>, y: impl Into<String>) -> Labels {
        Labels {
            title: title.into(),
            subtitle: None,
            x: x.into(),
            y: y.into(),
            caption: None,
            id: None,
        }
    }

    /// The same labels with a subtitle.
    pub fn with_subtitle(mut self, subtitle: impl Into<String>) -> Labels {
        self.subtitle = Some(subtitle.into());
        self
    }

    /// The same labels with a caption line under the chart.
    pub fn with_caption(mut self, caption: impl Into<String>) -> Labels {
        self.caption = Some(caption.into());
        self
    }
}

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

/// A dashed horizontal reference line with a label (e.g. a ratio of 1).
#[derive(Debug, Clone, PartialEq)]
pub struct Reference {
    /// Height, in y units.
    pub value: f64,
    /// Label written at its right end.
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

/// The values of one distribution (e.g. latency per conversation of one model).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sample {
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
    pub samples: Vec<Sample>,
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

/// One panel of a heatmap (e.g. one model's four-state table).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HeatmapPanel {
    /// Panel title.
    pub name: String,
    /// Cell values, `cells[row][column]`; they set the shade.
    pub cells: Vec<Vec<f64>>,
    /// Text of each cell, same shape; `None` (or a missing cell): the value, formatted.
    pub text: Option<Vec<Vec<String>>>,
}

/// Small multiples of a table shaded by value, sharing row and column names and one colour scale.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Heatmap {
    /// Title; `x` names the columns' question, `y` the rows'.
    pub labels: Labels,
    /// Row names.
    pub rows: Vec<String>,
    /// Column names.
    pub columns: Vec<String>,
    /// The panels, left to right.
    pub panels: Vec<HeatmapPanel>,
}

impl Heatmap {
    /// Whether there are rows, columns and a finite non-zero cell (else the chart only says
    /// "no data": a table of zeros shows nothing).
    pub fn has_data(&self) -> bool {
        !self.rows.is_empty()
            && !self.columns.is_empty()
            && self
                .panels
                .iter()
                .flat_map(|p| p.cells.iter().flatten())
                .any(|v| v.is_finite() && *v != 0.0)
    }
}

/// `id` with every character but ASCII letters, digits, `-` and `_` replaced by `-`, so it is a valid
/// XML id fragment and needs no escaping in `url(#…)`.
fn id_safe(id: &str) -> String {
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

// ---------------------------------------------------------------------------------------------
// Line chart

/// Renders a line, time-series or scatter chart.
pub fn line_chart(chart: &LineChart) -> String {
    let finite = chart.finite_points();
    if finite.is_empty() {
        return no_data(&chart.labels, HEIGHT);
    }
    let (x_axis, y_axis) = line_axes(chart, &finite);
    let kind = match chart.marks {
        Marks::Points => Swatch::Dot,
        _ => Swatch::Line,
    };
    let mut entries = legend_entries(chart.series.iter().map(|s| s.name.as_str()), kind);
    let guide = chart.drawn_guide();
    entries.extend(guide.map(|g| (g.name.as_str(), MUTED, Swatch::Dashed)));
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
    if let Some(g) = guide {
        let d = path_data(&g.points, &sx, &sy);
        c.push(format!(
            r#"<path d="{d}" fill="none" stroke="{MUTED}" stroke-width="1.5" stroke-dasharray="6 4"/>"#
        ));
    }
    let mut point_labels = Vec::new();
    for (i, s) in chart.series.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        let painter = SeriesPainter {
            sx: &sx,
            sy: &sy,
            color,
            marks: chart.marks,
        };
        painter.lines(&mut c, &s.points);
        // Error bars, nudged apart so that series at the same x do not hide each other.
        let nudge = (i as f64 - (chart.series.len() as f64 - 1.0) / 2.0) * 5.0;
        painter.error_bars(&mut c, &s.intervals, nudge);
        painter.points(&mut c, &s.points);
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
    c.push("</g>".into());
    // Drawn after the clipped group, so that a label at the edge stays whole.
    // A white halo keeps a label readable where it crosses another series' line.
    for (x, y, color, label) in place_point_labels(&point_labels) {
        c.push(format!(
            r##"<text x="{}" y="{}" text-anchor="middle" font-size="{}" fill="{color}" stroke="#FFFFFF" stroke-width="3" paint-order="stroke">{}</text>"##,
            n(x),
            n(y),
            fixed(POINT_LABEL_SIZE, 0),
            escape(label)
        ));
    }
    c.references(&area, &sy, &chart.references);
    c.legend_of(&area, &entries);
    c.finish()
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

// ---------------------------------------------------------------------------------------------
// Grouped bars

/// Renders grouped vertical bars with optional error bars and value labels.
pub fn bar_chart(chart: &BarChart) -> String {
    let ncat = chart.categories.len();
    let mut ys = chart.finite_values();
    if !chart.has_data() {
        return no_data(&chart.labels, HEIGHT);
    }
    ys.extend(chart.references.iter().map(|r| r.value));
    // Headroom for the value labels above (or below) the tallest bars.
    let (lo, hi) = ys
        .iter()
        .fold((0.0_f64, 0.0_f64), |(l, h), v| (l.min(*v), h.max(*v)));
    ys.push(hi + (hi - lo) * 0.08);
    ys.push(lo - (hi - lo) * 0.08 * f64::from(u8::from(lo < 0.0)));
    let y_axis = Axis::new(&ys, chart.y_range, false, true);
    let names: Vec<&str> = chart.series.iter().map(|s| s.name.as_str()).collect();

    let mut c = Canvas::new(HEIGHT, &chart.labels);
    let area = c.plot_area(&y_axis, legend_width(&names), 0.0);
    let sy = Scale::new(y_axis.lo, y_axis.hi, area.bottom, area.top);
    c.y_grid(&area, &sy, &y_axis, &chart.labels.y);
    c.clip(&area);
    let band = (area.right - area.left) / ncat as f64;
    let group = band * 0.8;
    let bar_w = group / chart.series.len() as f64;
    let base = sy.at(0.0_f64.clamp(y_axis.lo, y_axis.hi));
    let max_chars = (band / CHAR_W).floor() as usize;
    for (j, cat) in chart.categories.iter().enumerate() {
        let cx = area.left + band * (j as f64 + 0.5);
        c.text_full(cx, area.bottom + 16.0, "middle", 12.0, TEXT, cat, max_chars);
    }
    c.x_title(&area, &chart.labels.x, 40.0);
    c.open_clipped();
    let mut labels = Vec::new();
    for (i, s) in chart.series.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        for (j, b) in s.bars.iter().take(ncat).enumerate() {
            let x0 = area.left + band * j as f64 + (band - group) / 2.0 + bar_w * i as f64;
            let cx = x0 + bar_w / 2.0;
            if !b.value.is_finite() {
                labels.push((cx, base - 4.0, NOT_AVAILABLE.to_string()));
                continue;
            }
            let top = sy.at(b.value);
            let (y0, y1) = ordered(top, base);
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
            labels.push((cx, y, text));
        }
    }
    c.push("</g>".into());
    for (x, y, text) in labels {
        let size = bar_label_size(&text, bar_w);
        c.text(x, y.max(area.top - 6.0), "middle", size, TEXT, &text);
    }
    c.push(format!(
        r#"<line x1="{}" y1="{b}" x2="{}" y2="{b}" stroke="{AXIS}"/>"#,
        n(area.left),
        n(area.right),
        b = n(base)
    ));
    c.references(&area, &sy, &chart.references);
    c.legend(&area, &names, Swatch::Box);
    c.finish()
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

// ---------------------------------------------------------------------------------------------
// Horizontal stacked bars

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
    let range = if chart.normalize {
        Some((0.0, 1.0))
    } else {
        None
    };
    let x_axis = Axis::new(&[0.0, max_total], range, !chart.normalize, true);
    let x_axis = if chart.normalize {
        x_axis.percent()
    } else {
        x_axis
    };
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

// ---------------------------------------------------------------------------------------------
// Distributions

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
    for (cx, name, count) in notes {
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
    c.finish()
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

// ---------------------------------------------------------------------------------------------
// Heatmap

/// Renders a heatmap (the four-state table): one panel per model, rows x columns shaded by value on a
/// scale shared by all panels.
pub fn heatmap(chart: &Heatmap) -> String {
    let max = chart
        .panels
        .iter()
        .flat_map(|p| p.cells.iter().flatten())
        .copied()
        .filter(|v| v.is_finite())
        .fold(f64::NEG_INFINITY, f64::max);
    if !chart.has_data() || !max.is_finite() {
        return no_data(&chart.labels, HEIGHT);
    }
    let g = HeatGrid::new(chart, max);
    let mut c = Canvas::new((g.top + g.grid_h + 56.0).round(), &chart.labels);
    heat_row_labels(&mut c, chart, &g);
    for (p, panel) in chart.panels.iter().enumerate() {
        heat_panel(&mut c, chart, &g, p, panel);
    }
    if !chart.labels.x.is_empty() {
        let x = (g.left + g.right) / 2.0;
        let y = g.top + g.grid_h + 36.0;
        c.text(x, y, "middle", 12.0, TEXT, &chart.labels.x);
    }
    c.finish()
}

/// Where a heatmap's panels and cells go, and the value of the darkest shade.
struct HeatGrid {
    top: f64,
    left: f64,
    right: f64,
    panel_w: f64,
    cell_w: f64,
    cell_h: f64,
    grid_h: f64,
    max: f64,
    /// Characters that fit in a cell.
    max_chars: usize,
}

impl HeatGrid {
    fn new(chart: &Heatmap, max: f64) -> HeatGrid {
        let (nr, nc) = (chart.rows.len(), chart.columns.len());
        let top = top_margin(&chart.labels) + 22.0;
        let row_w = chart
            .rows
            .iter()
            .map(|s| s.chars().count().min(MAX_NAME))
            .max()
            .unwrap_or(0) as f64
            * CHAR_W;
        let y_title = if chart.labels.y.is_empty() { 0.0 } else { 22.0 };
        let left = 16.0 + y_title + row_w + 8.0;
        let right = WIDTH - 16.0;
        let np = chart.panels.len() as f64;
        let panel_w = ((right - left) - HEAT_GAP * (np - 1.0)) / np;
        let cell_w = panel_w / nc as f64;
        let cell_h = (cell_w * 0.75).clamp(24.0, 90.0);
        HeatGrid {
            top,
            left,
            right,
            panel_w,
            cell_w,
            cell_h,
            grid_h: cell_h * nr as f64,
            max,
            max_chars: (cell_w / CHAR_W).floor() as usize,
        }
    }
}

/// Space between a heatmap's panels.
const HEAT_GAP: f64 = 24.0;

/// The row names left of the first panel, and the rows' question turned along the axis.
fn heat_row_labels(c: &mut Canvas, chart: &Heatmap, g: &HeatGrid) {
    for (r, name) in chart.rows.iter().enumerate() {
        let cy = g.top + g.cell_h * (r as f64 + 0.5);
        let name = truncate(name, MAX_NAME);
        c.text(g.left - 8.0, cy + 4.0, "end", 12.0, TEXT, &name);
    }
    if !chart.labels.y.is_empty() {
        let (x, y) = (16.0 + 12.0, g.top + g.grid_h / 2.0);
        c.push(format!(
            r#"<text x="{x}" y="{y}" text-anchor="middle" font-size="12" fill="{TEXT}" transform="rotate(-90 {x} {y})">{}</text>"#,
            escape(&chart.labels.y),
            x = n(x),
            y = n(y),
        ));
    }
}

/// One panel: its title, its cells and the column names under it.
fn heat_panel(c: &mut Canvas, chart: &Heatmap, g: &HeatGrid, p: usize, panel: &HeatmapPanel) {
    let x0 = g.left + (g.panel_w + HEAT_GAP) * p as f64;
    let title_chars = (g.panel_w / 7.5).floor() as usize;
    let mid = x0 + g.panel_w / 2.0;
    c.text_full(
        mid,
        g.top - 8.0,
        "middle",
        13.0,
        TEXT,
        &panel.name,
        title_chars,
    );
    for r in 0..chart.rows.len() {
        for k in 0..chart.columns.len() {
            heat_cell(c, g, panel, (r, k), x0);
        }
    }
    for (k, name) in chart.columns.iter().enumerate() {
        let cx = x0 + g.cell_w * (k as f64 + 0.5);
        let y = g.top + g.grid_h + 16.0;
        c.text_full(cx, y, "middle", 11.0, TEXT, name, g.max_chars);
    }
}

/// One cell, shaded by its value on the shared scale, with its text (or the value) inside.
fn heat_cell(c: &mut Canvas, g: &HeatGrid, panel: &HeatmapPanel, (r, k): (usize, usize), x0: f64) {
    let v = panel
        .cells
        .get(r)
        .and_then(|row| row.get(k))
        .copied()
        .unwrap_or(f64::NAN);
    let (fill, ink) = if v.is_finite() {
        let t = if g.max > 0.0 {
            (v / g.max).clamp(0.0, 1.0)
        } else {
            0.0
        };
        (shade(t), if t > 0.55 { "#FFFFFF" } else { TEXT })
    } else {
        ("#DDDDDD".to_string(), MUTED)
    };
    let (x, y) = (x0 + g.cell_w * k as f64, g.top + g.cell_h * r as f64);
    c.push(format!(
        r##"<rect x="{}" y="{}" width="{}" height="{}" fill="{fill}" stroke="#FFFFFF" stroke-width="2"/>"##,
        n(x),
        n(y),
        n(g.cell_w),
        n(g.cell_h)
    ));
    let text = panel
        .text
        .as_ref()
        .and_then(|t| t.get(r))
        .and_then(|row| row.get(k))
        .cloned()
        .unwrap_or_else(|| {
            if v.is_finite() {
                auto_value(v)
            } else {
                NOT_AVAILABLE.to_string()
            }
        });
    let (cx, cy) = (x + g.cell_w / 2.0, y + g.cell_h / 2.0 + 5.0);
    c.text_full(cx, cy, "middle", 13.0, ink, &text, g.max_chars);
}

/// Colour of a cell at intensity `t` in [0, 1]: from near-white to dark blue.
fn shade(t: f64) -> String {
    let lerp = |a: f64, b: f64| (a + (b - a) * t).round().clamp(0.0, 255.0) as u8;
    format!(
        "#{:02X}{:02X}{:02X}",
        lerp(247.0, 8.0),
        lerp(251.0, 81.0),
        lerp(255.0, 156.0)
    )
}

// ---------------------------------------------------------------------------------------------
// Shared layout

const NOT_AVAILABLE: &str = super::markdown::NOT_AVAILABLE;

/// The text colour that reads on a palette colour: dark on the light ones (yellow, sky blue,
/// orange), white on the rest.
fn ink_on(fill: &str) -> &'static str {
    match fill {
        "#F0E442" | "#56B4E9" | "#E69F00" => TEXT,
        _ => "#FFFFFF",
    }
}

/// A coordinate with two fixed decimals (a non-finite one, which layout never produces, as 0).
fn n(v: f64) -> String {
    if v.is_finite() {
        fixed(v, 2)
    } else {
        "0.00".into()
    }
}

fn ordered(a: f64, b: f64) -> (f64, f64) {
    if a <= b { (a, b) } else { (b, a) }
}

/// A value label: fewer decimals as the value grows; whole numbers without decimals.
fn auto_value(v: f64) -> String {
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
fn truncate(text: &str, max: usize) -> String {
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
fn wrap(text: &str, max: usize) -> Vec<String> {
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

fn text_width(text: &str, size: f64) -> f64 {
    text.chars().count() as f64 * CHAR_W * size / 12.0
}

/// Width reserved on the right for a legend of these names (0 when there is nothing to name).
fn legend_width(names: &[&str]) -> f64 {
    let longest = names
        .iter()
        .map(|s| s.chars().count().min(MAX_NAME))
        .max()
        .unwrap_or(0);
    if longest == 0 {
        0.0
    } else {
        28.0 + longest as f64 * CHAR_W + 12.0
    }
}

fn top_margin(labels: &Labels) -> f64 {
    if labels.subtitle.is_some() {
        64.0
    } else {
        48.0
    }
}

/// A linear map from data units to pixels.
struct Scale {
    d0: f64,
    d1: f64,
    r0: f64,
    r1: f64,
}

impl Scale {
    fn new(d0: f64, d1: f64, r0: f64, r1: f64) -> Scale {
        Scale { d0, d1, r0, r1 }
    }

    fn at(&self, v: f64) -> f64 {
        let span = self.d1 - self.d0;
        if span == 0.0 || !span.is_finite() {
            return (self.r0 + self.r1) / 2.0;
        }
        self.r0 + (v - self.d0) / span * (self.r1 - self.r0)
    }
}

/// A numeric axis: its domain, tick values and how to write them.
struct Axis {
    lo: f64,
    hi: f64,
    ticks: Vec<f64>,
    decimals: usize,
    percent: bool,
}

impl Axis {
    /// Domain from `values` (or `fixed`, when it is a valid range), widened to round ticks.
    fn new(values: &[f64], fixed: Option<(f64, f64)>, integer: bool, include_zero: bool) -> Axis {
        let fixed = fixed.filter(|(a, b)| a.is_finite() && b.is_finite() && a < b);
        let (lo, hi) = match fixed {
            Some(r) => r,
            None => {
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
        };
        let step = nice_step((hi - lo) / 5.0, integer);
        let (lo, hi) = if fixed.is_some() || !step.is_finite() {
            (lo, hi)
        } else {
            ((lo / step).floor() * step, (hi / step).ceil() * step)
        };
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
    fn percent(mut self) -> Axis {
        self.percent = true;
        self.decimals = self.decimals.saturating_sub(2);
        self
    }

    fn label(&self, v: f64) -> String {
        if self.percent {
            format!("{}%", number(v * 100.0, self.decimals))
        } else {
            number(v, self.decimals)
        }
    }

    fn widest_label(&self) -> f64 {
        self.ticks
            .iter()
            .map(|t| text_width(&self.label(*t), 11.0))
            .fold(0.0, f64::max)
    }
}

/// A round tick step (1, 2 or 5 times a power of ten) near `raw`; at least 1 when `integer`.
fn nice_step(raw: f64, integer: bool) -> f64 {
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

/// The plot rectangle, in pixels.
struct Area {
    left: f64,
    right: f64,
    top: f64,
    bottom: f64,
}

/// How a legend entry is drawn.
#[derive(Clone, Copy)]
enum Swatch {
    Line,
    Dashed,
    Dot,
    Box,
}

/// Legend entries `(name, colour, swatch)` for `names` in palette order.
fn legend_entries<'a>(
    names: impl Iterator<Item = &'a str>,
    swatch: Swatch,
) -> Vec<(&'a str, &'static str, Swatch)> {
    names
        .enumerate()
        .map(|(i, name)| (name, PALETTE[i % PALETTE.len()], swatch))
        .collect()
}

/// The SVG document being written.
struct Canvas {
    out: String,
    height: f64,
    labels_top: f64,
    /// The id of the plot's clip path.
    clip_id: String,
}

impl Canvas {
    /// Opens the document and writes the title and subtitle.
    fn new(height: f64, labels: &Labels) -> Canvas {
        let total = height + labels.caption.as_ref().map_or(0.0, |_| CAPTION_H);
        let mut out = String::new();
        out.push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        out.push_str(&format!(
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="Helvetica, Arial, sans-serif" font-size="12">"#,
            w = fixed(WIDTH, 0),
            h = fixed(total, 0)
        ));
        out.push('\n');
        out.push_str(&format!("<title>{}</title>\n", escape(&labels.title)));
        out.push_str(&format!(
            r##"<rect x="0" y="0" width="{}" height="{}" fill="#FFFFFF"/>"##,
            fixed(WIDTH, 0),
            fixed(total, 0)
        ));
        out.push('\n');
        let mut c = Canvas {
            out,
            height,
            labels_top: top_margin(labels),
            clip_id: match &labels.id {
                Some(id) => format!("plot-area-{}", id_safe(id)),
                None => "plot-area".into(),
            },
        };
        c.push(format!(
            r#"<text x="16" y="26" font-size="16" font-weight="bold" fill="{TEXT}">{}</text>"#,
            escape(&truncate(&labels.title, 80))
        ));
        if let Some(sub) = &labels.subtitle {
            c.push(format!(
                r#"<text x="16" y="46" font-size="12" fill="{MUTED}">{}</text>"#,
                escape(&truncate(sub, 100))
            ));
        }
        if let Some(caption) = &labels.caption {
            c.push(format!(
                r#"<text x="16" y="{}" font-size="10" fill="{MUTED}" class="caption">{}</text>"#,
                n(height + CAPTION_H - 8.0),
                escape(&truncate(caption, MAX_CAPTION))
            ));
        }
        c
    }

    /// Opens the group clipped to the plot rectangle (closed by the caller with `</g>`).
    fn open_clipped(&mut self) {
        self.push(format!(r#"<g clip-path="url(#{})">"#, self.clip_id));
    }

    fn push(&mut self, element: String) {
        self.out.push_str(&element);
        self.out.push('\n');
    }

    fn finish(mut self) -> String {
        self.out.push_str("</svg>\n");
        self.out
    }

    /// A text element.
    fn text(&mut self, x: f64, y: f64, anchor: &str, size: f64, fill: &str, text: &str) {
        self.push(format!(
            r#"<text x="{}" y="{}" text-anchor="{anchor}" font-size="{}" fill="{fill}">{}</text>"#,
            n(x),
            n(y),
            fixed(size, 0),
            escape(text)
        ));
    }

    /// A text element shortened to `max_chars`, with the full text as a tooltip when shortened.
    #[allow(clippy::too_many_arguments)]
    fn text_full(
        &mut self,
        x: f64,
        y: f64,
        anchor: &str,
        size: f64,
        fill: &str,
        text: &str,
        max_chars: usize,
    ) {
        let short = truncate(text, max_chars.max(1));
        if short == text {
            self.text(x, y, anchor, size, fill, text);
        } else {
            self.push(format!(
                r#"<text x="{}" y="{}" text-anchor="{anchor}" font-size="{}" fill="{fill}">{}<title>{}</title></text>"#,
                n(x),
                n(y),
                fixed(size, 0),
                escape(&short),
                escape(text)
            ));
        }
    }

    /// The plot rectangle left after the title, the y axis labels, a legend and the x axis.
    fn plot_area(&self, y_axis: &Axis, legend: f64, extra_bottom: f64) -> Area {
        Area {
            left: 16.0 + 22.0 + y_axis.widest_label() + 8.0,
            right: WIDTH - 16.0 - legend,
            top: self.labels_top + 8.0,
            bottom: self.height - 56.0 - extra_bottom,
        }
    }

    /// The clip path of the plot rectangle (id [`Canvas::clip_id`]).
    fn clip(&mut self, a: &Area) {
        self.push(format!(
            r#"<defs><clipPath id="{}"><rect x="{}" y="{}" width="{}" height="{}"/></clipPath></defs>"#,
            self.clip_id,
            n(a.left - 4.0),
            n(a.top - 4.0),
            n(a.right - a.left + 8.0),
            n(a.bottom - a.top + 8.0)
        ));
    }

    /// Horizontal grid lines, y tick labels and the rotated y title.
    fn y_grid(&mut self, a: &Area, sy: &Scale, axis: &Axis, title: &str) {
        for t in &axis.ticks {
            let y = sy.at(*t);
            self.push(format!(
                r#"<line x1="{}" y1="{y}" x2="{}" y2="{y}" stroke="{GRID}"/>"#,
                n(a.left),
                n(a.right),
                y = n(y)
            ));
            self.text(a.left - 6.0, y + 4.0, "end", 11.0, TEXT, &axis.label(*t));
        }
        self.push(format!(
            r#"<line x1="{x}" y1="{}" x2="{x}" y2="{}" stroke="{AXIS}"/>"#,
            n(a.top),
            n(a.bottom),
            x = n(a.left)
        ));
        if !title.is_empty() {
            let (x, y) = (16.0 + 10.0, (a.top + a.bottom) / 2.0);
            self.push(format!(
                r#"<text x="{x}" y="{y}" text-anchor="middle" font-size="12" fill="{TEXT}" transform="rotate(-90 {x} {y})">{}</text>"#,
                escape(&truncate(title, 60)),
                x = n(x),
                y = n(y),
            ));
        }
    }

    /// The x axis line, its ticks and labels, and its title.
    fn x_axis_numeric(&mut self, a: &Area, sx: &Scale, axis: &Axis, title: &str) {
        self.push(format!(
            r#"<line x1="{}" y1="{y}" x2="{}" y2="{y}" stroke="{AXIS}"/>"#,
            n(a.left),
            n(a.right),
            y = n(a.bottom)
        ));
        for t in &axis.ticks {
            let x = sx.at(*t);
            self.push(format!(
                r#"<line x1="{x}" y1="{}" x2="{x}" y2="{}" stroke="{AXIS}"/>"#,
                n(a.bottom),
                n(a.bottom + 4.0),
                x = n(x)
            ));
            self.text(x, a.bottom + 16.0, "middle", 11.0, TEXT, &axis.label(*t));
        }
        self.x_title(a, title, 40.0);
    }

    /// The x axis title, `below` pixels under the plot.
    fn x_title(&mut self, a: &Area, title: &str, below: f64) {
        if !title.is_empty() {
            let title = truncate(title, 90);
            self.text(
                (a.left + a.right) / 2.0,
                a.bottom + below,
                "middle",
                12.0,
                TEXT,
                &title,
            );
        }
    }

    /// Dashed horizontal reference lines with their labels.
    fn references(&mut self, a: &Area, sy: &Scale, refs: &[Reference]) {
        for r in refs.iter().filter(|r| r.value.is_finite()) {
            let y = sy.at(r.value);
            if y < a.top - 0.5 || y > a.bottom + 0.5 {
                continue;
            }
            self.push(format!(
                r#"<line x1="{}" y1="{y}" x2="{}" y2="{y}" stroke="{AXIS}" stroke-dasharray="5 4"/>"#,
                n(a.left),
                n(a.right),
                y = n(y)
            ));
            self.text(a.right - 4.0, y - 4.0, "end", 10.0, AXIS, &r.label);
        }
    }

    /// The legend, right of the plot, one entry per name in palette order.
    fn legend(&mut self, a: &Area, names: &[&str], swatch: Swatch) {
        self.legend_of(a, &legend_entries(names.iter().copied(), swatch));
    }

    /// A legend of `(name, colour, swatch)` entries, top to bottom right of the plot.
    fn legend_of(&mut self, a: &Area, entries: &[(&str, &str, Swatch)]) {
        let names: Vec<&str> = entries.iter().map(|e| e.0).collect();
        if legend_width(&names) == 0.0 {
            return;
        }
        let x = a.right + 16.0;
        let mut y = a.top + 8.0;
        for &(name, color, swatch) in entries {
            match swatch {
                Swatch::Line => self.push(format!(
                    r#"<line x1="{}" y1="{y}" x2="{}" y2="{y}" stroke="{color}" stroke-width="2"/>"#,
                    n(x),
                    n(x + 18.0),
                    y = n(y)
                )),
                Swatch::Dashed => self.push(format!(
                    r#"<line x1="{}" y1="{y}" x2="{}" y2="{y}" stroke="{color}" stroke-width="1.5" stroke-dasharray="6 4"/>"#,
                    n(x),
                    n(x + 18.0),
                    y = n(y)
                )),
                Swatch::Dot => self.push(format!(
                    r#"<circle cx="{}" cy="{}" r="4" fill="{color}"/>"#,
                    n(x + 9.0),
                    n(y)
                )),
                Swatch::Box => self.push(format!(
                    r#"<rect x="{}" y="{}" width="14" height="12" fill="{color}"/>"#,
                    n(x + 2.0),
                    n(y - 6.0)
                )),
            }
            let lines = wrap(name, MAX_NAME);
            for (k, line) in lines.iter().enumerate() {
                self.text(
                    x + 24.0,
                    y + 4.0 + 14.0 * k as f64,
                    "start",
                    12.0,
                    TEXT,
                    line,
                );
            }
            y += 20.0 + 14.0 * lines.len().saturating_sub(1) as f64;
        }
    }
}

/// A chart with only its title and "no data".
fn no_data(labels: &Labels, height: f64) -> String {
    let mut c = Canvas::new(height, labels);
    c.text(WIDTH / 2.0, height / 2.0, "middle", 14.0, MUTED, "no data");
    c.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn a_caption_adds_a_line_under_the_chart() {
        let labels = Labels::new("t", "x", "y").with_caption("run r · n = 3");
        let chart = LineChart::new(labels, vec![Series::new("s", vec![(1.0, 2.0)])]);
        let svg = line_chart(&chart);
        let height = fixed(HEIGHT + CAPTION_H, 0);
        assert!(svg.contains(&format!(r#"height="{height}""#)), "{svg}");
        assert!(
            svg.contains(r#"class="caption">run r · n = 3</text>"#),
            "{svg}"
        );
    }

    /// Checks that `svg` is well-formed XML as far as these charts go: one root, balanced and properly
    /// nested tags, quoted attributes, no raw `<` or stray `&` in text. Returns the element names in
    /// document order.
    fn check_xml(svg: &str) -> Vec<String> {
        let mut stack: Vec<String> = Vec::new();
        let mut names = Vec::new();
        let mut rest = svg;
        let mut roots = 0;
        if let Some(after) = rest.strip_prefix("<?xml") {
            let end = after.find("?>").expect("unterminated declaration");
            rest = &after[end + 2..];
        }
        while let Some(open) = rest.find('<') {
            check_text(&rest[..open]);
            let tag_end = find_tag_end(&rest[open..]).expect("unterminated tag") + open;
            let tag = &rest[open + 1..tag_end];
            rest = &rest[tag_end + 1..];
            if let Some(name) = tag.strip_prefix('/') {
                let top = stack.pop().expect("closing tag without opening");
                assert_eq!(top, name.trim(), "mismatched closing tag");
                continue;
            }
            let self_closing = tag.ends_with('/');
            let body = tag.trim_end_matches('/');
            let name: String = body
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == ':')
                .collect();
            assert!(!name.is_empty(), "empty tag name in <{tag}>");
            check_attributes(&body[name.len()..]);
            if stack.is_empty() {
                roots += 1;
            }
            names.push(name.clone());
            if !self_closing {
                stack.push(name);
            }
        }
        check_text(rest);
        assert!(rest.trim().is_empty(), "text after the root element");
        assert!(stack.is_empty(), "unclosed tags: {stack:?}");
        assert_eq!(roots, 1, "exactly one root element");
        names
    }

    fn find_tag_end(s: &str) -> Option<usize> {
        let mut in_quote = false;
        for (i, c) in s.char_indices() {
            match c {
                '"' => in_quote = !in_quote,
                '>' if !in_quote => return Some(i),
                _ => {}
            }
        }
        None
    }

    fn check_attributes(attrs: &str) {
        let mut rest = attrs.trim();
        while !rest.is_empty() {
            let eq = rest.find('=').expect("attribute without value");
            let name = rest[..eq].trim();
            assert!(
                !name.is_empty() && !name.contains(' '),
                "bad attribute name {name:?}"
            );
            let after = &rest[eq + 1..];
            let value = after.strip_prefix('"').expect("unquoted attribute");
            let close = value.find('"').expect("unterminated attribute");
            let v = &value[..close];
            assert!(!v.contains('<'), "raw < in attribute");
            check_text(v);
            rest = value[close + 1..].trim_start();
        }
    }

    fn check_text(text: &str) {
        assert!(!text.contains('>'), "raw > in text: {text:?}");
        let mut rest = text;
        while let Some(amp) = rest.find('&') {
            let after = &rest[amp + 1..];
            let semi = after.find(';').expect("unterminated entity");
            let entity = &after[..semi];
            assert!(
                ["amp", "lt", "gt", "quot", "apos"].contains(&entity),
                "unknown entity &{entity};"
            );
            rest = &after[semi + 1..];
        }
        assert!(
            !text
                .chars()
                .any(|c| (c as u32) < 0x20 && !matches!(c, '\n' | '\t' | '\r')),
            "control character in text"
        );
    }

    fn count(names: &[String], name: &str) -> usize {
        names.iter().filter(|n| *n == name).count()
    }

    fn nasty() -> String {
        "a<b & \"c\" 'd' > e\u{1}".to_string()
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
    fn empty_and_nan_inputs_draw_no_data() {
        let empty = line_chart(&LineChart::new(Labels::new("empty", "x", "y"), vec![]));
        let nan = line_chart(&LineChart::new(
            Labels::new("nan", "x", "y"),
            vec![Series::new(
                "s",
                vec![(f64::NAN, 1.0), (1.0, f64::INFINITY)],
            )],
        ));
        let bars = bar_chart(&BarChart {
            labels: Labels::new("bars", "", ""),
            categories: vec!["a".into()],
            series: vec![BarSeries {
                name: "m".into(),
                bars: vec![Bar::new(f64::NAN)],
            }],
            ..BarChart::default()
        });
        let stacked = stacked_bars(&StackedBars {
            labels: Labels::new("stacked", "", ""),
            segments: vec!["x".into()],
            rows: vec![StackedRow {
                name: "m".into(),
                values: vec![0.0],
            }],
            normalize: true,
        });
        let dist = distribution(&DistributionChart {
            labels: Labels::new("dist", "", ""),
            samples: vec![Sample {
                name: "m".into(),
                values: vec![f64::NAN],
            }],
            ..DistributionChart::default()
        });
        let heat = heatmap(&Heatmap {
            labels: Labels::new("heat", "", ""),
            rows: vec!["r".into()],
            columns: vec!["c".into()],
            panels: vec![],
        });
        let defaults = [
            bar_chart(&BarChart::default()),
            stacked_bars(&StackedBars::default()),
            distribution(&DistributionChart::default()),
            heatmap(&Heatmap::default()),
            line_chart(&LineChart::default()),
        ];
        for svg in [empty, nan, bars, stacked, dist, heat]
            .into_iter()
            .chain(defaults)
        {
            let names = check_xml(&svg);
            assert!(svg.contains(">no data<"), "{svg}");
            assert_eq!(count(&names, "path"), 0);
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
                Sample {
                    name: "small".into(),
                    values: vec![1.0, 2.0, 2.0, 3.0, 3.0, 4.0, 40.0, f64::NAN],
                },
                Sample {
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

    #[test]
    fn heatmap_four_state_panels() {
        let panel = |name: &str, cells: [[f64; 2]; 2]| HeatmapPanel {
            name: name.into(),
            cells: cells.iter().map(|r| r.to_vec()).collect(),
            text: None,
        };
        let mut chart = Heatmap {
            labels: Labels::new("Four-state table", "end state and replies", "trajectory"),
            rows: vec!["correct".into(), "wrong".into()],
            columns: vec!["correct".into(), "wrong".into()],
            panels: vec![
                panel("small", [[31.0, 4.0], [9.0, 76.0]]),
                panel("large", [[80.0, 2.0], [f64::NAN, 30.0]]),
            ],
        };
        chart.panels[0].text = Some(vec![vec!["31 (26%)".into()]]);
        let svg = heatmap(&chart);
        let names = check_xml(&svg);
        assert_eq!(count(&names, "rect"), 1 + 8);
        assert!(svg.contains(">31 (26%)<"));
        assert!(svg.contains(">76<"));
        assert!(svg.contains(">n/a<"));
        // the largest cell gets the darkest shade, zero the lightest
        assert!(svg.contains(&shade(1.0)));
        assert_eq!(shade(0.0), "#F7FBFF");
        assert_eq!(shade(1.0), "#08519C");
    }

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

    #[test]
    fn escaping_and_truncation() {
        assert_eq!(escape("<&>\"'\u{7}\n"), "&lt;&amp;&gt;&quot;&apos; ");
        assert_eq!(truncate("abcdef", 4), "abc…");
        assert_eq!(truncate("abc", 4), "abc");
        assert_eq!(truncate("abc", 0), "");
        assert_eq!(n(-0.001), "0.00");
        assert_eq!(n(f64::NAN), "0.00");
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

    #[test]
    fn no_data_snapshot() {
        let svg = no_data(&Labels::new("GPU <util>", "", ""), HEIGHT);
        let expected = r##"<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="720" height="420" viewBox="0 0 720 420" font-family="Helvetica, Arial, sans-serif" font-size="12">
<title>GPU &lt;util&gt;</title>
<rect x="0" y="0" width="720" height="420" fill="#FFFFFF"/>
<text x="16" y="26" font-size="16" font-weight="bold" fill="#222222">GPU &lt;util&gt;</text>
<text x="360.00" y="210.00" text-anchor="middle" font-size="14" fill="#666666">no data</text>
</svg>
"##;
        assert_eq!(svg, expected);
    }
}
