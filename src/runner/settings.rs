//! Validated run settings: command-line flags merged over an optional TOML experiment file, merged
//! over the defaults of experiment.md. The resolved settings go into the manifest, and the default
//! run id is derived from them, so the same command resumes the same run.

use crate::suite::ToolVariant;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Default models: two sizes of one family.
pub const DEFAULT_MODELS: [&str; 2] = ["qwen2.5-coder:3b", "qwen2.5-coder:7b"];

/// Which suites a run plays.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "snake_case")]
pub enum SuiteChoice {
    /// The store agent's conversations.
    Store,
    /// Standalone router messages.
    Router,
    /// The ticket-triage agent's tickets (seed 000).
    Triage,
}

/// Every setting of a run, resolved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSettings {
    /// Model tags, in order (the first is the "small" one in break-even ratios).
    pub models: Vec<String>,
    /// Suites to play.
    pub suites: Vec<SuiteChoice>,
    /// Trials per task (k).
    pub trials: u32,
    /// Tool documentation variant.
    pub tool_docs: ToolVariant,
    /// Router in front of the agent.
    pub router_in_front: bool,
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
}

impl Default for RunSettings {
    fn default() -> Self {
        RunSettings {
            models: DEFAULT_MODELS.map(String::from).to_vec(),
            suites: vec![SuiteChoice::Store, SuiteChoice::Router],
            trials: 5,
            tool_docs: ToolVariant::Bare,
            router_in_front: false,
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
        }
    }
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
    /// See `--tool-docs`.
    pub tool_docs: Option<ToolVariant>,
    /// See `--router-in-front`.
    pub router_in_front: Option<bool>,
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
}

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
}

impl ExperimentFile {
    /// Parses an experiment file's text; errors name the file, line and key.
    pub fn parse(path: &str, text: &str) -> Result<ExperimentFile, SettingsError> {
        toml::from_str(text).map_err(|e| SettingsError::File {
            path: path.to_string(),
            message: e.to_string(),
        })
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
        set!(timeout => timeout_s);
        set!(connect_timeout => connect_timeout_s);
        set!(retry_backoff => retry_backoff_s);
        set!(retries => retries);
        if let Some(t) = self.think {
            s.think = Some(t.as_bool());
        }
        if let Some(b) = &self.baseline {
            s.toolless = match b.as_str() {
                "none" => false,
                "toolless" => true,
                other => {
                    return Err(SettingsError::Invalid(format!(
                        "baseline: expected none or toolless, got '{other}'"
                    )));
                }
            };
        }
        Ok(())
    }
}

/// Settings a later session of the same run may change: the task filter and the wire's patience.
/// Everything else changes what a trial is, so a resume with another value is refused, and the
/// default run id ignores these so that changing them resumes the same run.
pub const MAY_CHANGE_ON_RESUME: [&str; 5] = [
    "tasks",
    "timeout_s",
    "connect_timeout_s",
    "retries",
    "retry_backoff_s",
];

/// The settings that define what a trial is (all but [`MAY_CHANGE_ON_RESUME`]), as JSON.
pub fn trial_settings(settings: &serde_json::Value) -> serde_json::Map<String, serde_json::Value> {
    let mut map = settings.as_object().cloned().unwrap_or_default();
    map.retain(|k, _| !MAY_CHANGE_ON_RESUME.contains(&k.as_str()));
    map
}

impl RunSettings {
    /// The modes each conversation trial is played in: the agent, and the baseline when asked.
    pub fn modes(&self) -> Vec<crate::runner::record::Mode> {
        use crate::runner::record::Mode;
        if self.toolless {
            vec![Mode::Agent, Mode::Toolless]
        } else {
            vec![Mode::Agent]
        }
    }

    /// Checks ranges the rest of the runner relies on.
    pub fn validate(&self) -> Result<(), SettingsError> {
        let bad = |m: &str| Err(SettingsError::Invalid(m.to_string()));
        if self.models.is_empty() {
            return bad("at least one model is needed");
        }
        if self.trials == 0 || self.trials > 99 {
            return bad("trials must be between 1 and 99");
        }
        if self.call_caps.is_empty() || self.call_caps.iter().any(|&c| c == 0 || c > 99) {
            return bad("each call cap must be between 1 and 99");
        }
        if self.suites.is_empty() {
            return bad("at least one suite is needed");
        }
        if self.base_seed > 9_000_000 {
            return bad("base seed must be at most 9000000");
        }
        if self.timeout_s.is_nan() || self.timeout_s <= 0.0 {
            return bad("timeout must be positive");
        }
        if let Err(why) = crate::wire::duration::parse_go_duration(&self.keep_alive) {
            return Err(SettingsError::Invalid(format!(
                "keep-alive {:?} is not what Ollama accepts ({why}): use {}",
                self.keep_alive,
                crate::wire::duration::ACCEPTED
            )));
        }
        Ok(())
    }

    /// The default run id: readable parts plus a digest of the settings that define a trial, so
    /// that the same settings give the same directory (and a rerun resumes it, with another task
    /// filter or timeout if need be).
    pub fn default_run_id(&self) -> String {
        let all = serde_json::to_value(self).unwrap_or_default();
        let json = serde_json::to_vec(&trial_settings(&all)).unwrap_or_default();
        let digest = Sha256::digest(&json);
        let short: String = digest.iter().take(4).map(|b| format!("{b:02x}")).collect();
        let suites: Vec<&str> = self
            .suites
            .iter()
            .map(|s| match s {
                SuiteChoice::Store => "store",
                SuiteChoice::Router => "router",
                SuiteChoice::Triage => "triage",
            })
            .collect();
        let mode = if self.toolless {
            format!("{}+toolless", self.tool_docs.as_str())
        } else {
            self.tool_docs.as_str().to_string()
        };
        format!("{}-{}-k{}-{}", suites.join("+"), mode, self.trials, short)
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
            (3, ToolVariant::Documented, vec![4, 8])
        );
        let err = ExperimentFile::parse("exp.toml", "trails = 3\n").expect_err("typo");
        assert!(
            err.to_string().contains("exp.toml") && err.to_string().contains("trails"),
            "{err}"
        );
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
    fn run_id_is_stable_and_setting_sensitive() {
        let a = RunSettings::default();
        let mut b = RunSettings::default();
        assert_eq!(a.default_run_id(), b.default_run_id());
        b.temperature = 0.0;
        assert_ne!(a.default_run_id(), b.default_run_id());
        assert!(a.default_run_id().starts_with("store+router-bare-k5-"));
    }

    #[test]
    fn validate_rejects_a_keep_alive_ollama_refuses() {
        for bad in ["600", "-1", "forever", ""] {
            let s = RunSettings {
                keep_alive: bad.into(),
                ..RunSettings::default()
            };
            let err = s
                .validate()
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
            assert!(s.validate().is_ok(), "{good}");
        }
    }

    #[test]
    fn validate_rejects_zero_trials() {
        let s = RunSettings {
            trials: 0,
            ..RunSettings::default()
        };
        assert!(s.validate().is_err());
    }
}
