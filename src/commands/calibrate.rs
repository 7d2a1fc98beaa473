//! `passk calibrate`: the whole experiment against the stub started in-process, with models whose
//! results are known in advance. Oracle models must score 100%; a flawed model must give exactly
//! the success, pass^k and failure modes its mistake plan implies; a faulty model's injected
//! faults must land in the transport and protocol buckets and never in the model's; a thinking
//! model must pass with its reasoning recorded, and a model without tools must be refused before
//! any trace; oracles crossed over tool docs and router in front must show every factor effect
//! and interaction exactly 0; a ladder of sized oracles and a flawed model must put every model
//! against the largest with the gaps and break-evens the stub implies; an oracle and the thinking
//! model must pass over the OpenAI-compatible wire (the stub's `/v1`) as over Ollama's, and the
//! model without tools be refused there too. Any mismatch
//! means the harness or the graders are broken, and the command exits `CALIBRATION_FAILED`.

use crate::cli::CalibrateArgs;
use crate::exit_code;
use anyhow::Context;
use passk::analysis::calibration::ladder::{Rung, ladder_checks};
use passk::analysis::calibration::{
    Check, api_check, factorial_checks, fault_checks, flawed_checks, no_tools_check, oracle_checks,
    oracle_checks_for, thinking_checks,
};
use passk::analysis::load_run;
use passk::analysis::planning::stopping::SequenceJudge;
use passk::domain::ToolVariant;
use passk::runner::event::EventSink;
use passk::runner::experiment::{self, Experiment};
use passk::runner::levels::Levels;
use passk::runner::progress::{Progress, bars_wanted};
use passk::runner::settings::{RunSettings, SuiteChoice};
use passk::suites::AllSuites;
use passk::wire::chat::ApiKind;
use passk_stub::docs_reactive::DocsRates;
use passk_stub::{
    Behaviour, ExpectedTrial, FaultKind, FaultRates, MistakePlan, ModelSpec, ScriptBook,
    StubConfig, StubHandle, StubServer,
};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// Model names the stub serves during calibration.
const ORACLE_SMALL: &str = "oracle-small";
const ORACLE_LARGE: &str = "oracle-large";
const FLAWED: &str = "flawed";
const FAULTY: &str = "faulty";
const THINKING: &str = "oracle-thinking";
const NO_TOOLS: &str = "no-tools";
/// The factorial pass's model whose mistakes depend on the tool docs (the stub's
/// `docs-reactive`, at its default rates).
const DOCS_REACTIVE: &str = passk_stub::docs_reactive::NAME;

/// The ladder pass's models, smallest first: the stub reads each size from the tag. The largest
/// is the default reference.
const LADDER_FLAWED: &str = "ladder-flawed:1b";
const LADDER_ORACLE_MID: &str = "ladder-oracle:3b";
const LADDER_ORACLE_LARGE: &str = "ladder-oracle:14b";

/// The passes that write a run directory, in the order they are played (the model without tools,
/// refused before any trace, writes none).
const PASSES: [&str; 7] = [
    "oracle",
    "flawed",
    "faults",
    "thinking",
    "factorial",
    "ladder",
    "openai",
];

/// What calibrate's progress says as a pass begins: `pass 2 of 7: flawed`.
fn pass_line(name: &str) -> String {
    match PASSES.iter().position(|p| *p == name) {
        Some(i) => format!("pass {} of {}: {name}", i + 1, PASSES.len()),
        None => format!("{name}: must be refused before any trace (writes no directory)"),
    }
}

/// Store tasks the factorial pass plays (each in 4 cells, on 2 models): enough for a bootstrap,
/// few enough to keep calibration quick.
const FACTORIAL_TASKS: usize = 4;

/// Share of (task, trial) pairs the flawed model gets wrong, and its plan's seed.
const MISTAKE_RATE: f64 = 0.3;
const MISTAKE_SEED: u64 = 2026;

/// Client timeout of the fault pass, and how long an injected hang holds a request.
const FAULT_TIMEOUT: Duration = Duration::from_millis(400);
const HANG: Duration = Duration::from_millis(700);

