//! `passk import`: reads the reference harness's records and writes them as a passk run directory
//! (manifest.json, conversations.jsonl, router.jsonl), so that `passk report` and `passk compare`
//! work on them. Locks the directory as `run` does, and refuses one that already holds records.

use crate::cli::ImportArgs;
use anyhow::Context;
use passk::import;
use passk::runner::lock::{LockError, RunLock};
use passk::runner::record::{CONVERSATIONS_FILE, MANIFEST_FILE, ROUTER_FILE, Record};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Runs the command; returns the exit code.
pub(super) fn run(args: &ImportArgs) -> anyhow::Result<u8> {
    let (mut manifest, conversations, router) = import::reference(&args.reference)
        .with_context(|| format!("importing {}", args.reference.display()))?;
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| default_out(&args.reference));
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    // One writer per run directory, as for `run`: a second import (or a run) waits its turn.
    let _lock = match RunLock::acquire(&out) {
        Ok(lock) => lock,
        Err(e @ LockError::Held { .. }) => {
            return Err(super::Failure::exit(crate::exit_code::RUN_DIR_LOCKED, e));
        }
        Err(e) => return Err(e.into()),
    };
    if out.join(CONVERSATIONS_FILE).exists() || out.join(MANIFEST_FILE).exists() {
        anyhow::bail!(
            "{} already holds a run; choose another --out",
            out.display()
        );
    }
    if let Some(name) = out.file_name() {
        manifest.run_id = name.to_string_lossy().into_owned();
    }
    manifest.created = passk::timefmt::now_rfc3339();
    let mpath = out.join(MANIFEST_FILE);
    std::fs::write(&mpath, serde_json::to_string_pretty(&manifest)? + "\n")
        .with_context(|| format!("writing {}", mpath.display()))?;
    let n_conv = conversations.len();
    let n_router = router.len();
    write_lines(
        &out.join(CONVERSATIONS_FILE),
        conversations
            .into_iter()
            .map(|c| Record::Conversation(Box::new(c))),
    )?;
    write_lines(
        &out.join(ROUTER_FILE),
        router.into_iter().map(|r| Record::Router(Box::new(r))),
    )?;
    passk::outln!(
        "imported {n_conv} conversations and {n_router} router calls into {}",
        out.display()
    );
    Ok(crate::exit_code::SUCCESS)
}

fn default_out(reference: &Path) -> PathBuf {
    let name = reference
        .canonicalize()
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "reference".into());
    PathBuf::from("results").join(format!("imported-{name}"))
}

fn write_lines(path: &Path, records: impl Iterator<Item = Record>) -> anyhow::Result<()> {
    let file =
        std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?;
    let mut w = std::io::BufWriter::new(file);
    for r in records {
        serde_json::to_writer(&mut w, &r)?;
        w.write_all(b"\n")?;
    }
    w.flush()
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}
