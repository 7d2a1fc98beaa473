//! The report's title, its backend, and the banners that say how to read the run: a stub run,
//! an imported run, a run whose first tool calls were forced, graders that differ.

use super::Report;
use crate::wire::openai::server::kind::STUB as STUB_KIND;
use std::fmt::Write as _;

pub(crate) fn title(out: &mut String, r: &Report) {
    let s = r.summary;
    let _ = writeln!(out, "# passk report: {}\n", s.run_id);
    let backend = if s.backend.is_empty() {
        "unknown"
    } else {
        s.backend.as_str()
    };
    let _ = writeln!(out, "Backend: `{backend}`.\n");
    if s.backend == crate::runner::experiment::STUB_BACKEND {
        let _ = writeln!(
            out,
            "> **STUB RUN.** The server was passk's own Ollama-compatible stub: its models replay \
             scripted answers and its timings are simulated, so these figures test the harness, \
             not a model.\n"
        );
    }
    let fronted = r
        .manifest
        .servers
        .iter()
        .any(|h| h.kind.as_deref() == Some(STUB_KIND));
    if fronted && s.backend != crate::runner::experiment::STUB_BACKEND {
        let _ = writeln!(
            out,
            "> **STUB IN FRONT OF A REAL MODEL.** The server was passk's own Ollama-compatible \
             stub forwarding every call to an OpenAI-compatible engine (`serve-stub --upstream`): \
             the replies, their token counts and their prompt and decode durations are the \
             engine's; the load time (`load_duration`) is the stub's simulation, and so are the \
             models' parameters, quantization and placement under Setup (the stub's stand-ins, \
             not the engine's model).\n"
        );
    }
    if s.backend == "imported" || s.imported_from.is_some() {
        let _ = writeln!(
            out,
            "> **IMPORTED RUN.** These records were imported from `{}`, not produced by passk; \
             their verdicts are kept as recorded and were not re-graded.\n",
            s.imported_from.as_deref().unwrap_or("another harness")
        );
        if let Some(note) = &r.manifest.source_regrade {
            out.push_str(&regrade_line(note));
        }
    }
    if first_tool_call_forced(r) {
        let _ = writeln!(
            out,
            "> **FIRST TOOL CALL FORCED.** Each customer turn's first model call was constrained \
             to a JSON schema of the tools (`--force-first-tool-call`), so it is always a tool \
             call: these figures measure how well a model picks and fills a call it must make, not \
             whether it calls tools on its own. Every later call of the turn was free.\n"
        );
    }
    if let Some(b) = crate::analysis::figures::shortfall::banner(s) {
        let _ = writeln!(out, "> {b}\n");
    }
    // Each suite's records carry its own digest; one the manifest does not declare is a verdict
    // of other graders.
    let declared =
        |d: &String| *d == s.grader_digest || r.manifest.graders.values().any(|p| p.digest == *d);
    let others: Vec<&String> = r
        .observations
        .record_grader_digests
        .iter()
        .filter(|d| !declared(d))
        .collect();
    if !others.is_empty() {
        let list: Vec<String> = others.iter().map(|d| format!("`{d}`")).collect();
        let _ = writeln!(
            out,
            "> **GRADERS DIFFER.** The manifest's grader digest is `{}`, but records carry {}: \
             verdicts in this run were not all produced by the same graders.\n",
            s.grader_digest,
            list.join(", ")
        );
    }
}

/// The quoted line of an imported run's `regrade.md` note: headed "RE-GRADED" only when the source
/// changed some grades, and the note as a sentence.
pub(super) fn regrade_line(note: &str) -> String {
    let heading = if note.contains(" records 0 grades changed") {
        "REGRADE NOTE AT THE SOURCE"
    } else {
        "RE-GRADED AT THE SOURCE"
    };
    let mut chars = note.chars();
    let sentence = chars.next().map_or_else(String::new, |c| {
        c.to_uppercase().chain(chars).collect::<String>()
    });
    format!("> **{heading}.** {sentence}.\n\n")
}

/// Whether the run constrained each turn's first call to a tool call (`--force-first-tool-call`).
pub(crate) fn first_tool_call_forced(r: &Report) -> bool {
    r.manifest
        .settings
        .get("force_first_tool_call")
        .and_then(serde_json::Value::as_bool)
        == Some(true)
}