fn fault_rates() -> FaultRates {
    FaultRates {
        reset: 0.02,
        hang: 0.005,
        http500: 0.02,
        http503: 0.02,
        not_found: 0.004,
        no_tools: 0.004,
        bad_body: 0.02,
        stream_error: 0.01,
        length: 0.01,
    }
}

/// One calibration pass: a run directory under `results/calibrate/` played by some stub models.
struct Pass<'a> {
    name: &'a str,
    models: &'a [&'a str],
    suites: Vec<SuiteChoice>,
    toolless: bool,
    timeout: Duration,
    tweak: &'a dyn Fn(&mut RunSettings),
}

impl<'a> Pass<'a> {
    /// A pass with the ordinary client timeout, no toolless baseline and no further settings.
    fn new(name: &'a str, models: &'a [&'a str], suites: Vec<SuiteChoice>) -> Pass<'a> {
        Pass {
            name,
            models,
            suites,
            toolless: false,
            timeout: Duration::from_secs(30),
            tweak: &|_| {},
        }
    }
}

/// What every pass shares: the stub, the runtime it serves on, the progress display.
struct Bench<'a> {
    args: &'a CalibrateArgs,
    /// The experiment directory the passes play.
    root: PathBuf,
    /// Where `calibrate/<pass>/` go.
    out: PathBuf,
    rt: tokio::runtime::Runtime,
    stub: StubHandle,
    progress: Progress,
    cancel: AtomicBool,
}

impl Bench<'_> {
    /// Plays one pass into a fresh run directory and returns that directory.
    fn play(&self, pass: Pass<'_>) -> anyhow::Result<PathBuf> {
        let dir = self.out.join("calibrate").join(pass.name);
        if dir.exists() {
            std::fs::remove_dir_all(&dir).with_context(|| format!("clearing {}", dir.display()))?;
        }
        let mut settings = RunSettings {
            models: pass.models.iter().map(|m| m.to_string()).collect(),
            suites: pass.suites,
            trials: self.args.trials,
            timeout_s: pass.timeout.as_secs_f64(),
            retries: 3,
            // The stub's faults are instant; a real server's recovery time is not being tested.
            retry_backoff_s: 0.005,
            toolless: pass.toolless,
            ..RunSettings::default()
        };
        (pass.tweak)(&mut settings);
        settings.validate(&|k| format!("--{k}"))?;
        let exp = Experiment {
            settings,
            root: self.root.clone(),
            hosts: vec![self.stub.base_url()],
            run_dir: dir.clone(),
            backend: passk::runner::experiment::Backend::Stub,
            experiment_file: None,
            telemetry: true,
            resume: Default::default(),
        };
        let sink: &dyn EventSink = &self.progress;
        sink.emit(passk::runner::event::RunEvent::Info(pass_line(pass.name)));
        self.rt
            .block_on(experiment::run(&exp, sink, &SequenceJudge, &self.cancel))?;
        Ok(dir)
    }
}

/// The run directories of the passes, in the order their checks read them.
struct Played {
    oracle: PathBuf,
    flawed: PathBuf,
    faults: PathBuf,
    thinking: PathBuf,
    factorial: PathBuf,
    ladder: PathBuf,
    /// The oracle and thinking models over the OpenAI-compatible wire, streamed.
    openai: PathBuf,
    /// Why the model without tools was refused (`None`: it was not).
    refused: Option<String>,
    /// Why the model without tools was refused over the OpenAI-compatible wire.
    refused_openai: Option<String>,
}

impl Played {
    fn dirs(&self) -> [&PathBuf; 7] {
        [
            &self.oracle,
            &self.flawed,
            &self.faults,
            &self.thinking,
            &self.factorial,
            &self.ladder,
            &self.openai,
        ]
    }
}

/// The experiment directory calibrate plays: `root` when it holds one (a `tasks/` folder), else
/// passk's built-in experiment, written afresh to `<out>/calibrate/experiment/`.
fn experiment_dir(root: &std::path::Path, out: &std::path::Path) -> anyhow::Result<PathBuf> {
    if root.join("tasks").is_dir() {
        return Ok(root.to_path_buf());
    }
    let dir = out.join("calibrate").join("experiment");
    if dir.exists() {
        std::fs::remove_dir_all(&dir).with_context(|| format!("clearing {}", dir.display()))?;
    }
    super::init::write(&dir)?;
    passk::errln!(
        "calibrate: no experiment in {} (no tasks/): playing passk's built-in one, written to {}/",
        root.display(),
        dir.display()
    );
    Ok(dir)
}

