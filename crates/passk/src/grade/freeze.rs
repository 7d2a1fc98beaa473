//! Freezing the graders: `graders/graders.lock` lists the SHA-256 of every file under `graders/`,
//! of every file an MCP suite's server runs from (`tasks/<suite>/mcp.json` and the files it
//! declares) and of the grading source (embedded at build time by `build.rs`). `write_lock` writes it,
//! `verify` compares it with what is on disk and names every file that moved. The grader digest
//! stamped on records is the SHA-256 of the lock's body, so equal digests mean equal graders.

use crate::suite::load::{hex, sha256_hex};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// SHA-256 of the grading source, computed by `build.rs`.
pub const GRADING_SOURCE_DIGEST: &str = env!("PASSK_GRADING_SOURCE_DIGEST");

/// The files and folders the grading-source digest covers.
pub const GRADING_SOURCE_FILES: &str = env!("PASSK_GRADING_SOURCE_FILES");

/// The graders' folder, relative to the project root.
pub const GRADERS_DIR: &str = "graders";

/// The lock file's name inside `graders/`.
pub const LOCK_NAME: &str = "graders.lock";

/// What went wrong while freezing or verifying.
#[derive(Debug, thiserror::Error)]
pub enum FreezeError {
    /// A file or folder could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// File concerned.
        path: PathBuf,
        /// Underlying error.
        source: std::io::Error,
    },
    /// An MCP suite's declaration could not be read.
    #[error("{0}")]
    Declaration(String),
    /// There is no lock to verify against.
    #[error("{path} is missing; run `passk freeze` to write it")]
    Missing {
        /// Where the lock was expected.
        path: PathBuf,
    },
    /// The lock file is not in the expected format.
    #[error("{path}:{line}: {message}")]
    Malformed {
        /// The lock file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// The graders or the grading source changed since the lock was written.
    #[error("graders/graders.lock does not match: {}; run `passk freeze` if the change is intended", list(.changes))]
    Mismatch {
        /// Every difference, in path order.
        changes: Vec<Change>,
    },
}

fn list(changes: &[Change]) -> String {
    changes
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

/// One difference between the lock and the disk; each file by its path from the project root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// A frozen file's bytes changed.
    Modified(String),
    /// A file to freeze is not in the lock.
    Added(String),
    /// A file in the lock is gone.
    Removed(String),
    /// The grading source (code) changed.
    GradingSource,
}

impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Change::Modified(p) => write!(f, "{p} changed"),
            Change::Added(p) => write!(f, "{p} is new"),
            Change::Removed(p) => write!(f, "{p} was removed"),
            Change::GradingSource => {
                write!(f, "the grading source ({GRADING_SOURCE_FILES}) changed")
            }
        }
    }
}

/// The content of a lock: the grading-source digest, each grader file's digest and each MCP
/// server file's digest.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Lock {
    /// SHA-256 of the grading source.
    pub source: String,
    /// SHA-256 of each grader file, by path relative to `graders/` (with `/`).
    pub files: BTreeMap<String, String>,
    /// SHA-256 of each file an MCP suite's server runs from, by path from the project root
    /// (`runs` lines).
    pub runs: BTreeMap<String, String>,
}

impl Lock {
    fn body(&self) -> String {
        let mut s = format!("source {}\n", self.source);
        for (p, h) in &self.files {
            s.push_str(&format!("file {h} {p}\n"));
        }
        for (p, h) in &self.runs {
            s.push_str(&format!("runs {h} {p}\n"));
        }
        s
    }

    /// The combined grader digest (SHA-256 of the lock's body).
    pub fn digest(&self) -> String {
        sha256_hex(self.body().as_bytes())
    }

    /// The lock file's text.
    pub fn render(&self) -> String {
        format!(
            "# SHA-256 of every file under graders/, of every file an MCP suite's server runs from\n\
             # and of the grading source.\n\
             # Written by `passk freeze`; checked by `passk verify` and before every run.\n\
             digest {}\n{}",
            self.digest(),
            self.body()
        )
    }

    /// Parses a lock file's text (the `digest` line must agree with the body).
    pub fn parse(path: &Path, text: &str) -> Result<Lock, FreezeError> {
        let bad = |line: usize, message: &str| FreezeError::Malformed {
            path: path.to_path_buf(),
            line,
            message: message.into(),
        };
        let mut digest = None;
        let mut digest_line = 1;
        let mut source = None;
        let mut files = BTreeMap::new();
        let mut runs = BTreeMap::new();
        let last_line = text.lines().count().max(1);
        for (i, line) in text.lines().enumerate() {
            let n = i + 1;
            let line = line.trim_end();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (kind, rest) = line
                .split_once(' ')
                .ok_or_else(|| bad(n, "expected `<kind> <value>`"))?;
            match kind {
                "digest" => {
                    digest = Some(rest.to_string());
                    digest_line = n;
                }
                "source" => source = Some(rest.to_string()),
                "file" | "runs" => {
                    let (h, p) = rest
                        .split_once(' ')
                        .ok_or_else(|| bad(n, "expected `<kind> <sha256> <path>`"))?;
                    let map = if kind == "file" {
                        &mut files
                    } else {
                        &mut runs
                    };
                    map.insert(p.to_string(), h.to_string());
                }
                _ => {
                    return Err(bad(
                        n,
                        "unknown line kind (expected digest, source, file or runs)",
                    ));
                }
            }
        }
        let lock = Lock {
            source: source.ok_or_else(|| bad(last_line, "no `source` line in the whole file"))?,
            files,
            runs,
        };
        if digest.as_deref() != Some(lock.digest().as_str()) {
            return Err(bad(
                digest_line,
                "the `digest` line does not match the lines below it (edited by hand?)",
            ));
        }
        Ok(lock)
    }

