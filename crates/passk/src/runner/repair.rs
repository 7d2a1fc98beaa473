//! `passk repair`: mends a run directory that two writers shared (possible before the directory
//! itself was locked, see [`crate::runner::lock`]). Of each trial it keeps every record up to and
//! including the first graded one, which is what a single writer would have written, and drops the
//! later records of that trial; a torn last line is cut as a resume would cut it. The dropped lines
//! go to `<file>.dropped` beside the file, so nothing is lost, and the kept lines replace the file;
//! both are written whole (temporary file, fsync, rename). Nothing is written before every line of
//! both record files has been checked and the kept lines read back by every rule of
//! [`record_file`]; a line that breaks another rule is refused, naming file and line, and nothing
//! is changed. A rerun after a kill or a full disk at any point leaves each dropped line in the
//! side file once: a line already there is not added again, and a torn end of the side file is
//! cut.

use crate::runner::journal::{JournalError, read_manifest};
use crate::runner::lock::RunLock;
use crate::runner::record::{CONVERSATIONS_FILE, Manifest, ROUTER_FILE, Record, TrialKey};
use crate::runner::record_file::{self, RecordFileError};
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// One record line that was dropped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dropped {
    /// The record file's name.
    pub file: &'static str,
    /// Its 1-based line in the file before the repair.
    pub line: usize,
    /// The line of the trial's first graded record, which was kept.
    pub kept_line: usize,
    /// The trial, as people read it.
    pub trial: String,
}

/// What a repair did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Repair {
    /// Record lines kept, over both files.
    pub kept: usize,
    /// Duplicate records dropped, in file order.
    pub dropped: Vec<Dropped>,
    /// Torn last lines cut.
    pub torn: usize,
}

/// Repairs the run in `dir`, holding its lock while it works.
pub fn repair(dir: &Path) -> Result<Repair, JournalError> {
    let _lock = RunLock::acquire(dir)?;
    let manifest = read_manifest(dir)?;
    let mut repair = Repair::default();
    let mut splits = Vec::new();
    for name in [CONVERSATIONS_FILE, ROUTER_FILE] {
        if let Some(split) = check_file(dir, name, &manifest, &mut repair)? {
            splits.push((name, split));
        }
    }
    for (name, split) in splits {
        if !split.dropped.is_empty() {
            add_to_side_file(&dir.join(format!("{name}.dropped")), &split.dropped)?;
        }
        replace(&dir.join(name), &split.kept)?;
    }
    Ok(repair)
}

/// A file's lines split into those to keep (with their original numbers) and those to drop.
struct Split {
    kept: Vec<u8>,
    kept_numbers: Vec<usize>,
    dropped: Vec<u8>,
    torn: bool,
}

/// Splits and checks one record file; `None` when it needs no change.
fn check_file(
    dir: &Path,
    name: &'static str,
    manifest: &Manifest,
    repair: &mut Repair,
) -> Result<Option<Split>, JournalError> {
    let path = dir.join(name);
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(JournalError::Io { path, source }),
    };
    let split = split(&path, name, &bytes, repair)?;
    // The kept lines must read back by every rule; errors name the line as it was numbered before.
    record_file::read_from(&path, split.kept.as_slice(), manifest, |_| {}).map_err(
        |e| match e {
            RecordFileError::Line {
                path,
                line,
                message,
            } => RecordFileError::Line {
                path,
                line: split.kept_numbers.get(line - 1).copied().unwrap_or(line),
                message,
            },
            other => other,
        },
    )?;
    repair.kept += split.kept_numbers.len();
    repair.torn += usize::from(split.torn);
    Ok((!split.dropped.is_empty() || split.torn).then_some(split))
}

