//! `passk run`: flags over the experiment file over the defaults, then the experiment pipeline with
//! progress on stderr and the run directory on stdout. Ctrl-C (SIGTERM, SIGHUP) finishes the trial
//! in flight, keeps every finished one, and exits with 128 + the signal's number; the same command
//! resumes.

use crate::cli::{Baseline, RunArgs};
use crate::exit_code;
use passk::runner::experiment::{self, Experiment, RunError};
use passk::runner::journal::ResumePolicy;
use passk::runner::levels::Levels;
use passk::runner::lock::LockError;
use passk::runner::progress::{Progress, bars_wanted};
use passk::runner::settings::{ExperimentFile, RunSettings, SettingsError};
use passk::wire::host::parse_host;

/// Merges flags over the experiment file over the defaults. Each source is checked on its own, so
/// that an error names the flag, or the file and key, that gave the value.
pub(super) fn resolve(args: &RunArgs) -> Result<(RunSettings, Option<String>), SettingsError> {
    let mut s = RunSettings::default();
    let mut file_text = None;
    if let Some(path) = &experiment_file(args) {
        let name = path.display().to_string();
        let text = std::fs::read(path)
            .map_err(|e| SettingsError::File {
                path: name.clone(),
                message: e.to_string(),
            })
            .and_then(|bytes| {
                String::from_utf8(bytes).map_err(|_| SettingsError::File {
                    path: name.clone(),
                    message: "not UTF-8 text".into(),
                })
            })?;
        ExperimentFile::load(&name, &text)?.apply(&mut s)?;
        file_text = Some(text);
    }
    let mut flags_only = RunSettings::default();
    apply_flags(args, &mut flags_only);
    let flag = |k: &str| format!("--{k}");
    flags_only.validate(&flag)?;
    apply_flags(args, &mut s);
    if s.stop.is_none()
        && let Some(name) = [("margin", args.margin), ("alpha", args.alpha)]
            .into_iter()
            .find_map(|(name, v)| v.map(|_| name))
    {
        return Err(SettingsError::Invalid(format!(
            "--{name}: needs --stop-when-decided (or `stop-when-decided = true` in the experiment file)"
        )));
    }
    s.validate(&flag)?;
    Ok((s, file_text))
}

/// The experiment file: `--config`, else the experiment directory's `experiment.toml` when there
/// is one.
pub(super) fn experiment_file(args: &RunArgs) -> Option<std::path::PathBuf> {
    args.config.clone().or_else(|| {
        let here = args.data.root.join(super::init::EXPERIMENT_FILE_NAME);
        here.is_file().then_some(here)
    })
}

