//! `passk doctor`: what a run against a real Ollama needs, each line a check with a fix.

use crate::cli::DoctorArgs;
use crate::exit_code;
use passk::runner::settings::DEFAULT_MODELS;
use passk::runner::telemetry::Telemetry;
use passk::wire::api::{LocalModel, TagsResponse};
use passk::wire::chat::ApiKind;
use passk::wire::client::{Client, ClientConfig};
use passk::wire::host::parse_host;
use passk::wire::name::same_model;
use passk::wire::ollama::PROVIDER;
use std::time::Duration;

/// How a check came out; only `Fail` makes the command exit non-zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Level {
    Ok,
    Warn,
    Fail,
}

pub(super) struct Check {
    level: Level,
    what: String,
    fix: Option<String>,
}

impl Check {
    pub(super) fn pass(what: String) -> Check {
        Check {
            level: Level::Ok,
            what,
            fix: None,
        }
    }
    pub(super) fn warn(what: String, fix: String) -> Check {
        Check {
            level: Level::Warn,
            what,
            fix: Some(fix),
        }
    }
    pub(super) fn fail(what: String, fix: String) -> Check {
        Check {
            level: Level::Fail,
            what,
            fix: Some(fix),
        }
    }
}

/// Runs the command; returns the exit code.
pub(super) fn run(args: &DoctorArgs) -> anyhow::Result<u8> {
    let host = match args.host.single() {
        Ok(h) => parse_host(&h)?,
        Err(e) => return Err(super::usage_error(&e)),
    };
    let models: Vec<String> = if args.models.is_empty() {
        DEFAULT_MODELS.map(String::from).to_vec()
    } else {
        args.models.clone()
    };
    let (connect_timeout, request_timeout) = match args.host.durations() {
        Ok(d) => d,
        Err(e) => return Err(super::usage_error(&e)),
    };
    let config = ClientConfig {
        base_url: host.clone(),
        connect_timeout,
        request_timeout: request_timeout.min(Duration::from_secs(30)),
        retries: 0,
        backoff: Duration::from_millis(100),
    };
    let rt = tokio::runtime::Runtime::new()?;
    let checks = match args.host.api.unwrap_or_default() {
        ApiKind::OpenAi => {
            let client = passk::wire::apis::connect(ApiKind::OpenAi, config)?;
            rt.block_on(super::doctor_openai::checks(
                client.as_ref(),
                &host,
                &models,
            ))
        }
        ApiKind::Ollama => rt.block_on(checks(&Client::new(config)?, &host, &models)),
    };
    let mut all_ok = true;
    for c in &checks {
        all_ok &= c.level != Level::Fail;
        let mark = match c.level {
            Level::Ok => " ok ",
            Level::Warn => "warn",
            Level::Fail => "FAIL",
        };
        passk::outln!("[{mark}] {}", c.what);
        if let Some(fix) = &c.fix {
            passk::outln!("       fix: {fix}");
        }
    }
    Ok(if all_ok {
        exit_code::SUCCESS
    } else {
        exit_code::PREFLIGHT_FAILED
    })
}

