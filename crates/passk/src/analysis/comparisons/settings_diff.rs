//! What differs between two runs' manifests (`passk compare` puts it first, and refuses a noise
//! run that differs from run A in anything but the base seed). The manifest is flattened into
//! dotted settings (`settings.trials`, `models.<name>.digest`, `suite_digests.store.tools`); the
//! fields that name one run rather than configure it (run id, creation time, warnings, the
//! experiment file's text, where records were imported from, the Ollama URLs and what each
//! server reported, model warm-ups) are left out.

use crate::runner::record::Manifest;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// Manifest fields that identify a run instead of configuring it.
const NOT_SETTINGS: [&str; 7] = [
    "run_id",
    "created",
    "warnings",
    "experiment_file",
    "imported_from",
    "server_host",
    "servers",
];

/// Settings that say where a run was played, not what it played.
const NOT_SETTINGS_KEYS: [&str; 1] = ["hosts"];

/// The setting a noise run may change: it is a second run of A's configuration.
pub const NOISE_MAY_DIFFER: &str = "settings.base_seed";

/// One setting with different values in the two runs (`None`: absent from that run).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SettingDifference {
    /// Dotted path in the manifest.
    pub setting: String,
    /// Its value in run A, as JSON text.
    pub a: Option<String>,
    /// Its value in run B, as JSON text.
    pub b: Option<String>,
}

fn flatten(prefix: &str, v: &Value, out: &mut BTreeMap<String, String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                flatten(&join(prefix, k), x, out);
            }
        }
        Value::Null => {}
        other => {
            out.insert(prefix.to_string(), other.to_string());
        }
    }
}

fn join(prefix: &str, key: &str) -> String {
    if prefix.is_empty() {
        key.to_string()
    } else {
        format!("{prefix}.{key}")
    }
}

/// The manifest's settings as dotted paths and JSON text; models are keyed by name.
fn settings_of(m: &Manifest) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let Ok(Value::Object(mut fields)) = serde_json::to_value(m) else {
        return out;
    };
    for k in NOT_SETTINGS {
        fields.remove(k);
    }
    if let Some(Value::Object(settings)) = fields.get_mut("settings") {
        for k in NOT_SETTINGS_KEYS {
            settings.remove(k);
        }
        // A run at the suite's own policy leaves the prompt out of its settings: it reads as
        // `policy`, so a run of another prompt shows the two variants side by side.
        settings
            .entry("prompt")
            .or_insert_with(|| Value::from(crate::domain::PromptVariant::POLICY.as_str()));
    }
    fields.remove("models");
    flatten("", &Value::Object(fields), &mut out);
    for model in &m.models {
        if let Ok(Value::Object(mut info)) = serde_json::to_value(model) {
            info.remove("warmup");
            info.remove("name");
            flatten(
                &format!("models.{}", model.name),
                &Value::Object(info),
                &mut out,
            );
        }
    }
    out
}

/// Every setting whose value differs between the two manifests, in path order.
pub fn setting_differences(a: &Manifest, b: &Manifest) -> Vec<SettingDifference> {
    let (sa, sb) = (settings_of(a), settings_of(b));
    let mut keys: Vec<&String> = sa.keys().chain(sb.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|k| sa.get(*k) != sb.get(*k))
        .map(|k| SettingDifference {
            setting: k.clone(),
            a: sa.get(k).cloned(),
            b: sb.get(k).cloned(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::record::ModelInfo;
    use serde_json::json;

    fn manifest(run: &str, settings: Value, digest: &str) -> Manifest {
        Manifest {
            run_id: run.into(),
            created: format!("{run} time"),
            settings,
            models: vec![ModelInfo {
                name: "m".into(),
                digest: Some(digest.into()),
                ..ModelInfo::default()
            }],
            ..Manifest::default()
        }
    }

    #[test]
    fn lists_what_changed_and_not_what_names_the_run() {
        let a = manifest(
            "a",
            json!({"trials": 5, "tool_docs": "plain", "base_seed": 0}),
            "d1",
        );
        let b = manifest(
            "b",
            json!({"trials": 5, "tool_docs": "examples", "base_seed": 1}),
            "d2",
        );
        let d = setting_differences(&a, &b);
        let names: Vec<&str> = d.iter().map(|x| x.setting.as_str()).collect();
        assert_eq!(
            names,
            [
                "models.m.digest",
                "settings.base_seed",
                "settings.tool_docs"
            ]
        );
        assert_eq!(d[2].a.as_deref(), Some("\"plain\""));
        assert!(setting_differences(&a, &a).is_empty());
    }

    #[test]
    fn a_run_at_the_policy_reads_as_the_policy_prompt() {
        let a = manifest("a", json!({"trials": 5}), "d");
        let b = manifest("b", json!({"trials": 5, "prompt": "strict"}), "d");
        let d = setting_differences(&a, &b);
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].setting, "settings.prompt");
        assert_eq!(
            (d[0].a.as_deref(), d[0].b.as_deref()),
            (Some("\"policy\""), Some("\"strict\""))
        );
    }
}
