//! `regrade.md`: every verdict a re-grade moved, with the current grader's reasons.

use super::table::MarkdownTable;
use crate::analysis::comparisons::regrade::{MovedVerdict, Regrade};

/// Renders the re-grade report.
pub fn markdown(r: &Regrade, run_id: &str) -> String {
    let mut s = format!("# Re-grading {run_id}\n\n");
    s.push_str(&format!(
        "The saved records were graded again with the current graders; nothing was re-run and the \
         recorded verdicts are unchanged on disk.\n\n- recorded grader digest: `{}`\n- current grader digest: `{}`{}\n\n",
        r.recorded_digest,
        r.current_digest,
        if r.recorded_digest == r.current_digest { " (the same graders)" } else { "" }
    ));
    s.push_str(&format!(
        "{} records re-graded; {} grades changed: {} pass -> fail, {} fail -> pass.\n",
        r.regraded,
        r.moved.len(),
        r.pass_to_fail(),
        r.fail_to_pass()
    ));
    let skipped = [
        (
            r.imported,
            "imported records keep the verdicts they were recorded with",
        ),
        (
            r.not_graded,
            "conversations ended by a transport or protocol failure were never graded",
        ),
        (
            r.unknown_tasks,
            "records whose task is no longer in the suite",
        ),
    ];
    for (n, why) in skipped.iter().filter(|(n, _)| *n > 0) {
        s.push_str(&format!("\nSkipped {n}: {why}.\n"));
    }
    if !r.moved.is_empty() {
        let mut t = MarkdownTable::new([
            "model",
            "suite",
            "task",
            "trial",
            "was",
            "now",
            "why, under the current graders",
            "replies (first 160 characters of each)",
        ]);
        for m in &r.moved {
            let word = |p: bool| if p { "pass" } else { "fail" };
            let why = if m.reasons.is_empty() {
                "all checks pass".to_string()
            } else {
                m.reasons.join("; ")
            };
            t.row([
                m.model.clone(),
                configuration(m),
                m.task.clone(),
                m.trial.to_string(),
                word(m.was).to_string(),
                word(m.now).to_string(),
                why,
                m.replies.join(" / ").replace('\n', " "),
            ]);
        }
        s.push('\n');
        s.push_str(&t.render());
    }
    s
}

/// Where a moved verdict was played: the suite, and the toolless baseline or the agent's call cap
/// with its factorial cell (tool docs, router in front) where the record names one.
fn configuration(m: &MovedVerdict) -> String {
    match (m.suite.as_str(), m.mode) {
        ("router", _) => "router".to_string(),
        (suite, crate::runner::record::Mode::Toolless) => format!("{suite} (toolless)"),
        (suite, _) => {
            let mut cell = format!("cap {}", m.call_cap);
            if let Some(docs) = m.tool_docs {
                cell.push_str(&format!(", docs {}", docs.as_str()));
            }
            if m.router_in_front {
                cell.push_str(", router in front");
            }
            if let Some(prompt) = m.prompt {
                cell.push_str(&format!(", prompt {}", prompt.as_str()));
            }
            format!("{suite} ({cell})")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::ToolVariant;
    use crate::runner::record::Mode;

    #[test]
    fn a_moved_verdict_names_its_factorial_cell() {
        let mut m = MovedVerdict {
            suite: "store".into(),
            task: "L1".into(),
            model: "m".into(),
            trial: 0,
            mode: Mode::Agent,
            call_cap: 10,
            tool_docs: None,
            prompt: None,
            router_in_front: false,
            was: true,
            now: false,
            reasons: vec![],
            replies: vec![],
        };
        assert_eq!(configuration(&m), "store (cap 10)");
        m.tool_docs = Some(ToolVariant::DOCUMENTED);
        m.router_in_front = true;
        assert_eq!(
            configuration(&m),
            "store (cap 10, docs documented, router in front)"
        );
        m.mode = Mode::Toolless;
        assert_eq!(configuration(&m), "store (toolless)");
    }
}
