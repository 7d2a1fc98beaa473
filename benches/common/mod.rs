//! What the validation benchmarks share: their sizes from the environment, and the pilot they
//! draw from, the reference experiment's run 2.

use passk::analysis::planning::pilot::Pilot;
use passk::runner::record::{ConversationRecord, Manifest};
use std::path::PathBuf;

/// `name` from the environment as a count, else `default`.
pub(crate) fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A run of the reference experiment (`results` for run 1, `results-run2` for run 2), imported:
/// its manifest and conversation records, or `None` (said on stdout) where the reference records
/// are absent, as on a user's clone.
pub(crate) fn reference_run(folder: &str) -> Option<(Manifest, Vec<ConversationRecord>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/reference/cheaper-per-token/experiment")
        .join(folder);
    if !dir.is_dir() {
        println!(
            "skipped: {} is absent (the reference records are not part of a clone)",
            dir.display()
        );
        return None;
    }
    let (manifest, conversations, _) = passk::import::reference(&dir).expect("import");
    Some((manifest, conversations))
}

/// The store pilot `passk plan` takes from these records.
pub(crate) fn store_pilot(
    source: &str,
    manifest: &Manifest,
    conversations: &[ConversationRecord],
) -> Pilot {
    Pilot::from_records(source, manifest, conversations, "store", None, None).expect("pilot")
}

/// The reference experiment's run 2 as a store pilot, with its records.
#[allow(dead_code)]
pub(crate) fn reference_pilot() -> Option<(Pilot, Vec<ConversationRecord>)> {
    let (manifest, conversations) = reference_run("results-run2")?;
    let pilot = store_pilot("reference run 2", &manifest, &conversations);
    Some((pilot, conversations))
}
