//! The SVG document every chart writes into: the page size and palette, the title, subtitle and
//! caption, the plot rectangle with its clip path, grid lines, axes, reference lines and the legend.
//! A chart kind lays out its marks; the canvas draws everything around them.

use super::axis::{Axis, Scale};
use super::text::{CHAR_W, escape, id_safe, n, truncate, wrap};
use crate::report::number::fixed;

/// Width of every chart, in pixels.
pub const WIDTH: f64 = 720.0;
/// Default height of a chart, in pixels (stacked bars grow with their rows).
pub const HEIGHT: f64 = 420.0;
/// Series colours, in order (Okabe–Ito, readable by colour-blind readers); they repeat after eight.
pub const PALETTE: [&str; 8] = [
    "#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000",
];

pub(super) const TEXT: &str = "#222222";
pub(super) const MUTED: &str = "#666666";
pub(super) const AXIS: &str = "#444444";
pub(super) const GRID: &str = "#E5E5E5";
/// Longest row name before it is shortened with an ellipsis; longest line of a legend entry before
/// it wraps.
pub(super) const MAX_NAME: usize = 28;
/// Height added under a chart for its caption line.
pub(super) const CAPTION_H: f64 = 22.0;
/// Longest caption, in characters, before it is shortened (it fits the chart's width at 10 px).
pub(super) const MAX_CAPTION: usize = 118;

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

/// A dashed horizontal reference line with a label (e.g. a ratio of 1).
#[derive(Debug, Clone, PartialEq)]
pub struct Reference {
    /// Height, in y units.
    pub value: f64,
    /// Label written at its right end.
    pub label: String,
}

/// The text colour that reads on a palette colour: dark on the light ones (yellow, sky blue,
/// orange), white on the rest.
pub(super) fn ink_on(fill: &str) -> &'static str {
    match fill {
        "#F0E442" | "#56B4E9" | "#E69F00" => TEXT,
        _ => "#FFFFFF",
    }
}

/// Width reserved on the right for a legend of these names (0 when there is nothing to name).
pub(super) fn legend_width(names: &[&str]) -> f64 {
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

pub(super) fn top_margin(labels: &Labels) -> f64 {
    if labels.subtitle.is_some() {
        64.0
    } else {
        48.0
    }
}

/// The plot rectangle, in pixels.
pub(super) struct Area {
    pub(super) left: f64,
    pub(super) right: f64,
    pub(super) top: f64,
    pub(super) bottom: f64,
}

/// How a legend entry is drawn.
#[derive(Clone, Copy)]
pub(super) enum Swatch {
    Line,
    Dashed,
    Dot,
    Box,
}

/// Legend entries `(name, colour, swatch)` for `names` in palette order.
pub(super) fn legend_entries<'a>(
    names: impl Iterator<Item = &'a str>,
    swatch: Swatch,
) -> Vec<(&'a str, &'static str, Swatch)> {
    names
        .enumerate()
        .map(|(i, name)| (name, PALETTE[i % PALETTE.len()], swatch))
        .collect()
}

/// The SVG document being written.
pub(super) struct Canvas {
    pub(super) out: String,
    pub(super) height: f64,
    pub(super) labels_top: f64,
    /// The id of the plot's clip path.
    pub(super) clip_id: String,
}

impl Canvas {
    /// Opens the document and writes the title and subtitle.
    pub(super) fn new(height: f64, labels: &Labels) -> Canvas {
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
    pub(super) fn open_clipped(&mut self) {
        self.push(format!(r#"<g clip-path="url(#{})">"#, self.clip_id));
    }

    pub(super) fn push(&mut self, element: String) {
        self.out.push_str(&element);
        self.out.push('\n');
    }

    pub(super) fn finish(mut self) -> String {
        self.out.push_str("</svg>\n");
        self.out
    }

    /// A text element.
    pub(super) fn text(&mut self, x: f64, y: f64, anchor: &str, size: f64, fill: &str, text: &str) {
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
    pub(super) fn text_full(
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
    pub(super) fn plot_area(&self, y_axis: &Axis, legend: f64, extra_bottom: f64) -> Area {
        Area {
            left: 16.0 + 22.0 + y_axis.widest_label() + 8.0,
            right: WIDTH - 16.0 - legend,
            top: self.labels_top + 8.0,
            bottom: self.height - 56.0 - extra_bottom,
        }
    }

    /// The clip path of the plot rectangle (id [`Canvas::clip_id`]).
    pub(super) fn clip(&mut self, a: &Area) {
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
    pub(super) fn y_grid(&mut self, a: &Area, sy: &Scale, axis: &Axis, title: &str) {
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
    pub(super) fn x_axis_numeric(&mut self, a: &Area, sx: &Scale, axis: &Axis, title: &str) {
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
    pub(super) fn x_title(&mut self, a: &Area, title: &str, below: f64) {
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
    pub(super) fn references(&mut self, a: &Area, sy: &Scale, refs: &[Reference]) {
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
    pub(super) fn legend(&mut self, a: &Area, names: &[&str], swatch: Swatch) {
        self.legend_of(a, &legend_entries(names.iter().copied(), swatch));
    }

    /// A legend of `(name, colour, swatch)` entries, top to bottom right of the plot.
    pub(super) fn legend_of(&mut self, a: &Area, entries: &[(&str, &str, Swatch)]) {
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
pub(super) fn no_data(labels: &Labels, height: f64) -> String {
    let mut c = Canvas::new(height, labels);
    c.text(WIDTH / 2.0, height / 2.0, "middle", 14.0, MUTED, "no data");
    c.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::svg::line::{LineChart, Series, line_chart};

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