/// Lays the flags given over `s`.
fn apply_flags(args: &RunArgs, s: &mut RunSettings) {
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
    over!(temperature => temperature);
    over!(router_temperature => router_temperature);
    over!(num_ctx => num_ctx);
    over!(num_predict => num_predict);
    over!(router_num_predict => router_num_predict);
    over!(keep_alive => keep_alive);
    over!(base_seed => base_seed);
    if !args.tool_docs.is_empty() {
        s.tool_docs = Levels(args.tool_docs.clone());
    }
    if !args.prompt.is_empty() {
        s.prompt = Levels(args.prompt.clone());
    }
    if !args.router_in_front.is_empty() {
        s.router_in_front = Levels(
            args.router_in_front
                .iter()
                .map(|&v| v == crate::cli::OnOff::On)
                .collect(),
        );
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
    if args.force_first_tool_call {
        s.force_first_tool_call = true;
    }
    if let Some(t) = args.think {
        s.think = Some(t.as_bool());
    }
    if args.stop_when_decided {
        s.stop = Some(s.stop.unwrap_or_default());
    }
    if let Some(stop) = &mut s.stop {
        stop.margin_pp = args.margin.unwrap_or(stop.margin_pp);
        stop.alpha = args.alpha.unwrap_or(stop.alpha);
    }
    if !args.host.host.is_empty() {
        s.hosts = args.host.host.clone();
    }
    over!(parallel => parallel);
    if !args.gpu_metrics.is_empty() {
        s.gpu_metrics = args.gpu_metrics.clone();
    }
    if let Some(v) = args.scrape_interval {
        s.scrape_interval_s = Some(v);
    }
    over_host!(timeout => timeout_s);
    over_host!(connect_timeout => connect_timeout_s);
    over_host!(retries => retries);
    over_host!(api => api);
}

/// The servers of the run (flags, else the experiment file, else `OLLAMA_HOST`, else the
/// default), parsed as Ollama parses `OLLAMA_HOST`; the settings record them parsed.
fn with_hosts(
    mut settings: RunSettings,
    args: &RunArgs,
) -> Result<(RunSettings, Vec<String>), String> {
    // Each error names where the value came from: the flag, the file's key, or OLLAMA_HOST.
    let file_key = |key: &str| {
        let file = args.config.as_ref().map(|p| p.display().to_string());
        format!("{}: key `{key}`", file.unwrap_or_default())
    };
    let hosts_from = if !args.host.host.is_empty() {
        "--host".to_string()
    } else if !settings.hosts.is_empty() {
        file_key("hosts")
    } else {
        "OLLAMA_HOST".to_string()
    };
    let mut hosts = Vec::new();
    for given in args.host.hosts_or(&settings.hosts) {
        let url = parse_host(&given).map_err(|e| format!("{hosts_from}: {e}"))?;
        if hosts.contains(&url) {
            return Err(format!("{hosts_from}: {url} is given twice"));
        }
        hosts.push(url);
    }
    let metrics_from = if !args.gpu_metrics.is_empty() {
        "--gpu-metrics".to_string()
    } else {
        file_key("gpu-metrics")
    };
    settings.hosts = hosts.clone();
    settings.gpu_metrics = passk::runner::hosts::pair_gpu_metrics(&settings.gpu_metrics, &hosts)
        .map_err(|e| format!("{metrics_from}: {e}"))?
        .into_iter()
        .map(|(host, exporter)| format!("{host}={}", exporter.text()))
        .collect();
    Ok((settings, hosts))
}

/// A run id is a plain name: one path component, so that it can never write outside `results/`.
pub(super) fn check_run_id(id: &str) -> Result<(), String> {
    if id.is_empty() || id == "." || id == ".." || id.contains(['/', '\\', '\0']) {
        return Err(format!(
            "--run-id: {id:?} is not a plain name (no '/', no '..', not empty); use --out for a directory elsewhere"
        ));
    }
    Ok(())
}

/// Maps a runner error to its documented exit code.
pub(super) fn exit_code_of(err: &RunError) -> u8 {
    use passk::runner::journal::JournalError;
    match err {
        RunError::GraderLock(_) => exit_code::GRADER_LOCK_MISMATCH,
        RunError::Journal(JournalError::Mixed { .. } | JournalError::Orphans { .. }) => {
            exit_code::MIXED_VERSIONS
        }
        RunError::Journal(JournalError::Locked(
            LockError::Held { .. } | LockError::Lost { .. },
        )) => exit_code::RUN_DIR_LOCKED,
        RunError::Settings(_) => exit_code::USAGE,
        RunError::ServerLost { .. } => exit_code::SERVER_LOST,
        RunError::Preflight(_) => exit_code::PREFLIGHT_FAILED,
        _ => exit_code::FAILURE,
    }
}

/// The exit code of an interrupted run: 128 + the signal's number (130 for Ctrl-C).
pub(super) fn interrupted_code() -> u8 {
    match crate::signals::received() {
        Some(libc::SIGTERM) => exit_code::TERMINATED,
        Some(libc::SIGHUP) => exit_code::HANGUP,
        _ => exit_code::INTERRUPTED,
    }
}

/// Bootstrap resamples of the summary left on screen and of `--report` (as `passk report`).
const REPORT_RESAMPLES: usize = 10_000;

/// Runs the command; returns the exit code.
pub(super) fn run(args: &RunArgs) -> anyhow::Result<u8> {
    let cancel = crate::signals::graceful();
    super::require_experiment(&args.data.root)?;
    let (settings, experiment_file) = match resolve(args) {
        Ok(x) => x,
        Err(e) => return Err(super::usage_error(&e.to_string())),
    };
    if args.config.is_none()
        && let Some(file) = self::experiment_file(args)
    {
        passk::errln!("run: settings from {} (flags win over it)", file.display());
    }
    let (settings, hosts) = match with_hosts(settings, args) {
        Ok(x) => x,
        Err(e) => return Err(super::usage_error(&e)),
    };
    if let Some(id) = &args.run_id
        && let Err(e) = check_run_id(id)
    {
        return Err(super::usage_error(&e));
    }
    let run_id = args
        .run_id
        .clone()
        .unwrap_or_else(|| settings.default_run_id());
    let run_dir = args
        .out
        .clone()
        .unwrap_or_else(|| args.data.root.join("results").join(&run_id));
    let exp = Experiment {
        backend: passk::runner::experiment::Backend::Server(settings.api),
        settings,
        root: args.data.root.clone(),
        hosts,
        run_dir,
        experiment_file,
        telemetry: true,
        resume: ResumePolicy {
            retry_failed: args.retry_failed,
            extend_trials: args.extend,
            allow_unknown_digest: args.allow_unknown_digest,
        },
    };
    let rt = tokio::runtime::Runtime::new()?;
    let progress = Progress::new(bars_wanted(args.no_progress), "run", true);
    let result = rt.block_on(experiment::run(
        &exp,
        &progress,
        &passk::analysis::planning::stopping::SequenceJudge,
        cancel,
    ));
    progress.finish();
    match result {
        Ok(summary) => {
            passk::errln!(
                "run: {} new records{}, {} already on disk{}",
                summary.written,
                played_of_planned(summary.written, summary.planned),
                summary.skipped,
                if summary.interrupted {
                    " (interrupted: rerun the same command to resume)"
                } else {
                    ""
                }
            );
            if let Some((d, says)) = &summary.decided {
                passk::errln!(
                    "run: stopped after round {} of {}: {says}",
                    d.round + 1,
                    exp.settings.trials,
                );
            }
            if let Some(waiting) = &summary.waiting {
                passk::errln!("run: stopped: {waiting}");
            }
            let table = if args.report && !summary.interrupted {
                super::report::write(&summary.dir, REPORT_RESAMPLES).map(|(md, table)| {
                    passk::errln!("report: {}", super::report::html_beside(&md).display());
                    table
                })
            } else {
                super::report::table(&summary.dir, REPORT_RESAMPLES)
            };
            if let Err(e) = table.map(|t| leave_table(&t)) {
                passk::errln!("warning: no summary of the run: {e:#}");
            }
            passk::outln!("{}", summary.dir.display());
            Ok(if summary.interrupted {
                interrupted_code()
            } else {
                exit_code::SUCCESS
            })
        }
        Err(e) => {
            let e = match e {
                RunError::Settings(s) => RunError::Settings(s.named(&|key| given_as(args, key))),
                e => e,
            };
            // The trials finished before the error are on disk: their summary stays too (none
            // when the run stopped before its first record). A refusal before any trace played
            // nothing: a table there would be an older run's, read as this command's result.
            if !refused_before_playing(&e)
                && let Ok(table) = super::report::table(&exp.run_dir, REPORT_RESAMPLES)
            {
                leave_table(&table);
            }
            let (code, fix) = (exit_code_of(&e), fix_of(&e));
            Err(super::Failure::exit_with_fix(code, e, fix))
        }
    }
}

/// How the user gave the setting `key`: its flag, or the experiment file's key when the flag was
/// not given.
fn given_as(args: &RunArgs, key: &str) -> String {
    let flag_given = match key {
        "tool-docs" => !args.tool_docs.is_empty(),
        "prompt" => !args.prompt.is_empty(),
        "tasks" => !args.tasks.is_empty(),
        "suite" => !args.suite.is_empty(),
        _ => true,
    };
    match &args.config {
        Some(path) if !flag_given => format!("{}: key `{key}`", path.display()),
        _ => format!("--{key}"),
    }
}

/// Whether the run was refused before it played any trial (settings, graders, preflight, a
/// directory that would mix setups or is held by another process).
fn refused_before_playing(err: &RunError) -> bool {
    [
        exit_code::USAGE,
        exit_code::GRADER_LOCK_MISMATCH,
        exit_code::MIXED_VERSIONS,
        exit_code::PREFLIGHT_FAILED,
        exit_code::RUN_DIR_LOCKED,
    ]
    .contains(&exit_code_of(err))
}

/// The one-line fix of a refusal whose message does not already give one.
fn fix_of(err: &RunError) -> Option<&'static str> {
    use passk::runner::journal::JournalError;
    match err {
        RunError::Journal(JournalError::Mixed { what, now, .. })
            if what == "the run's settings"
                && now.starts_with("trials=")
                && !now.contains(", ") =>
        {
            Some("fix: to raise k and play only the trials it lacks, add --extend")
        }
        RunError::Journal(JournalError::Mixed { .. }) => Some(
            "fix: give this setup a directory of its own: `--run-id NEW` (results/NEW) or `--out DIR`",
        ),
        _ => None,
    }
}

