//! `rounds.jsonl`: the confidence sequence's state after each complete round of a run that stops
//! when decided, one JSON line per round, appended and fsynced. It is a durable trace of what the
//! run saw when it decided; the states are always recomputed from the records, and a resume
//! appends the rounds the file lacks.

use crate::analysis::sequence::RoundState;
use std::io::Write;
use std::path::Path;

/// File name in the run directory.
pub const ROUNDS_FILE: &str = "rounds.jsonl";

/// The states in the file (none when it is absent); a torn or unreadable line ends the reading.
pub fn read(dir: &Path) -> std::io::Result<Vec<RoundState>> {
    let text = match std::fs::read_to_string(dir.join(ROUNDS_FILE)) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    Ok(text
        .lines()
        .map_while(|l| serde_json::from_str(l).ok())
        .collect())
}

/// Appends the states whose rounds the file does not hold yet, and fsyncs. A file whose states
/// differ from `states` (records changed under it) is rewritten from `states`.
pub fn record(dir: &Path, states: &[RoundState]) -> std::io::Result<()> {
    let have = read(dir)?;
    let path = dir.join(ROUNDS_FILE);
    let agrees = have.len() <= states.len() && have.iter().zip(states).all(|(a, b)| a == b);
    let (mut file, new) = if agrees {
        let f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)?;
        (f, &states[have.len()..])
    } else {
        (std::fs::File::create(&path)?, states)
    };
    if new.is_empty() {
        return Ok(());
    }
    let mut text = String::new();
    for s in new {
        text.push_str(&serde_json::to_string(s).map_err(std::io::Error::other)?);
        text.push('\n');
    }
    file.write_all(text.as_bytes())?;
    file.sync_data()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::sequence::{Rule, replay};

    #[test]
    fn appends_what_is_missing_and_reads_back() {
        let dir = tempfile::tempdir().expect("tmp");
        let rule = Rule {
            alpha: 0.05,
            margin: 0.05,
        };
        let states = replay(rule, &[vec![0.0, 1.0], vec![1.0, 1.0], vec![0.0, 0.0]]);
        record(dir.path(), &states[..1]).expect("first");
        record(dir.path(), &states).expect("rest");
        record(dir.path(), &states).expect("again");
        assert_eq!(read(dir.path()).expect("read"), states);
    }
}
