//! Validated run settings: command-line flags merged over an optional TOML experiment file, merged
//! over the defaults (docs/reference/cli.md lists each flag's). The resolved settings go into the manifest,
//! and the default run id is derived from them, so the same command resumes the same run.

use crate::domain::{PromptVariant, ToolVariant};
use crate::runner::levels::Levels;
use crate::wire::chat::ApiKind;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::time::Duration;

/// Default models: two sizes of one family.
pub const DEFAULT_MODELS: [&str; 2] = ["qwen2.5-coder:3b", "qwen2.5-coder:7b"];

pub use crate::suites::SuiteChoice;

/// Every setting of a run, resolved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSettings {
    /// Model tags, in order (the first is the "small" one in break-even ratios).
    pub models: Vec<String>,
    /// Suites to play.
    pub suites: Vec<SuiteChoice>,
    /// Trials per task (k).
    pub trials: u32,
    /// Tool documentation variants (several: a factor of the factorial design).
    pub tool_docs: Levels<ToolVariant>,
    /// Router in front of the agent: off, on, or both (a factor of the factorial design).
    pub router_in_front: Levels<bool>,
    /// Policy (system prompt) variants (several: a factor of the factorial design). Left out of
    /// the settings at the suite's own policy alone, so such a run's id and manifest read as
    /// before.
    #[serde(default = "policy_only", skip_serializing_if = "is_policy_only")]
    pub prompt: Levels<PromptVariant>,
    /// Also play the toolless baseline (one call per customer message, no tools) beside the agent.
    pub toolless: bool,
    /// Orchestrator temperature.
    pub temperature: f64,
    /// Router temperature.
    pub router_temperature: f64,
    /// options.num_ctx.
    pub num_ctx: u64,
    /// options.num_predict for the orchestrator.
    pub num_predict: i64,
    /// options.num_predict for the router.
    pub router_num_predict: i64,
    /// keep_alive.
    pub keep_alive: String,
    /// Call caps (one run per cap in a budget sweep).
    pub call_caps: Vec<u32>,
    /// Base seed.
    pub base_seed: u32,
    /// Task filter (empty: all).
    pub tasks: Vec<String>,
    /// Streaming chat calls.
    pub stream: bool,
    /// Request timeout, seconds.
    pub timeout_s: f64,
    /// Connect timeout, seconds.
    pub connect_timeout_s: f64,
    /// Transport retries per call.
    pub retries: u32,
    /// First retry delay, seconds (doubled on each retry).
    pub retry_backoff_s: f64,
    /// `think` sent with every call (`None`: not sent, so the model's own default holds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub think: Option<bool>,
    /// Constrain the first model call of each customer turn to one call of a shown tool
    /// (`--force-first-tool-call`, [`crate::runner::forced_call`]); left out when off, so such a
    /// run's id and manifest read as before.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub force_first_tool_call: bool,
    /// Play in rounds and stop when the confidence sequence decides (`--stop-when-decided`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<StopRule>,
    /// Ollama servers the trials are shared over (empty: `OLLAMA_HOST`, else the default); any
    /// set may resume a run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<String>,
    /// Conversations each server plays at once (`--parallel`; absent: 1); any value may resume a
    /// run.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub parallel: u32,
    /// The dcgm-exporter of each server whose GPU is read remotely, `HOST=URL` with HOST as in
    /// `hosts` (`--gpu-metrics`); any set may resume a run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gpu_metrics: Vec<String>,
    /// Seconds between two scrapes of an exporter (`--scrape-interval`; absent: 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scrape_interval_s: Option<f64>,
    /// The server API the calls go through (`--api`; left out at Ollama's, so such a run's id and
    /// manifest read as before). A resume over the other API is refused.
    #[serde(default, skip_serializing_if = "is_ollama")]
    pub api: ApiKind,
}

fn is_ollama(api: &ApiKind) -> bool {
    *api == ApiKind::Ollama
}

/// `--api`: `ollama` (the native API) or `openai` (OpenAI-compatible chat completions).
pub fn parse_api(s: &str) -> Result<ApiKind, String> {
    ApiKind::named(s).ok_or_else(|| {
        let names: Vec<&str> = ApiKind::ALL.iter().map(|k| k.as_str()).collect();
        format!("expected {}, got '{s}'", names.join(" or "))
    })
}

fn policy_only() -> Levels<PromptVariant> {
    Levels::one(PromptVariant::POLICY)
}

fn is_policy_only(p: &Levels<PromptVariant>) -> bool {
    p.single().is_some_and(|v| v.is_policy())
}

fn one() -> u32 {
    1
}

fn is_one(n: &u32) -> bool {
    *n == 1
}

/// Most conversations one server may be asked to play at once.
pub const MAX_PARALLEL: u32 = 64;

