//! The Latency section: the latency fit, and the time per call from the server's own durations.

use super::format::{on_ollama, opt};
use super::model_table::ModelTable;
use crate::analysis::{ModelSummary, Summary};
use crate::report::number::{NOT_AVAILABLE, fixed, number, seconds};
use std::fmt::Write as _;

pub(super) fn latency(out: &mut String, s: &Summary, models: &[(&str, &ModelSummary)]) {
    latency_fit(out, s, models);
    server_timing(out, s, models);
}

/// The latency fit's coefficients per model, or why the fit means nothing on these calls.
fn latency_fit(out: &mut String, s: &Summary, models: &[(&str, &ModelSummary)]) {
    if models.iter().any(|(_, m)| m.latency.fit.is_some()) {
        out.push_str("### Latency fit\n\n");
        out.push_str(
            "Per model call: latency = fixed + output tokens / decode speed + input term.\n\n",
        );
        let mut t = ModelTable::new(s, "", models);
        // A fit that means nothing on these calls prints no coefficient, only why.
        let fit = |m: &ModelSummary| {
            m.latency
                .fit
                .clone()
                .filter(|f| f.not_identifiable.is_none())
        };
        let flagged = |m: &ModelSummary| m.latency.fit.as_ref()?.not_identifiable.clone();
        if models.iter().any(|(_, m)| flagged(m).is_some()) {
            t.row("Fit", |m| {
                flagged(m).map_or_else(
                    || "identified".into(),
                    |why| format!("not identifiable on these calls ({why})"),
                )
            });
        }
        t.row("Fixed time per call", |m| {
            opt(fit(m).map(|f| f.fixed_s_per_call), seconds)
        });
        t.row("Decode speed", |m| {
            opt(fit(m).map(|f| f.decode_tokens_per_s), |x| {
                format!("{} tokens/s", number(x, 0))
            })
        });
        t.row("Input term per 1,000 input tokens", |m| {
            opt(fit(m).map(|f| f.s_per_1k_input_tokens), |x| {
                format!("{} s", fixed(x, 3))
            })
        });
        t.row("Calls in the fit", |m| {
            m.latency
                .fit
                .as_ref()
                .map_or(NOT_AVAILABLE.into(), |f| number(f.calls as f64, 0))
        });
        out.push_str(&t.render());
        out.push('\n');
    }
}

/// Time per call split by the server's own durations: model time, request overhead, decode and
/// prefill speed.
fn server_timing(out: &mut String, s: &Summary, models: &[(&str, &ModelSummary)]) {
    if models.iter().any(|(_, m)| m.latency.server_split.is_some()) {
        let (who, whose) = if on_ollama(s) {
            ("Ollama", "Ollama's")
        } else {
            ("the server", "the server's")
        };
        let _ = writeln!(out, "### Time per call, from {whose} own durations\n");
        let mut t = ModelTable::new(s, "", models);
        let split = |m: &ModelSummary| m.latency.server_split.clone();
        t.row("Model time (prompt eval + eval)", |m| {
            opt(split(m).map(|x| x.model_s_per_call), seconds)
        });
        t.row(
            "Request overhead (latency minus model time), mean / p50",
            |m| {
                split(m).map_or(NOT_AVAILABLE.into(), |x| {
                    format!(
                        "{} / {} s",
                        fixed(x.overhead_s_per_call, 3),
                        fixed(x.overhead_s_p50, 3)
                    )
                })
            },
        );
        t.row("Decode speed (output tokens / eval time)", |m| {
            opt(split(m).and_then(|x| x.decode_tokens_per_s), |x| {
                format!("{} tokens/s", number(x, 0))
            })
        });
        t.row("Prefill speed (prompt tokens / prompt eval time)", |m| {
            split(m).map_or(NOT_AVAILABLE.into(), |x| {
                opt(x.prefill_tokens_per_s, |v| {
                    let over = if x.prefill_over_uncached {
                        "uncached prompt tokens"
                    } else {
                        "all prompt tokens"
                    };
                    format!("{} tokens/s (over {over})", number(v, 0))
                })
            })
        });
        t.row("Calls", |m| {
            split(m).map_or(NOT_AVAILABLE.into(), |x| number(x.calls as f64, 0))
        });
        out.push_str(&t.render());
        out.push('\n');
        if models
            .iter()
            .any(|(_, m)| split(m).is_some_and(|x| !x.prefill_over_uncached))
        {
            let _ = writeln!(
                out,
                "Prefill speed over all prompt tokens counts those {} served from its prompt \
                 cache, whose time is not in the prompt eval time: it overstates the speed \
                 wherever the cache served some (the server gave no cached count to subtract).\n",
                who
            );
        }
    }
}
