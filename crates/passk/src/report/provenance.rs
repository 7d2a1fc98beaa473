//! The "Provenance" section of `report.md` (and of `report.html`'s summary): what produced the
//! run, from its summary's [`Provenance`].

use super::document::short_digest;
use super::table::MarkdownTable;
use crate::analysis::Summary;
use crate::analysis::figures::provenance::Provenance;
use crate::runner::record::server_version_label;
use std::fmt::Write as _;

/// What stands in for a value the run did not record.
const UNRECORDED: &str = "not recorded";

/// `## Provenance` and its table.
pub fn section(out: &mut String, s: &Summary) {
    out.push_str("## Provenance\n\n");
    out.push_str(&table(&s.provenance).render());
    out.push('\n');
}

fn code(digest: &str) -> String {
    if digest.is_empty() {
        UNRECORDED.into()
    } else {
        format!("`{}`", short_digest(digest))
    }
}

/// passk's version, commit and dirty flag in one cell.
fn passk_cell(p: &Provenance) -> String {
    let mut cell = p.passk_version.clone();
    match &p.commit {
        Some(c) => {
            let _ = write!(cell, ", commit `{}`", &c[..c.len().min(12)]);
        }
        None => cell.push_str(", commit not recorded"),
    }
    match p.dirty {
        Some(true) if p.uncommitted.is_empty() => {
            cell.push_str(", **uncommitted changes** (in passk's source)")
        }
        Some(true) => {
            let files: Vec<String> = p.uncommitted.iter().map(|f| format!("`{f}`")).collect();
            let _ = write!(cell, ", **uncommitted changes**: {}", files.join(", "));
        }
        Some(false) => cell.push_str(", clean"),
        None => cell.push_str(", uncommitted changes unknown"),
    }
    if let Some(data) = &p.data_commit {
        let _ = write!(
            cell,
            "; suites read from commit `{}`",
            &data[..data.len().min(12)]
        );
    }
    cell
}

/// A suite's tool documentation: each variant played with its file's digest, in the order played,
/// where the manifest records them; else the suite's `tools` digest (the first variant's) under
/// the first variant's name.
fn tool_docs_parts(p: &Provenance, suite: &str, tools: &str) -> Vec<String> {
    let named = |name: &str, digest: &str| format!("tool docs ({name}) {}", code(digest));
    match p.tool_docs_digests.get(suite).filter(|v| !v.is_empty()) {
        Some(variants) => {
            let played = p.tool_docs.iter().filter(|v| variants.contains_key(*v));
            let others = variants.keys().filter(|v| !p.tool_docs.contains(v));
            played
                .chain(others)
                .map(|name| named(name, &variants[name]))
                .collect()
        }
        None if tools.is_empty() => Vec::new(),
        None => match p.tool_docs.first() {
            Some(first) => vec![named(first, tools)],
            None => vec![format!("tool docs {}", code(tools))],
        },
    }
}

/// The provenance as a two-column table.
pub fn table(p: &Provenance) -> MarkdownTable {
    let mut t = MarkdownTable::new(["what", "value"]);
    t.row(["passk".to_string(), passk_cell(p)]);
    t.row([
        server_version_label(p.server_kind.as_deref()).to_string(),
        p.server_version
            .clone()
            .unwrap_or_else(|| UNRECORDED.into()),
    ]);
    for (model, digest) in &p.model_digests {
        t.row([
            format!("model `{model}`"),
            digest.as_deref().map_or_else(|| UNRECORDED.into(), code),
        ]);
    }
    for (suite, d) in &p.suites {
        let mut parts = vec![format!("tasks {}", code(&d.tasks))];
        parts.extend(tool_docs_parts(p, suite, &d.tools));
        if !d.policy.is_empty() {
            parts.push(format!("policy {}", code(&d.policy)));
        }
        // The `policy` variant is the suite's policy, already named.
        let prompts = p.prompt_digests.get(suite).into_iter().flatten();
        for (name, digest) in prompts.filter(|(_, digest)| **digest != d.policy) {
            parts.push(format!("prompt ({name}) {}", code(digest)));
        }
        t.row([format!("suite `{suite}`"), parts.join(", ")]);
    }
    t.row(["graders".to_string(), code(&p.grader_digest)]);
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::SuiteDigests;
    use std::collections::BTreeMap;

    /// The store suite with tasks, tool docs and policy digests of `t`, `d` and `p` repeated.
    fn store_suite() -> BTreeMap<String, SuiteDigests> {
        let digests = SuiteDigests {
            tasks: "t".repeat(64),
            tools: "d".repeat(64),
            policy: "p".repeat(64),
        };
        [("store".to_string(), digests)].into()
    }

    #[test]
    fn every_part_is_named_and_a_dirty_run_says_which_files() {
        let p = Provenance {
            passk_version: "0.1.0".into(),
            commit: Some("0123456789abcdef".into()),
            dirty: Some(true),
            uncommitted: vec!["tasks/store/new.toml".into()],
            server_version: Some("0.12.6".into()),
            model_digests: [("m".to_string(), Some(format!("sha256:{}", "b".repeat(64))))].into(),
            tool_docs: vec!["bare".into()],
            suites: store_suite(),
            grader_digest: "g".repeat(64),
            ..Provenance::default()
        };
        let md = table(&p).render();
        assert!(md.contains("commit `0123456789ab`"), "{md}");
        assert!(
            md.contains("**uncommitted changes**: `tasks/store/new.toml`"),
            "{md}"
        );
        assert!(
            md.contains("0.12.6") && md.contains(&"b".repeat(12)),
            "{md}"
        );
        assert!(md.contains("tool docs (bare) `dddddddddddd`"), "{md}");
        assert!(
            md.contains("policy `pppppppppppp`") && md.contains("`gggggggggggg`"),
            "{md}"
        );
        let clean = Provenance {
            dirty: Some(false),
            ..p
        };
        assert!(table(&clean).render().contains(", clean"));
    }

    #[test]
    fn every_variant_played_is_named_with_its_files_digest() {
        let digests = |pairs: &[(&str, &str)]| -> BTreeMap<String, BTreeMap<String, String>> {
            let variants = pairs
                .iter()
                .map(|(n, c)| (n.to_string(), c.repeat(64)))
                .collect();
            [("store".to_string(), variants)].into()
        };
        let p = Provenance {
            tool_docs: vec!["documented".into(), "bare".into()],
            suites: store_suite(),
            tool_docs_digests: digests(&[("bare", "b"), ("documented", "d")]),
            prompt_digests: digests(&[("policy", "p"), ("terse", "e")]),
            ..Provenance::default()
        };
        let md = table(&p).render();
        assert!(
            md.contains(
                "tool docs (documented) `dddddddddddd`, tool docs (bare) `bbbbbbbbbbbb`, \
                 policy `pppppppppppp`, prompt (terse) `eeeeeeeeeeee`"
            ),
            "in the order played, each with its own digest: {md}"
        );
    }
}
