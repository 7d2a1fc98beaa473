//! What the user types: every subcommand and flag, with its help text. Commands turn these into
//! validated settings; nothing here does any work.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// Runs tool-calling agents on a local Ollama k times per task and reports what a smaller model
/// really costs per successful task.
#[derive(Debug, Parser)]
#[command(name = "passk", version, about, propagate_version = true)]
pub(crate) struct Cli {
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
}

/// A count that must be at least 1 (a bootstrap over no resamples has no interval).
fn at_least_one(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}

/// Subcommands are verbs.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Write a ready experiment directory: the built-in suites, their frozen graders, a settings file.
    Init(InitArgs),
    /// Run the full experiment against the built-in stub and check the harness scores what it must.
    Calibrate(CalibrateArgs),
    /// Run models x conversations x k trials against Ollama and write records under results/.
    Run(Box<RunArgs>),
    /// Check what a run against a real Ollama needs: server, models, tools support, VRAM, NVML.
    Doctor(DoctorArgs),
    /// Pull a model through Ollama with a progress bar.
    Pull(PullArgs),
    /// Load and check the suites: counts, gold replays, near-misses.
    Suite(SuiteArgs),
    /// Write graders/graders.lock from the current graders.
    Freeze(FreezeArgs),
    /// Check graders/graders.lock against the current graders.
    Verify(FreezeArgs),
    /// Serve the Ollama-compatible stub on a port (for trying clients without a GPU).
    ServeStub(ServeStubArgs),
    /// Compute every metric of a run directory and write report.md, summary.json, CSV and SVG.
    Report(ReportArgs),
    /// Set two runs side by side with paired bootstrap CIs of the differences.
    Compare(CompareArgs),
    /// How many trials per task (and tasks) an experiment needs, from a pilot run, by simulation.
    Plan(PlanArgs),
    /// Grade a run's records again with the current graders; writes regrade.md.
    Regrade(RegradeArgs),
    /// Import the reference harness's JSONL records into a passk run directory.
    Import(ImportArgs),
    /// Drop the duplicate records two writers left in a run directory, keeping each trial's first.
    Repair(RepairArgs),
    /// The illustrative cost model: cost per attempt, per successful task, and break-even.
    Cost(CostArgs),
}

/// The environment variable naming the experiment directory, as `--root`.
pub(crate) const ROOT_ENV: &str = "PASSK_ROOT";

/// Where the experiment lives (tasks/, graders/, results/).
#[derive(Debug, Clone, Args)]
pub(crate) struct DataArgs {
    /// Experiment directory holding tasks/, graders/ and results/ (`passk init` writes one)
    #[arg(long, value_name = "DIR", default_value = ".", env = ROOT_ENV, global = true)]
    pub root: PathBuf,
}

/// The experiment directory the command line names (`--root DIR`, `--root=DIR`, else
/// `$PASSK_ROOT`, else `.`), read before clap parses it.
pub(crate) fn root_before_parsing(args: impl Iterator<Item = std::ffi::OsString>) -> PathBuf {
    let mut args = args.skip(1);
    while let Some(a) = args.next() {
        if a == "--" {
            break;
        }
        if a == "--root" {
            return args.next().map(PathBuf::from).unwrap_or_else(|| ".".into());
        }
        if let Some(dir) = a.to_str().and_then(|s| s.strip_prefix("--root=")) {
            return dir.into();
        }
    }
    std::env::var_os(ROOT_ENV).map_or_else(|| ".".into(), PathBuf::from)
}

/// `passk init`
#[derive(Debug, Args)]
pub(crate) struct InitArgs {
    /// Directory to write the experiment into (created when absent)
    #[arg(value_name = "DIR", default_value = ".")]
    pub dir: PathBuf,
}

/// `passk suite ...`
#[derive(Debug, Args)]
pub(crate) struct SuiteArgs {
    /// What to do with the suites.
    #[command(subcommand)]
    pub command: SuiteCommand,
}

