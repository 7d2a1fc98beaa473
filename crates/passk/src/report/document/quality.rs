//! The Trajectory and answer section: graded conversations by whether the gold tool sequence was
//! followed and whether the answer was right, and the control-flow flags.

use super::format::{NOTHING_GRADED, model_rate, opt, per_success};
use super::model_table::ModelTable;
use crate::analysis::{ModelSummary, Summary};
use crate::report::number::{NOT_AVAILABLE, number, percent};

pub(super) fn quality(out: &mut String, s: &Summary, models: &[(&str, &ModelSummary)]) {
    out.push_str("### Trajectory and answer\n\n");
    out.push_str(
        "Graded conversations by whether the gold tool sequence was followed (trajectory) and \
         whether the end state and replies were right (answer).\n\n",
    );
    let mut t = ModelTable::new(s, "", models);
    let n = |x: usize| number(x as f64, 0);
    t.row("Right trajectory, right answer", |m| {
        n(m.four_state.right_path_right_answer)
    });
    t.row("Right trajectory, wrong answer", |m| {
        n(m.four_state.right_path_wrong_answer)
    });
    t.row("Wrong trajectory, right answer", |m| {
        n(m.four_state.wrong_path_right_answer)
    });
    t.row("Wrong trajectory, wrong answer", |m| {
        n(m.four_state.wrong_path_wrong_answer)
    });
    t.row("Trajectory unknown", |m| n(m.four_state.trajectory_unknown));
    t.row("Steps per correct answer (tasks that need tools)", |m| {
        if m.outcomes.graded == 0 {
            return format!("{NOT_AVAILABLE} ({NOTHING_GRADED})");
        }
        per_success(
            m.four_state.steps_per_correct_answer,
            m.four_state.tool_task_passes,
            |x| number(x, 2),
        )
    });
    out.push_str(&t.render());
    out.push('\n');

    out.push_str(
        "Control flow (share of conversations flagged, among those the suite can judge):\n\n",
    );
    let mut t = ModelTable::new(s, "", models);
    t.row("Unknown tool name called", |m| {
        model_rate(m.control_flow.unknown_verb, m)
    });
    t.row("Stated a fact without the lookup (under-tooled)", |m| {
        model_rate(m.control_flow.under_tool, m)
    });
    t.row("More calls than the gold trajectory (overrun)", |m| {
        model_rate(m.control_flow.loop_overrun, m)
    });
    t.row("Model turns on a rule-resolved task (over-modelled)", |m| {
        model_rate(m.control_flow.over_model, m)
    });
    out.push_str(&t.render());
    out.push('\n');

    out.push_str("Noise (disagreement among the trials of a task):\n\n");
    let mut t = ModelTable::new(s, "", models);
    t.row("Mean share of trials disagreeing with the majority", |m| {
        opt(m.noise.mean, percent)
    });
    t.row("Tasks with any disagreement", |m| {
        format!("{} of {}", m.noise.tasks_with_disagreement, m.tasks)
    });
    out.push_str(&t.render());
    out.push('\n');
}
