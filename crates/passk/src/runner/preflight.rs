//! Checks made before any trace: the server answers, each model exists and supports tools, and,
//! right before a model's trials, a recorded warm-up call and `/api/ps` (size in VRAM, effective
//! context). A model partly on the CPU is flagged loudly, since its timings are not a GPU's.

use crate::runner::record::{CallRecord, ModelInfo, Node, Timings};
use crate::runner::settings::RunSettings;
use crate::wire::ChatApi;
use crate::wire::chat::{ApiKind, CallOptions, CallRequest, Message};
use crate::wire::chat_api::ServerIdentity;
use crate::wire::ollama::name::ModelName;
use crate::wire::outcome::CallOutcome;
use std::collections::BTreeMap;

/// Why a run cannot start.
#[derive(Debug, thiserror::Error)]
pub enum PreflightError {
    /// The server did not answer (`/api/version` over Ollama's API, `/v1/models` over the
    /// OpenAI-compatible one).
    #[error("{} is not reachable at {host}: {error}. {}", api.provider().name, api.provider().start)]
    Unreachable {
        /// The API the run speaks.
        api: ApiKind,
        /// Base URL tried.
        host: String,
        /// What went wrong.
        error: String,
    },
    /// The model is not pulled (Ollama), or not served (an OpenAI-compatible server).
    #[error("model '{model}' is not available on {host}: {error}. {}", match nearest {
        Some(near) => format!("Did you mean {near}? The server has it"),
        None => api.provider().fetch(model),
    })]
    ModelMissing {
        /// The API the run speaks.
        api: ApiKind,
        /// Model tag.
        model: String,
        /// The name the server lists nearest to it, when one is near (a typo).
        nearest: Option<String>,
        /// Base URL.
        host: String,
        /// Server message.
        error: String,
    },
    /// The model cannot take tools: Ollama would answer every call with `<full name> does not
    /// support tools`.
    #[error(
        "{} does not support tools: model '{model}' lists the capabilities [{capabilities}]; choose a model with the 'tools' capability",
        ModelName::parse(model).full()
    )]
    NoTools {
        /// Model tag.
        model: String,
        /// What it does support.
        capabilities: String,
    },
    /// `--think on` for a model that cannot think.
    #[error(
        "{model:?} does not support thinking (its capabilities: [{capabilities}]); drop --think on, or choose a thinking model"
    )]
    NoThinking {
        /// Model tag.
        model: String,
        /// What it does support.
        capabilities: String,
    },
    /// passk's stub loaded other suites than the run's.
    #[error(
        "the passk stub serves other versions of these suites than this run: {suites}; restart `passk serve-stub` (with the same --root) so that it loads them"
    )]
    StaleStub {
        /// Suites whose digest differs or that the stub did not load.
        suites: String,
    },
    /// The GPU exporter named for a server does not answer, or lists no GPU it can pick.
    #[error(
        "--gpu-metrics for {host}: {why}; check that dcgm-exporter runs there and the URL (or leave {host} out of --gpu-metrics)"
    )]
    GpuMetrics {
        /// The Ollama server whose GPU it reads.
        host: String,
        /// What went wrong.
        why: String,
    },
    /// The servers of one run do not serve the same setup.
    #[error(
        "{host} differs from {first}: {what} is {value} there but {first_value} on {first}; every server of a run must serve the same {what} (or leave {host} out of --host)"
    )]
    HostDiffers {
        /// The server that differs.
        host: String,
        /// What differs (`Ollama version`, `digest of model m`).
        what: String,
        /// Its value there.
        value: String,
        /// The first server, that the others are held to.
        first: String,
        /// The value on the first server.
        first_value: String,
    },
    /// The warm-up call failed for good.
    #[error("warm-up call to '{model}' failed ({bucket}): {error}")]
    Warmup {
        /// Model tag.
        model: String,
        /// Outcome bucket.
        bucket: String,
        /// Last error text.
        error: String,
    },
}

/// The server version, or `Unreachable`.
pub async fn server_version(client: &dyn ChatApi, host: &str) -> Result<String, PreflightError> {
    server(client, host).await.map(|v| v.version)
}