/// `passk suite` subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum SuiteCommand {
    /// Load every suite, print counts, replay gold trajectories and near-misses.
    Check(SuiteCheckArgs),
}

/// `passk suite check`
#[derive(Debug, Args)]
pub(crate) struct SuiteCheckArgs {
    /// Data location.
    #[command(flatten)]
    pub data: DataArgs,
    /// Print a line for every near-miss, not only the surprises
    #[arg(long, short)]
    pub verbose: bool,
}

/// `passk freeze` / `passk verify`
#[derive(Debug, Args)]
pub(crate) struct FreezeArgs {
    /// Data location.
    #[command(flatten)]
    pub data: DataArgs,
}

/// Connection to Ollama.
#[derive(Debug, Clone, Args)]
pub(crate) struct HostArgs {
    /// Ollama server, as OLLAMA_HOST ([scheme://]host[:port]; 0.0.0.0 means 127.0.0.1); `passk run`
    /// takes several, repeated or comma-separated, and shares the trials over them [default:
    /// $OLLAMA_HOST, else 127.0.0.1:11434]
    #[arg(long, value_delimiter = ',', value_name = "URL")]
    pub host: Vec<String>,
    /// Connect timeout, seconds [default: 5]
    #[arg(long, value_name = "SECONDS")]
    pub connect_timeout: Option<f64>,
    /// Request timeout per model call, seconds [default: 300]
    #[arg(long, value_name = "SECONDS")]
    pub timeout: Option<f64>,
    /// Retries of a call after a transport failure, with exponential backoff [default: 3]
    #[arg(long, value_name = "N")]
    pub retries: Option<u32>,
    /// Server API: ollama (native /api/chat) or openai (OpenAI-compatible /v1/chat/completions:
    /// llama.cpp, vLLM, LM Studio, Ollama's /v1) [default: ollama]
    #[arg(long, value_name = "ollama|openai", value_parser = passk::runner::settings::parse_api)]
    pub api: Option<passk::wire::chat::ApiKind>,
}

/// The server when no `--host` (nor the experiment file's `hosts`) names one.
pub(crate) const DEFAULT_HOST: &str = "127.0.0.1:11434";

impl HostArgs {
    /// The servers given: `--host` values, else `from_file`, else `OLLAMA_HOST`, else
    /// [`DEFAULT_HOST`].
    pub(crate) fn hosts_or(&self, from_file: &[String]) -> Vec<String> {
        if !self.host.is_empty() {
            return self.host.clone();
        }
        if !from_file.is_empty() {
            return from_file.to_vec();
        }
        match std::env::var("OLLAMA_HOST") {
            Ok(v) if !v.trim().is_empty() => vec![v],
            _ => vec![DEFAULT_HOST.to_string()],
        }
    }

    /// The one server of a command that talks to one (`doctor`, `pull`), or why not.
    pub(crate) fn single(&self) -> Result<String, String> {
        match self.hosts_or(&[]).as_slice() {
            [one] => Ok(one.clone()),
            many => Err(format!(
                "--host: this command talks to one server, got {}: {}",
                many.len(),
                many.join(", ")
            )),
        }
    }

    /// The connect timeout given, or the default.
    pub(crate) fn connect_timeout(&self) -> f64 {
        self.connect_timeout.unwrap_or(5.0)
    }

    /// The request timeout given, or the default.
    pub(crate) fn timeout(&self) -> f64 {
        self.timeout.unwrap_or(300.0)
    }

    /// The connect and request timeouts as durations, or why a flag cannot be used.
    pub(crate) fn durations(&self) -> Result<(std::time::Duration, std::time::Duration), String> {
        use passk::runner::settings::{MAX_RETRIES, seconds};
        if self.retries.is_some_and(|r| r > MAX_RETRIES) {
            return Err(format!("--retries: must be at most {MAX_RETRIES}"));
        }
        let connect = seconds(self.connect_timeout(), false)
            .map_err(|m| format!("--connect-timeout: {m}"))?;
        let request = seconds(self.timeout(), false).map_err(|m| format!("--timeout: {m}"))?;
        Ok((connect, request))
    }
}