/// Runs the command; returns the exit code.
pub(super) fn run(args: &CalibrateArgs) -> anyhow::Result<u8> {
    if args.trials == 0 || args.trials > 99 {
        return Err(super::usage_error(&format!(
            "--trials must be between 1 and 99, got {}",
            args.trials
        )));
    }
    let started = Instant::now();
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| args.data.root.join("results"));
    let root = experiment_dir(&args.data.root, &out)?;
    let suites = super::load_all_suites(&root)?;
    let tasks = suites.tasks();
    let mut book = ScriptBook::from_suites(&tasks, Some(&suites.router));
    book.set_example_values(&suites.example_values());
    let plan = MistakePlan::new(&tasks, args.trials, MISTAKE_SEED, MISTAKE_RATE);
    let expected = plan.expected();
    let rt = tokio::runtime::Runtime::new()?;
    let stub = rt.block_on(StubServer::start(stub_config(book, plan)))?;
    let bench = Bench {
        args,
        root,
        out,
        rt,
        stub,
        progress: Progress::new(bars_wanted(args.no_progress), "calibrate", false),
        cancel: AtomicBool::new(false),
    };
    let played = play_passes(&bench, &suites)?;
    let Bench {
        rt, stub, progress, ..
    } = bench;
    let injected = stub.injected();
    rt.block_on(stub.shutdown());
    progress.finish();
    let run_wall = started.elapsed().as_secs_f64();

    let runs = played
        .dirs()
        .map(|d| load_run(d))
        .into_iter()
        .collect::<Result<Vec<_>, _>>()?;
    let checks = all_checks(&runs, &played, &suites, &expected, &injected, args.trials);
    for dir in played.dirs() {
        super::report::write(dir, 10_000)?;
    }
    print_checks(&checks);
    let failed = checks.iter().filter(|c| !c.passed()).count();
    let in_stub: f64 = runs.iter().map(stub_seconds).sum();
    passk::errln!(
        "calibrate: {} checks, {failed} failed, {:.1} s; the runs took {run_wall:.1} s, of which {in_stub:.1} s \
         ({:.0}%) inside the stub (its total_duration) and the rest in passk, the wire and injected hangs and retries",
        checks.len(),
        started.elapsed().as_secs_f64(),
        100.0 * in_stub / run_wall.max(f64::EPSILON)
    );
    for dir in played.dirs() {
        passk::outln!("{}", dir.display());
    }
    Ok(if failed == 0 {
        exit_code::SUCCESS
    } else {
        exit_code::CALIBRATION_FAILED
    })
}

/// The stub's models: two oracles, the flawed model with its mistake plan, the faulty one, a
/// thinking one and one without tools.
fn stub_config(book: ScriptBook, plan: MistakePlan) -> StubConfig {
    let plan = Arc::new(plan);
    let mut config = StubConfig::with_script(book)
        .model(ORACLE_SMALL, Behaviour::Oracle)
        .model(ORACLE_LARGE, Behaviour::Oracle)
        .model(FLAWED, Behaviour::Flawed(Arc::clone(&plan)))
        .model(LADDER_FLAWED, Behaviour::Flawed(plan))
        .model(LADDER_ORACLE_MID, Behaviour::Oracle)
        .model(LADDER_ORACLE_LARGE, Behaviour::Oracle)
        .model(
            FAULTY,
            ModelSpec::new(Behaviour::Oracle).with_faults(fault_rates()),
        )
        .model(
            THINKING,
            ModelSpec::new(Behaviour::Oracle).with_capabilities(&[
                "completion",
                "tools",
                "thinking",
            ]),
        )
        .model(
            NO_TOOLS,
            ModelSpec::new(Behaviour::Oracle).with_capabilities(&["completion"]),
        )
        .model(DOCS_REACTIVE, Behaviour::DocsReactive(DocsRates::DEFAULT));
    config.hang = HANG;
    config
}

/// The first store tasks, which the factorial pass plays in every cell.
fn factorial_tasks(suites: &AllSuites) -> Vec<String> {
    suites
        .domains
        .iter()
        .filter(|d| d.name() == "store")
        .flat_map(|d| d.tasks().iter().take(FACTORIAL_TASKS).map(|t| t.id.clone()))
        .collect()
}

