//! The run's manifest: what a new run directory gets (settings, digests of the suites, tools and
//! prompts, the servers and models preflight found, this machine and checkout), what each later
//! session adds to it, and what each model's warm-up found.

use crate::domain::ToolVariant;
use crate::runner::hosts::{self, Host, Preflighted};
use crate::runner::record::{Manifest, ModelInfo, SCHEMA_VERSION, ServerInfo};
use crate::runner::run_error::RunError;
use crate::runner::spec::Experiment;
use crate::runner::suite_set::Suites;

/// The manifest a new run directory gets.
pub(crate) fn new_manifest(
    exp: &Experiment,
    suites: &Suites,
    backend: &str,
    checked: &Preflighted,
) -> Manifest {
    let s = &exp.settings;
    let first = checked.hosts.first().map(|h| &h.info);
    // The first GPU read (here or through an exporter), else this machine's absence, else the
    // first server's.
    let infos = || checked.hosts.iter().map(|h| &h.info);
    let gpu = infos()
        .find(|i| i.gpu.unavailable.is_none())
        .or_else(|| {
            infos().find(|i| i.gpu.unavailable.as_deref() != Some(hosts::REMOTE_NO_TELEMETRY))
        })
        .or(first)
        .map(|i| i.gpu.clone())
        .unwrap_or_default();
    let mut manifest = Manifest {
        schema_version: SCHEMA_VERSION,
        run_id: exp
            .run_dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        passk_version: env!("CARGO_PKG_VERSION").to_string(),
        git_commit: option_env!("PASSK_GIT_COMMIT").map(String::from),
        created: crate::timefmt::now_rfc3339(),
        grader_digest: crate::grade::freeze::combined_digest(&suites.graders),
        graders: suites.graders.clone(),
        settings: serde_json::to_value(s).unwrap_or_default(),
        experiment_file: exp.experiment_file.clone(),
        suite_digests: suites
            .domains
            .iter()
            .map(|d| {
                // A factorial run records its first variant's tool digest here, and every
                // variant's in `tool_docs_digests`.
                let variant = s.tool_docs.first().unwrap_or(ToolVariant::BARE);
                (d.name().to_string(), d.digests(variant))
            })
            .collect(),
        tool_docs_digests: suites
            .domains
            .iter()
            .map(|d| {
                let all = d.presentation().tool_docs_digests();
                let played = s
                    .tool_docs
                    .0
                    .iter()
                    .filter_map(|v| Some((v.to_string(), all.get(v.as_str())?.clone())))
                    .collect();
                (d.name().to_string(), played)
            })
            .collect(),
        prompt_digests: suites
            .domains
            .iter()
            .filter(|_| !s.prompt.single().is_some_and(|p| p.is_policy()))
            .map(|d| {
                let played = s
                    .prompt
                    .0
                    .iter()
                    .map(|&p| (p.to_string(), d.presentation().prompt_digest(p).to_string()))
                    .collect();
                (d.name().to_string(), played)
            })
            .collect(),
        server_version: first.map(|i| i.version.clone()),
        server_host: first.map(|i| i.url.clone()),
        servers: checked.hosts.iter().map(|h| h.info.clone()).collect(),
        backend: backend.to_string(),
        models: checked.models.clone(),
        gpu,
        example_values: suites
            .domains
            .iter()
            .flat_map(|d| d.example_values())
            .map(|(_, v)| v)
            .collect(),
        examples_shown: Some(
            suites
                .domains
                .iter()
                .map(|d| {
                    (
                        d.name().to_string(),
                        d.presentation().variants_with_examples(),
                    )
                })
                .collect(),
        ),
        tasks_without_tools: suites
            .domains
            .iter()
            .flat_map(|d| {
                d.tasks()
                    .iter()
                    .filter(|t| !t.needs_tools)
                    .map(|t| t.id.clone())
            })
            .collect(),
        suite_tasks: suites
            .domains
            .iter()
            .map(|d| {
                let ids = d.tasks().iter().map(|t| t.id.clone()).collect();
                (d.name().to_string(), ids)
            })
            .collect(),
        host: crate::runner::telemetry::host_info(),
        checkout: crate::runner::checkout::checkout(&exp.root),
        ..Manifest::default()
    };
    if let Some(r) = &suites.router {
        let indices = (0..r.messages.len()).map(|i| i.to_string()).collect();
        manifest.suite_tasks.insert("router".into(), indices);
        manifest.suite_digests.insert(
            "router".into(),
            crate::domain::SuiteDigests {
                tasks: r.digest.clone(),
                tools: String::new(),
                policy: String::new(),
            },
        );
    }
    manifest
}

/// The manifest of the first session, with what this session adds: its settings (the journal
/// allowed only the task filter, the wire's patience, the servers and the parallelism to change),
/// its servers, a model digest that could not be read before, and a note when a recorded digest
/// could not be read now.
pub(crate) fn session_manifest(
    exp: &Experiment,
    models: &[ModelInfo],
    hosts: &[Host],
) -> Result<Manifest, RunError> {
    let mut manifest = crate::runner::journal::read_manifest(&exp.run_dir)?;
    let tasks = run_task_filter(&manifest.settings, &exp.settings.tasks);
    manifest.settings = serde_json::to_value(&exp.settings).unwrap_or_default();
    if let Some(s) = manifest.settings.as_object_mut() {
        s.insert("tasks".into(), tasks.into());
    }
    for h in hosts {
        match manifest.servers.iter_mut().find(|s| s.url == h.url) {
            Some(known) => {
                let models = std::mem::take(&mut known.models);
                *known = ServerInfo {
                    models,
                    ..h.info.clone()
                };
            }
            None => manifest.servers.push(h.info.clone()),
        }
    }
    for m in &mut manifest.models {
        let now = models.iter().find(|n| n.name == m.name);
        if m.digest.is_none() {
            m.digest = now.and_then(|n| n.digest.clone());
            if let Some(d) = &m.digest {
                manifest.warnings.push(format!(
                    "{}: earlier sessions ran with the model's digest unknown; records written                      before {} cannot be proved to come from digest {d}",
                    m.name,
                    crate::timefmt::now_rfc3339(),
                ));
            }
        } else if now.is_some_and(|n| n.digest.is_none()) {
            manifest.warnings.push(format!(
                "{}: a session started {} appended with the model's digest unknown \
                 (--allow-unknown-digest); its records cannot be proved to come from digest {}",
                m.name,
                crate::timefmt::now_rfc3339(),
                m.digest.as_deref().unwrap_or_default()
            ));
        }
    }
    Ok(manifest)
}

