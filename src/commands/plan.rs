//! `passk plan [PILOT_RUN]`: how many trials per task, and tasks, an experiment needs to settle a
//! question, by simulation from a pilot run (or stated rates); prints a table of designs with their
//! power and GPU time, or the plan as JSON.

use crate::cli::PlanArgs;
use crate::exit_code;
use passk::analysis::load_run;
use passk::analysis::planning::pilot::{Pilot, PlanError};
use passk::analysis::planning::power::{PlanOptions, Question, plan};
use std::io::Write;

/// Runs the command; returns the exit code.
pub(super) fn run(args: &PlanArgs) -> anyhow::Result<u8> {
    for (flag, values) in [
        ("--rates", args.rates.as_ref().map(Vec::len)),
        ("--models", args.models.as_ref().map(Vec::len)),
    ] {
        if values.is_some_and(|n| n != 2) {
            return usage(&format!(
                "{flag} takes two values, the smaller model's first (SMALL,LARGE)"
            ));
        }
    }
    if let Some([small, large]) = args.models.as_deref()
        && passk::wire::name::same_model(small, large)
    {
        return usage(&format!(
            "--models names one model twice ({small} and {large}): a plan compares two models"
        ));
    }
    let pilot = match (&args.pilot, &args.rates) {
        (Some(dir), _) => {
            let run = match load_run(dir) {
                Ok(run) => run,
                Err(e) => return usage(&format!("reading pilot run {}: {e}", dir.display())),
            };
            let models = args
                .models
                .as_deref()
                .map(|m| (m[0].as_str(), m[1].as_str()));
            Pilot::from_run(&run, &args.suite, models, args.call_cap)
        }
        (None, Some(r)) => Pilot::from_rates(r[0], r[1], args.task_count),
        (None, None) => Err(PlanError::Invalid(
            "give a pilot run directory or --rates SMALL,LARGE".into(),
        )),
    };
    let question = match (args.difference, args.break_even_below) {
        (_, Some(ratio)) => Question::BreakEvenBelow { ratio },
        (Some(0.0), None) => {
            return usage(
                "--difference 0 asks to detect no difference: give the smallest difference worth \
                 detecting, in percentage points",
            );
        }
        (Some(pp), None) if pp.is_finite() && pp.abs() <= 100.0 => Question::Difference {
            stated: Some(pp / 100.0),
        },
        (Some(pp), None) => {
            return usage(&format!(
                "--difference takes percentage points from -100 to 100 (got {pp})"
            ));
        }
        (None, None) => Question::Difference { stated: None },
    };
    let opts = PlanOptions {
        ks: args.ks.clone(),
        task_counts: args.tasks.clone(),
        alpha: args.alpha,
        power: args.power,
        simulations: args.simulations,
        resamples: args.resamples,
        seed: args.seed,
        assurance_draws: args.assurance_draws,
    };
    let result = pilot.and_then(|p| plan(&p, question, &opts));
    let plan = match result {
        Ok(p) => p,
        Err(e) => return usage(&e.to_string()),
    };
    let text = if args.json {
        serde_json::to_string_pretty(&plan)? + "\n"
    } else {
        passk::report::power::markdown(&plan)
    };
    match std::io::stdout().lock().write_all(text.as_bytes()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(exit_code::SUCCESS),
    }
}

fn usage(message: &str) -> anyhow::Result<u8> {
    Err(super::usage_error(message))
}