/// Keeps each trial's records up to its first graded one; drops the rest and a torn last line.
fn split(
    path: &Path,
    name: &'static str,
    bytes: &[u8],
    repair: &mut Repair,
) -> Result<Split, JournalError> {
    let mut out = Split {
        kept: Vec::new(),
        kept_numbers: Vec::new(),
        dropped: Vec::new(),
        torn: false,
    };
    let mut graded_on: HashMap<TrialKey, usize> = HashMap::new();
    let mut rest = bytes;
    let mut number = 0;
    while !rest.is_empty() {
        number += 1;
        let end = rest.iter().position(|&b| b == b'\n').map(|i| i + 1);
        let (line, next) = rest.split_at(end.unwrap_or(rest.len()));
        rest = next;
        if end.is_some() && line.iter().all(u8::is_ascii_whitespace) {
            // Kept, so that the reading rules below refuse it by its line.
            out.kept.extend_from_slice(line);
            out.kept_numbers.push(number);
            continue;
        }
        let record = match serde_json::from_slice::<Record>(line) {
            Ok(r) if end.is_some() => r,
            Ok(_) => {
                out.torn = true;
                break;
            }
            Err(e) if rest.is_empty() && (end.is_none() || e.is_eof()) => {
                out.torn = true;
                break;
            }
            Err(e) => {
                return Err(RecordFileError::Line {
                    path: path.to_path_buf(),
                    line: number,
                    message: format!("not a passk record: {e}; repair mends duplicates only"),
                }
                .into());
            }
        };
        let (key, outcome) = record_file::key_and_outcome(&record);
        if let Some(&first) = graded_on.get(&key) {
            out.dropped.extend_from_slice(line);
            repair.dropped.push(Dropped {
                file: name,
                line: number,
                kept_line: first,
                trial: record_file::show_key(&key),
            });
            continue;
        }
        if outcome.is_graded() {
            graded_on.insert(key, number);
        }
        out.kept.extend_from_slice(line);
        out.kept_numbers.push(number);
    }
    Ok(out)
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> JournalError + '_ {
    move |source| JournalError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Rewrites the side file `path` whole with the dropped `lines` it does not hold yet. Its whole
/// lines are kept and a torn end is cut; a line counts as held as often as it is there, so a
/// rerun adds nothing twice.
fn add_to_side_file(path: &Path, lines: &[u8]) -> Result<(), JournalError> {
    let mut side = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(source) => return Err(io(path)(source)),
    };
    let whole = side.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    side.truncate(whole);
    let mut held: HashMap<&[u8], usize> = HashMap::new();
    for line in side.split_inclusive(|&b| b == b'\n') {
        *held.entry(line).or_default() += 1;
    }
    let mut added = Vec::new();
    for line in lines.split_inclusive(|&b| b == b'\n') {
        match held.get_mut(line) {
            Some(n) if *n > 0 => *n -= 1,
            _ => added.extend_from_slice(line),
        }
    }
    if added.is_empty() && whole == side.len() && path.exists() {
        return Ok(());
    }
    side.extend_from_slice(&added);
    replace(path, &side)
}