/// Whether this server version counts only the prompt tokens past its cache in
/// `prompt_eval_count` (Ollama 0.30.0 did; 0.30.1 went back to counting every token).
pub fn prompt_counts_only_new(version: &str) -> bool {
    version == "0.30.0" || version.starts_with("0.30.0-")
}

/// The server's version, with the digests of the suites passk's stub loaded (a real server has
/// none), or `Unreachable`.
pub async fn server(client: &dyn ChatApi, host: &str) -> Result<ServerIdentity, PreflightError> {
    client
        .server_info()
        .await
        .map_err(|e| PreflightError::Unreachable {
            api: client.kind(),
            host: host.to_string(),
            error: e.to_string(),
        })
}

/// Refuses a stub whose loaded suites differ from the run's (suite name to tasks digest): its
/// oracle would not know the run's conversations. A server that publishes nothing (a real
/// Ollama) passes.
pub fn check_stub_suites(
    published: Option<&BTreeMap<String, String>>,
    run: &BTreeMap<String, String>,
) -> Result<(), PreflightError> {
    let Some(published) = published else {
        return Ok(());
    };
    let stale: Vec<String> = run
        .iter()
        .filter(|(name, digest)| published.get(*name) != Some(*digest))
        .map(|(name, _)| name.clone())
        .collect();
    if stale.is_empty() {
        Ok(())
    } else {
        Err(PreflightError::StaleStub {
            suites: stale.join(", "),
        })
    }
}

/// What `/api/show` and `/api/tags` say about a model; refuses a missing model, and one without the
/// `tools` capability when `need_tools`.
pub async fn check_model(
    client: &dyn ChatApi,
    host: &str,
    model: &str,
    need_tools: bool,
) -> Result<ModelInfo, PreflightError> {
    let shown = match client.model_info(model).await {
        Ok(shown) => shown,
        // Only a 404 means the model is not there; anything else is the server's trouble.
        Err(e) if e.status() == Some(404) => {
            let listed = client.list_models().await.unwrap_or_default();
            let names = listed.iter().map(|m| m.name.as_str());
            return Err(PreflightError::ModelMissing {
                api: client.kind(),
                model: model.to_string(),
                nearest: crate::wire::name::nearest(model, names).map(String::from),
                host: host.to_string(),
                error: e.to_string(),
            });
        }
        Err(e) => {
            return Err(PreflightError::Unreachable {
                api: client.kind(),
                host: host.to_string(),
                error: format!(
                    "{} for '{model}' failed: {e}",
                    client.kind().provider().model_route
                ),
            });
        }
    };
    if need_tools && shown.tools == Some(false) {
        return Err(PreflightError::NoTools {
            model: model.to_string(),
            capabilities: shown.capabilities.join(", "),
        });
    }
    Ok(ModelInfo {
        name: model.to_string(),
        digest: shown.digest,
        quantization: shown.quantization,
        parameter_size: shown.parameter_size,
        family: shown.family,
        context_length: shown.context_length,
        capabilities: shown.capabilities,
        ..ModelInfo::default()
    })
}

/// Refuses `--think on` for a model without the `thinking` capability: Ollama would answer every
/// call with a 400.
pub fn check_think(info: &ModelInfo, think: Option<bool>) -> Result<(), PreflightError> {
    if think == Some(true) && !info.capabilities.iter().any(|c| c == "thinking") {
        return Err(PreflightError::NoThinking {
            model: info.name.clone(),
            capabilities: info.capabilities.join(", "),
        });
    }
    Ok(())
}

