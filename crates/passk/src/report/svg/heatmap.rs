//! Small-multiple heatmaps (the four-state table): one panel per model, rows by columns, every cell
//! shaded on one scale shared by all panels and labelled with its text or value.

use super::canvas::{Canvas, HEIGHT, Labels, MAX_NAME, MUTED, TEXT, WIDTH, no_data, top_margin};
use super::text::CHAR_W;
use super::text::{NOT_AVAILABLE, auto_value, escape, n, truncate};

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::svg::xml_check::{check_xml, count};

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
}
