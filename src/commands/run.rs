//! `passk run`: flags over the experiment file over the defaults, then the experiment pipeline with
//! progress on stderr and the run directory on stdout. Ctrl-C finishes the trial in flight, keeps
//! every finished one, and exits with `INTERRUPTED`; the same command resumes.

use crate::cli::{Baseline, RunArgs};
use crate::exit_code;
use anyhow::Context;
use passk::runner::experiment::{self, Experiment, RunError};
use passk::runner::progress::{Progress, bars_wanted};
use passk::runner::settings::{ExperimentFile, RunSettings, SettingsError};
use passk::wire::host::parse_host;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Merges flags over the experiment file over the defaults.
pub fn resolve(args: &RunArgs) -> anyhow::Result<(RunSettings, Option<String>)> {
    let mut s = RunSettings::default();
    let mut file_text = None;
    if let Some(path) = &args.config {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        ExperimentFile::parse(&path.display().to_string(), &text)?.apply(&mut s)?;
        file_text = Some(text);
    }
    if !args.models.is_empty() {
        s.models = args.models.clone();
    }
    if !args.suite.is_empty() {
        s.suites = args.suite.clone();
    }
    macro_rules! over {
        ($flag:ident => $field:ident) => {
            if let Some(v) = &args.$flag {
                s.$field = v.clone();
            }
        };
    }
    macro_rules! over_host {
        ($flag:ident => $field:ident) => {
            if let Some(v) = args.host.$flag {
                s.$field = v;
            }
        };
    }
    over!(trials => trials);
    over!(tool_docs => tool_docs);
    over!(temperature => temperature);
    over!(router_temperature => router_temperature);
    over!(num_ctx => num_ctx);
    over!(num_predict => num_predict);
    over!(router_num_predict => router_num_predict);
    over!(keep_alive => keep_alive);
    over!(base_seed => base_seed);
    if args.router_in_front {
        s.router_in_front = true;
    }
    if let Some(b) = args.baseline {
        s.toolless = b == Baseline::Toolless;
    }
    if !args.call_cap.is_empty() {
        s.call_caps = args.call_cap.clone();
    }
    if !args.tasks.is_empty() {
        s.tasks = args.tasks.clone();
    }
    if args.stream {
        s.stream = true;
    }
    if let Some(t) = args.think {
        s.think = Some(t.as_bool());
    }
    over_host!(timeout => timeout_s);
    over_host!(connect_timeout => connect_timeout_s);
    over_host!(retries => retries);
    s.validate()?;
    Ok((s, file_text))
}

/// Maps a runner error to its documented exit code.
pub fn exit_code_of(err: &RunError) -> u8 {
    match err {
        RunError::GraderLock(_) => exit_code::GRADER_LOCK_MISMATCH,
        RunError::Journal(passk::runner::journal::JournalError::Mixed { .. }) => {
            exit_code::MIXED_VERSIONS
        }
        RunError::Settings(_) => exit_code::USAGE,
        RunError::ServerLost { .. } => exit_code::SERVER_LOST,
        RunError::Preflight(_) => exit_code::PREFLIGHT_FAILED,
        _ => exit_code::FAILURE,
    }
}

/// Sets the flag on the first Ctrl-C; a second Ctrl-C exits at once.
pub fn cancel_on_ctrl_c(rt: &tokio::runtime::Runtime) -> Arc<AtomicBool> {
    let flag = Arc::new(AtomicBool::new(false));
    let f = Arc::clone(&flag);
    rt.spawn(async move {
        while tokio::signal::ctrl_c().await.is_ok() {
            if f.swap(true, Ordering::SeqCst) {
                std::process::exit(i32::from(exit_code::INTERRUPTED));
            }
            eprintln!("interrupted: finishing the trial in flight (Ctrl-C again to quit now)");
        }
    });
    flag
}

/// Runs the command; returns the exit code.
pub fn run(args: &RunArgs) -> anyhow::Result<u8> {
    let (settings, experiment_file) = match resolve(args) {
        Ok(r) => r,
        // A setting that cannot be used is a usage error, refused before any trace.
        Err(e) if e.downcast_ref::<SettingsError>().is_some() => {
            eprintln!("error: {e:#}");
            return Ok(exit_code::USAGE);
        }
        Err(e) => return Err(e),
    };
    let host = parse_host(&args.host.host)?;
    let run_id = args
        .run_id
        .clone()
        .unwrap_or_else(|| settings.default_run_id());
    let run_dir = args
        .out
        .clone()
        .unwrap_or_else(|| args.data.root.join("results").join(&run_id));
    let exp = Experiment {
        settings,
        root: args.data.root.clone(),
        host,
        run_dir,
        backend: "ollama".into(),
        experiment_file,
        telemetry: true,
    };
    let rt = tokio::runtime::Runtime::new()?;
    let cancel = cancel_on_ctrl_c(&rt);
    let progress = Progress::new(bars_wanted(args.no_progress), "run", true);
    let result = rt.block_on(experiment::run(&exp, &progress, &cancel));
    progress.finish();
    match result {
        Ok(summary) => {
            eprintln!(
                "run: {} new records, {} already on disk{}",
                summary.written,
                summary.skipped,
                if summary.interrupted {
                    " (interrupted: rerun the same command to resume)"
                } else {
                    ""
                }
            );
            if args.report && !summary.interrupted {
                super::report::write(&summary.dir, 10_000)?;
            }
            println!("{}", summary.dir.display());
            Ok(if summary.interrupted {
                exit_code::INTERRUPTED
            } else {
                exit_code::SUCCESS
            })
        }
        Err(e) => {
            eprintln!("error: {e}");
            Ok(exit_code_of(&e))
        }
    }
}
