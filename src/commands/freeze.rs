//! `passk freeze` and `passk verify`: write `graders/graders.lock`, or check it and name every
//! grader file (or the grading source) that moved since.

use crate::cli::FreezeArgs;
use crate::exit_code;
use passk::grade::freeze::{FreezeError, lock_path, verify as verify_lock, write_lock};

/// Writes the lock, once every grader loads with its suite; returns the exit code.
pub(super) fn freeze(args: &FreezeArgs) -> anyhow::Result<u8> {
    let root = &args.data.root;
    super::require_experiment(root)?;
    let problems = graders_that_do_not_load(root);
    if !problems.is_empty() {
        for p in &problems {
            passk::errln!("error: {p}");
        }
        passk::errln!(
            "error: nothing locked: {} suite(s) do not load with these graders",
            problems.len()
        );
        return Ok(exit_code::GRADER_LOCK_MISMATCH);
    }
    let lock = write_lock(root)?;
    passk::outln!("wrote {}", lock_path(root).display());
    for (name, part) in &lock.suites {
        let n = part.files.len();
        let files = if n == 1 { "file" } else { "files" };
        passk::outln!("{name}: grader digest {} ({n} {files})", part.digest);
    }
    Ok(exit_code::SUCCESS)
}

/// Loads every suite with its graders (a syntax error, an empty file, a task without expectations,
/// an unknown label all fail here); returns each failure's message.
fn graders_that_do_not_load(root: &std::path::Path) -> Vec<String> {
    let found = passk::suites::discover(root);
    let conversation_suites = passk::suites::SuiteChoice::conversations()
        .into_iter()
        .filter(|s| s.is_built_in() || found.mcp.contains(s))
        .filter_map(|s| s.load(root)?.err());
    conversation_suites
        .chain(passk::suites::router::load_router(root).err())
        .map(|e| e.to_string())
        .collect()
}

/// Verifies the lock; returns the exit code.
pub(super) fn verify(args: &FreezeArgs) -> anyhow::Result<u8> {
    super::require_experiment(&args.data.root)?;
    match verify_lock(&args.data.root) {
        Ok(lock) => {
            passk::outln!("graders match graders.lock ({})", lock.frozen_by);
            for (name, part) in &lock.suites {
                passk::outln!("{name}: grader digest {}", part.digest);
            }
            Ok(exit_code::SUCCESS)
        }
        Err(
            e @ (FreezeError::Mismatch { .. }
            | FreezeError::Missing { .. }
            | FreezeError::OldFormat { .. }
            | FreezeError::Malformed { .. }),
        ) => Err(super::Failure::exit(exit_code::GRADER_LOCK_MISMATCH, e)),
        Err(e) => Err(e.into()),
    }
}