/// A level of an on/off factor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum OnOff {
    /// Off.
    Off,
    /// On.
    On,
}

/// The baseline mode of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Baseline {
    /// The agent with tools.
    None,
    /// One call per customer message, no tools.
    Toolless,
}

/// `passk run`
#[derive(Debug, Args)]
pub(crate) struct RunArgs {
    /// Data location.
    #[command(flatten)]
    pub data: DataArgs,
    /// Connection.
    #[command(flatten)]
    pub host: HostArgs,
    /// Experiment file (TOML) whose keys are these flags' long names; flags override it
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Models, comma-separated [default: qwen2.5-coder:3b,qwen2.5-coder:7b]
    #[arg(long, value_delimiter = ',', value_name = "MODEL")]
    pub models: Vec<String>,
    /// Suites to play, comma-separated [default: store,router]
    #[arg(long, value_delimiter = ',', value_name = "SUITE")]
    pub suite: Vec<passk::runner::settings::SuiteChoice>,
    /// Trials per task (k) [default: 5]
    #[arg(long, short = 'k', value_name = "N")]
    pub trials: Option<u32>,
    /// Tool documentation variant: the file tasks/<suite>/tools/<NAME>.json (bare, documented, or your own); several (bare,documented) make it a factor of a factorial design [default: bare]
    #[arg(long, value_delimiter = ',', value_name = "VARIANT")]
    pub tool_docs: Vec<passk::domain::ToolVariant>,
    /// Policy (system prompt) variant: policy (the suite's policy.md) or the file tasks/<suite>/prompts/<NAME>.md; several (policy,strict) make it a factor of a factorial design [default: policy]
    #[arg(long, value_delimiter = ',', value_name = "VARIANT")]
    pub prompt: Vec<passk::domain::PromptVariant>,
    /// Put the router in front of the agent (its label goes in a system note); `off,on` makes it a factor of a factorial design [default: off; the bare flag: on]
    #[arg(
        long,
        value_delimiter = ',',
        num_args = 0..=1,
        default_missing_value = "on",
        value_name = "off,on"
    )]
    pub router_in_front: Vec<OnOff>,
    /// Also play the toolless baseline beside the agent (toolless) [default: none]
    #[arg(long, value_name = "MODE")]
    pub baseline: Option<Baseline>,
    /// Orchestrator temperature [default: 0.7]
    #[arg(long, value_name = "T")]
    pub temperature: Option<f64>,
    /// Router temperature [default: 0]
    #[arg(long, value_name = "T")]
    pub router_temperature: Option<f64>,
    /// Context size sent as options.num_ctx, tokens [default: 16384]
    #[arg(long, value_name = "TOKENS")]
    pub num_ctx: Option<u64>,
    /// Output cap sent as options.num_predict, tokens [default: 1024]
    #[arg(long, value_name = "TOKENS")]
    pub num_predict: Option<i64>,
    /// Router output cap, tokens [default: 24]
    #[arg(long, value_name = "TOKENS")]
    pub router_num_predict: Option<i64>,
    /// keep_alive sent with every call, a Go duration: 15m, 1h30m, -1m (never unload), 0 [default: 15m]
    #[arg(long, value_name = "DURATION", allow_hyphen_values = true)]
    pub keep_alive: Option<String>,
    /// Ask a thinking model to think (on) or not (off) [default: send nothing, the model decides]
    #[arg(long, value_name = "on|off")]
    pub think: Option<passk::runner::settings::ThinkChoice>,
    /// Model calls per customer turn before the conversation stops; several values run a budget sweep [default: 10]
    #[arg(long, value_delimiter = ',', value_name = "N")]
    pub call_cap: Vec<u32>,
    /// Base seed; per-call seeds derive from (base, trial, turn, step) [default: 0]
    #[arg(long, value_name = "N")]
    pub base_seed: Option<u32>,
    /// Only these task ids, comma-separated [default: all]
    #[arg(long, value_delimiter = ',', value_name = "ID")]
    pub tasks: Vec<String>,
    /// Run directory [default: results/<run-id>]
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Run id, a plain name (a rerun with the same id resumes) [default: derived from the settings]
    #[arg(long, value_name = "ID")]
    pub run_id: Option<String>,
    /// Use streaming chat calls (records time to first byte)
    #[arg(long)]
    pub stream: bool,
    /// Constrain the first model call of each customer turn to one call of a shown tool, by a JSON
    /// schema of the tools sent as structured output (for models too small to call tools unasked)
    #[arg(long)]
    pub force_first_tool_call: bool,
    /// Play in rounds (every task once per model) and stop when an anytime-valid confidence
    /// sequence for the success difference of the first two models decides, or at --trials
    #[arg(long)]
    pub stop_when_decided: bool,
    /// With --stop-when-decided (or the experiment file's): the models are equivalent when the
    /// sequence lies within plus or minus this many percentage points [default: 5]
    #[arg(long, value_name = "PP")]
    pub margin: Option<f64>,
    /// With --stop-when-decided (or the experiment file's): error level of the confidence sequence
    /// [default: 0.05]
    #[arg(long, value_name = "A")]
    pub alpha: Option<f64>,
    /// Conversations each server plays at once (Ollama serves them concurrently up to its
    /// OLLAMA_NUM_PARALLEL) [default: 1]
    #[arg(long, value_name = "N")]
    pub parallel: Option<u32>,
    /// Read the GPU of server HOST (as given to --host) from the NVIDIA dcgm-exporter at URL;
    /// `URL#gpu=N` picks GPU N when it lists several; repeated or comma-separated
    #[arg(long, value_delimiter = ',', value_name = "HOST=URL")]
    pub gpu_metrics: Vec<String>,
    /// Seconds between two scrapes of a --gpu-metrics exporter [default: 1]
    #[arg(long, value_name = "SECONDS")]
    pub scrape_interval: Option<f64>,
    /// Hide progress bars (plain log lines instead)
    #[arg(long)]
    pub no_progress: bool,
    /// Write the report when the run finishes
    #[arg(long)]
    pub report: bool,
    /// Play again every trial whose latest record ended on a failure outside the model
    /// (transport, protocol or tool server), however often it was tried (once the server works)
    #[arg(long)]
    pub retry_failed: bool,
    /// Raise the trials per task of an existing run (its --run-id or --out) to --trials: only the
    /// trials it lacks are played
    #[arg(long)]
    pub extend: bool,
    /// Append to a run whose records have a known model digest although the server cannot tell the
    /// digest now (the manifest says so)
    #[arg(long)]
    pub allow_unknown_digest: bool,
}