/// Plays every pass in turn.
fn play_passes(bench: &Bench<'_>, suites: &AllSuites) -> anyhow::Result<Played> {
    let factorial_tasks = &factorial_tasks(suites);
    let all = suites.loaded();
    let oracles = [ORACLE_SMALL, ORACLE_LARGE];
    let oracle = bench.play(Pass {
        toolless: true,
        ..Pass::new("oracle", &oracles, all)
    })?;
    let flawed = bench.play(Pass::new(
        "flawed",
        &[FLAWED],
        suites.loaded_conversations(),
    ))?;
    let faults = bench.play(Pass {
        timeout: FAULT_TIMEOUT,
        ..Pass::new(
            "faults",
            &[FAULTY],
            vec![SuiteChoice::Store, SuiteChoice::Router],
        )
    })?;
    let thinking = bench.play(Pass::new("thinking", &[THINKING], vec![SuiteChoice::Store]))?;
    let refused = bench
        .play(Pass::new("no-tools", &[NO_TOOLS], vec![SuiteChoice::Store]))
        .err()
        .map(|e| format!("{e:#}"));
    // Tool docs x router in front on a few store tasks: the oracles pass every cell, the
    // docs-reactive model fails fewer under documented docs.
    let factorial_models = [ORACLE_SMALL, ORACLE_LARGE, DOCS_REACTIVE];
    let factorial = bench.play(Pass {
        tweak: &|s| {
            s.tool_docs = Levels(vec![ToolVariant::BARE, ToolVariant::DOCUMENTED]);
            s.router_in_front = Levels(vec![false, true]);
            s.tasks = factorial_tasks.to_vec();
        },
        ..Pass::new("factorial", &factorial_models, vec![SuiteChoice::Store])
    })?;
    let ladder = play_ladder(bench, factorial_tasks)?;
    let (openai, refused_openai) = play_openai(bench)?;
    debug_assert_eq!(
        [
            &oracle, &flawed, &faults, &thinking, &factorial, &ladder, &openai
        ]
        .map(|d| d
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_string()),
        PASSES.map(String::from)
    );
    Ok(Played {
        oracle,
        flawed,
        faults,
        thinking,
        factorial,
        ladder,
        openai,
        refused,
        refused_openai,
    })
}

/// The OpenAI-compatible wire over the stub's `/v1`: an oracle (with its toolless baseline) and
/// the thinking model on every suite, streamed; and the model without tools, which must be
/// refused there too.
fn play_openai(bench: &Bench<'_>) -> anyhow::Result<(PathBuf, Option<String>)> {
    let over_openai = |s: &mut RunSettings| {
        s.api = ApiKind::OpenAi;
        s.stream = true;
    };
    let dir = bench.play(Pass {
        toolless: true,
        tweak: &over_openai,
        ..Pass::new(
            "openai",
            &[ORACLE_SMALL, THINKING],
            SuiteChoice::all().to_vec(),
        )
    })?;
    let refused = bench
        .play(Pass {
            tweak: &over_openai,
            ..Pass::new("no-tools", &[NO_TOOLS], vec![SuiteChoice::Store])
        })
        .err()
        .map(|e| format!("{e:#}"));
    Ok((dir, refused))
}

/// The ladder pass: three sized models (the flawed one and two oracles) on the factorial's store
/// tasks.
fn play_ladder(bench: &Bench<'_>, tasks: &[String]) -> anyhow::Result<PathBuf> {
    let models = [LADDER_FLAWED, LADDER_ORACLE_MID, LADDER_ORACLE_LARGE];
    bench.play(Pass {
        tweak: &|s| s.tasks = tasks.to_vec(),
        ..Pass::new("ladder", &models, vec![SuiteChoice::Store])
    })
}