/// When a run in rounds stops: see `sequence`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct StopRule {
    /// Equivalence margin, percentage points of success.
    pub margin_pp: f64,
    /// Error level of the confidence sequence.
    pub alpha: f64,
}

impl Default for StopRule {
    fn default() -> Self {
        StopRule {
            margin_pp: 5.0,
            alpha: 0.05,
        }
    }
}

impl StopRule {
    /// The rule as the sequence takes it.
    pub fn rule(&self) -> crate::sequence::Rule {
        crate::sequence::Rule {
            alpha: self.alpha,
            margin: self.margin_pp / 100.0,
        }
    }
}

impl Default for RunSettings {
    fn default() -> Self {
        RunSettings {
            models: DEFAULT_MODELS.map(String::from).to_vec(),
            suites: vec![SuiteChoice::Store, SuiteChoice::Router],
            trials: 5,
            tool_docs: Levels::one(ToolVariant::BARE),
            router_in_front: Levels::one(false),
            prompt: policy_only(),
            toolless: false,
            temperature: 0.7,
            router_temperature: 0.0,
            num_ctx: 16_384,
            num_predict: 1024,
            router_num_predict: 24,
            keep_alive: "15m".into(),
            call_caps: vec![10],
            base_seed: 0,
            tasks: Vec::new(),
            stream: false,
            timeout_s: 300.0,
            connect_timeout_s: 5.0,
            retries: 3,
            retry_backoff_s: 0.25,
            think: None,
            force_first_tool_call: false,
            stop: None,
            hosts: Vec::new(),
            parallel: 1,
            gpu_metrics: Vec::new(),
            scrape_interval_s: None,
            api: ApiKind::Ollama,
        }
    }
}

/// Largest num_ctx / num_predict accepted, tokens.
pub const MAX_TOKENS: u64 = 1 << 24;
/// Most transport retries per call.
pub const MAX_RETRIES: u32 = 10;
/// Shortest and longest time between two scrapes of a GPU exporter, seconds.
pub const MIN_SCRAPE_S: f64 = 0.05;
/// See [`MIN_SCRAPE_S`].
pub const MAX_SCRAPE_S: f64 = 60.0;
/// Longest timeout or retry delay accepted, seconds (a day).
pub const MAX_SECONDS: f64 = 86_400.0;

/// A number of seconds as a duration: finite, positive (or zero when `zero_ok`), at most
/// [`MAX_SECONDS`]; the error says which rule broke.
pub fn seconds(v: f64, zero_ok: bool) -> Result<Duration, String> {
    let low_ok = if zero_ok { v >= 0.0 } else { v > 0.0 };
    if !v.is_finite() || !low_ok || v > MAX_SECONDS {
        let low = if zero_ok { ">= 0" } else { "> 0" };
        // A huge number reads in exponent form, not as hundreds of digits.
        let given = if v.abs() >= 1e9 {
            format!("{v:e}")
        } else {
            format!("{v}")
        };
        return Err(format!(
            "must be a number of seconds {low} and at most {MAX_SECONDS}, got {given}"
        ));
    }
    Ok(Duration::from_secs_f64(v))
}

/// Names (models, task ids) must be non-empty, without surrounding spaces, and given once.
fn check_names(names: &[String], what: &str) -> Result<(), String> {
    if names.iter().any(|n| n.trim().is_empty()) {
        return Err(format!(
            "an empty {what} (a stray comma, or an empty value?)"
        ));
    }
    if let Some(n) = names.iter().find(|n| n.trim() != n.as_str()) {
        return Err(format!("{what} {n:?} has spaces around it"));
    }
    if let Some(n) = first_repeat(names) {
        return Err(format!("{what} {n} is given twice"));
    }
    Ok(())
}

/// Two spellings of one model (`llama3.2` and `llama3.2:latest`) are the same model to Ollama.
fn check_model_names(models: &[String]) -> Result<(), String> {
    for (i, m) in models.iter().enumerate() {
        if let Some(earlier) = models[..i]
            .iter()
            .find(|e| crate::wire::name::same_model(e, m))
        {
            return Err(format!(
                "model {m} is given twice ({earlier} and {m} are one model to Ollama)"
            ));
        }
    }
    Ok(())
}