/// Warms the model up with the run's own options (so it is not reloaded after), records the call,
/// then reads `/api/ps`. Returns warnings to show (partial offload, smaller effective context).
pub async fn warm_up(
    client: &dyn ChatApi,
    settings: &RunSettings,
    info: &mut ModelInfo,
) -> Result<Vec<String>, PreflightError> {
    let request = CallRequest {
        model: info.name.clone(),
        messages: vec![Message::user(crate::scripted::WARM_UP_PROMPT)],
        stream: false,
        options: CallOptions {
            temperature: Some(0.0),
            context_window: Some(settings.num_ctx),
            max_output_tokens: Some(8),
            ..CallOptions::default()
        },
        keep_loaded_for: Some(settings.keep_alive.clone()),
        // As every trial sends it: `--think off` must not let the warm-up think.
        think: settings.think,
        ..CallRequest::default()
    };
    let result = client.chat(&request).await;
    let mut call = CallRecord::new(Node::Orchestrator, 0, 0);
    call.wall_s = Some(result.wall_s).into();
    call.started_unix_ms = Some(result.started_unix_ms).into();
    call.outcome = result.outcome;
    call.attempts = result.attempts.clone().into();
    if let Some(r) = &result.reply {
        call.timings = Timings::of(&r.usage, r.done_reason.clone());
        call.truncated = r.truncated();
    }
    info.warmup = Some(call);
    let mut warnings = Vec::new();
    let error = result
        .attempts
        .last()
        .and_then(|a| a.error.clone())
        .unwrap_or_default();
    match result.outcome {
        CallOutcome::Ok => {}
        CallOutcome::Protocol => {
            return Err(PreflightError::Warmup {
                model: info.name.clone(),
                bucket: "protocol".into(),
                error,
            });
        }
        // A transport failure after every retry is recorded; the trials will retry on their own.
        CallOutcome::Transport => warnings.push(format!(
            "warm-up call to {} failed (transport): {error}",
            info.name
        )),
    }
    match client.loaded_models().await {
        Ok(Some(loaded)) => {
            let digest = info.digest.clone();
            match loaded
                .into_iter()
                .find(|m| m.is(client, &info.name, digest.as_deref()))
            {
                Some(m) => {
                    info.size = Some(m.size);
                    info.size_vram = Some(m.size_vram);
                    info.loaded_context_length = m.context_length;
                    let warning = placement_warning(&info.name, m.size, m.size_vram);
                    info.partly_on_cpu = Some(warning.is_some());
                    warnings.extend(warning);
                }
                None => warnings.push(placement_unknown(&info.name, &settings.keep_alive)),
            }
        }
        // No list of loaded models: the server fixed its model and context at its start, and
        // the context it gave is the one the model runs with.
        Ok(None) => info.loaded_context_length = info.context_length,
        Err(_) => {}
    }
    warnings.extend(context_warning(info, settings.num_ctx, client.kind()));
    Ok(warnings)
}

/// The warning for a model that runs with a smaller context than `--num-ctx`; over `/v1`, which
/// cannot send `num_ctx`, with how to set it on Ollama.
fn context_warning(info: &ModelInfo, num_ctx: u64, api: ApiKind) -> Option<String> {
    let ctx = info.loaded_context_length.filter(|&c| c < num_ctx)?;
    let mut w = format!(
        "{} runs with a context of {ctx} tokens, below the requested num_ctx {num_ctx}",
        info.name
    );
    if api.provider().unsent.contains(&"num_ctx") {
        w.push_str(&format!(
            "; over --api {} num_ctx is not sent: on Ollama set it with \
             OLLAMA_CONTEXT_LENGTH or a Modelfile's `PARAMETER num_ctx`",
            api.as_str()
        ));
    }
    Some(w)
}

/// Start of the warning for models the server cannot keep loaded together.
pub const EVICTED_WARNING: &str = "MODELS EVICT EACH OTHER";

