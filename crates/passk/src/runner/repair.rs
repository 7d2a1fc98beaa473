//! `passk repair`: mends a run directory that two writers shared (possible before the directory
//! itself was locked, see [`crate::runner::lock`]). Of each trial it keeps every record up to and
//! including the first graded one, which is what a single writer would have written, and drops the
//! later records of that trial; a torn last line is cut as a resume would cut it. The dropped lines
//! are appended to `<file>.dropped` beside the file, so nothing is lost, and the kept lines replace
//! the file atomically (temporary file, fsync, rename) only after they read back by every rule of
//! [`record_file`]; a line that breaks another rule is refused, naming file and line, and nothing is
//! changed.

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
    for name in [CONVERSATIONS_FILE, ROUTER_FILE] {
        repair_file(dir, name, &manifest, &mut repair)?;
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

fn repair_file(
    dir: &Path,
    name: &'static str,
    manifest: &Manifest,
    repair: &mut Repair,
) -> Result<(), JournalError> {
    let path = dir.join(name);
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
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
    if split.dropped.is_empty() && !split.torn {
        return Ok(());
    }
    if !split.dropped.is_empty() {
        append(&dir.join(format!("{name}.dropped")), &split.dropped)?;
    }
    replace(&path, &split.kept)
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

/// Appends `bytes` to `path` and fsyncs.
fn append(path: &Path, bytes: &[u8]) -> Result<(), JournalError> {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(io(path))?;
    f.write_all(bytes).map_err(io(path))?;
    f.sync_all().map_err(io(path))
}

/// Replaces `path` with `bytes` through a temporary file and a rename.
fn replace(path: &Path, bytes: &[u8]) -> Result<(), JournalError> {
    let tmp = PathBuf::from(format!("{}.tmp", path.display()));
    let mut f = std::fs::File::create(&tmp).map_err(io(&tmp))?;
    f.write_all(bytes).map_err(io(&tmp))?;
    f.sync_all().map_err(io(&tmp))?;
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