/// `passk calibrate`
#[derive(Debug, Args)]
pub(crate) struct CalibrateArgs {
    /// Data location.
    #[command(flatten)]
    pub data: DataArgs,
    /// Trials per task (k)
    #[arg(long, short = 'k', value_name = "N", default_value_t = 5)]
    pub trials: u32,
    /// Directory under which the calibration runs are written [default: <root>/results]
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Hide progress bars
    #[arg(long)]
    pub no_progress: bool,
}

/// `passk doctor`
#[derive(Debug, Args)]
pub(crate) struct DoctorArgs {
    /// Connection.
    #[command(flatten)]
    pub host: HostArgs,
    /// Models to check, comma-separated [default: qwen2.5-coder:3b,qwen2.5-coder:7b]
    #[arg(long, value_delimiter = ',', value_name = "MODEL")]
    pub models: Vec<String>,
}

/// `passk pull`
#[derive(Debug, Args)]
pub(crate) struct PullArgs {
    /// Connection.
    #[command(flatten)]
    pub host: HostArgs,
    /// Models to pull [default: qwen2.5-coder:3b qwen2.5-coder:7b]
    #[arg(value_name = "MODEL")]
    pub models: Vec<String>,
}

/// `passk serve-stub`
#[derive(Debug, Args)]
pub(crate) struct ServeStubArgs {
    /// Data location (the oracle replays these suites' gold trajectories).
    #[command(flatten)]
    pub data: DataArgs,
    /// Address to bind
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1")]
    pub bind: String,
    /// Port (0 picks a free one and prints it)
    #[arg(long, value_name = "PORT", default_value_t = 11435)]
    pub port: u16,
    /// Stub configuration (TOML: models, behaviours, fault rates, speed); without it, only the
    /// stub's own model names are served (`oracle`, `thinking`, `text-calls`, ...), others get
    /// Ollama's 404
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Simulated decode speed, tokens per second
    #[arg(long, value_name = "TOK_PER_S", default_value_t = 2000.0)]
    pub speed: f64,
    /// Requests each model serves at once; more wait for a slot [default: $OLLAMA_NUM_PARALLEL, else 1]
    #[arg(long, value_name = "N")]
    pub num_parallel: Option<usize>,
    /// Requests that may wait for a model still loading; more get Ollama's 503 [default: $OLLAMA_MAX_QUEUE, else 512]
    #[arg(long, value_name = "N")]
    pub max_queue: Option<usize>,
    /// Models loaded at once; loading another evicts one, as under memory pressure [default: $OLLAMA_MAX_LOADED_MODELS, else 0: no limit]
    #[arg(long, value_name = "N")]
    pub max_loaded_models: Option<usize>,
    /// Model NAME's replies come from the OpenAI-compatible server at URL (llama-server, vLLM); repeatable
    #[arg(long, value_name = "NAME=URL")]
    pub upstream: Vec<String>,
}

