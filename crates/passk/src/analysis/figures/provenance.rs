//! What produced a run, as its manifest records it: passk's version and commit, whether anything
//! it was built from or read differed from that commit, the Ollama version, the model digests, and
//! the digests of each suite's tasks, tool docs and policy, and of the graders.

use crate::domain::SuiteDigests;
use crate::runner::record::Manifest;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The mark build.rs appends to a commit built from a tree with uncommitted changes.
const DIRTY_SUFFIX: &str = "-dirty";

/// A run's provenance (in `summary.json` as `provenance`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    /// passk's version.
    pub passk_version: String,
    /// The commit passk was built from, when known.
    pub commit: Option<String>,
    /// Whether passk was built from uncommitted changes, or the suites it read had some; `None`
    /// when neither the build nor the run recorded a checkout.
    pub dirty: Option<bool>,
    /// Suite files that differed from the data checkout's commit when the run began.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub uncommitted: Vec<String>,
    /// The data checkout's commit, when it is not the one passk was built from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_commit: Option<String>,
    /// The server version the run played on (Ollama's, or the other server's). Written under
    /// the key summary.json has always had.
    #[serde(rename = "ollama_version")]
    pub server_version: Option<String>,
    /// The software of the run's first server, where the manifest says (`llama.cpp`, `vllm`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_kind: Option<String>,
    /// Each model's digest, by name.
    pub model_digests: BTreeMap<String, Option<String>>,
    /// The tool-docs variants played (the suites' `tools` digest is the first one's).
    pub tool_docs: Vec<String>,
    /// Per suite: the digests of its tasks, tool docs and policy.
    pub suites: BTreeMap<String, SuiteDigests>,
    /// Per suite: the SHA-256 of each tool documentation variant played, by variant name (empty
    /// in older manifests).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tool_docs_digests: BTreeMap<String, BTreeMap<String, String>>,
    /// Per suite: the SHA-256 of each prompt variant played, by variant name (empty where the run
    /// played the suites' own policies alone).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub prompt_digests: BTreeMap<String, BTreeMap<String, String>>,
    /// The graders' digest.
    pub grader_digest: String,
}

/// The provenance `manifest` records.
pub fn provenance(manifest: &Manifest) -> Provenance {
    let built = manifest.git_commit.as_deref();
    let built_dirty = built.map(|c| c.ends_with(DIRTY_SUFFIX));
    let commit = built.map(|c| c.trim_end_matches(DIRTY_SUFFIX).to_string());
    let checkout = manifest.checkout.as_ref();
    let data_dirty = checkout.map(|c| !c.uncommitted.is_empty());
    let dirty = match (built_dirty, data_dirty) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(false) || b.unwrap_or(false)),
    };
    let tool_docs = manifest
        .settings
        .get("tool_docs")
        .map(|v| match v {
            serde_json::Value::Array(a) => a
                .iter()
                .filter_map(|x| x.as_str().map(String::from))
                .collect(),
            serde_json::Value::String(s) => vec![s.clone()],
            _ => Vec::new(),
        })
        .unwrap_or_default();
    Provenance {
        passk_version: manifest.passk_version.clone(),
        data_commit: checkout
            .map(|c| c.commit.clone())
            .filter(|c| Some(c) != commit.as_ref()),
        commit,
        dirty,
        uncommitted: checkout.map(|c| c.uncommitted.clone()).unwrap_or_default(),
        server_version: manifest.server_version.clone(),
        server_kind: manifest.servers.first().and_then(|s| s.kind.clone()),
        model_digests: manifest
            .models
            .iter()
            .map(|m| (m.name.clone(), m.digest.clone()))
            .collect(),
        tool_docs,
        suites: manifest.suite_digests.clone(),
        tool_docs_digests: manifest.tool_docs_digests.clone(),
        prompt_digests: manifest.prompt_digests.clone(),
        grader_digest: manifest.grader_digest.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::record::Checkout;

    #[test]
    fn an_uncommitted_task_makes_the_run_dirty_even_from_a_clean_build() {
        let mut m = Manifest {
            passk_version: "0.1.0".into(),
            git_commit: Some("abc".into()),
            checkout: Some(Checkout {
                commit: "abc".into(),
                uncommitted: vec![],
            }),
            settings: serde_json::json!({"tool_docs": ["bare", "documented"]}),
            ..Manifest::default()
        };
        let p = provenance(&m);
        assert_eq!((p.commit.as_deref(), p.dirty), (Some("abc"), Some(false)));
        assert_eq!(p.data_commit, None, "same commit: said once");
        assert_eq!(p.tool_docs, ["bare", "documented"]);
        m.checkout = Some(Checkout {
            commit: "abc".into(),
            uncommitted: vec!["tasks/store/new.toml".into()],
        });
        let p = provenance(&m);
        assert_eq!(p.dirty, Some(true));
        assert_eq!(p.uncommitted, ["tasks/store/new.toml"]);
        m.checkout = None;
        m.git_commit = Some("abc-dirty".into());
        let p = provenance(&m);
        assert_eq!((p.commit.as_deref(), p.dirty), (Some("abc"), Some(true)));
        m.git_commit = None;
        assert_eq!(provenance(&m).dirty, None, "nothing recorded: unknown");
    }
}