/// The warning when the warm-up of `model` unloaded a model warmed before it in this session
/// (`warmed`: each with whether `/api/ps` listed it after its own warm-up): the server keeps fewer
/// models loaded than the run uses (`OLLAMA_MAX_LOADED_MODELS`, or VRAM).
pub async fn evicted(
    client: &dyn ChatApi,
    model: &str,
    warmed: &[(String, bool)],
    settings: &RunSettings,
) -> Option<String> {
    let keep_alive = settings.keep_alive.trim();
    if matches!(keep_alive, "0" | "0s" | "0m") {
        return None;
    }
    let loaded = client.loaded_models().await.ok()??;
    let gone: Vec<&str> = warmed
        .iter()
        .filter(|(name, listed)| {
            *listed && name != model && !loaded.iter().any(|m| m.is(client, name, None))
        })
        .map(|(name, _)| name.as_str())
        .collect();
    if gone.is_empty() {
        return None;
    }
    Some(format!(
        "{EVICTED_WARNING}: loading {model} unloaded {} although --keep-alive is {keep_alive}: \
         the server keeps fewer models loaded than this run uses (OLLAMA_MAX_LOADED_MODELS, or \
         VRAM). passk plays one model at a time, so each model loads once per session; a call \
         that waits behind another model's runner counts that wait in load_duration and may \
         reach --timeout.",
        gone.join(", ")
    ))
}

/// Why a call of `model` that failed on the wire, on a server that still answers, may have
/// waited behind another model's runner: the server holds other models and not this one (on
/// Ollama a request waits for the runner it must evict, as long as requests keep it busy).
pub async fn behind_another_model(client: &dyn ChatApi, model: &str) -> Option<String> {
    let loaded = client.loaded_models().await.ok()??;
    if loaded.is_empty() || loaded.iter().any(|m| m.is(client, model, None)) {
        return None;
    }
    let others: Vec<&str> = loaded.iter().map(|m| m.name.as_str()).collect();
    Some(format!(
        "{model} was not loaded when its call failed, and the server held {}: the call waited \
         behind another model's runner (OLLAMA_MAX_LOADED_MODELS, or VRAM); stop the other \
         model's client or raise --timeout",
        others.join(", ")
    ))
}

/// Start of the warning for a model whose placement could not be read.
pub const PLACEMENT_UNKNOWN_WARNING: &str = "PLACEMENT UNKNOWN";

/// The warning for a model the server's list of loaded models lacks right after its warm-up.
fn placement_unknown(name: &str, keep_alive: &str) -> String {
    let why = if matches!(keep_alive.trim(), "0" | "0s" | "0m") {
        "--keep-alive 0 unloads it after each call"
    } else {
        "another model evicted it (memory pressure, OLLAMA_MAX_LOADED_MODELS), or it was loaded \
         under another name"
    };
    format!(
        "{PLACEMENT_UNKNOWN_WARNING}: {name} was not among the loaded models (`/api/ps`) right \
         after its warm-up ({why}); whether it ran on the GPU or the CPU is unknown, and so are \
         its memory and context."
    )
}

/// Start of the warning for a model wholly on the CPU.
pub const ON_CPU_WARNING: &str = "MODEL ON CPU (no VRAM)";
/// Start of the warning for a model partly on the CPU.
pub const PARTLY_ON_CPU_WARNING: &str = "MODEL PARTLY ON CPU";