/// Export destinations shared by report and compare (`-` means stdout).
#[derive(Debug, Clone, Args)]
pub(crate) struct ExportArgs {
    /// Also write the Markdown report here
    #[arg(long, value_name = "FILE")]
    pub export_markdown: Option<PathBuf>,
    /// Also write summary JSON here
    #[arg(long, value_name = "FILE")]
    pub export_json: Option<PathBuf>,
    /// Also write the per-conversation CSV here
    #[arg(long, value_name = "FILE")]
    pub export_csv: Option<PathBuf>,
}

/// `passk report`
#[derive(Debug, Args)]
pub(crate) struct ReportArgs {
    /// Run directory
    #[arg(value_name = "RUN_DIR")]
    pub run: PathBuf,
    /// Bootstrap resamples
    #[arg(long, value_name = "N", default_value_t = 10_000, value_parser = at_least_one)]
    pub resamples: usize,
    /// With more than two models: the model every other is compared with in the model ladder
    /// (default: the largest by parameter size)
    #[arg(long, value_name = "MODEL")]
    pub reference_model: Option<String>,
    /// The pair of every break-even, small first (default: the two smallest by parameter size
    /// where the sizes are known, else the first two models in the run's order)
    #[arg(long, value_name = "SMALL,LARGE", value_delimiter = ',', num_args = 1)]
    pub pair: Vec<String>,
    /// report.html carries its trials' transcripts itself up to this many MiB of them; above, they
    /// go to script files in report-transcripts/ beside it, loaded when a trial is opened (0: always)
    #[arg(long, value_name = "MIB", default_value_t = 16)]
    pub inline_transcripts_mib: u64,
    /// The statistics hold a run's records in memory when its record files are at most this many
    /// MiB; a larger run's are set aside on disk and read back a task at a time (0: always)
    #[arg(long, value_name = "MIB", default_value_t = passk::analysis::HOLD_UP_TO >> 20)]
    pub hold_records_mib: u64,
    /// Extra exports.
    #[command(flatten)]
    pub export: ExportArgs,
}

