//! The stub's TOML configuration file (`passk serve-stub --config FILE`): global speed and seed, a
//! default behaviour and one table per model name. Documented with examples in docs/stub.md.

use super::faults::{FaultKind, FaultRates};
use super::messy::MessyShape;
use super::mistakes::MistakePlan;
use super::script::{Behaviour, ScriptBook, TextStyle};
use super::{ModelSpec, PromptCount, StubConfig, StubError, default_capabilities};
use passk::domain::Task;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

/// The whole file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StubFile {
    /// Seed of faults and call ids.
    #[serde(default)]
    pub seed: u64,
    /// Simulated prefill speed, tokens per second.
    pub prefill_tok_per_s: Option<f64>,
    /// Simulated decode speed, tokens per second.
    pub decode_tok_per_s: Option<f64>,
    /// Simulated load time of a call to a loaded model, milliseconds.
    pub load_ms: Option<f64>,
    /// Simulated load time of a call to a model not loaded, milliseconds.
    pub cold_load_ms: Option<f64>,
    /// What `prompt_eval_count` counts: `all` (current Ollama) or `new_only` (Ollama 0.30.0).
    #[serde(default)]
    pub prompt_eval: PromptCount,
    /// How long a hang lasts, milliseconds.
    pub hang_ms: Option<u64>,
    /// Requests each model serves at once (`OLLAMA_NUM_PARALLEL`; default 1).
    pub num_parallel: Option<usize>,
    /// Requests that may wait for a model still loading (`OLLAMA_MAX_QUEUE`; default 512).
    pub max_queue: Option<usize>,
    /// Models loaded at once (`OLLAMA_MAX_LOADED_MODELS`; default 0: no limit).
    pub max_loaded_models: Option<usize>,
    /// Behaviour of models not listed (absent, and no `serve_unknown = true`: Ollama's 404).
    pub default: Option<ModelEntry>,
    /// Whether names not listed are served (absent: only when `default` is given; `true` without
    /// `default`: as oracles).
    pub serve_unknown: Option<bool>,
    /// Behaviour per model name.
    #[serde(default)]
    pub models: BTreeMap<String, ModelEntry>,
}

/// Names of the behaviours in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BehaviourName {
    /// Gold trajectories.
    #[default]
    Oracle,
    /// Gold with a seeded mistake plan (`mistake_rate`, `trials`, `mistake_seed`).
    Flawed,
    /// Calls written into the text (`text_style`).
    TextCalls,
    /// A schema pasted as an argument once.
    SchemaPaste,
    /// A documented example value once.
    ExampleValue,
    /// An invented tool name once.
    InventedTool,
    /// Never answers.
    NeverAnswer,
    /// The first call written once in a messy shape (`shape`).
    Messy,
    /// Mistakes at a rate that depends on the tool docs (`bare_mistake_rate`,
    /// `documented_mistake_rate`, `mistake_seed`).
    DocsReactive,
}

/// One model's table.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelEntry {
    /// What the model answers.
    #[serde(default)]
    pub behaviour: BehaviourName,
    /// For `text_calls`: how calls are written (default `mixed`).
    pub text_style: Option<TextStyle>,
    /// For `messy`: the shape (required).
    pub shape: Option<MessyShape>,
    /// For `flawed`: share of (task, trial) pairs with a mistake.
    pub mistake_rate: Option<f64>,
    /// For `flawed`: trials per task the plan covers (default 5).
    pub trials: Option<u32>,
    /// For `flawed`: seed of the plan (default: the file's seed); for `docs_reactive`: of its
    /// draws (default: the `docs-reactive` model's).
    pub mistake_seed: Option<u64>,
    /// For `docs_reactive`: share of conversations with a mistake under `bare` tool docs.
    pub bare_mistake_rate: Option<f64>,
    /// For `docs_reactive`: the same under `documented` tool docs.
    pub documented_mistake_rate: Option<f64>,
    /// Random fault rates per chat request.
    #[serde(default)]
    pub faults: FaultRates,
    /// Faults for the first requests, in order.
    #[serde(default)]
    pub fault_script: Vec<FaultKind>,
    /// Capabilities (default `["completion", "tools"]`; add `thinking` for a thinking model).
    pub capabilities: Option<Vec<String>>,
    /// The template's tool-call tag: `tool_call` (Qwen 2.5's `<tool_call>`), `brace` or `text`
    /// (default: `text` for `text_calls` and `messy`, else `tool_call`).
    pub tool_tag: Option<super::ToolTag>,
    /// Another model name whose weights this one shares (one digest, one runner).
    pub weights_of: Option<String>,
}