/// A setting that cannot be used: its flag name and why.
type Problem = (&'static str, String);

/// The first value that appears twice.
fn first_repeat<T: PartialEq>(items: &[T]) -> Option<&T> {
    items
        .iter()
        .enumerate()
        .find(|(i, x)| items[..*i].contains(x))
        .map(|(_, x)| x)
}

/// The TOML experiment file: any subset of the run flags, by their long names.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct ExperimentFile {
    /// See `--models`.
    pub models: Option<Vec<String>>,
    /// See `--suite`.
    pub suite: Option<Vec<SuiteChoice>>,
    /// See `--trials`.
    pub trials: Option<u32>,
    /// See `--tool-docs` (one variant, or a list).
    pub tool_docs: Option<Levels<ToolVariant>>,
    /// See `--router-in-front` (true, false, or a list).
    pub router_in_front: Option<Levels<bool>>,
    /// See `--prompt` (one variant, or a list).
    pub prompt: Option<Levels<PromptVariant>>,
    /// See `--baseline` (`none` or `toolless`).
    pub baseline: Option<String>,
    /// See `--temperature`.
    pub temperature: Option<f64>,
    /// See `--router-temperature`.
    pub router_temperature: Option<f64>,
    /// See `--num-ctx`.
    pub num_ctx: Option<u64>,
    /// See `--num-predict`.
    pub num_predict: Option<i64>,
    /// See `--router-num-predict`.
    pub router_num_predict: Option<i64>,
    /// See `--keep-alive`.
    pub keep_alive: Option<String>,
    /// See `--call-cap`.
    pub call_cap: Option<Vec<u32>>,
    /// See `--base-seed`.
    pub base_seed: Option<u32>,
    /// See `--tasks`.
    pub tasks: Option<Vec<String>>,
    /// See `--stream`.
    pub stream: Option<bool>,
    /// See `--timeout`.
    pub timeout: Option<f64>,
    /// See `--connect-timeout`.
    pub connect_timeout: Option<f64>,
    /// First retry delay, seconds (doubled on each retry).
    pub retry_backoff: Option<f64>,
    /// See `--retries`.
    pub retries: Option<u32>,
    /// See `--think` (`on` or `off`).
    pub think: Option<ThinkChoice>,
    /// See `--force-first-tool-call`.
    pub force_first_tool_call: Option<bool>,
    /// See `--host` (several servers; `host` is the same key).
    #[serde(alias = "host")]
    pub hosts: Option<Vec<String>>,
    /// See `--parallel`.
    pub parallel: Option<u32>,
    /// See `--gpu-metrics` (a list of `HOST=URL`).
    pub gpu_metrics: Option<Vec<String>>,
    /// See `--scrape-interval`.
    pub scrape_interval: Option<f64>,
    /// See `--api` (`ollama` or `openai`).
    pub api: Option<ApiKind>,
    /// See `--stop-when-decided`.
    pub stop_when_decided: Option<bool>,
    /// See `--margin` (needs `stop-when-decided = true`).
    pub margin: Option<f64>,
    /// See `--alpha` (needs `stop-when-decided = true`).
    pub alpha: Option<f64>,
}

/// The `passk run` flags that are not experiment-file keys: they say where this invocation reads
/// and writes and how it shows progress, not what the experiment is.
pub const FLAGS_NOT_KEYS: [&str; 9] = [
    "config",
    "out",
    "run-id",
    "no-progress",
    "report",
    "retry-failed",
    "extend",
    "allow-unknown-digest",
    "root",
];

/// `--think`: ask a thinking model to think, or not (absent: send nothing).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum ThinkChoice {
    /// `think: true`.
    On,
    /// `think: false`.
    Off,
}

impl ThinkChoice {
    /// The value sent as `think`.
    pub fn as_bool(self) -> bool {
        self == ThinkChoice::On
    }
}

/// A setting that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    /// The experiment file is not valid TOML for these keys.
    #[error("{path}: {message}")]
    File {
        /// File concerned.
        path: String,
        /// Parser message (with line and column).
        message: String,
    },
    /// A value is out of range.
    #[error("{0}")]
    Invalid(String),
    /// A value the chosen suites refuse, named by its flag (`tool-docs`); the command that knows
    /// whether a flag or the experiment file gave it names that instead ([`SettingsError::named`]).
    #[error("--{key} {message}")]
    Key {
        /// The setting's flag name, without dashes.
        key: &'static str,
        /// What is wrong, read after the setting's name.
        message: String,
    },
}

impl SettingsError {
    /// The error with its setting named by `name` (`--tool-docs`, or `exp.toml: key `tool-docs``).
    pub fn named(self, name: &dyn Fn(&str) -> String) -> SettingsError {
        match self {
            SettingsError::Key { key, message } => {
                SettingsError::Invalid(format!("{} {message}", name(key)))
            }
            other => other,
        }
    }
}

impl ExperimentFile {
    /// Parses an experiment file's text; errors name the file, line and key.
    pub fn parse(path: &str, text: &str) -> Result<ExperimentFile, SettingsError> {
        let file = |message: String| SettingsError::File {
            path: path.to_string(),
            message,
        };
        let table: toml::Table = toml::from_str(text).map_err(|e| file(e.to_string()))?;
        if let Some(key) = FLAGS_NOT_KEYS.iter().find(|k| table.contains_key(**k)) {
            return Err(file(format!(
                "key `{key}`: --{key} says how this invocation runs, not what the experiment is; \
                 give it as a flag"
            )));
        }
        toml::from_str(text).map_err(|e| file(e.to_string()))
    }

