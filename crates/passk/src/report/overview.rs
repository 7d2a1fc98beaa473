//! The summary `report.html` opens on: the run's warnings (stub, imported, graders, CPU), the
//! headline table of its main configuration with the intervals, a factorial run's effects, and
//! its provenance; every other table stays in `report.md` (the page's Tables tab).

use super::document::{Report, group_models, headline, primary_group, warnings};

use std::fmt::Write as _;

/// The summary as markdown (the page renders it with report.md's own renderer).
pub fn overview(r: &Report) -> String {
    let s = r.summary;
    let mut out = String::new();
    super::document::title(&mut out, r);
    if let Some(v) = super::verdict::verdict(s) {
        let _ = writeln!(out, "## Verdict\n\n{v}\n");
    }
    warnings(&mut out, r);
    match primary_group(s) {
        Some((key, g)) => {
            let models = group_models(s, g);
            let _ = writeln!(out, "## Headline: `{key}`\n");
            super::document::group_notes(&mut out, g);
            if models.is_empty() {
                out.push_str("No conversations.\n\n");
            } else {
                headline(&mut out, s, &models);
            }
            let others = s.groups.len().saturating_sub(1);
            if others > 0 {
                let _ = writeln!(
                    out,
                    "{others} more configuration{} under Tables.\n",
                    if others == 1 { "" } else { "s" }
                );
            }
        }
        None => out.push_str("No conversations.\n\n"),
    }
    // A factorial run's question is its factors' effects: they are part of its headline.
    super::factorial::factorial_sections(&mut out, s);
    super::provenance::section(&mut out, s);
    out
}