async fn checks(client: &Client, host: &str, models: &[String]) -> Vec<Check> {
    let mut out = Vec::new();
    match client.version().await {
        Ok(v) => out.push(Check::pass(format!(
            "Ollama reachable at {host}, version {}",
            v.version
        ))),
        Err(e) => {
            out.push(Check::fail(
                format!("Ollama not reachable at {host}: {e}"),
                PROVIDER.start.into(),
            ));
            out.push(nvml_check().0);
            return out;
        }
    }
    let mut tags = None;
    let (nvml, free_vram) = nvml_check();
    for model in models {
        // `/api/show` answers for every pulled model; `/api/tags` adds its digest and size.
        let show = match client.show(model).await {
            Ok(show) => show,
            Err(e) => {
                let fix = match closest_pulled(client, &mut tags, model).await {
                    Some(near) => format!("did you mean {near}? It is pulled"),
                    None => PROVIDER.fetch(model),
                };
                out.push(Check::fail(format!("{model} is not available: {e}"), fix));
                continue;
            }
        };
        let entry = listed(client, &mut tags, model).await;
        let digest = entry
            .as_ref()
            .map_or("digest unknown", |e| e.digest.as_str());
        out.push(Check::pass(format!("{model} is pulled ({digest})")));
        if show.capabilities.iter().any(|c| c == "tools") {
            out.push(Check::pass(format!("{model} supports tools")));
        } else {
            out.push(Check::fail(
                format!(
                    "{model} does not support tools (capabilities: {})",
                    show.capabilities.join(", ")
                ),
                PROVIDER.tools.into(),
            ));
        }
        let size = entry.map(|e| e.size).filter(|&s| s > 0);
        match (size, free_vram) {
            (Some(size), Some(free)) if size < free => out.push(Check::pass(format!(
                "{model} ({:.1} GiB) fits in free VRAM ({:.1} GiB), before its context cache",
                gib(size),
                gib(free)
            ))),
            (Some(size), Some(free)) => out.push(Check::warn(
                format!("{model} ({:.1} GiB) may not fit in free VRAM ({:.1} GiB)", gib(size), gib(free)),
                "free VRAM, lower --num-ctx, or choose a smaller quantization; a partly offloaded model is flagged in every report".into(),
            )),
            _ => out.push(Check::warn(
                format!("{model}: VRAM fit unknown (no size or no GPU telemetry)"),
                "check `nvidia-smi` by hand; a partly offloaded model is flagged in every report".into(),
            )),
        }
    }
    out.push(nvml);
    out
}

/// The pulled name nearest to a `model` the server lacks (a typo), when one is near.
async fn closest_pulled(
    client: &Client,
    tags: &mut Option<TagsResponse>,
    model: &str,
) -> Option<String> {
    if tags.is_none() {
        *tags = client.tags().await.ok();
    }
    let names = tags.as_ref()?.models.iter().map(|m| m.name.as_str());
    passk::wire::name::nearest(model, names).map(String::from)
}

/// `model`'s `/api/tags` entry. The list is read after the model's `/api/show`, and read again
/// when it misses the model: a name the list did not have before the show may be listed now.
async fn listed(
    client: &Client,
    tags: &mut Option<TagsResponse>,
    model: &str,
) -> Option<LocalModel> {
    let find = |t: &TagsResponse| {
        t.models
            .iter()
            .find(|m| same_model(&m.name, model) || same_model(&m.model, model))
            .cloned()
    };
    if let Some(found) = tags.as_ref().and_then(find) {
        return Some(found);
    }
    *tags = client.tags().await.ok();
    tags.as_ref().and_then(find)
}

fn gib(bytes: u64) -> f64 {
    bytes as f64 / 1_073_741_824.0
}

/// Whether NVML answers, and the free VRAM it reports.
fn nvml_check() -> (Check, Option<u64>) {
    let t = Telemetry::start(Duration::from_millis(50), &[]);
    let info = t.gpu_info().clone();
    drop(t);
    match info.unavailable {
        None => {
            let free = nvml_wrapper::Nvml::init()
                .ok()
                .and_then(|n| n.device_by_index(0).ok().and_then(|d| d.memory_info().ok()))
                .map(|m| m.free);
            (
                Check::pass(format!(
                    "GPU telemetry: {} (driver {})",
                    info.name.unwrap_or_default(),
                    info.driver.unwrap_or_default()
                )),
                free,
            )
        }
        Some(why) => (
            Check::warn(
                format!("no GPU telemetry: {why}"),
                "install the NVIDIA driver (libnvidia-ml.so.1); runs still work, GPU fields are recorded as absent".into(),
            ),
            None,
        ),
    }
}
