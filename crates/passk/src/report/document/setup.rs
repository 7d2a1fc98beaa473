//! The Setup section: the models, the server and the GPU, the run's settings and how the
//! figures were computed.

use super::Report;
use super::format::short_digest;
use crate::analysis::Summary;
use crate::report::number::{NOT_AVAILABLE, counted, fixed, number, percent};
use crate::report::table::MarkdownTable;
use crate::runner::record::{GpuInfo, Manifest, server_version_label};
use crate::wire::chat::ApiKind;
use serde_json::Value;

pub(super) fn setting<'v>(settings: &'v Value, key: &str) -> Option<&'v Value> {
    settings.get(key).filter(|v| !v.is_null())
}

pub(super) fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(a) => a.iter().map(value_text).collect::<Vec<_>>().join(", "),
        other => other.to_string(),
    }
}

pub(super) fn setup(out: &mut String, r: &Report) {
    let (m, s) = (r.manifest, r.summary);
    out.push_str("## Setup\n\n");
    let models = models_table(m);
    if !models.is_empty() {
        out.push_str(&models.render());
        out.push('\n');
    }
    let mut t = MarkdownTable::new(["setting", "value"]);
    t.row([
        server_version_label(m.servers.first().and_then(|s| s.kind.as_deref())),
        m.server_version.as_deref().unwrap_or(NOT_AVAILABLE),
    ]);
    t.row(["GPU".to_string(), gpu_text(&m.gpu)]);
    let api = ApiKind::named(&m.backend).unwrap_or_default();
    settings_rows(&mut t, &m.settings, api);
    analysis_rows(&mut t, s);
    out.push_str(&t.render());
    out.push('\n');
}

/// One row per model: size, quantization, digest and where it ran.
pub(super) fn models_table(m: &Manifest) -> MarkdownTable {
    let mut t = MarkdownTable::new(["model", "parameters", "quantization", "digest", "placement"]);
    for info in &m.models {
        t.row([
            info.name.clone(),
            info.parameter_size
                .clone()
                .unwrap_or_else(|| NOT_AVAILABLE.into()),
            info.quantization
                .clone()
                .unwrap_or_else(|| NOT_AVAILABLE.into()),
            info.digest
                .as_deref()
                .map_or_else(|| NOT_AVAILABLE.into(), short_digest),
            if info.on_cpu_only() {
                "On CPU (no VRAM)".into()
            } else if info.is_partly_on_cpu() {
                "partly on CPU".into()
            } else if info.size_vram.is_some() {
                "GPU".into()
            } else {
                "unknown".into()
            },
        ]);
    }
    t
}

/// The GPU's name, memory and driver, or why there is no telemetry.
pub(super) fn gpu_text(gpu: &GpuInfo) -> String {
    match (&gpu.name, &gpu.unavailable) {
        (Some(name), _) => {
            let mut g = name.clone();
            if let Some(mib) = gpu.memory_mib {
                g.push_str(&format!(", {} MiB", number(mib as f64, 0)));
            }
            if let Some(d) = &gpu.driver {
                g.push_str(&format!(", driver {d}"));
            }
            if let Some(source) = &gpu.source {
                g.push_str(&format!("; read through {source}"));
            }
            g
        }
        (None, Some(why)) => format!("no GPU telemetry ({why})"),
        (None, None) => "no GPU telemetry".into(),
    }
}

/// The run's settings: the known ones under their names first, then every other scalar; on the
/// OpenAI-compatible API, none of those it never sent.
pub(super) fn settings_rows(t: &mut MarkdownTable, st: &Value, api: ApiKind) {
    let sent = |key: &str| !api.provider().unsent.contains(&key);
    let known: [(&str, &str); 10] = [
        ("trials", "trials per task"),
        ("tool_docs", "tool docs variant"),
        ("prompt", "prompt variant"),
        ("temperature", "temperature"),
        ("router_temperature", "router temperature"),
        ("num_ctx", "num_ctx"),
        ("num_predict", "num_predict"),
        ("call_caps", "call cap(s), model calls per turn"),
        ("router_in_front", "router in front"),
        ("toolless", "baseline"),
    ];
    for (key, label) in known.into_iter().filter(|(key, _)| sent(key)) {
        if let Some(v) = setting(st, key) {
            let text = if key == "toolless" {
                if v.as_bool() == Some(true) {
                    "toolless".into()
                } else {
                    "none".into()
                }
            } else if key == "router_in_front" {
                on_off(v)
            } else {
                value_text(v)
            };
            t.row([label.to_string(), text]);
        }
    }
    if let Value::Object(map) = st {
        for (k, v) in map {
            let empty = v.as_array().is_some_and(Vec::is_empty) || v.as_str() == Some("");
            if known.iter().any(|(key, _)| key == k) || v.is_null() || empty || !sent(k) {
                continue;
            }
            if matches!(v, Value::Object(_)) {
                continue;
            }
            t.row([k.replace('_', " "), value_text(v)]);
        }
    }
}

/// A switch as the CLI writes it: `off`, `on` (`off, on` for a factorial level list).
pub(super) fn on_off(v: &Value) -> String {
    match v {
        Value::Bool(b) => if *b { "on" } else { "off" }.into(),
        Value::Array(a) => a.iter().map(on_off).collect::<Vec<_>>().join(", "),
        other => value_text(other),
    }
}

/// How the figures were computed: grader digest, bootstrap, token blend, model pair.
pub(super) fn analysis_rows(t: &mut MarkdownTable, s: &Summary) {
    t.row([
        "grader digest".to_string(),
        format!("`{}`", s.grader_digest),
    ]);
    t.row([
        "bootstrap".to_string(),
        format!(
            "{} over tasks, seed {}",
            counted(s.settings.resamples, "resample"),
            s.settings.seed
        ),
    ]);
    t.row([
        "blended tokens".to_string(),
        format!(
            "input + {} x output; cached: re-sent prefix at {}",
            fixed(s.settings.output_weight, 0),
            percent(s.settings.cache_discount)
        ),
    ]);
    if let Some(p) = &s.pairing {
        t.row([
            "model pair".to_string(),
            format!("small `{}`, large `{}` ({})", p.small, p.large, p.rule),
        ]);
    }
}