    /// The differences from `self` (the lock) to `now` (the disk).
    pub fn changes_to(&self, now: &Lock) -> Vec<Change> {
        let mut out = Vec::new();
        if self.source != now.source {
            out.push(Change::GradingSource);
        }
        let graders = format!("{GRADERS_DIR}/");
        map_changes(&self.files, &now.files, &graders, &mut out);
        map_changes(&self.runs, &now.runs, "", &mut out);
        out
    }
}

/// The changes from `locked` to `now`, each path shown after `prefix`: new and changed files in
/// path order, then removed ones.
fn map_changes(
    locked: &BTreeMap<String, String>,
    now: &BTreeMap<String, String>,
    prefix: &str,
    out: &mut Vec<Change>,
) {
    for (p, h) in now {
        match locked.get(p) {
            None => out.push(Change::Added(format!("{prefix}{p}"))),
            Some(old) if old != h => out.push(Change::Modified(format!("{prefix}{p}"))),
            _ => {}
        }
    }
    for p in locked.keys() {
        if !now.contains_key(p) {
            out.push(Change::Removed(format!("{prefix}{p}")));
        }
    }
}

/// Path of the lock file under `root`.
pub fn lock_path(root: &Path) -> PathBuf {
    root.join(GRADERS_DIR).join(LOCK_NAME)
}

fn scan(dir: &Path, rel: &str, out: &mut BTreeMap<String, String>) -> Result<(), FreezeError> {
    let io = |source| FreezeError::Io {
        path: dir.to_path_buf(),
        source,
    };
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .map_err(io)?
        .collect::<Result<_, _>>()
        .map_err(io)?;
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let name = e.file_name().to_string_lossy().into_owned();
        let path = e.path();
        let child = if rel.is_empty() {
            name.clone()
        } else {
            format!("{rel}/{name}")
        };
        let ft = e.file_type().map_err(|source| FreezeError::Io {
            path: path.clone(),
            source,
        })?;
        if ft.is_dir() {
            scan(&path, &child, out)?;
        } else if child != LOCK_NAME {
            let bytes = std::fs::read(&path).map_err(|source| FreezeError::Io {
                path: path.clone(),
                source,
            })?;
            out.insert(child, hex(&Sha256::digest(&bytes)));
        }
    }
    Ok(())
}

/// The lock the current graders, MCP server files and grading source would have.
pub fn current(root: &Path) -> Result<Lock, FreezeError> {
    let mut files = BTreeMap::new();
    scan(&root.join(GRADERS_DIR), "", &mut files)?;
    let mut runs = BTreeMap::new();
    for rel in crate::suite::mcp_config::frozen_files(root)
        .map_err(|e| FreezeError::Declaration(e.to_string()))?
    {
        let path = root.join(&rel);
        let bytes = std::fs::read(&path).map_err(|source| FreezeError::Io { path, source })?;
        runs.insert(rel, hex(&Sha256::digest(&bytes)));
    }
    Ok(Lock {
        source: GRADING_SOURCE_DIGEST.to_string(),
        files,
        runs,
    })
}

/// The combined grader digest of what is on disk now (stamped on every record).
pub fn grader_digest(root: &Path) -> Result<String, FreezeError> {
    Ok(current(root)?.digest())
}

/// Reads `graders/graders.lock`.
pub fn read_lock(root: &Path) -> Result<Lock, FreezeError> {
    let path = lock_path(root);
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(FreezeError::Missing { path });
        }
        Err(source) => return Err(FreezeError::Io { path, source }),
    };
    match String::from_utf8(bytes) {
        Ok(text) => Lock::parse(&path, &text),
        Err(e) => {
            let good = &e.as_bytes()[..e.utf8_error().valid_up_to()];
            let line = 1 + good.iter().filter(|&&b| b == b'\n').count();
            Err(FreezeError::Malformed {
                path,
                line,
                message: "not UTF-8 text (a lock file is plain text written by `passk freeze`)"
                    .into(),
            })
        }
    }
}

/// Writes `graders/graders.lock` for the current graders; returns what was written.
pub fn write_lock(root: &Path) -> Result<Lock, FreezeError> {
    let lock = current(root)?;
    let path = lock_path(root);
    std::fs::write(&path, lock.render()).map_err(|source| FreezeError::Io { path, source })?;
    Ok(lock)
}

