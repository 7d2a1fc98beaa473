//! `passk doctor`: what a run against a real Ollama needs, each line a check with a fix.

use crate::cli::DoctorArgs;
use crate::exit_code;
use passk::runner::settings::DEFAULT_MODELS;
use passk::runner::telemetry::Telemetry;
use passk::wire::client::{Client, ClientConfig};
use passk::wire::host::parse_host;
use std::time::Duration;

struct Check {
    ok: bool,
    what: String,
    fix: Option<String>,
}

impl Check {
    fn pass(what: String) -> Check {
        Check {
            ok: true,
            what,
            fix: None,
        }
    }
    fn fail(what: String, fix: String) -> Check {
        Check {
            ok: false,
            what,
            fix: Some(fix),
        }
    }
}

/// Runs the command; returns the exit code.
pub fn run(args: &DoctorArgs) -> anyhow::Result<u8> {
    let host = parse_host(&args.host.host)?;
    let models: Vec<String> = if args.models.is_empty() {
        DEFAULT_MODELS.map(String::from).to_vec()
    } else {
        args.models.clone()
    };
    let client = Client::new(ClientConfig {
        base_url: host.clone(),
        connect_timeout: Duration::from_secs_f64(args.host.connect_timeout),
        request_timeout: Duration::from_secs_f64(args.host.timeout.min(30.0)),
        retries: 0,
        backoff: Duration::from_millis(100),
    })?;
    let rt = tokio::runtime::Runtime::new()?;
    let checks = rt.block_on(checks(&client, &host, &models));
    let mut all_ok = true;
    for c in &checks {
        all_ok &= c.ok;
        println!("[{}] {}", if c.ok { " ok " } else { "FAIL" }, c.what);
        if let Some(fix) = &c.fix {
            println!("       fix: {fix}");
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
                "start it with `ollama serve`, or point --host / OLLAMA_HOST at it".into(),
            ));
            out.push(nvml_check().0);
            return out;
        }
    }
    let tags = client.tags().await.ok();
    let (nvml, free_vram) = nvml_check();
    for model in models {
        let pulled = tags.as_ref().and_then(|t| {
            t.models
                .iter()
                .find(|m| &m.name == model || &m.model == model)
        });
        let Some(entry) = pulled else {
            out.push(Check::fail(
                format!("{model} is not pulled"),
                format!("passk pull {model}"),
            ));
            continue;
        };
        out.push(Check::pass(format!("{model} is pulled ({})", entry.digest)));
        match client.show(model).await {
            Ok(show) if show.capabilities.iter().any(|c| c == "tools") => {
                out.push(Check::pass(format!("{model} supports tools")));
            }
            Ok(show) => out.push(Check::fail(
                format!(
                    "{model} does not support tools (capabilities: {})",
                    show.capabilities.join(", ")
                ),
                "choose a model whose template supports tools (e.g. qwen2.5-coder)".into(),
            )),
            Err(e) => out.push(Check::fail(
                format!("{model}: /api/show failed: {e}"),
                format!("passk pull {model}"),
            )),
        }
        match ((entry.size > 0).then_some(entry.size), free_vram) {
            (Some(size), Some(free)) if size < free => out.push(Check::pass(format!(
                "{model} ({:.1} GiB) fits in free VRAM ({:.1} GiB), before its context cache",
                gib(size),
                gib(free)
            ))),
            (Some(size), Some(free)) => out.push(Check::fail(
                format!("{model} ({:.1} GiB) may not fit in free VRAM ({:.1} GiB)", gib(size), gib(free)),
                "free VRAM, lower --num-ctx, or choose a smaller quantization; a partly offloaded model is flagged in every report".into(),
            )),
            _ => out.push(Check::pass(format!("{model}: VRAM fit unknown (no size or no GPU telemetry)"))),
        }
    }
    out.push(nvml);
    out
}

fn gib(bytes: u64) -> f64 {
    bytes as f64 / 1_073_741_824.0
}

/// Whether NVML answers, and the free VRAM it reports.
fn nvml_check() -> (Check, Option<u64>) {
    let t = Telemetry::start(Duration::from_millis(50));
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
            Check::fail(
                format!("no GPU telemetry: {why}"),
                "install the NVIDIA driver (libnvidia-ml.so.1); runs still work, GPU fields are recorded as absent".into(),
            ),
            None,
        ),
    }
}
