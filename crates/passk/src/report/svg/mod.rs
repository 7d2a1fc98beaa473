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
//!
//! `canvas` holds the document and what surrounds a plot, `axis` the scales and ticks, `text`
//! the escaping and number formats; each chart kind has its own file.

mod axis;
mod bar;
mod canvas;
mod distribution;
mod heatmap;
mod line;
mod stacked;
mod text;
#[cfg(test)]
mod xml_check;

pub use bar::{Bar, BarChart, BarSeries, bar_chart};
pub use canvas::{HEIGHT, Labels, PALETTE, Reference, WIDTH};
pub use distribution::{Distribution, DistributionChart, distribution};
pub use heatmap::{Heatmap, HeatmapPanel, heatmap};
pub use line::{LineChart, Marks, Series, XBand, line_chart};
pub use stacked::{StackedBars, StackedRow, stacked_bars};
pub use text::escape;

#[cfg(test)]
mod tests {
    use super::*;
    use xml_check::{check_xml, count};

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
            samples: vec![Distribution {
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
}
