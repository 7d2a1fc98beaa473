//! `passk regrade`: grades a run's records again with the current graders (only when asked), and
//! writes `regrade.md` and `regrade.json` beside the records, listing every verdict that moved. The
//! original verdicts on disk are never overwritten.

use crate::cli::RegradeArgs;
use crate::exit_code;
use anyhow::Context;
use passk::analysis::comparisons::regrade::regrade;
use passk::analysis::{Keep, load_run_keeping};
use passk::grade::freeze;

/// Runs the command; returns the exit code.
pub(super) fn run(args: &RegradeArgs) -> anyhow::Result<u8> {
    let run = load_run_keeping(&args.run, Keep::Everything)
        .with_context(|| format!("reading {}", args.run.display()))?;
    let root = &args.data.root;
    super::require_experiment(root)?;
    let mut now = freeze::current(root)?.suites;
    if !run.manifest.graders.is_empty() {
        now.retain(|suite, _| run.manifest.graders.contains_key(suite));
    }
    let digest = freeze::combined_digest(&now);
    if let Err(e) = freeze::verify(root) {
        passk::errln!(
            "warning: the current graders are not the locked ones ({e}); re-grading with them as they are"
        );
    }
    let suites = super::load_all_suites(root)?;
    let result = regrade(&run, &suites.domain_refs(), Some(&suites.router), &digest);
    let md = passk::report::regrade::markdown(&result, &run.manifest.run_id);
    let md_path = args.run.join("regrade.md");
    passk::report::write_file(&md_path, md.as_bytes())?;
    passk::report::write_file(
        &args.run.join("regrade.json"),
        &serde_json::to_vec_pretty(&result)?,
    )?;
    passk::outln!(
        "{} re-graded, {} moved ({} pass -> fail, {} fail -> pass); see {}",
        result.regraded,
        result.moved.len(),
        result.pass_to_fail(),
        result.fail_to_pass(),
        md_path.display()
    );
    Ok(exit_code::SUCCESS)
}
