//! The "Factorial effects" section of `report.md`: per suite of a run that crossed tool docs with
//! the router in front, the success rate of every cell, each factor's effect per model and the
//! interactions, every effect with its paired task-bootstrap interval (metrics.md, "Factorial
//! effects").

use super::document::{ci_points, points};
use super::markdown::{MarkdownTable, NOT_AVAILABLE, percent};
use crate::analysis::Summary;
use crate::analysis::factorial::{Effect, Factorial, ModelEffects, cell_name};
use std::fmt::Write as _;

/// Appends one section per suite with a factorial design.
pub fn factorial_sections(out: &mut String, s: &Summary) {
    for f in &s.factorial {
        let _ = writeln!(
            out,
            "## Factorial effects: `{}` (call cap {})\n\nThe agent's success rate in each cell of \
             the design, then each factor's effect: documentation = documented − bare, averaged \
             over the router levels; router = on − off, averaged over the tool docs variants; \
             docs × router = (documented − bare with the router on) − (documented − bare with it \
             off). Graded conversations only; each effect is over the tasks all its cells share, \
             with a paired task-bootstrap 95% CI{} ({} resamples, seed {}).\n",
            f.suite,
            f.call_cap,
            super::stopping::mark(s),
            s.settings.resamples,
            s.settings.seed
        );
        let models: Vec<(&str, &ModelEffects)> = s
            .models
            .iter()
            .filter_map(|m| Some((m.as_str(), f.models.get(m)?)))
            .collect();
        out.push_str(&cells(f, &models));
        out.push('\n');
        out.push_str(&effects(&models));
        out.push('\n');
        between_models(out, f, super::stopping::mark(s));
    }
}

/// A table with a label column and one column per model, in report order.
fn table(label: &str, models: &[(&str, &ModelEffects)]) -> MarkdownTable {
    let mut header = vec![label.to_string()];
    header.extend(models.iter().map(|(m, _)| m.to_string()));
    MarkdownTable::new(header)
}

fn cells(f: &Factorial, models: &[(&str, &ModelEffects)]) -> String {
    let mut t = table("cell", models);
    t.numeric_after_first();
    for &d in &f.tool_docs {
        for &r in &f.router_in_front {
            let name = cell_name(d, r);
            let mut row = vec![name.clone()];
            row.extend(models.iter().map(|(_, m)| {
                m.cells
                    .get(&name)
                    .map_or_else(|| NOT_AVAILABLE.to_string(), |&x| percent(x))
            }));
            t.row(row);
        }
    }
    t.render()
}

/// Which effect of a model a row shows.
type EffectOf = fn(&ModelEffects) -> &Option<Effect>;

fn effects(models: &[(&str, &ModelEffects)]) -> String {
    let mut t = table("effect", models);
    t.numeric_after_first();
    let rows: [(&str, EffectOf); 3] = [
        ("documentation (documented − bare)", |m| &m.docs),
        ("router in front (on − off)", |m| &m.router),
        ("docs × router (difference-in-differences)", |m| {
            &m.docs_x_router
        }),
    ];
    for (label, get) in rows {
        let mut row = vec![label.to_string()];
        row.extend(models.iter().map(|(_, m)| effect_text(get(m).as_ref())));
        t.row(row);
    }
    t.render()
}

/// `+12.5 pp [+3 to +22 pp]`, `n/a` when the factor was held fixed.
fn effect_text(e: Option<&Effect>) -> String {
    match e {
        Some(e) => {
            let ci = e
                .ci95
                .as_ref()
                .map_or_else(|| NOT_AVAILABLE.to_string(), ci_points);
            format!("{} [{ci}]", points(e.estimate))
        }
        None => NOT_AVAILABLE.into(),
    }
}

fn between_models(out: &mut String, f: &Factorial, mark: &str) {
    for pair in &f.between_models {
        for (factor, e) in [("documentation", &pair.docs), ("the router", &pair.router)] {
            if let Some(e) = e {
                let ci = e
                    .ci95
                    .as_ref()
                    .map_or_else(|| NOT_AVAILABLE.to_string(), ci_points);
                let _ = writeln!(
                    out,
                    "- Model × {}: {factor} helps `{}` by {} more than `{}` (95% CI{mark} {ci}; {} tasks).",
                    if factor == "documentation" {
                        "docs"
                    } else {
                        "router"
                    },
                    pair.first,
                    points(e.estimate),
                    pair.second,
                    e.tasks
                );
            }
        }
    }
    if !f.between_models.is_empty() {
        out.push('\n');
    }
}
