//! `passk init [DIR]`: writes a complete, ready experiment directory from the copy built into the
//! binary: the built-in suites' tasks and graders, an experiment file with every default spelled
//! out, a short README, and a fresh lock. It writes nothing over a file that exists.

use crate::cli::InitArgs;
use crate::exit_code;
use anyhow::Context;
use std::path::Path;

include!(concat!(env!("OUT_DIR"), "/experiment_files.rs"));

/// The experiment file `passk init` writes, every key at its default, commented out.
pub(crate) const EXPERIMENT_FILE: &str = include_str!("init/experiment.toml");

/// The experiment file's name: `passk run` reads it from the experiment directory.
pub(crate) const EXPERIMENT_FILE_NAME: &str = "experiment.toml";

/// The folder's README.
const FOLDER_README: &str = include_str!("init/README.md");

/// Every file `init` writes, by path in the experiment directory.
fn files() -> Vec<(&'static str, &'static [u8])> {
    let mut all = FILES.to_vec();
    all.push((EXPERIMENT_FILE_NAME, EXPERIMENT_FILE.as_bytes()));
    all.push(("README.md", FOLDER_README.as_bytes()));
    all
}

/// Runs the command; returns the exit code.
pub(super) fn run(args: &InitArgs) -> anyhow::Result<u8> {
    let dir = &args.dir;
    if let Err(e) = write(dir) {
        return Err(super::Failure::exit(exit_code::USAGE, e));
    }
    passk::outln!("wrote an experiment to {}/", dir.display());
    let mut suites: Vec<&str> = passk::suites::BUILT_IN.iter().map(|r| r.name).collect();
    suites.extend(passk::suites::discover(dir).mcp.iter().map(|s| s.name()));
    passk::outln!("  tasks/ and graders/: the suites {}", suites.join(", "));
    passk::outln!("  graders/graders.lock: one digest per suite, frozen now");
    passk::outln!("  {EXPERIMENT_FILE_NAME}: every setting at its default");
    passk::outln!("next, from {}/:", dir.display());
    passk::outln!("  passk calibrate       the whole pipeline against the built-in stub, no GPU");
    passk::outln!("  passk run --report    the experiment against Ollama");
    Ok(exit_code::SUCCESS)
}

/// Writes the built-in experiment into `dir` and freezes it; refuses before writing anything
/// when one of its files exists there.
pub(super) fn write(dir: &Path) -> anyhow::Result<()> {
    let files = files();
    if let Some((taken, _)) = files.iter().find(|(rel, _)| dir.join(rel).exists()) {
        anyhow::bail!(
            "{} exists; `passk init` writes only where none of its files are (give another \
             directory: `passk init DIR`)",
            dir.join(taken).display()
        );
    }
    for (rel, bytes) in &files {
        let path = dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("creating {}", parent.display()))?;
        }
        std::fs::write(&path, bytes).with_context(|| format!("writing {}", path.display()))?;
    }
    std::fs::create_dir_all(dir.join("results"))?;
    passk::grade::freeze::write_lock(dir)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use passk::runner::settings::{ExperimentFile, RunSettings};

    #[test]
    fn the_experiment_file_spells_out_every_default() {
        let uncommented: String = EXPERIMENT_FILE
            .lines()
            .filter_map(|l| l.strip_prefix("# ").filter(|l| l.contains(" = ")))
            .map(|l| format!("{l}\n"))
            .collect();
        assert!(uncommented.lines().count() >= 20, "{uncommented}");
        let mut from_file = RunSettings::default();
        ExperimentFile::load("experiment.toml", &uncommented)
            .expect("every commented key parses")
            .apply(&mut from_file)
            .expect("applies");
        assert_eq!(
            serde_json::to_value(&from_file).expect("json"),
            serde_json::to_value(RunSettings::default()).expect("json"),
            "a commented value is not the default"
        );
    }

    #[test]
    fn the_built_in_experiment_is_embedded_and_init_writes_it_once() {
        let paths: Vec<&str> = FILES.iter().map(|(p, _)| *p).collect();
        for needed in [
            "tasks/store/conversations.json",
            "tasks/library/mcp.json",
            "graders/store/expectations.json",
        ] {
            assert!(
                paths.contains(&needed),
                "{needed} is not embedded: {paths:?}"
            );
        }
        assert!(!paths.iter().any(|p| p.ends_with("graders.lock")));
        let dir = tempfile::tempdir().expect("tmp");
        write(dir.path()).expect("init");
        passk::grade::freeze::verify(dir.path()).expect("a fresh experiment verifies");
        let before = std::fs::read(dir.path().join("tasks/store/policy.md")).expect("read");
        std::fs::write(dir.path().join("tasks/store/policy.md"), "mine").expect("edit");
        let err = write(dir.path()).expect_err("a second init refuses");
        assert!(err.to_string().contains("exists"), "{err}");
        assert_eq!(
            std::fs::read(dir.path().join("tasks/store/policy.md")).expect("read"),
            b"mine",
            "nothing was written over"
        );
        assert_ne!(before, b"mine");
    }
}
