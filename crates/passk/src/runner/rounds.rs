//! `rounds.jsonl`: the confidence sequence's state after each complete round of a run that stops
//! when decided, one JSON line per round, appended and fsynced. It is a durable trace of what the
//! run saw when it decided; the states are always recomputed from the records. After each round
//! the file is healed against them: when it holds exactly the lines of the first rounds (each line
//! as passk writes it, whole), the missing rounds are appended; anything else (a torn last line
//! left by a kill or a full disk, a garbage line, a round that disagrees with the records, more
//! rounds than the records make) has the whole file rewritten from the records, through a
//! temporary file and a rename, so a failed rewrite leaves the old file as it was.

use crate::sequence::RoundState;
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

/// Makes the file hold `states`, one line each: appends the missing rounds to a file that holds
/// exactly the first ones, rewrites any other file from `states`; fsyncs either way.
pub fn record(dir: &Path, states: &[RoundState]) -> std::io::Result<()> {
    let path = dir.join(ROUNDS_FILE);
    let lines = states
        .iter()
        .map(|s| serde_json::to_string(s).map(|l| l + "\n"))
        .collect::<Result<Vec<String>, _>>()
        .map_err(std::io::Error::other)?;
    let have = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(e),
    };
    match rounds_held(&have, &lines) {
        Some(n) if n == lines.len() => Ok(()),
        Some(n) => {
            let mut file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)?;
            file.write_all(lines[n..].concat().as_bytes())?;
            file.sync_data()
        }
        None => rewrite(dir, &lines.concat()),
    }
}

/// How many of `lines` the file holds, when it holds exactly the first ones and nothing else.
fn rounds_held(have: &[u8], lines: &[String]) -> Option<usize> {
    let mut rest = have;
    for (n, line) in lines.iter().enumerate() {
        if rest.is_empty() {
            return Some(n);
        }
        rest = rest.strip_prefix(line.as_bytes())?;
    }
    rest.is_empty().then_some(lines.len())
}

/// Replaces the file with `text` through a temporary file and a rename.
fn rewrite(dir: &Path, text: &str) -> std::io::Result<()> {
    let tmp = dir.join(format!("{ROUNDS_FILE}.tmp"));
    let mut file = std::fs::File::create(&tmp)?;
    file.write_all(text.as_bytes())?;
    file.sync_all()?;
    std::fs::rename(&tmp, dir.join(ROUNDS_FILE))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sequence::{Rule, replay};

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

    fn states() -> Vec<RoundState> {
        let rule = Rule {
            alpha: 0.05,
            margin: 0.05,
        };
        replay(rule, &[vec![0.0, 1.0], vec![1.0, 1.0], vec![0.0, 0.0]])
    }

    /// The file as `record` would write it for `states`.
    fn whole(states: &[RoundState]) -> String {
        states
            .iter()
            .map(|s| serde_json::to_string(s).expect("json") + "\n")
            .collect()
    }

    #[test]
    fn a_torn_tail_is_cut_and_each_resume_leaves_one_line_a_round() {
        let dir = tempfile::tempdir().expect("tmp");
        let states = states();
        let path = dir.path().join(ROUNDS_FILE);
        // A kill mid-line: the first round whole, half of the second.
        let second = whole(&states[1..2]);
        let torn = whole(&states[..1]) + &second[..second.len() / 2];
        std::fs::write(&path, &torn).expect("write");
        record(dir.path(), &states[..2]).expect("resume");
        assert_eq!(
            std::fs::read_to_string(&path).expect("read"),
            whole(&states[..2])
        );
        record(dir.path(), &states).expect("second resume");
        assert_eq!(
            std::fs::read_to_string(&path).expect("read"),
            whole(&states)
        );
    }

    #[test]
    fn a_full_disk_tail_a_garbage_line_and_a_disagreeing_round_are_rewritten() {
        let dir = tempfile::tempdir().expect("tmp");
        let states = states();
        let path = dir.path().join(ROUNDS_FILE);
        let first = whole(&states[..1]);
        let wrong = whole(&states[2..3]);
        for (what, text) in [
            // A full disk keeps a prefix of the write, cut anywhere, even between lines' bytes.
            (
                "full disk",
                whole(&states[..2])[..first.len() + 7].to_string(),
            ),
            ("full disk, no newline", first.trim_end().to_string()),
            ("garbage", format!("{first}garbage\n")),
            ("garbage first", format!("garbage\n{first}")),
            ("disagrees", format!("{wrong}{first}")),
            ("more rounds than records", whole(&states)),
            ("blank line", format!("{first}\n")),
        ] {
            std::fs::write(&path, &text).expect("write");
            record(dir.path(), &states[..2]).expect(what);
            assert_eq!(
                std::fs::read_to_string(&path).expect("read"),
                whole(&states[..2]),
                "{what}"
            );
        }
    }
}
