//! What the validation benchmarks share: their sizes from the environment, and the pilot they
//! draw from, the reference experiment's run 2.

use passk::analysis::plan::Pilot;
use passk::runner::record::ConversationRecord;
use std::path::PathBuf;

/// `name` from the environment as a count, else `default`.
pub fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The reference experiment's run 2 as a store pilot, with its records, or `None` (said on stdout)
/// where the reference records are absent, as on a user's clone.
pub fn reference_pilot() -> Option<(Pilot, Vec<ConversationRecord>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/reference/cheaper-per-token/experiment/results-run2");
    if !dir.is_dir() {
        println!(
            "skipped: {} is absent (the reference records are not part of a clone)",
            dir.display()
        );
        return None;
    }
    let (manifest, conversations, _) = passk::import::reference(&dir).expect("import run 2");
    let pilot = Pilot::from_records(
        "reference run 2",
        &manifest,
        &conversations,
        "store",
        None,
        None,
    )
    .expect("pilot");
    Some((pilot, conversations))
}
