//! The Warnings section: models that ran on the CPU and every note that says a figure must be
//! read with care.

use super::Report;
use crate::report::table::escape_cell;
use std::collections::BTreeSet;
use std::fmt::Write as _;

pub(crate) fn warnings(out: &mut String, r: &Report) {
    let s = r.summary;
    let mut items: Vec<String> = Vec::new();
    for m in &s.partly_on_cpu {
        items.push(if s.on_cpu.contains(m) {
            format!(
                "`{m}` ran on the CPU (no VRAM: `/api/ps` size_vram 0): its latency and energy \
                 are a CPU's, not those of a GPU-resident model."
            )
        } else {
            format!(
                "`{m}` ran partly on the CPU (`/api/ps` size_vram < size): its latency and energy \
                 are not those of a GPU-resident model."
            )
        });
    }
    // The preflight's own placement lines say what the sentences above say; each warning once.
    let placement = |w: &str| {
        w.contains(crate::runner::preflight::ON_CPU_WARNING)
            || w.contains(crate::runner::preflight::PARTLY_ON_CPU_WARNING)
    };
    let mut seen = BTreeSet::new();
    let rest = s.warnings.iter().chain(&r.notes);
    items.extend(
        rest.filter(|w| !placement(w) && seen.insert(w.as_str()))
            .cloned(),
    );
    if items.is_empty() {
        return;
    }
    out.push_str("## Warnings\n\n");
    for w in items {
        let _ = writeln!(out, "- {}", escape_cell(&w));
    }
    out.push('\n');
}