/// Replaces `path` with `bytes` through a temporary file and a rename; a failure (a full disk)
/// removes the temporary file and leaves `path` as it was.
fn replace(path: &Path, bytes: &[u8]) -> Result<(), JournalError> {
    let tmp = PathBuf::from(format!("{}.tmp", path.display()));
    let written = std::fs::File::create(&tmp).and_then(|mut f| {
        f.write_all(bytes)?;
        f.sync_all()
    });
    if let Err(source) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(io(&tmp)(source));
    }
    std::fs::rename(&tmp, path).map_err(io(path))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixtures::{call, conversation};
    use crate::runner::journal::write_manifest;
    use crate::runner::record::{MANIFEST_FILE, Outcome, SCHEMA_VERSION};

    fn line(trial: u32, outcome: Outcome) -> String {
        let mut c = conversation("m", "L1", trial, true, vec![call(10, 1)]);
        c.outcome = outcome;
        serde_json::to_string(&Record::Conversation(Box::new(c))).expect("json") + "\n"
    }

    fn run_dir(lines: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("tmp");
        let m = Manifest {
            schema_version: SCHEMA_VERSION,
            grader_digest: "g".into(),
            ..Manifest::default()
        };
        write_manifest(dir.path(), &m).expect("manifest");
        std::fs::write(dir.path().join(CONVERSATIONS_FILE), lines).expect("write");
        dir
    }

    #[test]
    fn keeps_the_first_graded_record_of_each_trial_and_says_what_it_dropped() {
        let (a, b) = (line(0, Outcome::Pass), line(1, Outcome::ModelFail));
        let failed = line(2, Outcome::TransportFail);
        let graded = line(2, Outcome::Pass);
        let torn = &b[..b.len() / 2];
        let dir = run_dir(&format!("{a}{failed}{b}{a}{graded}{b}{graded}{torn}"));
        let repair = repair(dir.path()).expect("repair");
        let dropped: Vec<(usize, usize)> = repair
            .dropped
            .iter()
            .map(|d| (d.line, d.kept_line))
            .collect();
        assert_eq!(dropped, vec![(4, 1), (6, 3), (7, 5)]);
        assert_eq!((repair.kept, repair.torn), (4, 1));
        let path = dir.path().join(CONVERSATIONS_FILE);
        let text = std::fs::read_to_string(&path).expect("read");
        assert_eq!(text, format!("{a}{failed}{b}{graded}"));
        let kept_aside =
            std::fs::read_to_string(dir.path().join("conversations.jsonl.dropped")).expect("aside");
        assert_eq!(kept_aside, format!("{a}{b}{graded}"), "nothing lost");
        crate::analysis::load_run(dir.path()).expect("reads again");
        let again = super::repair(dir.path()).expect("again");
        assert!(again.dropped.is_empty() && again.torn == 0);
    }

    #[test]
    fn a_rerun_after_a_kill_at_any_step_leaves_each_dropped_line_once() {
        let (a, b) = (line(0, Outcome::Pass), line(1, Outcome::ModelFail));
        let text = format!("{a}{b}{a}{b}");
        let dropped = format!("{a}{b}");
        let side = |dir: &tempfile::TempDir| dir.path().join("conversations.jsonl.dropped");
        // Killed before the side file, while writing it (a torn end), and after it but before the
        // record file was replaced.
        for left in [
            None,
            Some(dropped[..dropped.len() - 7].to_string()),
            Some(dropped.clone()),
        ] {
            let dir = run_dir(&text);
            if let Some(left) = &left {
                std::fs::write(side(&dir), left).expect("side");
            }
            repair(dir.path()).expect("repair");
            repair(dir.path()).expect("again");
            assert_eq!(
                std::fs::read_to_string(side(&dir)).expect("side"),
                dropped,
                "left behind: {left:?}"
            );
            assert_eq!(
                std::fs::read_to_string(dir.path().join(CONVERSATIONS_FILE)).expect("read"),
                format!("{a}{b}")
            );
        }
    }

    #[test]
    fn a_bad_line_in_either_file_leaves_both_untouched() {
        let a = line(0, Outcome::Pass);
        let text = format!("{a}{a}");
        let dir = run_dir(&text);
        std::fs::write(dir.path().join(ROUTER_FILE), "{not json}\nmore\n").expect("router");
        let err = repair(dir.path()).expect_err("garbage");
        assert!(err.to_string().contains("router.jsonl:1"), "{err}");
        let path = dir.path().join(CONVERSATIONS_FILE);
        assert_eq!(std::fs::read_to_string(path).expect("read"), text);
        assert!(!dir.path().join("conversations.jsonl.dropped").exists());
    }

    #[test]
    fn another_broken_rule_is_refused_naming_the_original_line_and_nothing_changes() {
        let a = line(0, Outcome::Pass);
        let text = format!("{a}{a}\n{}", line(1, Outcome::Pass));
        let dir = run_dir(&text);
        let err = repair(dir.path()).expect_err("blank line");
        assert!(
            err.to_string().contains("conversations.jsonl:3: blank"),
            "{err}"
        );
        let path = dir.path().join(CONVERSATIONS_FILE);
        assert_eq!(std::fs::read_to_string(path).expect("read"), text);
        assert!(dir.path().join(MANIFEST_FILE).exists());
    }
}