/// ` (played N of the M trials planned)` when the session played fewer trials than it planned
/// (it stopped early or was interrupted), else nothing.
fn played_of_planned(written: usize, planned: usize) -> String {
    if written < planned {
        format!(" (played {written} of the {planned} trials planned)")
    } else {
        String::new()
    }
}

/// Leaves the end-of-run table on stderr once the bars are gone, as hyperfine leaves its result.
fn leave_table(table: &str) {
    if !table.is_empty() {
        passk::errln!("\n{}", table.trim_end());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use clap::Parser;
    use proptest::prelude::*;

    #[test]
    fn each_runner_error_maps_to_its_documented_exit_code_by_type() {
        use passk::grade::freeze::FreezeError;
        use passk::runner::experiment::SequenceError;
        use passk::runner::journal::JournalError;
        let held = LockError::Held {
            dir: "results/x".into(),
            holder: "pid 1".into(),
        };
        let io = || std::io::Error::other("disk full");
        let cases: Vec<(RunError, u8)> = vec![
            (
                RunError::GraderLock(FreezeError::Missing {
                    path: "graders/graders.lock".into(),
                }),
                exit_code::GRADER_LOCK_MISMATCH,
            ),
            (
                RunError::Settings(SettingsError::Invalid("--host: no server".into())),
                exit_code::USAGE,
            ),
            (
                RunError::Journal(JournalError::Locked(held)),
                exit_code::RUN_DIR_LOCKED,
            ),
            (
                RunError::ServerLost {
                    host: "http://127.0.0.1:9".into(),
                    trials: 5,
                    error: "reset".into(),
                },
                exit_code::SERVER_LOST,
            ),
            (
                RunError::Sequence(SequenceError::Judge("unreadable".into())),
                exit_code::FAILURE,
            ),
            (
                RunError::Sequence(SequenceError::Write {
                    path: "results/x/rounds.jsonl".into(),
                    source: io(),
                }),
                exit_code::FAILURE,
            ),
        ];
        for (err, code) in cases {
            assert_eq!(exit_code_of(&err), code, "{err}");
        }
        let write = RunError::Sequence(SequenceError::Write {
            path: "results/x/rounds.jsonl".into(),
            source: io(),
        });
        assert_eq!(
            write.to_string(),
            "cannot update the confidence sequence: results/x/rounds.jsonl: disk full"
        );
        assert!(
            std::error::Error::source(&write).is_some(),
            "typed source kept"
        );
    }

    fn resolve_args(argv: &[&str]) -> Result<RunSettings, SettingsError> {
        let cli = Cli::try_parse_from(argv).expect("parses");
        match cli.command {
            Command::Run(args) => resolve(&args).map(|(s, _)| s),
            other => panic!("not a run: {other:?}"),
        }
    }

    #[test]
    fn numbers_that_would_panic_exit_as_usage_errors_naming_the_flag() {
        for (flag, value) in [
            ("--timeout", "inf"),
            ("--timeout", "1e300"),
            ("--connect-timeout", "-1"),
            ("--connect-timeout", "nan"),
            ("--temperature", "nan"),
            ("--temperature", "-1"),
            ("--num-ctx", "0"),
            ("--retries", "4000000000"),
            ("--models", ""),
            ("--models", ","),
            ("--models", "a,a"),
            ("--margin", "0"),
            ("--margin", "nan"),
            ("--margin", "100"),
            ("--alpha", "0"),
            ("--alpha", "0.9"),
            ("--alpha", "inf"),
        ] {
            let arg = format!("{flag}={value}");
            let err = resolve_args(&["passk", "run", "--stop-when-decided", &arg]).expect_err(&arg);
            assert!(err.to_string().starts_with(flag), "{arg}: {err}");
        }
    }

    #[test]
    fn stopping_needs_two_models_and_a_conversation_suite() {
        for argv in [["--models", "a"], ["--suite", "router"]] {
            let mut all = vec!["passk", "run", "--stop-when-decided"];
            all.extend(argv);
            let err = resolve_args(&all).expect_err("refused");
            assert!(err.to_string().starts_with("--stop-when-decided"), "{err}");
        }
        let s = resolve_args(&["passk", "run", "--stop-when-decided", "--margin", "10"])
            .expect("valid");
        let stop = s.stop.expect("a rule");
        assert_eq!((stop.margin_pp, stop.alpha), (10.0, 0.05));
        assert!(
            resolve_args(&["passk", "run"])
                .expect("valid")
                .stop
                .is_none()
        );
    }

    #[test]
    fn several_hosts_are_parsed_and_a_repeat_is_refused() {
        let parse = |argv: &[&str]| {
            let cli = Cli::try_parse_from(argv).expect("parses");
            let Command::Run(args) = cli.command else {
                panic!("not a run")
            };
            let (s, _) = resolve(&args).expect("valid");
            with_hosts(s, &args).map(|(s, hosts)| (s.parallel, hosts))
        };
        let (parallel, hosts) = parse(&[
            "passk",
            "run",
            "--host",
            "a:1,b",
            "--host",
            "0.0.0.0:3",
            "--parallel",
            "4",
        ])
        .expect("hosts");
        assert_eq!(parallel, 4);
        assert_eq!(
            hosts,
            ["http://a:1", "http://b:11434", "http://127.0.0.1:3"].map(String::from)
        );
        let err = parse(&["passk", "run", "--host", "a,http://a:11434"]).expect_err("repeat");
        assert!(
            err.starts_with("--host: http://a:11434 is given twice"),
            "{err}"
        );
        let err = parse(&["passk", "run", "--host", "a:b:c"]).expect_err("bad");
        assert!(err.starts_with("--host:"), "{err}");
    }

    #[test]
    fn a_run_id_is_a_plain_name() {
        for bad in ["", ".", "..", "../../x", "a/b", "a\\b"] {
            assert!(check_run_id(bad).is_err(), "{bad:?}");
        }
        check_run_id("store-k5-ab12").expect("plain");
    }

    fn flag_value() -> impl Strategy<Value = String> {
        prop_oneof![
            any::<f64>().prop_map(|v| v.to_string()),
            any::<i64>().prop_map(|v| v.to_string()),
            proptest::sample::select(vec![
                "inf",
                "-inf",
                "nan",
                "NaN",
                "1e300",
                "-1",
                "0",
                "",
                ",",
                "a,a",
                "store,store",
                "../x",
                "10,10",
                "documented",
                "toolless",
                "\u{0}",
                "é",
                "on",
                "off,on",
                "127.0.0.1:11434=http://127.0.0.1:9400/metrics#gpu=0",
                "127.0.0.1:11434=http://127.0.0.1:9400/metrics#gpu=",
                "x=y",
                "0.05",
                "/nonexistent.toml",
            ])
            .prop_map(String::from),
            "\\PC{0,6}",
        ]
    }

    fn flag() -> impl Strategy<Value = &'static str> {
        proptest::sample::select(vec![
            "--models",
            "--suite",
            "--trials",
            "--tool-docs",
            "--baseline",
            "--temperature",
            "--router-temperature",
            "--num-ctx",
            "--num-predict",
            "--router-num-predict",
            "--keep-alive",
            "--call-cap",
            "--base-seed",
            "--tasks",
            "--run-id",
            "--timeout",
            "--connect-timeout",
            "--retries",
            "--host",
            "--parallel",
            "--think",
            "--router-in-front",
            "--margin",
            "--alpha",
            "--config",
            "--gpu-metrics",
            "--scrape-interval",
        ])
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            failure_persistence: None,
            ..ProptestConfig::with_cases(passk::fuzz_cases(256))
        })]

        /// Whatever the flags, `passk run` resolves them or names the problem; it never panics.
        #[test]
        fn the_flag_parser_never_panics(
            pairs in proptest::collection::vec((flag(), flag_value()), 0..6)
        ) {
            let mut argv = vec!["passk".to_string(), "run".to_string()];
            for (f, v) in &pairs {
                argv.push(format!("{f}={v}"));
            }
            let Ok(cli) = Cli::try_parse_from(&argv) else { return Ok(()) };
            let Command::Run(args) = cli.command else { return Ok(()) };
            if let Some(id) = &args.run_id {
                let _ = check_run_id(id);
            }
            let _ = args.host.durations();
            if let Ok((s, _)) = resolve(&args) {
                prop_assert!(s.wire_durations().is_ok());
                prop_assert!((1..=passk::runner::settings::MAX_PARALLEL).contains(&s.parallel));
                let _ = with_hosts(s.clone(), &args);
                let _ = s.default_run_id();
            }
        }
    }
}