/// The task filter of a run whose earlier sessions recorded `recorded` and whose session now plays
/// `now`: every task any session asked for, in the order first asked, or none (every task) once a
/// session played without a filter. A later session may play other tasks of the same run, and
/// the manifest must still say which tasks its records can hold.
fn run_task_filter(recorded: &serde_json::Value, now: &[String]) -> Vec<String> {
    let before: Vec<String> = recorded
        .get("tasks")
        .and_then(|t| serde_json::from_value(t.clone()).ok())
        .unwrap_or_default();
    if before.is_empty() || now.is_empty() {
        return Vec::new();
    }
    let mut all = before;
    for t in now {
        if !all.contains(t) {
            all.push(t.clone());
        }
    }
    all
}

/// Puts a model's warm-up on `url` in the manifest: in that server's entry, and in `models` when
/// `first` (the first server in the pool).
pub(crate) fn record_warm_up(manifest: &mut Manifest, url: &str, info: &ModelInfo, first: bool) {
    if first && let Some(m) = manifest.models.iter_mut().find(|m| m.name == info.name) {
        *m = info.clone();
    }
    if let Some(server) = manifest.servers.iter_mut().find(|s| s.url == url) {
        server.models.retain(|m| m.name != info.name);
        server.models.push(info.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::journal::ResumePolicy;
    use crate::runner::settings::RunSettings;
    use crate::runner::spec::Backend;
    use std::path::{Path, PathBuf};

    #[test]
    fn the_task_filter_of_a_run_is_every_task_its_sessions_asked_for() {
        let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let recorded = |tasks: &[&str]| serde_json::json!({ "tasks": names(tasks), "trials": 2 });
        assert_eq!(
            run_task_filter(&recorded(&["L1", "W1"]), &names(&["L2", "L1"])),
            names(&["L1", "W1", "L2"])
        );
        // No filter in either session: every task.
        assert!(run_task_filter(&recorded(&[]), &names(&["L2"])).is_empty());
        assert!(run_task_filter(&recorded(&["L1"]), &[]).is_empty());
        // The first session: its own filter.
        assert_eq!(
            run_task_filter(&recorded(&["L1"]), &names(&["L1"])),
            names(&["L1"])
        );
    }

    fn model(digest: Option<&str>) -> ModelInfo {
        ModelInfo {
            name: "m".into(),
            digest: digest.map(String::from),
            ..ModelInfo::default()
        }
    }

    /// A stub experiment whose run directory is `dir`.
    fn experiment_in(dir: &Path, allow_unknown_digest: bool) -> Experiment {
        Experiment {
            settings: RunSettings::default(),
            root: PathBuf::from("."),
            hosts: vec!["http://127.0.0.1:9".into()],
            run_dir: dir.to_path_buf(),
            backend: Backend::Stub,
            experiment_file: None,
            telemetry: false,
            resume: ResumePolicy {
                allow_unknown_digest,
                ..ResumePolicy::default()
            },
        }
    }

    #[test]
    fn appending_with_an_unknown_digest_is_said_in_the_manifest() {
        let dir = tempfile::tempdir().expect("tmp");
        let recorded = Manifest {
            models: vec![model(Some("sha256:aa"))],
            ..Manifest::default()
        };
        crate::runner::journal::write_manifest(dir.path(), &recorded).expect("write");
        let exp = experiment_in(dir.path(), true);
        let known = session_manifest(&exp, &[model(Some("sha256:aa"))], &[]).expect("known");
        assert!(known.warnings.is_empty());
        let unknown = session_manifest(&exp, &[model(None)], &[]).expect("unknown");
        assert_eq!(unknown.models[0].digest.as_deref(), Some("sha256:aa"));
        assert!(
            unknown
                .warnings
                .iter()
                .any(|w| w.contains("--allow-unknown-digest")),
            "{:?}",
            unknown.warnings
        );
    }

    #[test]
    fn a_digest_learnt_after_sessions_without_it_is_said_in_the_manifest() {
        let dir = tempfile::tempdir().expect("tmp");
        let recorded = Manifest {
            models: vec![model(None)],
            ..Manifest::default()
        };
        crate::runner::journal::write_manifest(dir.path(), &recorded).expect("write");
        let exp = experiment_in(dir.path(), false);
        let still = session_manifest(&exp, &[model(None)], &[]).expect("still unknown");
        assert!(still.warnings.is_empty(), "{:?}", still.warnings);
        let learnt = session_manifest(&exp, &[model(Some("sha256:bb"))], &[]).expect("known");
        assert_eq!(learnt.models[0].digest.as_deref(), Some("sha256:bb"));
        assert!(
            learnt
                .warnings
                .iter()
                .any(|w| w.contains("cannot be proved to come from digest sha256:bb")),
            "{:?}",
            learnt.warnings
        );
    }
}