    /// Parses and checks an experiment file: every error names the file and the key.
    pub fn load(path: &str, text: &str) -> Result<ExperimentFile, SettingsError> {
        let file = ExperimentFile::parse(path, text)?;
        if file.hosts.as_ref().is_some_and(Vec::is_empty) {
            return Err(SettingsError::Invalid(format!(
                "{path}: key `hosts`: at least one server is needed (leave the key out to use \
                 OLLAMA_HOST, else 127.0.0.1:11434)"
            )));
        }
        let mut s = RunSettings::default();
        file.apply(&mut s)
            .map_err(|e| SettingsError::Invalid(format!("{path}: {e}")))?;
        s.validate(&|key| format!("{path}: key `{key}`"))?;
        Ok(file)
    }

    /// Lays the file's values over `settings`.
    pub fn apply(&self, s: &mut RunSettings) -> Result<(), SettingsError> {
        macro_rules! set {
            ($field:ident => $target:ident) => {
                if let Some(v) = &self.$field {
                    s.$target = v.clone();
                }
            };
        }
        set!(models => models);
        set!(suite => suites);
        set!(trials => trials);
        set!(tool_docs => tool_docs);
        set!(router_in_front => router_in_front);
        set!(prompt => prompt);
        set!(temperature => temperature);
        set!(router_temperature => router_temperature);
        set!(num_ctx => num_ctx);
        set!(num_predict => num_predict);
        set!(router_num_predict => router_num_predict);
        set!(keep_alive => keep_alive);
        set!(call_cap => call_caps);
        set!(base_seed => base_seed);
        set!(tasks => tasks);
        set!(stream => stream);
        set!(force_first_tool_call => force_first_tool_call);
        set!(timeout => timeout_s);
        set!(connect_timeout => connect_timeout_s);
        set!(retry_backoff => retry_backoff_s);
        set!(retries => retries);
        set!(hosts => hosts);
        set!(parallel => parallel);
        set!(gpu_metrics => gpu_metrics);
        set!(api => api);
        if let Some(v) = self.scrape_interval {
            s.scrape_interval_s = Some(v);
        }
        if let Some(t) = self.think {
            s.think = Some(t.as_bool());
        }
        self.apply_stop_rule(s)?;
        if let Some(b) = &self.baseline {
            s.toolless = match b.as_str() {
                "none" => false,
                "toolless" => true,
                other => {
                    return Err(SettingsError::Invalid(format!(
                        "key `baseline`: expected none or toolless, got '{other}'"
                    )));
                }
            };
        }
        Ok(())
    }

    /// `stop-when-decided`, with its `margin` and `alpha`, which need it as their flags do.
    fn apply_stop_rule(&self, s: &mut RunSettings) -> Result<(), SettingsError> {
        match self.stop_when_decided {
            Some(true) => {
                let mut stop = s.stop.unwrap_or_default();
                stop.margin_pp = self.margin.unwrap_or(stop.margin_pp);
                stop.alpha = self.alpha.unwrap_or(stop.alpha);
                s.stop = Some(stop);
            }
            _ if self.margin.is_some() || self.alpha.is_some() => {
                let key = if self.margin.is_some() {
                    "margin"
                } else {
                    "alpha"
                };
                return Err(SettingsError::Invalid(format!(
                    "key `{key}`: needs `stop-when-decided = true` in the file, as --{key} needs \
                     --stop-when-decided"
                )));
            }
            Some(false) => s.stop = None,
            None => {}
        }
        Ok(())
    }
}

/// Settings a later session of the same run may change: the task filter, the wire's patience, and
/// where and how many at once the trials are played (servers, parallelism). Everything else changes
/// what a trial is, so a resume with another value is refused, and the default run id ignores
/// these so that changing them resumes the same run.
pub const MAY_CHANGE_ON_RESUME: [&str; 9] = [
    "tasks",
    "timeout_s",
    "connect_timeout_s",
    "retries",
    "retry_backoff_s",
    "hosts",
    "parallel",
    "gpu_metrics",
    "scrape_interval_s",
];

/// The settings that define what a trial is (all but [`MAY_CHANGE_ON_RESUME`]), as JSON.
pub fn trial_settings(settings: &serde_json::Value) -> serde_json::Map<String, serde_json::Value> {
    let mut map = settings.as_object().cloned().unwrap_or_default();
    map.retain(|k, _| !MAY_CHANGE_ON_RESUME.contains(&k.as_str()));
    map
}

impl RunSettings {
    /// Whether any cell of the run puts the router in front of the agent.
    pub fn any_router_in_front(&self) -> bool {
        self.router_in_front.0.contains(&true)
    }

