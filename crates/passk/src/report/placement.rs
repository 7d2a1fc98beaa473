//! The report's "Servers and concurrency" section: one row per server and model, the timing of
//! calls split by the concurrency in force, and the warning that latency under concurrency does not
//! compare with single-stream runs. Written only when a run used several servers or `--parallel`.

use super::document::opt;
use super::number::{NOT_AVAILABLE, number, percent_with_n, seconds};
use super::table::{Align, MarkdownTable};
use crate::analysis::Summary;
use crate::analysis::figures::placement::Placement;
use std::fmt::Write as _;

/// Appends the section to `out` when the summary has a notable placement.
pub fn section(out: &mut String, s: &Summary) {
    let Some(p) = &s.placement else {
        return;
    };
    out.push_str("## Servers and concurrency\n\n");
    if p.max_parallel > 1 {
        let _ = writeln!(
            out,
            "> **Latency under concurrency.** Some trials ran with up to {} conversations at once on \
             their server, so their calls shared the GPU: their latency, time per success and \
             energy per call do not compare with single-stream runs (concurrency 1). Tokens, \
             success and pass^k do not depend on it. The timing table below keeps the levels apart.\n",
            p.max_parallel
        );
    }
    servers_table(out, p);
    concurrency_table(out, p);
}

fn servers_table(out: &mut String, p: &Placement) {
    out.push_str(
        "Per server. The queue hands each server whatever trial is next, so the tasks differ from \
         server to server: success here is a check that no server misbehaves, not a paired \
         comparison. The agent's calls and router calls (in front and standalone) are counted and \
         timed apart.\n\n",
    );
    let mut t = MarkdownTable::new([
        "server",
        "model",
        "conversations",
        "success (graded)",
        "agent calls",
        "time per agent call",
        "model time per agent call",
        "router calls",
        "time per router call",
    ]);
    t.numeric_after_first().align(1, Align::Left);
    for r in &p.servers {
        t.row([
            format!("`{}`", r.host),
            format!("`{}`", r.model),
            r.conversations.to_string(),
            percent_with_n(r.passes as u64, r.graded as u64),
            r.calls.to_string(),
            opt(r.time_per_call_s, seconds),
            opt(r.model_s_per_call, seconds),
            r.router_calls.to_string(),
            opt(r.router_time_per_call_s, seconds),
        ]);
    }
    out.push_str(&t.render());
    out.push('\n');
}

fn concurrency_table(out: &mut String, p: &Placement) {
    out.push_str(
        "Call timing by concurrency (conversations played at once on the call's server). Overhead \
         is latency minus Ollama's model time: the wire, loading and, above 1, waiting for a \
         slot. The agent's calls and router calls are on rows of their own.\n\n",
    );
    let mut t = MarkdownTable::new([
        "concurrency",
        "model",
        "calls of",
        "calls",
        "latency mean / p50 / p95",
        "model time",
        "overhead",
        "decode tokens/s",
    ]);
    t.numeric_after_first()
        .align(0, Align::Right)
        .align(1, Align::Left);
    for r in &p.by_concurrency {
        let latency = match (r.latency_mean_s, r.latency_p50_s, r.latency_p95_s) {
            (Some(a), Some(b), Some(c)) => {
                format!("{} / {} / {} s", number(a, 2), number(b, 2), number(c, 2))
            }
            _ => NOT_AVAILABLE.into(),
        };
        t.row([
            r.parallel.to_string(),
            format!("`{}`", r.model),
            if r.router { "router" } else { "agent" }.to_string(),
            r.calls.to_string(),
            latency,
            opt(r.model_s_per_call, seconds),
            opt(r.overhead_s_per_call, seconds),
            opt(r.decode_tokens_per_s, |v| number(v, 1)),
        ]);
    }
    out.push_str(&t.render());
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::figures::placement::{PlayedTrial, placement};
    use crate::analysis::fixtures::timed_call;

    /// The text with every run of whitespace as one space (the tables are padded).
    fn flat(text: &str) -> String {
        text.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    fn summary_with(p: Option<Placement>) -> Summary {
        Summary {
            placement: p,
            ..crate::analysis::summarize(
                &Default::default(),
                &[],
                &[],
                &crate::analysis::AnalysisOptions::default(),
            )
        }
    }

    #[test]
    fn the_section_warns_only_when_trials_shared_a_server() {
        let calls = [timed_call(10, 1, 2.0)];
        let trial = |host, parallel| PlayedTrial {
            host,
            parallel,
            model: "m",
            conversation: true,
            passed: Some(true),
            calls: calls.iter().collect(),
            router_calls: vec![],
        };
        let models = ["m".to_string()];
        let mut out = String::new();
        let two_hosts = placement(&[trial("http://a", 1), trial("http://b", 1)], &models);
        section(&mut out, &summary_with(Some(two_hosts)));
        let out = flat(&out);
        assert!(out.contains("## Servers and concurrency"), "{out}");
        assert!(
            out.contains("| `http://b` | `m` | 1 | 100.0% (1/1) | 1 | 2.00 s | n/a | 0 |"),
            "{out}"
        );
        assert!(!out.contains("Latency under concurrency"), "{out}");

        let mut out = String::new();
        let parallel = summary_with(Some(placement(&[trial("http://a", 4)], &models)));
        let table = crate::report::document::terminal_table(&parallel);
        assert!(
            table.contains("up to 4 conversations at once per server"),
            "{table}"
        );
        section(&mut out, &parallel);
        let out = flat(&out);
        assert!(out.contains("up to 4 conversations at once"), "{out}");
        assert!(
            out.contains("| 4 | `m` | agent | 1 | 2.00 / 2.00 / 2.00 s |"),
            "{out}"
        );

        let mut out = String::new();
        section(&mut out, &summary_with(None));
        assert!(out.is_empty());
    }
}