/// The warning for a model `/api/ps` shows with `vram` of its `size` bytes in VRAM; `None` when
/// all of it is there. Nothing in VRAM is not a partial offload: freeing some VRAM will not help.
pub fn placement_warning(name: &str, size: u64, vram: u64) -> Option<String> {
    let gib = |b: u64| b as f64 / 1_073_741_824.0;
    if vram >= size {
        None
    } else if vram == 0 {
        Some(format!(
            "{ON_CPU_WARNING}: {name} has none of its {:.1} GiB in VRAM (`/api/ps` size_vram 0); \
             its timings are a CPU's, not a GPU's.",
            gib(size)
        ))
    } else {
        Some(format!(
            "{PARTLY_ON_CPU_WARNING}: {name} has {:.1} of {:.1} GiB in VRAM; its timings are not a \
             GPU's. Free VRAM or choose a smaller model/num_ctx.",
            gib(vram),
            gib(size)
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::scripted_api::Scripted;
    use crate::wire::chat_api::LoadedModel;

    #[tokio::test]
    async fn a_warm_up_cut_at_its_limit_is_recorded_truncated() {
        let mut info = ModelInfo {
            name: "m".into(),
            ..ModelInfo::default()
        };
        // A real model's warm-up stops at its 8 tokens.
        let cut_short =
            Scripted::new(vec![Ok(Message::assistant("Sure! Here is the single"))]).done("length");
        warm_up(&cut_short, &RunSettings::default(), &mut info)
            .await
            .expect("warm-up");
        let call = info.warmup.expect("recorded");
        assert_eq!(call.timings.done_reason.as_deref(), Some("length"));
        assert!(call.truncated, "done_reason length is a truncated call");
    }

    #[tokio::test]
    async fn a_model_is_found_in_api_ps_by_its_weights_or_its_placement_is_unknown() {
        let info = || ModelInfo {
            name: "alias:latest".into(),
            digest: Some("sha256:ABCD".into()),
            ..ModelInfo::default()
        };
        // Ollama lists a runner under the first name that loaded its blob.
        let first_name = LoadedModel {
            name: "first:latest".into(),
            digest: Some("abcd".into()),
            size: 10,
            size_vram: 4,
            ..LoadedModel::default()
        };
        let mut found = info();
        let server = Scripted::new(vec![]).loaded(vec![first_name]);
        let warnings = warm_up(&server, &RunSettings::default(), &mut found)
            .await
            .expect("warm-up");
        assert_eq!(
            (found.partly_on_cpu, found.size_vram),
            (Some(true), Some(4))
        );
        assert!(
            warnings[0].starts_with(PARTLY_ON_CPU_WARNING),
            "{warnings:?}"
        );
        let mut missing = info();
        let server = Scripted::new(vec![]).loaded(vec![]);
        let warnings = warm_up(&server, &RunSettings::default(), &mut missing)
            .await
            .expect("warm-up");
        assert_eq!(missing.partly_on_cpu, None, "unknown, never false");
        assert!(
            warnings[0].starts_with(PLACEMENT_UNKNOWN_WARNING),
            "{warnings:?}"
        );
    }

    #[test]
    fn the_remedies_name_the_server_the_run_speaks_to() {
        let unreachable = |api| {
            PreflightError::Unreachable {
                api,
                host: "http://127.0.0.1:8080".into(),
                error: "connection refused".into(),
            }
            .to_string()
        };
        let missing = |api| {
            PreflightError::ModelMissing {
                api,
                model: "m".into(),
                nearest: None,
                host: "h".into(),
                error: "404".into(),
            }
            .to_string()
        };
        let ollama = unreachable(ApiKind::Ollama);
        assert!(ollama.starts_with("Ollama is not reachable") && ollama.contains("ollama serve"));
        let openai = unreachable(ApiKind::OpenAi);
        assert!(openai.contains("OpenAI-compatible server"), "{openai}");
        assert!(
            !openai.contains("ollama") && !openai.contains("Ollama"),
            "{openai}"
        );
        assert!(missing(ApiKind::Ollama).contains("passk pull m"));
        let typo = PreflightError::ModelMissing {
            api: ApiKind::Ollama,
            model: "qwen2.5-codr:3b".into(),
            nearest: Some("qwen2.5-coder:3b".into()),
            host: "h".into(),
            error: "404".into(),
        }
        .to_string();
        assert!(
            typo.contains("Did you mean qwen2.5-coder:3b?") && !typo.contains("pull"),
            "a typo is not told to pull itself: {typo}"
        );
        let openai = missing(ApiKind::OpenAi);
        assert!(
            openai.contains("/v1/models") && !openai.contains("pull"),
            "{openai}"
        );
    }

    #[test]
    fn a_model_with_nothing_in_vram_is_on_the_cpu_not_partly() {
        let gib = 1_073_741_824;
        let none = placement_warning("m", 4 * gib, 0).unwrap();
        assert!(
            none.starts_with("MODEL ON CPU (no VRAM): m has none of its 4.0 GiB"),
            "{none}"
        );
        assert!(
            !none.contains("Free VRAM") && !none.contains("PARTLY"),
            "{none}"
        );
        let part = placement_warning("m", 4 * gib, gib).unwrap();
        assert!(
            part.starts_with("MODEL PARTLY ON CPU: m has 1.0 of 4.0 GiB"),
            "{part}"
        );
        assert_eq!(placement_warning("m", 4 * gib, 4 * gib), None);
    }
}