/// `passk compare`
#[derive(Debug, Args)]
pub(crate) struct CompareArgs {
    /// First run directory (the baseline)
    #[arg(value_name = "RUN_A")]
    pub a: PathBuf,
    /// Second run directory
    #[arg(value_name = "RUN_B")]
    pub b: PathBuf,
    /// Compare even when the runs were graded by different graders (said at the top)
    #[arg(long)]
    pub allow_different_graders: bool,
    /// A second run of RUN_A's configuration (another --base-seed): its run-to-run differences are
    /// the noise band, and differences inside it are marked "not measurable"
    #[arg(long, value_name = "RUN_A2")]
    pub noise: Option<PathBuf>,
    /// Directory for compare.md, compare.json and compare.html [default: RUN_B/compare-<RUN_A name>]
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Bootstrap resamples
    #[arg(long, value_name = "N", default_value_t = 10_000, value_parser = at_least_one)]
    pub resamples: usize,
}

/// `passk plan`
#[derive(Debug, Args)]
pub(crate) struct PlanArgs {
    /// Pilot run directory (a passk run or an imported one); omit it with --rates
    #[arg(value_name = "PILOT_RUN", required_unless_present = "rates")]
    pub pilot: Option<PathBuf>,
    /// Stated success rates of the two models instead of a pilot (every task alike and independent; ignoring spread between tasks can err either way)
    #[arg(
        long,
        value_name = "SMALL,LARGE",
        value_delimiter = ',',
        conflicts_with = "pilot"
    )]
    pub rates: Option<Vec<f64>>,
    /// Tasks of the experiment when --rates is given
    #[arg(long, value_name = "N", default_value_t = 24)]
    pub task_count: usize,
    /// The two models to compare, small first [default: the two smallest by parameter size, as the report pairs them]
    #[arg(long, value_name = "SMALL,LARGE", value_delimiter = ',')]
    pub models: Option<Vec<String>>,
    /// The pilot's suite
    #[arg(long, value_name = "SUITE", default_value = "store")]
    pub suite: String,
    /// The pilot's call cap, when it swept several
    #[arg(long, value_name = "N")]
    pub call_cap: Option<u32>,
    /// Success difference to detect, in percentage points (large - small) [default: the pilot's]
    #[arg(
        long,
        value_name = "PP",
        allow_negative_numbers = true,
        conflicts_with = "break_even_below"
    )]
    pub difference: Option<f64>,
    /// Instead: power to show the break-even price ratio below this ratio
    #[arg(long, value_name = "RATIO")]
    pub break_even_below: Option<f64>,
    /// Power wanted
    #[arg(long, value_name = "P", default_value_t = 0.8)]
    pub power: f64,
    /// Two-sided level of the intervals (0.05: the report's 95% intervals)
    #[arg(long, value_name = "A", default_value_t = 0.05)]
    pub alpha: f64,
    /// Trials per task to try
    #[arg(long = "k", value_name = "K,..", value_delimiter = ',', default_values_t = [1, 2, 3, 4, 5, 6, 8, 10])]
    pub ks: Vec<usize>,
    /// Task counts to try [default: the pilot's]
    #[arg(long, value_name = "N,..", value_delimiter = ',')]
    pub tasks: Vec<usize>,
    /// Simulated experiments per design
    #[arg(long, value_name = "N", default_value_t = 1000)]
    pub simulations: usize,
    /// Bootstrap resamples per simulated experiment of --break-even-below
    #[arg(long, value_name = "N", default_value_t = 1000, value_parser = at_least_one)]
    pub resamples: usize,
    /// Seed of the simulation
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub seed: u64,
    /// Resampled pilots each design's assurance averages over, before its bias correction (0:
    /// point power only)
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub assurance_draws: usize,
    /// Print the plan as JSON instead of a table
    #[arg(long)]
    pub json: bool,
}