/// The `docs_reactive` rates of an entry, each between 0 and 1 (defaults: the `docs-reactive`
/// model's).
fn docs_rates(e: &ModelEntry) -> Result<super::docs_reactive::DocsRates, StubError> {
    let d = super::docs_reactive::DocsRates::DEFAULT;
    let rates = super::docs_reactive::DocsRates {
        bare: e.bare_mistake_rate.unwrap_or(d.bare),
        documented: e.documented_mistake_rate.unwrap_or(d.documented),
        seed: e.mistake_seed.unwrap_or(d.seed),
    };
    for (key, r) in [
        ("bare_mistake_rate", rates.bare),
        ("documented_mistake_rate", rates.documented),
    ] {
        if !(0.0..=1.0).contains(&r) {
            return Err(StubError::Config(format!(
                "{key} {r} is not between 0 and 1"
            )));
        }
    }
    Ok(rates)
}

impl StubFile {
    /// Parses the file's text.
    pub fn parse(text: &str) -> Result<StubFile, StubError> {
        toml::from_str(text).map_err(|e| StubError::Config(e.to_string()))
    }

    /// The server configuration: `tasks` feed the `flawed` plans, `script` the oracle.
    pub fn into_config(self, tasks: &[Task], script: ScriptBook) -> Result<StubConfig, StubError> {
        let base = StubConfig::with_script(script);
        let seed = self.seed;
        let spec = |e: &ModelEntry| -> Result<ModelSpec, StubError> {
            let behaviour = match e.behaviour {
                BehaviourName::Oracle => Behaviour::Oracle,
                BehaviourName::Flawed => {
                    let rate = e.mistake_rate.unwrap_or(0.25);
                    if !(0.0..=1.0).contains(&rate) {
                        return Err(StubError::Config(format!(
                            "mistake_rate {rate} is not between 0 and 1"
                        )));
                    }
                    Behaviour::Flawed(Arc::new(MistakePlan::new(
                        tasks,
                        e.trials.unwrap_or(5),
                        e.mistake_seed.unwrap_or(seed),
                        rate,
                    )))
                }
                BehaviourName::TextCalls => {
                    Behaviour::TextCalls(e.text_style.unwrap_or(TextStyle::Mixed))
                }
                BehaviourName::SchemaPaste => Behaviour::SchemaPaste,
                BehaviourName::ExampleValue => Behaviour::ExampleValue,
                BehaviourName::InventedTool => Behaviour::InventedTool,
                BehaviourName::NeverAnswer => Behaviour::NeverAnswer,
                BehaviourName::Messy => Behaviour::Messy(e.shape.ok_or_else(|| {
                    StubError::Config("behaviour \"messy\" needs a `shape`".to_string())
                })?),
                BehaviourName::DocsReactive => Behaviour::DocsReactive(docs_rates(e)?),
            };
            let total = e.faults.total();
            if !(0.0..=1.0).contains(&total) {
                return Err(StubError::Config(format!(
                    "fault rates add up to {total}, more than 1"
                )));
            }
            Ok(ModelSpec {
                faults: e.faults,
                fault_script: e.fault_script.clone(),
                capabilities: e
                    .capabilities
                    .clone()
                    .unwrap_or_else(|| default_capabilities(&behaviour)),
                tool_tag: e
                    .tool_tag
                    .unwrap_or_else(|| super::default_tool_tag(&behaviour)),
                weights_of: e.weights_of.clone(),
                behaviour,
                upstream: None,
            })
        };
        let mut models = BTreeMap::new();
        for (name, e) in &self.models {
            models.insert(
                name.clone(),
                spec(e).map_err(|err| StubError::Config(format!("model {name:?}: {err}")))?,
            );
        }
        let default = match (&self.default, self.serve_unknown) {
            (_, Some(false)) => None,
            (Some(e), _) => Some(spec(e)?),
            (None, Some(true)) => Some(ModelSpec::new(Behaviour::Oracle)),
            (None, None) => None,
        };
        let positive = |v: Option<f64>, d: f64, what: &str| {
            v.map_or(Ok(d), |x| {
                crate::limits::speed(what, x).map_err(StubError::Config)
            })
        };
        let millis = |v: Option<f64>, d: Duration, what: &str| {
            v.map_or(Ok(d), |ms| {
                crate::limits::millis(what, ms).map_err(StubError::Config)
            })
        };
        let slots = |v: Option<usize>| {
            v.map_or(Ok(base.num_parallel), |n| {
                crate::limits::slots("num_parallel", n).map_err(StubError::Config)
            })
        };
        Ok(StubConfig {
            seed,
            models,
            default,
            prefill_tok_per_s: positive(
                self.prefill_tok_per_s,
                base.prefill_tok_per_s,
                "prefill_tok_per_s",
            )?,
            decode_tok_per_s: positive(
                self.decode_tok_per_s,
                base.decode_tok_per_s,
                "decode_tok_per_s",
            )?,
            load: millis(self.load_ms, base.load, "load_ms")?,
            cold_load: millis(self.cold_load_ms, base.cold_load, "cold_load_ms")?,
            prompt_count: self.prompt_eval,
            hang: self.hang_ms.map_or(base.hang, Duration::from_millis),
            num_parallel: slots(self.num_parallel)?,
            max_queue: self.max_queue.unwrap_or(base.max_queue),
            max_loaded_models: self.max_loaded_models.unwrap_or(base.max_loaded_models),
            ..base
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_file_parses() {
        let f = StubFile::parse(
            r#"
            seed = 7
            decode_tok_per_s = 2000
            hang_ms = 100
            num_parallel = 4
            [default]
            behaviour = "oracle"
            [models."text:1b"]
            behaviour = "text_calls"
            text_style = "tagged"
            [models."faulty:1b"]
            faults = { http500 = 0.1, reset = 0.05 }
            fault_script = ["reset", "http503"]
            [models."flawed:1b"]
            behaviour = "flawed"
            mistake_rate = 0.3
            [models."mistral:7b"]
            behaviour = "messy"
            shape = "mistral"
            "#,
        );
        let cfg = f.and_then(|f| f.into_config(&[], ScriptBook::new()));
        let cfg = match cfg {
            Ok(c) => c,
            Err(e) => panic!("{e}"),
        };
        assert_eq!(cfg.seed, 7);
        assert_eq!(cfg.hang, Duration::from_millis(100));
        assert_eq!((cfg.num_parallel, cfg.max_queue), (4, 512));
        assert!(matches!(
            cfg.models["text:1b"].behaviour,
            Behaviour::TextCalls(TextStyle::Tagged)
        ));
        assert_eq!(
            cfg.models["faulty:1b"].fault_script,
            vec![FaultKind::Reset, FaultKind::Http503]
        );
        assert!(matches!(
            cfg.models["flawed:1b"].behaviour,
            Behaviour::Flawed(_)
        ));
        assert!(matches!(
            cfg.models["mistral:7b"].behaviour,
            Behaviour::Messy(MessyShape::Mistral)
        ));
    }

    #[test]
    fn a_docs_reactive_model_takes_its_rates_from_the_file() {
        let file = StubFile::parse(
            "[models.\"docs:3b\"]\nbehaviour = \"docs_reactive\"\nbare_mistake_rate = 0.6\n\
             documented_mistake_rate = 0.2\nmistake_seed = 9\n",
        )
        .expect("parses");
        let cfg = file.into_config(&[], ScriptBook::new()).expect("config");
        match &cfg.models["docs:3b"].behaviour {
            Behaviour::DocsReactive(r) => {
                assert_eq!((r.bare, r.documented, r.seed), (0.6, 0.2, 9));
            }
            other => panic!("{other:?}"),
        }
        let bad =
            StubFile::parse("[models.m]\nbehaviour = \"docs_reactive\"\nbare_mistake_rate = 1.5\n")
                .map(|f| f.into_config(&[], ScriptBook::new()));
        assert!(matches!(bad, Ok(Err(_))));
    }

    #[test]
    fn bad_files_are_refused() {
        assert!(StubFile::parse("nonsense = 1").is_err());
        let over = StubFile::parse("[models.m]\nfaults = { reset = 0.8, hang = 0.5 }")
            .map(|f| f.into_config(&[], ScriptBook::new()));
        assert!(matches!(over, Ok(Err(_))));
        let shapeless = StubFile::parse("[models.m]\nbehaviour = \"messy\"")
            .map(|f| f.into_config(&[], ScriptBook::new()));
        assert!(matches!(shapeless, Ok(Err(_))));
        let closed = StubFile::parse("serve_unknown = false")
            .and_then(|f| f.into_config(&[], ScriptBook::new()));
        assert!(closed.is_ok_and(|c| c.default.is_none()));
    }

    #[test]
    fn unknown_names_are_served_only_when_the_file_says_so() {
        let default = |text: &str| {
            StubFile::parse(text)
                .and_then(|f| f.into_config(&[], ScriptBook::new()))
                .map(|c| c.default.map(|s| s.behaviour))
                .expect("config")
        };
        assert!(default("").is_none(), "Ollama's 404 by default");
        assert!(matches!(
            default("serve_unknown = true"),
            Some(Behaviour::Oracle)
        ));
        let never = "[default]\nbehaviour = \"never_answer\"";
        assert!(matches!(default(never), Some(Behaviour::NeverAnswer)));
        let off = format!("serve_unknown = false\n{never}");
        assert!(default(&off).is_none());
    }
}
