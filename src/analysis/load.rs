//! Reads a run directory (`manifest.json`, `conversations.jsonl`, `router.jsonl`) back into the
//! record types. A last line cut short by an interrupted write is skipped and counted; a bad line
//! anywhere else is an error naming the file and line.

use super::AnalysisError;
use crate::runner::record::{
    CONVERSATIONS_FILE, ConversationRecord, MANIFEST_FILE, Manifest, ROUTER_FILE, Record,
    RouterRecord,
};
use std::path::{Path, PathBuf};

/// A run as read from its directory.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    /// The run directory.
    pub dir: PathBuf,
    /// `manifest.json`.
    pub manifest: Manifest,
    /// Every conversation record.
    pub conversations: Vec<ConversationRecord>,
    /// Every standalone router record.
    pub router: Vec<RouterRecord>,
    /// Torn last lines skipped (at most one per file).
    pub torn_lines: usize,
}

fn read(path: &Path) -> Result<String, AnalysisError> {
    std::fs::read_to_string(path).map_err(|source| AnalysisError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// Parses a JSONL file of records into `run`; returns the torn lines skipped (0 or 1).
fn read_records(path: &Path, run: &mut Run) -> Result<usize, AnalysisError> {
    if !path.exists() {
        return Ok(0);
    }
    let text = read(path)?;
    let lines: Vec<(usize, &str)> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .collect();
    let mut torn = 0;
    for (pos, &(i, line)) in lines.iter().enumerate() {
        match serde_json::from_str::<Record>(line) {
            Ok(Record::Conversation(c)) => run.conversations.push(*c),
            Ok(Record::Router(r)) => run.router.push(*r),
            Err(e) => {
                let last = pos + 1 == lines.len();
                if last && (e.is_eof() || !text.ends_with('\n')) {
                    torn += 1;
                } else {
                    return Err(AnalysisError::Parse {
                        path: path.to_path_buf(),
                        line: i + 1,
                        message: e.to_string(),
                    });
                }
            }
        }
    }
    Ok(torn)
}

/// Reads the run in `dir`; `router.jsonl` may be absent.
pub fn load_run(dir: &Path) -> Result<Run, AnalysisError> {
    let mpath = dir.join(MANIFEST_FILE);
    let manifest: Manifest =
        serde_json::from_str(&read(&mpath)?).map_err(|e| AnalysisError::Parse {
            path: mpath.clone(),
            line: e.line(),
            message: e.to_string(),
        })?;
    let mut run = Run {
        dir: dir.to_path_buf(),
        manifest,
        conversations: Vec::new(),
        router: Vec::new(),
        torn_lines: 0,
    };
    let cpath = dir.join(CONVERSATIONS_FILE);
    if !cpath.exists() {
        return Err(AnalysisError::Io {
            path: cpath,
            source: std::io::Error::new(std::io::ErrorKind::NotFound, "no conversation records"),
        });
    }
    run.torn_lines += read_records(&cpath, &mut run)?;
    run.torn_lines += read_records(&dir.join(ROUTER_FILE), &mut run)?;
    Ok(run)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixtures::{call, conversation};

    fn write_run(dir: &Path, lines: &str) {
        let m = Manifest {
            schema_version: 1,
            run_id: "r".into(),
            grader_digest: "g".into(),
            ..Manifest::default()
        };
        std::fs::write(dir.join(MANIFEST_FILE), serde_json::to_string(&m).unwrap()).unwrap();
        std::fs::write(dir.join(CONVERSATIONS_FILE), lines).unwrap();
    }

    fn line(trial: u32) -> String {
        let c = conversation("m", "L1", trial, true, vec![call(10, 1)]);
        serde_json::to_string(&Record::Conversation(Box::new(c))).unwrap()
    }

    #[test]
    fn skips_and_counts_a_torn_last_line() {
        let dir = tempfile::tempdir().unwrap();
        let whole = line(1);
        write_run(
            dir.path(),
            &format!("{}\n{}", line(0), &whole[..whole.len() / 2]),
        );
        let run = load_run(dir.path()).unwrap();
        assert_eq!(run.conversations.len(), 1);
        assert_eq!(run.torn_lines, 1);
        assert!(run.router.is_empty());
    }

    #[test]
    fn a_bad_line_in_the_middle_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        write_run(dir.path(), &format!("{}\nnot json\n{}\n", line(0), line(1)));
        match load_run(dir.path()) {
            Err(AnalysisError::Parse { line, .. }) => assert_eq!(line, 2),
            other => panic!("expected a parse error, got {other:?}"),
        }
    }
}
