//! The server-process section: the model server's CPU and memory on this machine, never GPU figures.

use super::format::{on_ollama, opt};
use super::model_table::ModelTable;
use crate::analysis::{ModelSummary, Summary};
use crate::report::number::{NOT_AVAILABLE, counted, fixed, number};
use std::fmt::Write as _;

/// CPU and memory of the model server's process on this machine (never GPU figures).
pub(super) fn server_process(out: &mut String, s: &Summary, models: &[(&str, &ModelSummary)]) {
    if models.iter().all(|(_, m)| m.server_process.is_none()) {
        return;
    }
    out.push_str("### Server process (CPU and memory)\n\n");
    let children = if on_ollama(s) {
        " (Ollama's model runners)"
    } else {
        ""
    };
    let _ = writeln!(
        out,
        "The process listening on the server's port on this machine, with its \
         children{children}; not the GPU.\n"
    );
    let mut t = ModelTable::new(s, "", models);
    let p = |m: &ModelSummary| m.server_process.clone();
    t.row("Calls with server-process samples", |m| {
        p(m).map_or(NOT_AVAILABLE.into(), |x| {
            format!(
                "{} of {}",
                number(x.calls_with_samples as f64, 0),
                counted(x.calls, "call")
            )
        })
    });
    t.row("Server CPU, mean (% of one core)", |m| {
        opt(p(m).and_then(|x| x.cpu_mean_pct), |v| {
            format!("{}%", fixed(v, 0))
        })
    });
    t.row("Server resident memory, max", |m| {
        opt(p(m).and_then(|x| x.rss_max_mib), |v| {
            format!("{} MiB", number(v, 0))
        })
    });
    out.push_str(&t.render());
    out.push('\n');
}