/// The ladder's checks: the flawed model's trials are the plan's on the tasks the pass played.
fn ladder_pass_checks(run: &passk::analysis::Run, expected: &[ExpectedTrial]) -> Vec<Check> {
    let played: std::collections::BTreeSet<&str> =
        run.conversations.iter().map(|c| c.task.as_str()).collect();
    let plan: Vec<ExpectedTrial> = expected
        .iter()
        .filter(|e| played.contains(e.task.as_str()))
        .cloned()
        .collect();
    let rungs = [
        (LADDER_FLAWED, Rung::Flawed(&plan)),
        (LADDER_ORACLE_MID, Rung::Oracle),
        (LADDER_ORACLE_LARGE, Rung::Oracle),
    ];
    ladder_checks(run, LADDER_ORACLE_LARGE, &rungs)
}

/// Every check, over the runs loaded from [`Played::dirs`] in that order.
fn all_checks(
    runs: &[passk::analysis::Run],
    played: &Played,
    suites: &AllSuites,
    expected: &[ExpectedTrial],
    injected: &BTreeMap<FaultKind, u64>,
    trials: u32,
) -> Vec<Check> {
    let [oracle, flawed, faults, thinking, factorial, ladder, openai] = runs else {
        unreachable!("one run per pass");
    };
    let mut checks = oracle_checks(oracle);
    for suite in &suites.domains {
        let ids: Vec<&str> = suite.tasks().iter().map(|t| t.id.as_str()).collect();
        let in_suite: Vec<ExpectedTrial> = expected
            .iter()
            .filter(|e| ids.contains(&e.task.as_str()))
            .cloned()
            .collect();
        checks.extend(flawed_checks(flawed, FLAWED, suite.name(), &in_suite));
    }
    checks.extend(fault_checks(faults, FAULTY, injected));
    checks.extend(oracle_checks(thinking));
    checks.extend(thinking_checks(thinking, THINKING));
    checks.push(no_tools_check(NO_TOOLS, played.refused.as_deref()));
    checks.extend(oracle_checks_for(factorial, &[ORACLE_SMALL, ORACLE_LARGE]));
    let docs_effect = expected_docs_effect(suites, trials);
    checks.extend(factorial_checks(
        factorial,
        &BTreeMap::from([(DOCS_REACTIVE.to_string(), docs_effect)]),
    ));
    checks.extend(ladder_pass_checks(ladder, expected));
    checks.extend(oracle_checks(openai));
    checks.extend(thinking_checks(openai, THINKING));
    checks.push(api_check(openai, ApiKind::OpenAi));
    checks.push(api_check(oracle, ApiKind::Ollama));
    checks.push(no_tools_check(NO_TOOLS, played.refused_openai.as_deref()));
    checks
}

/// The documentation effect the docs-reactive model must show on the factorial's tasks: the
/// share of trials documented docs save, known from its rates before anything runs.
fn expected_docs_effect(suites: &AllSuites, trials: u32) -> f64 {
    let ids = factorial_tasks(suites);
    let tasks: Vec<passk::domain::Task> = suites
        .domains
        .iter()
        .filter(|d| d.name() == "store")
        .flat_map(|d| d.tasks().iter().filter(|t| ids.contains(&t.id)).cloned())
        .collect();
    let r = DocsRates::DEFAULT;
    let passes = |v| r.expected_passes(&tasks, trials, v) as f64;
    let n = (tasks.len() * trials as usize).max(1) as f64;
    (passes(ToolVariant::DOCUMENTED) - passes(ToolVariant::BARE)) / n
}

/// Seconds the stub reported as its own (`total_duration`) over every call of a run, warm-ups included.
fn stub_seconds(run: &passk::analysis::Run) -> f64 {
    let calls = run
        .conversations
        .iter()
        .flat_map(|c| c.calls.iter())
        .chain(run.router.iter().map(|r| &r.call))
        .chain(run.manifest.models.iter().filter_map(|m| m.warmup.as_ref()));
    calls
        .filter_map(|c| c.timings.total_duration.get())
        .map(|ns| ns as f64 / 1e9)
        .sum()
}

fn print_checks(checks: &[Check]) {
    let width = checks.iter().map(|c| c.name.len()).max().unwrap_or(0);
    for c in checks {
        let mark = if c.passed() { " ok " } else { "FAIL" };
        if c.passed() {
            passk::errln!("[{mark}] {:width$}  {}", c.name, c.observed);
        } else {
            passk::errln!(
                "[{mark}] {:width$}  expected {}, observed {}",
                c.name,
                c.expected,
                c.observed
            );
        }
    }
}
