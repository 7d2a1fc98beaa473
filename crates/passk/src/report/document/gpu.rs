//! The GPU section: which calls have GPU samples and energy readings, and what they read.

use super::format::{model_per_success, opt};
use super::model_table::ModelTable;
use crate::analysis::{ModelSummary, Summary};
use crate::report::number::{NOT_AVAILABLE, counted, fixed, number};

pub(super) fn gpu(out: &mut String, s: &Summary, models: &[(&str, &ModelSummary)]) {
    out.push_str("### GPU\n\n");
    if models.iter().all(|(_, m)| m.gpu.is_none()) {
        out.push_str("No GPU telemetry recorded.\n\n");
        return;
    }
    let mut t = ModelTable::new(s, "", models);
    let g = |m: &ModelSummary| m.gpu.clone();
    let of_calls = |n: usize, x: &crate::analysis::figures::gpu::GpuSummary| {
        format!("{} of {}", number(n as f64, 0), counted(x.calls, "call"))
    };
    t.row("Calls with GPU samples", |m| {
        g(m).map_or("no GPU telemetry".into(), |x| {
            of_calls(x.calls_with_samples, &x)
        })
    });
    t.row("Calls with an energy reading", |m| {
        g(m).map_or(NOT_AVAILABLE.into(), |x| of_calls(x.calls_with_energy, &x))
    });
    t.row("Utilization, mean / max", |m| {
        g(m).map_or(NOT_AVAILABLE.into(), |x| {
            format!(
                "{} / {}",
                opt(x.util_mean_pct, |v| format!("{}%", fixed(v, 0))),
                opt(x.util_max_pct, |v| format!("{}%", fixed(v, 0)))
            )
        })
    });
    t.row("Memory in use, max", |m| {
        opt(g(m).and_then(|x| x.mem_used_max_mib), |v| {
            format!("{} MiB", number(v, 0))
        })
    });
    t.row("Power, mean", |m| {
        opt(g(m).and_then(|x| x.power_mean_w), |v| {
            format!("{} W", number(v, 0))
        })
    });
    t.row("Energy", |m| {
        opt(g(m).and_then(|x| x.energy_j), |v| {
            format!("{} J", number(v, 0))
        })
    });
    t.row("**Energy per successful task**", |m| {
        model_per_success(m, g(m).and_then(|x| x.energy_per_success_j), |v| {
            format!("**{} J**", number(v, 1))
        })
    });
    t.row(super::headline::per_success_ci_label(s), |m| {
        super::headline::per_success_ci(m, m.per_success_ci95.energy_j.as_ref(), 1, " J")
    });
    out.push_str(&t.render());
    out.push('\n');
}
