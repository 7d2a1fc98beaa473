//! The "Factorial effects" section of `report.md`: per suite of a run that crossed tool docs with
//! the router in front, the success rate of every cell, each factor's effect per model and the
//! interactions, every effect with its 95% interval from the cells' own (metrics.md, "Factorial
//! effects").

use super::document::{ci_points, points};
use super::number::{NOT_AVAILABLE, denominator, percent, percent_with_n};
use super::table::MarkdownTable;
use crate::analysis::Summary;
use crate::analysis::figures::factorial::{Effect, Factorial, ModelEffects};
use std::fmt::Write as _;

/// Appends one section per suite with a factorial design.
pub fn factorial_sections(out: &mut String, s: &Summary) {
    for f in &s.factorial {
        let _ = writeln!(
            out,
            "## Factorial effects: `{}` (call cap {})\n\nThe agent's success rate in each cell of \
             the design, then each factor's effect: documentation = {docs}, averaged \
             over the router levels; router = on − off, averaged over the tool docs variants; \
             docs × router = ({docs} with the router on) − ({docs} with it \
             off){prompt}. Graded conversations only; each effect is over the tasks all its cells share, \
             with a 95% CI{} built from the cells' own intervals and their correlation over those \
             tasks (metrics.md \"Intervals at the boundary\"). A cell reads \
             success (passes/graded), with its transport and protocol exclusions when any.\n",
            f.suite,
            f.call_cap,
            super::stopping::mark(s),
            docs = docs_contrast(f),
            prompt = prompt_note(f),
        );
        let models: Vec<(&str, &ModelEffects)> = s
            .models
            .iter()
            .filter_map(|m| Some((m.as_str(), f.models.get(m)?)))
            .collect();
        out.push_str(&cells(f, &models));
        out.push('\n');
        out.push_str(&effects(f, &models));
        out.push('\n');
        between_models(out, f, super::stopping::mark(s));
    }
}

/// How the prompt factor reads, where the run crossed it: its effect and its interactions, each
/// averaged over the levels of the factor it leaves out.
fn prompt_note(f: &Factorial) -> String {
    if f.prompt.len() < 2 {
        return String::new();
    }
    format!(
        "; prompt = {}, averaged over the docs variants and router levels; docs × prompt and \
         router × prompt = that factor's effect under the later prompt − under the earlier, \
         averaged over the third factor; the first three effects are averaged over the prompts \
         as well",
        prompt_contrast(f)
    )
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
    for name in f.cell_names() {
        let mut row = vec![name.clone()];
        row.extend(models.iter().map(|(_, m)| cell_text(m, &name)));
        t.row(row);
    }
    t.render()
}

/// A cell's success rate with its passes, graded conversations and exclusions:
/// `93.8% (15/16) (n = 16 of 17; 1 transport)`.
fn cell_text(m: &ModelEffects, name: &str) -> String {
    let Some(o) = m.cell_outcomes.get(name) else {
        return m
            .cells
            .get(name)
            .map_or_else(|| NOT_AVAILABLE.to_string(), |&x| percent(x));
    };
    let mut text = percent_with_n(o.pass as u64, o.graded as u64);
    if o.graded != o.total {
        let _ = write!(text, " ({})", denominator(o));
    }
    text
}

/// Which effect of a model a row shows.
type EffectOf = fn(&ModelEffects) -> &Option<Effect>;

/// The documentation contrast in words: the later variant minus the earlier (`documented − bare`),
/// or why there is none.
fn docs_contrast(f: &Factorial) -> String {
    two_levels(&f.tool_docs)
}

/// The prompt contrast in words: the other variant minus `policy` (or the later name minus the
/// earlier), or why there is none.
fn prompt_contrast(f: &Factorial) -> String {
    two_levels(&f.prompt)
}

/// `b − a` for a factor played at exactly the levels `a`, `b`.
fn two_levels<T: std::fmt::Display>(levels: &[T]) -> String {
    match levels {
        [a, b] => format!("{b} − {a}"),
        many => format!("none with {} variants", many.len()),
    }
}

fn effects(f: &Factorial, models: &[(&str, &ModelEffects)]) -> String {
    let mut t = table("effect", models);
    t.numeric_after_first();
    let docs = format!("documentation ({})", docs_contrast(f));
    let prompt = format!("prompt ({})", prompt_contrast(f));
    let mut rows: Vec<(&str, EffectOf)> = vec![
        (&docs, |m| &m.docs),
        ("router in front (on − off)", |m| &m.router),
        ("docs × router (difference-in-differences)", |m| {
            &m.docs_x_router
        }),
    ];
    if f.prompt.len() > 1 {
        rows.extend([
            (prompt.as_str(), (|m| &m.prompt) as EffectOf),
            ("docs × prompt (difference-in-differences)", |m| {
                &m.docs_x_prompt
            }),
            ("router × prompt (difference-in-differences)", |m| {
                &m.router_x_prompt
            }),
        ]);
    }
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
        let factors = [
            ("docs", "documentation", &pair.docs),
            ("router", "the router", &pair.router),
            ("prompt", "the other prompt", &pair.prompt),
        ];
        for (short, factor, e) in factors {
            if let Some(e) = e {
                let ci = e
                    .ci95
                    .as_ref()
                    .map_or_else(|| NOT_AVAILABLE.to_string(), ci_points);
                let _ = writeln!(
                    out,
                    "- Model × {short}: {factor} helps `{}` by {} more than `{}` (95% CI{mark} {ci}; {} tasks).",
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixtures::factorial_records;
    use crate::analysis::{AnalysisOptions, summarize};
    use crate::domain::ToolVariant;
    use crate::runner::record::{Manifest, ModelInfo};

    #[test]
    fn a_nonzero_effect_and_its_model_contrast_are_written_out() {
        // `m:3b` fails T0 and T1 under bare docs only; `m:7b` passes everything: documentation
        // helps the 3B by +50 pp and the 7B by 0.
        let recs = factorial_records(&["m:7b", "m:3b"], |model, docs, _, task| {
            !(model == "m:3b" && docs == ToolVariant::BARE && task < 2)
        });
        let info = |name: &str, size: &str| ModelInfo {
            name: name.into(),
            parameter_size: Some(size.into()),
            ..ModelInfo::default()
        };
        let manifest = Manifest {
            models: vec![info("m:7b", "7B"), info("m:3b", "3B")],
            ..Manifest::default()
        };
        let opts = AnalysisOptions {
            resamples: 200,
            ..AnalysisOptions::default()
        };
        let s = summarize(&manifest, &recs, &[], &opts);
        let mut out = String::new();
        factorial_sections(&mut out, &s);
        let flat = out.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            flat.contains("with a 95% CI built from the cells' own intervals"),
            "{flat}"
        );
        assert!(
            flat.contains("| docs=bare/router=off | 50.0% (4/8) | 100.0% (8/8) |"),
            "{flat}"
        );
        let docs_row = flat
            .split("| documentation (documented − bare) |")
            .nth(1)
            .unwrap_or_else(|| panic!("no documentation row: {flat}"));
        assert!(
            docs_row.trim_start().starts_with("+50.0 pp ["),
            "{docs_row}"
        );
        assert!(
            flat.contains(
                "- Model × docs: documentation helps `m:3b` by +50.0 pp more than `m:7b` (95% CI"
            ),
            "{flat}"
        );
        assert!(flat.contains("; 4 tasks)."), "{flat}");
    }
}