/// `passk regrade`
#[derive(Debug, Args)]
pub(crate) struct RegradeArgs {
    /// Data location.
    #[command(flatten)]
    pub data: DataArgs,
    /// Run directory
    #[arg(value_name = "RUN_DIR")]
    pub run: PathBuf,
}

/// `passk repair`
#[derive(Debug, Args)]
pub(crate) struct RepairArgs {
    /// Run directory
    #[arg(value_name = "RUN_DIR")]
    pub run: PathBuf,
}

/// `passk import`
#[derive(Debug, Args)]
pub(crate) struct ImportArgs {
    /// Directory holding the reference's orchestrator.jsonl and router.jsonl
    #[arg(long, value_name = "DIR")]
    pub reference: PathBuf,
    /// Run directory to create [default: results/imported-<dir name>]
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// `passk cost`: seed 004's illustrative cost model. Defaults are its worked example.
#[derive(Debug, Args)]
pub(crate) struct CostArgs {
    /// Capable model's price, dollars per million tokens
    #[arg(long, value_name = "USD", default_value_t = 2.0)]
    pub capable_price: f64,
    /// Capable model's turns per attempt
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub capable_turns: u32,
    /// Capable model's success rate (0..1)
    #[arg(long, value_name = "RATE", default_value_t = 0.9)]
    pub capable_success: f64,
    /// Cheaper model's price, dollars per million tokens
    #[arg(long, value_name = "USD", default_value_t = 0.5)]
    pub cheaper_price: f64,
    /// Cheaper model's turns per attempt
    #[arg(long, value_name = "N", default_value_t = 7)]
    pub cheaper_turns: u32,
    /// Cheaper model's success rate (0..1)
    #[arg(long, value_name = "RATE", default_value_t = 0.6)]
    pub cheaper_success: f64,
    /// Base prompt (system + tools + request), tokens
    #[arg(long, value_name = "TOKENS", default_value_t = 4000)]
    pub base_prompt: u64,
    /// Context growth per turn, tokens
    #[arg(long, value_name = "TOKENS", default_value_t = 800)]
    pub growth: u64,
    /// Output per turn, tokens
    #[arg(long, value_name = "TOKENS", default_value_t = 200)]
    pub output: u64,
    /// Price factor of re-sent (cached) input, e.g. 0.1; omit for no caching
    #[arg(long, value_name = "FACTOR")]
    pub cache_discount: Option<f64>,
    /// Leaf-node comparison: one turn, these success rates (capable,cheaper)
    #[arg(long, value_delimiter = ',', value_name = "RATE", num_args = 2)]
    pub leaf: Vec<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn verify_cli() {
        Cli::command().debug_assert();
    }

    /// Every `passk run` flag is an experiment-file key by its long name, or one of the flags
    /// docs/reference/cli.md lists as not keys; a new flag fails here until it is one or the other.
    #[test]
    fn every_run_flag_is_an_experiment_file_key_or_listed_as_not_one() {
        use passk::runner::settings::{ExperimentFile, FLAGS_NOT_KEYS};
        let cli = Cli::command();
        let run = cli.find_subcommand("run").expect("run");
        let longs: Vec<&str> = run
            .get_arguments()
            .filter_map(|a| a.get_long())
            .filter(|l| *l != "help")
            .collect();
        assert!(longs.len() > 25, "{longs:?}");
        for long in longs {
            let text = format!("{long} = {{}}\n");
            let got = ExperimentFile::parse("exp.toml", &text);
            let message = got.err().map(|e| e.to_string()).unwrap_or_default();
            if FLAGS_NOT_KEYS.contains(&long) {
                assert!(
                    message.contains(&format!("key `{long}`: --{long}")),
                    "{long}: {message}"
                );
            } else {
                // A known key given a wrong value (a table) is refused for its value, never as an
                // unknown key.
                assert!(
                    !message.is_empty() && !message.contains("unknown field"),
                    "--{long} is not an experiment-file key: {message}"
                );
            }
        }
    }
}