    /// The modes each conversation trial is played in: the agent, and the baseline when asked.
    pub fn modes(&self) -> Vec<crate::runner::record::Mode> {
        use crate::runner::record::Mode;
        if self.toolless {
            vec![Mode::Agent, Mode::Toolless]
        } else {
            vec![Mode::Agent]
        }
    }

    /// Checks every value is one the runner can use (finite, in range, no empty or repeated names).
    /// `name` turns a setting's flag name (`timeout`, `num-ctx`) into how the user gave it:
    /// `--timeout`, or `exp.toml: key `timeout``.
    pub fn validate(&self, name: &dyn Fn(&str) -> String) -> Result<(), SettingsError> {
        self.check_names_and_lists()
            .and_then(|()| self.check_design())
            .and_then(|()| self.check_numbers())
            .and_then(|()| self.check_stop_rule())
            .map_err(|(key, m)| SettingsError::Invalid(format!("{}: {m}", name(key))))
    }

    /// Models, tasks, servers and suites: each given, once, and parallelism in range.
    fn check_names_and_lists(&self) -> Result<(), Problem> {
        let bad = |key: &'static str, m: String| Err((key, m));
        if self.models.is_empty() {
            return bad("models", "at least one model is needed".into());
        }
        check_names(&self.models, "model").or_else(|m| bad("models", m))?;
        check_model_names(&self.models).or_else(|m| bad("models", m))?;
        check_names(&self.tasks, "task id").or_else(|m| bad("tasks", m))?;
        check_names(&self.hosts, "host").or_else(|m| bad("host", m))?;
        if self.parallel == 0 || self.parallel > MAX_PARALLEL {
            return bad(
                "parallel",
                format!(
                    "must be between 1 and {MAX_PARALLEL} conversations per server, got {}",
                    self.parallel
                ),
            );
        }
        if self.suites.is_empty() {
            return bad("suite", "at least one suite is needed".into());
        }
        if let Some(s) = first_repeat(&self.suites) {
            return bad("suite", format!("{s:?} is given twice").to_lowercase());
        }
        if let Some(Err(m)) = self
            .suites
            .iter()
            .map(|s| SuiteChoice::parse(s.name()))
            .find(Result::is_err)
        {
            return bad("suite", m);
        }
        Ok(())
    }

    /// Trials, call caps and factor levels: in range, each level once.
    fn check_design(&self) -> Result<(), Problem> {
        let bad = |key: &'static str, m: String| Err((key, m));
        if self.trials == 0 || self.trials > 99 {
            return bad(
                "trials",
                format!("must be between 1 and 99, got {}", self.trials),
            );
        }
        if self.call_caps.is_empty() || self.call_caps.iter().any(|&c| c == 0 || c > 99) {
            return bad("call-cap", "each call cap must be between 1 and 99".into());
        }
        if let Some(c) = first_repeat(&self.call_caps) {
            return bad("call-cap", format!("{c} is given twice"));
        }
        if self.tool_docs.0.is_empty() {
            return bad("tool-docs", "at least one variant is needed".into());
        }
        if let Some(v) = first_repeat(&self.tool_docs.0) {
            return bad("tool-docs", format!("{} is given twice", v.as_str()));
        }
        if self.prompt.0.is_empty() {
            return bad("prompt", "at least one variant is needed".into());
        }
        if let Some(v) = first_repeat(&self.prompt.0) {
            return bad("prompt", format!("{} is given twice", v.as_str()));
        }
        if self.router_in_front.0.is_empty() {
            return bad(
                "router-in-front",
                "at least one of off, on is needed".into(),
            );
        }
        if let Some(&on) = first_repeat(&self.router_in_front.0) {
            let v = if on { "on" } else { "off" };
            return bad("router-in-front", format!("{v} is given twice"));
        }
        if self.base_seed > 9_000_000 {
            return bad("base-seed", "must be at most 9000000".into());
        }
        Ok(())
    }