/// Checks the lock against the disk; returns the grader digest when they match.
pub fn verify(root: &Path) -> Result<String, FreezeError> {
    let locked = read_lock(root)?;
    let now = current(root)?;
    let changes = locked.changes_to(&now);
    if changes.is_empty() {
        Ok(now.digest())
    } else {
        Err(FreezeError::Mismatch { changes })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("tmp");
        std::fs::create_dir_all(dir.path().join("graders/store")).expect("mkdir");
        std::fs::write(dir.path().join("graders/store/a.json"), "{}").expect("write");
        std::fs::write(dir.path().join("graders/b.json"), "[]").expect("write");
        dir
    }

    #[test]
    fn freeze_then_verify_then_detect_each_kind_of_change() {
        let dir = tree();
        let root = dir.path();
        assert!(matches!(verify(root), Err(FreezeError::Missing { .. })));
        let lock = write_lock(root).expect("freeze");
        assert_eq!(verify(root).expect("verify"), lock.digest());
        assert_eq!(grader_digest(root).expect("digest"), lock.digest());

        std::fs::write(root.join("graders/store/a.json"), "{ }").expect("edit");
        std::fs::write(root.join("graders/c.json"), "1").expect("add");
        std::fs::remove_file(root.join("graders/b.json")).expect("rm");
        let Err(FreezeError::Mismatch { changes }) = verify(root) else {
            panic!("expected a mismatch")
        };
        assert_eq!(
            changes,
            vec![
                Change::Added("graders/c.json".into()),
                Change::Modified("graders/store/a.json".into()),
                Change::Removed("graders/b.json".into())
            ]
        );
        let msg = FreezeError::Mismatch { changes }.to_string();
        assert!(msg.contains("graders/store/a.json changed"), "{msg}");
    }

    #[test]
    fn the_files_an_mcp_server_runs_from_are_frozen() {
        let dir = tree();
        let root = dir.path();
        let suite = root.join("tasks/desk");
        std::fs::create_dir_all(&suite).expect("mkdir");
        std::fs::write(suite.join("server.py"), "print()").expect("write");
        std::fs::write(
            suite.join("mcp.json"),
            r#"{"command": "python3", "args": ["server.py"], "files": ["server.py"], "end_state": "desk://state"}"#,
        )
        .expect("write");
        let lock = write_lock(root).expect("freeze");
        let frozen: Vec<&str> = lock.runs.keys().map(String::as_str).collect();
        assert_eq!(frozen, ["tasks/desk/mcp.json", "tasks/desk/server.py"]);
        assert!(lock.render().contains("runs "), "{}", lock.render());
        assert_eq!(verify(root).expect("verify"), lock.digest());
        std::fs::write(suite.join("server.py"), "print(1)").expect("edit");
        let Err(FreezeError::Mismatch { changes }) = verify(root) else {
            panic!("expected a mismatch")
        };
        assert_eq!(
            changes,
            vec![Change::Modified("tasks/desk/server.py".into())]
        );
        std::fs::remove_file(suite.join("server.py")).expect("rm");
        assert!(matches!(verify(root), Err(FreezeError::Declaration(_))));
    }

    #[test]
    fn a_different_source_digest_is_reported() {
        let dir = tree();
        let mut lock = write_lock(dir.path()).expect("freeze");
        lock.source = "0".repeat(64);
        std::fs::write(lock_path(dir.path()), lock.render()).expect("write");
        let Err(FreezeError::Mismatch { changes }) = verify(dir.path()) else {
            panic!("expected a mismatch")
        };
        assert_eq!(changes, vec![Change::GradingSource]);
    }

    #[test]
    fn a_hand_edited_lock_is_malformed() {
        let dir = tree();
        let lock = write_lock(dir.path()).expect("freeze");
        let text = lock.render().replace("file ", "file 00");
        std::fs::write(lock_path(dir.path()), text).expect("write");
        assert!(matches!(
            verify(dir.path()),
            Err(FreezeError::Malformed { .. })
        ));
    }

    #[test]
    fn malformed_locks_name_a_real_line() {
        let dir = tree();
        write_lock(dir.path()).expect("freeze");
        let path = lock_path(dir.path());
        let text = std::fs::read_to_string(&path).expect("read");
        let edited = text.replacen("source ", "source 0", 1);
        std::fs::write(&path, &edited).expect("write");
        let err = read_lock(dir.path()).expect_err("digest");
        let digest_line = 1 + edited
            .lines()
            .position(|l| l.starts_with("digest"))
            .expect("digest");
        assert!(
            err.to_string()
                .contains(&format!("graders.lock:{digest_line}:")),
            "{err}"
        );
        let no_source: String = text
            .lines()
            .filter(|l| !l.starts_with("source"))
            .map(|l| format!("{l}\n"))
            .collect();
        std::fs::write(&path, &no_source).expect("write");
        let err = read_lock(dir.path()).expect_err("no source");
        assert!(!err.to_string().contains(":0:"), "{err}");
        std::fs::write(&path, b"# lock\n\xff\xfe\n").expect("write");
        match read_lock(dir.path()) {
            Err(FreezeError::Malformed { line, .. }) => assert_eq!(line, 2),
            other => panic!("expected a malformed lock, got {other:?}"),
        }
    }
}