    /// Temperatures, token counts, retries, times and keep-alive: finite and in range, as Ollama accepts them.
    fn check_numbers(&self) -> Result<(), Problem> {
        let bad = |key: &'static str, m: String| Err((key, m));
        for (key, t) in [
            ("temperature", self.temperature),
            ("router-temperature", self.router_temperature),
        ] {
            if !t.is_finite() || t < 0.0 {
                return bad(key, format!("must be a finite number >= 0, got {t}"));
            }
        }
        if self.num_ctx == 0 || self.num_ctx > MAX_TOKENS {
            return bad(
                "num-ctx",
                format!("must be between 1 and {MAX_TOKENS}, got {}", self.num_ctx),
            );
        }
        for (key, n) in [
            ("num-predict", self.num_predict),
            ("router-num-predict", self.router_num_predict),
        ] {
            if !(-2..=MAX_TOKENS as i64).contains(&n) {
                return bad(
                    key,
                    format!(
                        "must be between -2 and {MAX_TOKENS} (-1: no cap, -2: fill the context), got {n}"
                    ),
                );
            }
        }
        if self.retries > MAX_RETRIES {
            return bad(
                "retries",
                format!("must be at most {MAX_RETRIES}, got {}", self.retries),
            );
        }
        for (key, v, zero_ok) in [
            ("timeout", self.timeout_s, false),
            ("connect-timeout", self.connect_timeout_s, false),
            ("retry-backoff", self.retry_backoff_s, true),
        ] {
            if let Err(m) = seconds(v, zero_ok) {
                return bad(key, m);
            }
        }
        if let Some(every) = self.scrape_interval_s
            && !(every.is_finite() && (MIN_SCRAPE_S..=MAX_SCRAPE_S).contains(&every))
        {
            return bad(
                "scrape-interval",
                format!("must be between {MIN_SCRAPE_S} and {MAX_SCRAPE_S} seconds, got {every}"),
            );
        }
        if let Err(why) = crate::wire::duration::parse_go_duration(&self.keep_alive) {
            return bad(
                "keep-alive",
                format!(
                    "{:?} is not what Ollama accepts ({why}): use {}",
                    self.keep_alive,
                    crate::wire::duration::ACCEPTED
                ),
            );
        }
        Ok(())
    }

    /// The stopping rule: its margin and level, and two models on a conversation suite to compare.
    fn check_stop_rule(&self) -> Result<(), Problem> {
        let bad = |key: &'static str, m: String| Err((key, m));
        if let Some(stop) = &self.stop {
            if !(stop.margin_pp > 0.0 && stop.margin_pp < 100.0) {
                let m = stop.margin_pp;
                return bad(
                    "margin",
                    format!("must be above 0 and below 100 percentage points, got {m}"),
                );
            }
            if !(stop.alpha > 0.0 && stop.alpha <= 0.5) {
                let a = stop.alpha;
                return bad("alpha", format!("must be above 0 and at most 0.5, got {a}"));
            }
            if self.models.len() < 2 {
                return bad(
                    "stop-when-decided",
                    "needs two models to compare (the first two of --models)".into(),
                );
            }
            if !self.suites.iter().any(|s| *s != SuiteChoice::Router) {
                return bad(
                    "stop-when-decided",
                    format!(
                        "needs a conversation suite ({})",
                        SuiteChoice::conversation_names()
                    ),
                );
            }
        }
        Ok(())
    }

    /// The wire's patience as durations: connect timeout, request timeout and first retry delay.
    /// Settings that passed [`RunSettings::validate`] always convert; others are refused, never a
    /// panic.
    pub fn wire_durations(&self) -> Result<(Duration, Duration, Duration), SettingsError> {
        let get = |key: &str, v: f64, zero_ok: bool| {
            seconds(v, zero_ok).map_err(|m| SettingsError::Invalid(format!("--{key}: {m}")))
        };
        Ok((
            get("connect-timeout", self.connect_timeout_s, false)?,
            get("timeout", self.timeout_s, false)?,
            get("retry-backoff", self.retry_backoff_s, true)?,
        ))
    }

    /// The default run id: readable parts plus a digest of the settings that define a trial, so
    /// that the same settings give the same directory (and a rerun resumes it, with another task
    /// filter or timeout if need be).
    pub fn default_run_id(&self) -> String {
        let all = serde_json::to_value(self).unwrap_or_default();
        let json = serde_json::to_vec(&trial_settings(&all)).unwrap_or_default();
        let digest = Sha256::digest(&json);
        let short: String = digest.iter().take(4).map(|b| format!("{b:02x}")).collect();
        let suites: Vec<&str> = self.suites.iter().map(|s| s.name()).collect();
        let docs: Vec<&str> = self.tool_docs.0.iter().map(|v| v.as_str()).collect();
        let mut docs = docs.join("+");
        if !is_policy_only(&self.prompt) {
            let prompts: Vec<&str> = self.prompt.0.iter().map(|v| v.as_str()).collect();
            docs = format!("{docs}-{}", prompts.join("+"));
        }
        let mode = if self.toolless {
            format!("{docs}+toolless")
        } else {
            docs
        };
        let subset = if self.tasks.is_empty() {
            String::new()
        } else {
            // A task subset is a run of its own: its table would otherwise show another subset's
            // tasks too.
            let mut tasks = self.tasks.clone();
            tasks.sort();
            tasks.dedup();
            let digest = Sha256::digest(tasks.join("\n").as_bytes());
            let short: String = digest.iter().take(3).map(|b| format!("{b:02x}")).collect();
            format!("-tasks{}-{short}", tasks.len())
        };
        format!(
            "{}-{}-k{}-{}{subset}",
            suites.join("+"),
            mode,
            self.trials,
            short
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_overrides_defaults_and_names_bad_keys() {
        let f = ExperimentFile::parse(
            "exp.toml",
            "trials = 3\ntool-docs = \"documented\"\ncall-cap = [4, 8]\n",
        )
        .expect("parse");
        let mut s = RunSettings::default();
        f.apply(&mut s).expect("apply");
        assert_eq!(
            (s.trials, s.tool_docs, s.call_caps.clone()),
            (3, Levels::one(ToolVariant::DOCUMENTED), vec![4, 8])
        );
        let err = ExperimentFile::parse("exp.toml", "trails = 3\n").expect_err("typo");
        assert!(
            err.to_string().contains("exp.toml") && err.to_string().contains("trails"),
            "{err}"
        );
    }

    #[test]
    fn factors_take_several_levels_and_one_level_reads_as_before() {
        let f = ExperimentFile::load(
            "exp.toml",
            "tool-docs = [\"bare\", \"documented\"]\nrouter-in-front = [false, true]\n",
        )
        .expect("load");
        let mut s = RunSettings::default();
        f.apply(&mut s).expect("apply");
        assert_eq!(
            s.tool_docs.0,
            vec![ToolVariant::BARE, ToolVariant::DOCUMENTED]
        );
        assert_eq!(s.router_in_front.0, vec![false, true]);
        assert!(s.default_run_id().contains("-bare+documented-"));
        // A single level is written as the bare value, as manifests always had it, so older
        // runs keep their default run id.
        let json = serde_json::to_value(RunSettings::default()).expect("json");
        assert_eq!(
            (&json["tool_docs"], &json["router_in_front"]),
            (&serde_json::json!("bare"), &serde_json::json!(false))
        );
        let err = ExperimentFile::load("exp.toml", "router-in-front = [true, true]\n")
            .expect_err("repeat");
        assert!(err.to_string().contains("on is given twice"), "{err}");
    }

    #[test]
    fn wire_patience_comes_from_the_file_too() {
        let text = "timeout = 30.0\nconnect-timeout = 2.0\nretries = 1\nretry-backoff = 0.5\n";
        let f = ExperimentFile::parse("exp.toml", text).expect("parse");
        let mut s = RunSettings::default();
        f.apply(&mut s).expect("apply");
        assert_eq!(
            (
                s.timeout_s,
                s.connect_timeout_s,
                s.retries,
                s.retry_backoff_s
            ),
            (30.0, 2.0, 1, 0.5)
        );
    }

    #[test]
    fn servers_and_parallelism_do_not_change_the_run_id() {
        let a = RunSettings::default();
        let f = ExperimentFile::load("exp.toml", "hosts = [\"a:1\", \"b:2\"]\nparallel = 4\n")
            .expect("load");
        let mut b = RunSettings::default();
        f.apply(&mut b).expect("apply");
        assert_eq!((b.hosts.len(), b.parallel), (2, 4));
        assert_eq!(a.default_run_id(), b.default_run_id());
        let err = ExperimentFile::load("exp.toml", "parallel = 0\n").expect_err("zero");
        assert!(
            err.to_string().starts_with("exp.toml: key `parallel`"),
            "{err}"
        );
        let err = ExperimentFile::load("exp.toml", "hosts = [\"a\", \"a\"]\n").expect_err("twice");
        assert!(err.to_string().contains("host a is given twice"), "{err}");
        // A manifest written before these settings existed reads with the defaults.
        let mut old = serde_json::to_value(RunSettings::default()).expect("json");
        old.as_object_mut().expect("object").remove("parallel");
        let back: RunSettings = serde_json::from_value(old).expect("old settings");
        assert_eq!(back.parallel, 1);
    }

    #[test]
    fn the_policy_alone_leaves_settings_and_run_id_as_before_and_a_prompt_changes_them() {
        let a = RunSettings::default();
        let json = serde_json::to_value(&a).expect("json");
        assert!(json.get("prompt").is_none(), "{json}");
        let back: RunSettings = serde_json::from_value(json).expect("back");
        assert_eq!(back.prompt, Levels::one(PromptVariant::POLICY));
        let f =
            ExperimentFile::load("exp.toml", "prompt = [\"policy\", \"strict\"]\n").expect("load");
        let mut b = RunSettings::default();
        f.apply(&mut b).expect("apply");
        assert_eq!(b.prompt.0.len(), 2);
        assert_ne!(a.default_run_id(), b.default_run_id());
        assert!(
            b.default_run_id().contains("-policy+strict-"),
            "{}",
            b.default_run_id()
        );
        let err = ExperimentFile::load("exp.toml", "prompt = [\"strict\", \"strict\"]\n")
            .expect_err("twice");
        assert!(
            err.to_string()
                .contains("key `prompt`: strict is given twice"),
            "{err}"
        );
    }

    #[test]
    fn run_id_is_stable_and_setting_sensitive() {
        let a = RunSettings::default();
        let mut b = RunSettings::default();
        assert_eq!(a.default_run_id(), b.default_run_id());
        b.temperature = 0.0;
        assert_ne!(a.default_run_id(), b.default_run_id());
        assert!(a.default_run_id().starts_with("store+router-bare-k5-"));
    }

    #[test]
    fn each_task_subset_gets_a_run_id_of_its_own_whatever_the_order() {
        let subset = |tasks: &[&str]| RunSettings {
            tasks: tasks.iter().map(|t| t.to_string()).collect(),
            ..RunSettings::default()
        };
        let all = RunSettings::default().default_run_id();
        let ab = subset(&["S001", "S002"]).default_run_id();
        assert!(ab.starts_with(&format!("{all}-tasks2-")), "{ab}");
        assert_eq!(ab, subset(&["S002", "S001"]).default_run_id());
        assert_ne!(ab, subset(&["S001", "S003"]).default_run_id());
    }

    #[test]
    fn validate_rejects_a_keep_alive_ollama_refuses() {
        for bad in ["600", "-1", "forever", ""] {
            let s = RunSettings {
                keep_alive: bad.into(),
                ..RunSettings::default()
            };
            let err = s
                .validate(&|k| format!("--{k}"))
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert!(err.contains("Go duration"), "{bad}: {err}");
        }
        for good in ["15m", "-1m", "0", "1h30m"] {
            let s = RunSettings {
                keep_alive: good.into(),
                ..RunSettings::default()
            };
            assert!(s.validate(&|k| format!("--{k}")).is_ok(), "{good}");
        }
    }

    #[test]
    fn validate_rejects_zero_trials() {
        let s = RunSettings {
            trials: 0,
            ..RunSettings::default()
        };
        let err = s.validate(&|k| format!("--{k}")).expect_err("zero trials");
        assert!(err.to_string().starts_with("--trials:"), "{err}");
    }

    fn flag(k: &str) -> String {
        format!("--{k}")
    }

    #[test]
    fn numbers_that_would_panic_are_refused_naming_the_flag() {
        for v in [f64::INFINITY, 1e300, -1.0, f64::NAN, 0.0] {
            for (key, set) in [
                (
                    "timeout",
                    (|s: &mut RunSettings, v| s.timeout_s = v) as fn(&mut RunSettings, f64),
                ),
                ("connect-timeout", |s, v| s.connect_timeout_s = v),
            ] {
                let mut s = RunSettings::default();
                set(&mut s, v);
                let err = s.validate(&flag).expect_err("refused").to_string();
                assert!(err.starts_with(&format!("--{key}:")), "{err}");
                assert!(err.len() < 120, "the number reads short: {err}");
                assert!(s.wire_durations().is_err(), "{key} = {v}");
            }
        }
        let bad = [
            ("temperature", "temperature = nan"),
            ("temperature", "temperature = -0.5"),
            ("router-temperature", "router-temperature = inf"),
            ("num-ctx", "num-ctx = 0"),
            ("retries", "retries = 1000"),
            ("retry-backoff", "retry-backoff = -1.0"),
            ("timeout", "timeout = inf"),
            ("connect-timeout", "connect-timeout = nan"),
            ("models", "models = [\"a\", \"a\"]"),
            ("models", "models = [\"\"]"),
            ("models", "models = []"),
            ("models", "models = [\"oracle\", \"oracle:latest\"]"),
            ("scrape-interval", "scrape-interval = 0.0"),
            ("scrape-interval", "scrape-interval = nan"),
            ("trials", "trials = 0"),
        ];
        for (key, text) in bad {
            let err = ExperimentFile::load("exp.toml", text).expect_err(text);
            assert!(
                err.to_string()
                    .starts_with(&format!("exp.toml: key `{key}`:")),
                "{text}: {err}"
            );
        }
        let err = ExperimentFile::load("exp.toml", "baseline = \"x\"").expect_err("baseline");
        assert!(
            err.to_string().starts_with("exp.toml: key `baseline`"),
            "{err}"
        );
    }

    #[test]
    fn model_lists_must_name_each_model_once() {
        for (models, what) in [
            (vec![""], "empty model"),
            (vec!["", ""], "empty model"),
            (vec!["a", "a"], "model a is given twice"),
            (vec![" a"], "spaces"),
            (vec![], "at least one model"),
            (
                vec!["llama3.2", "llama3.2:latest"],
                "llama3.2 and llama3.2:latest are one model",
            ),
            (
                vec!["qwen3:8b", "registry.ollama.ai/library/qwen3:8b"],
                "are one model",
            ),
        ] {
            let s = RunSettings {
                models: models.iter().map(|m| m.to_string()).collect(),
                ..RunSettings::default()
            };
            let err = s.validate(&flag).expect_err("bad models");
            assert!(
                err.to_string().contains(what) && err.to_string().starts_with("--models"),
                "{err}"
            );
        }
    }
}
